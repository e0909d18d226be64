"""Structure inference (003 §5.1): each tensor's support, symmetry and unique set as islpy sets
over 1-based positions (docs/structure.md, "Structure inference" and "Direct sums and vec")."""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field, replace
from math import comb, factorial, prod
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional

import numpy as np

from ..ein import ir
from ..ein.index import Index, as_terms, index_variables
from ..ein.names import substitute
from ..ein.printer import expr_to_text, html_table, html_text
from ..ein.structure import Structure, position_names
from ..semantics.values import FUNCTIONS
from ..errors import error, signature_checked

if TYPE_CHECKING:
    import islpy as isl
else:
    class _Islpy:  # islpy, imported when a structure analysis first runs, not by ``import tensorlang``
        def __getattr__(self, name: str):
            import islpy

            setattr(self, name, getattr(islpy, name))  # kept: a later read costs a module attribute's
            return getattr(self, name)

    isl = _Islpy()


@dataclass(frozen=True)
class Block:
    """One piece of a direct sum along a dimension (003 Fig. 10): 0-based ``start + Σ_t stride_t · l_t``
    holds ``vec`` of a tensor of ``shape`` at local ``l``, symmetric within ``groups``."""

    start: int
    shape: tuple[int, ...]
    groups: tuple[tuple[int, ...], ...] = ()
    #: Where entry ``l`` is the product of one tensor's entries at l_1 .. l_k (:func:`_monomial`):
    #: (the tensor, its dimension the local coordinates select, the text of its other indices).
    monomial: Optional[tuple[str, int, tuple[str, ...]]] = field(default=None, compare=False)

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def strides(self) -> tuple[int, ...]:
        return tuple(prod(self.shape[t + 1:]) for t in range(len(self.shape)))

    def permutations(self) -> list[tuple[int, ...]]:
        """Every permutation of the local dimensions the groups allow (:func:`permutations`)."""
        return permutations(self.groups, len(self.shape))

    def shifted(self, by: int) -> "Block":
        """The block ``by`` positions later, without its ``monomial`` (whose indices are
        the holder's own, which a tensor holding this one may read at others)."""
        return Block(self.start + by, self.shape, self.groups)


#: A dimension's direct-sum structure: its blocks, in order, covering the dimension.
DimBlocks = tuple[Block, ...]


def permutations(groups: tuple[tuple[int, ...], ...], rank: int) -> list[tuple[int, ...]]:
    """Every permutation of ``rank`` dimensions that permutes within each of ``groups``
    only (the identity first): ``perm[t]`` is the dimension whose value goes to t."""
    found: list[tuple[int, ...]] = []
    for choice in itertools.product(*(itertools.permutations(g) for g in groups)):
        perm = list(range(rank))
        for group, image in zip(groups, choice):
            for t, u in zip(group, image):
                perm[t] = u
        found.append(tuple(perm))
    return found or [tuple(range(rank))]


def _over_blocks(blocks: DimBlocks, p: str, tag: str, plain: str,
                 grouped: Callable[[Block, tuple[str, ...]], list[list[str]]]) -> str:
    """isl text: a disjunction over ``blocks``: for a block without groups, 1-based p in it
    and ``plain``; else an ``exists`` over its local coordinates (named by ``tag``) per
    list of conditions ``grouped(block, locals)`` gives."""
    pieces = []
    for n, b in enumerate(blocks):
        if not b.groups:
            pieces.append(f"({b.start + 1} <= {p} <= {b.start + b.size}{plain})")
            continue
        names = tuple(f"{tag}{n}l{t}" for t in range(len(b.shape)))
        bounds = [f"0 <= {v} < {e}" for v, e in zip(names, b.shape)]
        pieces += [f"(exists ({', '.join(names)} : {' and '.join(bounds + conditions)}))"
                   for conditions in grouped(b, names)]
    return "(" + " or ".join(pieces) + ")"


def _at(b: Block, p: str, names: tuple[str, ...], perm: tuple[int, ...] | None = None) -> str:
    """isl text: 1-based position p is block b's entry at local coordinates ``names``
    (with ``perm``: at ``names`` permuted, :meth:`Block.permutations`)."""
    terms = " + ".join(f"{k}*{names[t if perm is None else perm[t]]}" for t, k in enumerate(b.strides))
    return f"{p} = {b.start + 1} + {terms}"


def _block_relation(blocks: DimBlocks, p: str, q: str, tag: str) -> str:
    """isl text: 1-based positions p and q of a dimension with ``blocks`` hold equal
    entries by a block's local permutations (p = q outside blocks with groups)."""
    return _over_blocks(blocks, p, tag, f" and {q} = {p}",
                        lambda b, names: [[_at(b, p, names), _at(b, q, names, perm)] for perm in b.permutations()])


def _block_order(blocks: DimBlocks, p: str, tag: str) -> str:
    """isl text: 1-based position p is its block's representative (locals ascending
    within each group)."""
    def ascending(b: Block, names: tuple[str, ...]) -> list[list[str]]:
        order = [f"{names[g[k]]} <= {names[g[k + 1]]}" for g in b.groups for k in range(len(g) - 1)]
        return [order + [_at(b, p, names)]]
    return _over_blocks(blocks, p, tag, "", ascending)


