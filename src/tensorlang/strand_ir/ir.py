"""The strand IR: frozen, printable, scalar statements and expressions (its types, spaces,
statement lists and each node's meaning: docs/diderot-compiled.md, "From the typed program to C")."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Union


@dataclass(frozen=True)
class Slot:
    name: str
    ty: str


# ---------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Const:
    value: object
    ty: str


@dataclass(frozen=True)
class Ref:
    space: str  # g s o l, or n * depth: the neighbour of a sphere query that deep (n, nn, nnn, ...)
    name: str
    ty: str


#: where an operation that may fail at run time is in the program (line, column; 0, 0: unknown)
NOWHERE = (0, 0)


@dataclass(frozen=True)
class Bin:
    op: str
    a: "Expr"
    b: "Expr"
    ty: str
    at: tuple[int, int] = NOWHERE  # an int / or %: its position, for a division by zero


@dataclass(frozen=True)
class Un:
    op: str  # - !
    a: "Expr"
    ty: str


@dataclass(frozen=True)
class Call:
    fn: str
    args: tuple["Expr", ...]
    ty: str
    at: tuple[int, int] = NOWHERE  # tl_ichk, tl_schk: the index's position, for one out of range


@dataclass(frozen=True)
class Sel:
    c: "Expr"
    a: "Expr"
    b: "Expr"
    ty: str


@dataclass(frozen=True)
class Cast:
    a: "Expr"
    ty: str


@dataclass(frozen=True)
class At:
    seq: int
    index: "Expr"
    comp: int
    ty: str
    at: tuple[int, int] = NOWHERE  # the index's position, for one out of range


@dataclass(frozen=True)
class Len:
    seq: int
    ty: str = "int"


Expr = Union[Const, Ref, Bin, Un, Call, Sel, Cast, At, Len]


# ---------------------------------------------------------------- statements
@dataclass(frozen=True)
class Local:
    name: str
    ty: str
    init: Expr | None = None


@dataclass(frozen=True)
class Set:
    space: str  # g s l
    name: str
    value: Expr


@dataclass(frozen=True)
class If:
    cond: Expr
    then: tuple["Stmt", ...]
    other: tuple["Stmt", ...] = ()


@dataclass(frozen=True)
class For:
    var: str
    lo: Expr
    hi: Expr
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class Exit:
    kind: str
    label: str = ""


@dataclass(frozen=True)
class Label:
    name: str


@dataclass(frozen=True)
class Reduce:
    target: str
    op: str
    which: str  # all active stable sphere
    body: tuple["Stmt", ...]
    value: Expr
    ty: str
    radius: Expr | None = None
    center: tuple[Expr, ...] = ()  # sphere(x, r): around x instead of this strand's pos


@dataclass(frozen=True)
class Probe:
    image: int  # index into StrandIR.images
    kernel: str
    order: int
    pos: tuple[Expr, ...]
    targets: tuple[str, ...]
    border: str | None = None
    inside: bool = False


@dataclass(frozen=True)
class Print:
    items: tuple["str | Expr", ...]


@dataclass(frozen=True)
class New:
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Lib:
    fn: str
    args: tuple[Expr, ...]
    targets: tuple[str, ...]


Stmt = Union[Local, Set, If, For, Exit, Label, Reduce, Probe, Print, New, Lib]


@dataclass(frozen=True)
class ImageSlot:
    name: str
    dim: int
    shape: tuple[int, ...]
    path: str | None = None


@dataclass(frozen=True)
class SeqSlot:
    name: str
    ty: str
    comps: int


@dataclass(frozen=True)
class KernelSlot:
    name: str
    radius: int
    pieces: tuple[tuple[float, ...], ...]
    segments: tuple[tuple[tuple[float, ...], ...], ...] = ()


@dataclass(frozen=True)
class StrandIR:
    name: str
    globals: tuple[Slot, ...]
    state: tuple[Slot, ...]
    iters: tuple[str, ...]  # the grid's (or collection's) iterators, outermost first
    create: tuple[Stmt, ...]
    update: tuple[Stmt, ...]
    stabilize: tuple[Stmt, ...] | None
    global_block: tuple[Stmt, ...] | None
    images: tuple[ImageSlot, ...] = ()
    kernels: tuple[KernelSlot, ...] = ()
    prints: bool = False  # strands print: the executor runs them in order, one thread
    strings: tuple[str, ...] = ()  # the string literals: a string value is its number here
    sphere: Expr | None = None
    init: tuple[Stmt, ...] = ()  # the state initializers (after ``create`` set the parameters; also for new strands)
    params: tuple[str, ...] = ()  # the parameters' state slots
    births: bool = False  # strands run ``new``
    indirect: bool = False
    shared: tuple[str, ...] = ()
    seqs: tuple[SeqSlot, ...] = ()  # the dynamic sequences read (``At``, ``Len``)
    serial: bool = False
    bsp: bool = False  # the program runs in super-steps although nothing above says so (Diderot: counts in state initializers)
    start: tuple[Stmt, ...] | None = None  # the start method: once a strand is made, before the first step (no new)
    global_start: tuple[Stmt, ...] | None = None  # the global start block: after creation, before the start methods

    def show(self) -> str:
        return show(self)


def nodes(root, kind: type = object, most: int | None = None) -> list:
    """The nodes of ``kind`` in ``root`` (IR, or a tuple of it: statements and expressions)
    as written, each once; at most ``most`` + 1.  A shared node is walked once (the IR is a DAG)."""
    out: list = []
    seen, todo = set(), [root]
    while todo and (most is None or len(out) <= most):
        x = todo.pop()
        if isinstance(x, (tuple, list)):
            todo.extend(reversed(x))
        elif (names := _field_names(type(x))) is not None and id(x) not in seen:
            seen.add(id(x))
            if isinstance(x, kind):
                out.append(x)
            todo.extend([getattr(x, name) for name in reversed(names)])
    return out


def _field_names(t: type, known: dict = {}) -> tuple[str, ...] | None:  # noqa: B006 - the cache, by type
    """A dataclass type's field names, None for any other type."""
    if t not in known:
        known[t] = tuple(f.name for f in dataclasses.fields(t)) if dataclasses.is_dataclass(t) else None
    return known[t]


