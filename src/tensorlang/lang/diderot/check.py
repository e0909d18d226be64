"""The Diderot typechecker: every expression's type, every name's scope, the basis library's overloads,
and error[CODE] at the position of the first ill-typed construct (docs/diderot-language.md, "Types and errors")."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import NoReturn

from ...errors import TensorLangError, error
from ...sampling.kernels import KERNELS
from ..language import file_path
from . import ast as A
from . import basis
from .needs_bsp import counts_kept
from .types import BOOL, INT, REAL, STRING, VOID, Ty, assignable, elem, from_syntax, is_num, tensor

REDUCTIONS = ("sum", "mean", "max", "min", "product", "all", "exists")
SETS = ("all", "active", "stable")


@dataclass
class Checked:
    """A typechecked program: the tree, each node's type and scope (by ``id``), the globals, functions, strand."""

    program: A.Program
    types: dict[int, Ty] = field(default_factory=dict)
    scopes: dict[int, str] = field(default_factory=dict)  # id(Var) -> global|state|local|kernel|func
    globals: dict[str, Ty] = field(default_factory=dict)
    functions: dict[str, A.FunctionDecl] = field(default_factory=dict)
    state: dict[str, Ty] = field(default_factory=dict)
    params: dict[str, Ty] = field(default_factory=dict)
    communicates: bool = False  # the strands read each other's state (sphere queries)
    counts: bool = False  # strands count the strands where diderotc keeps it (needs_bsp.py)
    #: the state variables strands read from each other (``P.x``, ``pos``): two copies (interp.Runtime.step)
    shared: set[str] = field(default_factory=set)
    #: ``F(x) = ...``: name -> "field" (typed with x the identity field: with derivatives) or "point" (probes only)
    field_fns: dict[str, str] = field(default_factory=dict)
    images: dict[int, tuple[str, Ty, bool]] = field(default_factory=dict)  # image("file"): Checker.images

    @property
    def name(self) -> str:
        return self.program.strand.name


#: Where a statement may stand (``Checker.where``), and the words of its error[syntax].
PLACES: dict[type, tuple[tuple[str, ...], str]] = {
    **dict.fromkeys((A.Stabilize, A.Die), (("strand", "update"), "a strand's start and update methods and the global update and start blocks")),
    A.Continue: (("strand", "stabilize"), "strand methods"), A.New: (("strand",), "a strand's start and update methods"),
    A.Return: (("function",), "functions")}  # (where "stabilize": a strand's stabilize method, as diderotc)


class _Scope:
    def __init__(self, parent: "_Scope | None", kind: str, names: dict[str, Ty] | None = None):
        self.parent, self.kind = parent, kind
        self.names: dict[str, Ty] = dict(names or {})

    def lookup(self, name: str):
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name], scope.kind
            scope = scope.parent
        return None, None


