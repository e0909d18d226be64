"""The strand IR: frozen, printable, scalar statements and expressions (its types, spaces
and statement lists: docs/diderot-compiled.md, "From the typed program to C")."""

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
    space: str  # g s o l
    name: str
    ty: str


@dataclass(frozen=True)
class Bin:
    """``op``: + - * / % (C's, on ints: truncating, a zero divisor is an error) and the
    comparisons and && ||."""
    op: str
    a: "Expr"
    b: "Expr"
    ty: str


@dataclass(frozen=True)
class Un:
    op: str  # - !
    a: "Expr"
    ty: str


@dataclass(frozen=True)
class Call:
    """A function of the C prelude (``sqrt``, ``tl_min``, ...)."""
    fn: str
    args: tuple["Expr", ...]
    ty: str


@dataclass(frozen=True)
class Sel:
    """``a if c else b`` (only the chosen operand is evaluated)."""
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
    """Component ``comp`` of item ``index`` of the dynamic sequence ``seq`` (an index
    into ``StrandIR.seqs``); an index outside the sequence is an error."""
    seq: int
    index: "Expr"
    comp: int
    ty: str


@dataclass(frozen=True)
class Len:
    """The number of items of the dynamic sequence ``seq``."""
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
    """``for var in lo..hi`` (inclusive, ints)."""
    var: str
    lo: Expr
    hi: Expr
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class Exit:
    """``stabilize`` ``die`` ``continue`` (end the method), or ``goto`` a label (a
    function's ``return``, inlined)."""
    kind: str
    label: str = ""


@dataclass(frozen=True)
class Label:
    name: str


@dataclass(frozen=True)
class Reduce:
    """``target = op { value | o in strands.which }``: ``body`` computes ``value`` for
    the visited strand (space ``o``: its state now).  ``op``: sum product mean max min
    all exists count, or ``each`` (a foreach: ``body`` only).  ``which`` ``sphere``:
    the strands (stable or active at the start of the step, this one left out) whose
    ``pos`` was within ``radius`` of this strand's ``pos`` then, in strand order, read
    as they were then (space ``n``)."""
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
    """The components of ``order``-th derivatives (world space) of ``image ⊛ kernel``
    at world point ``pos`` into the locals ``targets`` (voxel components × derivative
    components, row-major); ⊥ (NaN) where the kernel's support leaves the image
    (``border`` None) or at a non-finite point.  ``inside`` probes write one bool:
    whether the support fits."""
    image: int  # index into StrandIR.images
    kernel: str
    order: int
    pos: tuple[Expr, ...]
    targets: tuple[str, ...]
    border: str | None = None
    inside: bool = False


@dataclass(frozen=True)
class Print:
    """Append text to the run's output: literal strings and scalars formatted as the
    interpreter does (reals with 17 significant digits, ``true``/``false``)."""
    items: tuple["str | Expr", ...]


@dataclass(frozen=True)
class New:
    """A new strand with these parameter components (``StrandIR.params``' order): it
    joins after the update loop, its state initialised by ``init``, and runs from the
    next step."""
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Lib:
    """``targets = fn(args)``: a library routine of the C prelude with several results:
    ``eig`` (a symmetric n×n matrix, row-major: its n eigenvalues, largest first, then
    the n eigenvectors, each of unit length with a positive dot product with
    (1, φ⁻¹, φ⁻², φ⁻³); all ⊥ for a matrix with a non-finite entry) and ``inv`` (the
    inverse of a 2×2 or 3×3 matrix; all ⊥ where the determinant is 0)."""
    fn: str
    args: tuple[Expr, ...]
    targets: tuple[str, ...]


Stmt = Union[Local, Set, If, For, Exit, Label, Reduce, Probe, Print, New, Lib]


@dataclass(frozen=True)
class ImageSlot:
    """An image the program probes: its global's name, dimension and voxel shape; or,
    for ``image("file.nrrd")`` inside a field's definition (``name`` that text), the
    file's ``path``, which the run loads (the declared field type gives the voxels)."""
    name: str
    dim: int
    shape: tuple[int, ...]
    path: str | None = None