@dataclass(frozen=True)
class Moments:
    """003 §2's generalized symmetry: each entry a moment of ``base``; ``dims``: per dimension its
    blocks (start, degree) (docs/structure.md, "Generalized symmetry")."""

    base: str
    n: int
    dims: tuple[tuple[tuple[int, int], ...], ...]

    @property
    def degrees(self) -> tuple[int, ...]:
        """The total degrees the entries have."""
        return tuple(sorted(self._by_total()))

    def _by_total(self) -> dict[int, list[tuple[int, ...]]]:
        """The block choices (an index per dimension), by the total degree they hold."""
        by_total: dict[int, list[tuple[int, ...]]] = {}
        for combo in itertools.product(*(range(len(b)) for b in self.dims)):
            by_total.setdefault(sum(self.dims[d][k][1] for d, k in enumerate(combo)), []).append(combo)
        return by_total

    def canonical(self) -> list[tuple[int, ...]]:
        """Per total degree, the blocks (an index per dimension) holding each moment's
        lexicographically least position (the earliest block the others can complete)."""
        reachable = [{0}]
        for blocks in reversed(self.dims):
            reachable.insert(0, {r + deg for r in reachable[0] for _, deg in blocks})
        chosen = []
        for total in self.degrees:
            left, combo = total, []
            for d, blocks in enumerate(self.dims):
                k = min((k for k, (_, deg) in enumerate(blocks) if left - deg in reachable[d + 1]),
                        key=lambda k: blocks[k][0])
                combo.append(k)
                left -= blocks[k][1]
            chosen.append(tuple(combo))
        return chosen

    def count(self) -> int:
        """How many distinct moments there are (every multiset of each degree occurs)."""
        return sum(comb(self.n + total - 1, total) for total in self.degrees)

    def keys(self, shape: tuple[int, ...]) -> np.ndarray:
        """For every position of ``shape`` (row-major), its moment as one row: the degree,
        then the sorted positions of f, padded with n."""
        rank = len(shape)
        top = max(self.degrees)
        per_dim = []
        for d, blocks in enumerate(self.dims):
            local = np.full((shape[d], top + 1), self.n, dtype=np.int64)  # the blocks cover the dimension
            for start, deg in blocks:
                size = self.n ** deg
                coords = np.array(np.unravel_index(np.arange(size), (self.n,) * deg)).T  # [size, deg]
                local[start:start + size, 1:deg + 1] = coords
                local[start:start + size, 0] = deg
            per_dim.append(local)
        grids = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
        flat = [g.reshape(-1) for g in grids]
        degree = sum(per_dim[d][flat[d], 0] for d in range(rank))
        values = np.concatenate([per_dim[d][flat[d], 1:] for d in range(rank)], axis=1)
        values.sort(axis=1)
        return np.concatenate([degree[:, None], values[:, :top]], axis=1)

    def order_text(self, names: tuple[str, ...]) -> str:
        """isl text: 1-based positions ``names`` are the least position of their moment."""
        pieces = []
        for combo in self.canonical():
            parts, sequence = self._coordinates(combo, names, "m")
            body = " and ".join(parts + [f"{a} <= {b}" for a, b in zip(sequence, sequence[1:])])
            pieces.append(f"(exists ({', '.join(sequence)} : {body}))" if sequence else f"({body})")
        return "(" + " or ".join(pieces) + ")"

    def equivalence_text(self, p: tuple[str, ...], q: tuple[str, ...]) -> list[str]:
        """isl texts whose union relates positions p and q of equal moments: for each
        two block choices of one total degree, q's coordinates a permutation of p's."""
        pieces = []
        for combos in self._by_total().values():
            for first, second in itertools.product(combos, repeat=2):
                head, a = self._coordinates(first, p, "a")
                tail, b = self._coordinates(second, q, "b")
                for perm in set(itertools.permutations(range(len(a)))):
                    links = [f"{b[t]} = {a[perm[t]]}" for t in range(len(a))]
                    names = ", ".join(a + b)
                    pieces.append(f"(exists ({names} : {' and '.join(head + tail + links)}))" if names
                                  else f"({' and '.join(head + tail) or 'true'})")
        return pieces

    def _coordinates(self, combo: tuple[int, ...], names: tuple[str, ...], tag: str) -> tuple[list[str], list[str]]:
        """isl conditions: positions ``names`` lie in the blocks ``combo`` (one per
        dimension) at coordinates named by ``tag``; and those names, in order."""
        parts, coords = [], []
        for d, k in enumerate(combo):
            start, deg = self.dims[d][k]
            here = [f"{tag}{d}_{t}" for t in range(deg)]
            terms = " + ".join(f"{self.n ** (deg - 1 - t)}*{c}" for t, c in enumerate(here)) or "0"
            parts.append(f"{names[d]} = {start + 1} + {terms}")
            parts += [f"0 <= {c} < {self.n}" for c in here]
            coords += here
        return parts, coords

    def pieces(self) -> int:
        """How many basic maps :meth:`equivalence_text` writes."""
        return sum(len(c) ** 2 * factorial(t) for t, c in self._by_total().items())


#: The most basic maps of a moment structure's isl redundancy relation (docs/structure.md,
#: "Generalized symmetry").
MAX_MOMENT_PIECES = 400


