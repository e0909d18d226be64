"""Lowering a typed Diderot program to the strand IR (:mod:`tensorlang.strand_ir.ir`), and
running it through a registered executor (docs/diderot-compiled.md, "From the typed program
to C"): what it does not handle raises :class:`Unsupported` with the reason, and the
program then runs in the interpreter."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import math
from typing import Any, Callable

import numpy as np

from ...errors import TensorLangError, error
from ...strand_ir import EXECUTORS, UNAVAILABLE
from ...strand_ir import ir as S
from . import ast as A
from . import fieldval as FV
from .bounds import MAX_C_PLAN, c_plan_limit, recursive_functions
from .check import Checked, bulk_synchronous, dropped_globals, permuted
from .types import EMPTY_BOUND, Ty, elem, from_syntax


class Unsupported(Exception):
    """The program uses something the strand IR does not express (the reason)."""


def _scalar(ty: Ty) -> str:
    if ty.kind in ("int", "bool", "string"):
        return ty.kind
    if ty.kind == "tensor":
        return "real"
    if ty.kind == "seq" and ty.elem is not None and (ty.n is not None or ty.elem.kind != "void"):
        return _scalar(ty.elem)
    raise Unsupported(f"values of type {ty}")


def _dynamic(ty: Ty) -> bool:
    return ty.kind == "seq" and ty.n is None


def _elem_ty(q: LSeq) -> Ty:
    return Ty("tensor", q.item) if q.ty == "real" else Ty(q.ty)


def _shape(ty: Ty) -> tuple[int, ...]:
    """The components' shape of a value of type ``ty``: a fixed-length sequence ``T{n}``
    is n items of T's components (the sequence's axis first)."""
    if ty.kind == "seq":
        if ty.n is None or ty.elem is None:
            raise Unsupported(f"a value of type {ty} here (a sequence of any length is a state variable, local or global's, "
                              "not an item of another value or another strand's)")
        return (ty.n,) + _shape(ty.elem)
    return tuple(ty.shape) if ty.kind == "tensor" else ()


def _size(ty: Ty) -> int:
    return int(np.prod(_shape(ty)))


@dataclasses.dataclass(frozen=True)
class DSeq:
    """A dynamic sequence global (``T{}``): slot ``k`` of ``StrandIR.seqs``, items of ``shape``."""
    k: int
    shape: tuple[int, ...]
    ty: str


@dataclasses.dataclass(frozen=True)
class LSeq:
    """A sequence of any length a method made: ``n`` items (an IR int) of ``item`` components'
    shape from cell ``base`` (an IR int) of its thread's arena (``tl_ar_*`` in the C prelude)."""
    base: Any
    n: Any
    item: tuple[int, ...]
    ty: str

    @property
    def comps(self):
        raise Unsupported("a sequence of any length here")

    flat = shape = comps


EMPTY = LSeq(S.Const(0, "int"), S.Const(0, "int"), (), "real")  # {}


@dataclasses.dataclass(frozen=True)
class Other:
    """A variable naming another strand, whose state lies in IR space ``space``: ``o``, a
    strand of a global reduction; ``n`` repeated d times, the neighbour of a sphere query d deep."""
    space: str

class V:
    """A lowered value: an object array (shape = the tensor's) of scalar expressions."""

    def __init__(self, comps: np.ndarray, ty: str):
        self.comps, self.ty = comps, ty

    @property
    def shape(self) -> tuple[int, ...]:
        return self.comps.shape

    def flat(self) -> list:
        return list(self.comps.reshape(-1))

    @staticmethod
    def of(shape, ty: str, items) -> "V":
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
        return V(arr.reshape(shape), ty)


def scal(e, ty: str) -> V:
    return V.of((), ty, [e])


def _as(v: V, st: str) -> V:
    """``v`` with each component of another scalar type converted to ``st``."""
    return V.of(v.shape, st, [S.Cast(x, st) if x.ty != st else x for x in v.flat()])


_const = S.Const


def b(op: str, p, q, ty: str, at: tuple[int, int] = S.NOWHERE) -> Any:
    """``S.Bin`` (untyped, as the values it combines); a real + - * of two numbers folded, IEEE's as C's (GCC folds them, then ``0.0 - fabs(x)`` into -0 where tl_z0 saw no zero)."""
    f = {"+": float.__add__, "-": float.__sub__, "*": float.__mul__}.get(op) if isinstance(p, S.Const) and isinstance(q, S.Const) and ty == p.ty == q.ty == "real" else None
    return _const(f(float(p.value), float(q.value)), "real") if f else S.Bin(op, p, q, ty, at)


def _at(node) -> tuple[int, int]:
    """A syntax node's line and column, which a run-time error in its operation names."""
    return node.span.line, node.span.col


