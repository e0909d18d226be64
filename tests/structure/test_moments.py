"""003 §2's generalized symmetry: the covariance of x = f ⊕ vec(f⊗f) holds the moments of
f of degree 2, 3 and 4, and entries over equal multisets of f's positions are equal
wherever they sit — 003 Fig. 4's 20×20 matrix (n = 4) has 65 distinct entries.  The
analysis finds this without annotations; the tests check that its classes are exactly
the equal entries of a computed result (sound and complete) and that the isl unique set,
the isl relation and the numeric representatives agree."""

from __future__ import annotations

from math import comb

import islpy as isl
import numpy as np
import pytest

import tensorlang as tl
from tensorlang.analysis.structure import MAX_MOMENT_PIECES, compress, count, infer, representatives

FIG4 = ("in var f : [4]\nvar G : [4 4]\nvar x : [20]\nout var C : [20 20]\n"
        "G[i,j] = f[i] * f[j]\nx = concat(f, vec(G))\nC[p,q] = x[p] * x[q]\n")


def _poly(m: int, n: int, degree: int, tail: str = "C[p,q] = sum(r) X[r,p] * X[r,q]\n", out: str = "") -> str:
    k = n + n * n + (n ** 3 if degree == 3 else 0)
    return (f"in var F : [{m} {n}]\nvar G : [{m} {n} {n}]\n"
            + (f"var H : [{m} {n} {n} {n}]\n" if degree == 3 else "")
            + f"var X : [{m} {k}]\n" + (out or f"out var C : [{k} {k}]\n") + "G[r,i,j] = F[r,i] * F[r,j]\n"
            + ("H[r,i,j,l] = G[r,i,j] * F[r,l]\nX = concat(F, vec(G), vec(vec(H)))\n" if degree == 3
               else "X = concat(F, vec(G))\n")
            + tail)


def _found(src: str):
    return infer(tl.compile(src, backend="numpy").ein)


def _classes_of_values(value: np.ndarray) -> np.ndarray:
    """For every entry (row-major), the first entry equal to it (up to rounding)."""
    flat = value.reshape(-1)
    order = np.argsort(flat, kind="stable")
    first = np.empty(flat.size, dtype=np.int64)
    start = 0
    for i in range(1, flat.size + 1):
        if i == flat.size or not np.isclose(flat[order[i]], flat[order[start]], rtol=1e-11, atol=0):
            first[order[start:i]] = order[start:i].min()
            start = i
    return first


def test_fig4_has_65_distinct_entries():
    found = _found(FIG4)["C"]
    assert found.moments is not None and found.moments.base == "f" and found.moments.degrees == (2, 3, 4)
    assert found.unique_size == count(found.unique) == 65
    assert "moments of f of degree 2..4" in found.describe()
    assert len(set(representatives(found).tolist())) == 65


@pytest.mark.parametrize("src, shape", [
    (FIG4, (20, 20)),
    (_poly(7, 3, 2), (12, 12)),
    (_poly(6, 3, 3), (39, 39)),
    (_poly(5, 2, 2, "C[p,q,s] = sum(r) X[r,p] * X[r,q] * X[r,s]\n", "out var C : [6 6 6]\n"), (6, 6, 6)),
])
def test_the_classes_are_exactly_the_equal_entries(src, shape):
    """Sound (entries in one class are equal) and complete (random inputs give distinct
    moments distinct values, so entries in two classes differ)."""
    k = tl.compile(src, backend="interp")
    rng = np.random.default_rng(4)
    inputs = {n: rng.uniform(0.5, 2.0, k.checked.context.shapes[n]) for n in k.checked.accepted_inputs}
    value = k.run(inputs)["C"]
    found = _found(src)["C"]
    assert found.shape == shape and found.moments is not None
    reps = representatives(found)
    assert np.array_equal(reps, _classes_of_values(value))
    assert len(set(reps.tolist())) == found.unique_size == sum(
        comb(found.moments.n + d - 1, d) for d in found.moments.degrees)


def _points(s: isl.Set, rank: int) -> set:
    found: set = set()
    s.foreach_point(lambda p: found.add(tuple(
        int(p.get_coordinate_val(isl.dim_type.set, d).to_python()) - 1 for d in range(rank))))
    return found


def test_fig4_isl_unique_set_is_the_first_position_of_each_class():
    found = _found(FIG4)["C"]
    unique = {int(np.ravel_multi_index(u, found.shape)) for u in _points(found.unique, 2)}
    assert unique == set(representatives(found).tolist()) and len(unique) == 65


@pytest.mark.slow
@pytest.mark.parametrize("src", [_poly(4, 3, 2), _poly(4, 2, 2)])
def test_isl_relation_unique_set_and_representatives_agree(src):
    """Position by position (enumerating the whole relation at once is slow in isl): the
    positions the isl relation relates to p are exactly those of p's class, the isl
    unique set holds exactly the classes' first positions, and the redundancy map sends
    every other position to its class's first one."""
    found = _found(src)["C"]
    reps = representatives(found)
    rank = len(found.shape)
    relation, redundancy = found.equivalence(), found.redundancy()
    for flat in range(found.dense_size):
        position = np.unravel_index(flat, found.shape)
        point = isl.Set("{ [" + ", ".join(str(int(c) + 1) for c in position) + "] }")
        related = {int(np.ravel_multi_index(q, found.shape)) for q in _points(relation.intersect_domain(point).range(), rank)}
        assert related == set(np.flatnonzero(reps == reps[flat]).tolist()), position
        copied = {int(np.ravel_multi_index(q, found.shape)) for q in _points(redundancy.intersect_domain(point).range(), rank)}
        assert copied == (set() if reps[flat] == flat else {int(reps[flat])}), position
    unique = {int(np.ravel_multi_index(u, found.shape)) for u in _points(found.unique, rank)}
    assert unique == set(reps.tolist())