@dataclass(frozen=True)
class TensorStructure:
    """What is known of a tensor's entries: ``support`` (isl, over 1-based ``p1 .. pk``), ``groups``,
    ``blocks`` (per dimension None or its :class:`Block` s), ``definition`` (for 003 §5.2's inlining)."""

    name: str
    shape: tuple[int, ...]
    support: isl.Set
    groups: tuple[tuple[int, ...], ...] = ()
    blocks: tuple[Optional[DimBlocks], ...] = ()
    definition: Optional[ir.Statement] = field(default=None, compare=False)
    #: 003 §2's generalized symmetry (:class:`Moments`): it subsumes ``groups`` and
    #: ``blocks``, which stay what the loops compress by.
    moments: Optional[Moments] = None

    def dim_blocks(self, d: int) -> Optional[DimBlocks]:
        return self.blocks[d] if d < len(self.blocks) else None

    @property
    def redundant_blocks(self) -> bool:
        """Whether some dimension has a block with a local symmetry."""
        return any(b is not None and any(x.groups for x in b) for b in self.blocks)

    @property
    def unique(self) -> isl.Set:
        """The unique set: the support with each moment's least position (with
        :attr:`moments`), else :attr:`pairwise_unique`."""
        names = _positions(len(self.shape))
        if self.moments is not None:
            return self.support.intersect(isl.Set(f"{{ [{', '.join(names)}] : {self.moments.order_text(names)} }}"))
        return self.pairwise_unique

    @property
    def pairwise_unique(self) -> isl.Set:
        """The support with each group's positions and each block's local positions within
        its groups ascending (what the loops compute, 003 §5.5)."""
        names = _positions(len(self.shape))
        conditions = [f"{names[g[n]]} <= {names[g[n + 1]]}" for g in self.groups for n in range(len(g) - 1)]
        for d, blocks in enumerate(self.blocks):
            if blocks is not None and any(b.groups for b in blocks):
                conditions.append(_block_order(blocks, names[d], f"d{d}"))
        if not conditions:
            return self.support
        return self.support.intersect(isl.Set(f"{{ [{', '.join(names)}] : {' and '.join(conditions)} }}"))

    def equivalence(self) -> isl.Map:
        """The closed redundancy relation (003's T_R): p -> p' where the entries are
        equal, over the box (moments, or block-local then group permutations)."""
        rank = len(self.shape)
        p, q = _positions(rank), tuple(f"q{n + 1}" for n in range(rank))
        box_text = _box_text(p, self.shape)
        if self.moments is not None:
            if self.moments.pieces() > MAX_MOMENT_PIECES:
                raise ValueError(f"{self.name}: the redundancy relation of moments up to degree "
                                 f"{max(self.moments.degrees)} takes {self.moments.pieces()} isl pieces "
                                 f"(more than {MAX_MOMENT_PIECES}); representatives() gives it as an array")
            text = " or ".join(self.moments.equivalence_text(p, q))
            return isl.Map(f"{{ [{', '.join(p)}] -> [{', '.join(q)}] : {box_text} and ({text}) }}").coalesce()
        parts = ([box_text] + [_block_relation(blocks, p[d], q[perm[d]], f"d{d}") if (blocks := self.dim_blocks(d))
                               else f"{q[perm[d]]} = {p[d]}" for d in range(rank)]
                 for perm in set(permutations(self.groups, rank)))
        pieces = (isl.Map(f"{{ [{', '.join(p)}] -> [{', '.join(q)}] : {' and '.join(part)} }}") for part in parts)
        return functools.reduce(lambda a, b: a.union(b), pieces).coalesce()

    def redundancy(self) -> isl.Map:
        """003's redundancy map T_R: every supported position outside the unique set to
        the unique position whose entry it copies."""
        unique = self.unique
        return self.equivalence().intersect_domain(self.support.subtract(unique)).intersect_range(unique)

    @property
    def dense_size(self) -> int:
        return prod(self.shape)

    @property
    def unique_size(self) -> int:
        if self.moments is not None and self.support.is_equal(box(self.shape)):
            return self.moments.count()  # without enumerating the points
        return count(self.unique)

    @property
    def support_size(self) -> int:
        return count(self.support)

    def support_points(self) -> list[tuple[int, ...]]:
        """The support's points (1-based positions), for tests and small tensors."""
        points: list[tuple[int, ...]] = []
        self.support.foreach_point(lambda p: points.append(
            tuple(int(p.get_coordinate_val(isl.dim_type.set, d).to_python()) for d in range(len(self.shape)))))
        return points

    def describe(self) -> str:
        """One line: unique-set size against the dense size, and what makes it smaller."""
        dense, unique = self.dense_size, self.unique_size
        share = f"{100.0 * unique / dense:.3g}%" if dense else "-"
        what = []
        if self.moments is not None:
            degrees = self.moments.degrees
            what.append(f"moments of {self.moments.base} of degree "
                        + (f"{degrees[0]}" if len(degrees) == 1 else f"{degrees[0]}..{degrees[-1]}")
                        + " (equal for equal multisets of positions, 003's generalized symmetry)")
        if self.groups:
            what.append("symmetric in " + "; ".join(" ".join(f"i{d + 1}" for d in g) for g in self.groups))
        for d, blocks in enumerate(self.blocks):
            if blocks is not None and any(b.groups for b in blocks):
                what.append(f"i{d + 1} a direct sum (" + " ⊕ ".join(
                    "vec " + "x".join(map(str, b.shape)) + (" sym" if b.groups else "") if len(b.shape) > 1
                    else str(b.size) for b in blocks) + ")")
        if self.support_size < dense:
            what.append(f"support {self.support_size}")
        kind = ", ".join(what) if what else "dense"
        return f"unique {unique} of {dense} ({share}): {kind}"


#: The most work :func:`count` hands to isl (points of the bounding box but one axis;
#: boxes are counted without isl): docs/security.md §2.
COUNT_WORK = 10**5


def count(s: isl.Set) -> int:
    """The number of integer points of a bounded set; error[too-large] past COUNT_WORK steps."""
    if s.is_empty():
        return 0
    extents = []
    for d in range(s.dim(isl.dim_type.set)):
        low, high = s.dim_min_val(d), s.dim_max_val(d)
        if not (low.is_int() and high.is_int()):  # unbounded: isl says so itself
            return int(s.count_val().to_python())
        extents.append(int(high.to_python()) - int(low.to_python()) + 1)
    if len(extents) >= 2:
        if s.is_equal(isl.Set.box_from_points(_point(s, low_or_high=False), _point(s, low_or_high=True))):
            return prod(extents)
        work = prod(extents) // max(extents)
        if work > COUNT_WORK:
            raise error("too-large", f"the structure analysis would count the points of a set spanning "
                                     f"{' x '.join(map(str, extents))} positions (more than {COUNT_WORK} steps); "
                                     f"a structured tensor this large is refused (docs/security.md)")
    return int(s.count_val().to_python())


def _point(s: isl.Set, low_or_high: bool) -> isl.Point:
    """The corner of ``s``'s bounding box with every coordinate least (or greatest)."""
    point = isl.Point.zero(s.get_space())
    for d in range(s.dim(isl.dim_type.set)):
        value = s.dim_max_val(d) if low_or_high else s.dim_min_val(d)
        point = point.set_coordinate_val(isl.dim_type.set, d, value)
    return point