class Checker:
    def __init__(self, program: A.Program, folder: str | None = None):
        self.c = Checked(program)
        self.strand = program.strand
        self.where = "global"  # global | function | strand | update (the global block)
        self.result: Ty | None = None
        self.folder = folder  # where image("file") is looked for first (the program file's folder)
        self.declaring: str | None = None  # the global whose value is being checked
        self.whole: object = None  # the whole value of the global being checked

    # ---------------------------------------------------------------- helpers
    def fail(self, code: str, message: str, node, *compared: Ty) -> NoReturn:
        """error[code] ``message`` at ``node``, advising to declare an image where a type ``compared`` has none."""
        if any(t.kind in ("field", "image") and t.dim is None for t in compared):
            message += ': declare the image with its type to use it so (image(2)[] img = image("file.nrrd");)'
        raise error(code, message, getattr(node, "span", None))

    def space(self, t: Ty, node) -> int:
        """The dimension of field (or image) type ``t``."""
        if t.dim is None:
            self.fail("shape", f"{t} has no dimension", node, t)
        return t.dim

    def note(self, node, ty: Ty) -> Ty:
        self.c.types[id(node)] = ty
        return ty

    def expect(self, target: Ty, value: Ty, node, what: str) -> None:
        if not assignable(target, value):
            self.fail("assign-shape", f"{what}: expected {target}, got {value}", node, target, value)

    # ---------------------------------------------------------------- program
    def run(self) -> Checked:
        program = self.c.program
        top = _Scope(None, "global")
        top.names.update((name, Ty("kernel", k=kernel.continuity)) for name, kernel in KERNELS.items())
        for decl in program.decls:
            if decl.name in self.c.functions or decl.name in self.c.globals:
                self.fail("redeclared", f"{decl.name} is declared twice", decl)
            if isinstance(decl, A.FunctionDecl):
                self.c.functions[decl.name] = decl
                self.function(decl, top)
                continue
            ty = from_syntax(decl.type)
            if isinstance(decl, A.InputDecl) and ty.kind in ("field", "kernel"):  # diderotc: "has invalid type"
                self.fail("shape", f"input {decl.name} is {ty}: an input is a value, a sequence or an image", decl)
            init = decl.default if isinstance(decl, A.InputDecl) else decl.init
            if isinstance(decl, A.GlobalDecl) and decl.param is not None:
                ty = self.field_fn(decl, ty, top)
            elif init is not None:
                loaded = isinstance(decl, A.InputDecl) and isinstance(init, A.Apply) and isinstance(init.func, A.Var) \
                    and init.func.name == "load"
                # an input's image("file") is a default the run may replace: its header is not read
                self.declaring = None if isinstance(decl, A.InputDecl) else decl.name
                self.whole = init  # the one place a load("file") may stand (_loaded)
                if isinstance(init, A.Apply) and loaded:
                    self._loaded(init, init.args[0] if init.args else init)
                value = self.note(init, ty) if loaded else self.expr(init, top)
                self.declaring = self.whole = None
                if ty.kind == "field" and ty.k is None and value.kind == "field":
                    ty = Ty("field", ty.shape, ty.dim, value.k)
                self.expect(ty, value, init, f"the value of {decl.name}")
                if ty.kind in ("field", "image"):
                    self.images(init, decl.name, ty)
            elif not isinstance(decl, A.InputDecl) and ty.kind in ("field", "image", "kernel"):
                self.fail("uninit", f"{decl.name} has no value", decl)
            top.names[decl.name] = self.c.globals[decl.name] = ty
        self.strand_decl(program.strand, top)
        for block, where in ((program.start, "update"), (program.initialize, "initialize"), (program.update, "update")):
            if block is not None:  # (stabilize and die end strands: not in the initialize block, before any)
                self.where = where
                self.block(block, _Scope(top, "local"))
        self.create(program.create, top)
        _Inits(self).program(program)
        self.c.counts = counts_kept(program)
        return self.c

    def field_fn(self, decl: A.GlobalDecl, ty: Ty, top: _Scope) -> Ty:
        """``field#k(d)[s] F(x) = e;``: e typed with x the identity field (F has derivatives where
        e's operations do) and with x a tensor[d], as diderotc types it (if only so, F is only probed)."""
        if ty.kind != "field" or ty.dim is None:
            self.fail("shape", f"{decl.name}({decl.param}) = ... defines a field: its type must be a field type", decl)
        assert decl.init is not None and decl.param is not None
        d, k = ty.dim, ty.k if ty.k is not None else 2
        pos = tensor(d) if d > 1 else REAL
        scope = _Scope(top, "local", {decl.param: Ty("field", pos.shape, d, k + 8)})  # the identity field is smooth
        saved = dict(self.c.types), dict(self.c.scopes)
        try:
            value, mode = self.expr(decl.init, scope), "field"
            if value.kind == "field" and (value.dim != d or value.shape != ty.shape):
                raise error("assign-shape", "not the declared field", None)
            kept, scope.names[decl.param] = (dict(self.c.types), dict(self.c.scopes)), pos
            if self.expr(decl.init, scope).kind == "field":  # at a point: a tensor, not `tent ⊛ img`
                raise error("assign-shape", "a field at a point", None)
            self.c.types, self.c.scopes = kept
        except TensorLangError:
            (self.c.types, self.c.scopes), scope.names[decl.param] = saved, pos
            value, mode = self.expr(decl.init, scope), "point"
        want = tensor(*ty.shape) if ty.shape else REAL
        if not assignable(want, value) and (value.kind != "field" or mode == "point"):
            self.fail("assign-shape", f"the formula of {decl.name}: expected {want}, got "
                      f"{'a field' if value.kind == 'field' else value}", decl.init, value)
        self.c.field_fns[decl.name] = mode
        return Ty("field", ty.shape, d, ty.k)

    def images(self, e, name: str, ty: Ty, exact: bool = True) -> None:
        """Note each ``image("file")`` of unknown dimension in global ``name``'s value ``e`` (``Checked.images``): the
        run checks its dimension against ``ty``, and while ``exact`` (not under |F|, normalize) its voxel shape."""
        if isinstance(e, A.Load):
            self.c.images[id(e)] = (name, ty, exact)
        keeps_voxels = isinstance(e, A.Cond) or getattr(e, "op", "") in ("+", "-", "⊛")
        if isinstance(e, A.Apply) and getattr(e.func, "name", "") in ("clamp", "wrap", "mirror"):
            keeps_voxels = True
        for x in A.children(e):
            t = self.c.types.get(id(x))
            if t is not None and t.kind in ("field", "image") and t.dim is None:
                self.images(x, name, ty, exact and keeps_voxels)

    def function(self, decl: A.FunctionDecl, top: _Scope) -> None:
        scope = _Scope(top, "local", {p.name: from_syntax(p.type) for p in decl.params})
        for i, p in enumerate(decl.params):
            if p.name in [q.name for q in decl.params[:i]]:
                self.fail("redeclared", f"{decl.name} has two parameters called {p.name}", p)
        self.where, self.result = "function", from_syntax(decl.result)
        if isinstance(decl.body, A.Block):
            self.block(decl.body, scope)
        else:
            value = self.expr(decl.body, scope)
            self.expect(self.result, value, decl.body, f"the result of {decl.name}")
        self.where, self.result = "global", None

    def strand_decl(self, strand: A.Strand, top: _Scope) -> None:
        scope = _Scope(top, "state")
        for p in strand.params:
            scope.names[p.name] = self.c.params[p.name] = from_syntax(p.type)
        self.where = "strand"
        for sv in strand.state:
            ty = self.c.state[sv.name] = self.s_Decl(sv, scope, "")
            base = ty
            while base.kind == "seq" and base.elem is not None:
                base = base.elem
            if sv.output and base.kind not in ("int", "bool", "tensor"):
                self.fail("shape", f"output {sv.name} is {ty}: an output holds ints, bools, reals or tensors "
                                   "(or sequences of them), which NRRD files hold", sv, ty)
        files: dict[str, str] = {}  # an output's files and options spell a prime as p (y' -> yp.nrrd, -o-yp)
        for sv in (sv for sv in strand.state if sv.output):
            if (other := files.setdefault(file := sv.name.replace("'", "p"), sv.name)) != sv.name:
                self.fail("redeclared", f"outputs {other} and {sv.name} would both be written to {file}.nrrd: rename one", sv)
        if (missing := "output variable" if not any(sv.output for sv in strand.state) else None if "update" in dict(strand.methods)
                else "update method"):  # (diderotc: "missing an update method")
            self.fail("syntax", f"strand {strand.name} has no {missing}", strand)
        for name, body in strand.methods:
            self.where = "stabilize" if name == "stabilize" else "strand"
            self.block(body, _Scope(scope, "local"))
        self.where = "global"

    def create(self, create: A.Create, top: _Scope) -> None:
        if create.strand != self.strand.name:
            self.fail("undeclared", f"no strand called {create.strand}", create)
        if create.grid:  # a grid's outputs have one entry per strand: none may die or be born
            kinds = A.kinds((self.strand, self.c.program.start, self.c.program.initialize, self.c.program.update))
            for cls, word in ((A.Die, "die"), (A.New, "new")):
                if cls in kinds:
                    self.fail("syntax", f"a grid of strands (initially [ ... ], create_array) cannot use '{word}': "
                                        "create a collection (initially { ... }, create_collection) instead", create)
        scope, outer = _Scope(top, "local"), _Scope(top, "local")  # (the ranges see no iterator, as in diderotc)
        for it in create.iters:  # (of two iterators of one name, the first is bound, as in diderotc)
            if isinstance(it.domain, A.Range):
                for end in (it.domain.lo, it.domain.hi):
                    self.integer(end, outer, "an iteration range's ends are integers")
                scope.names.setdefault(it.name, INT)
            else:
                dom = self.expr(it.domain, outer)
                if create.grid or dom.kind != "seq":
                    self.fail("shape", "a grid iterates over integer ranges a..b", it.domain)
                scope.names.setdefault(it.name, elem(dom))
        self.new_args(create.strand, create.args, scope, create)

    def new_args(self, name: str, args, scope: _Scope, node) -> None:
        params = self.strand.params
        if len(args) != len(params):
            self.fail("shape", f"strand {name} takes {len(params)} arguments, got {len(args)}", node)
        for p, a in zip(params, args):
            self.expect(from_syntax(p.type), self.expr(a, scope), a, f"strand parameter {p.name}")

    def block(self, block: A.Block, scope: _Scope) -> None:
        inner = _Scope(scope, "local")
        for stmt in block.stmts:
            self.stmt(stmt, inner)

    def stmt(self, s, scope: _Scope) -> None:
        """Check ``s`` where its kind may stand, by the rule ``s_KIND`` (stabilize, die, continue have none)."""
        places, words = PLACES.get(type(s), (None, ""))
        if places is not None and self.where not in places:
            self.fail("syntax", f"{type(s).__name__.lower()} is allowed only in {words}", s)
        getattr(self, "s_" + type(s).__name__, lambda s, scope: None)(s, scope)

    s_Block = block

    def s_Decl(self, s: A.Decl | A.StateDecl, scope: _Scope, where: str = " in this block") -> Ty:
        ty = from_syntax(s.type)
        if s.name in scope.names:
            self.fail("redeclared", f"{s.name} is declared twice{where}", s)
        if s.init is not None:
            self.expect(ty, self.expr(s.init, scope), s.init, f"the value of {s.name}")
        scope.names[s.name] = ty
        return ty

    def s_Assign(self, s: A.Assign, scope: _Scope) -> None:
        ty, kind = scope.lookup(s.name)
        if ty is None:
            self.fail("undeclared-assign", f"assignment to undeclared variable {s.name}", s)
        self.c.scopes[id(s)] = kind
        if kind == "global" and self.where not in ("update", "initialize"):
            self.fail("read-only", f"global {s.name} can only be assigned in the global update block", s)
        if kind == "state" and s.name in self.c.params:
            self.fail("read-only", f"strand parameter {s.name} cannot be assigned", s)
        value = self.expr(s.value, scope)
        if s.op != "=":
            value = self.binary(s.op[0], ty, value, s)
        self.expect(ty, value, s.value, f"assignment to {s.name}")

    def s_If(self, s: A.If, scope: _Scope) -> None:
        self.expect_bool(s.test, scope)
        self.stmt(s.then, _Scope(scope, "local"))
        if s.other is not None:
            self.stmt(s.other, _Scope(scope, "local"))

    def s_Foreach(self, s: A.Foreach, scope: _Scope) -> None:
        inner = self.bind(s.name, s.domain, scope, True, "foreach iterates over a sequence or a set of strands, not {}")
        item = inner.names[s.name]
        if item.kind == "void":  # over {}: diderotc takes any declared item type (the body never runs)
            item = inner.names[s.name] = from_syntax(s.type)
        if item.kind != "strand" and from_syntax(s.type) != item:  # diderotc: "type mismatch in iterator"
            self.fail("assign-shape", f"foreach ({from_syntax(s.type)} {s.name} in ...) over items of type {item}", s)
        self.stmt(s.body, inner)

    def s_Return(self, s: A.Return, scope: _Scope) -> None:
        self.expect(self.result or VOID, self.expr(s.value, scope), s.value, "the returned value")

    def s_Print(self, s: A.Print, scope: _Scope) -> None:
        for a in s.args:
            self.expr(a, scope)

    def s_New(self, s: A.New, scope: _Scope) -> None:
        if s.strand != self.strand.name:
            self.fail("undeclared", f"no strand called {s.strand}", s)
        self.new_args(s.strand, s.args, scope, s)

    def expr(self, e, scope: _Scope) -> Ty:
        """The type of ``e`` by its kind's rule ``e_KIND`` (as ``interp.Compiler`` compiles it), noted."""
        return self.note(e, getattr(self, "e_" + type(e).__name__)(e, scope))

    def e_Num(self, e: A.Num | A.Str | A.Bool, scope: _Scope) -> Ty:  # (and e_Str, e_Bool: the literals)
        return STRING if isinstance(e, A.Str) else BOOL if isinstance(e, A.Bool) else INT if e.is_int else REAL
    e_Str = e_Bool = e_Num

    def integer(self, e, scope: _Scope, message: str = "an index is an integer") -> None:
        """error[shape] ``message`` at ``e`` unless it is an int (an index, a range's end)."""
        if self.expr(e, scope) != INT:
            self.fail("shape", message, e)

    def expect_bool(self, e, scope: _Scope) -> None:
        t = self.expr(e, scope)
        if t != BOOL:
            self.fail("shape", f"a condition must be bool, not {t}", e, t)

    def e_Var(self, e: A.Var, scope: _Scope) -> Ty:
        ty, kind = scope.lookup(e.name)
        if ty is None:
            if e.name in self.c.functions or e.name in basis.FUNCTIONS:
                self.fail("shape", f"function {e.name} used as a value", e)
            self.fail("undeclared", f"undeclared variable {e.name}", e)
        self.c.scopes[id(e)] = kind
        return ty

    def e_KernelRef(self, e: A.KernelRef, scope: _Scope) -> Ty:
        if e.name not in KERNELS:
            self.fail("undeclared", f"unknown kernel {e.name}", e)
        # diderotc takes ``name#k`` at its word, even above the kernel's continuity (as for c2ctmr)
        return Ty("kernel", k=e.k)

    def e_BinOp(self, e: A.BinOp, scope: _Scope) -> Ty:
        return self.binary(e.op, self.expr(e.left, scope), self.expr(e.right, scope), e)

    def e_Diff(self, e: A.Diff, scope: _Scope) -> Ty:
        t = self.expr(e.operand, scope)
        if t.kind != "field":
            self.fail("shape", f"{e.op} applies to a field, not {t}", e, t)
        if (t.k or 0) < 1:
            self.fail("continuity", f"{e.op} of {t}: the field is not differentiable (its continuity is C{t.k}; "
                                    "reconstruct with a smoother kernel)", e)
        k, d = (t.k or 0) - 1, self.space(t, e)
        if e.op == "∇⊗" and t.shape == ():  # diderotc: "type error for unary operator '∇⊗'"
            self.fail("shape", f"∇⊗ applies to a field of vectors or tensors; use ∇ for {t}", e, t)
        if e.op == "∇" and t.shape != ():  # (in 1-D too: diderotc's "type error for unary operator '∇'")
            self.fail("shape", f"∇ applies to a scalar field; use ∇⊗ for {t}", e, t)
        if d == 1 and e.op in ("∇", "∇⊗"):  # a 1-D field's derivative has no axis of its own
            return Ty("field", t.shape, d, k)
        if e.op == "∇":
            return Ty("field", (d,), d, k)
        if e.op == "∇⊗":
            return Ty("field", t.shape + (d,), d, k)
        if e.op == "∇•":  # of a tensor field: its last axis against the derivative's, as diderotc's
            if t.shape[-1:] != (d,) or d == 1:  # (diderotc has no tensor axis of size 1)
                self.fail("shape", f"∇• applies to a field of vectors (or tensors) of dimension 2 or 3, not {t}", e, t)
            return Ty("field", t.shape[:-1], d, t.k)  # (diderotc's ∇• keeps the field's continuity)
        if t.shape != (d,) or d not in (2, 3):
            self.fail("shape", f"∇× applies to a 2-D or 3-D vector field, not {t}", e, t)
        return Ty("field", () if d == 2 else (3,), d, k)

    def e_Unary(self, e: A.Unary, scope: _Scope) -> Ty:
        t = self.expr(e.operand, scope)
        if e.op == "!":
            if t != BOOL:
                self.fail("shape", f"! applies to bool, not {t}", e, t)
            return BOOL
        if t.kind not in ("int", "tensor", "field"):
            self.fail("shape", f"- applies to numbers, tensors and fields, not {t}", e, t)
        return t

    def e_Cond(self, e: A.Cond, scope: _Scope) -> Ty:
        self.expect_bool(e.test, scope)
        a, b = self.expr(e.then, scope), self.expr(e.other, scope)
        if a == b:
            return a
        if is_num(a) and is_num(b):
            return REAL
        self.fail("shape", f"the branches of a conditional expression differ: {a} and {b}", e, a, b)

    def e_Range(self, e: A.Range, scope: _Scope) -> Ty:
        for end in (e.lo, e.hi):
            self.integer(end, scope, "a range's ends are integers")
        return Ty("seq", elem=INT)

    def e_Norm(self, e: A.Norm, scope: _Scope) -> Ty:
        t = self.expr(e.operand, scope)
        if t.kind == "int":
            return INT
        if t.kind == "tensor":
            return REAL
        if t.kind == "field":
            return Ty("field", (), t.dim, t.k)
        self.fail("shape", f"|x| applies to numbers, tensors and fields, not {t}", e, t)

    def e_Index(self, e: A.Index, scope: _Scope) -> Ty:
        t = self.expr(e.operand, scope)
        for i in e.indices:
            if i is not None:
                self.integer(i, scope)
        if t.kind == "seq":
            if len(e.indices) != 1 or e.indices[0] is None:
                self.fail("shape", "a sequence takes one index", e)
            return elem(t)
        if t.kind not in ("tensor", "field") or len(e.indices) != len(t.shape):
            self.fail("shape", f"{t} cannot be indexed with {len(e.indices)} indices", e, t)
        if t.kind == "field":  # a component or slice of a tensor field: constant indices, as diderotc asks
            for i in e.indices:
                if i is not None and not (isinstance(i, A.Num) and i.is_int):
                    self.fail("shape", "a field is indexed by constant integers (F[0], F[1,:])", i)
        for i, n in zip(e.indices, t.shape):
            if isinstance(i, A.Num) and not 0 <= i.value < n:
                self.fail("dim-range", f"index {i.value} is outside 0..{n - 1}", i)
        kept = tuple(n for i, n in zip(e.indices, t.shape) if i is None)
        return Ty("field", kept, t.dim, t.k) if t.kind == "field" else tensor(*kept)

    def e_SeqIndex(self, e: A.SeqIndex, scope: _Scope) -> Ty:
        t = self.expr(e.operand, scope)
        if t.kind != "seq":
            self.fail("shape", f"{{i}} indexes a sequence, not {t}", e, t)
        self.integer(e.index, scope)
        return elem(t)

    def e_Select(self, e: A.Select, scope: _Scope) -> Ty:
        t = self.expr(e.operand, scope)
        if t.kind != "strand":
            self.fail("shape", f".{e.name} selects a strand's variable, not from {t}", e, t)
        if e.name not in self.c.state:
            self.fail("undeclared", f"strand {t.name} has no state variable {e.name}", e)
        if self.where in ("strand", "stabilize"):
            self.c.shared.add(e.name)
        return self.c.state[e.name]

    def e_TensorLit(self, e: A.TensorLit, scope: _Scope) -> Ty:
        ts = [self.expr(x, scope) for x in e.elems]
        if any(t.kind == "field" for t in ts):  # [F, G]: the fields stacked, a field of one more axis
            f = ts[0]
            if any(t.kind != "field" or t.dim != f.dim or t.shape != f.shape or basis.rougher(f, t) for t in ts):
                self.fail("shape", "the elements of a field [..] are fields of one dimension and shape, none of "
                          "them of a continuity below the first's", e, *ts)
            return Ty("field", (len(ts),) + f.shape, f.dim, min(t.k or 0 for t in ts))
        shapes = {t.shape for t in ts if t.kind == "tensor"}
        if any(t.kind not in ("int", "tensor") for t in ts) or len(shapes | ({()} if INT in ts else set())) > 1:
            self.fail("shape", "the elements of a tensor [..] are numbers or tensors of one shape", e)
        inner = next(iter(shapes)) if shapes else ()
        return tensor(len(ts), *inner)

    def e_SeqLit(self, e: A.SeqLit, scope: _Scope) -> Ty:
        ts = [self.expr(x, scope) for x in e.elems]
        if not ts:
            return Ty("seq", elem=VOID, n=0)
        elem = REAL if all(is_num(t) for t in ts) and REAL in ts else ts[0]
        for t, x in zip(ts, e.elems):
            self.expect(elem, t, x, "a sequence element")
        return Ty("seq", elem=elem, n=len(ts))

    def e_Comprehension(self, e: A.Comprehension, scope: _Scope) -> Ty:
        """A sequence comprehension: one element per item (a reduction's: :meth:`reduction`)."""
        body = self.expr(e.body, self.bind(e.iter.name, e.iter.domain, scope, False,
                                           "a sequence comprehension iterates over a sequence, not {}"))
        if body.kind not in ("int", "bool", "string", "tensor"):
            self.fail("shape", f"a sequence comprehension makes values, not {body}", e.body, body)
        return Ty("seq", elem=body)

    def e_Zeros(self, e: A.Zeros | A.Nan | A.Identity, scope: _Scope) -> Ty:
        return tensor(e.n, e.n) if isinstance(e, A.Identity) else tensor(*e.shape)
    e_Nan = e_Identity = e_Zeros

    def e_RealCast(self, e: A.RealCast, scope: _Scope) -> Ty:
        t = self.expr(e.operand, scope)
        if t.kind != "int":  # diderotc: "argument of 'real' must have type 'int'" (real(2^3) too: ^ gives a real)
            self.fail("shape", f"real() converts an int, not {t}", e, t)
        return REAL

    def e_Load(self, e: A.Load, scope: _Scope) -> Ty:
        """``image("file")``: the type of the file's NRRD header in a global's value (as diderotc reads it),
        else an image of unknown dimension; the run checks the file either way (:meth:`images`)."""
        if self.expr(e.path, scope) != STRING:
            self.fail("shape", "a file name is a string", e.path)
        if e.what != "image":
            return self._loaded(e, e.path)
        if self.declaring is not None and isinstance(e.path, A.Str):
            found = file_image_type(e.path.value, self.folder)
            if found is not None:
                self.c.images[id(e)] = (self.declaring, found, True)
                return found
        return Ty("image", ())

    def _loaded(self, e, path) -> Ty:
        """``load("file")`` is read when the run starts: the whole value of a global, nowhere else, and
        its file named by a string literal (as diderotc's grammar has it)."""
        if e is not self.whole:
            self.fail("syntax", 'load("file") is the whole value of a global (real{} xs = load("xs.nrrd");), '
                      "not part of an expression or a method", e)
        if not isinstance(path, A.Str):
            self.fail("syntax", 'load names its file by a string literal: load("xs.nrrd")', path)
        return Ty("seq", elem=VOID)

    # ---------------------------------------------------------------- operators
    def binary(self, op: str, a: Ty, b: Ty, node) -> Ty:
        result = basis.binary(op, a, b)
        rough = a.kind == b.kind == "field" and (basis.rougher(a, b) or op == ":" and a.k != b.k)
        if result is None:
            why = ": a field's continuity is part of its type, " + (
                "one for both sides of :" if op == ":" else "the second's below the first's") if rough else ""
            self.fail("shape", f"operator {op} does not apply to {a} and {b}{why}", node, a, b)
        return result

    def e_Apply(self, e: A.Apply, scope: _Scope) -> Ty:
        f = e.func
        if isinstance(f, A.Var) and scope.lookup(f.name)[0] is None:
            name = f.name
            if name in REDUCTIONS and len(e.args) == 1 and isinstance(e.args[0], A.Comprehension):
                return self.reduction(name, e.args[0], scope)
            if name in basis.UNCOMPILED_FUNCTIONS:  # before its arguments (variance names strands)
                self.fail("undeclared", f"unknown function {name}: {basis.UNCOMPILED_FUNCTIONS[name]}; "
                          "this front end refuses it too", f)
            if name == "sphere":
                if self.where not in ("strand", "stabilize"):
                    self.fail("syntax", "sphere() queries are made in strand methods", e)
                if "pos" not in self.c.state:
                    self.fail("undeclared", "sphere() needs a strand state variable pos", e)
                if self.c.state["pos"].kind != "tensor" or len(self.c.state["pos"].shape) > 1:  # (a name like others elsewhere)
                    self.fail("shape", f"sphere() needs a pos of type real, vec2 or vec3, not {self.c.state['pos']}", e)
                tys = [self.expr(a, scope) for a in e.args]
                if not (len(tys) == 1 or len(tys) == 2 and assignable(self.c.state["pos"], tys[0])) or not is_num(tys[-1]):
                    self.fail("shape", "a sphere query is sphere(r), or sphere(x, r) with x a position as pos is, r a real", e)
                self.c.communicates = True
                self.c.shared.add("pos")
                return Ty("set", name=self.strand.name)
            args = [self.expr(a, scope) for a in e.args]
            if name == "load" and name not in self.c.functions:
                self._loaded(e, e.args[0] if e.args else e)
            if name in self.c.functions:
                decl = self.c.functions[name]
                if len(args) != len(decl.params):
                    self.fail("shape", f"{name} takes {len(decl.params)} arguments, got {len(args)}", e)
                for p, at, node in zip(decl.params, args, e.args):
                    self.expect(from_syntax(p.type), at, node, f"argument {p.name} of {name}")
                self.c.scopes[id(f)] = "func"
                return from_syntax(decl.result)
            if name in basis.FUNCTIONS:
                result = basis.FUNCTIONS[name](args)
                if result is None:
                    shown = ", ".join(map(str, args))
                    field_note = (": min, max and abs of fields belong to research branches of Diderot's compiler, "
                                  "not to the standard language" if name in ("min", "max", "abs")
                                  and any(t.kind == "field" for t in args) else "")
                    self.fail("shape", f"no overload of {name} takes ({shown}){field_note}", e, *args)
                self.c.scopes[id(f)] = "basis"
                return result
            note = basis.extension_note(name)
            self.fail("undeclared", f"unknown function {name}" + (f": {note}" if note else ""), f)
        ft = self.expr(f, scope)
        args = [self.expr(a, scope) for a in e.args]
        if ft.kind == "field":
            want = REAL if ft.dim == 1 else tensor(self.space(ft, f))
            if len(args) != 1 or not assignable(want, args[0]):
                got = ", ".join(map(str, args))
                self.fail("shape", f"a field of dimension {ft.dim} is probed at a {want}, not ({got})", e, ft, *args)
            return tensor(*ft.shape)
        self.fail("shape", f"{ft} cannot be applied", e, ft)

    def bind(self, name: str, domain, scope: _Scope, sets: bool, wrong: str) -> _Scope:
        """The scope of a loop's body, ``name`` bound to an item of sequence ``domain`` or (``sets``) a strand of
        a set of strands; otherwise error[shape] ``wrong`` (formatted with the domain's type)."""
        t = self.expr(domain, scope)
        inner = _Scope(scope, "local")
        if sets and t.kind == "set":
            inner.names[name] = Ty("strand", name=t.name)
        elif t.kind == "seq":
            inner.names[name] = elem(t)
        else:
            self.fail("shape", wrong.format(t), domain, t)
        return inner

    def reduction(self, name: str, comp: A.Comprehension, scope: _Scope) -> Ty:
        dom = comp.iter.domain
        if isinstance(dom, A.Select) and isinstance(dom.operand, A.Var) and dom.operand.name == self.strand.name:
            if dom.name not in SETS:
                self.fail("undeclared", f"{dom.name} is no set of strands (all, active, stable)", dom)
            if self.where not in ("update", "initialize"):
                self.fail("syntax", f"{self.strand.name}.{dom.name} is read in the global block", dom)
            self.note(dom, Ty("set", name=self.strand.name))
            inner = _Scope(scope, "local", {comp.iter.name: Ty("strand", name=self.strand.name)})
        else:
            inner = self.bind(comp.iter.name, dom, scope, True, "a reduction runs over strands or a sequence, not {}")
        body = self.expr(comp.body, inner)
        self.note(comp, body)
        boolean = name in ("all", "exists")
        if not (body == BOOL if boolean else is_num(body) if name in ("mean", "max", "min") else body.kind in ("int", "tensor")):
            self.fail("shape", f"{name} reduces {'bool values' if boolean else 'numbers'}, not {body}", comp.body, body)
        return BOOL if boolean else REAL if name == "mean" else body


