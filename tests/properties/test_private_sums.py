"""Sums the source writes before multiplying (``private-summation-index``, docs/optimizer.md
"Reassociation"): a parenthesized sum over an index only its one factor reads, nested up to
three deep, over diagonals (``x[a,a,k]``), affine indices (``x[a+k-1]``), structured inputs
(upper, diagonal, where ...), δ, symbolic sizes, and prod/max/min around it; every target
under drawn options (pad, fma, threads=2, float32, Dask) on inputs with ⊥, ±inf and ±0.

The oracle is :func:`test_wider_programs.compare`, strict where the docs promise it: a
compiled entry is never ⊥ where the reference is defined, also with infinite inputs
(each such sum meets an infinite factor as the one number the source wrote, never term
by term).  Where the reference is ⊥, a target may be defined with infinite inputs (a
factor taken out of a sum, docs/language.md's third exception), with δ (a selector) or
where a structure promises zeros."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tensorlang as tl
from tensorlang.ein import ir
from tensorlang.ein.forms import monomial

from fuzz.oracle import optimizer_bottoms
from properties.test_wider_programs import _compile, _reference, check_wide, compare, make_inputs, options

#: annotations of an n x n input that promise zeros (all of them do)
SQUARE = ("upper", "lower", "diagonal", "where i1 <= i2", "where i2 = i1 + 1")


@st.composite
def private_programs(draw):
    """(text, params, zeros): one or two statements ``t[i] = [sum(k)] F1 * F2 [* F3]``
    (or a prod/max/min over k) whose factors are accesses or parenthesized sums of one
    factor each."""
    n = draw(st.sampled_from([2, 3, 5]))
    symbolic = draw(st.booleans())
    affine = not symbolic and draw(st.integers(0, 2)) == 0
    decls: dict[str, tuple[tuple[str, ...], str]] = {}
    zeros = False

    def new(kinds, annotation=""):
        name = f"w{len(decls)}"
        decls[name] = (kinds, annotation)
        return name

    def square():
        nonlocal zeros
        annotation = draw(st.sampled_from(SQUARE)) if draw(st.integers(0, 2)) == 0 else ""
        zeros |= bool(annotation)
        return new(("n", "n"), annotation)

    def tensor(indices: list[str]) -> str:
        name = square() if len(indices) == 2 else new(("n",) * len(indices))
        return f"{name}[{','.join(indices)}]"

    def private_sum(free: list[str], nest: list[str], depth: int) -> str:
        """``(sum(a) ...)`` of one factor reading the new index ``a``, the enclosing private
        sums' indices ``nest`` and some of the statement's ``free`` indices."""
        a = "abc"[depth - 1]
        used = [v for v in free if draw(st.booleans())]
        shape = draw(st.integers(0, 4))
        if shape == 0 and depth < 3:  # nested: (sum(a) (sum(b) x[a,b,..]))
            return f"(sum({a}) {private_sum(free, nest + [a], depth + 1)})"
        if shape == 1:  # a diagonal: x[a,a], x[a,a,k]
            return f"(sum({a}) {tensor(nest + [a, a] + used)})"
        if shape == 2 and affine and free and not nest:  # x[a+k-1], a over 1..2
            return f"(sum({a}:2) {new(('a',))}[{a}+{free[0]}-1])"
        if shape == 3 and depth < 3:  # δ selects a diagonal
            b = "abc"[depth]
            return f"(sum({a},{b}) delta[{a},{b}] * {tensor(nest + [a, b] + used)})"
        indices = draw(st.permutations(nest + [a] + used))
        return f"(sum({a}) {tensor(list(indices))})"

    statements = []
    scalars: list[str] = []
    for s in range(draw(st.integers(1, 2))):
        out = draw(st.sampled_from([[], ["i"]]))
        outer = draw(st.sampled_from(["", "sum", "sum", "prod", "max", "min"]))
        free = out + (["k"] if outer else [])
        factors = []
        for f in range(draw(st.integers(1, 3))):
            if f == 0 or draw(st.booleans()):
                factors.append(private_sum(free, [], 1))
            else:
                reads = [v for v in free if draw(st.booleans())]
                if not reads and scalars and draw(st.booleans()):  # an earlier statement's scalar
                    factors.append(f"{draw(st.sampled_from(scalars))}[]")
                else:
                    factors.append(tensor(reads) if reads else f"{new(())}[]")
        for v in free:  # every index indexes a factor
            if not any(f"[{v}" in f or f",{v}" in f for f in factors):  # (an affine index fixes no extent)
                factors.append(f"{new(('n',))}[{v}]")
        if draw(st.integers(0, 4)) == 0:
            factors.append(draw(st.sampled_from(["2", "-0.5"])))
        body = " * ".join(factors)
        if outer:
            body = f"{outer}(k) {body}"
        target = f"t{s}"
        statements.append(f"{target}[{','.join(out)}] = {body}")
        if not out:
            scalars.append(target)
    size = "n" if symbolic else str(n)
    lines = []
    for name, (kinds, annotation) in decls.items():
        dims = " ".join({"n": size, "a": str(n + 1)}[k] for k in kinds)
        lines.append(f"in var {name} : [{dims}]{(' ' + annotation) if annotation else ''}")
    for s, stmt in enumerate(statements):
        lines.append(f"out var t{s} : [{size if '[i]' in stmt.split('=')[0] else ''}]")
    text = "\n".join(lines + statements) + "\n"
    return text, ({"n": n} if symbolic else None), zeros


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=private_programs(), opts=options(), seed=st.integers(0, 2**32 - 1))
def test_private_sums_quick(program, opts, seed):
    text, params, zeros = program
    check_wide(text, params, zeros, opts, seed, 0.3, backends=("numpy",))  # C: the slow run


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=private_programs(), opts=options(), seed=st.integers(0, 2**32 - 1),
       special=st.sampled_from([0.15, 0.3, 0.5]))
def test_private_sums_every_target(program, opts, seed, special):
    text, params, zeros = program
    check_wide(text, params, zeros, opts, seed, special)


# ---------------------------------------------------------------- where the order is the optimizer's
@st.composite
def reassociated_programs(draw):
    """(text, zeros=False): chains of two or three statements whose sums multiply sums of
    two factors, written in parentheses or through a temporary (``t0[i,k] = sum(l) a[i,l] *
    b[l,k]`` then ``t1[i] = sum(k) t0[i,k] * c[k]``): products of three or more factors,
    whose contraction order docs/optimizer.md leaves to the optimizer."""
    n = draw(st.sampled_from([1, 2, 3]))
    decls: dict[str, int] = {}
    temps: dict[str, int] = {}

    def access(indices: list[str]) -> str:
        fitting = [t for t, r in temps.items() if r == len(indices)]
        if fitting and draw(st.booleans()):
            name = draw(st.sampled_from(fitting))
        else:
            name = f"w{len(decls)}"
            decls[name] = len(indices)
        return f"{name}[{','.join(indices)}]"

    def pair(free: list[str], a: str) -> str:
        """``(sum(a) F[..a..] * G[..a..])``: two factors sharing the summed index."""
        return (f"(sum({a}) {access(draw(st.permutations([a] + [v for v in free if draw(st.booleans())])))} * "
                f"{access(draw(st.permutations([a] + [v for v in free if draw(st.booleans())])))})")

    statements = []
    for s in range(draw(st.integers(1, 3))):
        out = draw(st.sampled_from([[], ["i"], ["i", "j"]]))
        summed = draw(st.sampled_from([[], ["k"], ["k", "l"]]))
        free = out + summed
        factors = []
        for f in range(draw(st.integers(2, 3))):
            if draw(st.booleans()):
                factors.append(pair(free, "abc"[f]))
            else:
                factors.append(access(list(draw(st.permutations([v for v in free if draw(st.booleans())])))))
        for v in free:
            if not any(f"[{v}" in f or f",{v}" in f for f in factors):
                factors.append(access([v]))
        body = " * ".join(factors)
        target = f"t{s}"
        statements.append(f"{target}[{','.join(out)}] = {'sum(' + ','.join(summed) + ') ' if summed else ''}{body}")
        temps[target] = len(out)
    lines = [f"in var {name} : [{' '.join([str(n)] * rank)}]" for name, rank in decls.items()]
    lines += [f"out var {t} : [{' '.join([str(n)] * rank)}]" for t, rank in temps.items()]
    return "\n".join(lines + statements) + "\n"


def _einsum_ordered(kernel) -> set[str]:
    """The statements whose product of three or more operands under nested sums the numpy target
    contracts in one einsum, in an order of its path's."""
    out = set()
    for stmt in kernel.executed.statements:
        m = monomial(stmt.body)
        if m.nested and sum(not isinstance(f, ir.Const) for f in m.factors) >= 3:
            out.add(stmt.target)
    return out