class Lowerer:
    def __init__(self, checked: Checked):
        self.c = checked
        self.out: list = []
        self.scopes: list[dict[str, Any]] = [{}]
        self.counter = itertools.count()
        self.where = "strand"
        self.ret: tuple[list[str], str, str, Ty] | None = None  # (targets, label, ty, declared)
        self.depth = 0
        self.global_slots: dict[str, list[str]] = {}
        self.images: list[S.ImageSlot] = []
        self.kernels: list[S.KernelSlot] = []
        self.printing = False
        self.in_sphere = 0  # the sphere queries around the statement (the neighbour at depth d: space "n" * d)
        self.births = False
        self.sphere_radius: Any = None  # the first sphere query's radius: the grid's cell size
        #: probes already computed on this path: (image, kernel, order, border, point) -> locals
        self.probes: dict[tuple, tuple[str, ...]] = {}
        self.strings: list[str] = []  # string literals: a string is its number here
        self.seqs: list[S.SeqSlot] = []  # the dynamic sequences read
        self.want: Ty | None = None  # the declared type of the global field being followed
        self.frozen = False  # following a field local's definition: its tensors copied as they are there
        self.live = False  # a global block's field local: its locals copied there, its globals read where it is probed
        self.formula: tuple[str, int] | None = None  # the variable of the formula being followed, its dimension
        self.dropped, self.defining = dropped_globals(checked)[1], False  # (globals whose assignments diderotc drops: a followed global field reads NAME@0)
        self.serial = False  # a strand method counts the strands
        #: the counts a state initializer (or creation) reads: hidden int parameters, set by creation to the grid's
        #: (diderotc's counts) and by ``new`` to the counts when it runs (the interpreter's)
        self.counts = {f: f"#{f}" for f in _COUNTS if any(isinstance(x, A.Apply) and getattr(x.func, "name", "") == f for x in A.walk(
            (*checked.program.strand.state, *checked.program.create.args)))}
        self.global_decls = {d.name: d for d in checked.program.decls if not isinstance(d, A.FunctionDecl)}
        #: the state's (and parameters') sequences of any length (a slot holds its kept block: tl_ar_keep), in a method their locals
        self.kept = {n: ty for n, ty in [*((p.name, from_syntax(p.type)) for p in checked.program.strand.params), *checked.state.items()] if _dynamic(ty)}
        self.dstate: dict[str, LSeq] = {}

    # ---- helpers
    def fresh(self, base: str) -> str:
        return f"{base.replace(chr(39), '_p')}_{next(self.counter)}"  # x' is a Diderot name, not a C one

    def emit(self, s) -> None:
        """Append a statement; forget the probes whose point it may change (a jump or a
        label forgets them all: a probe before it need not have run)."""
        self.out.append(s)
        if self.probes and not isinstance(s, (S.Local, S.Probe)):
            written = _writes(s)
            if written is None:
                self.probes = {}
            elif written:
                self.probes = {k: v for k, v in self.probes.items() if not (_reads(k[4]) & written)}

    def sub(self, fn: Callable[[], Any]) -> tuple[list, Any]:
        """The statements ``fn`` emits (in a scope of their own, from a copy of the probes) and its value."""
        with self.setting(out=[], probes=dict(self.probes), scopes=[*self.scopes, {}]):
            value = fn()
            return self.out, value

    @contextlib.contextmanager
    def setting(self, **values):
        """These attributes with these values inside the ``with`` block."""
        saved = {k: getattr(self, k) for k in values}
        self.__dict__.update(values)
        try:
            yield
        finally:
            self.__dict__.update(saved)

    def share(self, v: V, refs: bool = False) -> V:
        """``v`` with every non-trivial component in a local (used more than once; a variable's too if ``refs``)."""
        items = []
        for x in v.flat():
            if isinstance(x, S.Const) or isinstance(x, S.Ref) and not refs:
                items.append(x)
            else:
                name = self.fresh("t")
                self.emit(S.Local(name, x.ty, x))
                items.append(S.Ref("l", name, x.ty))
        return V.of(v.shape, v.ty, items)

    def ty(self, node) -> Ty:
        return self.c.types[id(node)]

    def declare(self, name: str, ty: Ty, value) -> None:
        if isinstance(value, Shared):  # a field local or a function's field parameter: probed and tested here
            self.scopes[-1][name] = value
            return
        if _dynamic(ty):  # its first cell and length: two int locals
            q = self.share_seq(self.to_lseq(EMPTY if value is None else value, ty))
            self.scopes[-1][name] = (q, [q.base.name, q.n.name])
            return
        st = _scalar(ty)
        names = [self.fresh(name) for _ in range(_size(ty))]
        vals = value.flat() if value is not None else [None] * len(names)
        for n, x in zip(names, vals):
            self.emit(S.Local(n, st, x if x is not None else _const(False if st == "bool" else 0, st)))
        self.scopes[-1][name] = (V.of(_shape(ty), st, [S.Ref("l", n, st) for n in names]), names)

    def set_state(self, name: str, ty: Ty, v: V | None) -> None:
        """The state variable ``name`` set to ``v`` (None: to 0 or false)."""
        cur = self.slots("s", name, ty).flat()
        for r, x in zip(cur, v.flat() if v is not None else [_const(False if r.ty == "bool" else 0, r.ty) for r in cur]):
            self.emit(S.Set("s", r.name, x))

    def lookup(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise Unsupported(f"the variable {name} (not a local here)")

    def slots(self, space: str, name: str, ty: Ty) -> V:
        st, shape = _scalar(ty), _shape(ty)
        names = [f"{name}.{k}" for k in range(int(np.prod(shape)))] if shape else [name]
        if space == "g":
            self.global_slots[name] = names
        return V.of(shape, st, [S.Ref(space, n, st) for n in names])

    def dseq(self, name: str) -> DSeq:
        """The dynamic sequence global ``name``."""
        ty = self.c.globals[name]
        assert ty.elem is not None
        if ty.elem.kind == "void":
            raise Unsupported(f"the sequence {name} of unknown item type")
        st, shape = _scalar(ty.elem), _shape(ty.elem)
        if all(q.name != name for q in self.seqs):
            self.seqs.append(S.SeqSlot(name, st, int(np.prod(shape))))
        return DSeq([q.name for q in self.seqs].index(name), shape, st)

    def to_lseq(self, v, ty: Ty, at: tuple[int, int] = S.NOWHERE) -> LSeq:
        """``v`` (a DSeq, LSeq, range, or V: a fixed sequence where ``ty``, the value's type, is one,
        else one item) as a sequence of any length of ``ty``'s items (``ty``: the target's type, or
        the item's), its items converted to their scalar type: copied into the arena where it is not one."""
        ety = ty.elem if ty.kind == "seq" else ty
        assert ety is not None
        st, item = _scalar(ety), _shape(ety)
        if isinstance(v, LSeq) and (v.ty == st or v.n == _const(0, "int")):
            return LSeq(v.base, v.n, item, st)
        c = max(1, int(np.prod(item)))
        if isinstance(v, V):
            rows = [v.flat()] if ty.kind != "seq" or ty.n is None and v.shape == item else \
                [V(np.asarray(v.comps[k], dtype=object), v.ty).flat() for k in range(v.shape[0])]
            base = self.local(S.Call("tl_ar_new", (_const(len(rows), "int"), _const(c, "int")), "int", at))
            for k, row in enumerate(rows):
                for j, x in enumerate(row):
                    self.put(base, _const(k * c + j, "int"), x, st)
            return LSeq(base, _const(len(rows), "int"), item, st)
        return self.fill(v, ety, at)

    def fill(self, seq, ety: Ty, at: tuple[int, int], var: str = " it", body=None) -> LSeq:
        """A new sequence of ``ety`` items, item j ``body`` with ``var`` bound to item j of ``seq`` (no body:
        that item, converted), its cells taken first, then filled in order (a comprehension, a copy)."""
        seq, st, c = self.share_seq(seq), _scalar(ety), _const(max(1, _size(ety)), "int")
        n = self.local(S.Call("tl_imax", (self.seq_len(seq), _const(0, "int")), "int"))
        base, ref = self.local(S.Call("tl_ar_new", (n, c), "int", at)), S.Ref("l", self.fresh("cj"), "int")

        def put_all():
            for k, x in enumerate((self.expr(body) if body is not None else self.lookup(var)[0]).flat()):
                self.put(base, b("+", b("*", ref, c, "int"), _const(k, "int"), "int"), x, st)
        stmts, _ = self.bound(var, lambda: (self.seq_item(seq, ref), []), put_all)
        last = S.Sel(b(">=", base, _const(0, "int"), "bool"), b("-", n, _const(1, "int"), "int"), _const(-1, "int"), "int")
        self.emit(S.For(ref.name, _const(0, "int"), last, tuple(stmts)))  # (none where the cells were refused)
        return LSeq(base, n, _shape(ety), st)

    def as_seq(self, e, ty: Ty) -> LSeq:
        """The sequence expression ``e`` as a sequence of any length of ``ty``'s items."""
        return self.to_lseq(self.to_lseq(self.sequence(e), _known(self.ty(e), ty), _at(e)), ty, _at(e))

    def local(self, x):
        """A new int local holding ``x`` now (an arena call, a sequence's cell or length)."""
        self.emit(S.Local(t := self.fresh("q"), "int", x))
        return S.Ref("l", t, "int")

    def put(self, base, k, x, st: str) -> None:
        self.local(S.Call("tl_ar_put" + "i" * (st != "real"), (base, k, S.Cast(x, st) if x.ty != st else x), "int"))

    def seq_item(self, seq, index, at: tuple[int, int] = S.NOWHERE) -> V:
        """Item ``index`` (an IR int) of a sequence (a DSeq, a range ``(lo, hi)`` or a V,
        the sequence's axis first; ``at``: the index's position, which one out of range names)."""
        if isinstance(seq, DSeq):
            return V.of(seq.shape, seq.ty, [S.At(seq.k, index, c, seq.ty, at) for c in range(int(np.prod(seq.shape)))])
        if isinstance(seq, tuple):  # loops over a range stay inside it
            return scal(b("+", seq[0], index, "int"), "int")
        if isinstance(seq, LSeq):
            c = max(1, int(np.prod(seq.item)))
            return V.of(seq.item, seq.ty, [S.Call("tl_ar_at" + "i" * (seq.ty != "real"), (seq.base, seq.n, index, _const(c, "int"),
                                                  _const(k, "int")), seq.ty, at) for k in range(c if seq.item else 1)])
        n = seq.shape[0]
        if isinstance(index, S.Const):
            if not 0 <= int(index.value) < n:  # type: ignore[call-overload]
                raise Unsupported(f"the constant index {index.value} outside 0..{n - 1}")
            return V(np.asarray(seq.comps[int(index.value)], dtype=object), seq.ty)  # type: ignore[call-overload]
        return V(self.pick(seq.comps, index, "tl_schk", seq.ty, at), seq.ty)

    def pick(self, arr: np.ndarray, index, check: str, ty: str, at: tuple[int, int]) -> np.ndarray:
        """``arr[index]`` on its first axis for an IR int ``index`` that ``check`` bounds
        (``tl_schk``, ``tl_ichk``: outside the axis is an error at ``at``), as a chain of selects."""
        n, name = arr.shape[0], self.fresh("ix")
        self.emit(S.Local(name, "int", S.Call(check, (index, _const(n, "int")), "int", at)))
        ref, out = S.Ref("l", name, "int"), np.empty(arr.shape[1:], dtype=object)
        for idx in np.ndindex(*arr.shape[1:]):
            sel = arr[(n - 1,) + idx]
            for k in range(n - 2, -1, -1):
                sel = S.Sel(b("==", ref, _const(k, "int"), "bool"), arr[(k,) + idx], sel, ty)
            out[idx] = sel
        return out

    def sequence(self, e):
        """A sequence-valued expression: a DSeq (a dynamic global), an LSeq, a range (lo, hi) or a V."""
        ty = self.ty(e)
        if isinstance(e, A.Range):
            return tuple(self.share(self.expr(x)).flat()[0] for x in (e.lo, e.hi))
        if ty.kind == "seq" and ty.n is None and isinstance(e, A.Var) and e.name in self.c.globals \
                and self.c.scopes.get(id(e), "global") == "global":
            if self.defining and e.name in self.dropped:  # (its first value: no NAME@0 storage for these, rev56)
                raise Unsupported(f"the first value of the sequence {e.name} in a global field's definition")
            return self.dseq(e.name)
        return self.expr(e)

    def seq_len(self, seq):
        if isinstance(seq, tuple):  # a range lo..hi
            return b("+", b("-", seq[1], seq[0], "int"), _const(1, "int"), "int")
        return S.Len(seq.k) if isinstance(seq, DSeq) else seq.n if isinstance(seq, LSeq) else _const(seq.shape[0], "int")

    def seq_last(self, seq):
        return b("-", self.seq_len(seq), _const(1, "int"), "int")

    # ---- expressions
    def expr(self, e) -> V:
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is None:
            raise Unsupported(f"the expression {type(e).__name__}")
        return method(e)

    def e_Num(self, e):
        return scal(_const(int(e.value), "int") if e.is_int else _const(float(e.value), "real"),
                    "int" if e.is_int else "real")

    def e_Str(self, e):
        if e.value not in self.strings:
            self.strings.append(e.value)
        return scal(_const(self.strings.index(e.value), "string"), "string")

    def e_Bool(self, e):
        return scal(_const(bool(e.value), "bool"), "bool")

    def e_Var(self, e):
        scope = self.c.scopes.get(id(e), "global")
        if scope == "local":
            v = self.lookup(e.name)
            if isinstance(v, tuple):
                return v[0] if not self.live else self.share(v[0], True) if isinstance(v[0], V) else self.share_seq(v[0])
            raise Unsupported(f"{e.name} as a value")
        ty = self.ty(e)
        if scope == "state":
            if self.where == "global":
                raise Unsupported("strand state in the global block")
            return self.dstate[e.name] if e.name in self.kept else self.slots("s", e.name, ty)
        if scope == "global" and e.name in self.c.globals:
            if ty.kind in ("field", "image", "kernel"):
                raise Unsupported(f"the {ty.kind} {e.name} as a value")
            if ty.kind == "seq" and ty.n is None:  # (a local's value, a function's argument: its items copied)
                return self.as_seq(e, ty)
            return self.slots("g", e.name + ("@0" if self.defining and e.name in self.dropped else ""), ty)
        raise Unsupported(f"the name {e.name}")

    def e_RealCast(self, e):
        v = self.expr(e.operand)
        return V.of(v.shape, "real", [S.Cast(x, "real") for x in v.flat()])

    def e_TensorLit(self, e):
        parts = [self.expr(x) for x in e.elems]
        items = [S.Cast(x, "real") if x.ty == "int" else x for p in parts for x in p.flat()]
        return V.of((len(parts),) + parts[0].shape, "real", items)

    def e_Identity(self, e):
        return V.of((e.n, e.n), "real", [_const(1.0 if i == j else 0.0, "real") for i in range(e.n) for j in range(e.n)])

    def e_Zeros(self, e):  # and e_Nan
        n = int(np.prod(e.shape)) if e.shape else 1
        return V.of(tuple(e.shape), "real", [_const(0.0 if isinstance(e, A.Zeros) else float("nan"), "real")] * n)

    e_Nan = e_Zeros

    def e_Unary(self, e):
        v = self.expr(e.operand)
        if self.ty(e).kind == "field":
            raise Unsupported("a field as a value")
        return V.of(v.shape, v.ty, [S.Const(-x.value, "real") if e.op == "-" and isinstance(x, S.Const) and x.ty == "real" else S.Un(e.op, x, v.ty) for x in v.flat()])  # type: ignore[operator]

    def e_Norm(self, e):
        t = self.ty(e.operand)
        if t.kind == "field":
            raise Unsupported("|F| of a field outside a probe")
        v = self.expr(e.operand)
        if t.kind == "int":
            return scal(S.Call("tl_iabs", (v.flat()[0],), "int"), "int")
        if not v.shape:
            return scal(S.Call("fabs", (v.flat()[0],), "real"), "real")
        return scal(S.Call("tl_sqrt", (_sumsq(self.share(v)),), "real"), "real")

    def e_Cond(self, e):
        c = self.expr(e.test).flat()[0]
        ty = self.ty(e)
        st = _scalar(ty)
        then_stmts, tv = self.sub(lambda: self.expr(e.then))
        else_stmts, ev = self.sub(lambda: self.expr(e.other))
        if not then_stmts and not else_stmts:
            return V.of(tv.shape, st, [S.Sel(c, x, y, st) for x, y in zip(tv.flat(), ev.flat())])
        names = [self.fresh("c") for _ in tv.flat()]
        for n in names:
            self.emit(S.Local(n, st))
        self.emit(S.If(c, tuple(then_stmts) + tuple(S.Set("l", n, x) for n, x in zip(names, tv.flat())),
                       tuple(else_stmts) + tuple(S.Set("l", n, x) for n, x in zip(names, ev.flat()))))
        return V.of(tv.shape, st, [S.Ref("l", n, st) for n in names])

    def e_BinOp(self, e):
        op = e.op
        ta, tb, tr = self.ty(e.left), self.ty(e.right), self.ty(e)
        if "field" in (ta.kind, tb.kind, tr.kind) or op in ("⊛", "∘"):
            raise Unsupported("field arithmetic outside a probe")
        if op == "@":
            x, y = (self.to_lseq(self.sequence(side), _known(t, tr) if t.kind == "seq" else tr, _at(e)) for side, t in ((e.left, ta), (e.right, tb)))
            cat = S.Call("tl_ar_cat", (x.base, x.n, y.base, y.n, _const(max(1, _size(tr.elem or tr)), "int")), "int", _at(e))
            return self.to_lseq(LSeq(self.local(cat), self.local(b("+", x.n, y.n, "int")), x.item, x.ty), tr)
        if op in ("&&", "||"):
            a = self.expr(e.left).flat()[0]
            rhs, bv = self.sub(lambda: self.expr(e.right))
            if not rhs:
                return scal(b(op, a, bv.flat()[0], "bool"), "bool")
            ref = S.Ref("l", self.fresh("sc"), "bool")
            self.emit(S.Local(ref.name, "bool", a))
            self.emit(S.If(ref if op == "&&" else S.Un("!", ref, "bool"), tuple(rhs) + (S.Set("l", ref.name, bv.flat()[0]),)))
            return scal(ref, "bool")
        return self.binary(op, self.expr(e.left), self.expr(e.right), tr, _at(e), A.Index.slices(e.left))

    def binary(self, op: str, x: V, y: V, tr: Ty, at: tuple[int, int], sliced: bool = False) -> V:
        """``x op y`` of type ``tr`` (``at``: the operation's position, which a division by zero names)."""
        st = _scalar(tr)
        if op == "/" and len(x.shape) == 1 and not y.shape and not sliced:  # v * (1/s) as diderotc's
            r = self.share(scal(b("/", _const(1.0, "real"), y.flat()[0], "real"), "real")).flat()[0]
            return V.of(x.shape, "real", [b("*", p, r, "real") for p in x.flat()])
        if op in ("==", "!=", "<", "<=", ">", ">="):
            return scal(b(op, x.flat()[0], y.flat()[0], "bool"), "bool")
        if not x.shape and not y.shape:
            p, q = x.flat()[0], y.flat()[0]
            if op == "^":  # an int exponent squares, as Diderot's executables do (tl_ipow)
                return scal(S.Call("tl_ipow" if y.ty == "int" else "tl_pow", (p, q), "real"), "real")
            if op == "%" and st == "real":
                return scal(S.Call("fmod", (p, q), "real"), "real")
            if op in ("+", "-", "*", "/", "%"):
                return scal(b(op, p, q, st, at if st == "int" and op in "/%" else S.NOWHERE), st)
        if op in ("+", "-") and x.shape == y.shape:
            return V.of(x.shape, "real", [b(op, p, q, "real") for p, q in zip(x.flat(), y.flat())])
        if op in ("*", "/") and not y.shape:
            q = self.share(y).flat()[0]
            return V.of(x.shape, "real", [b(op, p, q, "real") for p in x.flat()])
        if op == "*" and not x.shape:
            p = self.share(x).flat()[0]
            return V.of(y.shape, "real", [b("*", p, q, "real") for q in y.flat()])
        x, y = self.share(x), self.share(y)
        if op == "⊗":
            return V.of(x.shape + y.shape, "real", [b("*", p, q, "real") for p in x.flat() for q in y.flat()])
        if op in ("•", ":"):
            k = 1 if op == "•" else 2
            if x.shape[len(x.shape) - k:] != y.shape[:k]:
                raise Unsupported(f"{op} of shapes {x.shape} and {y.shape}")
            xs, ys = x.comps, y.comps
            out_shape = x.shape[:len(x.shape) - k] + y.shape[k:]
            return V.of(out_shape, "real", [_nest(np.frompyfunc(lambda *m, i=i, j=j: b("*", xs[i + m], ys[m + j], "real"), k, 1)(*np.indices(y.shape[:k])))
                                            for i in np.ndindex(*x.shape[:len(x.shape) - k]) for j in np.ndindex(*y.shape[k:])])
        if op == "×":  # Diderot's Σ_j x_j (Σ_k ε_ijk y_k), each ε·y a product (0·∞ is ⊥): the interpreter's _cross_eps
            p, q = x.flat(), y.flat()
            eps = (lambda i, j, k: (i - j) * (j - k) * (k - i) / 2) if len(p) == 3 else (lambda i, j, k: float(k - j))
            c = [_fold(b("*", p[j], _fold(b("*", _const(eps(i, j, k), "real"), q[k], "real") for k in range(len(p))), "real")
                       for j in range(len(p))) for i in range(3 if len(p) == 3 else 1)]
            return scal(c[0], "real") if x.shape == (2,) else V.of((3,), "real", c)
        raise Unsupported(f"the operator {op} on shapes {x.shape} and {y.shape}")

    def e_SeqLit(self, e):
        if not e.elems:
            return EMPTY
        ety = _scalar(self.ty(e))
        parts = [self.expr(x) for x in e.elems]
        items = [S.Cast(x, ety) if x.ty != ety else x for p in parts for x in p.flat()]
        return V.of((len(parts),) + parts[0].shape, ety, items)

    def e_Comprehension(self, e):  # { body | x in dom }: a sequence of any length
        return self.fill(self.sequence(e.iter.domain), self.ty(e).elem or Ty("void"), _at(e), e.iter.name, e.body)

    def e_SeqIndex(self, e):
        return self.seq_item(self.sequence(e.operand), self.expr(e.index).flat()[0], _at(e))

    def e_Index(self, e):
        t = self.ty(e.operand)
        if t.kind == "seq":
            return self.seq_item(self.sequence(e.operand), self.expr(e.indices[0]).flat()[0], _at(e))
        if t.kind != "tensor":
            raise Unsupported(f"indexing a {t}")
        arr, axis = self.expr(e.operand).comps, 0
        for i in e.indices:
            if i is None:
                axis += 1
                continue
            n = arr.shape[axis]
            if isinstance(i, A.Num) and i.is_int:
                k = int(i.value)
                if not 0 <= k < n:
                    raise Unsupported(f"the constant index {k} outside 0..{n - 1}")
                arr = np.take(arr, k, axis=axis)
                continue
            arr = self.pick(np.moveaxis(arr, axis, 0), self.expr(i).flat()[0], "tl_ichk", "real", _at(e))
        return V(np.asarray(arr, dtype=object), "real")

    def e_Apply(self, e):
        f = e.func
        scope = self.c.scopes.get(id(f)) if isinstance(f, A.Var) else "probe"
        if isinstance(f, A.Var) and scope == "func":
            return self.inline(f.name, e)
        if isinstance(f, A.Var) and scope == "basis":
            return self.basis(f.name, e)
        if isinstance(f, A.Var) and scope is None and f.name not in self.c.globals:
            if f.name == "sphere":
                raise Unsupported("sphere queries (strand communication)")
            return self.reduction(f.name, e.args[0])
        return self.probe(f, e)

    def inline(self, name: str, e) -> Any:
        decl = self.c.functions[name]
        if self.depth > 12:  # (a recursive function's calls would be inlined without end; a chain of calls may stop here too)
            raise Unsupported(("recursion in function {}" if name in recursive_functions(self.c) else "function calls nested more than 12 deep (function {})").format(name))
        args = [self.field(a) if self.ty(a).kind == "field" else self.expr(a) for a in e.args]
        rty = from_syntax(decl.result)
        with self.setting(scopes=[{}], ret=self.ret, where=self.where, depth=self.depth + 1):  # (ret, where: restored)
            for p, v in zip(decl.params, args):
                self.declare(p.name, from_syntax(p.type), v)
            st = _scalar(rty)
            if not isinstance(decl.body, A.Block):
                return self.as_seq(decl.body, rty) if _dynamic(rty) else _as(self.expr(decl.body), st)
            names = [self.fresh("ret") for _ in range(2 if _dynamic(rty) else _size(rty))]
            for nm in names:
                self.emit(S.Local(nm, "int" if _dynamic(rty) else st))
            label = self.fresh("end")
            self.ret, self.where = (names, label, st, rty), "function"
            self.stmt(decl.body)
            self.emit(S.Label(label))
            if _dynamic(rty):
                return self.to_lseq(LSeq(S.Ref("l", names[0], "int"), S.Ref("l", names[1], "int"), (), st), rty)
            return V.of(_shape(rty), st, [S.Ref("l", nm, st) for nm in names])

    #: the basis functions of reals that are a function of the C prelude
    _CALLS = {"sqrt": "tl_sqrt", "exp": "exp", "log": "log", "log2": "log2", "log10": "log10", "sin": "sin",
              "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh",
              "cosh": "cosh", "tanh": "tanh", "erf": "erf", "erfc": "erfc", "ceil": "ceil", "floor": "floor",
              "round": "round", "trunc": "trunc", "sgn": "tl_sgn", "abs": "fabs", "atan2": "atan2", "fmod": "fmod",
              "pow": "tl_pow"}

    def basis(self, name: str, e) -> V:
        rty = self.ty(e)
        tys = [self.ty(a) for a in e.args]
        if name == "inside":
            return self.probe_inside(e)
        if name in _COUNTS:
            if self.where == "create":  # (its hidden parameter: lower's Lowerer.counts)
                return scal(S.Ref("s", self.counts[name], "int"), "int")
            return self.count(name)
        if name == "size":  # read from the image at the run's start, like a global
            k, _border = self.image(e.args[0])
            im = self.images[k]
            return self.slots("g", f"size({im.name})", Ty("seq", elem=Ty("int"), n=im.dim))
        if name == "length" and len(e.args) == 1:
            return scal(self.seq_len(self.sequence(e.args[0])), "int")
        if any(t.kind not in ("int", "tensor", "bool") for t in tys):
            raise Unsupported(f"{name} of {', '.join(map(str, tys))}")
        if name == "inv" and not tys[0].shape:  # 1/x of a real
            x = self.expr(e.args[0]).flat()[0]
            return scal(S.Bin("/", _const(1.0, "real"), S.Cast(x, "real") if x.ty != "real" else x, "real"), "real")
        if name in ("evals", "evecs", "inv") and tys[0].shape in ((2, 2), (3, 3)):
            n = tys[0].shape[0]
            refs = self.lib("inv", self.expr(e.args[0]).flat(), n * n) if name == "inv" else \
                self.lib("eig", self.expr(e.args[0]).flat(), n + n * n)
            return V.of((n,), "real", refs[:n]) if name == "evals" else V.of((n, n), "real", refs[n:] if name == "evecs" else refs)
        args = [self.expr(a) for a in e.args]
        flat = [a.flat() for a in args]
        if name == "abs" and rty.kind == "int":
            return scal(S.Call("tl_iabs", (flat[0][0],), "int"), "int")
        if name in self._CALLS and not args[0].shape:  # (the checker: each argument a real or an int)
            return scal(S.Call(self._CALLS[name], tuple(f[0] for f in flat), "real"), "real")
        if name in ("min", "max") and not rty.shape:
            st = _scalar(rty)
            fn = ("tl_i" if st == "int" else "tl_") + name
            return scal(S.Call(fn, (flat[0][0], flat[1][0]), st), st)
        if name in ("lerp", "clerp"):
            a, bb = self.share(args[0]), self.share(args[1])
            if len(args) == 3:
                t = self.share(args[2]).flat()[0]
            else:
                x0, x, x1 = (self.share(v).flat()[0] for v in args[2:])
                t = self.share(scal(S.Call("tl_div", (b("-", x, x0, _num(x, x0)), b("-", x1, x0, _num(x1, x0))),
                                           "real"), "real")).flat()[0]
            mix = [b("+", p, b("*", t, b("-", q, p, "real"), "real"), "real") for p, q in zip(a.flat(), bb.flat())]
            return V.of(a.shape, "real", mix if name == "lerp" else [S.Call("tl_clamp", c, "real") for c in zip(a.flat(), bb.flat(), mix)])
        if name == "clamp":
            lo, hi, x = (self.share(v) for v in args)
            st = _scalar(rty)
            los = lo.flat() * (len(x.flat()) if not lo.shape else 1)
            his = hi.flat() * (len(x.flat()) if not hi.shape else 1)
            fn = "tl_iclamp" if st == "int" else "tl_clamp"
            return V.of(x.shape, st, [S.Call(fn, (p, q, r), st) for p, q, r in zip(los, his, x.flat())])
        if name == "normalize":
            v = self.share(args[0])
            n = self.share(scal(S.Call("tl_sqrt", (_sumsq(v),), "real"), "real")).flat()[0]
            return V.of(v.shape, "real", [S.Call("tl_nrm", (x, n), "real") for x in v.flat()])
        if name == "modulate":
            return V.of(args[0].shape, "real", [b("*", p, q, "real") for p, q in zip(flat[0], flat[1])])
        if name == "trace":
            return scal(_fold(args[0].comps[i, i] for i in range(args[0].shape[0])), "real")
        if name == "transpose":
            return V(np.ascontiguousarray(args[0].comps.T), "real")
        if name == "det" and args[0].shape in ((2, 2), (3, 3)):
            return scal(_det(self.share(args[0]).comps), "real")
        raise Unsupported(f"the basis function {name} on {', '.join(map(str, tys))}")

    def count(self, name: str) -> V:
        """``numStrands()``, ``numActive()`` or ``numStable()`` now: a count of the strands by status."""
        if self.where not in ("global", "strand"):
            raise Unsupported(f"{name}() outside strand methods and the global block")
        self.serial |= self.where == "strand"
        self.emit(S.Reduce(t := self.fresh("n"), "count", _COUNTS[name], (), _const(1, "int"), "int"))
        return scal(S.Ref("l", t, "int"), "int")

    def made(self):
        """How many strands the grid or collection makes: the product of its iterators' extents."""
        total = _const(1, "int")
        for dom in (it.domain for it in self.c.program.create.iters):
            ext = b("+", b("-", self.expr(dom.hi).flat()[0], self.expr(dom.lo).flat()[0], "int"), _const(1, "int"), "int") \
                if isinstance(dom, A.Range) else self.seq_len(self.sequence(dom))
            total = b("*", total, S.Call("tl_imax", (ext, _const(0, "int")), "int"), "int")
        return total

    def lib(self, fn: str, args: list, n: int) -> list:
        """The ``n`` results of the library routine ``fn`` (an ``S.Lib``)."""
        return self.once((fn, None, None, None, tuple(args)), n, fn,
                         lambda names: [*(S.Local(nm, "real") for nm in names), S.Lib(fn, tuple(args), names)])

    def once(self, key: tuple, n: int, base: str, stmts: Callable[[tuple], list]) -> list:
        """The ``n`` real locals that ``stmts(their names)`` set, computed once per ``key`` on
        a path (probes and library routines: key[4] their point or arguments)."""
        if not self.probes.get(key):
            names = tuple(self.fresh(base) for _ in range(n))
            for st in stmts(names):
                self.emit(st)
            self.probes[key] = names
        return [S.Ref("l", nm, "real") for nm in self.probes[key]]

    def around(self, dom, var: str, fn) -> tuple:
        """``fn`` lowered with ``var`` naming the neighbour a ``sphere(r)`` or ``sphere(x, r)``
        query visits: its statements, value, and the query's radius and center (``()``: this
        strand's ``pos``; the grid's cell size: docs/diderot-compiled.md)."""
        if self.where != "strand":
            raise Unsupported("sphere queries outside strand methods")
        pos = self.c.state.get("pos")
        if pos is None or pos.kind != "tensor" or pos.shape not in ((), (1,), (2,), (3,)):
            raise Unsupported("sphere queries without a real or vec1..vec3 pos")
        center = tuple(self.share(self.expr(dom.args[0])).flat()) if len(dom.args) == 2 else ()
        radius = self.share(self.expr(dom.args[-1])).flat()[0]
        if any(space != "g" for space, _ in _reads([radius])):
            self.sphere_radius = _const(-1.0, "real")
        elif self.sphere_radius is None:
            self.sphere_radius = radius
        with self.setting(in_sphere=self.in_sphere + 1):
            return (*self.bound(var, lambda: Other("n" * self.in_sphere), fn, forget=True), radius, center)

    def bound(self, var: str, binding: Callable[[], Any], fn: Callable[[], Any], forget: bool = False) -> tuple[list, Any]:
        """``sub(fn)`` with ``var`` bound to ``binding()`` (lowered inside; ``forget``: the
        probes before are not reused)."""
        def body():
            if forget:
                self.probes = {}
            self.scopes[-1][var] = binding()
            return fn()
        return self.sub(body)

    def reduction(self, name: str, comp) -> V:
        dom = comp.iter.domain
        rty = self.ty(comp.body)
        if rty.kind == "tensor" and rty.shape and name == "sum":
            return self.tensor_sum(comp)
        if rty.kind not in ("int", "tensor", "bool") or (rty.kind == "tensor" and rty.shape):
            raise Unsupported(f"a reduction of {rty}")
        t = self.fresh("red")
        if _is_sphere(dom):
            stmts, v, *near = self.around(dom, comp.iter.name, lambda: self.expr(comp.body))
        elif self.ty(dom).kind == "seq":
            return self.seq_reduction(name, comp, self.sequence(dom))
        elif not (self.where == "global" and isinstance(dom, A.Select) and isinstance(dom.operand, A.Var)
                  and dom.operand.name == self.c.name):
            raise Unsupported(f"the reduction {name} over {type(dom).__name__} (only over strand sets, "
                              "in the global block, and sphere queries)")
        else:
            (stmts, v), near = self.bound(comp.iter.name, lambda: Other("o"), lambda: self.expr(comp.body)), []
        outty = "real" if name == "mean" else v.ty
        self.emit(S.Reduce(t, name, "sphere" if near else dom.name, tuple(stmts), v.flat()[0], outty, *near))
        return scal(S.Ref("l", t, outty), outty)

    def tensor_sum(self, comp) -> V:
        """``sum { t | x in D }`` of tensors t: accumulators the visit of each x adds to
        (zero first, then in the domain's order, as the interpreter's ``sum``)."""
        dom, var = comp.iter.domain, comp.iter.name
        shape = _shape(self.ty(comp.body))
        accs = [self.fresh("acc") for _ in range(int(np.prod(shape)))]
        for a in accs:
            self.emit(S.Local(a, "real", _const(0.0, "real")))

        def add():
            v = self.expr(comp.body)
            for a, x in zip(accs, v.flat()):
                self.emit(S.Set("l", a, b("+", S.Ref("l", a, "real"), x, "real")))
        if _is_sphere(dom):
            stmts, _, radius, center = self.around(dom, var, add)
            self.emit(S.Reduce("", "each", "sphere", tuple(stmts), _const(0, "int"), "int", radius, center))
        elif self.ty(dom).kind == "seq":
            seq, j = self.share_seq(self.sequence(dom)), self.fresh(var)
            stmts, _ = self.bound(var, lambda: (self.seq_item(seq, S.Ref("l", j, "int")), []), add)
            self.emit(S.For(j, _const(0, "int"), self.seq_last(seq), tuple(stmts)))
        elif self.where == "global" and isinstance(dom, A.Select):
            stmts, _ = self.bound(var, lambda: Other("o"), add)
            self.emit(S.Reduce("", "each", dom.name, tuple(stmts), _const(0, "int"), "int"))
        else:
            raise Unsupported(f"the reduction sum over {type(dom).__name__}")
        return V.of(shape, "real", [S.Ref("l", a, "real") for a in accs])

    def share_seq(self, seq):
        """``seq`` as it is now (a local sequence's cell and length copied: its variable may be assigned in a loop over it)."""
        if isinstance(seq, LSeq):
            return LSeq(self.local(seq.base), self.local(seq.n), seq.item, seq.ty)
        return self.share(seq) if isinstance(seq, V) else seq

    def seq_reduction(self, name: str, comp, seq) -> V:
        """``name { body | x in seq }`` over a sequence, as a loop (the interpreter's
        order and empty results: mean ⊥, max -∞, min ∞; of ints, Diderot's 32-bit bounds)."""
        rty = self.ty(comp.body)  # (a scalar: reduction's test)
        seq = self.share_seq(seq)
        st = "bool" if name in ("all", "exists") else ("real" if name == "mean" else _scalar(rty))
        acc, cnt, var = self.fresh("red"), self.fresh("cnt"), self.fresh(comp.iter.name)
        zero = EMPTY_BOUND["real"][name] if st == "real" and name in ("max", "min") else {"product": 1, "all": True, "exists": False}.get(name, 0)  # a real max, min from ∓∞: std::max(acc, v) passes over NaN
        self.emit(S.Local(acc, st, _const(float(zero) if st == "real" else zero, st)))
        self.emit(S.Local(cnt, "int", _const(0, "int")))
        a, c = S.Ref("l", acc, st), S.Ref("l", cnt, "int")

        def body():
            v = self.expr(comp.body).flat()[0]
            if name in ("sum", "mean", "product"):
                new = b("*" if name == "product" else "+", a, v, st)
            elif name in ("all", "exists"):
                new = b("&&" if name == "all" else "||", a, v, "bool")
            else:
                better = b(">" if name == "max" else "<", v, a, "bool")
                new = S.Sel(better if st == "real" else b("||", b("==", c, _const(0, "int"), "bool"), better, "bool"), v, a, st)
            self.emit(S.Set("l", acc, new))
            self.emit(S.Set("l", cnt, b("+", c, _const(1, "int"), "int")))
        stmts, _ = self.bound(comp.iter.name, lambda: (self.seq_item(seq, S.Ref("l", var, "int")), []), body)
        self.emit(S.For(var, _const(0, "int"), self.seq_last(seq), tuple(stmts)))
        if name == "mean":
            return scal(S.Sel(b(">", c, _const(0, "int"), "bool"), b("/", a, S.Cast(c, "real"), "real"),
                              _const(float("nan"), "real"), "real"), "real")
        if name in ("max", "min") and st in ("real", "int"):
            inf = _const(EMPTY_BOUND[st][name], st)
            return scal(S.Sel(b(">", c, _const(0, "int"), "bool"), a, inf, st), st)
        return scal(a, st)

    def e_Select(self, e):
        if isinstance(e.operand, A.Var):
            what = self.lookup(e.operand.name)
            if e.name in self.kept and isinstance(what, Other):  # its kept block (a neighbour's: tl_kp_snap's copy) into the arena
                h, ty = S.Ref(what.space, e.name, "int"), elem(self.kept[e.name])
                return LSeq(self.local(S.Call("tl_ar_kget", (h, _const(max(1, _size(ty)), "int")), "int", _at(e))),
                            self.local(S.Call("tl_kp_len", (h,), "int")), _shape(ty), _scalar(ty))
            if isinstance(what, Other):
                return self.slots(what.space, e.name, self.c.state[e.name])
        raise Unsupported("reading another strand's state")

    # ---- fields (probes): fieldval's rules on symbolic scalars, with lowering's leaves
    def field(self, e) -> Shared:
        """The field expression ``e`` denotes, followed through the globals that define it:
        :mod:`.fieldval`'s objects (the interpreter's), every node's values shared in locals."""
        return Shared(self.field_node(e), self, tuple(self.ty(e).shape))

    def field_node(self, e) -> FV.Field:
        ty = self.ty(e)
        d = int(ty.dim or 1) if ty.kind == "field" else 1
        if isinstance(e, A.Var) and self.formula is not None and e.name == self.formula[0] \
                and self.c.scopes.get(id(e)) == "local":  # the position: the identity field
            return FV.Identity(self.formula[1])
        if isinstance(e, A.Var) and self.c.scopes.get(id(e)) == "local" and isinstance(bound := self.lookup(e.name), Shared):
            return bound  # a function's field parameter
        if isinstance(e, A.Var) and getattr(self.global_decls.get(e.name), "param", None) is not None \
                and self.c.scopes.get(id(e), "global") == "global":
            fdecl = self.global_decls[e.name]
            assert isinstance(fdecl, A.GlobalDecl) and fdecl.init is not None and fdecl.param is not None
            if self.c.field_fns.get(e.name) != "field":  # evaluated at the point (user functions, tests)
                return FV.Pointwise(lambda x: self.formula_at(fdecl, x), d, fdecl.name)
            if self.ty(fdecl.init).kind != "field":  # a constant: its value everywhere
                with self.setting(formula=None, defining=True):
                    cv = self.operand(fdecl.init)
                return FV.Constant(self.syms(_as(cv, "real")), d)
            with self.setting(formula=(fdecl.param, d), defining=True):
                return self.opaque(fdecl.init)
        if isinstance(e, A.Var):
            decl = self.global_decls.get(e.name)
            if self.c.scopes.get(id(e), "global") != "global" or decl is None or getattr(decl, "init", None) is None:
                raise Unsupported(f"the field {e.name} (not a global with a definition)")
            with self.setting(want=self.c.globals[e.name], defining=True):  # the declared type, for image("file")
                return self.field(decl.init)  # type: ignore[union-attr]  # an input has no field type
        if isinstance(e, A.BinOp) and e.op == "∘":  # F ∘ G: F probed where G's value points
            return FV.Compose(self.opaque(e.left), self.opaque(e.right))
        if isinstance(e, A.BinOp) and e.op == "⊛":
            ker, img = (e.left, e.right) if self.ty(e.left).kind == "kernel" else (e.right, e.left)
            k, border = self.image(img)
            return Sampled(self, k, border, self.kernel(ker))
        if isinstance(e, A.BinOp) and e.op in ("+", "-", "*", "/"):
            parts = [(self.field if e.op in ("+", "-") or self.ty(x).shape == ty.shape else self.opaque)(x)
                     if self.ty(x).kind == "field" else self.operand(x) for x in (e.left, e.right)]
            fields = [p for p in parts if not isinstance(p, V)]
            if any(isinstance(p, V) and p.shape for p in parts) and (e.op == "*" and any(f.shape for f in fields) or (
                    e.op == "/" and (isinstance(parts[1], V) or parts[1].shape))):  # only c ⊗ F and c / F, F scalar
                raise Unsupported("a field scaled by a tensor")
            if e.op in ("*", "/") and len(fields) == 2 and (fields[1].shape if e.op == "/" else fields[0].shape and fields[1].shape):
                raise Unsupported("a product of two non-scalar fields")
            left, right = (self.syms(p) if isinstance(p, V) else p for p in parts)
            return FV.Lifted(e.op, left, right, d)
        if isinstance(e, A.Apply) and isinstance(e.func, A.Var) and e.func.name == "modulate" or isinstance(e, A.BinOp) and e.op in FV.BILINEAR:
            ps = [self.opaque(x) if self.ty(x).kind == "field" else self.operand(x) for x in (e.args if isinstance(e, A.Apply) else (e.left, e.right))]
            a, c = (self.syms(p) if isinstance(p, V) else p for p in ps)
            return FV.Lifted(e.op if isinstance(e, A.BinOp) else "modulate", a, c, d)
        if isinstance(e, A.BinOp) and e.op == "^" and _int_literal(e.right) is not None:
            return FV.Lifted1(FV.power(_int_literal(e.right)), self.opaque(e.left))
        if isinstance(e, A.Unary) and e.op == "-":
            return FV.Lifted("neg", self.field(e.operand), None, d)
        if isinstance(e, A.Norm):
            return FV.Lifted("norm", self.opaque(e.operand), None, d)
        name = e.func.name if isinstance(e, A.Apply) and isinstance(e.func, A.Var) and len(e.args) == 1 \
            and self.c.scopes.get(id(e.func)) == "basis" else None
        if name in FV.APPLIED:
            scalar = self.ty(e.args[0]).shape == ()
            f = (self.field if name == "inv" and scalar else self.opaque)(e.args[0])  # 1/F keeps F's shape
            if name in FV.MATRIX and not scalar and (len(f.shape) != 2 or f.shape[0] != f.shape[1] or (
                    name in ("det", "inv") and f.shape[0] not in (2, 3))):
                raise Unsupported(f"{name} of a field of shape {f.shape}")
            return FV.applied(name, f, d, scalar)
        if isinstance(e, A.TensorLit) and ty.kind == "field":
            if any(self.ty(x).kind != "field" for x in e.elems):
                raise Unsupported("a stack of fields and tensors")
            return FV.Stack([self.opaque(x) for x in e.elems])
        if isinstance(e, A.Index) and ty.kind == "field":  # F[i], F[i,:]: constant indices (the checker)
            key = tuple(slice(None) if i is None else int(i.value) for i in e.indices)  # type: ignore[union-attr]
            return FV.Slice(key, self.opaque(e.operand))
        if isinstance(e, A.Diff):
            return FV.Deriv(e.op, self.opaque(e.operand))
        if isinstance(e, A.Apply) and isinstance(e.func, A.Var) and self.c.scopes.get(id(e.func)) == "func":
            return self.field_call(e)
        raise Unsupported(f"the field expression {type(e).__name__}")

    def field_call(self, e) -> FV.Field:
        """A user function's field (``= F * s;``, or a block of field locals and a ``return``): its
        definition followed with the parameters bound to the call's arguments, as they are at the call."""
        decl = self.c.functions[e.func.name]
        body = decl.stmts
        if self.depth > 12 or not isinstance(body[-1], A.Return) or any(not isinstance(s, A.Decl) for s in body[:-1]):
            raise Unsupported(f"the function {e.func.name} returning a field (from statements, or recursively)")
        with self.setting(frozen=True):
            args = [self.field(a) if self.ty(a).kind == "field" else self.operand(a) for a in e.args]
        with self.setting(scopes=[{}], depth=self.depth + 1):
            for p, v in zip(decl.params, args):
                self.declare(p.name, from_syntax(p.type), v)
            for s in body[:-1]:
                self.s_Decl(s)
            return self.field_node(body[-1].value)

    def operand(self, e) -> V:
        """A tensor in a field's definition, shared (a global is read where the field is probed)."""
        if self.live:  # (as diderotc's: the interpreter's _Later)
            return self.expr(e)
        return self.share(self.expr(e), self.frozen)  # (a field local's variables may be assigned before its probe)

    def opaque(self, e) -> Shared:
        """``field(e)`` below an operator that changes the shape (``image("file")``'s
        voxels are then not the declared field's)."""
        with self.setting(want=None):
            return self.field(e)

    def image(self, e) -> tuple[int, str | None]:
        border = None
        if isinstance(e, A.Apply) and isinstance(e.func, A.Var) and e.func.name in ("clamp", "wrap", "mirror") and len(e.args) == 1:
            border, e = e.func.name, e.args[0]
        decl = self.global_decls.get(e.name) if isinstance(e, A.Var) else None
        if isinstance(decl, A.GlobalDecl) and isinstance(decl.init, (A.Apply, A.Var)) \
                and self.c.scopes.get(id(e), "global") == "global":
            # an image global defined by another (image(1)[] b = clamp(img)): its border and image
            k, inner = self.image(decl.init)
            return k, border or inner
        read = self.c.images.get(id(e), ("", None, False)) if isinstance(e, A.Load) else ("", None, False)
        known = self.want or (read[1] if read[2] else None)  # the voxels the run checks (check.Checker.images)
        if isinstance(e, A.Load) and e.what == "image" and isinstance(e.path, A.Str) and known is not None:
            # image("file.nrrd"): the field's declared type (or its header's) says its voxels; the run loads it
            path, ty, name = e.path.value, known, f'image("{e.path.value}")'
        elif isinstance(e, A.Var) and e.name in self.c.globals and self.c.globals[e.name].kind == "image":
            path, ty, name = None, self.c.globals[e.name], e.name
        else:
            raise Unsupported("an image that is not a global variable or image(\"file\")")
        if all(im.name != name for im in self.images):
            if ty.dim is None:
                raise Unsupported(f"the image {name} of unknown dimension")
            self.images.append(S.ImageSlot(name, ty.dim, tuple(ty.shape), path))
        return [im.name for im in self.images].index(name), border

    def kernel(self, e) -> str:
        from ...sampling.kernels import KERNELS, tap_segments
        from .fieldval import DIDEROT_DIGITS

        name = e.name if isinstance(e, (A.Var, A.KernelRef)) else None
        if name not in KERNELS or (isinstance(e, A.Var) and name in self.c.globals):
            raise Unsupported("a kernel that is not one of the named kernels")
        k = KERNELS[name]
        if all(ks.name != name for ks in self.kernels):
            segments = tuple(tuple(tuple(float(c) for c in row) for row in tap_segments(k, m, DIDEROT_DIGITS))
                             for m in range(MAX_ORDER + 1))
            self.kernels.append(S.KernelSlot(name, k.radius, tuple(tuple(float(c) for c in p) for p in k.pieces),
                                             segments))
        return name

    def formula_at(self, decl, x):
        """A formula field's formula inlined with its variable bound to the point x."""
        xs = list(_point(x))
        arg = V.of((len(xs),) if len(xs) > 1 else (), "real", xs)
        with self.setting(scopes=[{decl.param: (arg, [])}], formula=None, where="function"):
            v = self.expr(decl.init)
        return self.syms(_as(v, "real"))

    def syms(self, v: V):
        """``v`` as fieldval's rules take a value: a symbolic scalar, or an array of them."""
        return _each(lambda y: Sym(y, self), v.comps)

    def shared(self, v):
        """A value of fieldval's rules with each non-trivial component in a local."""
        return _each(lambda y: Sym(self.share(scal(y.e, "real")).flat()[0], self) if isinstance(y, Sym) else y, v)

    def probe(self, f, e) -> V:
        if self.ty(f).kind != "field":
            raise Unsupported(f"applying a {self.ty(f)}")
        fe = self.field(f)
        x = self.share(self.expr(e.args[0]))
        try:
            arr = np.asarray(fe.value(self.syms(x), 0), dtype=object)
            return V.of(arr.shape, "real", [_ir(y) for y in arr.flat])
        except TensorLangError as exc:  # what the interpreter does not differentiate either
            raise Unsupported(exc.message) from None

    def probe_inside(self, e) -> V:
        x = self.share(self.expr(e.args[0]))
        acc = self.inside(self.field(e.args[1]), self.syms(x))
        return scal(acc if acc is not None else _const(True, "bool"), "bool")

    def inside(self, f: FV.Field, x):
        """``inside(x, f)``: every image under f has x inside (F ∘ G: G has x, F has G(x));
        None where no image is under f."""
        if isinstance(f, Sampled):
            name = self.fresh("in")
            self.emit(S.Probe(f.k, f.kernel, 0, _point(x), (name,), None, inside=True))
            return S.Ref("l", name, "bool")
        if isinstance(f, FV.Compose):
            parts = [(f.g, x), (f.f, f.g.value(x, 0))]
        else:
            parts = [(g, x) for g in (getattr(f, "f", None), getattr(f, "a", None), getattr(f, "b", None),
                                      *getattr(f, "fields", ())) if isinstance(g, FV.Field)]
        refs = [ref for g, at in parts if (ref := self.inside(g, at)) is not None]
        return _fold(refs, "&&", "bool") if refs else None

    # ---- statements
    def stmt(self, s) -> None:
        method = getattr(self, "s_" + type(s).__name__, None)
        if method is None:
            raise Unsupported(f"the statement {type(s).__name__.lower()}")
        method(s)

    def s_Block(self, s):
        with self.setting(scopes=[*self.scopes, {}]):
            for x in s.stmts:
                self.stmt(x)

    def s_Decl(self, s):
        ty = from_syntax(s.type)
        if ty.kind == "field" and s.init is not None:  # a field local: its definition, probed where it is (a parameter's way)
            with self.setting(frozen=True, live=self.where == "global"):
                return self.declare(s.name, ty, self.field(s.init))
        self.declare(s.name, ty, None if s.init is None else self.expr(s.init))

    def s_Assign(self, s):
        scope = self.c.scopes.get(id(s), "local")
        if scope == "local":
            target = self.lookup(s.name)
            if not isinstance(target, tuple):
                raise Unsupported(f"assigning {s.name}")
            (cur, names), space = target, "l"
            if isinstance(cur, LSeq):
                q = self.share_seq(self.as_seq(s.value, Ty("seq", elem=_elem_ty(cur))))
                self.emit(S.Set("l", names[0], q.base))
                self.emit(S.Set("l", names[1], q.n))
                return
        elif scope == "state" and s.name in self.kept:
            return self.keep(s.name, self.as_seq(s.value, self.kept[s.name]), S.Ref("s", s.name, "int"), _at(s))
        elif scope == "global" and _dynamic(ty := self.c.globals[s.name]):  # the global block's (its kept copy: tl_ar_gkeep)
            d, q = self.dseq(s.name), self.share_seq(self.as_seq(s.value, ty))
            self.local(S.Call("tl_ar_gkeep", (_const(d.k, "int"), q.base, q.n, _const(max(1, int(np.prod(d.shape))), "int")),
                              "int", _at(s)))
            return
        else:
            space = "s" if scope == "state" else "g"
            cur = self.slots(space, s.name, self.c.state[s.name] if scope == "state" else self.c.globals[s.name])
            names = [r.name for r in cur.flat()]
        value = self.expr(s.value)
        if s.op != "=":
            op = s.op[0]
            rty = Ty("tensor", cur.shape) if cur.ty == "real" else Ty(cur.ty)
            value = self.binary(op, cur, value, rty, _at(s))
        comps = value.flat()
        if len(comps) > 1 and _reads(comps) & {(space, n) for n in names}:
            temps = [self.fresh("old") for _ in comps]  # v = v[0] * v, v = [v[1], v[0]]: from the old v
            for t, x in zip(temps, comps):
                self.emit(S.Local(t, x.ty, x))
            comps = [S.Ref("l", t, x.ty) for t, x in zip(temps, comps)]
        for n, x in zip(names, comps):
            self.emit(S.Set(space, n, x))

    def keep(self, name: str, q: LSeq, h, at: tuple[int, int] = S.NOWHERE) -> None:
        """The state's sequence ``name`` (its block ``h``) set to ``q``: its locals and its kept copy."""
        q = self.share_seq(q)
        c, old = _const(max(1, int(np.prod(q.item))), "int"), self.dstate.setdefault(name, q)
        for x, y in zip((old.base, old.n) if old is not q else (), (q.base, q.n)):
            self.emit(S.Set("l", x.name, y))
        self.emit(S.Set("s", name, S.Call("tl_ar_keep", (h, q.base, q.n, c), "int", at)))

    def load_kept(self, body, named: set[str] | None = None) -> None:
        """A method's start: the state's sequences of any length it names copied into the arena (their locals)."""
        named = {n.name for n in A.walk(body) if isinstance(n, (A.Var, A.Assign))} if named is None else named
        self.dstate = {name: LSeq(self.local(S.Call("tl_ar_kget", (S.Ref("s", name, "int"), _const(max(1, _size(elem(ty))), "int")), "int")),
                                  self.local(S.Call("tl_kp_len", (S.Ref("s", name, "int"),), "int")), _shape(elem(ty)), _scalar(elem(ty)))
                       for name, ty in self.kept.items() if name in named}

    def s_If(self, s):
        c = self.expr(s.test).flat()[0]
        then = tuple(self.sub(lambda: self.stmt(s.then))[0])
        other = tuple(self.sub(lambda: self.stmt(s.other))[0]) if s.other is not None else ()
        self.emit(S.If(c, then, other))

    def s_Foreach(self, s):
        dom = s.domain
        if _is_sphere(dom):
            stmts, _, radius, center = self.around(dom, s.name, lambda: self.stmt(s.body))
            self.emit(S.Reduce("", "each", "sphere", tuple(stmts), _const(0, "int"), "int", radius, center))
            return
        seq = None
        if self.ty(dom).kind == "seq" and elem(self.ty(dom)).kind == "void":
            return  # over {}: the body never runs
        if isinstance(dom, A.Range):
            lo, hi = self.expr(s.domain.lo).flat()[0], self.expr(s.domain.hi).flat()[0]
        elif self.ty(dom).kind == "seq":
            seq = self.share_seq(self.sequence(dom))
            lo, hi = _const(0, "int"), self.seq_last(seq)
        else:
            raise Unsupported("foreach over a set of strands")
        var = self.fresh(s.name)
        ref = S.Ref("l", var, "int")  # (forget: a probe before the loop may be stale on its second iteration)
        stmts, _ = self.bound(s.name, lambda: (scal(ref, "int"), [var]) if seq is None else (self.seq_item(seq, ref), []),
                              lambda: self.stmt(s.body), forget=True)
        self.emit(S.For(var, lo, hi, tuple(stmts)))

    def s_Stabilize(self, s):  # and s_Die, s_Continue
        self.emit(S.Exit(type(s).__name__.lower()))

    s_Die = s_Continue = s_Stabilize

    def s_Print(self, s):
        items: list = []

        def nest(arr: np.ndarray, ty):  # a sequence prints in braces, a tensor's axes in brackets
            if arr.ndim == 0:
                items.append(arr[()])
                return
            seq = ty is not None and ty.kind == "seq"
            items.append("{" if seq else "[")
            for k in range(arr.shape[0]):
                items.extend([","] if k else [])
                nest(arr[k, ...], ty.elem if seq else None)
            items.append("}" if seq else "]")
        for a in s.args:
            if isinstance(a, A.Str):
                items.append(a.value)
            elif _dynamic(ty := self.ty(a)):  # "{", then each item after "," but the first, then "}"
                seq, j = self.share_seq(self.sequence(a)), self.fresh("pj")
                self.emit(S.Print((*items, "{")))
                with self.setting(out=[]):
                    items[:] = []
                    self.emit(S.If(b(">", S.Ref("l", j, "int"), _const(0, "int"), "bool"), (S.Print((",",)),)))
                    nest(self.seq_item(seq, S.Ref("l", j, "int")).comps, ty.elem)
                    self.emit(S.Print(tuple(items)))
                    body = self.out
                self.emit(S.For(j, _const(0, "int"), self.seq_last(seq), tuple(body)))
                items[:] = ["}"]
            else:
                nest(self.expr(a).comps, self.ty(a))
        self.printing = True
        self.emit(S.Print(tuple(items)))

    def s_New(self, s):
        if self.c.program.create.grid:
            raise Unsupported("new strands in a grid")
        items: list = []
        for prm, a in zip(self.c.program.strand.params, s.args):  # (one of any length: a copy in a new block the new strand owns)
            q = self.share_seq(self.as_seq(a, ty)) if _dynamic(ty := from_syntax(prm.type)) else None
            items += [self.local(S.Call("tl_ar_keep", (_const(0, "int"), q.base, q.n, _const(max(1, int(np.prod(q.item))), "int")), "int", _at(a)))] if q else _as(self.expr(a), _scalar(ty)).flat()
        items += [self.count(f).flat()[0] for f in self.counts]  # (the counts its state initializer reads)
        self.births = True
        self.emit(S.New(tuple(items)))

    def s_Return(self, s):
        if self.ret is None:
            raise Unsupported("return outside a function")
        names, label, st, rty = self.ret
        v = self.expr(s.value) if not _dynamic(rty) else self.as_seq(s.value, rty)
        for n, x in zip(names, (v.base, v.n) if isinstance(v, LSeq) else v.flat()):
            self.emit(S.Set("l", n, x))
        self.emit(S.Exit("goto", label))


def _ir(x):
    """The IR expression of a scalar of fieldval's rules: a symbolic one's, or a constant."""
    if isinstance(x, np.ndarray):
        return _ir(x[()])
    return x.e if isinstance(x, Sym) else _const(float(x), "real")


def _each(fn: Callable, v):
    """``fn`` of each scalar of ``v`` (an array, or one scalar)."""
    arr = np.asarray(v, dtype=object)
    return np.frompyfunc(fn, 1, 1)(arr) if arr.shape else fn(arr[()])


def _point(x) -> tuple:
    return tuple(_ir(y) for y in np.asarray(x, dtype=object).reshape(-1))


class Sym:
    """A real-valued IR expression with Python's arithmetic and the numpy functions the field
    rules call (``np.sin(s)`` calls ``s.sin()``): :mod:`.fieldval`'s derivative rules, run on
    object arrays of these, emit the IR that the interpreter's float64 run computes."""

    __slots__ = ("e", "low")

    def __init__(self, e, low: "Lowerer"):
        self.e, self.low = e, low

    def _new(self, e) -> "Sym":
        return Sym(e, self.low)

    def _bin(self, op: str, x, y):
        if isinstance(x, np.ndarray) and x.shape or isinstance(y, np.ndarray) and y.shape:
            return NotImplemented  # numpy maps the operator over the array
        if op in "*/" and isinstance(y, float) and y == 1.0 or op == "*" and isinstance(x, float) and x == 1.0 \
                or op == "+" and isinstance(x, (int, float)) and x == 0:
            return self  # x * 1, 1 * x, x / 1, 0 + x (sum's start): exactly x
        return self._new(b(op, _ir(x), _ir(y), "real"))

    def __neg__(self): return self._new(S.Un("-", self.e, "real"))  # noqa: E704
    def __pow__(self, o): return self._call("tl_pow", self, o)  # noqa: E704

    def _call(self, fn: str, *xs):
        return self._new(S.Call(fn, tuple(_ir(x) for x in xs), "real"))

    def det(self, m: np.ndarray) -> "Sym":
        return self._new(_det(_each(_ir, m)))

    def inv(self, m: np.ndarray) -> np.ndarray:
        """A⁻¹ by the library routine (⊥ where A is singular or not finite, as the interpreter)."""
        n = m.shape[0]
        return _each(self._new, np.array(self.low.lib("inv", list(_point(m)), n * n), dtype=object).reshape(n, n))


for _op, _name in (("+", "add"), ("-", "sub"), ("*", "mul"), ("/", "truediv")):  # x op y, y op x
    setattr(Sym, f"__{_name}__", lambda self, o, op=_op: self._bin(op, self, o))
    setattr(Sym, f"__r{_name}__", lambda self, o, op=_op: self._bin(op, o, self))
for _name, _fn in {"sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "arctan": "atan", "arcsin": "asin",
                   "arccos": "acos", "sqrt": "tl_sqrt", "sign": "tl_sgn"}.items():  # np.sin(s) calls s.sin()
    setattr(Sym, _name, lambda self, fn=_fn: self._call(fn, self))


class Sampled(FV.Field):
    """``image ⊛ kernel`` in a strand: a probe of image slot ``k`` (computed once per point
    on a path), in place of the interpreter's :class:`~.fieldval.Conv`."""

    def __init__(self, low: "Lowerer", k: int, border: str | None, kernel: str):
        self.low, self.k, self.border, self.kernel = low, k, border, kernel
        self.dim, self.shape = low.images[k].dim, low.images[k].shape

    def value(self, x, order: int):
        low, d, point = self.low, self.dim, _point(x)
        shape = self.shape + ((d,) * order if d > 1 else ())
        refs = low.once((self.k, self.kernel, order, self.border, point), int(np.prod(shape)), "p",
                        lambda names: [S.Probe(self.k, self.kernel, order, point, names, self.border)])
        return low.syms(V.of(shape, "real", refs))


class Shared(FV.Of):
    """A node of a field expression in a strand: its values (one per point and order)
    computed once, each component in a local; ``shape``: the field's."""

    def __init__(self, f: FV.Field, low: "Lowerer", shape: tuple[int, ...]):
        super().__init__("shared", f)
        self.low, self.shape, self.memo = low, shape, {}  # type: ignore[var-annotated]

    def value(self, x, order: int):
        key = (id(x), order)
        if key not in self.memo:  # (x kept with its value: its id stays its own)
            self.memo[key] = (x, self.low.shared(self.f.value(x, order)))
        return self.memo[key][1]


def _minor(p, q, r, t):
    """``p*q - r*t`` of IR reals."""
    return b("-", b("*", p, q, "real"), b("*", r, t, "real"), "real")


def _fold(terms, op: str = "+", ty: str = "real"):
    """``t0 op t1 op ...`` of IR expressions, left to right (a sum of reals by default)."""
    return functools.reduce(lambda acc, t: b(op, acc, t, ty), terms)


def _nest(a: np.ndarray):
    """Σ of an array of IR reals as Diderot nests it: the last axis first (a matrix's rows), each left to right."""
    return _fold(_nest(x) for x in a) if a.ndim > 1 else _fold(a)


def _sumsq(v: V):
    return _nest(_each(lambda x: b("*", x, x, "real"), v.comps))


def _det(m: np.ndarray):
    """The determinant of a 2×2 or 3×3 matrix of IR expressions in the order of Diderot's executables
    (aei + bfg + cdh - (ceg + bdi + afh), the interpreter's FV.inv_det)."""
    if m.shape == (2, 2):
        return _minor(m[0, 0], m[1, 1], m[0, 1], m[1, 0])
    t = [_fold((m[0, a], m[1, c], m[2, e]), "*") for a, c, e in ((0, 1, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0), (1, 0, 2), (0, 2, 1))]
    return b("-", _fold(t[:3]), _fold(t[3:]), "real")


def _known(ty: Ty, other: Ty) -> Ty:
    """``ty``, but ``other`` for the type of ``{}`` (a sequence of void: its items take the target's type)."""
    return other if ty.kind == "seq" and ty.elem is not None and ty.elem.kind == "void" else ty


def _reads(exprs) -> set:
    """The variables (space, name) some expressions read."""
    return {(r.space, r.name) for r in S.nodes(tuple(exprs), S.Ref)}


def _writes(s) -> set | None:
    """The variables a statement may assign (None: it may jump within the method; a
    stabilize, die or continue leaves it)."""
    if isinstance(s, S.Set):
        return {(s.space, s.name)}
    if isinstance(s, S.Label) or (isinstance(s, S.Exit) and s.kind == "goto"):
        return None
    out: set = {("l", s.var)} if isinstance(s, S.For) else set()
    for x in (*getattr(s, "then", ()), *getattr(s, "other", ()), *getattr(s, "body", ())):
        w = _writes(x)
        if w is None:
            return None
        out |= w
    return out


_COUNTS = {"numStrands": "all", "numActive": "active", "numStable": "stable"}


def _is_sphere(dom) -> bool:
    return isinstance(dom, A.Apply) and isinstance(dom.func, A.Var) and dom.func.name == "sphere"


def _int_literal(e) -> Any:
    """The value of an int literal, or of a negated one (``F^(-2)``); else None."""
    if isinstance(e, A.Num) and e.is_int:
        return int(e.value)
    if isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.Num) and e.operand.is_int:
        return -int(e.operand.value)
    return None