class _Inits:
    """error[uninit]: diderotc's rules that a variable has a value before it is read and that a function's
    block ends in a return (docs/diderot-language.md, "Types and errors")."""

    def __init__(self, checker: Checker):
        self.fail = checker.fail

    def program(self, program: A.Program) -> None:
        env: dict[str, object] = {}
        unset: set = set()
        for decl in program.decls:
            if isinstance(decl, A.FunctionDecl):
                self.function(decl, dict(env))
                continue
            env[decl.name] = key = ("global", decl.name)
            init = decl.default if isinstance(decl, A.InputDecl) else decl.init
            if init is not None:
                self.reads(init, env, unset)
            elif not isinstance(decl, A.InputDecl):
                unset.add(key)
        if program.initialize is not None:
            unset = self.stmt(program.initialize, dict(env), unset)
        for decl in program.decls:
            if not isinstance(decl, A.FunctionDecl) and ("global", decl.name) in unset:
                self.fail("uninit", f"global variable {decl.name} is not initialized: give it a value", decl)
        strand = program.strand
        senv = dict(env) | {p.name: ("param", p.name) for p in strand.params}
        for sv in strand.state:
            if sv.init is not None:
                self.reads(sv.init, senv, unset)
            elif sv.output:
                self.fail("uninit", f"strand output variable {sv.name} is not initialized: give it a value", sv)
            senv[sv.name] = key = ("state", sv.name)
            if sv.init is None:
                unset = unset | {key}
        for body in [body for name, body in strand.methods if name in ("initialize", "start")]:
            unset = self.stmt(body, dict(senv), unset)
        for name, body in strand.methods:
            if name not in ("initialize", "start"):
                self.stmt(body, dict(senv), unset)
        for block in (program.start, program.update):
            if block is not None:
                self.stmt(block, dict(env), unset)

    def function(self, decl: A.FunctionDecl, env: dict) -> None:
        for p in decl.params:
            env[p.name] = ("param", p.name)
        if isinstance(decl.body, A.Block):
            if not _returns(decl.body):
                self.fail("uninit", f"function {decl.name} can end without returning a value: "
                                    "its last statement must be a return (or an if/else whose branches end in one)", decl)
            self.stmt(decl.body, env, set())
        else:
            self.reads(decl.body, env, set())

    def stmt(self, s, env: dict, unset: set) -> set:
        """The keys (of ``env``) of the variables still without a value after ``s``, by the rule ``s_KIND``."""
        return getattr(self, "s_" + type(s).__name__, self.s_other)(s, env, unset)

    def s_Block(self, s: A.Block, env: dict, unset: set) -> set:
        inner = dict(env)
        for st in s.stmts:
            unset = self.stmt(st, inner, unset)
        return unset

    def s_Decl(self, s: A.Decl, env: dict, unset: set) -> set:
        if s.init is not None:
            self.reads(s.init, env, unset)
        env[s.name] = key = ("local", id(s))
        return unset | {key} if s.init is None else unset

    def s_Assign(self, s: A.Assign, env: dict, unset: set) -> set:
        if s.op != "=":
            self._read(s.name, env, unset, s)
        self.reads(s.value, env, unset)
        return unset - {env.get(s.name)}

    def s_If(self, s: A.If, env: dict, unset: set) -> set:
        self.reads(s.test, env, unset)
        then = self.stmt(s.then, dict(env), unset)
        return then | (self.stmt(s.other, dict(env), unset) if s.other is not None else unset)

    def s_Foreach(self, s: A.Foreach, env: dict, unset: set) -> set:
        self.reads(s.domain, env, unset)
        self.stmt(s.body, dict(env) | {s.name: ("local", id(s))}, unset)
        return unset

    def s_other(self, s, env: dict, unset: set) -> set:
        for e in (getattr(s, "value", None), *getattr(s, "args", ())):
            if e is not None:
                self.reads(e, env, unset)
        return unset

    def _read(self, name: str, env: dict, unset: set, node) -> None:
        if env.get(name) in unset:
            self.fail("uninit", f"possible use of variable {name} before it has been initialized", node)

    def reads(self, e, env: dict, unset: set) -> None:
        if isinstance(e, A.Var):
            self._read(e.name, env, unset, e)
        elif isinstance(e, A.Comprehension):
            self.reads(e.iter.domain, env, unset)
            self.reads(e.body, dict(env) | {e.iter.name: ("local", id(e))}, unset)
        elif isinstance(e, A.Apply) and isinstance(e.func, A.Var) and e.func.name not in env:
            for a in e.args:
                self.reads(a, env, unset)
        else:
            for x in A.children(e):
                self.reads(x, env, unset)