def _positions(rank: int) -> tuple[str, ...]:
    return tuple(f"p{n + 1}" for n in range(rank))


def _box_text(names: Iterable[str], shape: Iterable[int]) -> str:
    return " and ".join(f"1 <= {v} <= {n}" for v, n in zip(names, shape)) or "true"


def _index_text(i: Index, rename: Mapping[str, str]) -> str:
    terms, offset = as_terms(i)
    parts = [f"{c}*{rename[v]}" for v, c in terms]
    return " + ".join(parts + [str(offset)]) if parts else str(offset)


def box(shape: tuple[int, ...]) -> isl.Set:
    names = _positions(len(shape))
    return isl.Set(f"{{ [{', '.join(names)}] : {_box_text(names, shape)} }}")


@functools.lru_cache(maxsize=256)
def declared(name: str, shape: tuple[int, ...], structure: Structure | None) -> TensorStructure:
    """A declaration's structure, dense or its annotation's (one object per declaration:
    :func:`statement_structure` recognizes its inputs by identity)."""
    full = box(shape)
    if structure is None:
        return TensorStructure(name, shape, full)
    if structure.symmetric:
        return TensorStructure(name, shape, full, (tuple(range(len(shape))),))
    names = position_names(len(shape))
    rename = {v: p for v, p in zip(names, _positions(len(shape)))}
    pieces = ["(" + (" and ".join(f"{_index_text(c.left, rename)} {c.op} {_index_text(c.right, rename)}"
                                  for c in conjunction) or "true") + ")" for conjunction in structure.unique]
    if not pieces:
        return TensorStructure(name, shape, full.subtract(full))
    unique = isl.Set(f"{{ [{', '.join(_positions(len(shape)))}] : {' or '.join(pieces)} }}")
    return TensorStructure(name, shape, unique.intersect(full))


# ------------------------------------------------------------------ one statement
#: ``isl.Set(text)`` and ``isl.Map(text)``, each parsed once per text (islpy copies what
#: isl takes, so a cached object is never changed).
_isl_set = functools.lru_cache(maxsize=4096)(lambda text: isl.Set(text))  # isl: imported on first call
_isl_map = functools.lru_cache(maxsize=4096)(lambda text: isl.Map(text))


class _Space:
    """The variables of one statement (its σ and every binder), named v0, v1, ... in isl."""

    def __init__(self, stmt: ir.Statement):
        variables = [v for v, _ in stmt.index] + [v for node in ir.nodes(stmt.body) for v, _ in ir.binders(node)]
        self.names = tuple(dict.fromkeys(variables))  # each once, first seen first
        self.isl = {v: f"v{n}" for n, v in enumerate(self.names)}
        self.tuple = "[" + ", ".join(self.isl[v] for v in self.names) + "]"

    def universe(self) -> isl.Set:
        return _isl_set(f"{{ {self.tuple} }}")

    def where(self, condition: str) -> isl.Set:
        return _isl_set(f"{{ {self.tuple} : {condition} }}")

    def dim(self, v: str) -> int:
        return self.names.index(v)


def _support(e: ir.Expr, space: _Space, tensors: Mapping[str, TensorStructure], annihilating: bool = True) -> isl.Set:
    """Where ``e`` may be non-zero, over the statement's variables (Fig. 9);
    ``annihilating=False``: only where declarations promise zeros (not a literal 0 or a
    δ, whose product with ⊥ is ⊥ in the dense meaning), as compressed loops need."""
    if isinstance(e, ir.Tensor):
        known = tensors.get(e.name)
        if known is None or not e.indices:
            return space.universe()
        positions = _positions(len(e.indices))
        links = " and ".join(f"{p} = {_index_text(i, space.isl)}" for p, i in zip(positions, e.indices))
        access = _isl_map(f"{{ {space.tuple} -> [{', '.join(positions)}] : {links} }}")
        return access.intersect_range(known.support).domain()
    if isinstance(e, ir.Const):
        return space.universe() if e.value != 0 or not annihilating else space.universe().subtract(space.universe())
    if isinstance(e, ir.Delta) and annihilating:
        return space.where(f"{_index_text(e.first, space.isl)} = {_index_text(e.second, space.isl)}")
    if isinstance(e, ir.Neg):
        return _support(e.arg, space, tensors, annihilating)
    if isinstance(e, ir.Apply):
        inner = _support(e.arg, space, tensors, annihilating)
        return inner if FUNCTIONS[e.fn].zero_preserving else space.universe()
    if isinstance(e, ir.BinOp):
        left = _support(e.left, space, tensors, annihilating)
        if e.op == "*":
            return left.intersect(_support(e.right, space, tensors, annihilating))  # product: intersection
        if e.op == "/":
            return left  # controlled division: 0 / b = 0
        return left.union(_support(e.right, space, tensors, annihilating)).coalesce()  # sum: union
    if isinstance(e, ir.Sum):
        body = _support(e.body, space, tensors, annihilating)
        limits = " and ".join(f"1 <= {space.isl[v]} <= {n}" for v, n in e.index)
        body = body.intersect(space.where(limits))
        for v, _ in e.index:  # projection: there is a k ...
            body = body.eliminate(isl.dim_type.set, space.dim(v), 1)
        return body.coalesce()
    return space.universe()  # max, min, prod, ε, stacks: no claim


# ------------------------------------------------------------------ symmetry
def canonical(e: ir.Expr, tensors: Mapping[str, TensorStructure]) -> str:
    """A text of ``e`` equal up to the order of ``*`` and ``+`` operands and of a
    symmetric tensor's indices, read through definitions (rule inlining, :func:`inline`)."""
    return _canonical(inline(e, tensors), tensors)


#: How deep reads are inlined into the symmetry test.
_INLINE_DEPTH = 4


