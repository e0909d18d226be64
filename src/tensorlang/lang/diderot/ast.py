"""The Diderot front end's syntax tree: frozen dataclasses, every node with its span.

One tree for both versions of the language (1.0 and 2.0): where they spell a construct
differently (``global {..}`` and ``update {..}``; ``initially [..]`` and
``create_array {..}``; ``real{}`` and ``real[]``) the parser builds the same node.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterator, Union

from ...errors import Span

NOWHERE = Span(0, 0, 0, 0)


# ---------------------------------------------------------------- types (as written)
@dataclass(frozen=True)
class TypeSyn:
    """A type as written: ``kind`` is one of int bool real string tensor image field
    kernel strand; ``shape`` the tensor (or voxel) shape; ``dim`` an image's or field's
    dimension; ``k`` a field's or kernel's continuity (None when a 2.0 field omits it);
    ``seq``: sequence dimensions outermost first, None for a dynamic one (``T{}``)."""

    kind: str
    shape: tuple[int, ...] = ()
    dim: int | None = None
    k: int | None = None
    seq: tuple[int | None, ...] = ()
    name: str | None = None  # a strand's name (foreach over strands)
    span: Span = NOWHERE

    def text(self) -> str:
        """As Diderot spells it (vec3, tensor[3,3], image(2)[], field#1(2)[], real{})."""
        base = str(self.name) if self.kind == "strand" else spell(self.kind, self.shape, self.dim, self.k)
        return base + "".join("{}" if n is None else "{" + str(n) + "}" for n in self.seq)


def spell(kind: str, shape: tuple[int, ...], dim: int | None, k: int | None) -> str:
    """A type that is no sequence nor strand, as Diderot spells it (kind real or tensor: real, vec3, tensor[3,3])."""
    if kind in ("real", "tensor"):
        if not shape:
            return "real"
        return f"vec{shape[0]}" if len(shape) == 1 and 2 <= shape[0] <= 4 else "tensor[" + ",".join(map(str, shape)) + "]"
    if kind in ("image", "field"):
        return f"{kind}{'' if kind == 'image' else f'#{k}'}({dim})[{','.join(map(str, shape))}]"
    return f"kernel#{k}" if kind == "kernel" else kind


# ---------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Num:
    value: int | float
    is_int: bool
    span: Span = NOWHERE


@dataclass(frozen=True)
class Str:
    value: str
    span: Span = NOWHERE


@dataclass(frozen=True)
class Bool:
    value: bool
    span: Span = NOWHERE


@dataclass(frozen=True)
class Var:
    name: str
    span: Span = NOWHERE


@dataclass(frozen=True)
class KernelRef:
    """``bspln3#2``: a kernel with a stated continuity."""
    name: str
    k: int
    span: Span = NOWHERE


@dataclass(frozen=True)
class BinOp:
    """``op`` in its Unicode spelling: + - * / % ^ @ ⊛ • × ⊗ : ∘ < <= == != >= > && ||."""
    op: str
    left: "Expr"
    right: "Expr"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Unary:
    op: str  # "-" or "!"
    operand: "Expr"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Diff:
    op: str  # "∇" "∇⊗" "∇•" "∇×"
    operand: "Expr"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Cond:
    """``then if test else other``."""
    then: "Expr"
    test: "Expr"
    other: "Expr"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Range:
    lo: "Expr"
    hi: "Expr"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Norm:
    operand: "Expr"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Apply:
    func: "Expr"
    args: tuple["Expr", ...]
    span: Span = NOWHERE


@dataclass(frozen=True)
class Index:
    """``e[i, :, j]``; a ``:`` is None."""
    operand: "Expr"
    indices: tuple["Expr | None", ...]
    span: Span = NOWHERE


@dataclass(frozen=True)
class SeqIndex:
    """``e{i}`` (version 1.0's sequence subscript)."""
    operand: "Expr"
    index: "Expr"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Select:
    """``s.x``: another strand's state variable."""
    operand: "Expr"
    name: str
    span: Span = NOWHERE


@dataclass(frozen=True)
class TensorLit:
    elems: tuple["Expr", ...]
    span: Span = NOWHERE


@dataclass(frozen=True)
class SeqLit:
    elems: tuple["Expr", ...]
    span: Span = NOWHERE


@dataclass(frozen=True)
class Iter:
    name: str
    domain: "Expr"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Comprehension:
    """``{ body | x in domain }``: the argument of a reduction (sum, mean, ...)."""
    body: "Expr"
    iter: Iter
    span: Span = NOWHERE


@dataclass(frozen=True)
class Identity:
    n: int
    span: Span = NOWHERE


@dataclass(frozen=True)
class Zeros:
    shape: tuple[int, ...]
    span: Span = NOWHERE


@dataclass(frozen=True)
class Nan:
    shape: tuple[int, ...]
    span: Span = NOWHERE


@dataclass(frozen=True)
class RealCast:
    operand: "Expr"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Load:
    """``image("f.nrrd")`` / ``load_image(..)`` (what="image"), ``load(..)`` /
    ``load_sequence(..)`` (what="sequence")."""
    what: str
    path: "Expr"
    span: Span = NOWHERE


Expr = Union[Num, Str, Bool, Var, KernelRef, BinOp, Unary, Diff, Cond, Range, Norm, Apply, Index, SeqIndex,
             Select, TensorLit, SeqLit, Comprehension, Identity, Zeros, Nan, RealCast, Load]


# ---------------------------------------------------------------- statements
@dataclass(frozen=True)
class Block:
    stmts: tuple["Stmt", ...]
    span: Span = NOWHERE


@dataclass(frozen=True)
class Decl:
    type: TypeSyn
    name: str
    init: Expr | None
    span: Span = NOWHERE


@dataclass(frozen=True)
class Assign:
    name: str
    op: str  # "=" "+=" "-=" "*=" "/=" "%="
    value: Expr
    span: Span = NOWHERE


@dataclass(frozen=True)
class If:
    test: Expr
    then: "Stmt"
    other: "Stmt | None"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Foreach:
    type: TypeSyn
    name: str
    domain: Expr
    body: "Stmt"
    span: Span = NOWHERE


@dataclass(frozen=True)
class Stabilize:
    span: Span = NOWHERE


@dataclass(frozen=True)
class Die:
    span: Span = NOWHERE


@dataclass(frozen=True)
class Continue:
    span: Span = NOWHERE


@dataclass(frozen=True)
class Return:
    value: Expr
    span: Span = NOWHERE


@dataclass(frozen=True)
class Print:
    args: tuple[Expr, ...]
    span: Span = NOWHERE


@dataclass(frozen=True)
class New:
    strand: str
    args: tuple[Expr, ...]
    span: Span = NOWHERE


Stmt = Union[Block, Decl, Assign, If, Foreach, Stabilize, Die, Continue, Return, Print, New]


# ---------------------------------------------------------------- declarations
@dataclass(frozen=True)
class InputDecl:
    type: TypeSyn
    name: str
    description: str | None
    default: Expr | None
    span: Span = NOWHERE


@dataclass(frozen=True)
class GlobalDecl:
    type: TypeSyn
    name: str
    init: Expr | None
    const: bool = False
    span: Span = NOWHERE
    #: ``field#k(d)[s] F(x) = expr;``: the name of the position variable of a field
    #: defined by a formula (``init`` is the formula); None for other globals
    param: str | None = None


@dataclass(frozen=True)
class Param:
    type: TypeSyn
    name: str
    span: Span = NOWHERE


@dataclass(frozen=True)
class FunctionDecl:
    result: TypeSyn
    name: str
    params: tuple[Param, ...]
    body: Expr | Block  # the ``= expr;`` form or a block
    span: Span = NOWHERE


@dataclass(frozen=True)
class StateDecl:
    type: TypeSyn
    name: str
    init: Expr | None
    output: bool
    span: Span = NOWHERE


@dataclass(frozen=True)
class Strand:
    name: str
    params: tuple[Param, ...]
    state: tuple[StateDecl, ...]
    methods: tuple[tuple[str, Block], ...]  # ("update" | "stabilize" | "start" | "initialize", body)
    span: Span = NOWHERE

    def method(self, name: str) -> Block | None:
        return next((body for m, body in self.methods if m == name), None)


@dataclass(frozen=True)
class Create:
    """``initially [ S(..) | i in a..b, ... ]`` (grid) or ``{ ... }`` (collection)."""
    grid: bool
    strand: str
    args: tuple[Expr, ...]
    iters: tuple[Iter, ...]
    span: Span = NOWHERE


@dataclass(frozen=True)
class Program:
    version: str
    decls: tuple[InputDecl | GlobalDecl | FunctionDecl, ...]
    strand: Strand
    update: Block | None  # the global update block (``global`` in 1.0, ``update`` in 2.0)
    start: Block | None
    create: Create
    initialize: Block | None = None
    span: Span = NOWHERE
    text: str = field(default="", repr=False, compare=False)


def children(node) -> Iterator:
    """The syntax nodes directly under ``node`` (a node, or a tuple of nodes), in the order
    of its fields: tuples flattened (a block's statements, a strand's (name, block)
    methods), spans and plain values (names, numbers, None) left out; a plain value has none."""
    values = node if isinstance(node, (tuple, list)) else [getattr(node, f) for f in getattr(node, "__dataclass_fields__", ())
                                                           if f != "span"]
    for value in values:
        if isinstance(value, (tuple, list)):
            yield from children(value)
        elif hasattr(value, "__dataclass_fields__"):
            yield value


def walk(root) -> Iterator:
    """Every syntax node under ``root`` (a node, or a tuple of nodes), each before the nodes
    under it, in the order of the fields (depth first, without recursion): the one
    traversal the analyses of the tree share (bounds, uses of globals, :func:`kinds`)."""
    stack = [root] if hasattr(root, "__dataclass_fields__") else list(children(root))[::-1]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(list(children(node))[::-1])


def kinds(root) -> set[type]:
    """The classes of the nodes under ``root`` (does it hold a New, a Die?)."""
    return {type(n) for n in walk(root)}


def _shown(n) -> str:
    if isinstance(n, tuple):
        return "(" + ", ".join(_shown(x) for x in n) + ")"
    if dataclasses.is_dataclass(n) and not isinstance(n, type):
        if isinstance(n, TypeSyn):
            return n.text()
        fields = [f.name for f in dataclasses.fields(n) if f.name not in ("span", "text")]
        return type(n).__name__ + "(" + ", ".join(_shown(getattr(n, f)) for f in fields) + ")"
    return repr(n)


def show(program: Program) -> str:
    """``--emit ast``: the tree, one declaration a line."""
    lines = [f"#version {program.version}", *(_shown(d) for d in program.decls), _shown(program.strand)]
    lines += [f"{name}: {_shown(value)}" for name in ("start", "update", "create")
              if (value := getattr(program, name)) is not None]
    return "\n".join(lines) + "\n"