# ---------------------------------------------------------------- printer
def _list(xs) -> str:
    return ", ".join(expr_text(x) for x in xs)


def _at_text(at: tuple[int, int]) -> str:
    """``@line:col`` of an operation that may fail (the text is the key of a program's build)."""
    return f"@{at[0]}:{at[1]}" if at != NOWHERE else ""


_EXPR_TEXT: dict[type, Callable[..., str]] = {
    Const: lambda e: repr(e.value) if e.ty != "bool" else ("true" if e.value else "false"),
    Ref: lambda e: f"{e.space}.{e.name}",
    Bin: lambda e: f"({expr_text(e.a)} {e.op} {expr_text(e.b)}){_at_text(e.at)}",
    Un: lambda e: f"{e.op}{expr_text(e.a)}",
    Call: lambda e: f"{e.fn}({_list(e.args)}){_at_text(e.at)}",
    Sel: lambda e: f"({expr_text(e.a)} if {expr_text(e.c)} else {expr_text(e.b)})",
    At: lambda e: f"seq{e.seq}[{expr_text(e.index)}].{e.comp}{_at_text(e.at)}",
    Len: lambda e: f"|seq{e.seq}|",
    Cast: lambda e: f"{e.ty}({expr_text(e.a)})",
}


def expr_text(e: Expr) -> str:
    return _EXPR_TEXT[type(e)](e)


def _reduce_text(s: Reduce, pad: str) -> str:
    where = f"sphere({''.join(f'{expr_text(c)}, ' for c in s.center)}{expr_text(s.radius)}) n" \
        if s.radius is not None else f"{s.which} strands o"
    return (f"{pad}{s.ty} {s.target} = {s.op} over {where}:\n" + block_text(s.body, pad + "  ")
            + (f"\n{pad}  yield {expr_text(s.value)}" if s.op != "each" else ""))


#: a statement's lines (nested blocks indented by two more spaces)
_STMT_TEXT: dict[type, Callable[..., str]] = {
    Local: lambda s, pad: f"{pad}{s.ty} {s.name}" + ("" if s.init is None else f" = {expr_text(s.init)}"),
    Set: lambda s, pad: f"{pad}{s.space}.{s.name} = {expr_text(s.value)}",
    If: lambda s, pad: f"{pad}if {expr_text(s.cond)}:\n" + block_text(s.then, pad + "  ")
    + (f"\n{pad}else:\n" + block_text(s.other, pad + "  ") if s.other else ""),
    For: lambda s, pad: f"{pad}for {s.var} in {expr_text(s.lo)}..{expr_text(s.hi)}:\n" + block_text(s.body, pad + "  "),
    Exit: lambda s, pad: f"{pad}{s.kind}" + (f" {s.label}" if s.label else ""),
    Label: lambda s, pad: f"{pad}{s.name}:",
    Reduce: _reduce_text,
    New: lambda s, pad: f"{pad}new ({_list(s.args)})",
    Lib: lambda s, pad: f"{pad}{', '.join(s.targets)} = {s.fn}({_list(s.args)})",
    Print: lambda s, pad: f"{pad}print " + ", ".join(repr(x) if isinstance(x, str) else expr_text(x) for x in s.items),
    Probe: lambda s, pad: f"{pad}{', '.join(s.targets)} = {'inside' if s.inside else f'probe d{s.order}'} image{s.image}"
    + (f" [{s.border}]" if s.border else "") + f" ⊛ {s.kernel} at ({_list(s.pos)})",
}


def block_text(body, pad: str = "  ") -> str:
    return "\n".join(_STMT_TEXT[type(s)](s, pad) for s in body) or f"{pad}pass"


def show(p: StrandIR) -> str:
    lines = [f"strand program {p.name}"]
    lines += [f"global {s.ty} {s.name}" for s in p.globals]
    lines += [f"image{i} {im.name}: {im.dim}-D, voxels {list(im.shape)}" for i, im in enumerate(p.images)]
    lines += [f"kernel {k.name}: radius {k.radius}" for k in p.kernels]
    lines += [f"seq{i} {q.name}: {q.ty} × {q.comps}" for i, q in enumerate(p.seqs)]
    lines += [f"state {s.ty} {s.name}" for s in p.state]
    blocks = (f"create ({', '.join(p.iters)})", p.create), ("init", p.init), ("start", p.start), ("global start", p.global_start), ("update", p.update), \
        ("stabilize", p.stabilize), ("global", p.global_block)
    lines += [f"{name}:\n{block_text(body)}" for name, body in blocks if body is not None]
    return "\n".join(lines) + "\n"
