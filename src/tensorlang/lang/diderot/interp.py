"""The strand interpreter, the oracle (docs/diderot-language.md, "Execution"): the tree compiled once
into Python closures; values are Python scalars and strings, numpy arrays (tensors), tuples (sequences),
:mod:`.fieldval` fields and images; ``stabilize``, ``die``, ``continue``, ``return`` are exceptions."""

from __future__ import annotations

import functools
import io
import itertools
import math
import re
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...errors import Span, TensorLangError, error
from ...limits import _human, check_allocation, is_int64, memory_budget_bytes, shown_count
from ...sampling.image import Image
from ...sampling.image import load as load_image
from ...sampling.kernels import KERNELS
from ...strand_ir import print_order
from . import ast as A
from . import fieldval as FV
from .bounds import components, item_bytes, recursive_functions, strand_bytes
from .check import Checked, bulk_synchronous, dropped_globals, field_globals, file_path, permuted
from .types import EMPTY_BOUND, Ty, elem, from_syntax, is_real

ACTIVE, STABLE, DEAD = 0, 1, 2

#: the iteration limit when none is given (docs/diderot-language.md): nothing runs for ever
DEFAULT_LIMIT = 10000

#: How deeply functions may call themselves, and the stack and recursion limit of run_deep (docs/diderot.md, "Recursion").
MAX_CALL_DEPTH = 10_000
DEEP_STACK = 256 << 20
DEEP_FRAMES = 200_000


class _Stabilize(Exception):
    pass


class _Die(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):  # (its value: args[0])
    pass


class Strand:
    __slots__ = ("id", "state", "status")

    def __init__(self, sid: int, state: dict):
        self.id, self.state, self.status = sid, state, ACTIVE


class Frame:
    """Where a closure finds its variables: the globals, the strand's state, the locals running."""

    __slots__ = ("g", "s", "l", "strand", "rt")

    def __init__(self, g, s, loc, strand, rt):
        self.g, self.s, self.l, self.strand, self.rt = g, s, loc, strand, rt