def _returns(s) -> bool:
    """Whether statement ``s`` ends in a return on every path (Diderot's tail position)."""
    return _RETURNS.get(type(s), lambda s: False)(s)


_RETURNS = {A.Return: lambda s: True, A.Block: lambda s: bool(s.stmts) and _returns(s.stmts[-1]),
            A.If: lambda s: s.other is not None and _returns(s.then) and _returns(s.other)}


def check(program: A.Program, folder: str | None = None) -> Checked:
    """The program's types and scopes, or error[CODE]; ``folder``: where ``image("file")`` is looked for first."""
    return Checker(program, folder).run()


def file_image_type(path: str, folder: str | None) -> Ty | None:
    """The image type of NRRD file ``path`` (found as :func:`file_path` finds it) from its header, or None."""
    from ...sampling.image import nrrd_type

    path = file_path(path, folder)
    found = nrrd_type(path) if os.path.splitext(path)[1].lower() in (".nrrd", ".nhdr") else None
    return None if found is None else Ty("image", found[1], found[0])


def bulk_synchronous(checked: Checked) -> bool:
    """Whether Diderot's executable runs this program in super-steps: with a global update block, ``new``,
    queries, or strands that count the strands (diderotc's NeedsBSP); otherwise strand by strand
    (docs/diderot-language.md, "Differences")."""
    program = checked.program
    return program.update is not None or checked.communicates or checked.counts or _holds(checked, A.New)


