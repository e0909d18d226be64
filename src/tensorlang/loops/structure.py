"""Compressed loops (003 §5.5): a structured target's unique set or support computed, the rest
rebuilt (docs/structure.md, "Compressed computation" and "Direct sums and vec")."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, fields, is_dataclass, replace

from typing import Any, Mapping

from ..analysis.structure import (Block, TensorStructure, declared as declared_structure, permutations, record,
                                  statement_structure)
from ..ein import ir as ein
from ..ein.index import Affine, affine, as_terms
from ..ein.structure import Structure
from ..schedule.plan import BufferPlan
from ..analysis.structure import isl  # islpy on first use
from .ir import (Acc, BinOp, Const, Copy, Declare, Init, Load, Loop, LoopProgram, Nest, Node, PackedCopy, around,
                 Rebuild, Store, Update, loads, replace_nodes, slots, walk)

#: The largest symmetric group compressed (4! = 24 stores per unique entry rebuild it).
MAX_GROUP = 4


def declared_structures(buffers: BufferPlan, declared: Mapping[str, Structure]) -> dict[str, TensorStructure]:
    """What the declarations promise, as the analysis' tensor structures."""
    shapes = dict(zip(buffers.names, buffers.shapes))
    return {name: declared_structure(name, tuple(shapes[name]), s) for name, s in declared.items()
            if s is not None and name in shapes}


def target_structure(stmt: ein.Statement, known: dict[str, TensorStructure],
                     readers: dict[str, set[str]] | None = None) -> TensorStructure | None:
    """The structure of ``stmt``'s target, recorded in ``known`` (``readers``: see
    ``record``), or None where the analysis cannot read the statement."""
    shape = tuple(n for _, n in stmt.index)
    try:
        found = statement_structure(stmt, shape, known, annihilating=False)
    except (isl.Error, KeyError, ValueError, TypeError):  # an expression isl cannot take: no claim, dense loops
        known.pop(stmt.target, None)
        return None
    record(known, found, readers)
    return found


def chain(body: tuple[Node, ...], variables) -> list[Loop] | None:
    """The loops over ``variables`` (outermost first) that ``body`` starts with, each the
    first node of the one outside it; else None."""
    loops: list[Loop] = []
    for var in variables:
        if not body or not isinstance(body[0], Loop) or body[0].var != var:
            return None
        loops.append(body[0])
        body = body[0].body
    return loops


def _enclosed(nodes, outer: frozenset[str] = frozenset()) -> bool:
    """Whether every loop that starts at another loop's variable runs inside it."""
    return all(not isinstance(n, Loop) or ((not isinstance(n.start, str) or n.start in outer)
                                           and _enclosed(n.body, outer | {n.var})) for n in nodes)


def _reloop(nodes: tuple[Node, ...], loops_of: Mapping[str, list | int | str], mapping: Mapping[str, object]
            ) -> tuple[Node, ...]:
    """``nodes`` with each loop over a variable of ``loops_of`` replaced by the loops of a
    list (as :func:`.ir.around`'s), else started where it says; indices mapped by ``mapping``."""
    out: list[Node] = []
    for node in nodes:
        if not isinstance(node, Loop):
            out.append(substitute_indices(node, mapping))
            continue
        body = _reloop(node.body, loops_of, mapping)
        spec = loops_of.get(node.var)
        if isinstance(spec, list):
            out.extend(around(body, spec))
        else:  # a start at a variable ``mapping`` replaces follows it (:func:`substitute_indices`)
            node = substitute_indices(replace(node, body=()), mapping) if spec is None else replace(node, start=spec)
            out.append(replace(node, body=body))
    return tuple(out)


def compress(nest: Nest, found: TensorStructure, slot: int, blocks: bool = True) -> Nest | None:
    """``nest`` computing only representatives of ``found``'s groups (and, with ``blocks``, its
    blocks' local symmetries), then the orbit copies; None where a loop would start at one it
    does not run inside (docs/structure.md, "Compressed computation", "Direct sums and vec")."""
    stmt = nest.statement
    variables = [v for v, _ in stmt.index]
    extents = [n for _, n in stmt.index]
    rank = len(variables)
    dims = [found.dim_blocks(d) if blocks else None for d in range(rank)]
    groups = tuple(g for g in found.groups if len(g) <= MAX_GROUP and len({dims[d] for d in g}) == 1)
    previous = {g[k + 1]: g[k] for g in groups for k in range(len(g) - 1)}
    dim_perms = [tuple(perm.index(t) for t in range(rank)) for perm in permutations(groups, rank)]
    compute: list[Node] = []
    rebuild: list[Node] = []
    choices = [range(len(b)) if b else [None] for b in dims]
    for combo in itertools.product(*choices):
        if any(combo[d] is not None and combo[previous[d]] is not None and combo[previous[d]] > combo[d]  # type: ignore[operator]
               for d in previous):
            continue
        spec: list[tuple[str, int, int | str]] = []
        loops_of: dict[str, list | int | str] = {}
        position: dict[int, object] = {}
        chosen: dict[int, Block] = {}
        first: dict[int, str] = {}
        for d in range(rank):
            prev = previous.get(d)
            c = combo[d]
            if c is None:
                loops_of[variables[d]] = begin = variables[prev] if prev is not None else 0
                spec.append((variables[d], extents[d], begin))
                position[d] = first[d] = variables[d]
                continue
            block = chosen[d] = dims[d][c]  # type: ignore[index]
            names = [f"{variables[d]}_{t}" for t in range(len(block.shape))]
            local: list[tuple[str, int, int | str]] = []
            for t, extent in enumerate(block.shape):
                start: int | str = 0
                group = next((g for g in block.groups if t in g and g.index(t) > 0), None)
                if group is not None:
                    start = names[group[group.index(t) - 1]]
                if t == 0 and prev is not None and combo[prev] == c:
                    start = first[prev]
                local.append((names[t], extent, start))
            loops_of[variables[d]] = local
            spec += local
            position[d] = _affine0(list(zip(names, block.strides)), block.start)
            first[d] = names[0]
        body = _reloop(nest.body, loops_of, {variables[d]: position[d] for d in chosen})
        if not _enclosed(body):
            return None
        here: Any = tuple(position[d] for d in range(rank))
        images = [[_affine0([(f"{variables[d]}_{p[t]}", s) for t, s in enumerate(chosen[d].strides)], chosen[d].start)
                   for p in chosen[d].permutations()] if d in chosen else [position[d]] for d in range(rank)]
        stores = _orbit_stores(slot, itertools.product(*images), dim_perms, Load(slot, here), skip={here})
        compute.extend(body)
        if stores:
            rebuild.extend(around(tuple(stores), spec))
    return replace(nest, body=tuple(compute) + tuple(rebuild))