# ---------------------------------------------------------------- value helpers
def wrap64(v: int) -> int:
    """An int as a 64-bit two's complement value: Diderot's ints wrap, as the C executor's do."""
    return v if -(1 << 63) <= v < (1 << 63) else ((v + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def _wrapping(op: Callable) -> Callable:
    """``op`` whose int results wrap to 64 bits (a local's type is its value's: reals pass)."""
    def fn(x, y):
        r = op(x, y)
        return wrap64(r) if isinstance(r, int) and not isinstance(r, bool) else r
    return fn


def c_div(a: int, b: int, what: str = "division", span: Span | None = None) -> int:
    """C's a / b of ints (toward zero; ``what`` "remainder": C's a % b), wrapped to 64 bits
    (``span``: where the program divides, which a division by zero names)."""
    if b == 0:
        raise error("input", f"integer {what} by zero", span)
    q = abs(a) // abs(b) if (a >= 0) == (b >= 0) else -(abs(a) // abs(b))
    return wrap64(q if what == "division" else a - b * q)


def coerce(ty: Ty, v):
    """A value stored in a variable of type ``ty`` (int -> real)."""
    if type(v) is float:  # the common case: a real stays as it is
        return v
    if is_real(ty) and isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return float(v)
    if ty.kind == "tensor" and ty.shape and not isinstance(v, np.ndarray):
        return np.asarray(v, dtype=np.float64)
    if ty.kind == "seq" and ty.elem is not None and isinstance(v, tuple):
        return tuple(coerce(ty.elem, x) for x in v)
    return v


def fmt(v) -> str:
    """How print writes a value (as a --double Diderot executable: 17 significant digits)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, float):
        # Diderot --double: C++ streams at 17 significant digits (and inf, -inf)
        return ("nan" if math.copysign(1, v) > 0 else "-nan") if math.isnan(v) else f"{v:.17g}"
    if isinstance(v, np.ndarray):
        return fmt(float(v)) if v.ndim == 0 else "[" + ",".join(fmt(x if isinstance(x, np.ndarray) else float(x)) for x in v) + "]"
    if isinstance(v, tuple):
        return "{" + ",".join(fmt(x) for x in v) + "}"
    return str(v)


class _Later:
    """A field local of a global block: made where it is probed (diderotc reads its globals there)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable):
        self.make = make

    @staticmethod
    def now(v):
        return v.make() if isinstance(v, _Later) else v


# ---------------------------------------------------------------- the compiler
class Compiler:
    def __init__(self, checked: Checked):
        self.c = checked
        self.functions: dict[str, Callable] = {}
        self.recursive = recursive_functions(checked)
        written, self.dropped = dropped_globals(checked)  # (dropped: read by a field made anew: its first value, Runtime.first)
        self.mutable = field_globals(checked, written - self.dropped)
        self.defining = False  # compiling such a field's definition
        self.in_global = False  # compiling a global block (its field locals: _Later)

    def ty(self, node) -> Ty:
        return self.c.types[id(node)]

    def expr(self, e) -> Callable[[Frame], Any]:
        return getattr(self, "e_" + type(e).__name__)(e)

    def e_Num(self, e):  # (and e_Str, e_Bool)
        return lambda fr, v=e.value: v
    e_Str = e_Bool = e_Num

    def e_Var(self, e):
        name, scope = e.name, self.c.scopes.get(id(e), "global")
        if scope == "local":
            if self.in_global and self.ty(e).kind == "field":
                return lambda fr: _Later.now(fr.l[name])
            return lambda fr: fr.l[name]
        if scope == "state":
            return lambda fr: fr.s[name]
        if scope == "kernel" or (scope == "global" and name in KERNELS and name not in self.c.globals):
            return lambda fr, k=KERNELS[name]: k
        if scope == "global" and name in self.mutable:  # made anew where it is read, from the globals as they are
            d = next(d for d in self.c.program.decls if isinstance(d, A.GlobalDecl) and d.name == name)
            was, self.defining = self.defining, True
            try:
                return self.field_fn(d, self.c.globals[name]) if d.param is not None else self.expr(d.init)
            finally:
                self.defining = was
        if self.defining and name in self.dropped:  # (diderotc drops its assignments: the field keeps its first value)
            return lambda fr: fr.rt.first.get(name, fr.g.get(name))  # (before create: the first value, in fr.g)
        return lambda fr: fr.g[name]

    def e_KernelRef(self, e):
        return lambda fr, k=KERNELS[e.name]: k

    def e_BinOp(self, e):
        a, b = self.expr(e.left), self.expr(e.right)
        ta, tb, tr = self.ty(e.left), self.ty(e.right), self.ty(e)
        op = e.op
        if op == "&&":
            return lambda fr: a(fr) and b(fr)
        if op == "||":
            return lambda fr: a(fr) or b(fr)
        if op == "@":
            ea = elem(tr)

            def side(f, t):  # a sequence's items converted only where their type is not the result's
                if t.kind != "seq" or t == ea:  # an item (a sequence itself where the other side is {})
                    return lambda fr: (coerce(ea, f(fr)),)
                return f if elem(t) == ea else (lambda fr: tuple(coerce(ea, v) for v in f(fr)))
            left, right = side(a, ta), side(b, tb)

            def append(fr):
                x, y = left(fr), right(fr)
                # `s = s @ s` doubles each step: bounded before it is made (bounds.item_bytes)
                check_allocation(len(x) + len(y), item_bytes(ea), "a sequence made by @", e.span)
                return x + y
            return append
        if op == "⊛":
            def conv(fr):
                x, y = a(fr), b(fr)
                img, ker = (x, y) if not isinstance(x, type(KERNELS["tent"])) else (y, x)
                return FV.Conv(img, ker)
            return conv
        if ta.kind == "field" or tb.kind == "field":  # field arithmetic, lifted
            dim = tr.dim
            if op == "∘":
                return lambda fr: FV.Compose(a(fr), b(fr))
            if op in ("+", "-", "*", "/") or op in FV.BILINEAR:
                return lambda fr: FV.Lifted(op, a(fr), b(fr), dim)
            assert op == "^", op  # (the checker lifts no other operator: a scalar field to an int power)
            return lambda fr: FV.Lifted1(FV.power(b(fr)), a(fr))
        if tr.kind == "int" and op in ("/", "%"):
            what, span = _INT_WHAT[op], _where(e)
            return lambda fr: c_div(a(fr), b(fr), what, span)
        fn = (_INT.get(op) if tr.kind == "int" else None) or (_ipow if op == "^" and tb.kind == "int" else _BINARY[op])
        if op == "/" and A.Index.slices(e.left):
            fn = np.divide
        if tr.kind == "tensor" and tr.shape == () and op not in ("==", "!=", "<", "<=", ">", ">="):
            return lambda fr: float(fn(a(fr), b(fr)))
        return lambda fr: fn(a(fr), b(fr))

    def e_Unary(self, e):
        a = self.expr(e.operand)
        if e.op == "!":
            return lambda fr: not a(fr)
        t = self.ty(e)
        if t.kind == "field":
            return lambda fr: FV.Lifted("neg", a(fr), None, t.dim)
        if t.kind == "int":
            return lambda fr: wrap64(-a(fr))
        return lambda fr: -a(fr)

    def e_Diff(self, e):
        a, op = self.expr(e.operand), e.op
        return lambda fr: FV.Deriv(op, a(fr))

    def e_Cond(self, e):
        t, c, o = self.expr(e.then), self.expr(e.test), self.expr(e.other)
        if is_real(self.ty(e)):
            return lambda fr: float(t(fr) if c(fr) else o(fr))
        return lambda fr: t(fr) if c(fr) else o(fr)

    def e_Range(self, e):
        lo, hi = self.expr(e.lo), self.expr(e.hi)

        def range_(fr):
            a, b = lo(fr), hi(fr)
            # a tuple of Python ints: about 64 bytes an item, checked before it is made (issue 41)
            check_allocation(max(0, b - a + 1), 64, f"the range {a}..{b}", e.span)
            return tuple(range(a, b + 1))
        return range_

    def e_Norm(self, e):
        a, t = self.expr(e.operand), self.ty(e.operand)
        if t.kind == "int":
            return lambda fr: wrap64(abs(a(fr)))
        if t.kind == "field":
            return lambda fr: FV.Lifted("norm", a(fr), None, t.dim)
        if t.shape == ():
            return lambda fr: abs(float(a(fr)))
        return lambda fr: _norm(a(fr))

    def e_Apply(self, e):
        f = e.func
        scope = self.c.scopes.get(id(f)) if isinstance(f, A.Var) else "value"  # None: sphere or a reduction
        if scope in ("func", "basis") or (scope is None and f.name not in self.c.globals):
            if scope == "func":
                return self.call_function(f.name, e)
            if scope == "basis":
                return self.call_basis(f.name, e)
            if f.name == "sphere":  # sphere(x, r); sphere(r): around the strand's pos (center None)
                center = self.expr(e.args[0]) if len(e.args) == 2 else (lambda fr: None)
                radius = self.expr(e.args[-1])
                return lambda fr: fr.rt.sphere(fr, center(fr), radius(fr))
            return self.reduction(f.name, e.args[0])
        fn, arg, shape = self.expr(f), self.expr(e.args[0]), self.ty(e).shape

        def probe(fr):  # F(x)
            v = fn(fr).value(np.asarray(arg(fr), dtype=np.float64), 0)
            return float(v) if not shape else np.asarray(v, dtype=np.float64)
        return probe

    def field_fn(self, decl, ty):
        """``F(x) = formula``: the formula run on the identity field, or a pointwise field (check.field_fn)."""
        body, name, d = self.expr(decl.init), decl.param, ty.dim
        if self.c.field_fns[decl.name] == "field":
            def make(fr):
                v = body(Frame(fr.g, {}, {name: FV.Identity(d)}, None, fr.rt))
                return v if isinstance(v, FV.Field) else FV.Constant(v, d)
            return make
        real = not ty.shape

        def pointwise(fr):
            def at(x):
                v = body(Frame(fr.g, {}, {name: x if d > 1 else float(np.asarray(x).reshape(-1)[0])}, None, fr.rt))
                return float(v) if real else np.asarray(v, dtype=np.float64)
            return FV.Pointwise(at, d, decl.name)
        return pointwise

    def call_function(self, name, e):
        args = [self.expr(a) for a in e.args]
        decl = self.c.functions[name]
        typed = [(p.name, from_syntax(p.type)) for p in decl.params]
        rty, functions = from_syntax(decl.result), self.functions

        def call(fr):
            loc = {n: coerce(t, a(fr)) for (n, t), a in zip(typed, args)}
            return coerce(rty, functions[name](Frame(fr.g, fr.s, loc, fr.strand, fr.rt)))
        if name not in self.recursive:
            return call

        def counted(fr):
            rt = fr.rt
            if rt.depth >= MAX_CALL_DEPTH:
                raise error("too-large", f"function {name} calls itself more than {MAX_CALL_DEPTH:,} deep "
                            "(the interpreter's limit, docs/diderot.md)", e.span)
            rt.depth += 1
            try:
                return call(fr)
            finally:
                rt.depth -= 1
        return counted

    def function(self, decl: A.FunctionDecl):
        if isinstance(decl.body, A.Block):
            body = self.stmt(decl.body)

            def run(fr):
                try:
                    body(fr)
                except _Return as r:  # (every path of the block ends in one: check._Inits)
                    return r.args[0]
            return run
        return self.expr(decl.body)

    def call_basis(self, name, e):
        args = [self.expr(a) for a in e.args]
        tys = [self.ty(a) for a in e.args]
        rty = self.ty(e)
        if name in ("clamp", "wrap", "mirror") and len(args) == 1:
            return lambda fr, a=args[0]: FV.BorderImage(a(fr), name)
        if name in _COUNTS:
            return lambda fr, which=_COUNTS[name]: fr.rt.count(which, True)
        if name == "modulate" and rty.kind == "field":  # of fields: lifted, differentiated by the product rule
            return lambda fr, a=args[0], b=args[1]: FV.Lifted(name, a(fr), b(fr), rty.dim)
        if tys and tys[0].kind == "field" and name in FV.APPLIED:
            a, d, scalar = args[0], tys[0].dim, tys[0].shape == ()
            return lambda fr: FV.applied(name, a(fr), d, scalar)
        fn = BASIS[name] if rty.kind != "int" else _INT_BASIS.get(name, BASIS[name])
        real = is_real(rty)
        if len(args) == 1:
            a = args[0]
            return (lambda fr: float(fn(a(fr)))) if real else (lambda fr: fn(a(fr)))
        if real:
            return lambda fr: float(fn(*[a(fr) for a in args]))
        return lambda fr: fn(*[a(fr) for a in args])

    def reduction(self, name, comp: A.Comprehension):
        body, var, dom, bty = self.expr(comp.body), comp.iter.name, comp.iter.domain, self.ty(comp)
        which = {"all": (ACTIVE, STABLE), "active": (ACTIVE,), "stable": (STABLE,)}[dom.name] if isinstance(dom, A.Select) \
            and isinstance(dom.operand, A.Var) and dom.operand.name == self.c.name else None  # S.all, S.active, S.stable
        items = self.expr(dom) if which is None else (lambda fr: fr.rt.states(which))
        zero = np.zeros(bty.shape) if bty.kind == "tensor" and bty.shape else (0 if bty.kind == "int" else 0.0)
        empty, step = EMPTY_BOUND["int" if bty.kind == "int" else "real"].get(name, 0), (lambda a, v: v if a < v else a) if name == "max" else (lambda a, v: v if v < a else a)  # of none; std::max, min
        reduce: Callable[[list], Any] = {  # a real max or min folds from ∓∞, as Diderot's, which passes over NaNs
            "sum": lambda vs: wrap64(sum(vs, 0)) if bty.kind == "int" else sum(vs, zero), "all": all, "exists": any,  # (ints wrap)
            "product": lambda vs: wrap64(math.prod(vs)) if bty.kind == "int" else math.prod(vs), "mean": lambda vs: float(sum(vs, 0.0) / len(vs)) if vs else math.nan, **dict.fromkeys(("max", "min"), lambda vs: functools.reduce(step, vs, empty if bty.kind != "int" or not vs else vs[0]))}[name]
        return lambda fr: reduce(_each(fr, var, items(fr), body))

    def e_Index(self, e):
        a = self.expr(e.operand)
        t = self.ty(e.operand)
        idx = [None if i is None else self.expr(i) for i in e.indices]
        at = _where(e)
        if t.kind == "seq":
            i0 = idx[0]
            assert i0 is not None  # the checker asks a sequence for one index
            return lambda fr: _seq_get(a(fr), i0(fr), at)
        if t.kind == "field":  # constant indices (the checker): a field of the components
            key = tuple(slice(None) if i is None else int(i.value) for i in e.indices)
            return lambda fr: FV.Slice(key, a(fr))
        scalar = self.ty(e).shape == ()

        def index(fr):
            v = a(fr)
            key = tuple(slice(None) if i is None else _checked_index(i(fr), n, "tensor", at) for i, n in zip(idx, t.shape))
            r = v[key]
            return float(r) if scalar else r
        return index

    def e_SeqIndex(self, e):
        a, i = self.expr(e.operand), self.expr(e.index)
        at = _where(e)
        return lambda fr: _seq_get(a(fr), i(fr), at)

    def e_Select(self, e):
        a, name = self.expr(e.operand), e.name
        return lambda fr: a(fr)[name]

    def e_Comprehension(self, e):
        body, var, dom = self.expr(e.body), e.iter.name, self.expr(e.iter.domain)
        ety = elem(self.ty(e))

        def comprehension(fr):
            items = dom(fr)
            check_allocation(len(items), item_bytes(ety), "a sequence made by a comprehension", e.span)
            return tuple(coerce(ety, v) for v in _each(fr, var, items, body))
        return comprehension

    def e_TensorLit(self, e):
        elems = [self.expr(x) for x in e.elems]
        if self.ty(e).kind == "field":
            return lambda fr: FV.Stack([x(fr) for x in elems])
        return lambda fr: np.array([x(fr) for x in elems], dtype=np.float64)

    def e_SeqLit(self, e):
        elems = [self.expr(x) for x in e.elems]
        ety = elem(self.ty(e))
        return lambda fr: tuple(coerce(ety, x(fr)) for x in elems)

    def e_Identity(self, e):  # (and e_Zeros, e_Nan)
        nan = isinstance(e, A.Nan)
        v = np.eye(e.n) if isinstance(e, A.Identity) else np.full(e.shape, np.nan if nan else 0.0) if e.shape else \
            (math.nan if nan else 0.0)
        return lambda fr: v
    e_Zeros = e_Nan = e_Identity

    def e_RealCast(self, e):
        a = self.expr(e.operand)
        return lambda fr: float(a(fr))

    def e_Load(self, e):
        path = self.expr(e.path)
        if e.what == "image":
            want = self.c.images.get(id(e))
            return lambda fr: fr.rt.image(path(fr), want, e.span)
        return lambda fr: fr.rt.sequence(path(fr), None)

    def stmt(self, s) -> Callable[[Frame], None]:
        return getattr(self, "s_" + type(s).__name__)(s)

    def s_Block(self, s):
        body = [self.stmt(x) for x in s.stmts]
        declared = [x.name for x in s.stmts if isinstance(x, A.Decl)]  # shadow outer locals until the block ends
        if len(body) == 1 and not declared:
            return body[0]

        def block(fr):
            saved = {name: fr.l[name] for name in declared if name in fr.l}
            for st in body:
                st(fr)
            fr.l.update(saved)  # (an inner local left over is never read: the checker; stabilize, die, continue, return end the method)
        return block

    def s_Decl(self, s):
        ty, name = from_syntax(s.type), s.name
        if s.init is None:
            zero = _zero(ty)
            return lambda fr: fr.l.__setitem__(name, zero)
        v, keep = self.expr(s.init), _same_items(ty, self.ty(s.init))
        if self.in_global and ty.kind == "field":  # diderotc reads its globals where it is probed, its locals here

            def later(fr):
                here = Frame(fr.g, fr.s, dict(fr.l), fr.strand, fr.rt)
                fr.l[name] = _Later(lambda: v(here))
            return later

        def decl(fr):
            fr.l[name] = v(fr) if keep else coerce(ty, v(fr))
        return decl

    def s_Assign(self, s):
        scope = self.c.scopes[id(s)]
        name, store = s.name, {"local": "l", "state": "s", "global": "g"}[scope]
        v = self.expr(s.value)
        # the target's declared type (a local's: its value's, which the checker matched)
        ty = (self.c.globals if scope == "global" else self.c.state)[name] if scope in ("global", "state") \
            else self.c.types.get(id(s.value), Ty("void"))
        if s.op != "=":
            op = s.op[0]
            # the checker typed "x op= e" as "x op e"
            if ty.kind == "int" and op in "/%":  # a local's type is its value's here: vec2 v; v /= 2 divides reals
                at = _where(s)

                def fn(x, y, what=_INT_WHAT[op], other=_BINARY[op], span=at):
                    return c_div(int(x), y, what, span) if isinstance(x, (int, np.integer)) and not isinstance(x, bool) else other(x, y)
            else:
                fn = _INT[op] if ty.kind == "int" else _BINARY[op]

            def update(fr):
                d = getattr(fr, store)
                d[name] = coerce(ty, fn(d[name], v(fr)))
            return update

        keep = _same_items(ty, self.ty(s.value))

        def assign(fr):
            getattr(fr, store)[name] = v(fr) if keep else coerce(ty, v(fr))
        return assign

    def s_If(self, s):
        test, then, other = self.expr(s.test), self.stmt(s.then), None if s.other is None else self.stmt(s.other)

        def if_(fr):
            if test(fr):
                then(fr)
            elif other is not None:
                other(fr)
        return if_

    def s_Foreach(self, s):
        dom, body, name = self.expr(s.domain), self.stmt(s.body), s.name

        def foreach(fr):
            saved = {name: fr.l[name]} if name in fr.l else {}  # the loop's variable shadows an outer local
            for item in dom(fr):
                fr.l[name] = item
                body(fr)
            fr.l.update(saved)
        return foreach

    def s_Stabilize(self, s):  # (and s_Die, s_Continue: the statement's exception)
        exc = {A.Stabilize: _Stabilize, A.Die: _Die, A.Continue: _Continue}[type(s)]

        def raise_(fr):
            raise exc()
        return raise_

    s_Die = s_Continue = s_Stabilize

    def s_Return(self, s):
        v = self.expr(s.value)

        def return_(fr):
            raise _Return(v(fr))
        return return_

    def s_Print(self, s):
        args = [self.expr(a) for a in s.args]

        def print_(fr):
            fr.rt.printed.append("".join(fmt(a(fr)) for a in args))
            fr.rt.print_owner.append((fr.rt.made, fr.strand.id if fr.strand is not None else -1))
        return print_

    def s_New(self, s):
        args = [self.expr(a) for a in s.args]
        return lambda fr: fr.rt.pending.append(fr.rt.make_strand([a(fr) for a in args]))


#: the strands numStrands(), numActive() and numStable() count
_COUNTS = {"numStrands": (ACTIVE, STABLE), "numActive": (ACTIVE,), "numStable": (STABLE,)}
#: the processor's default NaN (x86: sign bit set, -nan): C's pow, fmod, sin, cos, tan of an invalid operand
_INVALID = math.inf - math.inf


def _each(fr: Frame, var: str, items, body) -> list:
    """``body`` with local ``var`` bound to each item in turn (then to its outer value if it had one): a comprehension's values."""
    loc = fr.l
    saved = {var: loc[var]} if var in loc else {}
    out = []
    for item in items:
        loc[var] = item
        out.append(body(fr))
    loc.update(saved)
    return out


def _same_items(ty: Ty, src: Ty) -> bool:
    """A sequence whose items have the variable's item type: stored as it is (``s = s @ x`` stays linear)."""
    return ty.kind == "seq" and src.kind == "seq" and src.elem == ty.elem


def _zero(ty: Ty):
    """The value of a variable declared without one."""
    if ty.kind == "tensor":
        return np.zeros(ty.shape) if ty.shape else 0.0
    return {"int": 0, "bool": False, "string": ""}.get(ty.kind)


def _where(node) -> Span:
    """Where a run-time error in ``node``'s operation points: its first character (as in C)."""
    return Span.point(node.span.line, node.span.col)


def _checked_index(i: int, n: int, what: str, span: Span) -> int:
    """``i`` where it indexes an axis of ``n`` (``what``: a "tensor" or "sequence"), else the
    error the C executor reports too (it knows the position, not the index)."""
    if not 0 <= i < n:
        raise error("input", f"{what} index out of range", span)
    return i


def _seq_get(seq, i, span: Span):
    return seq[_checked_index(i, len(seq), "sequence", span)]


def _pow(a, b):
    """C's pow (not ``**``, complex for a negative base; not np.power: sqrt at y = 0.5): ``math.pow`` is C99's
    but raises where C gives ±inf (pow(±0, y < 0), overflow; -inf for a negative base, odd y) or ⊥."""
    a, b = float(a), float(b)
    try:
        return math.pow(a, b)
    except OverflowError:
        return -math.inf if a < 0 and b % 2 == 1 else math.inf
    except ValueError:
        if a == 0:
            return -math.inf if math.copysign(1.0, a) < 0 and b % 2 == 1 else math.inf
        return _INVALID


def _ipow(a, n: int) -> float:
    """x^n for an int n by repeated squaring, as Diderot's executables compute it (:func:`.fieldval.ipow`)."""
    return _div(1.0, FV.ipow(float(a), -n)) if n < 0 else FV.ipow(float(a), n)


def _norm(v) -> float:
    """|v| of a tensor: the squares summed in order, a matrix's row by row, as Diderot's C (FV.contract)."""
    total = float(FV.contract(v, v, np.ndim(v))) if np.ndim(v) > 1 else sum(float(x) * float(x) for x in np.ravel(v))
    return math.sqrt(total) if total >= 0 else math.nan  # (⊥ without its sign bit, as tl_sqrt)


def _div(a, b):
    """a / b with IEEE results for a zero divisor (under np.errstate); a vector over a real is a * (1/b), as diderotc's."""
    if type(a) is float and type(b) is float and b != 0.0:  # the common case
        return a / b
    if isinstance(a, np.ndarray) and a.ndim == 1 and np.ndim(b) == 0:
        return a * _div(1.0, b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.divide(a, b)
    b = float(b)
    if b == 0.0:
        a = float(a)
        # 0/0 is a NaN without its sign bit, as the C executor's tl_div gives (Diderot's
        # executables, on x86, get the processor's default NaN and print -nan)
        return math.nan if a == 0.0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
    return a / b


def _cross_eps(u, w):
    """u × w of tensors as Diderot's executables: Σ_j u_j (Σ_k ε_ijk w_k), each ε·w a product (0·∞ ⊥; lower.py's ×)."""
    lc = np.fromfunction(lambda i, j, k: (i - j) * (j - k) * (k - i) / 2, (3, 3, 3), dtype=int) if len(u) == 3 else np.array([[0.0, 1.0], [-1.0, 0.0]])
    inner = FV.ordered_sum(lc[..., k] * float(w[k]) for k in range(len(u)))
    return FV.ordered_sum(float(u[j]) * inner[..., j] for j in range(len(u)))


_BINARY: dict[str, Callable] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": _div,
    "%": lambda a, b: float(np.fmod(a, b)), "^": _pow, **FV.BILINEAR, "×": _cross_eps,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
_INT_BASIS: dict[str, Callable] = {"min": min, "max": max}  # of ints: ints
#: int + - *: 64-bit two's complement (/ and %: c_div, given where the program divides)
_INT: dict[str, Callable] = {op: _wrapping(_BINARY[op]) for op in "+-*"}
_INT_WHAT = {"/": "division", "%": "remainder"}


def _lerp(a, b, *rest):
    """lerp(a, b, t), or lerp(a, b, x0, x, x1) with t = (x - x0) / (x1 - x0)."""
    t = rest[0] if len(rest) == 1 else _div(rest[1] - rest[0], rest[2] - rest[0])
    return a + t * (np.asarray(b) - a) if isinstance(a, np.ndarray) else a + t * (b - a)


def _clamp(lo, hi, x):
    """lo where x <= lo, else hi where hi <= x, else x (Diderot's order: where lo > hi, below lo gives lo)."""
    if isinstance(x, np.ndarray) or isinstance(lo, np.ndarray) or isinstance(hi, np.ndarray):
        x = np.asarray(x, dtype=np.float64)
        return np.array(np.broadcast_to(np.where(x <= lo, lo, np.where(hi <= x, hi, x)), x.shape), dtype=np.float64)
    return float(lo if x <= lo else hi if hi <= x else x)


def _normalize(v):
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero vector: NaN, as in Diderot's executables
        return v * (1.0 / np.float64(_norm(v)))  # times the reciprocal, as Diderot's executables


_EPS = 16 * np.finfo(np.float64).eps  # Diderot's threshold on a repeated root (absolute: its 2x2s are not scaled)


def _dot(a, b) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] if len(a) == 3 else a[0] * b[0] + a[1] * b[1]


def _unit(v: list) -> list:
    s = math.sqrt(_dot(v, v))
    return [x * (1.0 / s) for x in v] if s > _EPS else v


def _cross(a, b) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _toward(a, b) -> list:  # a + b where they point the same way (a positive dot product), else a - b
    return [x + y for x, y in zip(a, b)] if _dot(a, b) > 0 else [x - y for x, y in zip(a, b)]


with np.errstate(invalid="ignore"):
    _ZERO_BY_ZERO = float(np.float64(0.0) / np.float64(0.0))  # the machine's ⊥ of 0/0, as C's (its sign bit set on x86)


def _eig2(m):
    """evals and evecs of a 2x2 matrix, Diderot's closed form (docs/diderot.md, "Eigenvalues and eigenvectors")."""
    mean = 0.5 * (float(m[0, 0]) + float(m[1, 1]))
    m00, m01, m11 = float(m[0, 0]) - mean, float(m[0, 1]), float(m[1, 1]) - mean
    d = 4.0 * m01 * m01 + (m00 - m11) * (m00 - m11)
    if not d > _EPS:
        return [0.0 + mean, 0.0 + mean], [[1.0, 0.0], [0.0, 1.0]]  # (0 + mean, as Diderot's: a -0 mean gives 0)
    vv = 0.5 * math.sqrt(d)
    e1 = _unit(_toward([m00 - vv, m01], [m01, m11 - vv]))
    return [vv + mean, -vv + mean], [_unit([e1[1], -e1[0]]), e1]


def _eig3(m):
    """evals and evecs of a 3x3 matrix, Diderot's closed form operation for operation, as the C executor's
    tl_eig3 (docs/diderot.md, "Eigenvalues and eigenvectors"): the roots of the cubic of (m - mean)/norm."""
    mean = (float(m[0, 0]) + float(m[1, 1]) + float(m[2, 2])) / 3.0
    a00, a01, a02, a11, a12, a22 = (float(m[i, j]) - (mean if i == j else 0.0) for i, j in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)))
    norm = math.sqrt(a00 * a00 + 2 * a01 * a01 + 2 * a02 * a02 + a11 * a11 + 2 * a12 * a12 + a22 * a22)
    rn = 1.0 / norm if norm > _EPS else 1.0
    a00, a01, a02, a11, a12, a22 = a00 * rn, a01 * rn, a02 * rn, a11 * rn, a12 * rn, a22 * rn
    q = (a01 * a01 + a02 * a02 + a12 * a12 - a00 * a11 - a00 * a22 - a11 * a22) / 3.0
    r = 0.5 * (a00 * a11 * a22 + a02 * (2 * a01 * a12 - a02 * a11) - a00 * a12 * a12 - a01 * a01 * a22)
    d = q * q * q - r * r
    def null1(w):  # a single root's vector: the null direction of m - wI, from the crosses of its rows
        r0, r1, r2 = [a00 - w, a01, a02], [a01, a11 - w, a12], [a02, a12, a22 - w]
        return _toward(_toward(_cross(r0, r1), _cross(r1, r2)), _cross(r0, r2))
    def null2(w):  # a double root's: two perpendicular to the rows of m - wI, from their sum's largest entry
        s = _toward(_toward([a00 - w, a01, a02], [a01, a11 - w, a12]), [a02, a12, a22 - w])
        i = 1 if s[0] * s[0] < s[1] * s[1] else 0
        i = 2 if s[i] * s[i] < s[2] * s[2] else i
        p = [[s[1] - s[2], -s[0], s[0]], [-s[1], s[0] - s[2], s[1]], [-s[2], s[2], s[0] - s[1]]][i]
        return [p, _cross(p, s)]
    if d > _EPS:  # three distinct roots
        theta, mm, s3 = math.atan2(math.sqrt(d), r) / 3.0, math.sqrt(q), math.sqrt(3.0)
        ss, cc = math.sin(theta), math.cos(theta)
        w = [2 * mm * cc, mm * (-cc + s3 * ss), mm * (-cc - s3 * ss)]
        v = [null1(x) for x in w]
    elif abs(r) > _EPS:  # a single and a double root
        u = math.cbrt(r)
        w = [2 * u, -u, -u] if u > 0 else [-u, -u, 2 * u]
        v = [null1(w[0]), *null2(w[1])] if u > 0 else [*null2(w[1]), null1(w[2])]
    else:  # a triple root (⊥ entries too): the axes
        w, v = [0.0, 0.0, 0.0], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    k = 0 if abs(w[0]) > abs(w[2]) else 2  # one right-handed frame, kept on the larger outer value's vector
    v[k] = _unit(v[k])
    s = _dot(v[1], v[k])
    v[1] = _unit([x - s * y for x, y in zip(v[1], v[k])])
    v[2 - k] = _cross(v[0], v[1]) if k == 0 else _cross(v[1], v[2])
    return [x / rn + mean if rn else _ZERO_BY_ZERO for x in w], v  # rn 0 (an ∞ norm): w is 0, and 0/0