def _num(x, y) -> str:
    return "int" if x.ty == "int" and y.ty == "int" else "real"


# ---------------------------------------------------------------- the program
def lower(checked: Checked) -> S.StrandIR:
    """The strand IR of a typed program, or :class:`Unsupported` with the reason."""
    p = checked.program
    L = Lowerer(checked)
    strand = p.strand
    state_tys = [(prm.name, from_syntax(prm.type)) for prm in strand.params] + \
        [(sv.name, from_syntax(sv.type)) for sv in strand.state]
    state_tys[len(strand.params):len(strand.params)] = [(h, Ty("int")) for h in L.counts.values()]
    n_params = sum(1 if prm.name in L.kept else _size(from_syntax(prm.type)) for prm in strand.params) + len(L.counts)
    state_slots = [S.Slot(name, "int") if _dynamic(ty) else S.Slot(name if not _shape(ty) else f"{name}.{k}", st)
                   for name, ty in state_tys for st in (_scalar(ty),) for k in range(1 if _dynamic(ty) else _size(ty))]
    names = [it.name for it in p.create.iters]  # (i' is no C name; of two iterators of one name the first is bound)
    iters = [n if "'" not in n and n not in names[:k] else str(k) for k, n in enumerate(names)]
    # create: the arguments, then the state initializers in order
    L.where = "create"
    for f, h in L.counts.items():  # every strand the grid makes, all active (diderotc's counts)
        L.emit(S.Set("s", h, L.made() if f != "numStable" else _const(0, "int")))
    for it, cname in zip(p.create.iters, iters):  # an iterator over a sequence is its item at the strand's index
        ref = S.Ref("l", f"it_{cname}", "int")
        bound = (scal(ref, "int"), [f"it_{cname}"]) if isinstance(it.domain, A.Range) \
            else (L.seq_item(L.share_seq(L.sequence(it.domain)), ref), [])
        L.scopes[0].setdefault(it.name, bound)
    for prm, arg in zip(strand.params, p.create.args):
        L.keep(prm.name, L.as_seq(arg, L.kept[prm.name]), _const(0, "int"), _at(arg)) if prm.name in L.kept else L.set_state(prm.name, from_syntax(prm.type), L.expr(arg))
    create = tuple(L.out)
    L.scopes, L.out, L.probes, L.dstate = [{}], [], {}, {}
    L.load_kept(None, {prm.name for prm in strand.params})  # (a new strand's initializers read its parameters' blocks)
    for sv in strand.state:
        if (ty := L.kept.get(sv.name)) is not None:
            L.keep(sv.name, L.as_seq(sv.init, ty) if sv.init is not None else L.to_lseq(EMPTY, ty), _const(0, "int"))
        else:
            L.set_state(sv.name, from_syntax(sv.type), L.expr(sv.init) if sv.init is not None else None)
    init_state = tuple(L.out)

    def method(body, where: str) -> tuple | None:
        if body is None:
            return None
        L.out, L.scopes, L.where, L.probes = [], [{}], where, {}
        if where == "strand":
            L.load_kept(body)
        L.stmt(body)
        return tuple(L.out)
    update, stabilize = method(strand.method("update"), "strand"), method(strand.method("stabilize"), "strand")
    start = method(next((b for name, b in strand.methods if name in ("start", "initialize")), None), "strand")
    if len({r.name for r in S.nodes((update, stabilize, start), S.Ref) if r.space[0] == "n" and r.name in L.kept}) > 8:  # (tl_ks)
        raise Unsupported("more than 8 sequences of any length of the strand state that queries read")
    if any(q.which == "sphere" for q in S.nodes((start, stabilize if any(  # (the interpreter's snapshot)
            e.kind == "stabilize" for e in S.nodes(start or (), S.Exit)) else ()), S.Reduce)):
        raise Unsupported("a sphere query in a start method")
    gstart = method(p.start, "global")
    global_block = method(p.update, "global")
    gslots = [S.Slot(n, _scalar(ty)) for g, ty in checked.globals.items() for k in (g, g + "@0") for n in L.global_slots.get(k, ())]
    gslots += [S.Slot(n, "int") for k, ns in L.global_slots.items() if k.startswith("size(") for n in ns]
    return _unstored_params(S.StrandIR(
        strand.name, tuple(gslots), tuple(state_slots), tuple(iters), create,
        update if update is not None else (S.Exit("stabilize"),), stabilize, global_block,
        tuple(L.images), tuple(L.kernels), L.printing, tuple(L.strings), L.sphere_radius,
        init_state, tuple(sl.name for sl in state_slots[:n_params]), L.births, permuted(checked),
        tuple(sl.name for sl in state_slots if sl.name.partition(".")[0] in checked.shared), tuple(L.seqs), L.serial, checked.counts, start, gstart))