def inline(e: ir.Expr, tensors: Mapping[str, TensorStructure], depth: int = 0) -> ir.Expr:
    """``e`` with every read of a tensor that has a definition replaced by it."""
    if isinstance(e, ir.Tensor):
        known = tensors.get(e.name)
        if known is None or known.definition is None or depth >= _INLINE_DEPTH:
            return e
        head = [v for v, _ in known.definition.index]
        if len(head) != len(e.indices):
            return e
        return inline(substitute(known.definition.body, dict(zip(head, e.indices))), tensors, depth + 1)
    kids = ir.children(e)
    return ir.replace_children(e, tuple(inline(k, tensors, depth) for k in kids)) if kids else e


def _canonical(e: ir.Expr, tensors: Mapping[str, TensorStructure]) -> str:
    if isinstance(e, ir.Tensor):
        indices = list(e.indices)
        known = tensors.get(e.name)
        if known is not None:
            for group in known.groups:
                ordered = sorted((str(indices[d]) for d in group))
                texts = {str(indices[d]): indices[d] for d in group}
                for d, t in zip(group, ordered):
                    indices[d] = texts[t]
        return expr_to_text(ir.Tensor(e.name, tuple(indices)))
    if isinstance(e, ir.BinOp) and e.op in ("*", "+"):
        operands = _flatten(e, e.op)
        return "(" + f" {e.op} ".join(sorted(_canonical(x, tensors) for x in operands)) + ")"
    kids = ir.children(e)
    if not kids:
        return expr_to_text(e)
    inner = ", ".join(_canonical(k, tensors) for k in kids)
    head = expr_to_text(ir.replace_children(e, tuple(ir.Const(0.0) for _ in kids)))
    return f"{head}<{inner}>"


def _flatten(e: ir.Expr, op: str) -> list[ir.Expr]:
    out: list[ir.Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.BinOp) and x.op == op:
            stack.extend((x.right, x.left))
        else:
            out.append(x)
    return out