# ------------------------------------------------------------------ supports
def _plan(support: isl.Set, shape: tuple[int, ...]):
    """How the target's loops cover ``support``: per dimension None (whole), ``("fixed", p)``, ``("same",
    d, offset)`` (d outer) or ``("from", d)`` (0-based); None where no loops state it (a union)."""
    support = support.coalesce()
    pieces = support.get_basic_sets()
    if len(pieces) != 1 or pieces[0].dim(isl.dim_type.div):
        return None
    plan: list = [None] * len(shape)
    for c in pieces[0].get_constraints():
        coeffs = [int(c.get_coefficient_val(isl.dim_type.set, d).to_python()) for d in range(len(shape))]
        const = int(c.get_constant_val().to_python())
        used = [d for d, k in enumerate(coeffs) if k]
        if c.is_equality():
            if len(used) == 1 and abs(coeffs[used[0]]) == 1:
                d = used[0]
                position = -const * coeffs[d]  # k*p + const = 0, k = ±1
                if plan[d] is not None or not 1 <= position <= shape[d]:
                    return None
                plan[d] = ("fixed", position - 1)
                continue
            if len(used) == 2 and {coeffs[used[0]], coeffs[used[1]]} == {1, -1}:
                a, b = used  # a outer: p_b = p_a + offset
                offset = -const if coeffs[b] == 1 else const  # ±(p_b - p_a) + const = 0
                if plan[b] is not None or not _inside(offset, shape[a], shape[b]):
                    return None
                plan[b] = ("same", a, offset)
                continue
            return None
        if len(used) == 1:
            d, k = used[0], coeffs[used[0]]
            if (k == 1 and const == -1) or (k == -1 and const == shape[d]):
                continue  # the box
            return None
        if len(used) == 2 and const == 0 and sorted((coeffs[used[0]], coeffs[used[1]])) == [-1, 1]:
            a, b = used
            if coeffs[b] == 1 and coeffs[a] == -1 and plan[b] is None:  # p_b >= p_a, a outer
                plan[b] = ("from", a)
                continue
            return None
        return None
    return plan


def _bound(mapping: Mapping[str, object], plan: tuple) -> object | None:
    """What a loop's variable becomes where its ``("fixed", p)`` or ``("same", u, offset)``
    plan drops the loop (:func:`_map_index`'s forms); None where u is fixed or offset."""
    if plan[0] == "fixed":
        return plan[1]
    source = mapping.get(plan[1], plan[1])
    if not isinstance(source, str):
        return None
    return (source, plan[2]) if plan[2] else source


def _map_index(i, mapping: Mapping[str, object]):
    """A loop-IR index with loop variables replaced: ``mapping`` gives a variable a
    0-based position (int), another variable (str) or (variable, offset)."""
    if isinstance(i, str):
        target = mapping.get(i, i)  # (an Affine: 1-based over 1-based variables, as the loop IR's indices)
        if isinstance(target, tuple):  # p_i = p_var + offset, in 1-based positions as in 0-based
            var, offset = target
            return affine([(var, 1)], offset) if offset else var
        return target
    if isinstance(i, Affine):  # 1-based over 1-based variables
        terms, offset = as_terms(i)
        new_terms: list[tuple[str, int]] = []
        for v, k in terms:
            target = mapping.get(v, v)
            if isinstance(target, int):
                offset += k * (target + 1)
            elif isinstance(target, Affine):
                new_terms.extend((u, k * c) for u, c in target.terms)
                offset += k * target.offset
            elif isinstance(target, tuple):
                new_terms.append((str(target[0]), k))
                offset += k * int(target[1])  # type: ignore[call-overload]
            else:
                new_terms.append((str(target), k))
        result = affine(new_terms, offset)
        return result - 1 if isinstance(result, int) else result
    return i


def substitute_indices(node: Any, mapping: Mapping[str, object]) -> Any:
    """``node`` (any loop-IR node or scalar) with its indices mapped (:func:`_map_index`)."""
    def mapped(n: Any) -> Any:
        if not is_dataclass(n) or isinstance(n, type):
            return None
        changes: dict[str, Any] = {f.name: tuple(_map_index(i, mapping) for i in getattr(n, f.name)) if f.name == "indices"
                                   else _map_index(getattr(n, f.name), mapping) for f in fields(n)
                                   if f.name in ("indices", "first", "second", "var") and not isinstance(n, Loop)}
        if isinstance(n, Loop) and isinstance(n.start, str) and n.start in mapping:
            target = mapping[n.start]
            # a start at a fixed or renamed loop follows it; at an offset one, from 0 (a
            # superset of the points: the extra ones are promised zeros)
            changes["start"] = target if isinstance(target, (int, str)) else 0
        return replace(n, **changes) if changes else None
    return replace_nodes(node, mapped, inside=True)


def restricts(found: TensorStructure) -> bool:
    """Whether computing only ``found``'s support saves at least a quarter of the
    target's entries (the zero fill costs a store per entry)."""
    return bool(found.shape) and 4 * found.support_size <= 3 * found.dense_size