@dataclass(frozen=True)
class SeqSlot:
    """A dynamic sequence (``T{}``) the program reads: its global's name, the scalar type
    and number of its items' components."""
    name: str
    ty: str
    comps: int


@dataclass(frozen=True)
class KernelSlot:
    """A reconstruction kernel: its radius s (taps n+1-s .. n+s) and its pieces'
    polynomial coefficients in |x| (constant term first; piece k on [k, k+1))."""
    name: str
    radius: int
    pieces: tuple[tuple[float, ...], ...]
    #: per derivative order m, per tap t = 0 .. 2s-1 (tap i = 1-s+t): the coefficients
    #: (constant first) of h⁽ᵐ⁾ as a polynomial in the signed x = f - i, rounded as
    #: Diderot's code generator writes them (the interpreter's weights, bit for bit);
    #: empty: the pieces above, evaluated in |x|
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
    #: strands query neighbours: the spatial grid's cell size (globals only; -1: a query's
    #: radius depends on the strand, the cell size comes from the strands' density)
    sphere: Expr | None = None
    init: tuple[Stmt, ...] = ()  # the state initializers (after ``create`` set the parameters; also for new strands)
    params: tuple[str, ...] = ()  # the parameters' state slots
    births: bool = False  # strands run ``new``
    #: Diderot keeps the strands in a permuted order (``new``, or ``die`` in a bulk-synchronous
    #: program): stable ones first as they stabilized, a dying one swaps with the last active one
    indirect: bool = False
    #: the state slots other strands read (sphere queries): a stabilize from the global block
    #: puts back their values of the step's start, as Diderot's runtime does
    shared: tuple[str, ...] = ()
    seqs: tuple[SeqSlot, ...] = ()  # the dynamic sequences read (``At``, ``Len``)
    #: strands count the strands (``numStrands()`` in a method): they update one at a time,
    #: in order, so that each sees the statuses of those before it (the interpreter's)
    serial: bool = False

    def show(self) -> str:
        return show(self)


def nodes(root, kind: type = object, most: int | None = None) -> list:
    """The nodes of ``kind`` in ``root`` (IR, or a tuple of it: statements and expressions)
    as written, each once; at most ``most`` + 1."""
    out: list = []
    seen, todo = set(), [root]
    while todo and (most is None or len(out) <= most):
        x = todo.pop()
        if isinstance(x, (tuple, list)):
            todo.extend(reversed(x))
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            if isinstance(x, kind) and id(x) not in seen:
                seen.add(id(x))
                out.append(x)
            todo.extend(reversed([getattr(x, f.name) for f in dataclasses.fields(x)]))
    return out


# ---------------------------------------------------------------- printer
def _list(xs) -> str:
    return ", ".join(expr_text(x) for x in xs)


_EXPR_TEXT: dict[type, Callable[..., str]] = {
    Const: lambda e: repr(e.value) if e.ty != "bool" else ("true" if e.value else "false"),
    Ref: lambda e: f"{e.space}.{e.name}",
    Bin: lambda e: f"({expr_text(e.a)} {e.op} {expr_text(e.b)})",
    Un: lambda e: f"{e.op}{expr_text(e.a)}",
    Call: lambda e: f"{e.fn}({_list(e.args)})",
    Sel: lambda e: f"({expr_text(e.a)} if {expr_text(e.c)} else {expr_text(e.b)})",
    At: lambda e: f"seq{e.seq}[{expr_text(e.index)}].{e.comp}",
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
    blocks = (f"create ({', '.join(p.iters)})", p.create), ("init", p.init), ("update", p.update), \
        ("stabilize", p.stabilize), ("global", p.global_block)
    lines += [f"{name}:\n{block_text(body)}" for name, body in blocks if body is not None]
    return "\n".join(lines) + "\n"
