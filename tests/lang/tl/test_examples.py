"""Every program printed in papers 000 and 002, as shipped in ``examples/``, run through
the API and compared with plain numpy.

Each entry of ``CASES`` names an example file, a builder of its inputs (from a seeded
generator) and the expected results written directly in numpy (``np.einsum``, ``@``,
elementwise arithmetic) -- never through tensorlang.  Programs without qualifiers return
their whole final store, so their expected results list every variable.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl

from corpus import EXAMPLE_CASES, EXAMPLES, interpolation_inputs, rand
RTOL = ATOL = 1e-12


CASES = EXAMPLE_CASES


def example(name: str) -> str:
    return str(EXAMPLES / name)


def run(name: str, inputs: dict, **options) -> dict:
    return tl.compile(example(name), **options)(**inputs)


def assert_results(got: dict, expected: dict, rtol=RTOL, atol=ATOL) -> None:
    assert set(got) == set(expected)
    for name, want in expected.items():
        want = np.asarray(want)
        assert got[name].shape == want.shape, name
        np.testing.assert_allclose(got[name], want, rtol=rtol, atol=atol, err_msg=name)


# --------------------------------------------------------------------------- tests
def test_every_example_is_covered():
    on_disk = {p.name for p in EXAMPLES.glob("*.tl")}
    assert on_disk == set(CASES), "examples/*.tl and the CASES table must list the same files"


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_is_well_formed(name):
    tl.check(example(name))


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_matches_numpy(name):
    build, expected = CASES[name]
    rng = np.random.default_rng(sorted(CASES).index(name))
    inputs = build(rng)
    snapshot = {k: np.copy(v) for k, v in inputs.items()}
    got = run(name, inputs)
    assert_results(got, expected(snapshot))
    for k, v in inputs.items():  # the caller's arrays are never written
        np.testing.assert_array_equal(np.asarray(v), snapshot[k], err_msg=k)


def test_interfaces_follow_the_qualifiers():
    # Unqualified (as printed in the papers): every variable may be supplied and is returned.
    k = tl.compile(example("fig4_matrix_product.tl"))
    assert k.inputs == () and set(k.optional_inputs) == {"A", "B", "C"} and set(k.outputs) == {"A", "B", "C"}
    # Qualified: temporaries are neither inputs nor results.
    k = tl.compile(example("fig18_interpolation_immediate.tl"))
    assert set(k.inputs) == {"A", "B", "C", "u"} and k.outputs == ("v",)
    assert k.shapes["tmp1"] == (5, 5, 5)
    k = tl.compile(example("fig19_interpolation_wrongly_transformed.tl"))
    assert set(k.outputs) == {"u", "v"}


def test_declarations_only_without_inputs_is_undefined():
    """No statements, nothing supplied: the store is all ⊥ (NaN)."""
    res = run("fig2_fig3_declarations.tl", {})
    assert res["x"].shape == (30, 40, 50) and res["s"].shape == ()
    assert np.isnan(res["x"]).all() and np.isnan(res["s"])


def test_unsupplied_result_variable_is_overwritten():
    """Figure 4 with C supplied (garbage) gives the same C as without it."""
    rng = np.random.default_rng(40)
    A, B = rand(rng, 30, 40), rand(rng, 40, 50)
    res = run("fig4_matrix_product.tl", {"A": A, "B": B, "C": np.full((30, 50), 7.0)})
    np.testing.assert_allclose(res["C"], A @ B, rtol=RTOL, atol=ATOL)


def test_interpolation_variants_agree():
    """Figures 18, 19 and 20 compute the same v for the same A, B, C, u (ev-stmt makes
    even the "wrongly transformed" Figure 19 correct in the reference semantics)."""
    inputs = interpolation_inputs(np.random.default_rng(18))
    v18 = run("fig18_interpolation_immediate.tl", inputs)["v"]
    v19 = run("fig19_interpolation_wrongly_transformed.tl", inputs)["v"]
    v20 = run("fig20_interpolation_reuse.tl", inputs)["v"]
    np.testing.assert_allclose(v19, v18, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(v20, v18, rtol=RTOL, atol=ATOL)


def test_grouped_interpolation_is_figure18_on_transposed_u():
    """The grouped form pairs A with u's 3rd dimension and C with u's 1st; Figure 18
    pairs A with u's 1st and C with u's 3rd. They agree once u's dimensions 1 and 3 are
    swapped (and differ in general)."""
    inputs = interpolation_inputs(np.random.default_rng(9))
    grouped = run("interpolation_grouped.tl", inputs)["v"]
    swapped = {**inputs, "u": np.ascontiguousarray(inputs["u"].transpose(2, 1, 0))}
    np.testing.assert_allclose(grouped, run("fig18_interpolation_immediate.tl", swapped)["v"], rtol=RTOL, atol=ATOL)
    assert not np.allclose(grouped, run("fig18_interpolation_immediate.tl", inputs)["v"])


def test_figure16_variants_agree():
    rng = np.random.default_rng(16)
    inputs = {"s": rand(rng), "x": rand(rng, 1000), "w": rand(rng, 500)}
    va = run("fig16a_scale_then_outer.tl", inputs)["v"]
    vb = run("fig16b_scale_inplace_then_outer.tl", inputs)["v"]
    np.testing.assert_allclose(vb, va, rtol=RTOL, atol=ATOL)


def test_incompatible_statement_reads_old_x():
    """Figure 9 with a permutation matrix: an in-place loop would read elements it has
    already overwritten; ev-stmt gives the exact permuted vector."""
    n = 50
    perm = np.roll(np.arange(n), 1)
    y = np.eye(n)[perm]
    x = np.arange(1.0, n + 1)
    res = run("fig9_incompatible_matvec.tl", {"x": x, "y": y})
    np.testing.assert_array_equal(res["x"], x[perm])


@pytest.mark.parametrize("name", ["fig4_matrix_product.tl", "interpolation_grouped.tl"])
def test_example_in_float32(name):
    build, expected = CASES[name]
    inputs = build(np.random.default_rng(32))
    got = run(name, inputs, dtype="float32")
    assert all(v.dtype == np.float32 for v in got.values())
    # Compare with float64 numpy on the float32-rounded inputs.
    rounded = {k: np.asarray(v, dtype=np.float32).astype(np.float64) for k, v in inputs.items()}
    assert_results(got, expected(rounded), rtol=1e-5, atol=1e-5)