def symmetric_groups(stmt: ir.Statement, tensors: Mapping[str, TensorStructure],
                     shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The groups of the target's dimensions the statement is symmetric in: connected
    components of "swapping these two indices gives the same expression"."""
    variables = [v for v, _ in stmt.index]
    if len(set(variables)) != len(variables):
        return ()
    if not any(shape[a] == shape[b] for a in range(len(variables)) for b in range(a + 1, len(variables))):
        return ()  # no two dimensions that could be swapped (a vector, say): no canonical text needed
    here = canonical(stmt.body, tensors)
    parent = list(range(len(variables)))

    def find(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    for a in range(len(variables)):
        for b in range(a + 1, len(variables)):
            if shape[a] != shape[b] or find(a) == find(b):
                continue
            swapped = substitute(stmt.body, {variables[a]: variables[b], variables[b]: variables[a]})
            if canonical(swapped, tensors) == here:
                parent[find(b)] = find(a)
    groups: dict[int, list[int]] = {}
    for d in range(len(variables)):
        groups.setdefault(find(d), []).append(d)
    return tuple(tuple(g) for g in groups.values() if len(g) > 1)


def statement_structure(stmt: ir.Statement, shape: tuple[int, ...], tensors: Mapping[str, TensorStructure],
                        annihilating: bool = True) -> TensorStructure:
    """The structure of ``stmt``'s target (``annihilating``: :func:`_support`), kept on the statement
    for the same shape, mode and input objects (:func:`_inputs`)."""
    inputs, key = _inputs(stmt, tensors), (shape, annihilating)
    kept = stmt.__dict__.get("_structure")
    if kept is not None and kept[0] == key and len(kept[1]) == len(inputs) \
            and all(a == b and x is y for (a, x), (b, y) in zip(kept[1], inputs)):
        return kept[2]
    found = _statement_structure(stmt, shape, tensors, annihilating)
    object.__setattr__(stmt, "_structure", (key, inputs, found))  # frozen: set as cached_property does
    return found


def _inputs(stmt: ir.Statement, tensors: Mapping[str, TensorStructure]) -> tuple[tuple[str, Any], ...]:
    """What ``tensors`` holds (None: nothing) of each tensor ``stmt``'s analysis reads,
    through :func:`inline`'s definitions and the blocks' monomials."""
    seen: dict[str, Any] = {}
    frontier = list(stmt.reads)
    for _ in range(_INLINE_DEPTH + 1):
        following: list[str] = []
        for name in (n for n in frontier if n not in seen):
            known = seen[name] = tensors.get(name)
            if known is not None and known.definition is not None:
                following.extend(known.definition.reads)
        frontier = following
    for known in list(seen.values()):
        monomials = [b.monomial[0] for blocks in (known.blocks if known else ()) for b in blocks or () if b.monomial]
        seen.update((name, tensors.get(name)) for name in monomials if name not in seen)
    return tuple(seen.items())


def _statement_structure(stmt: ir.Statement, shape: tuple[int, ...], tensors: Mapping[str, TensorStructure],
                         annihilating: bool) -> TensorStructure:
    space = _Space(stmt)
    support = _support(stmt.body, space, tensors, annihilating)
    limits = " and ".join(f"1 <= {space.isl[v]} <= {n}" for v, n in stmt.index)
    support = support.intersect(space.where(limits or "true"))
    keep = [space.dim(v) for v, _ in stmt.index]
    for d in reversed(range(len(space.names))):  # only the target's indices remain
        if d not in keep:
            support = support.project_out(isl.dim_type.set, d, 1)
    if not stmt.index:  # a scalar: every dimension is projected out
        return TensorStructure(stmt.target, shape, support.coalesce())
    # the target's positions p1 .. pk are σ's variables, in σ's order
    names = _positions(len(shape))
    order = [v for v in space.names if v in dict(stmt.index)]
    links = " and ".join(f"{names[n]} = {space.isl[v]}" for n, (v, _) in enumerate(stmt.index))
    rename = _isl_map(f"{{ [{', '.join(space.isl[v] for v in order)}] -> [{', '.join(names)}] : {links} }}")
    positions = rename.intersect_domain(support).range()
    groups = symmetric_groups(stmt, tensors, shape)
    blocks = statement_blocks(stmt, tensors, shape, groups)
    return TensorStructure(stmt.target, shape, positions.coalesce(), groups, blocks, _definition(stmt),
                           statement_moments(stmt, tensors, shape))


def statement_moments(stmt: ir.Statement, tensors: Mapping[str, TensorStructure],
                      shape: tuple[int, ...]) -> Optional[Moments]:
    """The :class:`Moments` of ``C[p1..pk] = (Σ_r) x[r, p1] · ... · x[r, pk]`` whose x
    holds monomials of one tensor in every block, else None (docs/structure.md)."""
    variables = [v for v, _ in stmt.index]
    if len(variables) < 2 or len(set(variables)) != len(variables):
        return None
    body = stmt.body
    while isinstance(body, ir.Sum):
        if any(v in variables for v, _ in body.index):
            return None
        body = body.body
    factors = _flatten(body, "*")
    if len(factors) != len(variables) or not all(isinstance(f, ir.Tensor) for f in factors):
        return None
    reads: list[ir.Tensor] = factors  # type: ignore[assignment]
    if len({f.name for f in reads}) != 1 or reads[0].name not in tensors:
        return None
    known = tensors[reads[0].name]
    plain = [_read_at_one(f, set(variables)) for f in reads]
    if any(p is None for p in plain) or len(set(plain)) != 1:  # one dimension, the same other indices
        return None
    at = plain[0][0]  # type: ignore[index]
    if sorted(str(f.indices[at]) for f in reads) != sorted(variables):  # each target index once
        return None
    blocks = known.dim_blocks(at)
    if not blocks or any(b.monomial is None for b in blocks) or len({b.monomial for b in blocks}) != 1:
        return None
    monomial = blocks[0].monomial
    assert monomial is not None
    n = tensors[monomial[0]].shape[monomial[1]]
    if any(b.shape != (n,) * len(b.shape) for b in blocks) or sum(b.size for b in blocks) != known.shape[at]:
        return None
    dim = tuple((b.start, len(b.shape)) for b in blocks)
    if any(shape[d] != known.shape[at] for d in range(len(variables))):
        return None
    return Moments(monomial[0], n, (dim,) * len(variables))


def _definition(stmt: ir.Statement) -> ir.Statement | None:
    """``stmt`` where rule inlining may read through it: a product of reads without
    binders (no Σ, no direct sum) over distinct plain indices."""
    variables = [v for v, _ in stmt.index]
    if len(set(variables)) != len(variables) or not variables:
        return None
    if any(ir.binders(node) or isinstance(node, (ir.Concat, ir.Stack, ir.Epsilon)) for node in ir.nodes(stmt.body)):
        return None
    if any(t.name == stmt.target for t in ir.tensors(stmt.body)):  # it reads the value it replaces
        return None
    return stmt


def record(tensors: dict[str, TensorStructure], found: TensorStructure,
           readers: dict[str, set[str]] | None = None) -> None:
    """Record ``found``, dropping every definition (:func:`inline`) that reads the tensor just assigned;
    ``readers`` (the caller's: name -> the tensors whose definitions read it) makes it O(1)."""
    name = found.name
    candidates = list(tensors) if readers is None else [other for other in readers.pop(name, ()) if other in tensors]
    for other in candidates:
        known = tensors[other]
        if known.definition is not None and any(t.name == name for t in ir.tensors(known.definition.body)):
            tensors[other] = replace(known, definition=None)
    tensors[name] = found
    if readers is not None and found.definition is not None:
        for t in ir.tensors(found.definition.body):
            readers.setdefault(t.name, set()).add(name)


# ------------------------------------------------------------------ direct sums (003 Fig. 10)
def statement_blocks(stmt: ir.Statement, tensors: Mapping[str, TensorStructure], shape: tuple[int, ...],
                     groups: tuple[tuple[int, ...], ...] = ()) -> tuple[Optional[DimBlocks], ...]:
    """Each target dimension's blocks or None (docs/structure.md, "Direct sums and vec");
    a symmetric group whose dimensions get different blocks keeps none."""
    variables = [v for v, _ in stmt.index]
    if len(set(variables)) != len(variables):
        return ()
    found: list[Optional[DimBlocks]] = [None] * len(variables)
    body = stmt.body
    if isinstance(body, ir.Concat) and isinstance(body.index, str) and body.index in variables:
        d = variables.index(body.index)
        found[d] = _direct_sum_blocks(body, tensors)
    elif not any(isinstance(node, (ir.Concat, ir.Stack)) for node in ir.nodes(body)):
        for d, v in enumerate(variables):
            found[d] = _inherited_blocks(body, v, shape[d], tensors)
    for g in groups:
        if len({found[d] for d in g}) > 1:
            for d in g:
                found[d] = None
    return () if all(b is None for b in found) else tuple(found)


def _direct_sum_blocks(e: ir.Concat, tensors: Mapping[str, TensorStructure]) -> Optional[DimBlocks]:
    blocks: list[Block] = []
    for (var, extent), start, item in zip(e.parts, e.starts, e.items):
        view = _vec_view(item, var)
        block = Block(start, (extent,))
        if view is not None and view[0] in tensors:
            name, template, dims = view
            known = tensors[name]
            local_shape = tuple(known.shape[t] for t in dims)
            if prod(local_shape) == extent:
                monomial = _monomial(name, template, dims, tensors)
                if len(dims) == 1:
                    inner = known.dim_blocks(dims[0])
                    if inner is not None:
                        blocks.extend(b.shifted(start) for b in inner)
                        continue
                    block = Block(start, local_shape, (), monomial)
                else:
                    members = (tuple(n for n, t in enumerate(dims) if t in g) for g in known.groups)
                    block = Block(start, local_shape, tuple(m for m in members if len(m) > 1), monomial)
        blocks.append(block)
    return tuple(blocks) if any(b.groups for b in blocks) else None


def _monomial(name: str, template: tuple[Optional[Index], ...], dims: tuple[int, ...],
              tensors: Mapping[str, TensorStructure]) -> Optional[tuple[str, int, tuple[str, ...]]]:
    """(f, its dimension, the text of its other indices) where ``vec`` of ``name`` over ``dims`` holds,
    read through definitions, monomials ``f[.., l_1, ..] · ... · f[.., l_k, ..]``; else None."""
    local = [f"_tl_m{t}" for t in range(len(dims))]
    indices = list(template)
    for t, dim in enumerate(dims):
        indices[dim] = local[t]
    if any(i is None for i in indices):
        return None
    factors = _flatten(inline(ir.Tensor(name, tuple(indices)), tensors), "*")  # type: ignore[arg-type]
    if len(factors) != len(dims):
        return None
    found: Optional[tuple[str, int, tuple[str, ...]]] = None
    used = []
    for f in factors:
        if not isinstance(f, ir.Tensor) or f.name not in tensors:
            return None
        plain = _read_at_one(f, set(local))
        if plain is None:
            return None
        at, rest = plain
        coordinate = local.index(str(f.indices[at]))
        if tensors[f.name].shape[at] != tensors[name].shape[dims[coordinate]]:
            return None
        key = (f.name, at, rest)
        if found is not None and key != found:
            return None
        found = key
        used.append(str(f.indices[at]))
    return found if sorted(used) == local else None


def _read_at_one(read: ir.Tensor, names: set[str]) -> Optional[tuple[int, tuple[str, ...]]]:
    """Where ``read`` has exactly one index that is one of ``names`` (plainly) and its
    other indices mention none of them: that dimension and the text of the others."""
    hits = [t for t, i in enumerate(read.indices) if isinstance(i, str) and i in names]
    if len(hits) != 1:
        return None
    rest = [i for t, i in enumerate(read.indices) if t != hits[0]]
    if any(v in names for i in rest for v in index_variables(i)):
        return None
    return hits[0], tuple(str(i) for i in rest)


def _vec_view(e: ir.Expr, var: str) -> Optional[tuple[str, tuple[Optional[Index], ...], tuple[int, ...]]]:
    """``e`` at local position ``var`` as vec of a tensor (its name, its other indices, the dimensions ``var``
    runs over) or None: a read ``T[.., var, ..]``, or a ``Concat`` along ``var`` of such views."""
    if isinstance(e, ir.Tensor):
        at = [t for t, i in enumerate(e.indices) if i == var]
        if len(at) != 1 or any(var in index_variables(i) for t, i in enumerate(e.indices) if t != at[0]):
            return None
        template = tuple(None if t == at[0] else i for t, i in enumerate(e.indices))
        return e.name, template, (at[0],)
    if isinstance(e, ir.Concat) and e.index == var:
        views = [_vec_view(item, v) for (v, _), item in zip(e.parts, e.items)]
        if any(view is None for view in views) or len({n for _, n in e.parts}) != 1:
            return None
        names = {view[0] for view in views if view is not None}
        dims = {view[2] for view in views if view is not None}
        if len(names) != 1 or len(dims) != 1:
            return None
        templates = [view[1] for view in views if view is not None]
        differing = [t for t in range(len(templates[0])) if len({tpl[t] for tpl in templates}) > 1]
        if len(templates) == 1:  # one item: its fixed position must be 1 somewhere; take none
            return None
        if len(differing) != 1 or [tpl[differing[0]] for tpl in templates] != list(range(1, len(templates) + 1)):
            return None
        t0 = differing[0]
        template = tuple(None if t == t0 else i for t, i in enumerate(templates[0]))
        if any(i is not None and var in index_variables(i) for i in template):
            return None
        return names.pop(), template, (t0,) + dims.pop()
    return None


def _inherited_blocks(body: ir.Expr, var: str, extent: int, tensors: Mapping[str, TensorStructure]) -> Optional[DimBlocks]:
    seen: set[DimBlocks] = set()
    for node in ir.nodes(body):
        if isinstance(node, ir.Tensor):
            for t, i in enumerate(node.indices):
                if var not in index_variables(i):
                    continue
                known = tensors.get(node.name)
                blocks = known.dim_blocks(t) if known is not None and i == var else None
                if blocks is None or known is None or known.shape[t] != extent:
                    return None
                seen.add(blocks)
        elif isinstance(node, (ir.Delta, ir.Epsilon)) and any(var in index_variables(i) for i in ir.index_uses(node)):
            return None
        elif isinstance(node, (ir.Sum, ir.Reduce)) and var in dict(node.index):
            return None
    # the blocks' symmetry holds pointwise; being monomials does not (X + W is none)
    return tuple(Block(b.start, b.shape, b.groups) for b in seen.pop()) if len(seen) == 1 else None


#: The most statements :func:`infer` analyses; a longer program is compiled dense
#: (docs/security.md §2).
MAX_INFER_STATEMENTS = 1024


def infer(program: ir.Program, annihilating: bool = True) -> dict[str, TensorStructure]:
    """Every tensor's structure: declarations, then each statement's target in order
    (``annihilating``: :func:`_support`)."""
    if len(program.statements) > MAX_INFER_STATEMENTS:
        raise error("too-large", f"the structure analysis takes programs of at most {MAX_INFER_STATEMENTS} "
                                 f"statements, this one has {len(program.statements)}")
    shapes = program.shapes
    tensors: dict[str, TensorStructure] = {}
    for d in program.decls:
        if all(isinstance(n, int) for n in d.shape):
            tensors[d.name] = declared(d.name, tuple(d.shape), d.structure)
    readers: dict[str, set[str]] = {}
    for stmt in program.statements:
        shape = tuple(shapes[stmt.target])
        record(tensors, statement_structure(stmt, shape, tensors, annihilating), readers)
    return tensors


def structure_lines(program: ir.Program) -> list[str]:
    """``tensorlang analyze``'s structure section: each tensor's unique set against its
    dense size."""
    found = {n: s for n, s in infer(program).items() if s.shape}
    width = max((len(n) for n in found), default=0)
    shapes = {n: "[" + " ".join(map(str, s.shape)) + "]" for n, s in found.items()}
    shape_width = max((len(t) for t in shapes.values()), default=0)
    return [f"  {name:<{width}} : {shapes[name]:<{shape_width}}   {s.describe()}" for name, s in found.items()]


# ------------------------------------------------------------------ the compressed form
def representatives(found: TensorStructure) -> np.ndarray:
    """For every position of ``found``'s box (row-major), the flat index of the least
    position of its orbit (or moment) that it copies."""
    shape = found.shape
    rank = len(shape)
    if not rank:  # a scalar: its one entry (meshgrid of no axes cannot be reshaped)
        return np.zeros(1, dtype=np.int64)
    if found.moments is not None:  # the first position (row-major) of each moment
        _, first, inverse = np.unique(found.moments.keys(shape), axis=0, return_index=True, return_inverse=True)
        return np.asarray(first[inverse.reshape(-1)], dtype=np.int64)
    per_dim = []
    for d in range(rank):
        rep = np.arange(shape[d])
        blocks = found.dim_blocks(d)
        for b in blocks or ():
            if not b.groups:
                continue
            local = np.array(np.unravel_index(np.arange(b.size), b.shape))  # [k, size]
            for g in b.groups:
                local[list(g)] = np.sort(local[list(g)], axis=0)
            rep[b.start:b.start + b.size] = b.start + np.ravel_multi_index(tuple(local), b.shape)
        per_dim.append(rep)
    positions = np.array(np.meshgrid(*per_dim, indexing="ij")).reshape(rank, -1)
    for g in found.groups:
        positions[list(g)] = np.sort(positions[list(g)], axis=0)
    flat: np.ndarray = np.asarray(np.ravel_multi_index(tuple(positions), shape))
    return flat


def support_mask(found: TensorStructure) -> np.ndarray:
    """Where ``found``'s support is, as a boolean array of its shape."""
    full = box(found.shape)
    if found.support.is_equal(full):
        return np.ones(found.shape, dtype=bool)
    # the constraints over the whole box (~1 ns an entry and constraint), unless the
    # support is a sparse few points, a diagonal say (~10 µs a point)
    mask = _mask_by_constraints(found.support, found.shape) if found.support_size * 1000 >= found.dense_size else None
    if mask is not None:
        return mask
    mask = np.zeros(found.shape, dtype=bool)
    for p in found.support_points():
        mask[tuple(c - 1 for c in p)] = True
    return mask


def _mask_by_constraints(support: isl.Set, shape: tuple[int, ...]) -> np.ndarray | None:
    """``support`` as a boolean array of ``shape`` by its constraints over the whole box;
    None where a basic set has existentials or the set parameters."""
    if support.dim(isl.dim_type.param):
        return None
    grids = np.ogrid[tuple(slice(1, n + 1) for n in shape)]  # 1-based, as the isl sets
    mask = np.zeros(shape, dtype=bool)
    for part in support.get_basic_sets():
        if part.dim(isl.dim_type.div):
            return None
        inside = np.ones(shape, dtype=bool)
        for c in part.get_constraints():
            value = np.full((1,) * len(shape), int(c.get_constant_val().to_python()), dtype=np.int64)
            for d, grid in enumerate(grids):
                coefficient = int(c.get_coefficient_val(isl.dim_type.set, d).to_python())
                if coefficient:
                    value = value + coefficient * grid
            inside &= (value == 0) if c.is_equality() else (value >= 0)
        mask |= inside
    return mask


@dataclass(frozen=True)
class Compressed:
    """A result in compressed form (003 §5.5): ``values``, ``positions``, ``source``,
    ``structure`` and ``dense()`` as docs/structure.md, "``compressed=True``", says."""

    name: str
    shape: tuple[int, ...]
    values: np.ndarray
    positions: np.ndarray
    source: np.ndarray
    structure: TensorStructure

    @signature_checked
    def dense(self) -> np.ndarray:
        """The dense array: every position its entry, zeros outside the support."""
        taken = self.values[np.maximum(self.source, 0)] if self.values.size else np.zeros(self.shape)
        return np.where(self.source >= 0, taken, np.zeros((), dtype=self.values.dtype)).reshape(self.shape)

    @property
    def redundancy(self) -> str:
        """The redundancy map (position -> the unique position it copies) as isl text, else a sentence
        saying it is too large for isl (``source`` holds the same map as an array)."""
        try:
            return str(self.structure.redundancy())
        except ValueError as exc:
            return f"{exc} (here: source)"

    def __repr__(self) -> str:
        return f"<Compressed {self.name} {list(self.shape)}: {self.structure.describe()}>"

    def _repr_html_(self) -> str:  # a notebook's view (escaped): the counts, then the unique entries
        head = html_table(("result", "shape", "unique", "dense", "structure"), [(self.name, list(self.shape), len(
            self.values), int(np.prod(self.shape)), self.structure.describe())])
        return head + html_text(np.array2string(self.values, threshold=40), "values")


def compress(value: np.ndarray, found: TensorStructure) -> Compressed:
    """``value`` (a dense result with structure ``found``) in compressed form."""
    value = np.asarray(value)
    if tuple(value.shape) != tuple(found.shape):
        raise ValueError(f"{found.name}: shape {value.shape} is not the structure's {found.shape}")
    reps = representatives(found)
    flat = np.arange(reps.size)
    inside = support_mask(found).reshape(-1)
    unique = (reps == flat) & inside
    index = np.full(reps.size, -1, dtype=np.int64)
    index[unique] = np.arange(int(unique.sum()))
    source = np.where(inside, index[reps], -1).reshape(found.shape)
    positions = np.argwhere(unique.reshape(found.shape)) if found.shape else np.zeros((1, 0), dtype=np.int64)
    return Compressed(found.name, found.shape, value.reshape(-1)[unique].copy(), positions, source, found)

