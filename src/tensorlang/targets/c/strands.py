"""The C renderer and executor of the strand IR (:mod:`tensorlang.strand_ir.ir`): the state as
struct-of-arrays, the methods in C around the fixed C of csrc/strands_*, probes from :mod:`.strands_probe`
(docs/diderot-compiled.md, "From the typed program to C" and "How a run goes")."""

from __future__ import annotations

import itertools
import math
import threading
import weakref
from typing import Any, Mapping

import numpy as np

from ...errors import Span, error
from ...limits import _human, check_allocation, kept, memory_budget_bytes
from ...strand_ir import EXECUTORS, UNAVAILABLE, print_order
from ...strand_ir import ir as S
from . import build as c_build
from . import csrc
from .codegen import CHOICE
from . import strands_batch as B
from . import strands_narrow as NW
from . import strands_probe as P

_CTY = {"int": "int64_t", "real": "double", "bool": "int", "string": "int64_t"}
#: operators as C functions: ints wrap, division by zero sets the error flag, a real 0/0 is NaN
_WRAP = {("int", "+"): "tl_iadd", ("int", "-"): "tl_isub", ("int", "*"): "tl_imul", ("int", "/"): "tl_idiv",
         ("int", "%"): "tl_imod", ("real", "/"): "tl_div"}
#: comparisons of a narrow int with an int64, as tl_ge/gt/eq<bits> (negated: True); the operator seen from the other side
_NCMP = {">=": ("ge", False), ">": ("gt", False), "<": ("ge", True), "<=": ("gt", True), "==": ("eq", False), "!=": ("eq", True)}
_SWAP = {">=": "<=", ">": "<", "<=": ">=", "<": ">", "==": "==", "!=": "!="}
_ZERO_SUMS = {(0, "+", 1.0), (0, "-", 1.0), (1, "+", 1.0), (1, "-", -1.0)}  #: 0 + b, 0 - b, b + 0, b - -0: +0 where zero (tl_z0)
#: the cffi declarations of what the runner calls (csrc/strands_api.h)
DECLARATIONS = P.TYPEDEF + csrc.text("strands_api.h")


def _rows(slots) -> tuple[dict[str, tuple[str, int]], int, int]:
    """Each slot's table (``R``: reals, ``I``: the others) and row there, in slot order; each table's rows."""
    rows = {"R": itertools.count(), "I": itertools.count()}
    table = {slot.name: (arr, next(rows[arr])) for slot in slots for arr in ("R" if slot.ty == "real" else "I",)}
    return table, sum(a == "R" for a, _ in table.values()), sum(a == "I" for a, _ in table.values())


def _defines(**values: object) -> str:
    """``#define TL_<NAME> value`` lines, the macros a csrc/strands_*.c file reads (a name
    ``f(x, y)``: the function-like macro ``TL_F(x, y)``)."""
    parts = ((*name.partition("("), value) for name, value in values.items())
    return "".join(f"#define TL_{head.upper()}{paren}{params} {value}\n" for head, paren, params, value in parts)


#: tl_err_flag's low 3 bits (the rest: TL_AT, where the operation is); 5: new made more strands
#: in one super-step than the memory budget holds. The interpreter's wording.
ERRORS = {1: "integer division by zero", 2: "tensor index out of range", 4: "sequence index out of range", 6: "integer remainder by zero",
          3: "no memory for the run's buffers (printed output, a step's copy, neighbour grid, new strands, copied sequences)",
          7: "the sequences take more cells than the memory budget gives a thread's method or the strands' state (TENSORLANG_MAX_BYTES)"}
#: the C functions that may set the error flag and take the position of their operation last
_FAILING = ("tl_idiv", "tl_imod", "tl_ichk", "tl_schk", "tl_ar_new", "tl_ar_cat", "tl_ar_at", "tl_ar_ati", "tl_ar_kget", "tl_ar_keep", "tl_ar_gkeep")


def c_string(text: str) -> str:
    """``text`` as a C literal of its UTF-8 bytes (surrogateescape's: their bytes), octal escapes but for printable ASCII (no trigraph ``??/``, no hex escape joining the next letters)."""
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in b'"\\?' else f"\\{b:03o}" for b in text.encode("utf-8", "surrogateescape")) + '"'


def _where(at: tuple[int, int]) -> str:
    """The C of an operation's position (line, column), which a run-time error there reports
    (a line past 2^28 or a column past 2^32, in a program of gigabytes, as none: the flag holds that many bits)."""
    return f"TL_AT({at[0]}, {at[1]})" if at[0] < 2**28 and at[1] < 2**32 else "TL_AT(0, 0)"