def _unstored_params(ir: S.StrandIR) -> S.StrandIR:
    """``ir`` with the parameters no method reads (only the state's initializers do) made
    locals of the strand's creation, which then runs the initializers itself: no state row
    is written for them.  Not where strands run ``new`` (a new strand's parameters reach
    ``init`` through its state) or for a position the queries search."""
    read = {r.name for body in (ir.update, ir.stabilize or (), ir.global_block or (), ir.start or (), ir.global_start or ())
            for r in S.nodes(body, S.Ref)}
    gone = {p: f"prm_{k}_" for k, p in enumerate(ir.params)
            if p not in read and p not in ir.shared and not (p == "pos" or p.startswith("pos."))}
    if ir.births or not gone:
        return ir
    tys = {sl.name: sl.ty for sl in ir.state}

    def local(x):
        if isinstance(x, (S.Ref, S.Set)) and x.space == "s" and x.name in gone:
            x = dataclasses.replace(x, space="l", name=gone[x.name])
        if isinstance(x, tuple):
            return tuple(local(y) for y in x)
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            return dataclasses.replace(x, **{f.name: local(getattr(x, f.name)) for f in dataclasses.fields(x)})
        return x

    create = tuple(S.Local(name, tys[p]) for p, name in gone.items()) + local(ir.create + ir.init)
    return dataclasses.replace(ir, state=tuple(sl for sl in ir.state if sl.name not in gone), create=create, init=(),
                               params=tuple(p for p in ir.params if p not in gone))