def _safe(fn, invalid=math.nan):
    def call(*args):
        with np.errstate(all="ignore"):
            try:
                return fn(*args)
            except (ValueError, OverflowError):
                return invalid
    return call


BASIS: dict[str, Callable] = {
    "sqrt": _safe(lambda x: math.sqrt(x) if x >= 0 else math.nan), "exp": _safe(lambda x: np.exp(x)),
    "log": _safe(lambda x: np.log(x)), "log2": _safe(np.log2), "log10": _safe(lambda x: np.log10(x) if not x < 0 else math.nan),  # (C's log10: nan)
    "sin": _safe(math.sin, _INVALID), "cos": _safe(math.cos, _INVALID), "tan": _safe(math.tan, _INVALID), "asin": _safe(math.asin), "acos": _safe(math.acos),
    "atan": math.atan, "sinh": lambda x: float(np.sinh(x)), "cosh": lambda x: float(np.cosh(x)), "tanh": math.tanh,
    "erf": math.erf, "erfc": math.erfc, "ceil": lambda x: float(np.ceil(x)), "floor": lambda x: float(np.floor(x)),
    "round": lambda x: x if not math.isfinite(x) else float(np.round(x)) if abs(x - math.floor(x)) != 0.5 else float(math.copysign(math.floor(abs(x)) + 1, x)),
    "trunc": lambda x: float(np.trunc(x)), "sgn": lambda x: 1.0 if x > 0 else -1.0 if x < 0 else float(x),  # ±0 and ⊥ as they are (tl_sgn)
    "abs": lambda x: wrap64(abs(x)) if isinstance(x, int) else abs(x),  # |-2^63| wraps to -2^63, as in C
    "atan2": math.atan2, "fmod": _safe(math.fmod, _INVALID), "pow": _pow,
    "min": lambda a, b: float(b if b < a else a), "max": lambda a, b: float(b if a < b else a),  # std::min, std::max
    "lerp": _lerp, "clerp": lambda a, b, *rest: _clamp(a, b, _lerp(a, b, *rest)), "clamp": _clamp, "normalize": _normalize,
    "evals": lambda m: tuple((_eig2 if len(m) == 2 else _eig3)(m)[0]),
    "evecs": lambda m: tuple(np.array(v, dtype=np.float64) for v in (_eig2 if len(m) == 2 else _eig3)(m)[1]),
    "inv": _safe(lambda m: _div(1.0, float(m)) if np.ndim(m) == 0 else FV.inv_det(m)[0]), "det": _safe(lambda m: FV.inv_det(m)[1]),
    "trace": lambda m: float(FV.ordered_sum(np.diagonal(m))), "transpose": lambda m: np.array(m).T, "modulate": lambda a, b: a * b,  # (trace: -0 kept)
    "length": len, "inside": lambda x, f: f.inside(np.asarray(x, dtype=np.float64)),
    "size": lambda v: tuple(v.image.sizes if isinstance(v, FV.BorderImage) else v.sizes),  # an image's samples per axis (border control keeps them)
}