def check_reassociated(text, opts, seed, special):
    """Every target against the reference, and the optimized program read by the reference
    interpreter: a target is ⊥ where the reference is defined only where the optimized
    program itself is ⊥ (the optimizer's order, with infinite inputs), never because of the
    target; infinities and finite entries as :func:`compare` says."""
    inputs = make_inputs(tl.compile(text, backend="interp"), None, seed, special)
    _, cast, store = _reference(text, None, inputs, opts["dtype"])
    has_inf = any(np.isinf(v).any() for v in cast.values())
    for backend in ("numpy", "c"):
        kernel = _compile(text, backend, opts)
        got = kernel(**cast)
        executed = optimizer_bottoms(kernel, cast)
        for name, (want, bound) in store.items():
            want = np.asarray(want, dtype=np.float64)
            mine = np.isnan(executed[name])
            assert has_inf or not (mine & ~np.isnan(want)).any(), (
                f"{backend} {name}: the optimized program is ⊥ where the reference is defined, with finite inputs")
            # the optimizer's ⊥ (its order met an infinity term by term): the target may share it; so
            # may the numpy target where it contracts three or more operands, nested sums merged, on
            # opt_einsum's path (with or without opt: docs/optimizer.md, "Reassociation")
            mine = mine | (backend == "numpy" and has_inf and name in _einsum_ordered(kernel))
            want = np.where(mine & np.isnan(np.asarray(got[name], np.float64)), np.nan, want)
            compare(text, name, got[name], want, np.asarray(bound, dtype=np.float64), opts["dtype"], has_inf,
                    backend)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=reassociated_programs(), opts=options(), seed=st.integers(0, 2**32 - 1),
       special=st.sampled_from([0.15, 0.3, 0.5]))
