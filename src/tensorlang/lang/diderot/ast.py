"""The Diderot syntax tree: frozen dataclasses with spans, one node where versions 1.0 and 2.0 spell a construct
differently (``global {..}``/``update {..}``, ``initially [..]``/``create_array {..}``, ``real{}``/``real[]``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterator, Union, dataclass_transform

from ...errors import Span

NOWHERE = Span(0, 0, 0, 0)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
@dataclass(frozen=True)
class Node:
    """A syntax node: a frozen dataclass of its fields, then its span (keyword-only: ``Num(1, True, span=s)``)."""

    span: Span = field(default=NOWHERE, kw_only=True)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        dataclass(frozen=True)(cls)


# ---------------------------------------------------------------- types (as written)
class TypeSyn(Node):
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
class Num(Node):
    value: int | float
    is_int: bool


class Str(Node):
    value: str


class Bool(Node):
    value: bool


class Var(Node):
    name: str


class KernelRef(Node):
    """``bspln3#2``: a kernel with a stated continuity."""
    name: str
    k: int


class BinOp(Node):
    """``op`` in its Unicode spelling: + - * / % ^ @ ⊛ • × ⊗ : ∘ < <= == != >= > && ||."""
    op: str
    left: "Expr"
    right: "Expr"


class Unary(Node):
    op: str  # "-" or "!"
    operand: "Expr"


class Diff(Node):
    op: str  # "∇" "∇⊗" "∇•" "∇×"
    operand: "Expr"


class Cond(Node):
    """``then if test else other``."""
    then: "Expr"
    test: "Expr"
    other: "Expr"


class Range(Node):
    lo: "Expr"
    hi: "Expr"


class Norm(Node):
    operand: "Expr"


class Apply(Node):
    func: "Expr"
    args: tuple["Expr", ...]


class Index(Node):
    """``e[i, :, j]``; a ``:`` is None."""
    operand: "Expr"
    indices: tuple["Expr | None", ...]

    @staticmethod
    def slices(e: "Expr") -> bool:  # (diderotc divides a slice by a real, any other vector it multiplies by 1/s)
        return isinstance(e, Index) and None in e.indices


class SeqIndex(Node):
    """``e{i}`` (version 1.0's sequence subscript)."""
    operand: "Expr"
    index: "Expr"


class Select(Node):
    """``s.x``: another strand's state variable."""
    operand: "Expr"
    name: str


class TensorLit(Node):
    elems: tuple["Expr", ...]


class SeqLit(Node):
    elems: tuple["Expr", ...]


class Iter(Node):
    name: str
    domain: "Expr"


class Comprehension(Node):
    """``{ body | x in domain }``: the argument of a reduction (sum, mean, ...)."""
    body: "Expr"
    iter: Iter


class Identity(Node):
    n: int


class Zeros(Node):
    shape: tuple[int, ...]


class Nan(Node):
    shape: tuple[int, ...]


class RealCast(Node):
    operand: "Expr"


class Load(Node):
    """``image(..)``, ``load_image(..)`` (what="image"); ``load(..)``, ``load_sequence(..)`` (what="sequence")."""
    what: str
    path: "Expr"


Expr = Union[Num, Str, Bool, Var, KernelRef, BinOp, Unary, Diff, Cond, Range, Norm, Apply, Index, SeqIndex,
             Select, TensorLit, SeqLit, Comprehension, Identity, Zeros, Nan, RealCast, Load]


# ---------------------------------------------------------------- statements
class Block(Node):
    stmts: tuple["Stmt", ...]


class Decl(Node):
    type: TypeSyn
    name: str
    init: Expr | None


class Assign(Node):
    name: str
    op: str  # "=" "+=" "-=" "*=" "/=" "%="
    value: Expr


class If(Node):
    test: Expr
    then: "Stmt"
    other: "Stmt | None"


class Foreach(Node):
    type: TypeSyn
    name: str
    domain: Expr
    body: "Stmt"


class Stabilize(Node):
    """``stabilize;``"""


class Die(Node):
    """``die;``"""


class Continue(Node):
    """``continue;``"""


class Return(Node):
    value: Expr


class Print(Node):
    args: tuple[Expr, ...]


class New(Node):
    strand: str
    args: tuple[Expr, ...]


Stmt = Union[Block, Decl, Assign, If, Foreach, Stabilize, Die, Continue, Return, Print, New]


# ---------------------------------------------------------------- declarations
class InputDecl(Node):
    type: TypeSyn
    name: str
    description: str | None
    default: Expr | None


class GlobalDecl(Node):
    type: TypeSyn
    name: str
    init: Expr | None
    const: bool = False
    #: ``field#k(d)[s] F(x) = expr;``: the name of the position variable of a field
    #: defined by a formula (``init`` is the formula); None for other globals
    param: str | None = None


class Param(Node):
    type: TypeSyn
    name: str


class FunctionDecl(Node):
    result: TypeSyn
    name: str
    params: tuple[Param, ...]
    body: Expr | Block  # the ``= expr;`` form or a block

    @property
    def stmts(self) -> tuple:  # the body as statements (``= e;`` is ``return e;``)
        return self.body.stmts if isinstance(self.body, Block) else (Return(self.body),)


class StateDecl(Node):
    type: TypeSyn
    name: str
    init: Expr | None
    output: bool


class Strand(Node):
    name: str
    params: tuple[Param, ...]
    state: tuple[StateDecl, ...]
    methods: tuple[tuple[str, Block], ...]  # ("update" | "stabilize" | "start" | "initialize", body)

    def method(self, name: str) -> Block | None:
        return next((body for m, body in self.methods if m == name), None)


class Create(Node):
    """``initially [ S(..) | i in a..b, ... ]`` (grid) or ``{ ... }`` (collection)."""
    grid: bool
    strand: str
    args: tuple[Expr, ...]
    iters: tuple[Iter, ...]


class Program(Node):
    version: str
    decls: tuple[InputDecl | GlobalDecl | FunctionDecl, ...]
    strand: Strand
    update: Block | None  # the global update block (``global`` in 1.0, ``update`` in 2.0)
    start: Block | None
    create: Create
    initialize: Block | None = None
    text: str = field(default="", repr=False, compare=False)


def children(node) -> Iterator:
    """The syntax nodes directly under ``node`` (or a tuple of nodes) in field order, tuples flattened."""
    values = node if isinstance(node, (tuple, list)) else [getattr(node, f) for f in getattr(node, "__dataclass_fields__", ())
                                                           if f != "span"]
    for value in values:
        if isinstance(value, (tuple, list)):
            yield from children(value)
        elif hasattr(value, "__dataclass_fields__"):
            yield value


def walk(root) -> Iterator:
    """Every syntax node under ``root`` (or a tuple of nodes), depth first in field order, without recursion."""
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
