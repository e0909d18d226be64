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
    _ = kernel.optimized  # the lazy stage, forced
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


def _chain(n: int) -> str:
    """``t1 = x * 1; t2 = t1 * 1; ...; y = t_{n-1} * 1``: temporaries that all fuse."""
    lines = ["in var x : [4]", "out var y : [4]"] + [f"var t{k} : [4]" for k in range(1, n)]
    previous = "x"
    for k in range(1, n):
        lines.append(f"t{k} = {previous} * 1")
        previous = f"t{k}"
    lines.append(f"y = {previous} * 1")
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["numpy", "interp"])
def test_long_fusable_chain_compiles_in_linear_time(backend):
    # before: 1000 statements took 173 s (fusion rescanned from the start after every
    # fusion and grew one expression as long as the chain); after: 1.2 s, 10 000: ~10 s
    n = 2000
    start = time.perf_counter()
    kernel = tensorlang.compile(_chain(n), backend=backend)
    _ = kernel.optimized  # the lazy stage, forced
    assert time.perf_counter() - start < 20
    out = kernel(x=np.full(4, 1.0))["y"]
    np.testing.assert_allclose(out, np.full(4, 1.0))
    # fusion stops at MAX_FUSED_NODES: no statement grows with the chain
    from tensorlang.passes.fuse import MAX_FUSED_NODES
    assert all(ir_size(s.body) <= MAX_FUSED_NODES for s in kernel.optimized.program.statements)


def ir_size(e) -> int:
    from tensorlang.ein import ir
    return ir.size(e)


@pytest.mark.slow
def test_deepest_accepted_expression_passes_every_stage():
    # ``x + x + ... + x``, as deep as the parser accepts (MAX_DEPTH): the optimizer's
    # walks (renaming, rewriting, split, order, hashing, cost) are iterative, so
    # ``optimized`` and ``executed`` work outside the guarded entry points too, under
    # Python's default recursion limit (before: RecursionError from depth ~250)
    from tensorlang.errors import MAX_DEPTH
    n = MAX_DEPTH - 1
    src = "in var x : [3]\nout var y : [3]\ny = " + " + ".join(["x"] * (n + 1)) + "\n"
    for backend in ("interp", "numpy"):
        start = time.perf_counter()
        kernel = tensorlang.compile(src, backend=backend)
        _ = kernel.optimized  # the lazy stage, forced
        _ = kernel.executed  # the lazy stage, forced
        np.testing.assert_allclose(kernel(x=np.ones(3))["y"], np.full(3, n + 1.0))
        assert time.perf_counter() - start < 60


def test_deep_teil_expressions_evaluate_iteratively():
    x = np.arange(9.0).reshape(3, 3)
    deep = "x"
    for _ in range(1999):
        deep = "transp 1 2 " + deep
    src = "in alloc x : [3, 3]\nout alloc y : [3, 3]\ny = " + deep + "\n"
    for backend in ("interp", "numpy"):
        kernel = tensorlang.compile(src, backend=backend, lang="teil")
        _ = kernel.optimized  # the lazy stage, forced
        np.testing.assert_array_equal(kernel(x=x)["y"], x.T)
    nested = "x"
    for _ in range(199):  # parentheses: up to MAX_NESTING deep
        nested = f"add ({nested}) x"
    src = "in alloc x : [3, 3]\nout alloc y : [3, 3]\ny = " + nested + "\n"
    kernel = tensorlang.compile(src, backend="interp", lang="teil")
    np.testing.assert_array_equal(kernel(x=x)["y"], 200 * x)


def test_dataclass_equality_and_hash_without_recursion():
    from tensorlang.ein import ir
    a = b = ir.Tensor("x", ("i",))
    for _ in range(5000):
        a = ir.BinOp("+", a, ir.Tensor("x", ("i",)))
        b = ir.BinOp("+", b, ir.Tensor("x", ("i",)))
    assert a == b and hash(a) == hash(b)
    assert a != ir.BinOp("*", a.left, a.right)
    import pickle
    assert pickle.loads(pickle.dumps(ir.BinOp("+", ir.Const(1.0), ir.Tensor("x", ("i",))))) == \
        ir.BinOp("+", ir.Const(1.0), ir.Tensor("x", ("i",)))


@pytest.mark.slow
def test_long_runs_of_loop_statements_become_c_functions_of_bounded_size():
    """1000 in-place statements on one vector: one C function took gcc 80 s (10 000 did
    not finish); steps of at most MAX_LOOP_STATEMENTS statements compile in about a second."""
    from tensorlang.schedule.plan import MAX_LOOP_STATEMENTS

    source = "inout var x : [64]\n" + "x = x * 2\n" * 1000
    kernel = tensorlang.compile(source, backend="c")
    sizes = [len(step.statements) for step in kernel.schedule.steps]
    assert sum(sizes) == 1000 and max(sizes) <= MAX_LOOP_STATEMENTS
    x = np.full(64, 2.0 ** -900)
    np.testing.assert_array_equal(kernel(x=x)["x"], tensorlang.compile(source, backend="numpy")(x=x)["x"])
    assert kernel(x=x)["x"][0] == 2.0 ** 100