class Renderer:
    def __init__(self, ir: S.StrandIR, steps: int | None = None):
        """``steps``: the most super-steps a run makes (counters narrow to it; None: any number)."""
        self.ir = ir
        self.state, self.nr, self.ni = _rows(ir.state)
        self.globals, self.gnr, self.gni = _rows(ir.globals)
        #: the int rows stored narrow (in the first bytes of their 64-bit row): row -> bits
        self.ranges = NW.Ranges(ir, steps)
        self.narrow = {self.state[name][1]: bits for name, bits in self.ranges.solve().items()}
        self.method = "update"
        self.plain = False  # selects as C's ?: (tl_lanes)
        # create_lanes: the real slots set once; set ones' locals; the probes loading a row; the state read; none set after a read
        self.once, self.fwd, self.units, self.sread, self.redo = set[str](), dict[str, str](), dict[int, str](), set[str](), False
        # the locals the update sets again; the lane locals declared int8_t (lane_stmts)
        self.reset, self.lane8 = {st.name for st in S.nodes(ir.update, S.Set) if st.space == "l"}, set[str]()
        self.shared_xi: dict[int, tuple[str, str]] = {}
        self.reuse: dict[int, tuple[list[str], list[str]]] = {}  # tl_update_pf's, below
        self.known = False  # the probe being rendered finds its cache filled at its point (stmts)
        self.fills: dict[str, list[str]] = {}  # a probe family's cache fill, by name (strands_probe.render)
        pos = {name for name in self.state if _is_pos(name)}
        moved = any(isinstance(st, S.Set) and st.space == "s" and st.name in pos
                    for body in (ir.start, ir.global_start, ir.update, ir.stabilize, ir.global_block) for st in S.nodes(body or (), S.Set))
        #: no statement after creation sets a position (and Diderot's permuted order is off)
        self.still = ir.sphere is not None and bool(pos) and not moved and not ir.indirect
        # the globals the global blocks set: a radius that reads one may change between steps or calls
        changing = {st.name for st in S.nodes((*(ir.global_block or ()), *(ir.global_start or ())), S.Set) if st.space == "g"}
        #: the queries whose answers are kept (TL_STILL: around the strand's pos, with a
        #: radius of constants and unchanging globals), numbered
        queries = S.nodes(ir, S.Reduce)
        self.kept = {id(q): k for k, q in enumerate(
            q for q in queries if self.still and q.which == "sphere" and not q.center
            and q.radius is not None and _steady(q.radius, changing))}
        #: the kept queries of update whose fold reads only the neighbours' snapshot, globals and
        #: constants, not inside another query's body: folded for a block of strands at once (tl_bk_fill), slot b
        inner = {id(r) for q in queries if q.which == "sphere" for r in S.nodes(q.body, S.Reduce)}
        self.blocked = {id(q): b for b, q in enumerate(q for q in S.nodes(ir.update, S.Reduce) if id(q) in self.kept
                                                        and id(q) not in inner and q.op in _FOLDS and not q.body and _pure(q.value))}
        #: every sphere query, numbered: its neighbour lists where strands move (tl_nb_query)
        self.sites = {id(q): v for v, q in enumerate(q for q in queries if q.which == "sphere")}
        self.cells = _cells(ir)
        self.inner = 0  # the sphere queries around the statement rendered (its neighbour: j, j1, j2, ... by depth)

    # ---- expressions
    def ex(self, e) -> str:
        if isinstance(e, S.Const):
            if e.ty == "bool":
                return "1" if e.value else "0"
            if e.ty in ("int", "string"):
                return f"INT64_C({int(e.value)})"  # type: ignore[call-overload]
            v = float(e.value)  # type: ignore[arg-type]
            return "NAN" if v != v else ("INFINITY" if v > 0 else "(-INFINITY)") if math.isinf(v) else f"({v!r})"
        if isinstance(e, S.Ref):
            return self.ref(e.space, e.name)
        if isinstance(e, S.Bin):
            if e.op in ("==", "!=") and _root_of(e.a) is not None and e.b == S.Const(0.0, "real"):
                # |v| == 0 as v•v == 0 (the same truth for every argument, NaN and negatives
                # included: the root is 0 exactly where its argument is): no square root
                return f"({self.ex(_root_of(e.a))} {e.op} 0.0)"
            if e.op in _NCMP and (self._bits(e.a) or self._bits(e.b)) and e.a.ty == e.b.ty == "int":
                x, y, op = (e.a, e.b, e.op) if self._bits(e.a) else (e.b, e.a, _SWAP[e.op])
                if _steady(y, set()) and not self._bits(y):  # (a narrow row's lanes compared in its width)
                    return f"{'!' * _NCMP[op][1]}tl_{_NCMP[op][0]}{self._bits(x)}({self.ex(x)}, {self.ex(y)})"
            a, b, fn = self.ex(e.a), self.ex(e.b), _WRAP.get((e.ty, e.op))
            zero = e.ty == "real" and any(y in (S.Const(0.0, "real"), S.Const(0, "int")) and (k, e.op, math.copysign(1.0, y.value)) in _ZERO_SUMS  # type: ignore[attr-defined,arg-type]
                                          for k, x in enumerate((e.a, e.b)) for y in (x.a if isinstance(x, S.Cast) else x,))  # (real(0) too)
            if fn in _FAILING:
                return f"{fn}({a}, {b}, {_where(e.at)})"
            return f"{fn}({a}, {b})" if fn else f"tl_z0({a} {e.op} {b})" if zero else f"({a} {e.op} {b})"
        if isinstance(e, S.Un):
            return f"tl_isub(0, {self.ex(e.a)})" if e.ty == "int" and e.op == "-" else f"({e.op}{self.ex(e.a)})"
        if isinstance(e, S.Call):
            args = [self.ex(a) for a in e.args] + ([_where(e.at)] if e.fn in _FAILING else [])
            return f"{e.fn}({', '.join(args)})"
        if isinstance(e, S.Sel):  # in lanes (tl_lanes, self.plain) ?:, which the vectorizer blends
            if not self.plain and e.ty != "string" and _eager(e.a) and _eager(e.b):  # data-dependent conditions (life's rule)
                return f"tl_sel{'r' if e.ty == 'real' else 'i'}({self.ex(e.c)}, {self.ex(e.a)}, {self.ex(e.b)})"
            return f"({self.ex(e.c)} ? {self.ex(e.a)} : {self.ex(e.b)})"
        if isinstance(e, S.At):
            at = f"tl_at{'' if e.ty == 'real' else 'i'}({e.seq}, {self.ex(e.index)}, {e.comp}, {_where(e.at)})"
            return at if e.ty in ("real", "int") else f"(({_CTY[e.ty]}){at})"
        if isinstance(e, S.Len):
            return f"tl_sq[{e.seq}].len"
        return f"(({_CTY[e.ty]})({self.ex(e.a)}))"

    def _bits(self, e) -> int | None:
        """The width of a narrow state int that ``e`` reads, else None."""
        at = self.state.get(e.name, ("R", 0)) if isinstance(e, S.Ref) and e.space not in ("l", "g") else ("R", 0)
        return self.narrow.get(at[1]) if at[0] == "I" else None

    def ref(self, space: str, name: str) -> str:
        if space == "s" and name in self.fwd:
            return self.fwd[name]
        self.sread.update([name] if space == "s" and self.method == "create" else [])
        if space == "l":
            return f"l_{name}"
        if space == "g":
            return "g{}[{}]".format(self.globals[name][0].lower(), self.globals[name][1])
        arr, k = self.state[name]
        at = "j" if space == "o" else f"j{len(space) - 1 or ''}" if space[0] == "n" else "i"  # (the neighbour at depth d: j, j1, j2, ...)
        base = ("tl_RP" if self.still and _is_pos(name) else f"tl_{arr}0") if space[0] == "n" else arr
        return self.cell(arr, k, base, "n", at)

    def cell(self, arr: str, k: int, base: str, n: str | None, at: str) -> str:
        """Value ``at`` of row ``k`` of a state table; ``n`` None: of a strand's own copies (``Rl``, ``Il``)."""
        if arr == "I" and k in self.narrow:
            return self.row(arr, k, base, n) + f"[{at}]"
        return f"{base}[{k} * {n} + {at}]" if n else f"{base}[{k}]"

    def row(self, arr: str, k: int, base: str, n: str | None) -> str:
        """Row ``k`` of a state table (``base``: ``R``, ``I`` or a snapshot) as an array; a narrow int row
        is the first bytes of its 64-bit row."""
        at = f"{base} + {k} * {n}" if n else f"{base} + {k}"
        return f"((int{self.narrow[k]}_t *)({at}))" if arr == "I" and k in self.narrow else f"({at})"

    # ---- statements
    def stmts(self, body, pad: str) -> list[str]:
        out: list[str] = []
        last = None  # a probe's family and shared point, when only locals were set since (known filled)
        for s in body:
            share = self.shared_xi.get(id(s)) if isinstance(s, S.Probe) and not s.inside else None
            mark = (P.family(s), share[1]) if share is not None and share[0] == "use" else None
            self.known, last = mark is not None and mark == last, mark if mark or not isinstance(s, S.Local) else last
            out += self.stmt(s, pad)
        return out

    def stmt(self, s, pad: str) -> list[str]:
        if isinstance(s, S.Local):
            init = f" = {self.ex(s.init)}" if s.init is not None else " = 0"
            return [f"{pad}{_CTY[s.ty]} l_{s.name}{init};"]
        if isinstance(s, S.Set):
            return [f"{pad}{self.ref(s.space, s.name)} = {self.ex(s.value)};"]
        if isinstance(s, S.If):
            out = [f"{pad}if ({self.ex(s.cond)}) {{"] + self.stmts(s.then, pad + "    ")
            if s.other:
                out += [f"{pad}}} else {{"] + self.stmts(s.other, pad + "    ")
            return out + [f"{pad}}}"]
        if isinstance(s, S.For):
            return ([f"{pad}for (int64_t l_{s.var} = {self.ex(s.lo)}, hi_{s.var} = {self.ex(s.hi)}; "
                     f"l_{s.var} <= hi_{s.var}; l_{s.var}++) {{"] + self.stmts(s.body, pad + "    ") + [f"{pad}}}"])
        if isinstance(s, S.Exit):
            if s.kind == "goto":
                return [f"{pad}goto {s.label};"]
            # the status a method returns: create's 0 always; stabilize's continue is a stabilize
            code = 0 if self.method == "create" else {"die": 2, "stabilize": 1}.get(s.kind, int(self.method == "stabilize"))
            return [f"{pad}return {code};"]
        if isinstance(s, S.Label):
            return [f"{s.name}: ;"]
        if isinstance(s, S.Reduce):
            return self.reduce(s, pad)
        if isinstance(s, S.Lib):
            n = len(s.args)
            return ([f"{pad}{{ const double a_[{n}] = {{{', '.join(self.ex(a) for a in s.args)}}}; "
                     f"double r_[{len(s.targets)}]; tl_{s.fn}({math.isqrt(n)}, a_, r_);"]
                    + [f"{pad}  l_{t} = r_[{k}];" for k, t in enumerate(s.targets)] + [f"{pad}}}"])
        if isinstance(s, S.Probe):
            return P.render(s, self.ir, self.ex, pad, self.probe_plan, self.shared_xi.get(id(s)), self.fills,
                            self.reuse.get(s.image), self.known)
        if isinstance(s, S.New):
            reals = [self.ex(a) for a, slot in zip(s.args, self.ir.params) if self.state[slot][0] == "R"]
            ints = [self.ex(a) for a, slot in zip(s.args, self.ir.params) if self.state[slot][0] == "I"]
            return [f"{pad}{{ double br_[{max(1, len(reals))}] = {{{', '.join(reals) or '0'}}}; "
                    f"int64_t bi_[{max(1, len(ints))}] = {{{', '.join(ints) or '0'}}}; tl_birth(i, br_, bi_); }}"]
        if isinstance(s, S.Print):
            out = [f"{pad}tl_pmark({'-1' if self.method == 'global' else 'i'});"]
            for x in s.items:
                if isinstance(x, str):
                    out.append(f"{pad}tl_pstr({c_string(x)});")
                else:
                    fn = {"int": "tl_pint", "real": "tl_preal", "bool": "tl_pbool", "string": "tl_pstrid"}[x.ty]
                    out.append(f"{pad}{fn}({self.ex(x)});")
            return out
        raise error("internal", f"the strand renderer has no case for {type(s).__name__}")

    def reduce(self, s: S.Reduce, pad: str) -> list[str]:
        """A reduction (or foreach) over a set of strands or the neighbours a sphere query
        finds: the loop's head by the set, then one fold of ``value`` by the operator."""
        t, inner, ty = f"l_{s.target}", pad + "        ", _CTY[s.ty]
        back, out = False, [f"{pad}{ty} {t} = {_INIT.get(f'{s.op} {s.ty}', _INIT.get(s.op, '0'))};"] if s.op != "each" else []
        if id(s) in self.blocked and self.method == "update":
            b = self.blocked[id(s)]
            out.append(f"{pad}if ((bk_->filled || tl_bk_fill(bk_, n, gr, gi)) && bk_->ok[{b}]) {t} = bk_->v{b}[i - bk_->i0]; else")
        own = {x.name for x in S.nodes(s.body, S.Local)}  # (cells given back after each visit, a nested query's list
        free = not any(x.space == "l" and x.name not in own and x.name in self.cells for x in S.nodes(s.body, S.Set))  # after it,
        visit = free and any(c.fn.startswith("tl_ar_") for c in S.nodes(s.body, S.Call))  # unless the body sets a cell from before)
        if s.which == "sphere":
            assert s.radius is not None
            at = ", ".join(self.ex(c) for c in s.center) or ", ".join(self.ref("s", nm) for nm in self.pos_slots())
            r = self.ex(s.radius)
            if id(s) in self.kept:  # (none in a start method, nor in a stabilize a start runs: lower.py)  # the answer kept from the first step (TL_STILL), else the search
                out += [f"{pad}{{", f"{pad}    int64_t cnt = 0; const int64_t *nb_; int64_t base_ = i;",
                        f"{pad}    int64_t nn_ = tl_nb_kept({self.kept[id(s)]}, i, &nb_);",
                        f"{pad}    if (nn_ < 0) {{ double c_[3] = {{{at}}}; nn_ = tl_nb_search(n, i, c_, {r}, &nb_); base_ = 0; }}"]
            else:
                out += [f"{pad}{{", f"{pad}    int64_t cnt = 0; const int64_t *nb_, base_ = 0; double c_[3] = {{{at}}};",
                        f"{pad}    int64_t nn_ = tl_nb_query({self.sites[id(s)]}, n, i, c_, {r}, &nb_);"]
            nest, j = any(q.which == "sphere" for q in S.nodes(s.body, S.Reduce)), f"j{self.inner or ''}"
            back = nest and free
            if nest:  # its neighbours copied into the arena: a query inside refills the thread's buffer
                out += [f"{pad}    int64_t ab_ = tl_ar_new(nn_, 1, 0), top_ = ab_; nn_ = ab_ < 0 ? 0 : nn_; (void)top_;",
                        f"{pad}    for (int64_t q_ = 0; q_ < nn_; q_++) tl_ar[ab_ + q_].i = nb_[q_] + base_;"]
            out += [f"{pad}    int64_t vt_ = tl_ar_top;"] * visit + [f"{pad}    for (int64_t q_ = 0; q_ < nn_; q_++) {{",
                    f"{pad}        int64_t {j} = {'tl_ar[ab_ + q_].i' if nest else 'nb_[q_] + base_'}; (void){j};"]
        elif s.op == "count" and self.ir.indirect and self.method != "global":  # the step's start counts (tl_fc: driver.c)
            return [f"{pad}{ty} {t} = " + {"all": "tl_fc[0] + tl_fc[1]", "active": "tl_fc[0]", "stable": "tl_fc[1]"}[s.which] + ";"]
        else:
            st = "status" if self.method == "global" else "tl_status"  # a strand method reads the statuses so far
            test = {"all": f"{st}[j] != 2", "active": f"{st}[j] == 0", "stable": f"{st}[j] == 1"}[s.which]
            out += [f"{pad}{{", f"{pad}    int64_t cnt = 0;"] + [f"{pad}    int64_t vt_ = tl_ar_top;"] * visit
            if self.ir.indirect and s.op != "count":  # Diderot's order of the living strands
                out += [f"{pad}    for (int64_t o_ = 0; o_ < tl_nl; o_++) {{",
                        f"{pad}        int64_t j = tl_ordp[o_]; if (!({test})) continue;"]
            else:
                out += [f"{pad}    for (int64_t j = 0; j < n; j++) {{", f"{pad}        if (!({test})) continue;"]
        self.inner += s.which == "sphere"
        out += self.stmts(s.body, inner)
        self.inner -= s.which == "sphere"
        if s.op in _FOLDS:
            out.append(inner + _FOLDS[s.op].format(t=t, v=self.ex(s.value), ty=ty))
        out += [f"{inner}{'tl_ar_top = vt_; ' * visit}cnt++;", f"{pad}    }}", f"{pad}    (void)cnt;"] + [f"{pad}    if (top_ >= 0) tl_ar_top = top_;"] * back
        if fin := _FINAL.get(s.op if s.ty == "real" else f"{s.op} {s.ty}"):
            out.append(f"{pad}    {fin.format(t=t)}")
        return out + [f"{pad}}}"]

    def block_fill(self) -> str:
        """``tl_bk_fill``: the blocked queries' folds for the strands ``i0 .. i0 + TL_BK - 1``, a run of
        strands with one kept pattern an offset at a time (docs/diderot-compiled.md, "How a run goes")."""
        sites = [q for q in S.nodes(self.ir.update, S.Reduce) if id(q) in self.blocked]  # in slot order
        out = [f"typedef struct {{ int64_t i0; int filled, ok[{len(sites)}];"
               + "".join(f" {self._fold_cty(q)} v{b}[TL_BK] TL_ALIGN;" for b, q in enumerate(sites)) + " } tl_bk;",
               "TL_NOJAM TL_OUTLINE int tl_bk_fill(tl_bk *bk, int64_t n, const double *gr, const int64_t *gi) {",
               "    int64_t i0 = bk->i0; bk->filled = 1; (void)gr; (void)gi;"]
        for b, q in enumerate(sites):
            v, fin = f"bk->v{b}[u_]", _FINAL.get(q.op if q.ty == "real" else f"{q.op} {q.ty}")
            init, value = _INIT.get(f"{q.op} {q.ty}", _INIT.get(q.op, "0")), self.ex(q.value)
            # an int sum whose terms the narrow analysis bounds by m: summed in 8 or 16 bits where
            # the pattern's length keeps every partial sum within them (then widened once)
            m = 1 if q.op == "count" else self.ranges.bound(q.value) if q.op == "sum" and q.ty == "int" else None
            fold = _FOLDS[q.op].format(t="a_[u_]", v=value, ty=_CTY[q.ty])
            if self._fold_cty(q) == "int8_t":  # no kept pattern longer than 127 (_short): 8 bits hold every partial sum
                full = [BLOCK_FULL.format(cond="", ty="int8_t", init=init, v=v, fold=fold)]
            else:
                full = [BLOCK_FULL.format(cond=f"if (len_ <= {lim // m}) ", ty=f"int{bits}_t", init=init, v=v, fold=fold)
                        for bits, lim in ((8, 127), (16, 32767)) if m is not None and 0 < m <= lim // 8]
                full.append(BLOCK_FULL.format(cond="", ty=_CTY[q.ty], init=init, v=v, fold=fold))
            out.append(BLOCK_SITE.format(b=b, k=self.kept[id(q)], v=v, short=self._short(q), init=init, full=" else\n".join(full), lanes=B.LANES,
                                         final=fin.format(t=v).replace("cnt", "len_") if fin else "",
                                         fold=_FOLDS[q.op].format(t=v, v=value, ty=_CTY[q.ty]), ty=self._fold_cty(q),
                                         afold=_FOLDS[q.op].format(t="a_", v=value, ty=_CTY[q.ty])))
        return "\n".join(out + ["    return 1;", "}"])

    def _fold_cty(self, q) -> str:
        """A blocked fold's C type: 8 bits for an int count or sum of values within ±1 (exact where :meth:`_short` holds)."""
        m = 1 if q.op == "count" else self.ranges.bound(q.value) if q.op == "sum" and q.ty == "int" else None
        return "int8_t" if m is not None and m <= 1 else _CTY[q.ty]

    def _short(self, q) -> str:  # (no kept pattern longer than 127: else the block's strands fold one by one)
        return f" && tl_klong[{self.kept[id(q)]}] <= 127" if self._fold_cty(q) == "int8_t" else ""

    def lanes(self) -> list[str]:
        """``tl_lanes``: the update of a block of strands as loops the C compiler can vectorize
        (docs/diderot-compiled.md, "How a run goes"); empty where the update does not allow it."""
        if not self.blocked or self.ir.stabilize or self.ir.indirect:
            return []
        update = self.ir.update
        cut = next((k for k, st in enumerate(update) if S.nodes(st, S.Reduce, most=0)), len(update))
        if any(S.nodes(update[:cut], kind, most=0) for kind in (S.Local, S.For, S.Probe, S.Lib)):
            cut = 0
        parts = self.in_lanes((update[:cut], update[cut:]), set()) if len(S.nodes(update, object, most=400)) <= 400 else None
        if parts is None:
            return []
        first, rest = parts
        kept = " || ".join(f"!(tl_kpid[{self.kept[id(q)]}] != 0{self._short(q)})" for q in S.nodes(update, S.Reduce) if id(q) in self.blocked)
        head = "        int64_t i = b_ + u_; (void)i; int go_ = "
        return (["TL_WIDE TL_OUTLINE int tl_lanes(int64_t b_, int64_t n, double *restrict R, int64_t *restrict I, "
                 "int8_t *restrict status, const double *gr, const int64_t *gi, const tl_img *img, tl_bk *bk_) {",
                 "    int64_t m_ = n - b_ < TL_BK ? n - b_ : TL_BK; int8_t any_ = 0, go_a[TL_BK], r_a[TL_BK];  /* (any_: in byte lanes) */",
                 f"    if ({kept}) return 0;  /* (then tl_bk_fill's folds are not all kept) */",
                 "    for (int64_t u_ = 0; u_ < m_; u_++) {", head + "status[i] == 0, r_ = 0;"]
                + ["        " + ln for ln in first]
                + ["        go_a[u_] = (int8_t)go_; r_a[u_] = (int8_t)r_; any_ |= (int8_t)go_;", "    }",
                   "    if (any_ && !bk_->filled) tl_bk_fill(bk_, n, gr, gi);",
                   "    for (int64_t u_ = 0; u_ < m_ && any_; u_++) {", head + "go_a[u_], r_ = r_a[u_];"]
                + ["        " + ln for ln in rest]
                + ["        r_a[u_] = (int8_t)r_;", "    }",
                   "    for (int64_t u_ = 0; u_ < m_; u_++) status[b_ + u_] = r_a[u_] ? r_a[u_] : status[b_ + u_];",
                   "    (void)R; (void)I; (void)gr; (void)gi; (void)img;", "    return 1;", "}"])

    def in_lanes(self, parts, names: set[str]) -> list[list[str]] | None:
        """Each statement list of ``parts`` as lane statements (:meth:`lane_stmts`), or None where one is not."""
        outs: list[list[str]] = [[] for _ in parts]
        self.plain, self.conds, self.lane8 = True, 0, set()
        try:
            ok = all(self.lane_stmts(body, [], out, names) for body, out in zip(parts, outs))
        finally:
            self.plain, self.once, self.fwd, self.units = False, set(), {}, {}
        return outs if ok else None

    def lane_stmts(self, body, path: list[str], out: list[str], names: set[str]) -> bool:
        """``body`` as lane statements under ``path`` (the conditions of the branches taken)."""
        pred = "".join(f" & {c}" for c in ["go_"] + path)[3:]
        for s in body:
            if isinstance(s, (S.Local, S.Reduce)):
                name = s.name if isinstance(s, S.Local) else s.target
                if name in names or (isinstance(s, S.Local) and s.init is not None and not _lane_safe(s.init)):
                    return False
                names.add(name)
                if isinstance(s, S.Reduce):
                    if id(s) not in self.blocked or s.body:
                        return False
                    ty = _CTY[s.ty] if name in self.reset else self._fold_cty(s)  # (8 bits: the block's own width)
                    out.append(f"{ty} l_{name} = bk_->v{self.blocked[id(s)]}[u_];")
                else:  # (an int copy of an 8-bit local that nothing sets again is one too; a real copy is a double)
                    ty = "int8_t" if s.ty == "int" and isinstance(s.init, S.Ref) and s.init.space == "l" \
                        and s.init.name in self.lane8 and name not in self.reset else _CTY[s.ty]
                    out.append(f"{ty} l_{name} = {self.ex(s.init) if s.init is not None else '0'};")
                self.lane8.update([name] if ty == "int8_t" else [])
            elif isinstance(s, S.Set) and s.space in ("l", "s") and _lane_safe(s.value):
                read = self.sread | {r.name for r in S.nodes(s.value, S.Ref) if r.space == "s"}  # (its own value's reads too)
                self.redo, ref = self.redo and s.name not in read, self.ref(s.space, s.name)  # (redo: made twice, the same)
                if pred == "go_" and s.name in self.once:  # (a real set once before any exit: later reads take its value)
                    out.append(f"double sf_{len(self.fwd)} = {self.ex(s.value)};")
                    self.fwd[s.name] = f"sf_{len(self.fwd)}"
                pos = self.method == "create" and self.still and _is_pos(s.name)
                out.append(f"{'if (!kp_) ' * pos}{ref} = {pred} ? {self.fwd.get(s.name) or self.ex(s.value)} : {ref};")
            elif isinstance(s, S.If) and _lane_safe(s.cond):
                self.conds += 1
                c = f"c{self.conds}_"
                out.append(f"int {c} = ({self.ex(s.cond)}) != 0;")
                if not (self.lane_stmts(s.then, path + [c], out, names)
                        and self.lane_stmts(s.other, path + [f"!{c}"], out, names)):
                    return False
            elif isinstance(s, S.Probe) and self.method == "create" and all(_lane_safe(e) for e in s.pos) \
                    and not names & set(s.targets) and (probe := B.lane_probe(s, self.ir, self.ex, "", self.units.get(id(s), ""))) is not None:
                names.update(s.targets)
                out += probe
            elif isinstance(s, S.Exit) and s.kind in ("continue", "stabilize", "die"):
                out.append(f"{{ int e_ = {pred}; r_ = e_ ? {('continue', 'stabilize', 'die').index(s.kind)} : r_; go_ &= !e_; }}")
                self.once = set()
            else:
                return False
        return True

    def create_lanes(self) -> list[str]:
        """``tl_create_lanes``: the create of strands along the grid's last iterator in lanes (as :meth:`lanes`;
        probes by :func:`.strands_batch.lane_probe`; docs/diderot-compiled.md, "How a run goes"); it returns 0
        where an image is smaller than its kernel's support. Empty where the create does not allow lanes."""
        body, ir = self.ir.create + self.ir.init, self.ir
        if not CREATE_LANES or not ir.iters or len(S.nodes(body, object, most=400)) > 400:
            return []
        self.method, self.redo, self.sread = "create", True, set()
        sets = [st.name for st in S.nodes(body, S.Set) if st.space == "s"]  # (reads of a real state set once, forwarded)
        self.once = {name for name in sets if sets.count(name) == 1 and self.state[name][0] == "R"}
        diag = " && ".join(sorted({f"img[{s.image}].diag" for s in S.nodes(body, S.Probe)}))  # (dg_: every probed map diagonal)
        units = B.unit_rows(body, ir) if diag else []  # (probes at the grid's integer points: a row's samples loaded, not gathered)
        self.units = {id(pr): f"ub_[{j}]" for j, (pr, _, _) in enumerate(units)}
        parts = self.in_lanes((body,), {f"it_{it}" for it in ir.iters})
        if parts is None:
            return []
        lines = parts[0]
        small = B.lane_images(body, ir)
        last = len(ir.iters) - 1
        args = "const int64_t *its, int64_t m_, int64_t n, int64_t b_, double *restrict R, int64_t *restrict I, const double *gr, " \
            "const int64_t *gi, const tl_img *img"  # (v_: a loop of each kp_, dg_, un_; kp_: the positions are there already)
        # (un_: kp_, dg_ and every unit_rows probe loads rows, from ub_: one more copy of the loop, for repeated calls)
        rows = ", const int64_t *ub_" if units else ""
        variants = [0, 2, 3, 7][:4 if units else 3] if diag else [0, 1]  # (kp_ without dg_: loop 0; diderot-compiled.md)
        call = "tl_create_lanes_k(its, m_, n, b_, R, I, gr, gi, img, {}" + ", ub_" * bool(units) + ")"
        return ([f"TL_CLATTR TL_INLINE int tl_create_lanes_k({args}, const int v_{rows}) {{",
                 f"    if ({' || '.join(small)}) return 0;" if small else "",
                 "    const int kp_ = v_ & 1, dg_ = (v_ >> 1) & 1, un_ = v_ >> 2; (void)kp_; (void)dg_; (void)un_;",
                 "    for (int64_t u_ = 0; u_ < (m_ & ~(int64_t)63); u_++) {", "        int64_t i = b_ + u_; (void)i; int go_ = 1, r_ = 0; (void)r_;"]
                + [f"        int64_t l_it_{it} = its[{k}]{' + u_' if k == last else ''}; (void)l_it_{it};"
                   for k, it in enumerate(ir.iters)]
                + ["        " + ln for ln in lines]
                + ["    }", "    (void)R; (void)I; (void)gr; (void)gi; (void)img; (void)n;", "    return (int)(m_ & ~(int64_t)63);", "}",
                   f"TL_CLATTR static int tl_create_lanes({args}) {{",
                   f"    int v_ = (tl_kpos ? 1 : 0) + ({diag} ? 2 : 0);" if diag else "    int v_ = tl_kpos ? 1 : 0;"]
                + ([f"    int64_t ub_[{len(units)}];", "    int un_ = 0;"] + B.unit_check(units, ir) + ["    v_ += un_ ? 4 : 0;"] if units else [])
                + ["    return " + " : ".join(f"(v_ & {v}) == {v} ? {call.format(v)}" for v in variants[:0:-1]) + f" : {call.format(0)};", "}"])

    def pos_slots(self) -> list[str]:
        return sorted((name for name in self.state if _is_pos(name)), key=lambda x: int(x[4:] or 0))

    def neighbours(self) -> str:
        """The snapshot of the state at the start of a step, its spatial grid, the query."""
        rows = [self.state[name][1] for name in self.pos_slots()]
        d = len(rows)
        # Diderot's test: the squared distance summed in single precision, strictly below r²
        d2 = "".join("(double)(float)(" for _ in rows) + "0.0" + "".join(
            f" + (p[{a}] - c[{a}]) * (p[{a}] - c[{a}]))" for a in range(d))
        fin = " && ".join(f"isfinite(tl_RP[{k} * n + j])" for k in rows)
        cell = " + ".join(f"(int64_t)floor((tl_RP[{k} * n + j] - tl_gmin[{a}]) / tl_gh) * tl_gstride[{a}]"
                          for a, k in enumerate(rows))
        rowlist = ", ".join(str(k) for k in rows)
        d2e = "0.0" + "".join(f" + (p[{a}] - c[{a}]) * (p[{a}] - c[{a}])" for a in range(d))
        return f"static const int64_t tl_posrow[{d}] = {{{rowlist}}};\n" + _defines(
            d=d, still=int(self.still), sites=max(1, len(self.kept)), vsites=max(1, len(self.sites)),
            indirect_key=int(self.ir.indirect),
            allkept=int(len(self.kept) == len([q for q in S.nodes(self.ir, S.Reduce) if q.which == "sphere"])),
            **{"fin(n, j)": fin, "cell(n, j)": cell, "d2e(p, c)": d2e, "d2(p, c)": d2}) + csrc.text(
            "strands_neighbours.c",
            keep="\n        ".join(f"tl_keep_site({self.kept[id(q)]}, n, {self.ex(q.radius)}, status, dead);"
                                    for q in S.nodes(self.ir, S.Reduce) if id(q) in self.kept))

    def snapshot(self) -> str:
        """The copy of the state at a step's start that the step reads (``tl_R0``, ``tl_I0``):
        the rows other strands read and the positions; where no strand moves, the positions
        once per call (they do not change)."""
        read = {r.name for r in S.nodes(self.ir, S.Ref) if r.space[0] == "n"} | set(self.ir.shared)
        pos = set(self.pos_slots())
        out = [f"tl_RP = {'R' if self.still else 'tl_R0'};"] if self.ir.sphere is not None else []
        for name in sorted((read | pos) - (pos if self.still else set()), key=lambda nm: self.state[nm]):
            arr, k = self.state[name]
            ty = "double" if arr == "R" else f"int{self.narrow.get(k, 64)}_t"
            out.append(f"memcpy(tl_{arr}0 + {k} * (size_t)n, {arr} + {k} * (size_t)n, sizeof({ty}) * (size_t)n);")
        kept = {st.name: st.value.args[3] for st in S.nodes(self.ir, S.Set) if st.space == "s" and getattr(st.value, "fn", "") == "tl_ar_keep"}
        out += [f"tl_kp_snap({s}, {self.state[nm][1]}, {self.ex(kept[nm])}, n, I, tl_I0);" for s, nm in enumerate(sorted(read & set(kept)))]
        return "\n        ".join(out)

    # ---- the program
    def function(self, name: str, method: str, body, per_strand: bool, batched: list | None = None,
                 its: bool = False) -> list[str]:
        """A method as a C function; ``its``: the grid's iterators passed in (tl_create_one)."""
        self.method = method
        args = B.ARGS if per_strand else \
            "int64_t n, double *restrict R, int64_t *restrict I, const int8_t *status, double *gr, int64_t *gi, const tl_img *img"
        final = {"update": 0, "stabilize": 1, "global": 0, "create": 0, "start": 0}[method]
        decls, self.probe_plan = P.cache_decls(body, self.ir, "    ")  # probes at one point share their work
        self.shared_xi = _shared_points(body)
        # a 3-D family's world point and index position, mapped by tl_ahead (the first family's per image)
        self.reuse = {b.probe.image: ([f"pf[{(b.at_r + a) * B.LANES} + l]" for a in range(b.dim)], [
            f"pf[{(b.at_x + a) * B.LANES} + l]" for a in range(b.dim)]) for b in reversed(batched or []) if not b.lanes}
        if batched:  # the block's probes (strands_batch) preload the caches
            decls, args = B.decls(batched, decls), args + ", const double *restrict pf, int l"
        if method == "update" and self.blocked:
            args += ", tl_bk *bk_"
        lines = [f"static int {name}({'const int64_t *its, ' * its}{args}) {{"] + [
            f"    int64_t l_it_{it} = its[{k}]; (void)l_it_{it};" for k, it in enumerate(self.ir.iters) if its]
        arena = any(c.fn.startswith("tl_ar_") for c in S.nodes(body, S.Call)) or any(  # (a method's sequences, a query's
            q.which == "sphere" and S.nodes(q.body, S.Reduce) for q in S.nodes(body, S.Reduce))  # within another's: from an empty arena)
        lines += decls + ["    tl_ar_top = 0;"] * arena + self.stmts(body, "    ")
        unused = "    (void)n; (void)R; (void)I; (void)gr; (void)gi; (void)img;" + ("" if per_strand else " (void)status;")
        return lines + [unused, f"    return {final};", "}"]

    def source(self) -> str:
        ir = self.ir
        texts = ", ".join(c_string(t) for t in ir.strings)
        lines = ["#define TL_BK 256" if self.blocked else "", csrc.text("strands_prelude.h"), P.PRELUDE, f"static const char *const tl_strs[] = {{{texts or '0'}}};",
                 "static const char *const *tl_more; static int64_t tl_nmore;",
                 "void tl_set_strings(const char *const *more, int64_t n) { tl_more = more; tl_nmore = n; }",
                 f"static void tl_pstrid(int64_t k) {{ if (k >= 0 && k < {len(ir.strings)}) tl_pstr(tl_strs[k]); "
                 f"else if (k >= {len(ir.strings)} && k - {len(ir.strings)} < tl_nmore) tl_pstr(tl_more[k - {len(ir.strings)}]); }}"]
        lines += P.kernels(ir)
        if S.nodes((ir.create, ir.init, ir.start, ir.global_start, ir.update, ir.stabilize, ir.global_block), S.Lib, most=0):
            lines.append(csrc.text("strands_linalg.h"))
        nbr = sum(1 for slot in ir.params if self.state[slot][0] == "R")
        lines.append(_defines(nbr=max(1, nbr), nbi=max(1, len(ir.params) - nbr)) + csrc.text("strands_births.c"))
        lines.append("static int64_t *tl_ordp, tl_nl; /* the living strands in Diderot's order (a permuted run) */")
        lines.append("static const int8_t *tl_status; /* the strands' statuses, for numStrands() in a method */")
        lines.append("static int64_t tl_gext[3], tl_gnd; /* the grid's extents (tl_create) */")
        if ir.sphere is not None:
            lines += [self.neighbours()] + ([self.block_fill()] if self.blocked else [])
            drop = " ".join(f"{self.row(arr, k, arr, 'n')}[i] = {self.row(arr, k, f'tl_{arr}0', 'tl_n0')}[i];"
                            for arr, k in (self.state[name] for name in ir.shared
                                           if not (self.still and _is_pos(name))))
            lines.append("static void tl_drop(int64_t n, int64_t i, double *R, int64_t *I) "
                         f"{{ if (!tl_R0 || i >= tl_n0) return; {drop} (void)n; (void)R; (void)I; }}")
            lines.append(f"static double tl_grid_h(const double *gr, const int64_t *gi) {{ (void)gr; (void)gi; "
                         f"return {self.ex(ir.sphere)}; }}")
        at = len(lines)
        lines += self.function("tl_create_one", "create", ir.create + ir.init, True, its=True)
        lines += self.function("tl_init_one", "create", ir.init, True)
        clanes, redo = self.create_lanes(), self.redo
        lines += clanes
        glob = ir.global_block is not None
        solo = not (glob or ir.sphere is not None or ir.indirect or ir.births or ir.prints or ir.serial or ir.bsp)  # (serial, bsp: counts)
        up = self.function("tl_update", "update", ir.update, True)  # tl_block's, inlined there
        lines += up if solo or ir.indirect else ["TL_INLINE " + up[0][len("static "):]] + up[1:]
        lanes = [] if solo else self.lanes()
        lines += lanes
        nd = max(1, len(ir.iters))
        batched = B.families_ahead(ir, self.probe_plan) if solo else []
        if batched:
            lines += B.functions(batched, ir, self.probe_plan, self.stmt, self.ex)
            pf = self.function("tl_update_pf", "update", ir.update, True, batched)
            lines += ["TL_EXACT " + pf[0]] + pf[1:]
        skip = B.skip_run(ir, self.ex) if solo and not any(b.lanes for b in batched) else []
        skipm, self.bounds = B.skip_max(ir, self.ex) if solo and not any(b.lanes for b in batched) else ([], None)
        lines += skip + skipm
        lines += self.function("tl_stabilize", "stabilize", ir.stabilize or (), True)
        lines += self.function("tl_start", "start", ir.start, True) if ir.start else []
        lines += self.function("tl_gbegin", "global", ir.global_start, False) if ir.global_start else []
        if ir.global_block is not None:
            lines += self.function("tl_global", "global", ir.global_block, False)
        lines[at:at] = [ln for fill in self.fills.values() for ln in fill]
        src = "\n".join(lines)
        # a solo strand's update that reads no other strand's state steps on copies of its own
        own = (self.nr, self.ni, self.cell) if B.OWN and solo and not any(b.lanes for b in batched) \
            and not S.nodes(ir.update, S.Reduce, most=0) else None  # (lanes: strands_batch.BLOCK)
        who = "1, 0, Rl, Il" if own else "n, i, R, I"
        how = ("skip" if skip else "") + (" max" if skipm else "")
        head = "\n" + _defines(start=int(bool(ir.start)), gstart=int(bool(ir.global_start)), has_global=int(glob), bsp=int(glob or ir.sphere is not None or ir.births or ir.bsp), comm=int(ir.sphere is not None), indirect=int(ir.indirect),
                               solo=int(solo), batch=int(bool(batched)))
        head += _defines(  # (TL_STEPS: the driver with the updates inlined on a strand's own copies, without SLP)
            steps="TL_NOSLP" if own else "", bks=len(self.blocked), lanes=int(bool(lanes)), clanes=(1 + redo) * bool(clanes), nd=nd, nr=max(self.nr, 1),
            ni=max(self.ni, 1), bkarg=", &bk_" if self.blocked else "",
            call_global="tl_global(n, R, I, status, gr, gi, img)" if glob else "0")
        return src + head + csrc.text("tl_threads.h", **CHOICE) + csrc.text(
            "strands_driver.c", block=B.block_steps(batched, own, how).removeprefix("\n") if batched else "",
            solosteps=(" " * 20 + B.own_steps(own, "", f"tl_update({who}, gr, gi, img)", " " * 20, how)).removesuffix("\n"),
            snap=self.snapshot() if ir.sphere is not None else "")


#: a fold's step (``t`` the accumulator, ``v`` the value, ``cnt`` the neighbours before) and its end
_FOLDS = {"sum": "{t} += {v};", "mean": "{t} += {v};", "count": "{t} += 1;", "product": "{t} *= {v};",
          "all": "{t} = {t} && ({v});", "exists": "{t} = {t} || ({v});",
          "max": "{{ {ty} v = {v}; if (cnt == 0 ? v == v : v > {t}) {t} = v; }}",
          "min": "{{ {ty} v = {v}; if (cnt == 0 ? v == v : v < {t}) {t} = v; }}"}
_INIT = {"product": "1", "all": "1", "max real": "-INFINITY", "min real": "INFINITY"}  # (others 0; a real max, min from ∓∞ passes over NaN: std::max(acc, v))
_FINAL = {"mean": "{t} = cnt ? {t} / (double)cnt : NAN;", "max": "if (cnt == 0) {t} = -INFINITY;", "min": "if (cnt == 0) {t} = INFINITY;",
          "max int": "if (cnt == 0) {t} = INT32_MIN;", "min int": "if (cnt == 0) {t} = INT32_MAX;"}  # ints: Diderot's 32-bit bounds

#: a blocked site's folds: a run of more than ``lanes`` (B.LANES) strands in memory, a shorter one (a row's ends) in registers
BLOCK_SITE = r"""    bk->ok[{b}] = tl_kpid[{k}] != 0{short};
    for (int64_t r_ = bk->ok[{b}] ? tl_kbs[{k}][i0 / TL_BK] : 0, r1_ = bk->ok[{b}] ? tl_kbs[{k}][i0 / TL_BK + 1] : 0; r_ < r1_; r_++) {{
        const tl_kseg *kr_ = tl_krn[{k}] + r_;  /* a run of strands with pattern p_ (site {b}: kept query {k}) */
        int64_t t_ = kr_->t, e_ = kr_->e, p_ = kr_->p;
        const int64_t *o_ = tl_koff[{k}] + tl_kstart[{k}][p_], len_ = tl_kstart[{k}][p_ + 1] - tl_kstart[{k}][p_];
        if (kr_->full) {{
{full}
        }} else if (e_ - t_ > {lanes}) {{
            for (int64_t u_ = t_; u_ < e_; u_++) {v} = {init};
            for (int64_t cnt = 0; cnt < len_; cnt++)
                for (int64_t u_ = t_, j0_ = i0 + o_[cnt]; u_ < e_; u_++) {{ int64_t j = j0_ + u_; {fold} }}
        }} else for (int64_t u_ = t_; u_ < e_; u_++) {{  /* a few strands (a row's ends): each fold in a register */
            {ty} a_ = {init};
            for (int64_t cnt = 0; cnt < len_; cnt++) {{ int64_t j = i0 + o_[cnt] + u_; {afold} }}
            {v} = a_;
        }}
        for (int64_t u_ = t_; u_ < e_; u_++) {{ {final} }}
    }}"""

#: the fold of a full run across the whole block, in an accumulator of type {ty} (a narrow one
#: under its condition: every partial sum of len_ terms fits)
BLOCK_FULL = r"""            {cond}{{
                {ty} a_[TL_BK] TL_ALIGN;
                for (int64_t u_ = 0; u_ < TL_BK; u_++) a_[u_] = {init};
                for (int64_t cnt = 0; cnt < len_; cnt++)
                    for (int64_t u_ = 0, j0_ = i0 + o_[cnt]; u_ < TL_BK; u_++) {{ int64_t j = j0_ + u_; {fold} }}
                for (int64_t u_ = t_; u_ < e_; u_++) {v} = a_[u_];
            }}"""


def _pure(e) -> bool:
    """An expression of the neighbours' snapshot, globals and constants that sets no error
    (no sequence index, int division or conversion out of a real): the same for a strand
    wherever its method evaluates it."""
    return all(r.space in ("n", "g") for r in S.nodes(e, S.Ref)) and not any(
        isinstance(x, S.At) or (isinstance(x, S.Cast) and x.ty != "real") or (isinstance(x, S.Call) and x.fn in _FAILING)
        or (isinstance(x, S.Bin) and x.ty == "int" and x.op in ("/", "%")) for x in S.nodes(e, object))


#: calls a lane may make for every strand of a block: pure, cheap, no error flag
_LANE_CALLS = {"tl_sqrt", "fabs", "floor", "ceil", "tl_iabs", "tl_sgn", "tl_min", "tl_max", "tl_clamp", "tl_imin",
               "tl_imax", "tl_iclamp", "tl_nrm", "tl_div"}


def _lane_safe(e) -> bool:
    """An expression every strand of a block may evaluate, whether or not its update reaches
    it: this strand's state, locals, globals and constants; no sequence item, int division,
    conversion out of a real (undefined in C out of range) or call outside ``_LANE_CALLS``."""
    return not any((isinstance(x, S.Ref) and x.space not in ("s", "l", "g")) or isinstance(x, S.At)
                   or (isinstance(x, S.Cast) and x.ty != "real") or (isinstance(x, S.Call) and x.fn not in _LANE_CALLS)
                   or (isinstance(x, S.Bin) and x.ty == "int" and x.op in ("/", "%")) for x in S.nodes(e, object))


def _root_of(e):
    """The argument of a square root (``tl_sqrt``), or None."""
    return e.args[0] if isinstance(e, S.Call) and e.fn == "tl_sqrt" and len(e.args) == 1 else None


def _steady(e, changing: set[str]) -> bool:
    """Whether ``e`` has the same value in every strand and every step: constants and the
    globals outside ``changing`` combined by operators and functions."""
    return all(isinstance(x, (S.Const, S.Bin, S.Un, S.Call, S.Sel, S.Cast)) or (
        isinstance(x, S.Ref) and x.space == "g" and x.name not in changing) for x in S.nodes(e, object))


def _eager(e) -> bool:
    """An expression both arms of a select may evaluate: a few loads and arithmetic, no
    call, sequence index or int division (those may set the error flag or cost much) and no
    conversion (a real out of an int's range, in the arm not taken, is undefined in C)."""
    nodes = S.nodes(e, object, most=8)  # bounded: a select nested 1 000 deep asks at every level
    return len(nodes) <= 8 and not any(isinstance(x, (S.Call, S.At, S.Cast)) or (
        isinstance(x, S.Bin) and x.ty == "int" and x.op in ("/", "%")) for x in nodes)


def _shared_points(body) -> dict[int, tuple[str, str]]:
    """``inside(p, F)`` tests at a method's top level and the probes of the same image at
    the same point after them (``if (inside(p, F)) m = F(p)``): the probes take the test's
    index-space point instead of mapping ``p`` again.  The point's expressions may read only
    locals that are set once (so that it is the same point) and constants."""
    sets: dict[str, int] = {}
    for st in S.nodes(body, object):
        names = (st.name,) if isinstance(st, S.Local) or (isinstance(st, S.Set) and st.space == "l") else \
            (st.var,) if isinstance(st, S.For) else (st.target,) if isinstance(st, S.Reduce) else \
            tuple(st.targets) if isinstance(st, (S.Probe, S.Lib)) else ()
        for nm in names:
            sets[nm] = sets.get(nm, 0) + 1

    def fixed(e) -> bool:
        return all(sets.get(r.name) == 1 for r in S.nodes(e, S.Ref) if r.space == "l") and not any(
            r.space != "l" for r in S.nodes(e, S.Ref)) and not S.nodes(e, S.At) and not S.nodes(e, S.Call)

    out: dict[int, tuple[str, str]] = {}
    for k, st in enumerate(body):
        if not (isinstance(st, S.Probe) and st.inside and all(fixed(e) for e in st.pos)):
            continue
        users = [pr for pr in S.nodes(tuple(body[k + 1:]), S.Probe)
                 if not pr.inside and pr.image == st.image and pr.pos == st.pos]
        if users:
            out[id(st)] = ("keep", st.targets[0])
            out.update((id(pr), ("use", st.targets[0])) for pr in users)
    return out


def render(ir: S.StrandIR) -> str:
    """The C source of a strand program (its functions, then the driver)."""
    return Renderer(ir).source()


#: generated C above this many characters (higher derivatives of 3-D products: megabytes) is built with -O1 (half -O3's time)
LARGE_SOURCE = 256 * 1024
#: no libm call sets errno (strand code never reads it): `sqrt` one instruction (docs/diderot-compiled.md)
NO_ERRNO = ("-fno-math-errno",)


class Runner:
    """A strand program built to C: :meth:`start` a run over given globals and grid."""

    def __init__(self, ir: S.StrandIR, steps: int | None = None):
        self.ir = ir
        #: the most super-steps a run may make (its counters' widths hold them; None: any number)
        self.steps = steps
        self.renderer = Renderer(ir, steps)
        self.source = self.renderer.source()
        flags = NO_ERRNO + (("-O1",) if len(self.source) > LARGE_SOURCE else ())  # docs/diderot-compiled.md
        self.ffi, self.lib = c_build.build_and_load(self.source, c_build.require_compiler(), DECLARATIONS, flags)
        #: one C call at a time per program (its error code, buffers and neighbour grid are statics)
        self.lock = threading.Lock()
        self.packed: dict = {}  # the last run's image descriptors (strands_probe.pack)
        #: creation places still strands by the grid and globals alone: the last run's (grid, globals, token)
        self.placed = self.renderer.still and _placed(ir)
        self.last_place: tuple | None = None
        #: the state arrays of the last run that ended (at most SPARE_BYTES: new ones cost page faults), for
        #: the next run with as many strands, and the rows tl_create may not set before reading them (zeroed)
        self.spare: dict = {}
        self.spare_ptrs: dict = {}  # (the spare arrays' C pointers, Run._p's, cast once)
        self.no_strings = self.ffi.new("const char *[]", [self.ffi.NULL])  # (the table of a run without string inputs)
        written = {self.renderer.state[name] for name in _set_first(ir.create + ir.init)}
        self.unset = tuple([k for k in range(max(n, 1)) if (arr, k) not in written]
                           for arr, n in (("R", self.renderer.nr), ("I", self.renderer.ni)))

    def take(self, rows: tuple[int, int], n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """State arrays (R, I, status) for ``n`` strands and the run they were: a finished run's
        and its token, or new zeros and -1."""
        kept = self.spare.pop((rows, n), None)
        if kept is None:
            return np.zeros((rows[0], n)), np.zeros((rows[1], n), dtype=np.int64), np.zeros(n, dtype=np.int8), -1
        for table, unset in zip(kept, self.unset):
            if unset:  # (an empty fancy index costs 5 µs a table)
                table[unset] = 0
        return kept

    def start(self, values: Mapping[str, Any], ranges: list[tuple[int, int]], threads: int = 1, begin: bool = True) -> "Run":
        return Run(self, values, ranges, threads, begin)


class Run:
    def __init__(self, runner: Runner, values: Mapping[str, Any], ranges: list[tuple[int, int]], threads: int, begin: bool = True):
        r = self.runner = runner.renderer
        self.ffi, self.lib, self.lock = runner.ffi, runner.lib, runner.lock
        # printed text in the interpreter's order; counts of the strands as they update in order
        self.threads = 1 if runner.ir.prints or runner.ir.serial else threads
        self.lib.tl_set_armax(max(1 << 12, memory_budget_bytes() // (16 * self.threads)))  # half the budget: cells of 8 bytes
        #: the run's kept sequences (tl_kb: their list, cells, most cells), freed with the run
        self.kp = self.ffi.new("int64_t[3]", [0, 0, max(1 << 12, memory_budget_bytes() // 16)])
        weakref.finalize(self, self.lib.tl_kp_free, self.kp)
        self.chunks: list[tuple[tuple[int, int], bytes]] = []  # ((steps before, strand), text) of each print, in order
        self.at = -1  # the steps done before the call running (-1: the start blocks)
        self.token = next(_RUN_TOKENS)
        ext = [max(0, hi - lo + 1) for lo, hi in ranges]
        self.n = n = math.prod(ext)
        self.owner, self.made = runner, 0  # (made: the super-steps asked for so far)
        self.R, self.I, self.status, was = runner.take((max(r.nr, 1), max(r.ni, 1)), n)
        #: the living strands' columns in the executor's order (Diderot's permuted one where
        #: ``ir.indirect``: [stable | active], then the new), their count, each one's rank
        self.indirect = runner.ir.indirect
        # (the C side reads ord and rank only in a permuted run: elsewhere one element each)
        self.ord = np.arange(n if self.indirect else 1, dtype=np.int64)
        self.nlive = np.array([n, n], dtype=np.int64)  # (and the first strand whose start method has not run)
        self.rank = np.zeros(max(n, 1) if self.indirect else 1, dtype=np.int64)
        self.gr, self.gi = np.zeros(max(r.gnr, 1)), np.zeros(max(r.gni, 1), dtype=np.int64)
        # (_p: each array cast once, until the births replace them; a finished run's state arrays' from it)
        self._ptrs: dict[int, tuple] = runner.spare_ptrs if was >= 0 else {}
        runner.spare_ptrs = {}
        self._texts: tuple | None = None  # (_strings: the table of the strings the program does not spell)
        self._others: dict[str, int] = {}  # (_other: the strings the program does not spell)
        for name, (arr, k) in r.globals.items():
            base, _, comp = name.partition(".")
            v = values[base]
            x = np.ravel(np.asarray(v))[int(comp)] if comp else v
            if arr == "R":
                self.gr[k] = float(x)
            elif isinstance(x, str):
                table = list(runner.ir.strings)
                self.gi[k] = table.index(x) if x in table else len(table) + self._other(x)
            else:
                self.gi[k] = int(x)
        self.images, keep = P.pack(self.ffi, runner.ir.images, values, runner.packed)
        self.keep = list(keep)  # (the sequences' arrays join it)
        if r.bounds is not None:  # the block bounds of a ray's maximum (strands_batch.skip_max)
            self.images = B.with_bounds(self.ffi, self.images, runner.ir.images, values, r.bounds, self.keep)
        seqs = []
        for q in runner.ir.seqs:  # the dynamic sequences: items × components, row-major
            check_allocation(len(values[q.name]) * q.comps, 8, f"the sequence {q.name}")
            kind = np.float64 if q.ty == "real" else np.int64  # (an int's cells hold int64s: exact past 2^53, tl_ati)
            data = np.ascontiguousarray(np.asarray([np.ravel(np.asarray(x, dtype=kind)) for x in values[q.name]],
                                                   dtype=kind).reshape(-1))
            self.keep.append(data)
            seqs.append((self.ffi.cast("const double *", data.ctypes.data), len(values[q.name]), q.comps))
        self.seqs = self.ffi.new("tl_seq[]", seqs or 1)
        self._active = n
        #: the run before whose strands creation places where it places this run's (Runner.placed), or -1
        self.prev = -1
        if runner.placed:
            key = (tuple(ranges), self.gr.tobytes(), self.gi.tobytes(), tuple(self._others))
            last, runner.last_place = runner.last_place, (key, self.token)
            self.prev = last[1] if last is not None and last[0] == key else -1
        self.same_pos = int(self.prev >= 0 and self.prev == was)  # (the arrays hold the positions: not stored again)
        if n or runner.ir.global_start:  # (the global start block runs, and prints, with no strand too)
            lo = np.array([lo for lo, _ in ranges] or [0], dtype=np.int64)
            ex = np.array(ext or [1], dtype=np.int64)
            with self.lock:
                self._strings()
                self.lib.tl_set_kpos(self.same_pos)
                err = self.ffi.new("int64_t *")
                if n:
                    self.lib.tl_create(self.n, max(1, len(ranges)), self._p("int64_t *", lo), self._p("int64_t *", ex),
                                       *self._buffers(), err)
                    self._check(err)  # (a creation's run-time error: C dropped it, the interpreter reports it)
        if begin:
            self.begin()

    def begin(self) -> None:
        """The global start block, then the start methods (which may stabilize or kill); Run(begin=False) leaves
        them to this call, after snapshot 0 (lower.py)."""
        if (self.n or self.runner.ir.global_start) and (self.runner.ir.start or self.runner.ir.global_start):
            with self.lock:
                self._strings()
                err = self.ffi.new("int64_t *")
                if self.runner.ir.births:  # (the start methods' births bounded as a step's, rev56b)
                    self.lib.tl_set_bmax(self._birth_room())
                self.lib.tl_begin(self.n, *self._buffers()[:-1], err, *(self._p("int64_t *", a) for a in (self.ord, self.nlive, self.rank)))
                self._check(err)
                self._active = int(np.count_nonzero(self.status == 0))

    def _strings(self) -> None:
        """The texts of the strings the program does not spell (string inputs), for print;
        the sequences' descriptors."""
        if self._texts is None:  # (made once a run: the strings are known once the globals are)
            texts = [self.ffi.new("char[]", t.encode("utf-8", "surrogateescape")) for t in sorted(self._others, key=self._others.__getitem__)]
            self._texts = (texts, self.ffi.new("const char *[]", texts) if texts else self.owner.no_strings)
        self.lib.tl_set_strings(self._texts[1], len(self._texts[0]))
        self.lib.tl_set_fixed(int(FIXED_TEAM))
        self.lib.tl_set_seqs(self.seqs)
        self.lib.tl_kp_use(self.kp)

    def release(self) -> None:
        """The run is over (its outputs copied out): its state arrays serve the next run."""
        if self.R.nbytes + self.I.nbytes + self.status.nbytes <= SPARE_BYTES:
            self.owner.spare = {((self.R.shape[0], self.I.shape[0]), self.n): (self.R, self.I, self.status, self.token)}
            self.owner.spare_ptrs = {id(a): self._ptrs[id(a)] for a in (self.R, self.I, self.status) if id(a) in self._ptrs}

    def _other(self, text: str) -> int:
        """A number for a string the program does not spell (equal strings, equal numbers)."""
        return self._others.setdefault(text, len(self._others))

    def _p(self, ctype: str, arr: np.ndarray):  # (the run's arrays each cast once)
        kept = self._ptrs.get(id(arr))
        if kept is None or kept[0] is not arr:
            kept = self._ptrs[id(arr)] = (arr, self.ffi.cast(ctype, self.ffi.from_buffer(arr)))  # (not .ctypes: 4x slower)
        return kept[1]

    def active(self) -> int:
        return self._active

    def alive(self) -> np.ndarray:
        """The columns of the strands in the order outputs list them (dead ones too where
        the order is not permuted: the caller filters by status)."""
        return self.ord[:int(self.nlive[0])].copy() if self.indirect else np.arange(self.n)

    def _buffers(self):
        return (self._p("double *", self.R), self._p("int64_t *", self.I), self._p("int8_t *", self.status),
                self._p("double *", self.gr), self._p("int64_t *", self.gi), self.images, self.threads)

    def steps(self, k: int) -> int:
        """Run up to ``k`` super-steps (fewer once no strand is active); how many ran."""
        if self.n == 0:
            return 0
        if self.owner.steps is not None and self.made + k > self.owner.steps:  # (run_compiled stays within)
            raise error("internal", f"a run built for {self.owner.steps:,} super-steps asked for more")
        with self.lock:
            self._strings()
            if self.runner.ir.sphere is not None:  # the neighbours kept from an earlier call hold for this run only
                self.lib.tl_set_run(self.token)
                self.lib.tl_set_prev(self.prev)
            self.at = self.made
            done = self._steps(k)
        self.made += done
        return done

    def _steps(self, k: int) -> int:
        (err, act, pending), done = [self.ffi.new("int64_t *") for _ in range(3)], 0
        while done < k:
            if self.runner.ir.births:  # the room left for new strands, with the strands there are now
                self.lib.tl_set_bmax(self._birth_room())
            done += int(self.lib.tl_steps(self.n, k - done, *self._buffers(), err, act, pending,
                                          self._p("int64_t *", self.ord), self._p("int64_t *", self.nlive),
                                          self._p("int64_t *", self.rank)))
            self._active = int(act[0])
            self._check(err)
            if not pending[0]:
                break
            self._add_births()  # the update loop made new strands: they join, then the global block runs
            self._active = int(self.lib.tl_finish(self.n, *self._buffers(), err,
                                                  self._p("int64_t *", self.ord), self._p("int64_t *", self.nlive)))
            done += 1
            self._check(err)
            if self._active == 0:
                break
        return done

    def _strand_bytes(self) -> int:
        """What one strand costs (its state, status and order), as the budget counts it."""
        return (self.R.shape[0] + self.I.shape[0] + 4) * 16

    def _birth_room(self) -> int:
        """How many strands ``new`` may make in the next super-step within the memory budget
        (each also takes its parameters thrice: the birth buffer, which doubles, and its copy)."""
        each = self._strand_bytes() + (3 * len(self.runner.ir.params) + 13) * 8
        return max(0, (memory_budget_bytes() - self.n * self._strand_bytes()) // each)

    def _check(self, err) -> None:
        self._take_printed()
        if err[0] == 5:
            raise error("too-large", f"new made more than the {self._birth_room():,} strands that fit in the memory "
                                     f"budget of {_human(memory_budget_bytes())} beside the {self.n:,} there are, "
                                     "in one super-step (TENSORLANG_MAX_BYTES says the budget)")
        if err[0]:
            code, at = int(err[0]) & 7, int(err[0]) >> 3
            span = Span.point(at >> 32, at & 0xFFFFFFFF) if at else None  # TL_AT in strands_prelude.h
            raise error("too-large" if code in (3, 7) else "input", ERRORS.get(code, "a run-time error in a strand"), span)

    def _add_births(self) -> None:
        """Append the strands ``new`` made (in the order the interpreter makes them: by
        parent, then in the parent's order), their parameters set, their state initialised."""
        nb = int(self.lib.tl_nbirths())  # at most _birth_room(): tl_birth refused more (the memory budget)
        r = self.runner
        reals, ints = ([r.state[slot][1] for slot in r.ir.params if r.state[slot][0] == arr] for arr in "RI")
        nbr, nbi = max(1, len(reals)), max(1, len(ints))  # (the parameters' rows, in the birth buffers' order)
        par, seq = np.empty(nb, dtype=np.int64), np.empty(nb, dtype=np.int64)
        br, bi = np.empty((nb, nbr)), np.empty((nb, nbi), dtype=np.int64)
        self.lib.tl_take_births(self._p("int64_t *", par), self._p("int64_t *", seq), self._p("double *", br),
                                self._p("int64_t *", bi))
        self._ptrs = {}  # (these arrays, and the state arrays replaced below, are not kept)
        # in a permuted run, parents in the order they updated (their rank), as Diderot appends them; a start's (parent -1) first
        order = np.lexsort((seq, np.where(par < 0, -1, self.rank[np.maximum(par, 0)]) if self.indirect else par))
        n0, n1 = self.n, self.n + nb
        R, I = (np.pad(table, ((0, 0), (0, nb))) for table in (self.R, self.I))  # (the new strands' columns zeros)
        for k, bits in r.narrow.items():  # a narrow row's n0 values are its first bytes, the new ones zeros
            I[k].view(f"int{bits}")[n0:n1] = 0
        R[reals, n0:], I[ints, n0:] = br[order, :len(reals)].T, bi[order, :len(ints)].T
        self.R, self.I, self.n = R, I, n1
        self.status = np.concatenate([self.status, np.zeros(nb, dtype=np.int8)])
        live = int(self.nlive[0]) if self.indirect else n0
        if self.indirect:
            self.ord = np.concatenate([self.ord[:live], np.arange(n0, n1, dtype=np.int64)])
            self.rank = np.zeros(max(n1, 1), dtype=np.int64)
        self.nlive = np.array([live + nb, n0], dtype=np.int64)
        self.lib.tl_init_range(n1, n0, *self._buffers())

    def _take_printed(self) -> None:
        if self.runner.ir.prints:
            n, m = self.ffi.new("int64_t *"), self.ffi.new("int64_t *")
            marks = self.lib.tl_pmarks(m)
            buf = self.lib.tl_printed(n)
            text = bytes(self.ffi.unpack(buf, n[0])) if n[0] else b""
            at = [int(marks[k]) for k in range(0, m[0], 2)] + [len(text)]
            if at[0] > 0:
                self.chunks.append(((self.at, -1), text[:at[0]]))
            self.chunks += [((self.at, int(marks[2 * k + 1])), text[at[k]:at[k + 1]]) for k in range(m[0] // 2)]

    @property
    def printed(self) -> str:
        """The printed text in the order it was printed."""
        return b"".join(t for _, t in self.chunks).decode("utf-8", "surrogateescape")

    def printed_by_strand(self, every: int = 0) -> str:
        """The printed text strand by strand (a global block's first), each strand's in the order printed, every
        ``every`` steps (the start blocks' first): Diderot's order for a program that is not bulk-synchronous."""
        order = print_order([owner for owner, _ in self.chunks], every)
        return b"".join(self.chunks[k][1] for k in order).decode("utf-8", "surrogateescape")

    def kept(self, name: str, item: tuple[int, ...], st: str, cols: np.ndarray | None) -> np.ndarray:
        """A state sequence of any length of every strand (or of ``cols``): an array of its items a strand."""
        blocks, c = np.ascontiguousarray(self.state(name, (), "int", cols).reshape(-1), np.int64), max(1, math.prod(item))
        lens, hs, gather = np.empty(len(blocks), np.int64), self.ffi.from_buffer("int64_t[]", blocks), self.lib.tl_kp_gather
        gather(hs, len(blocks), c, lp := self.ffi.from_buffer("int64_t[]", lens), self.ffi.NULL)  # the lengths, then items
        cells, ends = np.empty((int(lens.sum()),) + item, dtype=np.float64 if st == "real" else np.int64), np.cumsum(lens)
        gather(hs, len(blocks), c, lp, self.ffi.from_buffer(cells))
        return np.frompyfunc(lambda a, b: cells[a:b].astype(bool) if st == "bool" else cells[a:b], 2, 1)(ends - lens, ends)

    def state(self, name: str, shape: tuple[int, ...], kind: str, cols: np.ndarray | None = None) -> np.ndarray:
        """A state variable of every strand (or of the strands ``cols``: their columns, or
        a mask over all): shape (n,) + ``shape``, a copy."""
        names = [name] if not shape else [f"{name}.{k}" for k in range(int(np.prod(shape)))]
        places = [self.runner.state[slot] for slot in names]
        table = self.R if places[0][0] == "R" else self.I
        rows = np.array([k for _, k in places], dtype=np.int64)
        picked = None if cols is None else np.flatnonzero(cols) if cols.dtype == bool else np.ascontiguousarray(cols, np.int64)
        if picked is not None and len(picked) and not 0 <= picked.min() <= picked.max() < self.n:  # (C reads them)
            raise IndexError(f"strand columns outside the run's {self.n} strands: {picked.min()} to {picked.max()}")
        count = self.n if picked is None else len(picked)
        out = np.empty((count, len(rows)), dtype=table.dtype)
        if table is self.R and len(rows) > 1 and count:  # strand by strand in C (numpy's strided copy is slow)
            p = lambda ctype, a: self.ffi.cast(ctype, self.ffi.from_buffer(a)) if a is not None else self.ffi.NULL  # noqa: E731
            self.lib.tl_out_real(self._p("double *", table), self.n, p("int64_t *", rows), len(rows), p("int64_t *", picked),
                                 count, p("double *", out))
        for j, k in enumerate(rows if table is self.I or len(rows) == 1 else ()):  # one row of the table at a time
            bits = self.runner.narrow.get(int(k)) if table is self.I else None  # (a narrow row: its first bytes)
            row = table[k] if bits is None else table[k].view(f"int{bits}")[:self.n]
            out[:, j] = row if picked is None else row[picked]
        out = out.reshape((count,) + tuple(shape))
        return out.astype(bool) if kind == "bool" else out


def _set_first(body) -> set[str]:
    """The state slots ``body`` surely sets before reading them: top-level sets before the
    first statement that may jump or read other strands, their slot not read before."""
    written: set[str] = set()
    read: set[str] = set()
    for st in body:
        if any(S.nodes(st, kind, most=0) for kind in (S.Exit, S.Label, S.Reduce)):
            break
        read |= {r.name for r in S.nodes(st, S.Ref) if r.space == "s"}
        if isinstance(st, S.Set) and st.space == "s" and st.name not in read:
            written.add(st.name)
    return written


def _cells(ir: S.StrandIR) -> set[str]:
    """The int locals that may hold a sequence's arena cell: set from ``tl_ar_new``, ``tl_ar_cat``, ``tl_ar_kget`` or such a local."""
    defs, cells = [(x.name, x.init) for x in S.nodes(ir, S.Local)] + [(x.name, x.value) for x in S.nodes(ir, S.Set) if x.space == "l"], set()
    while new := {n for n, e in defs if n not in cells and (getattr(e, "fn", "") in ("tl_ar_new", "tl_ar_cat", "tl_ar_kget") or any(
            isinstance(x, S.Ref) and x.space == "l" and x.name in cells for x in (e, getattr(e, "a", None), getattr(e, "b", None))))}:
        cells |= new
    return cells


def _is_pos(slot: str) -> bool:
    """A slot of the position sphere queries search: ``pos.K`` of a vec1..vec3, a 1-D strand's ``real pos``."""
    return slot == "pos" or slot.startswith("pos.")


def _placed(ir: S.StrandIR) -> bool:
    """Creation sets the positions from the grid's iterators, globals and constants only: no
    probe, sequence or other strand read on the way, no jump, no condition that reads one."""
    body = tuple(ir.create) + tuple(ir.init)
    if any(S.nodes(body, kind, most=0) for kind in (S.Exit, S.Label, S.Reduce, S.New)):
        return False
    bad: set[tuple[str, str]] = set()

    def dirty(e) -> bool:
        return e is not None and (bool(S.nodes(e, S.At, most=0) or S.nodes(e, S.Len, most=0)) or any(
            r.space not in ("g", "l", "s") or (r.space, r.name) in bad for r in S.nodes(e, S.Ref)))

    def walk(stmts, under: bool) -> None:
        for st in stmts:
            if isinstance(st, S.Local) and (under or dirty(st.init)):
                bad.add(("l", st.name))
            elif isinstance(st, S.Set) and (under or dirty(st.value) or st.space not in ("l", "s")):
                bad.add((st.space, st.name))
            elif isinstance(st, (S.If, S.For)):
                inner = under or dirty(st.cond) if isinstance(st, S.If) else under or dirty(st.lo) or dirty(st.hi)
                bad.update({("l", st.var)} if inner and isinstance(st, S.For) else ())
                for sub in (st.then, st.other or ()) if isinstance(st, S.If) else (st.body,):
                    walk(sub, inner)
            elif isinstance(st, (S.Probe, S.Lib)):
                bad.update(("l", t) for t in st.targets if isinstance(st, S.Probe) or under or any(map(dirty, st.args)))
    size = -1
    while size != len(bad):  # (a loop carries a read back to its start)
        size = len(bad)
        walk(body, False)
    return not any(sp not in ("l", "s") or (sp == "s" and _is_pos(name)) for sp, name in bad)


#: False: every strand is made one by one (the tests compare both ways)
CREATE_LANES = True

#: True: a run takes the threads asked for; False: only the cores nobody else runs on, and for its steps
#: one thread where that has measured faster (strands_driver.c; the tests' two-thread runs take two)
FIXED_TEAM = False

#: the most bytes of state arrays a built program keeps from one run for the next
SPARE_BYTES = 64 << 20

_RUNNERS: dict[tuple, Runner] = kept({})
_WIDTHS: dict[tuple, tuple] = kept({})
_RUN_TOKENS = itertools.count()


def build(ir: S.StrandIR, steps: int | None = None) -> Runner:
    """The runner of ``ir`` for runs of at most ``steps`` super-steps (None: any number),
    built once per process per program text and narrow widths (the text of an IR object
    seen before is not made again: a call of a compiled program asks each time)."""
    seen = _SEEN.get(id(ir))
    key = seen[1] if seen is not None and seen[0] is ir else ir.show()
    if len(_SEEN) > 256:
        _SEEN.clear()
    _SEEN[id(ir)] = (ir, key)
    widths = _WIDTHS.get((key, steps))
    if widths is None:
        if len(_WIDTHS) > 256:
            _WIDTHS.clear()
        widths = _WIDTHS[(key, steps)] = tuple(sorted(NW.narrow_slots(ir, steps).items()))
    runner = _RUNNERS.get((key, widths))
    if runner is None:
        runner = _RUNNERS[(key, widths)] = Runner(ir, steps)
    elif runner.steps is not None:  # the same widths hold these runs too
        runner.steps = None if steps is None else max(runner.steps, steps)
    return runner


_SEEN: dict[int, tuple[S.StrandIR, str]] = kept({})


EXECUTORS["c"] = build
UNAVAILABLE["c"] = c_build.why_no_compiler