# ---------------------------------------------------------------- running it
#: the highest derivative order whose tap polynomials a kernel slot carries
MAX_ORDER = 4


def strand_plan(checked: Checked) -> tuple[S.StrandIR | None, str | None]:
    """The strand IR of ``checked`` and None, or None and why it runs in the interpreter
    (computed once per typed program, kept on it)."""
    cached = checked.__dict__.get("_strand_plan")
    if cached is not None:
        return cached
    ir: S.StrandIR | None = None
    why = None
    try:
        too_large = c_plan_limit(checked)  # bounded C builds
        if too_large is not None:
            raise Unsupported(too_large)
        ir = lower(checked)
        if len(ir.show()) > MAX_C_PLAN:
            ir, why = None, f"the C executor does not build programs this large (a strand plan of more than {MAX_C_PLAN} characters)"
    except Unsupported as exc:
        ir, why = None, f"the C executor does not support {exc}"
    except RecursionError:
        ir, why = None, "the C executor does not support expressions this deep"
    checked.__dict__["_strand_plan"] = (ir, why)
    return ir, why


def run_compiled(program, rt, backend: str | None, RunResult, *, limit: int, snapshot: int, on_snapshot, threads: int,
                 progress):
    """Run ``program`` (its globals computed in ``rt``) with the C executor and return
    its ``RunResult`` (the class, passed by the caller), or None where it runs in the interpreter (``program.executor_note``
    says why, where C was asked for or possible in principle)."""
    from . import interp as I

    if backend not in (None, "c", "interp"):
        raise error("backend", f"a strand program runs with backend 'c' or 'interp', not {backend!r}")
    ir, why = strand_plan(program.checked) if backend != "interp" else (None, None)
    if why is None and backend != "interp":
        why = "no C executor is registered" if "c" not in EXECUTORS else UNAVAILABLE["c"]() if "c" in UNAVAILABLE else None
    if why is not None and backend == "c":
        raise error("backend", f"{program.checked.name}: {why}")
    program.executor_note = why
    if ir is None or why is not None:
        return None
    cap = limit if limit and limit > 0 else I.DEFAULT_LIMIT
    try:
        runner = EXECUTORS["c"](ir, cap)  # (its counters as narrow as cap super-steps allow)
    except TensorLangError as exc:  # the C compiler failed on this program: the interpreter runs it
        if backend == "c":
            raise
        program.executor_note = f"the C executor could not build this program: {exc.message}"
        return None
    first = dict(rt.g)  # (a global field's definition reads a dropped global's first value: NAME@0, I.create's rt.first)
    if rt.p.global_init is not None:  # the global initialize block, in Python before the strands exist (as I.create)
        I._global_block(rt, rt.p.global_init)
    fr, before = rt.frame(None), "".join(rt.printed)  # (what it printed comes first)
    ranges = [(int(lo(fr)), int(hi(fr))) if hi is not None else (0, len(lo(fr)) - 1)
              for _name, lo, hi in program.compiled.create_iters]
    shape = tuple(max(0, h - l + 1) for l, h in ranges)
    total = math.prod(shape)  # Python ints: an int64 product wraps (2**32 x 2**32 -> 0)
    from ...limits import memory_budget_bytes, shown_count
    if total * (len(ir.state) + 4) * 16 > memory_budget_bytes():
        raise error("too-large", f"{shown_count(total)} strands do not fit in the memory budget")
    values = dict(rt.g) | {f"{name}@0": v for name, v in first.items()}
    for im in ir.images:  # image("file.nrrd") inside a field's definition; size(img) read once
        if im.path is not None:
            values[im.name] = rt.image(im.path)
        img: Any = values[im.name]
        values[f"size({im.name})"] = getattr(img, "image", img).sizes  # clamp(img): img's
    run = runner.start(values, ranges, threads=max(1, int(threads or 1)), begin=False)  # (begin: after snapshot 0)
    bsp = bulk_synchronous(program.checked)  # otherwise Diderot prints strand by strand
    kept = {n: ty for n, ty in program.checked.state.items() if _dynamic(ty)}

    def result(steps: int, snap: bool = False):
        status = run.status
        # a collection's strands in the executor's order (Diderot's, where it permutes them)
        chosen = None
        if not program.grid:
            keep = (status <= 1) if snap else (status == 1)
            where = run.alive() if run.indirect else None  # otherwise in column order: the mask
            chosen = keep if where is None else where[keep[where]]
        outputs = {}
        for o in program.outputs:
            if o.name in kept:  # a sequence of any length: (length, *item shape) a strand
                outputs[o.name] = run.kept(o.name, o.shape[1:], _scalar(kept[o.name].elem), chosen).reshape(shape if chosen is None else -1)
                continue
            arr = run.state(o.name, o.shape, o.kind, chosen)
            arr = arr.astype(np.float64) if o.kind == "sequence" else arr  # (T[n] of ints, bools: reals, as the interpreter's)
            outputs[o.name] = arr.reshape(shape + o.shape) if chosen is None else arr
        return RunResult(outputs, shape if program.grid else None, steps, run.active(),  # (C counted the active)
                         int(np.count_nonzero(status == 1)), before + (run.printed if bsp else run.printed_by_strand(snapshot if on_snapshot else 0)))
    steps = 0
    if snapshot and on_snapshot is not None:
        on_snapshot(0, result(0, True))  # the strands as made, before the start blocks (diderotc's -0000)
    run.begin()
    chunk = 1 if progress is not None else (snapshot if snapshot and on_snapshot is not None else cap)
    while steps < cap and (run.active() > 0 or not steps and runner.ir.start and run.n and bsp):  # (the start methods' step: interp.py)
        done = run.steps(min(chunk, cap - steps))
        if done == 0:
            break
        steps += done
        if progress is not None:
            progress(steps, run.active())
        if snapshot and on_snapshot is not None and (steps % snapshot == 0 or steps == cap or run.active() == 0):
            on_snapshot(steps, result(steps, True))  # every N steps and the last, as Diderot's executables
    done = result(steps)
    run.release()  # the outputs are copies: the state arrays serve the next call
    return done


__all__ = ["Unsupported", "lower", "permuted", "run_compiled", "strand_plan"]
