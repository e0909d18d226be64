"""Converters between TeIL and the model language: ``--emit tl`` of a TeIL program,
``--emit teil`` and ``--emit core`` of a model-language one (docs/teil.md, "Converters")."""

from __future__ import annotations

from dataclasses import replace

from ...ein import ir
from ...ein.printer import reserved_renaming, to_text
from ...errors import error
from ..lark_support import MAX_NESTING
from ..tl import ast as tl
from ...semantics.types import CheckedProgram
from ..tl.typecheck import type_of
from . import ast as teil
from .ast import full_params
from ..tl.model_source import renamed, to_model_source
from .core import parenthesized, to_core
from .lower import lower_statement
from .printer import to_teil_source

_OPERATOR_FORM = {"add", "mul", "prod", "transp", "contr"}


# ---------------------------------------------------------------- TeIL -> model language
def teil_to_model(checked: CheckedProgram) -> tl.Program:
    """The model-language program equivalent to a checked TeIL program."""
    program: teil.Program = checked.program
    decls = tuple(tl.Decl(d.name, d.shape, d.qual) for d in program.decls)
    stmts: list[tl.Stmt] = []
    for s in program.stmts:
        if all(op.op in _OPERATOR_FORM for op in teil.operators(s.expr)):
            stmts.append(tl.Assign(s.target, _operator_form(s.expr)))
        else:
            stmts.append(_index_form(lower_statement(s, checked.context)))
    return tl.Program(decls, tuple(stmts), "tl")


def _operator_form(e: teil.Expr) -> tl.Expr:
    if isinstance(e, teil.Var):
        return tl.Var(e.name)
    if isinstance(e, teil.Paren):
        return _operator_form(e.expr)
    args = [_operator_form(a) for a in e.args]
    p = full_params(e)
    if e.op in ("add", "mul"):
        return tl.Binary("+" if e.op == "add" else "*", args[0], args[1])
    if e.op == "prod":
        return tl.Outer(args[0], args[1])
    if e.op == "transp":
        return tl.Transpose(args[0], tl.Pair(p[0], p[1]))
    if e.op == "contr":
        return tl.Contract(args[0], (tl.Pair(p[0], p[1]),), False)
    raise AssertionError(e.op)  # pragma: no cover - filtered by _OPERATOR_FORM


def _index_form(s: ir.Statement) -> tl.IndexAssign:
    """An EIN statement as a model-language index-form statement."""
    return tl.IndexAssign(s.target, tuple(tl.IndexRef(name) for name, _ in s.index), _ein_to_ast(s.body))


_WORDS = {"*": "prod", "max": "max", "min": "min"}


def _ein_to_ast(e: ir.Expr) -> tl.Expr:
    if isinstance(e, ir.Tensor):
        if not e.indices:
            return tl.Var(e.name)
        return tl.Access(e.name, tuple(tl.IndexRef(i) for i in e.indices))
    if isinstance(e, ir.Const):
        return tl.Number(e.value)
    if isinstance(e, ir.BinOp):
        return tl.Binary(e.op, _ein_to_ast(e.left), _ein_to_ast(e.right))
    if isinstance(e, ir.Sum):
        return tl.Sum(tuple(tl.IndexRef(name) for name, _ in e.index), _ein_to_ast(e.body))
    if isinstance(e, ir.Reduce):
        return tl.Reduce(_WORDS[e.op], tuple(tl.IndexRef(name) for name, _ in e.index), _ein_to_ast(e.body))
    raise AssertionError(f"TeIL lowers to no {type(e).__name__}")  # pragma: no cover


# ---------------------------------------------------------------- model language -> TeIL
def model_to_teil(checked: CheckedProgram) -> teil.Program:
    """The TeIL program equivalent to a checked model-language program, or error[backend]
    naming the first operator that has no TeIL form."""
    program: tl.Program = checked.program
    decls = tuple(teil.Alloc(d.name, d.shape, d.qual) for d in program.decls)
    stmts: list[teil.Assign] = []
    for s in program.stmts:
        if isinstance(s, tl.IndexAssign):
            raise error("backend", "index-form statements have no TeIL counterpart (TeIL has no explicit indices)",
                        s.span)
        stmts.append(teil.Assign(s.target, _to_teil(s.expr, checked)))
    return teil.Program(decls, tuple(stmts))


def _op(word: str, params: tuple[int, ...], *args: teil.Expr) -> teil.Op:
    return teil.Op(word, params, tuple(parenthesized(a) for a in args))


