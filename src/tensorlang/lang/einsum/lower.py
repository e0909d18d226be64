"""An einsum :class:`~.subscripts.Spec` lowered to EIN directly (docs/einsum.md, "What is compiled")."""

from __future__ import annotations

from functools import reduce

from ...ein import ir
from ...ein.index import Domain
from .subscripts import Spec

#: The operands' and the result's variable names (multi-letter: never an index letter).
OPERAND = "T{}"
RESULT = "Res"


#: The most operands whose product nests to the left (more come only as sublists).
LEFT_DEEP_MAX = 32


def product(factors: list[ir.Expr]) -> ir.Expr:
    """``factors`` multiplied in order: to the left up to LEFT_DEEP_MAX, else pairwise."""
    if len(factors) <= LEFT_DEEP_MAX:
        return reduce(lambda left, right: ir.BinOp("*", left, right), factors)
    while len(factors) > 1:
        factors = [ir.BinOp("*", *factors[k:k + 2]) if k + 1 < len(factors) else factors[k]
                   for k in range(0, len(factors), 2)]
    return factors[0]


def index_name(label: str) -> str:
    """A label's index name: the letter, or ``zD`` for the broadcast label ``..D``."""
    return f"z{label[2:]}" if label.startswith("..") else label


def lower(spec: Spec) -> ir.Program:
    """The EIN program computing ``spec``'s einsum: operands ``T0``, ``T1``, ... (``in``),
    the result ``Res`` (``out``), one statement."""
    decls = [ir.Decl(OPERAND.format(k), tuple(shape), "in") for k, shape in enumerate(spec.shapes)]
    decls.append(ir.Decl(RESULT, tuple(spec.result_shape), "out"))
    factors: list[ir.Expr] = []
    for k, term in enumerate(spec.terms):
        indices = tuple(1 if spec.broadcast(k, d) else index_name(label) for d, label in enumerate(term))
        factors.append(ir.Tensor(OPERAND.format(k), indices))
    body: ir.Expr = product(factors)
    # a summed label that every operand broadcasts (size 1 where another label sizes it
    # larger) cannot occur: a label's extent is the largest size it has somewhere
    extent = spec.extent
    summed = tuple((index_name(label), extent[label]) for label in spec.summed)
    if summed:
        body = ir.Sum(Domain(summed), body)
    index = Domain(tuple((index_name(label), extent[label]) for label in spec.output))
    return ir.Program(tuple(decls), (ir.Statement(RESULT, index, body),))