def test_reassociated_products_are_bottom_only_where_the_optimized_program_is(text, opts, seed, special):
    check_reassociated(text, opts, seed, special)


@pytest.mark.slow  # builds C
def test_the_fuzz_oracle_lets_a_target_share_only_the_optimizers_bottom():
    """tests/fuzz/oracle.py with infinite inputs: ⊥ where the reference is inf is allowed where
    the program the target ran is ⊥ under the reference interpreter (here the C target's
    Σ_ka x_ak z_ak y_k for (Σ_a x_ak z_ak)·y_k, docs/optimizer.md), and nowhere else."""
    from fuzz.oracle import assert_agree

    text = "in var x : [2 1]\nin var z : [2 1]\nin var y : [1]\nout var s : []\ns = sum(k) (sum(a) x[a,k] * z[a,k]) * y[k]\n"
    inputs = {"x": np.array([[1.0], [1.0]]), "z": np.array([[1.0], [-0.5]]), "y": np.array([np.inf])}
    want = tl.compile(text, backend="interp")(**inputs)["s"]
    assert want == np.inf
    for backend in [b for b in ("numpy", "c") if b in tl.available_backends()]:
        kernel = tl.compile(text, backend=backend)
        bottom = optimizer_bottoms(kernel, inputs)["s"]
        assert np.isnan(bottom) == ("sum(k,a)" in kernel.ir("opt"))  # the optimizer's order, term by term
        assert_agree("s", kernel(**inputs)["s"], want, backend, False, optimizer_bottom=bottom)
    with pytest.raises(AssertionError, match="infinities differ"):  # a ⊥ the optimized program does not have
        assert_agree("s", np.nan, want, "c", False, optimizer_bottom=np.array(np.inf))


@pytest.mark.parametrize("backend", [b for b in ("numpy", "c") if b in tl.available_backends()])
def test_a_sum_that_overflows_before_a_zero_factor_is_bottom_as_documented(backend):
    """docs/optimizer.md, "Reassociation": finite inputs whose private sum overflows give
    inf · 0 = ⊥ where the interpreter's terms are 0 (numpy.einsum gives ⊥ too)."""
    text = "in var x : [2 1]\nin var y : [1]\nout var s : []\ns = sum(a,k) x[a,k] * y[k]\n"
    x, y = np.array([[1e308], [1e308]]), np.array([0.0])
    assert tl.compile(text, backend="interp")(x=x, y=y)["s"] == 0.0
    with np.errstate(all="ignore"):
        assert np.isnan(np.einsum("ak,k->", x, y))
        assert np.isnan(tl.compile(text, backend=backend)(x=x, y=y)["s"])