def _holds(checked: Checked, cls: type) -> bool:  # the strand's node kinds, one walk kept: every run asks
    return cls in (checked.__dict__.get("_kinds") or checked.__dict__.setdefault("_kinds", A.kinds(checked.program.strand)))


def permuted(checked: Checked) -> bool:
    """Whether Diderot's runtime keeps the strands in a permuted order: ``new``, or ``die`` in a bulk-synchronous
    program (docs/diderot-language.md, "Differences"); the interpreter and the C executor follow it."""
    return _holds(checked, A.New) or (_holds(checked, A.Die) and bulk_synchronous(checked))



def global_names(node, checked: Checked, seen: set | None = None) -> set[str]:
    """The globals a syntax tree names, through the user functions it calls."""
    seen, out = set() if seen is None else seen, set[str]()
    for n in A.walk(node):
        if isinstance(n, A.Var) and n.name in checked.globals and checked.scopes.get(id(n), "global") == "global":
            out.add(n.name)
        elif isinstance(n, A.Var) and n.name in checked.functions and n.name not in seen:
            seen.add(n.name)
            out |= global_names(checked.functions[n.name].body, checked, seen)
    return out


GLOBAL_BLOCKS = ("initialize", "start", "update")


def _storage_reads(stmt, assigned: frozenset, checked: Checked, out: set) -> frozenset:
    """Into ``out``, the globals a global block's ``stmt`` reads where no assignment before it in the block has set
    them, so from the globals' storage; returns those assigned then (after an ``if``, none of its: diderotc reads the
    stored value past the join, rev54b)."""
    def read(e) -> None:
        out.update(global_names(e, checked) - assigned)
    if isinstance(stmt, A.Block):
        for s in stmt.stmts:
            assigned = _storage_reads(s, assigned, checked, out)
    elif isinstance(stmt, A.Assign):
        read(stmt.value)
        if checked.scopes.get(id(stmt)) == "global":
            if stmt.op != "=":  # (x += e reads x first)
                out.update({stmt.name} - assigned)
            assigned |= {stmt.name}
    elif isinstance(stmt, (A.If, A.Foreach)):
        read(stmt.test if isinstance(stmt, A.If) else stmt.domain)
        for way in (stmt.then, stmt.other) if isinstance(stmt, A.If) else (stmt.body,):
            if way is not None:
                _storage_reads(way, assigned, checked, out)
    else:
        read(stmt)
    return assigned