def restrict(nest: Nest, support: isl.Set) -> Nest:
    """``nest`` zeroing its target, then running over ``support`` only (docs/structure.md,
    "Compressed computation")."""
    variables = [v for v, _ in nest.statement.index]
    loops_ = chain(nest.body, variables) if variables else None
    plan = _plan(support, tuple(n for _, n in nest.statement.index)) if loops_ is not None else None
    store_slot = next((n.slot for n in loops_[-1].body if isinstance(n, Store)), None) if loops_ else None
    if plan is None or all(p is None for p in plan) or store_slot is None \
            or any(isinstance(n, Load) and n.slot == store_slot for n in walk(nest.body)):
        return nest  # (a target whose buffer the statement reads, a temporary's reused: zeroing it first would lose it)
    mapping: dict[str, object] = {}
    loops_of: dict[str, list | int | str] = {}
    for d, p in enumerate(plan):
        if p is not None and p[0] in ("fixed", "same"):
            mapping[variables[d]] = _bound(mapping, p if p[0] == "fixed" else ("same", variables[p[1]], p[2]))
            loops_of[variables[d]] = []
        elif p is not None:  # ("from", a): starts at dimension a's position, a outer
            loops_of[variables[d]] = variables[p[1]]
    if None in mapping.values() or any(start in mapping for start in loops_of.values() if isinstance(start, str)):
        return nest
    zero = around((Store(store_slot, tuple(variables), Const(0.0)),), [(v, n, 0) for v, n in nest.statement.index])
    return replace(nest, body=zero + _reloop(nest.body[:1], loops_of, mapping) + nest.body[1:])


# ------------------------------------------------------------------ summation supports
def _sum_plans(stmt: ein.Statement, known: Mapping[str, TensorStructure]) -> dict[str, tuple]:
    """Per summed variable whose summand the promises confine: :func:`_plan`'s forms or ``("start",
    p)``, u an enclosing variable; a superset of the support (docs/structure.md, "Compressed computation")."""
    from ..analysis.structure import _Space, _support
    space = _Space(stmt)
    bound = [b for node in ein.nodes(stmt.body) for b in ein.binders(node)]
    binders = [v for v, _ in bound]
    if len(binders) != len(set(binders)) or set(binders) & {v for v, _ in stmt.index}:
        return {}
    extents = {**dict(stmt.index), **dict(bound)}
    limits = space.where(" and ".join(f"1 <= {space.isl[v]} <= {n}" for v, n in extents.items()))
    plans: dict[str, tuple] = {}

    def visit(e: ein.Expr, enclosing: tuple[str, ...]) -> None:
        if isinstance(e, ein.Sum):
            hull = _support(e.body, space, known, annihilating=False).intersect(limits).simple_hull()
            outer = list(enclosing)
            for v, n in e.index:
                plan = _variable_plan(hull, space, v, outer, n, extents)
                if plan is not None:
                    plans[v] = plan
                outer.append(v)
            visit(e.body, tuple(outer))
            return
        for kid in ein.children(e):
            visit(kid, enclosing)

    visit(stmt.body, tuple(v for v, _ in stmt.index))
    return plans


def _inside(offset: int, outer: int, extent: int) -> bool:
    """Whether p + offset is a position of ``extent`` for every position p of ``outer``
    (docs/structure.md, "Compressed computation")."""
    return offset >= 0 and outer + offset <= extent


def _variable_plan(hull: isl.BasicSet, space, v: str, outer: list[str], extent: int,
                   extents: Mapping[str, int]) -> tuple | None:
    d = space.dim(v)
    allowed = {space.dim(u) for u in outer}
    best = None
    for c in hull.get_constraints():
        k = int(c.get_coefficient_val(isl.dim_type.set, d).to_python())
        if k == 0:
            continue
        others = {e: int(c.get_coefficient_val(isl.dim_type.set, e).to_python()) for e in range(len(space.names))
                  if e != d and int(c.get_coefficient_val(isl.dim_type.set, e).to_python())}
        const = int(c.get_constant_val().to_python())
        if not set(others) <= allowed or abs(k) != 1:
            continue
        if c.is_equality():
            if not others:
                position = -const * k
                if 1 <= position <= extent:
                    return ("fixed", position - 1)
            elif len(others) == 1:
                (e, ke), = others.items()
                offset = -const * k
                if ke == -k and _inside(offset, extents[space.names[e]], extent):  # v = u + offset
                    return ("same", space.names[e], offset)
                if ke == -k and offset > 0:  # v = u + offset runs past the end: v >= u covers it
                    best = ("from", space.names[e])
            continue
        if k == 1 and not others and const <= -2:  # v >= 1 - const, beyond the box's 1
            best = best or ("start", -const - 1)
        elif k == 1 and len(others) == 1 and const == 0:
            (e, ke), = others.items()
            if ke == -1:  # v >= u
                best = ("from", space.names[e])
    return best


def _reads_promised_zeros(stmt: ein.Statement, known: Mapping[str, TensorStructure]) -> bool:
    """Whether ``stmt`` reads a tensor whose support is smaller than its box (every read
    counted: one too large for isl is error[too-large])."""
    return any([t.name in known and bool(known[t.name].shape) and known[t.name].support_size < known[t.name].dense_size
                for t in ein.tensors(stmt.body)])


def restrict_sums(nest: Nest, known: Mapping[str, TensorStructure]) -> Nest:
    """``nest`` with its summation loops over their summands' supports only."""
    if not _reads_promised_zeros(nest.statement, known):
        return nest  # only a promise restricts a sum (a box's own bounds are no reason to)
    plans = _sum_plans(nest.statement, known)
    if not plans:
        return nest
    mapping: dict[str, object] = {}
    loops_of: dict[str, list | int | str] = {}
    for var, plan in plans.items():  # outer loops first: a bound reads theirs
        if plan[0] in ("fixed", "same"):
            bound = _bound(mapping, plan)
            if bound is not None:  # (else the loop stays as it is)
                mapping[var], loops_of[var] = bound, []
        elif plan[0] == "from":
            source = mapping.get(plan[1], plan[1])
            loops_of[var] = source if isinstance(source, (str, int)) else 0
        else:
            loops_of[var] = plan[1]
    return replace(nest, body=_reloop(nest.body, loops_of, mapping))


