"""Eighth hostile round, aimed at the rest of the product (``tl.einsum``, the builder,
fields, the Dask target, ``pad=``, STUR, the cache, ``bench`` and ``analyze``): holes
found, each fixed at its cause and covered here.

* A STUR product of more than 64 variables, or an access of 64 indices (``x(i0, ...,
  i63)``), was error[internal] in the reference interpreter (numpy's limits on an
  array's dimensions and on index arrays), where the C and numpy targets compute it.
  It is error[too-large] at the product now, as the ``.tl`` interpreter's limit is.
* A STUR tensor of more than 64 dimensions (an input, a temporary or an output) passed
  the checks and was error[internal] on every target when the kernel ran (numpy makes no
  such array; an input of that rank cannot even be passed).  The checks refuse it,
  error[too-large] rule stur-dims, as the ``.tl`` checks refuse such a declaration.
* An einsum of more than 64 dimensions: ``tl.einsum("...,abc->...abc", a64, b)`` was a bare
  ValueError from numpy's array constructor, ``tl.contract_expression("...->...", (1,) * 65)``
  was built (and could never be called) and ``tensorlang run r65.einsum --random-inputs``
  was error[internal].  Each is error[too-large] (still a ValueError, as numpy's) now.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl


def _product_of(variables: int) -> str:
    """``y() := x(i0) * ... * x(iK)``: one variable per factor."""
    factors = " * ".join(f"x(i{j})" for j in range(variables))
    return f"symbols: N\ny() := {factors}\nx:D(i) := (0 <= i < N)\ny:D() := (0 <= N)\n"


def _access_of(rank: int) -> str:
    """``y() := x(i0, ..., iK)``: one access of ``rank`` indices."""
    idx = ",".join(f"i{j}" for j in range(rank))
    box = " * ".join(f"(0 <= i{j} < N)" for j in range(rank))
    return f"symbols: N\ny() := x({idx})\nx:D({idx}) := {box}\ny:D() := (0 <= N)\n"


@pytest.mark.parametrize("source, inputs, ok", [
    (_product_of(64), {"x": np.full(1, 1.01)}, True),
    (_product_of(65), {"x": np.full(1, 1.01)}, False),
    (_access_of(63), {"x": np.ones((1,) * 63)}, True),
    (_access_of(64), {"x": np.ones((1,) * 64)}, False),
], ids=["64-variables", "65-variables", "access-63", "access-64"])
def test_stur_products_past_numpys_limits_are_too_large_in_the_interpreter(source, inputs, ok):
    kernel = tl.compile(source, lang="stur", backend="interp", params={"N": 1})
    if ok:
        expected = tl.compile(source, lang="stur", backend="numpy", params={"N": 1})(**inputs)["y"]
        np.testing.assert_allclose(kernel(**inputs)["y"], expected, rtol=1e-14)
    else:
        with pytest.raises(tl.TensorLangError, match=r"error\[too-large\].*reference interpreter evaluates at most 64"):
            kernel(**inputs)


_RANK_65 = ",".join(f"i{j}" for j in range(65))
_BOX_65 = " * ".join(f"(0 <= i{j} < N)" for j in range(65))


@pytest.mark.parametrize("rules, name", [
    (f"y({_RANK_65}) := x(i0)\ny:D({_RANK_65}) := {_BOX_65}\nx:D(i) := (0 <= i < N)\n", "y"),
    (f"t({_RANK_65}) := x(i0)\nz() := t({_RANK_65})\nt:D({_RANK_65}) := {_BOX_65}\nx:D(i) := (0 <= i < N)\n"
     "z:D() := (0 <= N)\n", "t"),
    (f"z() := w({_RANK_65})\nw:D({_RANK_65}) := {_BOX_65}\nz:D() := (0 <= N)\n", "w"),
], ids=["output", "temporary", "input"])
def test_a_stur_tensor_of_more_than_64_dimensions_is_refused_by_the_checks(rules, name):
    with pytest.raises(tl.TensorLangError, match=rf"error\[too-large\]: '{name}' has 65 dimensions; at most 64"):
        tl.check("symbols: N\n" + rules, lang="stur")


@pytest.mark.parametrize("call", [
    lambda: tl.einsum("...,abc->...abc", np.ones((1,) * 64), np.ones((1, 1, 1))),
    lambda: tl.contract_expression("...,abc->...abc", (1,) * 64, (1, 1, 1)),
    lambda: tl.contract_expression("...->...", (1,) * 65),
    lambda: tl.compile("...->... : [" + "1 " * 65 + "]", lang="einsum"),
], ids=["einsum-result-67", "expression-result-67", "expression-operand-65", "einsum-program-65"])
def test_an_einsum_of_more_than_64_dimensions_is_too_large(call):
    with pytest.raises(ValueError, match=r"error\[too-large\]: einsum: a shape of 6[57] dimensions; at most 64"):
        call()