def test_a_large_relation_is_refused_with_a_clear_error_and_the_array_still_works():
    found = _found(_poly(4, 3, 3))["C"]
    assert found.moments.pieces() > MAX_MOMENT_PIECES
    with pytest.raises(ValueError, match="representatives"):
        found.equivalence()
    packed = compress(np.zeros(found.shape), found)
    assert packed.values.size == found.unique_size
    assert "representatives" in packed.redundancy


@pytest.mark.parametrize("src", [
    # two different tensors: no self outer product
    "in var F : [5 3]\nin var E : [5 3]\nvar G : [5 3 3]\nvar X : [5 12]\nvar Y : [5 12]\nout var C : [12 12]\n"
    "G[r,i,j] = F[r,i] * F[r,j]\nX = concat(F, vec(G))\nY = concat(E, vec(G))\nC[p,q] = sum(r) X[r,p] * Y[r,q]\n",
    # the blocks are monomials of two different tensors
    "in var F : [5 3]\nin var E : [5 3]\nvar G : [5 3 3]\nvar X : [5 12]\nout var C : [12 12]\n"
    "G[r,i,j] = E[r,i] * E[r,j]\nX = concat(F, vec(G))\nC[p,q] = sum(r) X[r,p] * X[r,q]\n",
    # a block symmetric by the sum rule is no monomial
    "in var F : [4 3]\nin var S : [4 3 3]\nvar G : [4 3 3]\nvar X : [4 12]\nout var C : [12 12]\n"
    "G[r,i,j] = S[r,i,j] + S[r,j,i]\nX = concat(F, vec(G))\nC[p,q] = sum(r) X[r,p] * X[r,q]\n",
    # a weight per row: not claimed (the classes would still hold; the rule does not read it)
    "in var F : [3 2]\nin var w : [3]\nvar G : [3 2 2]\nvar X : [3 6]\nout var C : [6 6]\n"
    "G[r,i,j] = F[r,i] * F[r,j]\nX = concat(F, vec(G))\nC[p,q] = sum(r) w[r] * X[r,p] * X[r,q]\n",
    # different rows of X: C[p,q] = Σ_r Σ_s X[r,p] X[s,q] is no moment
    "in var F : [5 3]\nvar G : [5 3 3]\nvar X : [5 12]\nout var C : [12 12]\n"
    "G[r,i,j] = F[r,i] * F[r,j]\nX = concat(F, vec(G))\nC[p,q] = sum(r, s) X[r,p] * X[s,q]\n",
    # the sum of two direct sums of monomials (of F and of H) is none: blocks inherited
    # pointwise keep their symmetry, not their monomials
    "in var F : [5 3]\nin var H : [5 3]\nvar G : [5 3 3]\nvar K : [5 3 3]\nvar X : [5 12]\nvar W : [5 12]\n"
    "var Y : [5 12]\nout var C : [12 12]\nG[r,i,j] = F[r,i] * F[r,j]\nK[r,i,j] = H[r,i] * H[r,j]\n"
    "X = concat(F, vec(G))\nW = concat(H, vec(K))\nY[r,g] = X[r,g] + W[r,g]\nC[p,q] = sum(r) Y[r,p] * Y[r,q]\n",
    # a scaled block: 2·f⊗f is no monomial
    "in var F : [5 3]\nvar G : [5 3 3]\nvar X : [5 12]\nout var C : [12 12]\n"
    "G[r,i,j] = 2 * F[r,i] * F[r,j]\nX = concat(F, vec(G))\nC[p,q] = sum(r) X[r,p] * X[r,q]\n",
])
def test_no_moments_are_claimed_where_they_do_not_hold(src):
    found = _found(src)["C"]
    assert found.moments is None
    k = tl.compile(src, backend="interp")
    rng = np.random.default_rng(2)
    value = k.run({n: rng.uniform(0.5, 2.0, k.checked.context.shapes[n]) for n in k.checked.accepted_inputs})["C"]
    reps = representatives(found)
    assert np.allclose(value.reshape(-1), value.reshape(-1)[reps], rtol=1e-12)  # what is claimed holds


@pytest.mark.slow
def test_analyze_reports_the_moments_and_plots_them(tmp_path):
    import subprocess
    import sys
    prog = tmp_path / "fig4.tl"
    prog.write_text(FIG4)
    out = subprocess.run([sys.executable, "-m", "tensorlang", "analyze", str(prog)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "unique 65 of 400" in out.stdout and "moments of f of degree 2..4" in out.stdout
    pytest.importorskip("matplotlib")
    from tensorlang.analysis.structure_plot import _numbers
    picture = tmp_path / "fig4.png"
    out = subprocess.run([sys.executable, "-m", "tensorlang", "analyze", str(prog), "--plot", str(picture)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    numbers = _numbers(_found(FIG4)["C"])  # what the picture writes in the cells, as 003 Fig. 4
    assert sorted(set(numbers.reshape(-1).tolist())) == list(range(1, 66))
    assert numbers[0, 0] == 1 and numbers[0, 4] == numbers[4, 0] == 5  # f1·f1 and vec(f⊗f)[1] = f1·f1
    assert numbers[1, 4] == numbers[0, 5] == numbers[0, 8]  # f2·f1f1 = f1·f1f2 = f1·f2f1