def _to_teil(e: tl.Expr, checked: CheckedProgram) -> teil.Expr:
    if isinstance(e, tl.Var):
        return teil.Var(e.name)
    if isinstance(e, tl.Paren):
        return _to_teil(e.expr, checked)
    if isinstance(e, tl.Outer):
        return _op("prod", (), _to_teil(e.left, checked), _to_teil(e.right, checked))
    if isinstance(e, tl.Transpose):
        return _op("transp", (e.pair.first, e.pair.second), _to_teil(e.expr, checked))
    if isinstance(e, tl.Contract):
        result = _to_teil(e.expr, checked)
        removed: list[int] = []
        for pair in e.pairs:  # group pairs name dimensions before any is removed
            lo, hi = sorted((pair.first, pair.second))
            shifted = tuple(d - sum(r < d for r in removed) for d in (lo, hi))
            result = _op("contr", shifted, result)
            removed += [lo, hi]
        return result
    if isinstance(e, tl.Binary) and e.op in "+*":
        left, right = _to_teil(e.left, checked), _to_teil(e.right, checked)
        if e.op == "+":
            return _op("add", (), left, right)
        lshape, rshape = type_of(e.left, checked.context), type_of(e.right, checked.context)
        if lshape != rshape and rshape == ():  # t-smul-right: TeIL's scalar comes first
            left, right = right, left
        return _op("mul", (), left, right)
    what = {
        tl.Binary: lambda: f"'{getattr(e, 'op', '')}'",
        tl.Neg: lambda: "unary '-'",
        tl.Number: lambda: f"the number literal {getattr(e, 'text', '') or getattr(e, 'value', '')}",
        tl.Call: lambda: f"the function {getattr(e, 'fn', '')}",
    }.get(type(e), lambda: f"the {type(e).__name__.lower()} operator")()
    raise error("backend", f"{what} has no TeIL counterpart (TeIL has add, mul, prod, transp, contr, "
                "reductions, diag, expa and proj)", e.span)


# ---------------------------------------------------------------- the --emit stages
def emit(checked: CheckedProgram, stage: str) -> str:
    """The program as text in the language of ``stage``: ``tl`` (the model language),
    ``teil``, or ``core`` (Core-TeIL, through :func:`~tensorlang.teil.core.to_core`).
    A variable name the target language reserves is renamed, with a comment saying so."""
    if isinstance(checked.program, ir.Program):  # built as EIN (lang/ein_built): its text is index form
        if stage == "tl":
            return to_text(checked.program)
        raise error("backend", "index-form statements have no TeIL counterpart (TeIL has no explicit indices)")
    is_teil = isinstance(checked.program, teil.Program)
    if stage == "tl":
        return to_model_source(teil_to_model(checked) if is_teil else checked.program)
    program = checked.program if is_teil else model_to_teil(checked)
    mapping = reserved_renaming(program, teil.RESERVED)
    notes = "".join(f"// renamed: {old} -> {new} ('{old}' is a TeIL keyword)\n" for old, new in mapping.items())
    program = renamed(program, mapping) if mapping else program
    return notes + to_teil_source(readable_parentheses(to_core(program) if stage == "core" else program))


def readable_parentheses(program: teil.Program) -> teil.Program:
    """The program with the parentheses of a statement dropped where they would nest
    deeper than the front end reads (MAX_NESTING): TeIL's operators are prefix
    applications of fixed arity, so no parenthesis is needed to read an expression back
    (``add add x y z`` is ``add (add x y) z``), and the converters add them only as the
    paper writes them.  Statements within the bound keep theirs."""
    stmts = tuple(s if _paren_nesting(s.expr) <= MAX_NESTING else teil.Assign(s.target, _without_parens(s.expr))
                  for s in program.stmts)
    return program if all(a is b for a, b in zip(stmts, program.stmts)) else teil.Program(program.decls, stmts)


def _paren_nesting(e: teil.Expr) -> int:
    deepest, stack = 0, [(e, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, teil.Paren):
            depth += 1
            deepest = max(deepest, depth)
        stack.extend((child, depth) for child in teil.children(node))
    return deepest


def _without_parens(e: teil.Expr) -> teil.Expr:
    """``e`` without Paren nodes (iteratively: a Core-TeIL expression may be thousands of
    operators deep)."""
    done: dict[int, teil.Expr] = {}
    stack: list[tuple[teil.Expr, bool]] = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, teil.Var):
            done[id(node)] = node
        elif isinstance(node, teil.Paren):
            if ready:
                done[id(node)] = done[id(node.expr)]
            else:
                stack += [(node, True), (node.expr, False)]
        elif ready:
            done[id(node)] = replace(node, args=tuple(done[id(a)] for a in node.args))
        else:
            stack += [(node, True), *((a, False) for a in node.args)]
    return done[id(e)]
