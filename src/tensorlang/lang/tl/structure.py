"""Structure annotations of the model language, each a :class:`~tensorlang.ein.structure.Structure`
checked by rule t-structure (SPEC §4; docs/language.md, "Structure annotations")."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ...ein.index import Affine, affine, as_terms, index_variables
from ...ein.structure import Condition, Structure, position_names
from ...errors import Diagnostic, TensorLangError, error
from ...semantics.sizes import Sym
from ...semantics.types import CheckedProgram
from . import ast

RULE = "t-structure (SPEC §4)"

MATRIX_WORDS = ("diagonal", "upper", "lower", "row", "col")
#: The unique set of a diagonal, upper or lower matrix: ``i1 op i2``.
TRIANGLES = {"diagonal": "=", "upper": "<=", "lower": ">="}


def _fail(message: str, span) -> TensorLangError:
    return error("structure", message, span, RULE)


def structure_of(decl: ast.Decl) -> Structure | None:
    """The meaning of ``decl``'s annotation (t-structure), None without one."""
    note = decl.structure
    if note is None:
        return None
    shape, rank, kind = decl.shape, len(decl.shape), note.kind
    if kind in MATRIX_WORDS and rank != 2:
        raise _fail(f"{kind} is a matrix structure; {decl.name!r} has {rank} dimensions", note.span)
    names = position_names(rank)
    text = kind if note.arg is None else f"{kind}({note.arg})"
    if kind == "symmetric":
        if rank < 2:
            raise _fail(f"symmetric needs at least 2 dimensions; {decl.name!r} has {rank}", note.span)
        if any(d != shape[0] for d in shape):
            raise _fail(f"symmetric needs equal extents; {decl.name!r} is [{' '.join(map(str, shape))}]", note.span)
        chain = tuple(Condition(names[n], "<=", names[n + 1]) for n in range(rank - 1))
        return Structure(rank, (chain,), True, text)
    if kind in TRIANGLES:
        return Structure(rank, ((Condition("i1", TRIANGLES[kind], "i2"),),), False, text)
    if kind == "zero":
        return Structure(rank, (), False, text)
    if kind in ("row", "col"):
        axis = 0 if kind == "row" else 1
        extent = shape[axis]
        assert note.arg is not None
        if note.arg < 1 or (not isinstance(extent, Sym) and note.arg > extent):
            raise _fail(f"{kind}({note.arg}) is outside dimension {axis + 1} of {decl.name!r} (1..{extent})", note.span)
        return Structure(rank, ((Condition(names[axis], "=", note.arg),),), False, text)
    conditions = [Condition(indices[n], op, indices[n + 1]) for indices, ops in note.conditions
                  for n, op in enumerate(ops)]
    for c in conditions:
        for side in (c.left, c.right):
            for v in index_variables(side):
                if v not in names:
                    raise _fail(f"{v!r} in a where-annotation of {decl.name!r} is no position; its positions are "
                                f"{', '.join(names) or 'none (a scalar)'}", note.span)
    for c in (c for c in conditions if c.op == "="):  # a fixed position, however written, must lie in its dimension
        (left, b), (right, d) = as_terms(c.left), as_terms(c.right)  # (inequalities may hold nowhere: a chunk of
        diff = affine((*left, *((v, -a) for v, a in right)), b - d)  # a Dask run checks its own extent)
        if isinstance(diff, Affine) and len(diff.terms) == 1:
            ((var, a),) = diff.terms
            axis = names.index(var)
            last = 2 ** 62 if isinstance(shape[axis], Sym) else shape[axis]  # (a declaration's bound on elements)
            if -diff.offset % a or not 1 <= -diff.offset // a <= last:  # a * position + offset = 0, a whole position
                raise _fail(f"{c} holds at no position of dimension {axis + 1} of {decl.name!r} (1..{shape[axis]})",
                            note.span)
    text = "where " + ", ".join(str(c) for c in conditions)
    return Structure(rank, (tuple(conditions),), False, text)


def check_annotations(program: ast.Program) -> list[Diagnostic]:
    """t-structure for every annotated declaration."""
    found: list[Diagnostic] = []
    for decl in program.decls:
        try:
            structure_of(decl)
        except TensorLangError as exc:
            found.extend(exc.diagnostics)
    return found


def check_promises(checked: CheckedProgram, supplied: Mapping[str, np.ndarray]) -> None:
    """error[structure] at the first entry (row-major) of a supplied array that breaks
    its declaration's structure."""
    for decl in checked.program.decls:
        if decl.structure is None or decl.name not in supplied:
            continue
        structure = structure_of(decl)
        assert structure is not None
        value = np.asarray(supplied[decl.name], dtype=np.float64)
        found = structure.first_violation(value)
        if found is None:
            continue
        where, should = found
        position = f"{decl.name}[{','.join(map(str, where))}]"
        actual = value[tuple(p - 1 for p in where)]
        raise error("structure", f"input {decl.name!r} breaks its structure ({structure.text}): {position} = "
                    f"{float(actual)!r} should be {should!r}", decl.name_span, "structure promise (SPEC §4)")


def keep_promise(checked: CheckedProgram, name: str, value: np.ndarray) -> np.ndarray:
    """``value`` made to keep the structure declared for ``name`` (ein.structure's
    :meth:`~tensorlang.ein.structure.Structure.keep`), unchanged where none is."""
    for decl in checked.program.decls:
        if decl.name == name and decl.structure is not None:
            structure = structure_of(decl)
            if structure is not None:
                return structure.keep(np.asarray(value, dtype=np.float64))
    return value


__all__ = ["Affine", "check_annotations", "check_promises", "keep_promise", "structure_of"]