def dropped_globals(checked: Checked) -> tuple[frozenset[str], frozenset[str]]:
    """The globals the global blocks assign, and those of them whose assignments diderotc drops: the ones whose stored
    value nothing but global fields' definitions reads (not the strands, the creation's arguments, nor a start or
    update block before an assignment there, :func:`_storage_reads`; the initialize block's reads, other globals'
    initializers and the creation's ranges do not count), so that the fields keep their first values."""
    p = checked.program
    written = {n.name for b in (getattr(p, k) for k in GLOBAL_BLOCKS) if b is not None for n in A.walk(b)
               if isinstance(n, A.Assign) and checked.scopes.get(id(n)) == "global"}
    formulas = tuple(d.init for d in p.decls if isinstance(d, A.GlobalDecl) and d.param is not None)
    stored = global_names((p.strand, p.create.args, formulas), checked)  # (through the functions called there; the
    # creation's arguments too, which diderotc passes from the stored globals, not its ranges, rev54c; a formula
    # field's definition, which diderotc evaluates where it is probed, rev56)
    for block in (p.start, p.update):
        if block is not None:
            _storage_reads(block, frozenset(), checked, stored)
    return frozenset(written), frozenset(written - stored)


def field_globals(checked: Checked, reading: frozenset) -> frozenset[str]:
    """The global fields whose definition reads one of the globals ``reading`` or such a field.  With the globals
    whose assignments diderotc keeps (:func:`dropped_globals`), such a field is made where it is probed, from the
    globals as they are then (diderotc's; docs/diderot.md, the ninth round)."""
    p, found = checked.program, set[str]()
    for d in (d for d in p.decls if isinstance(d, A.GlobalDecl) and d.init is not None and checked.globals[d.name].kind == "field"):
        if global_names(d.init, checked) & (reading | found):
            found.add(d.name)
    return frozenset(found)