@dataclass
class Compiled:
    """The closures of one program."""

    globals: list  # (name, type, closure or None, is_input)
    state: list  # (name, type, closure)
    update: Callable | None
    stabilize: Callable | None
    global_update: Callable | None
    create_args: list
    create_iters: list  # (name, lo, hi) closures, or (name, seq, None)
    params: list  # (name, type)
    start: Callable | None = None  # the strand's start method (1.0: initialize)
    global_init: Callable | None = None  # the global initialize block (before the strands exist)
    global_start: Callable | None = None  # the global start block (once the strands exist)
    deep: bool = False  # a function calls itself: runs go through run_deep


def compile_program(checked: Checked) -> Compiled:
    comp = Compiler(checked)
    program = checked.program
    comp.functions.update((d.name, comp.function(d)) for d in program.decls if isinstance(d, A.FunctionDecl))
    globals_ = []
    for decl in program.decls:
        if isinstance(decl, A.FunctionDecl):
            continue
        ty, is_input = checked.globals[decl.name], isinstance(decl, A.InputDecl)
        init = decl.default if isinstance(decl, A.InputDecl) else decl.init
        if isinstance(decl, A.GlobalDecl) and decl.param is not None:  # F(x) = formula
            closure = comp.field_fn(decl, ty)
        else:  # ("load", the file's name or None, span): a file read when the run starts
            closure = None if init is None else _load(init) or comp.expr(init)
        globals_.append((decl.name, ty, closure, is_input))
    strand = program.strand
    state = [(sv.name, from_syntax(sv.type), None if sv.init is None else comp.expr(sv.init)) for sv in strand.state]
    iters = [(it.name, comp.expr(it.domain.lo), comp.expr(it.domain.hi)) if isinstance(it.domain, A.Range)
             else (it.name, comp.expr(it.domain), None) for it in program.create.iters]

    def block(b, where: str = "strand"):  # ("global": the start and update blocks; diderotc's initialize block reads a
        # field local's globals where it is declared, rev54c)
        comp.in_global = where == "global"
        try:
            return comp.stmt(b) if b is not None else None
        finally:
            comp.in_global = False
    return Compiled(
        globals_, state, block(strand.method("update")), block(strand.method("stabilize")), block(program.update, "global"),
        [comp.expr(a) for a in program.create.args], iters,
        [(p.name, from_syntax(p.type)) for p in strand.params],
        start=next((comp.stmt(b) for m, b in strand.methods if m in ("start", "initialize")), None),
        global_init=block(program.initialize), global_start=block(program.start, "global"), deep=bool(comp.recursive))


