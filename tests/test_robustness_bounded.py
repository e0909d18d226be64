"""Issue 16: every stage bounded.  Inputs that once took minutes or overflowed the
recursion limit finish quickly; the bounds are generous for a loaded 2-core machine."""

from __future__ import annotations

import time

import numpy as np
import pytest

import tensorlang
from tensorlang.passes.order import strategy


def _product(n: int, kind: str) -> str:
    """``s[] = sum(...) F0[..] * F1[..] * ...``: n 3x3 factors on a ring (each shares
    an index with the next) or a star (all share i0)."""
    idx = [f"i{k}" for k in range(n + 1)]
    facs = []
    for k in range(n):
        second = idx[(k + 1) % n] if kind == "ring" else idx[k + 1]
        first = idx[k] if kind == "ring" else "i0"
        facs.append(f"F{k}[{first},{second}]")
    bound = sorted({v for f in facs for v in f[f.index("[") + 1:-1].split(",")})
    decls = "".join(f"in var F{k} : [3 3]\n" for k in range(n))
    return decls + "out var s : []\ns[] = sum(" + ",".join(bound) + ") " + " * ".join(facs) + "\n"


@pytest.mark.parametrize("kind", ["ring", "star"])
@pytest.mark.parametrize("n", [14, 20])
def test_contraction_ordering_is_bounded(n, kind):
    # before: a 14-factor star took 7.5 s in opt_einsum's 'dp', 16 factors minutes
    start = time.perf_counter()
    kernel = tensorlang.compile(_product(n, kind), backend="numpy")
    kernel.optimized
    assert time.perf_counter() - start < 10
    rng = np.random.default_rng(0)
    args = {f"F{k}": rng.uniform(0.5, 1.0, (3, 3)) for k in range(n)}
    letters = "abcdefghijklmnopqrstuvwxyz"
    if kind == "ring":
        eq = ",".join(letters[k] + letters[(k + 1) % n] for k in range(n)) + "->"
    else:
        eq = ",".join("z" + letters[k] for k in range(n)) + "->"
    expected = np.einsum(eq, *[args[f"F{k}"] for k in range(n)], optimize="greedy")
    np.testing.assert_allclose(kernel(**args)["s"], expected, rtol=1e-10)


def test_strategy_is_exhaustive_only_for_few_operands():
    assert strategy(3) == strategy(6) == "optimal"
    assert strategy(8) == "dp"
    assert strategy(11) == strategy(40) == "greedy"
