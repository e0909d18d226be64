"""A Gram product the optimizer turned into a chain, taken back where a Gram step pays
(docs/c-backend.md, "Gram steps")."""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections import Counter
from dataclasses import replace
from typing import Mapping

from ..ein import ir
from ..ein.index import Domain
from ..ein.names import Fresh
from ..semantics.interface import Role, roles as declared_roles
from .steps import blas_shape, contraction_factors, gram_step, multiply_adds

#: The most summed indices a comparison tries every renaming of (k! renamings).
MAX_SUMMED = 5


def _product(stmt: ir.Statement):
    """(tensor accesses, summed index map) of a scale-1 sum of a product of tensors with
    plain indices, else None."""
    if blas_shape(stmt) is not None:
        return None
    tensors, summed, scale = contraction_factors(stmt)
    if scale != 1.0 or not all(isinstance(i, str) for t in tensors for i in t.indices):
        return None
    return tensors, summed


def _same(left: list[ir.Tensor], lsum: set[str], right: list[ir.Tensor], rsum: set[str]) -> bool:
    """Whether two products of accesses are equal up to a renaming of their summed indices
    (the free ones must agree as they are)."""
    if len(left) != len(right) or len(lsum) != len(rsum) or len(lsum) > MAX_SUMMED:
        return False
    want = Counter((t.name, t.indices) for t in left)
    names = sorted(rsum)
    for image in itertools.permutations(sorted(lsum)):
        rename = dict(zip(names, image))
        got = Counter((t.name, tuple(rename.get(i, i) if isinstance(i, str) else i for i in t.indices)) for t in right)
        if got == want:
            return True
    return False


def merged_pair(definition: ir.Statement, middle: ir.Statement, last: ir.Statement,
                shapes: Mapping[str, tuple[int, ...]]) -> ir.Statement | None:
    """``S[i,j] = Σ Y[..i..] Y[..j..]`` when ``middle`` (T = Σ ... Y ...) followed by
    ``last`` (S = Σ ... T ...) computes that, Y being ``definition``'s target; else None."""
    mid, fin, dfn = _product(middle), _product(last), _product(definition)
    if mid is None or fin is None or dfn is None:
        return None
    y = definition.target
    uses = [t for t in mid[0] if t.name == middle.target]
    if uses or y in definition.reads:
        return None
    t_uses = [t for t in fin[0] if t.name == middle.target]
    if len(t_uses) != 1 or any(t.name == y for t in fin[0]):
        return None
    # compose: T's access in `last` replaced by T's body, its summed indices made fresh
    taken = {i for s in (middle, last, definition) for i, _ in (*s.index, *contraction_factors(s)[1])}
    taken |= {i for s in (middle, last, definition) for t in contraction_factors(s)[0] for i in t.indices}
    fresh = Fresh(taken)  # s0, s1 ... and d0, d1 ...: the first free
    rename = dict(zip((name for name, _ in middle.index), t_uses[0].indices))
    extents = dict(fin[1])
    for name, extent in mid[1]:
        rename[name] = fresh.take(f"s{n}" for n in itertools.count())
        extents[rename[name]] = extent
    composed = [t for t in fin[0] if t.name != middle.target]
    composed += [ir.Tensor(t.name, tuple(rename[i] for i in t.indices)) for t in mid[0]]
    summed = set(extents)
    out = [name for name, _ in last.index]
    ys = [t for t in composed if t.name == y]
    if len(out) != 2 or len(ys) != 1:
        return None
    first = ys[0]
    free = [i for i in first.indices if i not in summed]
    if len(free) != 1 or len(set(first.indices)) != len(first.indices):
        return None
    i = free[0]
    j = next(name for name in out if name != i) if i in out and len(set(out)) == 2 else None
    if j is None:
        return None
    # Y[..j..] by Y's definition: its indices renamed to the second access's, its sums fresh
    second = tuple(j if name == i else name for name in first.indices)
    dmap = dict(zip((name for name, _ in definition.index), second))
    for name, _ in dfn[1]:
        dmap[name] = fresh.take(f"d{n}" for n in itertools.count())
    expanded = [first] + [ir.Tensor(t.name, tuple(dmap[x] for x in t.indices)) for t in dfn[0]]
    if not _same(composed, summed, expanded, {x for x in first.indices if x in summed} | {dmap[n] for n, _ in dfn[1]}):
        return None
    # the summed index under its name in ``middle`` where that is free (as the program wrote it)
    back = {rename[name]: name for name, _ in mid[1] if name not in out}
    kept = tuple((back.get(name, name), extents[name]) for name in first.indices if name in summed)
    left, right = (ir.Tensor(y, tuple(back.get(x, x) for x in ix)) for ix in (first.indices, second))
    body = ir.Sum(Domain(kept), ir.BinOp("*", left, right))
    return replace(last, body=body)


def gram_chains(program: ir.Program, roles: Mapping[str, str] | None, vector_bytes: int) -> ir.Program:
    """``program`` with each pair ``T = Σ ... Y ...; S = Σ ... T ...`` that computes ``S =
    YᵀY`` (:func:`merged_pair`) replaced by that Gram product where it pays."""
    roles = declared_roles(program.decls) if roles is None else roles
    statements, shapes = list(program.statements), program.shapes
    # per name, counted once and kept as pairs merge (a scan per pair was quadratic); a
    # merge replaces statements n and n+1, so the positions below n never move
    readers, writers = Counter(x for s in statements for x in s.reads), Counter(s.target for s in statements)
    written_at: dict[str, list[int]] = {}
    for k, s in enumerate(statements):
        written_at.setdefault(s.target, []).append(k)

    def last_write(name: str, before: int) -> int:
        """The last statement before position ``before`` that writes ``name``, or -1."""
        return at[k - 1] if (k := bisect_left(at := written_at.get(name, []), before)) else -1
    changed = False
    for n in range(len(statements) - 2, 0, -1):
        middle, last = statements[n], statements[n + 1]
        t = middle.target
        if roles.get(t, Role.TEMP) != Role.TEMP or readers[t] != 1 or writers[t] != 1 or t not in last.reads:
            continue
        for name in middle.reads:
            d = last_write(name, n)
            if d < 0:
                continue
            definition = statements[d]
            watched = {definition.target, *definition.reads}
            if t in watched or any(last_write(w, n) > d for w in watched):
                continue
            merged = merged_pair(definition, middle, last, shapes)
            if merged is None:  # (then both are sums of products: multiply_adds counts them)
                continue
            step = gram_step(merged, dict.fromkeys(shapes, 0), shapes)
            pair_work = sum(multiply_adds(s, contraction_factors(s)[1]) for s in (middle, last))
            if step is not None and step.order == 2 and step.why_not(vector_bytes) is None \
                    and step.n * step.m * (step.m + 1) // 2 < pair_work:
                statements[n:n + 2] = [merged]
                for s, sign in ((middle, -1), (last, -1), (merged, 1)):  # writers: only t's drops (t is gone)
                    readers.update(dict.fromkeys(s.reads, sign))
                changed = True
                break
    return with_statements(program, statements, roles) if changed else program


def with_statements(program: ir.Program, statements, roles: Mapping[str, str]) -> ir.Program:
    """``program`` running ``statements``, less the temporaries they no longer use."""
    kept = {name for s in statements for name in (s.target, *s.reads)}
    return replace(program, decls=tuple(d for d in program.decls if d.name in kept or d.name in roles and
                                        roles[d.name] != Role.TEMP), statements=tuple(statements))
