"""Issue 41, class 1: every analysis is bounded before it starts.

A program whose sizes would make an analysis expensive (isl's point counts in the
structure analysis, the contraction-order search) is refused with error[too-large] or
takes a cheaper path; nothing hangs (fuzz.oracle.no_hang).  Sizes run up to 10**18; the
programs up to 10**4 statements.
"""

from __future__ import annotations

import string

import islpy as isl
import numpy as np
import pytest

import tensorlang as tl
from fuzz import oracle
from hostile.test_large_programs import chain
from tensorlang.analysis import structure
from tensorlang.passes import order

ANNOTATIONS = ["symmetric", "lower", "upper", "diagonal", "row(2)", "where i1 + 1 >= i2", "where i1 <= i2, i2 <= 5"]
SIZES = [10**k for k in (1, 3, 5, 6, 9, 12, 15, 18)]


def _refused_or_fine(fn, what: str):
    with oracle.no_hang(what):
        try:
            return fn()
        except tl.TensorLangError as exc:
            oracle.assert_clean(exc)
            assert exc.code in ("too-large", "input"), exc.render()
            return exc


@pytest.mark.slow
@pytest.mark.parametrize("annotation", ANNOTATIONS)
@pytest.mark.parametrize("n", SIZES)
def test_a_structured_declaration_of_any_size_compiles_or_is_refused_at_once(annotation, n):
    programs = [f"in var A : [{n} {n}] {annotation}\nout var B : [{n} {n}]\nB = A * 2\n",
                f"in var A : [{n} {n}] {annotation}\nin var x : [{n}]\nin var y : [{n}]\nout var s : []\n"
                f"s = sum(i,j,k) A[i,j] * x[j] * y[k] * x[i]\n"]
    for text in programs:
        for backend in ("numpy", "c"):
            _refused_or_fine(lambda text=text, backend=backend: tl.compile(text, backend=backend),
                             f"{annotation} n={n} {backend}")
        _refused_or_fine(lambda text=text: tl.check(text), f"check {annotation} n={n}")


@pytest.mark.parametrize("rank", [2, 3, 4])
@pytest.mark.parametrize("n", SIZES)
def test_the_point_count_is_exact_when_cheap_and_refused_when_not(rank, n):
    names = [f"p{d}" for d in range(rank)]
    box_text = " and ".join(f"1 <= {v} <= {n}" for v in names)
    box = isl.Set(f"{{ [{', '.join(names)}] : {box_text} }}")
    chain = " and ".join(f"{a} <= {b}" for a, b in zip(names, names[1:]))
    triangle = isl.Set(f"{{ [{', '.join(names)}] : {box_text} and {chain} }}")
    with oracle.no_hang(f"count rank {rank} n {n}"):
        assert structure.count(box) == n**rank  # a box: counted without isl, any size
        assert structure.count(box.subtract(box)) == 0
        if n ** (rank - 1) <= structure.COUNT_WORK:
            assert structure.count(triangle) == _multichoose(n, rank)
        else:
            with pytest.raises(tl.TensorLangError) as caught:
                structure.count(triangle)
            assert caught.value.code == "too-large"


def _multichoose(n: int, k: int) -> int:
    from math import comb
    return comb(n + k - 1, k)


def test_the_order_pass_costs_an_uncountable_support_dense():
    """A support too costly to count (10**9 rows, 10**6 of them in a triangle) is costed
    dense by the contraction ordering (the cheaper path), where a countable one is sparse."""
    def program(n: int, m: int) -> str:
        return (f"in var B : [{n} {n}] where i1 <= i2, i2 <= {m}\nin var C : [{n} 4]\nin var D : [{n} 4]\n"
                f"out var A : [{n} 4]\nA[i,j] = sum(k,l) B[i,k] * C[k,j] * D[l,j]\n")
    with oracle.no_hang("order"):
        small = tl.compile(program(1000, 10), backend="interp").executed  # no buffers: never run
        assert set(order.sparse_densities(small)) == {"B"}
        huge = tl.compile(program(10**9, 10**6), backend="interp").executed
        assert order.sparse_densities(huge) == {}


@pytest.mark.parametrize("letters", [20, 40, 52])
def test_a_ring_of_einsum_operands_finds_its_order_at_once(letters):
    """A ring a·b, b·c, ..., z·a over every letter: the bounded path search (greedy beyond
    order.DP_UP_TO operands), not dp's 3^n."""
    L = string.ascii_letters
    terms = [L[k] + L[(k + 1) % letters] for k in range(letters)]
    ops = [np.full((2, 2), 0.5)] * letters
    with oracle.no_hang(f"ring of {letters}"):
        got = tl.einsum(",".join(terms) + "->", *ops)
    assert got == pytest.approx(np.einsum(",".join(terms) + "->", *ops, optimize="greedy"))


@pytest.mark.parametrize("optimize", ["optimal", "greedy", True])
def test_a_ring_numpy_computes_with_optimal_asked_is_bounded_too(optimize):
    """Integer operands go to numpy.einsum; its exhaustive 'optimal' gives way to 'greedy'
    beyond einsum_api.NUMPY_OPTIMAL_UP_TO operands (docs/einsum.md), in tl.einsum_path too."""
    L = string.ascii_letters
    terms = ",".join(L[k] + L[(k + 1) % 52] for k in range(52)) + "->"
    ops = [np.ones((2, 2), np.int64)] * 52
    with oracle.no_hang("numpy's ring"):
        assert tl.einsum(terms, *ops, optimize=optimize) == 2**52
        path, _ = tl.einsum_path(terms, *ops, optimize=optimize)
    assert path[0] == "einsum_path" and len(path) == 52


def test_the_path_search_is_bounded_for_every_operand_count():
    assert all(order.strategy(n) == "greedy" for n in range(order.DP_UP_TO + 1, 200))


@pytest.mark.slow
@pytest.mark.parametrize("statements", [10, structure.MAX_INFER_STATEMENTS - 2, 10**4])
def test_the_structure_analysis_of_many_statements_is_bounded(statements):
    """Statements each reading the one before transposed: up to MAX_INFER_STATEMENTS the
    analysis keeps every statement's symmetry; beyond, it is refused at once
    (error[too-large]), and the compiler takes the dense path (no claim)."""
    from tensorlang.lang.tl import LANGUAGE
    from tensorlang.pipeline import _or_none

    with oracle.no_hang(f"{statements} statements"):
        program = LANGUAGE.lower(tl.check(chain(statements)))
        if len(program.statements) <= structure.MAX_INFER_STATEMENTS:
            assert structure.infer(program)["y"].groups == ((0, 1),)
        else:
            with pytest.raises(tl.TensorLangError) as caught:
                structure.infer(program)
            assert caught.value.code == "too-large"
            assert _or_none(structure.infer, program, annihilating=True) is None


@pytest.mark.slow
def test_a_program_of_many_statements_compiles():
    with oracle.no_hang("1000 statements"):
        k = tl.compile(chain(1000), backend="numpy")
    x = np.arange(16.0).reshape(4, 4)
    x = x + x.T
    assert np.allclose(k(x=x)["y"], 1000 * x)