_deep_lock = threading.Lock()
_deep_runs = [0, 0]  # runs in deep threads now, Python's recursion limit before the first


def run_deep(fn: Callable[[], Any]) -> Any:
    """``fn()`` in a thread with a deep stack and recursion limit (restored after the last such run)."""
    box: dict[str, Any] = {}

    def work():
        with np.errstate(all="ignore"):
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, raised there
                box["error"] = exc
    with _deep_lock:  # (stack_size holds for every thread started meanwhile: one start at a time)
        if _deep_runs[0] == 0:  # before the start: a thread keeps the limit it started with
            _deep_runs[1] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_deep_runs[1], DEEP_FRAMES))
        _deep_runs[0] += 1
        old = threading.stack_size()
        try:
            threading.stack_size(DEEP_STACK)
            worker = threading.Thread(target=work, name="diderot-interp", daemon=True)
            worker.start()
        except (RuntimeError, ValueError):  # no thread of that stack here: the ordinary limits hold
            worker = None
        finally:
            threading.stack_size(old)
    try:
        if worker is not None:
            worker.join()
    finally:
        with _deep_lock:
            _deep_runs[0] -= 1
            if _deep_runs[0] == 0:
                sys.setrecursionlimit(_deep_runs[1])
    if worker is None:
        return fn()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _load(e) -> tuple | None:
    """``("load", the file's name (None: not a string literal), span)`` for ``load("f")``, ``image("f")``; else None."""
    if isinstance(e, A.Load) or (isinstance(e, A.Apply) and isinstance(e.func, A.Var) and e.func.name == "load"):
        path = e.path if isinstance(e, A.Load) else e.args[0]
        return ("load", path.value if isinstance(path, A.Str) else None, e.span)
    return None


