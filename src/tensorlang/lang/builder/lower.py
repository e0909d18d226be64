"""Built expressions as a model-language AST (docs/einsum.md, "The builder", says why and what
building guarantees); a shared subexpression, or one :data:`SPILL_DEPTH` operators deep, becomes a temporary."""

from __future__ import annotations

import math
from typing import Mapping

from ... import limits
from ...ein.printer import RESERVED
from ...errors import error
from ..tl import ast
from .expressions import Apply, Binary, Contract, Expr, Neg, Number, Outer, Transpose, Var, _expr


#: An expression deeper than this becomes a temporary, as a shared one does, so that no
#: statement of the program is deeper (an expression 10^5 operators deep is 1000
#: statements, not one that the later stages would refuse as nested too deeply).
SPILL_DEPTH = 100


def children(e: Expr) -> tuple[Expr, ...]:
    """The operands of ``e``, left to right."""
    if isinstance(e, (Outer, Binary)):
        return (e.left, e.right)
    if isinstance(e, (Contract, Transpose, Neg, Apply)):
        return (e.operand,)
    return ()


def _variables(roots: list[Expr]) -> dict[str, Var]:
    """The variables, by name, in order of first use (left to right, outputs in order);
    two different variables of one name are error[shape] unless their shapes agree."""
    declared: dict[str, Var] = {}
    seen: set[int] = set()
    stack = list(reversed(roots))
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Var):
            first = declared.setdefault(e.name, e)
            if first.shape != e.shape:
                raise error("shape", f"two variables called {e.name!r} with shapes {list(first.shape)} "
                            f"and {list(e.shape)}")
        stack.extend(reversed(children(e)))
    return declared


def _postorder(roots: list[Expr]) -> tuple[list[Expr], dict[int, int]]:
    """Every node once, operands before the expressions that use them, and how many
    times each is used (by an expression or as an output)."""
    uses: dict[int, int] = {}
    order: list[Expr] = []
    for root in roots:
        uses[id(root)] = uses.get(id(root), 0) + 1
    stack: list[tuple[Expr, bool]] = [(root, False) for root in reversed(roots)]
    done: set[int] = set()
    while stack:
        e, expanded = stack.pop()
        if expanded:
            order.append(e)
            continue
        if id(e) in done:
            continue
        done.add(id(e))
        stack.append((e, True))
        for child in reversed(children(e)):
            uses[id(child)] = uses.get(id(child), 0) + 1
            stack.append((child, False))
    return order, uses


def _number(value: float) -> ast.Expr:
    """A literal as the model language reads its text: a negative number (or -0.0) is
    the negation of its magnitude."""
    if value < 0 or (value == 0 and math.copysign(1.0, value) < 0):
        return ast.Neg(ast.Number(-value))
    return ast.Number(value)


def _node(e: Expr, operands: list[ast.Expr]) -> ast.Expr:
    """``e`` as an AST node over its operands' AST."""
    if isinstance(e, Var):
        return ast.Var(e.name)
    if isinstance(e, Number):
        return _number(e.value)
    if isinstance(e, Outer):
        return ast.Outer(operands[0], operands[1])
    if isinstance(e, Binary):
        return ast.Binary(e.op, operands[0], operands[1])
    if isinstance(e, Neg):
        return ast.Neg(operands[0])
    if isinstance(e, Apply):
        return ast.Call(e.fn, operands[0])
    if isinstance(e, Transpose):
        return ast.Transpose(operands[0], ast.Pair(*e.pair))
    if isinstance(e, Contract):
        return ast.Contract(operands[0], tuple(ast.Pair(m, n) for m, n in e.pairs), grouped=True)
    raise TypeError(f"not a builder expression: {e!r}")  # pragma: no cover


def to_program(outputs: Mapping[str, Expr]) -> ast.Program:
    """The model-language program computing ``outputs`` (name -> expression)."""
    if not outputs:
        raise error("input", "build needs at least one output")
    for name in outputs:
        if not isinstance(name, str) or not name.isidentifier() or not name.isascii() or name in RESERVED:
            raise error("input", f"an output's name must be an ASCII identifier that is no keyword of the model "
                        f"language (its text must read back), got {name!r}")
    # bounded before the AST is built: 10^5 outputs took 15 s to build, print and check
    # before the driver refused them (limits.check_statements, as the text's parser does)
    limit = limits.max_statements()
    limits.check_statements(len(outputs))
    roots = [_expr(e) for e in outputs.values()]
    declared = _variables(roots)
    limits.check_statements(len(declared), what="declarations")  # (the inputs: as the text counts `var`)
    clash = set(outputs) & set(declared)
    if clash:
        raise error("input", f"output {sorted(clash)[0]!r} has the name of an input variable")
    order, uses = _postorder(roots)
    taken = set(outputs) | set(declared)
    temporaries: list[ast.Decl] = []
    statements: list[ast.Stmt] = []
    written: dict[int, ast.Expr] = {}  # node -> the AST its users read (a temporary's name where shared)
    depth: dict[int, int] = {}  # node -> how deep the AST its users read is
    for e in order:
        node = _node(e, [written[id(child)] for child in children(e)])
        depth[id(e)] = 1 + max((depth[id(child)] for child in children(e)), default=0)
        if (uses[id(e)] > 1 or depth[id(e)] >= SPILL_DEPTH) and not isinstance(e, (Var, Number)):
            depth[id(e)] = 1
            name = _fresh(taken, len(temporaries) + 1)
            temporaries.append(ast.Decl(name, tuple(e.shape)))
            if len(temporaries) + len(outputs) > limit:
                limits.check_statements(len(temporaries) + len(outputs))
            statements.append(ast.Assign(name, node))
            node = ast.Var(name)
        written[id(e)] = node
    decls = [ast.Decl(v.name, tuple(v.shape), "in") for v in declared.values()]
    decls += [ast.Decl(name, tuple(root.shape), "out") for name, root in zip(outputs, roots)]
    statements += [ast.Assign(name, written[id(root)]) for name, root in zip(outputs, roots)]
    return ast.Program(tuple(decls + temporaries), tuple(statements))


def _fresh(taken: set[str], n: int) -> str:
    name = f"t{n}"
    while name in taken:
        name += "_"
    taken.add(name)
    return name
