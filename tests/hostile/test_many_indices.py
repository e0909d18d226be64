"""The numpy target past numpy.einsum's 52 letters (issue 41): statements with 58-60
index variables (a batched product, a diagonal, a contraction) run and agree with the C
target and the known value, ⊥ included; and the fallback einsum (targets/numpy/nan_safe.py)
against numpy.einsum on the subscripts both can write."""

from __future__ import annotations

import numpy as np
import opt_einsum
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.targets.numpy import nan_safe


def ones(rank):
    return " ".join(["1"] * rank)


def names(a, b):
    return [f"i{k}" for k in range(a, b)]


def programs():
    n = 58
    i = names(0, n)
    yield "batched", (f"in var A : [{ones(n + 1)}]\nin var B : [{ones(n + 1)}]\nout var C : [{ones(n)}]\n"
                      f"C[{','.join(i)}] = sum(j) A[{','.join(i)},j] * B[{','.join(i)},j]\n")
    yield "diagonal", (f"in var A : [{ones(60)}]\nout var C : [{ones(59)}]\n"
                       f"C[{','.join(names(0, 59))}] = A[{','.join(names(0, 59) + ['i0'])}] * 2\n")
    a, b = names(0, 32), names(28, 60)
    out = [x for x in a + b if x not in names(28, 32)]
    yield "contraction", (f"in var A : [{ones(32)}]\nin var B : [{ones(32)}]\nout var C : [{ones(len(out))}]\n"
                          f"C[{','.join(out)}] = sum({','.join(names(28, 32))}) A[{','.join(a)}] * B[{','.join(b)}]\n")


@pytest.mark.parametrize("name,source", list(programs()))
@pytest.mark.parametrize("value", [3.0, np.nan, -0.0, 0.5])
def test_sixty_indices_on_numpy_agree_with_c(name, source, value):
    """Every extent is 1, so the one entry is known: A·B (or 2A); the reference
    interpreter stops at 32 index variables, the C target is the second opinion."""
    shapes = {d.split(" : ")[0].split()[-1]: len(d.split("[")[1].split()) for d in source.splitlines()
              if d.startswith("in var")}
    inputs = {x: np.full((1,) * r, value) for x, r in shapes.items()}
    want = value * 2 if name == "diagonal" else value * value
    for backend in ("numpy", "c"):
        got = tl.compile(source, backend=backend)(**inputs)["C"]
        assert got.size == 1
        assert np.array_equal(got.ravel(), [want], equal_nan=True), (backend, got.ravel(), want)


labels = st.sampled_from("abcde")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(labels, min_size=0, max_size=4), min_size=1, max_size=3), st.data())
def test_the_fallback_einsum_is_numpys(operands, data):
    used = list(dict.fromkeys(c for op in operands for c in op))
    out = data.draw(st.permutations(used).map(lambda p: p[:data.draw(st.integers(0, len(p)))]))
    sub = ",".join("".join(op) for op in operands) + "->" + "".join(out)
    rng = np.random.default_rng(len(sub))
    arrays = []
    for op in operands:
        x = rng.standard_normal([2] * len(op))
        if x.size and data.draw(st.booleans()):
            x.flat[0] = data.draw(st.sampled_from([np.nan, -0.0, 0.0]))
        arrays.append(x)
    far = {c: opt_einsum.get_symbol(60 + n) for n, c in enumerate("abcde")}  # no ASCII letter
    with np.errstate(all="ignore"):
        want = np.einsum(sub, *arrays)
        got = nan_safe.einsum("".join(far.get(c, c) for c in sub), *arrays)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.array_equal(np.isnan(got), np.isnan(want))