def within_sphere(points: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """Which ``points`` (N, d) ``sphere(radius)`` at ``center`` finds, by Diderot's runtime's test: the squared
    distance, summed axis by axis into a float32 (even in a --double build), strictly below radius²."""
    total = np.zeros(len(points), dtype=np.float32)
    for a in range(points.shape[1]):
        d = points[:, a] - center[a]
        total = (total.astype(np.float64) + d * d).astype(np.float32)
    return total.astype(np.float64) < radius * radius


# ---------------------------------------------------------------- the run
class Runtime:
    """One run of a program: its globals, its strands and what it printed."""

    def __init__(self, checked: Checked, compiled: Compiled, base_dir: str | None = None):
        self.c, self.p, self.base_dir = checked, compiled, base_dir
        self.g: dict[str, Any] = {}
        self.first: dict[str, Any] = {}  # the globals as the global blocks found them (create)
        self.strands: list[Strand] = []
        self.printed: list[str] = []
        self.pending: list[Strand] = []
        self.snapshot: list[tuple[Strand, dict]] | None = None
        self._tree = None
        #: the living strands in Diderot's permuted ("indirect") order where it keeps one (see :meth:`step`)
        self.order: list[Strand] | None = None
        self.indirect = permuted(checked)
        self.unstarted: list[Strand] = []  # strands whose start method has not run
        self.making: int | None = None  # while the initial strands are made: how many (diderotc's counts then)
        self.frozen: tuple[int, int] | None = None  # (active, stable) at the step's start, before its starts: freeze
        #: of each printed text: the steps done before its step (-1: before the first) and its strand (-1: a global block)
        self.print_owner: list[tuple[int, int]] = []
        self.made, self.every = -1, 0  # (every: -s N, Diderot's executable runs N steps at a time: its prints so)
        #: ``within(done, total)`` every few thousand updates of a super-step (a progress line), or None
        self.within: Callable[[int, int], None] | None = None
        self.bsp = bulk_synchronous(checked)
        self.depth = 0  # calls of recursive functions under way (MAX_CALL_DEPTH)
        typed = compiled.params + [(n, t) for n, t, _ in compiled.state]  # what the strands made take (the dead too)
        self.strand_cost, self.held, self.budget = strand_bytes([t for _, t in typed]), 0, memory_budget_bytes()
        self.seq_state = [(n, item_bytes(t.elem)) for n, t in typed if t is not None and t.kind == "seq" and t.n is None]

    def printed_text(self) -> str:
        """What ``print`` wrote, in the order Diderot's executable writes it (docs/diderot-language.md, "Differences")."""
        if self.bsp:
            return "".join(self.printed)
        return "".join(self.printed[i] for i in print_order(self.print_owner, self.every))

    def alive(self) -> list[Strand]:
        """The living strands in Diderot's order (updates, queries and reductions go so)."""
        if self.order is None:
            return [s for s in self.strands if s.status != DEAD]
        return self.order

    def image(self, path, want: tuple | None = None, span=None):  # want: Checked.images's
        try:
            img = path if isinstance(path, Image) else load_image(file_path(str(path), self.base_dir))
        except TensorLangError as exc:  # a file that cannot be read: at its image("file") where there is one
            if span is None or exc.diagnostics[0].span is not None:
                raise
            raise error(exc.code, exc.message, span) from None
        if want is not None and (img.dim != want[1].dim or want[2] and img.voxel_shape != want[1].shape):
            raise error("input", f"image({str(path)!r}) in the definition of {want[0]} ({want[1]}) is {img.dim}-D "
                                 f"with voxels of shape {list(img.voxel_shape)}", span)
        return img

    def sequence(self, value, elem: Ty | None):
        cast = {"int": int, "bool": bool}.get(elem.kind if elem is not None else "", float)
        if isinstance(value, str):
            # an NRRD of N items, NRRD axis 0 fastest: the other axes hold an item's components, row-major
            per, what = max(1, components(elem)), f"the sequence file {value!r}"
            data = _read_items(file_path(value, self.base_dir), lambda n: check_allocation(n // per, item_bytes(elem), what))
            size = int(np.prod(elem.shape)) if elem is not None and elem.kind == "tensor" else 1
            if data.ndim == 1 and size > 1 and len(data) == size:  # one item in a 1-D file (a line of text), as Diderot's
                data = data.reshape(size, 1)
            if int(np.prod(data.shape[:-1])) != size:  # (Diderot's: "expected 2 values per sequence element")
                raise error("input", f"{value!r} holds items of {data.size // max(1, data.shape[-1])} number(s), not {size} ({elem}; one a line)")
            if elem is not None and elem.kind == "tensor" and elem.shape:
                items = np.ravel(data, order="F").reshape((-1,) + tuple(elem.shape))
                return tuple(np.array(x, dtype=np.float64) for x in items)  # (a float file: reals are doubles)
            got = np.ravel(data, order="F").tolist()  # (an int's 1.5 refused, as a Python list's is: it was cut to 1)
            if cast is int and (bad := next((n for n in got if not is_int64(n)), None)) is not None:
                raise error("input", f"{value!r} holds {bad:.6g}, no 64-bit int ({elem})")  # (was an OverflowError)
            return tuple(map(cast, got))
        if elem is not None and elem.kind == "tensor" and elem.shape:
            arr = np.asarray(value, dtype=np.float64).reshape((-1,) + elem.shape)
            return tuple(np.array(x) for x in arr)
        # (items as Python's numbers: a float32 array's computed in doubles, a bool's true or false, as in C)
        return tuple(cast(x) if elem is None or elem.kind != "seq" else self.sequence(x, elem.elem) for x in value)

    def frame(self, strand: Strand | None, loc=None) -> Frame:
        return Frame(self.g, strand.state if strand else {}, {} if loc is None else loc, strand, self)

    def make_strand(self, args) -> Strand:
        state: dict[str, Any] = {}
        for (name, ty), v in zip(self.p.params, args):
            state[name] = coerce(ty, v)
        strand = Strand(len(self.strands) + len(self.pending), state)
        fr = self.frame(strand, state)
        for name, ty, init in self.p.state:
            state[name] = coerce(ty, init(fr)) if init is not None else _zero(ty)
        self.held += self.strand_cost + sum(len(state[name]) * b for name, b in self.seq_state)
        if self.held > self.budget:  # a storm of new is refused here, at the strand that passes the budget
            raise error("too-large", f"{strand.id + 1:,} strands ({len(self.pending):,} made by new in this super-step)"
                        f" take {_human(self.held)}, more than the memory budget of {_human(self.budget)}")
        return strand

    def count(self, which, program: bool = False) -> int:  # (in the initial strands' initializers: all, active, as diderotc)
        if program and self.frozen is not None:  # (numStrands() etc. in a step of a permuted program)
            return self.frozen[0] * (ACTIVE in which) + self.frozen[1] * (STABLE in which)
        return sum(1 for s in self.strands if s.status in which) if self.making is None else self.making * (ACTIVE in which)

    def freeze(self) -> None:  # diderotc's permuted (indirect) strand array counts at each step's end
        self.frozen = self.frozen or ((self.count((ACTIVE,)), self.count((STABLE,))) if self.indirect else None)

    def states(self, which):
        return [s.state for s in self.alive() if s.status in which]

    def sphere(self, fr: Frame, center, radius):
        if self.snapshot is None:
            return []
        if self._tree is None:
            from scipy.spatial import cKDTree
            pts = np.array([np.atleast_1d(st["pos"]) for _, st in self.snapshot], dtype=np.float64)
            # a strand whose position is not finite (NaN, ±inf) is no strand's neighbour
            self._finite = np.flatnonzero(np.all(np.isfinite(pts), axis=1)) if len(pts) else np.zeros(0, np.intp)
            self._tree = cKDTree(pts[self._finite]) if len(self._finite) else None
        if self._tree is None:
            return []
        at = np.atleast_1d(fr.s["pos"] if center is None else center).astype(np.float64)
        radius = float(radius)
        if not np.all(np.isfinite(at)) or not radius > 0:
            return []
        # candidates from the tree, a little beyond the radius; then Diderot's own test
        try:
            found = np.array(sorted(self._tree.query_ball_point(at, radius * (1 + 1e-6) + 1e-300)), dtype=np.intp)
        except ValueError:  # (scipy refuses distances that overflow: positions near 1e308) every strand a candidate
            found = np.arange(len(self._finite))
        if len(found):
            found = self._finite[found[within_sphere(self._tree.data[found], at, radius)]]
        return [st for i in found for s, st in (self.snapshot[i],) if s is not fr.strand]

    def run_start(self) -> None:
        """The start methods of the strands not yet started (docs/diderot-language.md, "Syntax")."""
        start, fresh = self.p.start, {id(s) for s in self.unstarted}
        if self.c.communicates:  # queries find the living strands as the step found them, before any start (diderotc)
            self.snapshot, self._tree = [(s, dict(s.state)) for s in self.alive()], None
        for strand in self.unstarted:
            if strand.status == ACTIVE and start is not None:
                self._method(start, strand)
        self.unstarted, self.snapshot = [], None
        if self.indirect:  # Diderot's permuted array: the stable, the active, then the fresh walked as an update walks them
            alive = self.strands if self.order is None else self.order  # (a stable one to the first active place, a dead one last)
            old = [s for s in alive if id(s) not in fresh and s.status != DEAD]
            order = sorted(old, key=lambda s: s.status != STABLE) + [s for s in alive if id(s) in fresh]
            ix, n_stable, dying = len(old), sum(s.status == STABLE for s in old), 0
            while ix < len(order) - dying:
                jx = n_stable if order[ix].status == STABLE else len(order) - dying - 1 if order[ix].status == DEAD else ix
                order[ix], order[jx], n_stable = order[jx], order[ix], n_stable + (order[ix].status == STABLE)
                dying, ix = dying + (order[jx].status == DEAD), ix + (order[jx].status != DEAD)
            self.order = order[:len(order) - dying]

    def _method(self, body: Callable | None, strand: Strand) -> None:
        """A strand method (None: an update that stabilizes at once), ended by continue, stabilize or die."""
        try:
            if body is None:
                raise _Stabilize()
            body(self.frame(strand))
        except _Continue:
            pass
        except _Stabilize:
            self.stabilize(strand)
        except _Die:
            strand.status = DEAD

    def stabilize(self, strand: Strand) -> None:
        if self.p.stabilize is not None:
            try:
                self.p.stabilize(self.frame(strand))
            except (_Stabilize, _Continue):
                pass
            except _Die:
                strand.status = DEAD
                return
        strand.status = STABLE

    def step(self) -> None:
        """One super-step, in Diderot's permuted order where it has one (docs/diderot-language.md, "Differences")."""
        self.freeze()  # (the first step's: before the initial strands' start methods, create)
        if self.p.start is not None and self.unstarted:  # strands made by new start now
            self.run_start()
        # (not permuted: creation order; stable and dead strands stay in place)
        order = self.alive() if self.indirect else [s for s in self.strands if s.status != DEAD]
        if self.c.communicates:
            self.snapshot = [(s, dict(s.state)) for s in order]
            self._tree = None
        update, within, done = self.p.update, self.within, 0
        n_stable = sum(1 for s in order if s.status == STABLE) if self.indirect else 0
        ix, stabilizing, dying = n_stable, 0, 0
        while ix < len(order) - dying:
            strand = order[ix]
            if strand.status != ACTIVE:  # a direct array: stable strands stay in place
                ix += 1
                continue
            done += 1
            if within is not None and done % 2048 == 0:
                within(done, len(order))
            self._method(update, strand)
            if strand.status == STABLE and self.indirect:  # to the first active position
                jx = n_stable + stabilizing
                order[ix], order[jx] = order[jx], order[ix]
                stabilizing += 1
            elif strand.status == DEAD and self.indirect:  # to the last living one, which updates in its place
                dying += 1
                jx = len(order) - dying
                order[ix], order[jx] = order[jx], order[ix]
                continue
            ix += 1
        self.order = [s for s in order[:len(order) - dying] if s.status != DEAD] + self.pending
        self.strands.extend(self.pending)
        self.unstarted.extend(self.pending)
        self.pending, self.frozen = [], None
        start, self.snapshot = self.snapshot, None
        if self.p.global_update is not None:
            try:
                self.p.global_update(self.frame(None))
            except _Stabilize:
                before = {id(s): st for s, st in start or ()}  # the shared variables of the step's start come back
                for s in self.alive():
                    if s.status == ACTIVE:
                        s.state.update({name: before[id(s)][name] for name in self.c.shared} if id(s) in before else {})
                        self.stabilize(s)
            except _Die:
                for s in self.strands:
                    if s.status == ACTIVE:
                        s.status = DEAD
                self.order = [s for s in self.alive() if s.status != DEAD]
            except _Continue:
                pass


#: The largest plain-text sequence file read (one item a line): 256 MiB.
MAX_TEXT_BYTES = 1 << 28


def _read_items(path: str, bound: Callable[[int], object]) -> np.ndarray:
    """A sequence file's samples, the fastest axis first: NRRD, text (one item a line) or ``.npy`` (reversed);
    ``bound`` called with (at most) the number of numbers before they are read (it raises to refuse)."""
    from ...sampling.image import _load_npy, _regular_file, read_nrrd  # regular files, headers checked first
    try:
        if path.lower().endswith(".npy"):
            return np.asarray(_load_npy(path, bound), dtype=np.float64).T
        size = _regular_file(path, "sequence file")
        with open(path, "rb") as f:  # (once: its first bytes say what it is)
            text = f.read(4)
            text += f.read(MAX_TEXT_BYTES + 1 - len(text)) if text != b"NRRD" and size <= MAX_TEXT_BYTES else b""
        if text[:4] != b"NRRD":  # a plain text file: one item a line, or one line of numbers (1-D), as Teem reads it
            if (size := max(size, len(text))) > MAX_TEXT_BYTES:  # (what was read, too: it grew since)
                raise error("too-large", f"sequence file {path!r} has {size} bytes; a text sequence holds at most {MAX_TEXT_BYTES}")
            text = text.replace(b",", b" ")  # (commas separate numbers too, as in Teem: "1,2" is 1 2)
            bound((b" " + text.translate(_WORDS)).count(b" x"))  # (at most the numbers it holds)
            with warnings.catch_warnings():  # (numpy's "input contained no data", into tensorlang's source line)
                warnings.simplefilter("ignore")
                lines = io.StringIO(text.decode("latin-1"))
                try:
                    rows = np.loadtxt(lines, dtype=np.float32, ndmin=2)  # floats, as Teem
                except ValueError:  # a hex number (0x10, 0x1p3), as C's strtod reads it for Teem: the slow way
                    lines.seek(0)
                    rows = np.loadtxt(lines, dtype=np.float32, ndmin=2, converters=_c_number)
                rows = rows.astype(np.float64)
            if not rows.size:  # (it was "holds items of sizes [1]")
                raise error("input", f"sequence file {path!r} holds no numbers (an empty file, or only comments)")
            return rows[0] if len(rows) == 1 else rows.T
        data, _ = read_nrrd(path, bound=bound)
    except TensorLangError:
        raise
    except MemoryError:
        raise error("too-large", f"sequence file {path!r} does not fit in memory") from None
    except (OSError, ValueError, KeyError, IndexError, TypeError, StopIteration) as exc:  # pynrrd, a bad file
        raise error("input", f"cannot read the sequence file {path!r}: {type(exc).__name__}: {exc}") from None
    if np.asarray(data).dtype.kind not in "iufb":
        raise error("input", f"sequence file {path!r} holds {np.asarray(data).dtype} data, not numbers")
    return np.asarray(data)


#: blanks to " ", anything else to "x": a text's words are then its " x" (after a leading " "), counted with no word made
_WORDS = bytes(32 if c in b" \t\n\r\v\f" else 120 for c in range(256))


def _c_number(word: str) -> float:
    """A number as C's strtod reads it (Teem's text reader): Python's, or hexadecimal (``0x10``, ``-0x1p3``)."""
    return float.fromhex(word) if re.fullmatch(r"\s*[-+]?0[xX][0-9a-fA-F.]+([pP][-+]?\d+)?\s*", word) else float(word)


def create(rt: Runtime):
    """The initial strands and a grid's shape (begin runs the start blocks)."""
    p = rt.p
    rt.first = dict(rt.g)  # (the globals' first values, which fields keep of a global whose assignments diderotc drops)
    if p.global_init is not None:  # the global initialize block: the globals have their values, no strand exists
        _global_block(rt, p.global_init)
    fr = rt.frame(None)
    ranges: list[tuple[str, Any]] = [(name, list(lo(fr)) if hi is None else range(lo(fr), hi(fr) + 1))
                                     for name, lo, hi in p.create_iters]  # a range's length: checked below
    shape = tuple(max(0, r.stop - r.start) if isinstance(r, range) else len(r) for _, r in ranges)  # (len overflows)
    total = math.prod(shape)  # Python ints: numpy's int64 product wraps
    if total * rt.strand_cost > rt.budget:
        raise error("too-large", f"{shown_count(total)} strands of {_human(rt.strand_cost)} do not fit in the memory budget of {_human(rt.budget)}")
    rt.making = total
    for combo in itertools.product(*[r for _, r in ranges]):
        loc = dict(reversed([(name, v) for (name, _), v in zip(ranges, combo)]))  # (the first of one name, as diderotc)
        args = [a(Frame(rt.g, {}, loc, None, rt)) for a in p.create_args]
        rt.strands.append(rt.make_strand(args))
    rt.making = None
    return shape


def begin(rt: Runtime) -> None:
    """After create (and snapshot 0): the global start block, then the strands' start methods."""
    p = rt.p
    if p.global_start is not None:
        _global_block(rt, p.global_start)
    if p.start is not None:
        rt.unstarted = list(rt.strands)
        rt.freeze()
        rt.run_start()


def _global_block(rt: Runtime, block) -> None:
    try:
        block(rt.frame(None))
    except (_Stabilize, _Die, _Continue):
        pass