def visited_points(stmt: ein.Statement, known: Mapping[str, TensorStructure]) -> tuple[int, int] | None:
    """(about the points ``stmt``'s nest visits under :func:`restrict_sums` and :func:`restrict`,
    its dense points), or None where they do not apply (docs/structure.md, "Supports instead of BLAS")."""
    if not isinstance(stmt.body, ein.Sum):
        return None
    extents = {**dict(stmt.index), **dict(stmt.body.index)}
    dense = math.prod(extents.values())
    if not _reads_promised_zeros(stmt, known):
        return None
    shape = tuple(n for _, n in stmt.index)
    found = known.get(stmt.target) or target_structure(stmt, dict(known))
    try:
        plans = _sum_plans(stmt, known)
        target = _plan(found.support, shape) if found is not None and restricts(found) else None
    except (isl.Error, KeyError, ValueError, TypeError):
        return None
    visited = 1
    for d, (_, n) in enumerate(stmt.index):
        visited *= _planned_extent(target[d] if target is not None else None, n)
    for v, n in stmt.body.index:
        visited *= _planned_extent(plans.get(v), n)
    return visited, dense


def _planned_extent(plan: tuple | None, extent: int) -> int:
    """About how many values a loop of ``extent`` takes under ``plan``."""
    if plan is None:
        return extent
    if plan[0] in ("fixed", "same"):
        return 1
    if plan[0] == "start":
        return max(1, extent - int(plan[1]))
    return max(1, (extent + 1) // 2)  # "from": a triangle


# ------------------------------------------------------------------ direct-sum blocks
def _target_body(nest: Nest, slot: int) -> tuple[Node, ...] | None:
    """The body of ``nest``'s target loops where it is only their chain storing ``slot``."""
    variables = [v for v, _ in nest.statement.index]
    loops_ = chain(nest.body, variables) if variables and len(nest.body) == 1 else None
    if loops_ is None:
        return None
    inner = loops_[-1].body
    if not any(isinstance(n, Store) and n.slot == slot and tuple(n.indices) == tuple(variables) for n in inner):
        return None
    return inner


def _orbit_stores(slot: int, positions, dim_perms: list[tuple[int, ...]], value, skip=()) -> list[Node]:
    """``slot[p] = value`` at each of ``positions`` moved by each of ``dim_perms``
    (dimension d to perm[d]), each position once, none of ``skip``."""
    seen = set(skip)
    stores: list[Node] = []
    for moved in positions:
        for perm in dim_perms:
            out: list[Any] = [None] * len(perm)
            for d, index in enumerate(moved):
                out[perm[d]] = index
            key = tuple(out)
            if key not in seen:
                seen.add(key)
                stores.append(Store(slot, key, value))
    return stores


def _single_sum(body: tuple[Node, ...], slot: int, here) -> tuple[list[Loop], Update] | None:
    """The loops and update of ``body`` if it is one sum ``acc = 0; for r..: acc += v;
    T[here] = acc`` (constant starts, one statement a loop)."""
    if len(body) != 3 or not isinstance(body[0], Init) or body[0].op != "+":
        return None
    init, loop, store = body
    assert isinstance(init, Init)
    if not (isinstance(store, Store) and store.slot == slot and tuple(store.indices) == here
            and isinstance(store.value, Acc) and store.value.name == init.acc):
        return None
    chain: list[Loop] = []
    node: Node = loop
    while isinstance(node, Loop) and not isinstance(node.start, str):
        chain.append(node)
        if len(node.body) != 1:
            return None
        node = node.body[0]
    if not chain or not isinstance(node, Update) or node.acc != init.acc or node.op != "+":
        return None
    return chain, node


def _rows(body: tuple[Node, ...], inner: list[tuple[str, int, int | str]], slot: int, here) -> tuple[Node, ...] | None:
    """``acc = 0; for r..: acc += v; T[here] = acc`` inside the loops ``inner`` as row AXPYs
    ``for inner: T[here] = 0; for r..: for inner: T[here] += v`` (the same additions), else None."""
    matched = _single_sum(body, slot, here)
    if matched is None:
        return None
    chain, node = matched
    if any(loop_.var in {v for v, _, _ in inner} for loop_ in chain):
        return None
    update = around((Store(slot, here, BinOp("+", Load(slot, here), node.value)),), inner)
    return around((Store(slot, here, Const(0.0)),), inner) + around(update, [(c.var, c.extent, c.start) for c in chain])


# ------------------------------------------------------------------ packed unique sets
@dataclass(frozen=True)
class Run:
    """A run of a blocked dimension's unique positions: packed ``u0 + t`` (t < length) holds
    ``offset + stride · t`` of each of ``images`` (docs/structure.md, "Direct sums and vec", step 1)."""

    u0: int
    length: int
    images: tuple[tuple[int, int], ...]


def runs(blocks) -> tuple[Run, ...]:
    """The unique positions of a dimension with direct-sum ``blocks`` as :class:`Run` s."""
    found: list[Run] = []
    u = 0
    for block in blocks:
        k = len(block.shape)
        if not block.groups:
            found.append(Run(u, block.size, ((block.start, 1),)))
            u += block.size
            continue
        before = {g[n + 1]: g[n] for g in block.groups for n in range(len(g) - 1)}
        strides = block.strides
        perms = block.permutations()
        for prefix in itertools.product(*(range(n) for n in block.shape[:-1])):
            if any(t in before and prefix[before[t]] > prefix[t] for t in range(k - 1)):
                continue
            first = prefix[before[k - 1]] if k - 1 in before else 0
            length = block.shape[-1] - first
            if length <= 0:
                continue
            local = list(prefix) + [first]
            images = []
            for perm in perms:
                moved = [local[perm[t]] for t in range(k)]
                at = next(t for t in range(k) if perm[t] == k - 1)  # where t moves to
                images.append((block.start + sum(s * v for s, v in zip(strides, moved)), strides[at]))
            unique_images = tuple(dict.fromkeys(images))
            found.append(Run(u, length, unique_images))
            u += length
    return tuple(found)


def _affine0(terms: list[tuple[str, int]], offset: int):
    """The loop-IR index (1-based over 1-based variables) of 0-based ``offset + Σ k · var``."""
    terms = [(v, k) for v, k in terms if k]
    return affine(terms, offset + 1 - sum(k for _, k in terms)) if terms else offset


def _replace_loads(node: Any, change) -> Any:
    return replace_nodes(node, lambda n: change(n) if isinstance(n, Load) else None)


def _mentions(node: Any, names: set[str]) -> bool:
    if isinstance(node, str):
        return node in names
    if isinstance(node, Affine):
        return any(v in names for v, _ in node.terms)
    if isinstance(node, tuple):
        return any(_mentions(v, names) for v in node)
    if not is_dataclass(node) or isinstance(node, type):
        return False
    return any(_mentions(getattr(node, f.name), names) for f in fields(node) if f.name not in ("slot", "acc", "op", "fn"))


#: The packed extents are multiples of this; the last two packed dimensions of a sum are
#: computed in TILE x TILE blocks kept in registers across the summation (:func:`_tiles`).
TILE = 8

#: At most this many bytes of packed copies per statement, beyond it :func:`compress`
#: (docs/structure.md, "Where the packed copies live").
MAX_PACKED_BYTES = 1 << 28

#: Beyond this many orbit stores a packed statement's reconstruction is one table-driven
#: loop nest (:class:`~.ir.Rebuild`): docs/structure.md, "Compressed code (C back end)", step 3.
REBUILD_TABLE_STORES = 1024


def compress_packed(nest: Nest, found: TensorStructure, buffers: BufferPlan, slot: int) -> Nest | None:
    """``nest`` over the packed unique positions of its blocked dimensions, or None where packing
    does not apply (docs/structure.md, "Direct sums and vec", steps 1-3)."""
    stmt = nest.statement
    variables = [v for v, _ in stmt.index]
    extents = [n for _, n in stmt.index]
    rank = len(variables)
    inner = _target_body(nest, slot) if buffers.pad == 1 else None
    if inner is None:
        return None
    dims = {d: found.dim_blocks(d) for d in range(rank) if found.dim_blocks(d) is not None}
    if not dims:
        return None
    dim_runs = {d: runs(b) for d, b in dims.items()}
    packed_extent = {d: -(-sum(r.length for r in rs) // TILE) * TILE for d, rs in dim_runs.items()}
    blocked_var = {variables[d]: d for d in dims}
    shapes = buffers.all_storage_shapes
    itemsize = buffers.itemsize
    next_slot = len(buffers.all_names) + 8
    # the tensors read at a blocked index, and along which of their dimensions
    packs: dict[tuple, int] = {}
    recorded: list[PackedCopy] = []
    declares: list[Node] = []
    copies: list[Node] = []
    total_bytes = 0
    for load in loads(inner):
        along = []
        for t, i in enumerate(load.indices):
            if isinstance(i, str) and i in blocked_var:
                along.append((t, blocked_var[i]))
            elif _mentions(i, set(blocked_var)):
                return None
        if not along:
            continue
        key = (load.slot, tuple((t, dims[d]) for t, d in along))  # the same blocks share one copy
        if key in packs or load.slot == slot:
            if load.slot == slot:
                return None
            continue
        shape = list(shapes[load.slot])
        if any(shape[t] != extents[d] for t, d in along):
            return None
        for t, d in along:
            shape[t] = packed_extent[d]
        packs[key] = next_slot
        if len(along) == 1:
            (t, d), = along
            recorded.append(PackedCopy(load.slot, next_slot, t, tuple((r.u0, *r.images[0], r.length) for r in dim_runs[d]),
                                       tuple(shape)))
        total_bytes += math.prod(shape) * itemsize
        declares.append(Declare(next_slot, tuple(shape)))
        copies.extend(_pack_nests(load.slot, next_slot, tuple(shapes[load.slot]), dict(along), dim_runs, tuple(shape)))
        next_slot += 1
    target_slot = next_slot
    target_shape = tuple(packed_extent.get(d, extents[d]) for d in range(rank))
    total_bytes += math.prod(target_shape) * itemsize
    if total_bytes > MAX_PACKED_BYTES:
        return None
    declares.append(Declare(target_slot, target_shape))
    packed_var = {variables[d]: f"{variables[d]}_u" for d in dims}

    def repack(load: Load) -> Load:
        along = tuple((t, blocked_var[i]) for t, i in enumerate(load.indices) if isinstance(i, str) and i in blocked_var)
        if not along:
            return load
        return Load(packs[(load.slot, tuple((t, dims[d]) for t, d in along))], tuple(packed_var.get(i, i) if isinstance(i, str) else i
                                                      for i in load.indices))

    here = tuple(packed_var.get(v, v) for v in variables)
    body = tuple(_replace_loads(n, repack) for n in inner)
    body = tuple(replace(n, slot=target_slot, indices=here) if isinstance(n, Store) and n.slot == slot else n
                 for n in body)
    if _mentions(body, set(blocked_var)):
        return None
    groups = tuple(g for g in found.groups if len({dims.get(d) for d in g}) == 1)
    previous = {g[k + 1]: g[k] for g in groups for k in range(len(g) - 1)}
    spec = [(here[d], target_shape[d], here[previous[d]] if d in previous else 0) for d in range(rank)]
    tiled = _tiles(body, spec, target_slot, here, next_slot + 1) if rank >= 2 and {rank - 2, rank - 1} <= set(dims) else None
    if tiled is not None:
        compute: tuple[Node, ...] = tiled
    else:
        rows = _rows(body, spec[-1:], target_slot, here)
        compute = around(body, spec) if rows is None else around(rows, spec[:-1])
    rebuild = _unpack_nests(slot, target_slot, variables, extents, dim_runs, groups, previous)
    return replace(nest, body=tuple(declares) + tuple(copies) + compute + rebuild, wide_vectors=True, packs=tuple(recorded))


def _pack_nests(source: int, packed: int, shape: tuple[int, ...], along: dict[int, int],
                dim_runs: Mapping[int, tuple[Run, ...]], packed_shape: tuple[int, ...]) -> list[Node]:
    """Loops copying ``source``'s unique positions along ``along`` (dimension -> the target dimension
    whose runs they are) into ``packed``, run by run, and zeros in the padding beyond them."""
    names = [f"pk{t}" for t in range(len(shape))]
    packed_dims = sorted(along)
    inner: list[Node] = []
    for chosen in itertools.product(*(dim_runs[along[t]] for t in packed_dims)):
        run_of = dict(zip(packed_dims, chosen))
        src, dst = [], []
        for t in range(len(shape)):
            if t in run_of:
                r = run_of[t]
                offset, stride = r.images[0]
                src.append(_affine0([(names[t], stride)], offset))
                dst.append(_affine0([(names[t], 1)], r.u0))
            else:
                src.append(names[t])
                dst.append(names[t])
        inner.extend(around((Store(packed, tuple(dst), Load(source, tuple(src))),),
                             [(names[t], run_of[t].length, 0) for t in packed_dims]))
    # the padding: along each packed dimension, the positions past the unique ones
    for t in packed_dims:
        used = sum(r.length for r in dim_runs[along[t]])
        if used == packed_shape[t]:
            continue
        index = tuple(_affine0([(names[u], 1)], used) if u == t else names[u] for u in range(len(shape)))
        inner.extend(around((Store(packed, index, Const(0.0)),),
                             [(names[u], packed_shape[u] - used if u == t else packed_shape[u], 0) for u in packed_dims]))
    return list(around(tuple(inner), [(names[t], shape[t], 0) for t in range(len(shape)) if t not in along]))


def _unpack_nests(slot: int, packed: int, variables: list[str], extents: list[int],
                  dim_runs: Mapping[int, tuple[Run, ...]], groups, previous) -> tuple[Node, ...]:
    """The orbit stores of each packed entry, or one :class:`~.ir.Rebuild` beyond
    :data:`REBUILD_TABLE_STORES` stores."""
    rank = len(variables)
    dim_perms = permutations(groups, rank)
    nests: list[Node] = []
    count = 0
    choices = [range(len(dim_runs[d])) if d in dim_runs else [None] for d in range(rank)]
    for combo in itertools.product(*choices):
        if any(combo[d] is not None and combo[previous[d]] > combo[d] for d in previous):  # type: ignore[operator]
            continue
        tvars = [f"{variables[d]}_t" if d in dim_runs else variables[d] for d in range(rank)]
        spec = []
        source = []
        images: list[list] = []
        for d in range(rank):
            prev = previous.get(d)
            start = tvars[prev] if prev is not None and combo[prev] == combo[d] else 0
            if d in dim_runs:
                r = dim_runs[d][combo[d]]  # type: ignore[index]
                spec.append((tvars[d], r.length, start))
                source.append(_affine0([(tvars[d], 1)], r.u0))
                images.append([_affine0([(tvars[d], s)], o) for o, s in r.images])
            else:
                spec.append((tvars[d], extents[d], start))
                source.append(tvars[d])
                images.append([tvars[d]])
        stores = _orbit_stores(slot, itertools.product(*images), dim_perms, Load(packed, tuple(source)))
        count += len(stores)
        if count > REBUILD_TABLE_STORES:
            return (_rebuild_table(slot, packed, extents, dim_runs, groups),)
        nests.extend(around(tuple(stores), spec))
    return tuple(nests)


def _rebuild_table(slot: int, packed: int, extents: list[int], dim_runs: Mapping[int, tuple[Run, ...]],
                   groups) -> Rebuild:
    """The reconstruction as tables: per blocked dimension each position's packed place."""
    tables: list[tuple[int, ...] | None] = []
    for d, extent in enumerate(extents):
        if d not in dim_runs:
            tables.append(None)
            continue
        table: list[int | None] = [None] * extent
        for r in dim_runs[d]:
            for offset, stride in r.images:
                for t in range(r.length):
                    table[offset + stride * t] = r.u0 + t
        if any(u is None for u in table):
            raise AssertionError(f"the runs of dimension {d} miss a position")
        tables.append(tuple(u for u in table if u is not None))
    return Rebuild(slot, packed, tuple(extents), tuple(tables), tuple(g for g in groups if len(g) > 1))


def _tiles(body: tuple[Node, ...], spec: list[tuple[str, int, int | str]], slot: int, here, acc_slot: int
           ) -> tuple[Node, ...] | None:
    """The single sum ``acc = 0; for r..: acc += v; T[here] = acc`` over the loops ``spec`` in
    TILE x TILE register blocks (docs/structure.md, "Direct sums and vec", step 2)."""
    matched = _single_sum(body, slot, here)
    if matched is None:
        return None
    chain, node = matched
    (yv, ye, ys), (xv, xe, xs) = spec[-2], spec[-1]
    if ys != 0 or xs not in (0, yv) or ye % TILE or xe % TILE:  # a tiled index starting at an outer one: not in blocks
        return None
    if any(isinstance(s_, str) and s_ in (yv, xv) for _, _, s_ in spec[:-2]):
        return None
    yb, xb, yu, xu = f"{yv}_b", f"{xv}_b", f"{yv}_i", f"{xv}_i"
    mapping = {yv: _affine0([(yb, TILE), (yu, 1)], 0), xv: _affine0([(xb, TILE), (xu, 1)], 0)}
    out_index = tuple(mapping.get(i, i) if isinstance(i, str) else i for i in here)
    nest: tuple[Node, ...] = (_block_product((yb, xb, yu, xu), (ye // TILE, xe // TILE), xs == yv, chain,
                                             substitute_indices(node.value, mapping), slot, out_index, acc_slot),)
    return around(nest, spec[:-2])


def _block_product(names: tuple[str, str, str, str], blocks: tuple[int, int], triangular: bool,
                   chain: list[Loop], value, slot: int, out_index: tuple, acc_slot: int) -> Loop:
    """The block loops of :func:`_tiles` over ``names`` (y block, x block, y in block, x
    in block), ``blocks`` blocks each way, summand ``value``, target index ``out_index``."""
    yb, xb, yu, xu = names
    block, spec = (yu, xu), [(yu, TILE, 0), (xu, TILE, 0)]
    update = around(around((Store(acc_slot, block, BinOp("+", Load(acc_slot, block), value)),), spec),
                     [(c.var, c.extent, c.start) for c in chain])
    tile = (Declare(acc_slot, (TILE, TILE)), *around((Store(acc_slot, block, Const(0.0)),), spec), *update,
            *around((Store(slot, out_index, Load(acc_slot, block)),), spec))
    return Loop(yb, blocks[0], (Loop(xb, blocks[1], tile, start=yb if triangular else 0),))


@dataclass(frozen=True)
class PackedProduct:
    """:func:`_tiles`'s block product as ``target[p, q] = Σ_r left[r, p] (or [p, r]) · right[r, q]
    (or [q, r])``; ``upper``: p <= q only (docs/structure.md, "The packed product on BLAS")."""

    target: int
    left: int
    right: int
    rows: int
    cols: int
    summed: int
    left_summed_first: bool
    right_summed_first: bool
    upper: bool

    @property
    def is_gram(self) -> bool:
        """left is right, read the same way: target = leftᵀ left (or left leftᵀ), symmetric."""
        return (self.left == self.right and self.left_summed_first == self.right_summed_first
                and self.rows == self.cols)

    @property
    def loop_work(self) -> int:
        """The multiply-adds the block loops do."""
        nb = self.rows // TILE
        blocks = nb * (nb + 1) // 2 if self.upper else nb * (self.cols // TILE)
        return blocks * TILE * TILE * self.summed


def _unmarked(node: Any) -> Any:
    """``node`` with its loops' marks (parallel, simd, reductions, team, unroll) cleared."""
    if isinstance(node, Loop):
        return Loop(node.var, node.extent, tuple(_unmarked(n) for n in node.body), start=node.start)
    return node


def packed_product(node: Node) -> PackedProduct | None:
    """What ``node`` computes when it is :func:`_tiles`'s block product of two packed copies (rebuilt
    from what is found, it must be the same but for the loops' marks), else None."""
    if not (isinstance(node, Loop) and node.start == 0 and len(node.body) == 1
            and isinstance(node.body[0], Loop) and len(node.body[0].body) == 4
            and isinstance(node.body[0].body[0], Declare)):
        return None  # (cheap checks first: the packed-blas rewrite asks this of every loop)
    node = _unmarked(node)
    assert isinstance(node, Loop) and isinstance(node.body[0], Loop)
    outer, inner = node, node.body[0]
    declare, _, update, out = inner.body
    if not (isinstance(declare, Declare) and isinstance(out, Loop) and isinstance(update, Loop)):
        return None
    chain: list[Loop] = []
    walk: Node = update
    while isinstance(walk, Loop) and len(walk.body) == 1:
        chain.append(walk)
        walk = walk.body[0]
    if len(chain) < 3 or not isinstance(walk, Store) or not isinstance(walk.value, BinOp):
        return None
    chain, (yu, xu) = chain[:-2], (chain[-2].var, chain[-1].var)
    stored = out.body[0].body[0] if isinstance(out.body[0], Loop) and out.body[0].body else None
    if not isinstance(stored, Store):
        return None
    value = walk.value.right
    names = (outer.var, inner.var, yu, xu)
    rebuilt = _block_product(names, (outer.extent, inner.extent), inner.start == outer.var, chain,
                             value, stored.slot, tuple(stored.indices), declare.slot)
    if rebuilt != node or len(chain) != 1 or chain[0].start != 0:
        return None
    r = chain[0].var
    p, q = _affine0([(outer.var, TILE), (yu, 1)], 0), _affine0([(inner.var, TILE), (xu, 1)], 0)
    if not (isinstance(value, BinOp) and value.op == "*" and isinstance(value.left, Load)
            and isinstance(value.right, Load) and tuple(stored.indices) == (p, q)):
        return None
    a, b = value.left, value.right
    if tuple(a.indices) not in ((r, p), (p, r)) or tuple(b.indices) not in ((r, q), (q, r)):
        return None
    return PackedProduct(stored.slot, a.slot, b.slot, outer.extent * TILE, inner.extent * TILE, chain[0].extent,
                         tuple(a.indices) == (r, p), tuple(b.indices) == (r, q), inner.start == outer.var)


# ------------------------------------------------------------------ the producer packs
def pack_in_producer(program: LoopProgram, statements) -> LoopProgram:
    """``program`` with each packed copy of a temporary written by its producer instead
    (docs/structure.md, "The producer writes the packed layout")."""
    buffers = program.buffers
    nests = list(program.nests)
    slots_after = list(buffers.buffers)
    for k, nest in enumerate(nests):
        for pc in nest.packs:
            found = _producer_packs(nests, k, pc, buffers, statements)
            if found is None:
                continue
            j, producer = found
            nests[j] = producer
            nests[k] = replace(nests[k], body=_without_copy(nests[k].body, pc), packs=tuple(
                p for p in nests[k].packs if p != pc))
            slots_after[pc.source] = replace(slots_after[pc.source], shape=pc.shape)
    if not any(a.shape != b.shape for a, b in zip(slots_after, buffers.buffers)):
        return program
    return LoopProgram(replace(buffers, buffers=tuple(slots_after)), tuple(nests))


def _producer_packs(nests: list[Nest], k: int, pc: PackedCopy, buffers: BufferPlan, statements):
    """(j, nest j storing ``pc``'s packed layout) where :func:`pack_in_producer` applies."""
    source = pc.source
    if buffers.pad != 1 or source >= len(buffers.buffers) or source in buffers.aliased:
        return None
    buffer = buffers.buffers[source]
    if not buffer.pooled or buffer.alias or sum(1 for s in buffers.slot_of.values() if s == source) != 1:
        return None
    if math.prod(pc.shape) > buffer.size:  # the packed extent rounds up to TILE: it must fit what a call allocates
        return None
    name = buffer.name
    if sum(1 for s in statements if s.target == name) != 1:
        return None
    if sum(1 for s in statements if any(t.name == name for t in ein.tensors(s.body))) != 1:
        return None
    if any(p.source == source for n in nests for p in n.packs if p != pc):
        return None
    writers = [j for j, n in enumerate(nests) if any(isinstance(x, Store) and x.slot == source for x in walk(n.body))]
    if len(writers) != 1 or writers[0] >= k:
        return None
    j = writers[0]
    if any(l.slot == source for l in loads(nests[j].body)):
        return None
    copies: list[Node] = []
    rest: list[Node] = []
    for n in nests[k].body:
        (copies if _stores_only(n, pc.packed) else rest).append(n)
    if not copies or any(l.slot == source for l in loads(rest)) or any(stride != 1 for _, _, stride, _ in pc.runs):
        return None
    body: list[Node] = []
    for node in nests[j].body:
        got = _store_packed(node, pc)
        if got is None:
            return None
        body.extend(got)
    return j, replace(nests[j], body=tuple(body))


def _stores_only(node: Node, slot: int) -> bool:
    """Whether ``node`` is a loop nest (or a store) whose only effect is storing into ``slot``."""
    found = list(walk((node,)))
    return (any(isinstance(n, Store) for n in found)
            and all(n.slot == slot for n in found if isinstance(n, Store))
            and not any(isinstance(n, (Update, Init, Copy, Declare)) for n in found))


def _position(index, var: str) -> int | None:
    """o where ``index`` is the 0-based position ``var + o``, else None."""
    if index == var:
        return 0
    if isinstance(index, Affine) and index.terms == ((var, 1),):
        return index.offset
    return None


def _cuttable(loop: Loop, source: int, along: int) -> bool:
    """Whether ``loop`` may be cut to ranges of its variable (docs/structure.md, "The
    producer writes the packed layout": the rule for which loops may be cut)."""
    if loop.parallel or not isinstance(loop.start, int):
        return False
    inside = list(walk(loop.body))
    declared = {n.slot for n in inside if isinstance(n, Declare)}
    initialised = {n.acc for n in inside if isinstance(n, Init)}
    for n in inside:
        if isinstance(n, Copy) or (isinstance(n, Update) and n.acc not in initialised):
            return False
        if isinstance(n, Store) and n.slot not in declared:
            if n.slot != source or len(n.indices) <= along or _position(n.indices[along], loop.var) is None:
                return False
            if _mentions(n.indices[:along] + n.indices[along + 1:], {loop.var}):
                return False
    offsets = {_position(n.indices[along], loop.var) for n in inside if isinstance(n, Store) and n.slot == source}
    return len(offsets) == 1  # one position per iteration, so cutting the range cuts the positions


def _store_packed(node: Node, pc: PackedCopy) -> tuple[Node, ...] | None:
    """``node`` storing ``pc.source`` packed (None: a store not in a :func:`_cuttable` loop)."""
    if isinstance(node, Loop):
        if _cuttable(node, pc.source, pc.along):
            return _cut(node, pc)
        body: list[Node] = []
        for child in node.body:
            got = _store_packed(child, pc)
            if got is None:
                return None
            body.extend(got)
        return (replace(node, body=tuple(body)),)
    return None if any(isinstance(n, Store) and n.slot == pc.source for n in walk((node,))) else (node,)


def _cut(loop: Loop, pc: PackedCopy) -> tuple[Node, ...]:
    """``loop`` once per run it meets, its stores of the source moved to the run's place."""
    assert isinstance(loop.start, int)
    o = next(_position(n.indices[pc.along], loop.var) for n in walk(loop.body) if isinstance(n, Store) and n.slot == pc.source)
    assert o is not None
    pieces: list[Node] = []
    for u0, first, _, length in pc.runs:
        lo, hi = max(loop.start, first - o), min(loop.extent, first + length - o)
        if lo >= hi:
            continue

        def moved(n, shift=u0 - first):
            if isinstance(n, Store) and n.slot == pc.source:
                indices = list(n.indices)
                indices[pc.along] = _affine0([(loop.var, 1)], o + shift)
                return replace(n, indices=tuple(indices))
            return None

        pieces.append(replace(loop, start=lo, extent=hi, body=tuple(replace_nodes(n, moved) for n in loop.body)))
    return tuple(pieces)


def _without_copy(body: tuple[Node, ...], pc: PackedCopy) -> tuple[Node, ...]:
    """A packed nest's ``body`` reading ``pc.source`` (packed now) where it read the copy,
    without the copy, storing the zeros past the last run into the source."""
    used = max(u0 + length for u0, _, _, length in pc.runs)
    kept: list[Node] = []
    for node in body:
        if isinstance(node, Declare) and node.slot == pc.packed:
            continue
        if _stores_only(node, pc.packed):
            continue
        reads_copy = pc.packed in slots((node,))  # (most of a large nest is the reconstruction, which does not)
        kept.append(_replace_loads(node, lambda l: replace(l, slot=pc.source) if l.slot == pc.packed else None)
                    if reads_copy else node)
    if used < pc.shape[pc.along]:
        names = [f"pk{t}" for t in range(len(pc.shape))]
        kept = list(around((Store(pc.source, tuple(names), Const(0.0)),),
                            [(names[t], pc.shape[t], used if t == pc.along else 0) for t in range(len(pc.shape))])) + kept
    return tuple(kept)
