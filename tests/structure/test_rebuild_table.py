"""The reconstruction of a packed statement by tables (loops.ir.Rebuild): beyond
``REBUILD_TABLE_STORES`` orbit stores, ``C[p,q] = T[sort(u(p), u(q))]`` with a table u of
packed positions per blocked dimension, instead of the stores written out (which made
17.7k lines of C and an 80 s gcc run for polyreg3 at n = 6).

Checked: where the tables are used, that they send every position to its
representative's packed place, that the two reconstructions give the same bits (they
copy the same packed values), results against the reference interpreter with ⊥, ±inf
and ±0 among the inputs, the printed loop program, and an AddressSanitizer build."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings, strategies as st

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import ir as loops
from tensorlang.loops import structure
from tensorlang.loops.printer import to_text

from properties.harness import assert_same_values
from structure.test_direct_sum_structure import PROGRAMS, _poly


def _compile(text: str, backend: str = "c", **kw):
    try:
        return tl.compile(text, backend=backend, **kw)
    except TensorLangError as exc:  # no C compiler here
        if backend == "c":
            pytest.skip(str(exc))
        raise


def _rebuilds(kernel) -> list[loops.Rebuild]:
    return [node for nest in kernel.loop_program.nests for node in loops.walk(nest.body) if isinstance(node, loops.Rebuild)]


def test_a_large_reconstruction_is_a_table():
    k = _compile(_poly(8, 6, 3))  # 258 features, 83 unique: far more than REBUILD_TABLE_STORES orbit stores
    (rebuild,) = _rebuilds(k)
    assert rebuild.extents == (258, 258) and rebuild.groups == ((0, 1),)
    assert len(k.target.source.splitlines()) < 1000  # (the orbit stores wrote 17.7k lines)
    small = _compile(_poly(8, 2, 2))
    assert _rebuilds(small) == []  # a few orbit stores stay written out


def test_the_table_sends_each_position_to_its_representative(monkeypatch):
    """polyreg2 at n = 4 (003 Fig. 4): features f_a, then f_a f_b at 4 + 4a + b; the packed
    positions are f_0..f_3, then the pairs a <= b in order."""
    n = 4
    pairs = [(a, b) for a in range(n) for b in range(a, n)]
    want = tuple(range(n)) + tuple(n + pairs.index((min(a, b), max(a, b))) for a in range(n) for b in range(n))
    monkeypatch.setattr(structure, "REBUILD_TABLE_STORES", 0)
    (rebuild,) = _rebuilds(_compile(_poly(6, n, 2) + "\n"))
    assert rebuild.tables == (want, want) and rebuild.groups == ((0, 1),)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["polyreg2", "polyreg3", "sum-symmetric block", "one blocked index"])
def test_tables_and_orbit_stores_give_the_same_bits(name, monkeypatch):
    text = PROGRAMS[name]
    monkeypatch.setattr(structure, "REBUILD_TABLE_STORES", 10 ** 9)
    stores = _compile(text + "\n" * 2)  # (each its own source: not a kernel cached with the other)
    assert _rebuilds(stores) == []
    monkeypatch.setattr(structure, "REBUILD_TABLE_STORES", 0)
    table = _compile(text + "\n")
    assert _rebuilds(table)
    rng = np.random.default_rng(len(name))
    inputs = {n: rng.uniform(-2, 2, table.shapes[n]) for n in table.inputs}
    first = next(iter(inputs.values()))
    first.reshape(-1)[:4] = [np.nan, np.inf, -0.0, -np.inf]
    a, b = stores(**inputs), table(**inputs)
    for out in a:
        assert np.array_equal(a[out], b[out], equal_nan=True), out
        numbers = ~np.isnan(a[out])  # (a NaN's sign bit means nothing: ⊥ is ⊥)
        assert np.array_equal(np.signbit(a[out][numbers]), np.signbit(b[out][numbers])), out


_SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.5])
_MODERATE = st.one_of(st.floats(1e-3, 100), st.floats(-100, -1e-3))


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(m=st.integers(1, 6), n=st.integers(2, 5), degree=st.sampled_from([2, 3]), data=st.data())
def test_tables_equal_the_reference(m, n, degree, data):
    n = min(n, 3) if degree == 3 else n
    text = _poly(m, n, degree)
    note(text)
    values = np.array(data.draw(st.lists(st.one_of(_SPECIAL, _MODERATE), min_size=m * n, max_size=m * n)))
    F = values.reshape(m, n)
    old = structure.REBUILD_TABLE_STORES
    structure.REBUILD_TABLE_STORES = 0
    try:
        k = _compile(text)
    finally:
        structure.REBUILD_TABLE_STORES = old
    assert _rebuilds(k)
    got, want = k(F=F)["C"], _compile(text, "interp")(F=F)["C"]
    assert_same_values(got, want)


def test_the_loop_program_prints_the_tables(monkeypatch):
    monkeypatch.setattr(structure, "REBUILD_TABLE_STORES", 0)
    k = _compile(_poly(3, 2, 2) + "\n")
    text = to_text(k.loop_program, k.schedule)
    assert "by tables u of packed positions, sorted in (u0[i0], u1[i1])" in text


@pytest.mark.slow
def test_tables_are_clean_under_sanitizers(monkeypatch):
    sanitizers = pytest.importorskip("properties.test_c_sanitizers")
    if not sanitizers._sanitizers_work():
        pytest.skip("the C compiler here cannot build with ASan/UBSan")
    monkeypatch.setattr(structure, "REBUILD_TABLE_STORES", 0)
    for text in (_poly(5, 3, 2), _poly(4, 2, 3), PROGRAMS["one blocked index"]):
        rng = np.random.default_rng(7)
        reference = _compile(text, "interp")
        inputs = {n: rng.uniform(-2, 2, reference.shapes[n]) for n in reference.inputs}
        with tempfile.TemporaryDirectory() as tmp:
            got = sanitizers.run_sanitized(text, inputs, "float64", Path(tmp))
        want = reference(**inputs)
        for out in want:
            np.testing.assert_allclose(got[out], want[out], rtol=1e-12, atol=1e-12, err_msg=out)
