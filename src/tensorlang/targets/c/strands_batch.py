"""Probes of many strands at once: a solo program's update of a tile row in phases (a 2-D probe's positions,
the probes in lanes, then the updates, which find them in their cache; a 3-D probe's support prefetched
``AHEAD`` steps on), with the per-strand update's results bit for bit (docs/diderot-compiled.md, "How a run goes")."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, fields, replace
from typing import Any, Callable

import numpy as np

from ...sampling.image import Image
from ...strand_ir import ir as S
from . import build as c_build
from . import csrc
from . import strands_probe as P

#: strands per block: a tile row of the solo driver (TL_TILE); TL_REPACK stores whole vectors of 8 (or 4) of them
LANES = 8
#: False: every update runs strand by strand (the tests compare both ways)
ENABLED = True
#: how many steps ahead a block prefetches its lanes' samples (0: no prefetch)
AHEAD = 8
#: False: a solo strand's steps read and write its state in place (the tests compare both ways)
OWN = True
#: False: a ray makes every step outside the volume (tl_skip; the tests compare both ways)
SKIP = True
#: False: a ray's maximum probes every step inside the volume (tl_skipm; the tests compare both ways)
MAX = True
#: the most steps one ``tl_skip`` makes; the steps after a refused run that try none
RUN, COOL = 16, 16

_IMPURE_CALLS = ("tl_at", "tl_ichk", "tl_schk", "tl_idiv", "tl_imod", "tl_ar_new", "tl_ar_cat", "tl_ar_at", "tl_ar_ati", "tl_ar_put", "tl_ar_puti", "tl_ar_kget", "tl_ar_keep", "tl_ar_gkeep")
#: a strand function's C parameters: strand ``i`` of ``n``, the state tables, the globals, the images
ARGS = "int64_t n, int64_t i, double *restrict R, int64_t *restrict I, const double *gr, const int64_t *gi, const tl_img *img"


@dataclass(frozen=True)
class Batched:
    """A probe family evaluated a block at a time: the family's cache number ``j``, the
    probe (its first in the update), the top-level locals its position needs, in order,
    and the offsets of its key and results in the block's prefetch buffer (in lanes); a
    3-D family (``lanes`` False) keeps its world point at ``at_r``."""
    family: tuple
    j: int
    probe: S.Probe
    locals: tuple[S.Local, ...]
    dim: int
    total: int
    at_x: int
    at_r: int
    lanes: bool = True


def _pure(e) -> bool:
    """Whether ``e`` can be evaluated ahead of the update: no error flag, no other strand."""
    return all(isinstance(x, (S.Const, S.Len, S.Un, S.Cast, S.Sel)) or (isinstance(x, S.Ref) and x.space in ("s", "g", "l"))
               or (isinstance(x, S.Bin) and not (x.ty == "int" and x.op in ("/", "%")))
               or (isinstance(x, S.Call) and x.fn not in _IMPURE_CALLS) for x in S.nodes(e, object))


def _locals(e) -> set:
    return {r.name for r in S.nodes(e, S.Ref) if r.space == "l"}


def families_ahead(ir: S.StrandIR, probe_plan: dict) -> list[Batched]:
    """The update's probe families whose first probe's position the block can compute
    ahead (an empty list: the per-strand update alone)."""
    body = ir.update
    if not ENABLED:
        return []
    assigned = {s.name for s in S.nodes(body, S.Set) if s.space == "l"}
    defs: dict[str, tuple[int, S.Local]] = {}
    out: list[Batched] = []
    seen: set = set()
    offset = 0
    for k, top in enumerate(body):
        for s in S.nodes(top, S.Probe):
            if s.inside or P.family(s) in seen or P.family(s) not in probe_plan:
                continue
            seen.add(P.family(s))
            ok = all(_pure(e) for e in s.pos)
            chosen: dict[str, tuple[int, S.Local]] = {}
            todo = list(_locals(s.pos))
            while ok and todo:  # the locals the position reads, each set once before, of pure values
                name = todo.pop()
                if name not in chosen:
                    init = defs[name][1].init if name in defs and name not in assigned else None
                    ok = init is not None and _pure(init)
                    if ok:
                        chosen[name] = defs[name]
                        todo += list(_locals(init))
            if not ok:
                continue
            j, top_order, _ = probe_plan[P.family(s)]
            image, kernel = ir.images[s.image], next(kk for kk in ir.kernels if kk.name == s.kernel)
            d, vox = image.dim, int(np.prod(image.shape))
            total = sum(vox * d ** o for o in range(top_order + 1))
            if d not in (2, 3) or len(s.pos) != d or s.border is not None or top_order >= len(kernel.segments):
                continue  # the block's code covers probes without border control, weights tabulated
            locs = tuple(loc for _, loc in sorted(chosen.values(), key=lambda kv: kv[0]))
            # a 2-D probe in lanes; a 3-D one (a ray's sample) stays the strand's own, whose
            # rows of contiguous taps load as vectors where lanes would gather 8-64 samples
            # one by one (measured slower on mip and dvr): the block prefetches its support
            lanes = d == 2
            size = total if lanes else 0
            out.append(Batched(P.family(s), j, s, locs, d, size, offset, offset + d, lanes))
            offset += d + (size if lanes else d)  # a ray's: its key, then its world point
        if isinstance(top, S.Local):
            defs[top.name] = (k, top)
    return out


def decls(batched: list[Batched], plain: list[str]) -> list[str]:
    """The update's cache declarations with the batched families' caches loaded from the
    block's buffer (``pf``, lane ``l``)."""
    lines = []
    by_j = {b.j: b for b in batched if b.lanes}
    for line in plain:
        j = next((b for b in by_j if line.lstrip().startswith(f"double tl_pc{b}_x[")), None)
        if j is None:
            lines.append(line)
            continue
        b = by_j[j]
        xs = ", ".join(f"pf[{(b.at_x + a) * LANES} + l]" for a in range(b.dim))
        lines.append(f"    double tl_pc{j}_x[{b.dim}] = {{{xs}}}, tl_pc{j}_r[{b.total}];")
        lines.append(f"    for (int k_ = 0; k_ < {b.total}; k_++) tl_pc{j}_r[k_] = pf[({b.at_r} + k_) * {LANES} + l];")
    return lines


def functions(batched: list[Batched], ir: S.StrandIR, probe_plan: dict, stmt: Callable, ex: Callable) -> list[str]:
    """Per batched family: ``tl_pos{j}`` (a strand's position into lane ``l`` of ``X``), ``tl_fill{j}`` (its probes)."""
    # (the update reading the block's probes without SLP: a strand whose probe missed the block's computes as the lanes)
    lines = [f"#define TL_B {LANES}", f"#define TL_PFN {sum(b.dim + (b.total if b.lanes else b.dim) for b in batched)}",
             f"#define TL_EXACT {'TL_NOSLP' if any(b.lanes for b in batched) else ''}"]
    if any(b.lanes for b in batched):  # the positions stored again whole, as the fill loads them (docs/performance.md)
        lines += [f"#{cond}\ntypedef double tl_xv __attribute__((vector_size({8 * w})));\n#define TL_REPACK(X, m) for (int a_ = 0; "
                  f"a_ + {w} <= (m); a_ += {w}) {{ tl_xv v_ = {{{', '.join(f'(X)[a_ + {k}]' for k in range(w))}}}; __asm__(\"\" : \"+{c}\"(v_)); "
                  "memcpy((X) + a_, &v_, sizeof v_); }" for cond, w, c in (("if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8 && "
                  "defined(__AVX512BW__)", 8, "v"), ("elif defined(__GNUC__) && defined(__AVX__)", 4, "x"))]
        lines.append("#else\n#define TL_REPACK(X, m) ((void)0)\n#endif")
    if not all(b.lanes for b in batched):
        lines += ["#if defined(__GNUC__)", "#define TL_PREFETCH(p) __builtin_prefetch(p)", "#else",
                  "#define TL_PREFETCH(p) ((void)(p))", "#endif", f"#define TL_AHEAD {float(AHEAD)!r}"]
    for b in batched:
        lines.append(f"static void tl_pos{b.j}({ARGS}, double *restrict X, int l) {{")
        for loc in b.locals:
            lines += stmt(loc, "    ")
        lines += [f"    X[{a * LANES} + l] = {ex(e)};" for a, e in enumerate(b.probe.pos)]
        lines += ["    (void)n; (void)R; (void)I; (void)gr; (void)gi; (void)img;", "}"]
        lines += _fill(b, ir) if b.lanes else _ahead(b, ir)
    return lines


def _fill(b: Batched, ir: S.StrandIR) -> list[str]:
    """``tl_fill{j}``: the probe of every lane's position, straight-line code per lane (:func:`_lane_sums`),
    so that the lanes vectorize; the scalar probe's values (the same sums in the same order)."""
    s, d, j, kernel = b.probe, b.dim, b.j, next(k for k in ir.kernels if k.name == b.probe.kernel)
    vox = int(np.prod(ir.images[s.image].shape))
    top = next(o for o in range(8) if sum(vox * d ** q for q in range(o + 1)) == b.total)
    q = "        "
    out = [f"TL_NOTRAP TL_WIDE static void tl_fill{j}(const double *restrict X, double *restrict pf, const tl_img *img) {{",
           f"    const tl_img *im = &img[{s.image}];",
           *P.consts(d, "    "),
           "    if (" + " || ".join(f"im->size[{a}] < {2 * kernel.radius}" for a in range(d)) + ") {  /* no cell fits: the update probes */",
           f"        for (int k_ = 0; k_ < {d} * TL_B; k_++) pf[{b.at_x * LANES} + k_] = NAN;",
           "        return;",
           "    }",
           "    #pragma omp simd",
           "    for (int l = 0; l < TL_B; l++) {"]
    out += [f"{q}double x{a} = X[{a * LANES} + l];" for a in range(d)]
    out += _lane_map(d, q, False)
    out += [f"{q}pf[{(b.at_x + a) * LANES} + l] = xi{a};" for a in range(d)]
    out += _lane_sums(s, kernel, d, top, vox, q)
    out += [f"{q}pf[({b.at_r} + {k}) * TL_B + l] = ok ? r{k} : NAN;" for k in range(b.total)]
    return out + ["    }", "}"]


def _lane_map(d: int, p: str, diag: bool) -> list[str]:
    """``xi0``.. = the world point ``x0``.. in index space, :func:`.strands_probe.index_map` as selects (``diag``: its
    diagonal way too); ``ok``: the index position finite."""
    out = []
    for a in range(d):
        diagonal = f", xd{a} = {P.row_map(d, a, 'm{}', True)}" if diag else ""
        out.append(f"{p}double xi{a} = {P.row_map(d, a, 'm{}')}{diagonal};")
        if diag:
            out.append(f"{p}xi{a} = diag ? xd{a} : xi{a};")
    return out + [f"{p}int ok = " + " & ".join(f"isfinite(xi{a})" for a in range(d)) + ";"]


def _lane_sums(s: S.Probe, kernel: S.KernelSlot, d: int, top: int, vox: int, p: str, unit: str = "") -> list[str]:
    """The orders 0..top of a probe at ``xi0``.. in ``r0``.. (:func:`.strands_probe.straight`); ``ok`` false
    where the support leaves the image, whose first cell the lane then reads (every load in bounds).
    ``unit``: the first lane's ``base`` where ``un_``, the lanes loading a row (:func:`unit_rows`)."""
    radius = kernel.radius
    out = [f"{p}double n{a} = floor(xi{a}), f{a} = xi{a} - n{a};" for a in range(d)]
    out.append(f"{p}ok = ok & " + " & ".join(f"(n{a} + {1 - radius} >= 0) & (n{a} + {radius} <= hi{a})" for a in range(d)) + ";")
    out += [f"{p}int64_t c{a} = (int64_t)(ok ? n{a} : {radius - 1}.0) + {1 - radius};" for a in range(d)]
    row = f"un_ ? {unit} + u_ : " if unit else ""
    out.append(f"{p}int64_t base = {row}" + " + ".join(f"c{a} * st{a}" for a in range(d)) + ";")
    return out + P.straight(s.kernel, kernel, d, top, vox, p)


def _ahead(b: Batched, ir: S.StrandIR) -> list[str]:
    """``tl_ahead{j}``: each lane's support ``TL_AHEAD`` steps on, had its index position
    moved as in its last step (the block's previous key, in ``pf``), prefetched row by row
    (a hint: no value depends on it); the position is kept as the next step's key, with
    its world point: the update's map of that point takes it (strands_probe.index_map)."""
    s, d, j, kernel = b.probe, b.dim, b.j, next(k for k in ir.kernels if k.name == b.probe.kernel)
    radius, taps, vox = kernel.radius, 2 * kernel.radius, int(np.prod(ir.images[s.image].shape))
    q = "        "
    out = [f"static inline void tl_ahead{j}(const double *restrict X, double *restrict pf, const tl_img *img, int l) {{",
           f"    const tl_img *im = &img[{s.image}];", *P.consts(d, "    "), "    {"]
    out += [f"{q}double x{a} = X[{a * LANES} + l]; pf[{(b.at_r + a) * LANES} + l] = x{a};" for a in range(d)]
    out += P.index_map(d, q)  # the update's map: it takes this index position at this point (reuse)
    for a in range(d):
        key = f"pf[{(b.at_x + a) * LANES} + l]"
        out.append(f"{q}double a{a} = xi{a} + TL_AHEAD * (xi{a} - {key}); {key} = xi{a};")
    out.append(f"{q}if (!(" + " && ".join(f"a{a} >= {radius - 1} && a{a} <= hi{a} - {radius}" for a in range(d))
               + ")) return;")
    return out + _prefetch(q, "p", "a", d, radius, f"{taps - 1} * st0" + (f" + {vox - 1} * cst" if vox > 1 else "")) \
        + ["    }", "}"]


def _prefetch(q: str, p: str, x: str, d: int, radius: int, last: str) -> list[str]:
    """The rows of the support at the index position ``x``0.. from ``p``: each row's first and ``last`` sample prefetched."""
    return [f"{q}const double *{p} = data + " + " + ".join(f"((int64_t){x}{a} + {1 - radius}) * st{a}" for a in range(d)) + ";"] + [
        f"{q}TL_PREFETCH({p} + {off}); TL_PREFETCH({p} + {off} + {last});" for off in (
            " + ".join(f"{t} * st{a + 1}" for a, t in enumerate(ts) if t) or "0" for ts in itertools.product(range(2 * radius), repeat=d - 1))]


def block_steps(batched: list[Batched], own: tuple | None = None, skip: str = "") -> str:
    """The solo driver's inner loop over one tile row (strands ``ib``..``ib + w - 1``): in lock step where a
    family's probes run in lanes (positions, the block's probes, then each strand's update; a 3-D family's
    position and prefetch there too); strand after strand where every batched probe is a 3-D one (its
    position, the prefetch of its support ahead, its update; ``own``: :func:`own_steps`)."""
    if not any(b.lanes for b in batched):
        who = "1, 0, Rl, Il" if own else "n, i, R, I"
        pos = "\n".join(f"        tl_pos{b.j}({who}, gr, gi, img, X, 0); tl_ahead{b.j}(X, pf, img, 0);" for b in batched)
        return RAYS.replace("{steps}", " " * 20 + own_steps(own, pos, f"tl_update_pf({who}, gr, gi, img, pf, 0)", " " * 20, skip))
    pos = "\n".join(
        f"                    for (int l = 0; l < TL_B; l++) {{ if (live[l]) tl_pos{b.j}(n, ib + l, R, I, gr, gi, img, X, l); "
        f"else for (int a = 0; a < {b.dim}; a++) X[a * TL_B + l] = NAN; }}\n"
        f"                    TL_REPACK(X, {b.dim} * TL_B)\n"
        f"                    tl_fill{b.j}(X, pf, img);" if b.lanes else
        f"                    for (int l = 0; l < TL_B; l++) if (live[l]) {{ tl_pos{b.j}(n, ib + l, R, I, gr, gi, img, X, l); "
        f"tl_ahead{b.j}(X, pf, img, l); }}" for b in batched)
    init = "" if all(b.lanes for b in batched) else \
        "                for (int q = 0; q < TL_PFN * TL_B; q++) pf[q] = NAN;  /* no last step's key */\n"
    return BLOCK.replace("{pos}", pos).replace("{init}", init)


def _subst(e, old, new):
    """``e`` with the expression ``old`` replaced by ``new`` (pure expressions)."""
    if e == old or not isinstance(e, (S.Bin, S.Un, S.Cast, S.Call, S.Sel)):
        return new if e == old else e
    parts = {f.name: getattr(e, f.name) for f in fields(e) if not isinstance(getattr(e, f.name), str)}
    kids: Any = {k: tuple(_subst(a, old, new) for a in v) if isinstance(v, tuple) else _subst(v, old, new) for k, v in parts.items()}
    return replace(e, **kids)


def _march(ir: S.StrandIR):
    """A solo update that is a ray's march (:func:`skip_run`): ``t``, its ``t + c``, ``c``, the
    exit tests (each with whether it follows the addition), the ``inside`` test, the other
    statements of its branch, and per axis of the test's point ``(a, b, late)`` (``a + t * b``,
    ``late``: made after the addition); None where the update is not one."""
    body = ir.update
    changed = {st.name for st in S.nodes(body, S.Set)}
    sets = [st for st in body if isinstance(st, S.Set)]
    if not SKIP or len(sets) != 1 or sets[0].space != "s" or not isinstance(sets[0].value, S.Bin):
        return None
    t = S.Ref("s", sets[0].name, "real")
    step, add = None, sets[0].value

    def inv(e) -> bool:
        return _pure(e) and all(r.space == "g" or (r.space == "s" and r.name not in changed) for r in S.nodes(e, S.Ref))

    if add.op == "+" and add.a == t and inv(add.b):
        step = add.b
    if step is None:
        return None
    locals_: dict[str, tuple[S.Expr | None, bool]] = {}
    probe, exits, after, branch = None, [], False, None
    for st in body:
        if isinstance(st, S.Local) and (st.init is None or _pure(st.init)):
            locals_[st.name] = (st.init, after)
        elif isinstance(st, S.If) and not st.other and len(st.then) == 1 and isinstance(st.then[0], S.Exit) \
                and st.then[0].kind in ("stabilize", "die") and inv(_subst(st.cond, t, S.Const(0.0, "real"))):
            exits.append((st.cond, after))
        elif isinstance(st, S.Probe) and st.inside and probe is None and st.border is None:
            probe = st
        elif isinstance(st, S.If) and probe is not None and not st.other and st.cond == S.Ref("l", probe.targets[0], "bool"):
            branch = st.then
        elif st is sets[0]:
            after = True
        else:
            return None
    if probe is None:
        return None
    terms = []
    for at in probe.pos:
        e, late = locals_.get(at.name, (None, False)) if isinstance(at, S.Ref) and at.space == "l" else (at, after)
        pair = None
        if isinstance(e, S.Bin) and e.op == "+":
            for base, mul in ((e.a, e.b), (e.b, e.a)):
                if inv(base) and isinstance(mul, S.Bin) and mul.op == "*":
                    pair = pair or next(((base, v, late, e) for u, v in ((mul.a, mul.b), (mul.b, mul.a)) if u == t and inv(v)), None)
        if pair is None:
            return None
        terms.append(pair)
    return t, add, step, exits, probe, branch or (), terms


def skip_run(ir: S.StrandIR, ex: Callable) -> list[str]:
    """``tl_skip``: where a solo update is a ray's march (:func:`_march`), the steps of a run of up to ``RUN``
    that provably all fail its ``inside`` test, made as ``t += c`` and the exit tests alone (the proof:
    docs/diderot-compiled.md, "How a run goes").  Empty where the update is not so."""
    march = _march(ir)
    if march is None:
        return []
    t, add, step, exits, probe, _, terms = march
    d = len(terms)
    radius = next(k for k in ir.kernels if k.name == probe.kernel).radius
    tc, tn = S.Ref("l", "tc_", "real"), S.Ref("l", "tn_", "real")
    out = [f"static int64_t tl_skip({ARGS}, int64_t left) {{",
           f"    const tl_img *im = &img[{probe.image}];",
           f"    const int64_t K = left < {RUN} ? left : {RUN};",
           "    if (K < 2) return -1;",
           f"    const double c_ = {ex(step)}, t0_ = {ex(t)};",
           "    const double " + ", ".join(f"a{q}_ = {ex(a)}, b{q}_ = {ex(b)}" for q, (a, b, _, _) in enumerate(terms)) + ";",
           # the segment from ta to tb beyond a face on some axis, by the margin
           "    #define TL_OUT(ta, tb) tl_out_(im, ta, tb" + "".join(f", a{q}_, b{q}_" for q in range(d)) + ")",
           f"    if (!TL_OUT(t0_, t0_ + (double)(K + {int(AHEAD) + 2}) * c_)) return -1;  /* a guess first */",
           "    double l_tc_ = t0_; int64_t q_ = 0;",
           "    for (; q_ < K; q_++) {",
           f"        double l_tn_ = {ex(_subst(add, t, tc))};"]
    out += [f"        if ({ex(_subst(cond, t, tn if late else tc))}) break;" for cond, late in exits]
    out += ["        l_tc_ = l_tn_;", "    }",
            # the segment to the run's end and past it (AHEAD steps on, prefetched by the steps after)
            f"    if (q_ == 0 || !TL_OUT(t0_, l_tc_ + {int(AHEAD) + 2}.0 * c_)) return -1;",
            "    #undef TL_OUT",
            f"    {ex(t)} = l_tc_;",
            "    (void)n; (void)R; (void)I; (void)gr; (void)gi;",
            "    return q_;", "}"]
    args = ", ".join(f"double a{q}, double b{q}" for q in range(d))
    head = [f"static inline int tl_out_(const tl_img *im, double ta, double tb, {args}) {{",
            "    double m = fabs(ta) > fabs(tb) ? fabs(ta) : fabs(tb);"]
    for a in range(d):
        for w, tv in (("a", "ta"), ("b", "tb")):
            head.append(f"    double x{a}{w} = im->m[{4 * a + 3}]" + "".join(
                f" + im->m[{4 * a + q}] * (a{q} + {tv} * b{q})" for q in range(d)) + ";")
        head.append(f"    double e{a} = 2e-12 * (fabs(im->m[{4 * a + 3}])" + "".join(
            f" + fabs(im->m[{4 * a + q}]) * (fabs(a{q}) + m * fabs(b{q}))" for q in range(d)) + ");")
        head.append(f"    if ((x{a}a + e{a} <= {radius - 1} && x{a}b + e{a} <= {radius - 1}) || "
                    f"(x{a}a - e{a} >= (double)(im->size[{a}] - {radius}) && x{a}b - e{a} >= (double)(im->size[{a}] - {radius}))) return 1;")
    return head + ["    return 0;", "}"] + out


#: kernels whose weights are nonnegative and sum to 1: a value is at most its support's largest sample
CONVEX = ("tent", "bspln3")
#: the steps after a ``tl_skipm`` that made none that try none
COOLM = 2


def skip_max(ir: S.StrandIR, ex: Callable) -> tuple[list[str], tuple[int, int] | None]:
    """``tl_skipm`` and (image, kernel radius): where a ray's march (:func:`_march`) does only
    ``m = max(m, F(p))`` in its ``inside`` branch (``F`` a ``CONVEX`` kernel's value), its next steps
    made one by one as ``t += c`` and the exit tests alone while each provably leaves ``m`` as it is
    (outside by half a cell, or in a block whose :func:`bounds` is at most ``m``; the proof:
    docs/diderot-compiled.md, "How a run goes").  The point and its map are the update's."""
    march = _march(ir) if MAX else None
    if march is None:
        return [], None
    t, add, _, exits, probe, branch, terms = march
    if len(branch) != 2 or not isinstance(branch[0], S.Probe) or not isinstance(branch[1], S.Set):
        return [], None
    pr, st = branch
    m = S.Ref("s", st.name, "real")
    v = S.Ref("l", pr.targets[0], "real")
    args = st.value.args if isinstance(st.value, S.Call) and st.value.fn == "tl_max" else ()
    if (st.space != "s" or m == t or args not in ((m, v), (v, m)) or pr.inside or pr.order or pr.border is not None
            or (pr.image, pr.kernel, pr.pos) != (probe.image, probe.kernel, probe.pos) or probe.kernel not in CONVEX
            or ir.images[probe.image].shape or len(terms) != ir.images[probe.image].dim):
        return [], None
    d, r = len(terms), next(k for k in ir.kernels if k.name == probe.kernel).radius
    tc, tn = S.Ref("l", "tc_", "real"), S.Ref("l", "tn_", "real")
    out = [f"static int64_t tl_skipm({ARGS}, int64_t left) {{",
           f"    const tl_img *im = &img[{probe.image}];",
           f"    const double *restrict bd = img[{len(ir.images)}].data;",
           "    if (!bd) return 0;",
           f"    const double mx_ = {ex(m)};",
           "    const int64_t " + ", ".join(f"bs{a} = img[{len(ir.images)}].stride[{a}]" for a in range(d)) + ";",
           "    const double " + ", ".join(f"hi{a} = (double)(im->size[{a}] - 1), out{a} = (double)(im->size[{a}] - {r}) + 0.5"
                                         for a in range(d)) + ";",
           f"    double l_tc_ = {ex(t)}; int64_t q_ = 0;",
           "    for (; q_ < left; q_++) {",
           f"        double l_tn_ = {ex(_subst(add, t, tc))};"]
    out += [f"        if ({ex(_subst(cond, t, tn if late else tc))}) break;" for cond, late in exits]
    out += [f"        double x{a} = {ex(_subst(e, t, tn if late else tc))};" for a, (_, _, late, e) in enumerate(terms)]
    out += P.index_map(d, "        ")
    out.append("        if (!(" + " && ".join(f"isfinite(xi{a})" for a in range(d)) + ")) break;")
    out.append("        if (!(" + " || ".join(f"xi{a} <= {r - 1.5} || xi{a} >= out{a}" for a in range(d)) + ")) {")
    out += [f"            int64_t c{a} = (int64_t)(xi{a} < 0 ? 0 : xi{a} > hi{a} ? hi{a} : xi{a}) >> 3;" for a in range(d)]
    out.append(f"            if (!(bd[{' + '.join(f'c{a} * bs{a}' for a in range(d))}] {'<=' if args[0] == m else '<'} mx_)) break;")
    out += ["        }", "        l_tc_ = l_tn_;", "    }"]
    if AHEAD:  # a run ended at a probe: the supports of the steps after it, ahead of their updates
        taps = 2 * r
        out += ["    if (q_ > 0 && q_ < left) {", "        const double *data = im->data;",
                "        const int64_t " + ", ".join(f"st{a} = im->stride[{a}]" for a in range(d)) + ";",
                "        double l_tn_ = l_tc_;",
                f"        for (int j_ = 0; j_ < {int(AHEAD)}; j_++) {{",
                f"            double l_tc_ = l_tn_; l_tn_ = {ex(_subst(add, t, tc))};"]
        out += [f"            double x{a} = {ex(_subst(e, t, tn if late else tc))};" for a, (_, _, late, e) in enumerate(terms)]
        out += ["            " + x.lstrip() for x in P.index_map(d, "")]
        out.append("            if (!(" + " && ".join(f"xi{a} >= {r - 1} && xi{a} <= hi{a} - {r}" for a in range(d)) + ")) continue;")
        out += _prefetch(" " * 12, "p_", "xi", d, r, f"{taps - 1} * st0")
        out += ["        }", "    }"]
        out = ["#ifndef TL_PREFETCH", "#define TL_PREFETCH(p) ((void)(p))", "#endif"] + out
    out += [f"    {ex(t)} = l_tc_;",
            "    (void)n; (void)R; (void)I; (void)gr; (void)gi;", "    return q_;", "}"]
    return out, (probe.image, r)


def bounds(image: Image, radius: int) -> np.ndarray | None:
    """The block bounds of a scalar image (csrc/strands_bounds.c: a block of 8 cells an axis),
    kept in ``image.tables`` where ``sampling.image`` made its samples (a file read once, an array
    copied), made each call for others (an ``Image`` of a caller's array, which may change); None
    where no C compiler builds the table's code."""
    data, tables = np.asarray(image.data), image.tables
    table = None if tables is None else tables.get(("block bounds", radius))
    if table is not None:
        return table
    ffi, lib = c_build.build_and_load(csrc.text("strands_bounds.c"), c_build.require_compiler(), _BOUNDS_API)
    size = np.ones(3, dtype=np.int64)
    size[:data.ndim] = data.shape
    strides = np.zeros(3, dtype=np.int64)
    flat = data if data.dtype == np.float64 and not any(x % 8 for x in data.strides) else data.astype(np.float64)
    strides[:data.ndim] = [x // 8 for x in flat.strides]
    table = np.empty(tuple((size[::-1] - 1) // 8 + 1))
    os_ = np.array([x // 8 for x in table.strides[::-1]], dtype=np.int64)
    order = np.argsort(np.where(size > 1, np.abs(strides), 1 << 62), kind="stable").astype(np.int64)
    p = [ffi.cast("const int64_t *", x.ctypes.data) for x in (size, strides, os_, order)]
    if lib.tl_bounds(ffi.cast("const double *", flat.ctypes.data), p[0], p[1], radius,
                     ffi.cast("double *", table.ctypes.data), p[2], p[3]):
        return None
    if tables is not None:
        tables[("block bounds", radius)] = table
    return table


_BOUNDS_API = ("int tl_bounds(const double *data, const int64_t *size, const int64_t *st, int64_t r, double *out, "
               "const int64_t *os, const int64_t *p);")


def with_bounds(ffi, arr, slots: tuple, values, which: tuple[int, int], keep: list):
    """The images' descriptors ``arr`` and one more after them: the block bounds of image
    ``which[0]`` for kernel radius ``which[1]`` (its data the table, its strides the table's;
    a null table: no skipping)."""
    n = len(slots)
    out = ffi.new("tl_img[]", n + 1)
    for k in range(n):
        out[k] = arr[k]
    value = values[slots[which[0]].name]
    table = bounds(getattr(value, "image", value), which[1])
    if table is not None:
        keep.append(table)
        out[n].data = ffi.cast("const double *", table.ctypes.data)
        for a in range(table.ndim):
            out[n].size[a], out[n].stride[a] = table.shape[-1 - a], table.strides[-1 - a] // 8
    return out


def own_steps(own: tuple | None, pos: str, update: str, pad: str, skip: str = "") -> str:
    """A solo strand's steps (``i``; ``u`` counts them): ``pos``, then the ``update`` call,
    until it returns a status, for up to ``k - s`` steps or an error.  ``own``: the counts of
    its real and int slots and ``Renderer.cell``: its state copied into the locals ``Rl`` and
    ``Il`` for its steps (the update, called with ``n`` 1 and ``i`` 0, reads ``R[k * n + i]``
    as ``Rl[k]``), which the C compiler keeps in registers, and stored back before stabilize."""
    nr, ni, cell = own or (0, 0, None)
    cells = [(cell(a, k, f"{a}l", None, "0"), cell(a, k, a, "n", "i")) for a, m in (("R", nr), ("I", ni)) for k in range(m)]
    load, store = "".join(f" {x} = {y};" for x, y in cells), "".join(f" {y} = {x};" for x, y in cells)
    who = "1, 0, Rl, Il" if own else "n, i, R, I"
    cool = (" int cool_ = 0; (void)cool_;" if skip else "") + (" int coolm_ = 0;" if "max" in skip else "")
    skip = (f"        if (cool_ > 0) cool_--;\n        else {{ int64_t q_ = tl_skip({who}, gr, gi, img, k - s - u); "
            f"if (q_ > 0) {{ u += q_; continue; }} cool_ = {COOL}; }}\n" if "skip" in skip else "") + (
        f"        if (coolm_ > 0) coolm_--;\n        else {{ int64_t q_ = tl_skipm({who}, gr, gi, img, k - s - u); u += q_; "
        f"coolm_ = q_ ? 0 : {COOLM}; if (u >= k - s) break; }}\n" if "max" in skip else "")
    return (STEPS.replace("{load}", f"double Rl[{max(nr, 1)}]; int64_t Il[{max(ni, 1)}];{load}" if own else "")
            .replace("{skip}", skip).replace("{cool}", cool)
            .replace("{store}", store).replace("{pos}", pos + "\n" if pos else "").replace("{update}", update)
            .replace("\n", "\n" + pad).rstrip(" "))


STEPS = r"""if (status[i] == 0) {
    {load}
    int r = 0;{cool}
    while (u < k - s && (!tl_err_any || tl_go(u, i))) {
{skip}{pos}        r = {update};
        u++;
        if (r) break;
    }
   {store}
    if (r == 1) r = tl_stabilize(n, i, R, I, gr, gi, img);
    if (r) status[i] = (int8_t)r;
    if (tl_err_any) tl_claim(u - 1, i);
}
"""


RAYS = r"""
                for (int64_t i = row * cols + c0; i < row * cols + c0 + TL_TILE && i < (row + 1) * cols && i < n; i++) {
                    int64_t u = 0;
                    double X[3 * TL_B], pf[TL_PFN * TL_B];
                    for (int q = 0; q < TL_PFN * TL_B; q++) pf[q] = NAN;  /* no last step's key */
{steps}                    if (u > most) most = u;
                }
"""


BLOCK = r"""
                int64_t ib = row * cols + c0, w = TL_TILE;
                if (ib + w > (row + 1) * cols) w = (row + 1) * cols - ib;
                if (ib + w > n) w = n - ib;
                int64_t u[TL_B] = {0};
                int live[TL_B];
                double X[3 * TL_B], pf[TL_PFN * TL_B];
{init}                for (int64_t rd = 0;; rd++) {  /* (rd: the live lanes' step, the same in all; their failures in order) */
                    int any = 0;
                    int64_t last = tl_err_any && rd ? (tl_claim(rd - 1, ib), __atomic_load_n(&tl_err_k1, __ATOMIC_RELAXED)) : INT64_MAX;
                    for (int l = 0; l < TL_B; l++) {
                        live[l] = l < w && status[ib + l] == 0 && u[l] < k - s && u[l] <= last;
                        any |= live[l];
                    }
                    if (!any) break;
{pos}
                    for (int l = 0; l < TL_B; l++) {
                        if (!live[l]) continue;
                        int r = tl_update_pf(n, ib + l, R, I, gr, gi, img, pf, l);
                        if (r == 1) r = tl_stabilize(n, ib + l, R, I, gr, gi, img);
                        if (r) status[ib + l] = (int8_t)r;
                        u[l]++;
                    }
                }
                for (int l = 0; l < w; l++) if (u[l] > most) most = u[l];
"""


def lane_probe(s: S.Probe, ir: S.StrandIR, ex: Callable, q: str, unit: str = "") -> list[str] | None:
    """A probe (or an ``inside`` test) as a lane's straight-line code in a loop across strands (the create in
    lanes, ``tl_create_lanes``): the scalar probe's map, test and sums (:func:`_lane_map`, :func:`_lane_sums`,
    ``unit`` its), its branches as selects. None where the lanes do not cover it (border control, an order past the kernel's)."""
    kernel, image = next(k for k in ir.kernels if k.name == s.kernel), ir.images[s.image]
    d, radius, vox = image.dim, kernel.radius, int(np.prod(image.shape))
    if d > 3 or len(s.pos) != d or s.border is not None or (not s.inside and s.order >= len(kernel.segments)):
        return None
    p = q + "    "
    out = [f"{q}{'int' if s.inside else 'double'} {', '.join('l_' + t for t in s.targets)};", f"{q}{{"]
    out += [f"{p}const tl_img *im = &img[{s.image}];"] + P.consts(d, p, "dg_ | (int)im->diag")  # (dg_: tl_create_lanes_k's)
    out += [f"{p}double x{a} = {ex(e)};" for a, e in enumerate(s.pos)]
    out += _lane_map(d, p, True)
    if s.inside:  # Diderot's test: s - 1 < x < size - s, strictly
        strict = " & ".join(f"(xi{a} > {radius - 1}) & (xi{a} < (double)(im->size[{a}] - {radius}))" for a in range(d))
        return out + [f"{p}l_{s.targets[0]} = ok & {strict};", f"{q}}}"]
    out += _lane_sums(s, kernel, d, s.order, vox, p, unit)
    first = sum(vox * d ** o for o in range(s.order))
    return out + [f"{p}l_{t} = ok ? r{first + k} : NAN;" for k, t in enumerate(s.targets)] + [f"{q}}}"]


def lane_images(body, ir: S.StrandIR) -> list[str]:
    """The test a block of lanes makes first: every probed image holds the kernel's support
    (a lane outside reads the first cell's)."""
    tests = []
    for s in S.nodes(body, S.Probe):
        if not s.inside:
            taps = 2 * next(k.radius for k in ir.kernels if k.name == s.kernel)
            tests += [f"img[{s.image}].size[{a}] < {taps}" for a in range(ir.images[s.image].dim)]
    return sorted(set(tests))


#: |a world map's scale or offset| and |an iterator| up to which unit_check proves the index exact
UNIT_MAP, UNIT_IT = 1 << 20, 1 << 31


def unit_rows(body, ir: S.StrandIR) -> list[tuple[S.Probe, int, tuple[str, ...]]]:
    """The probes of a create in lanes that may load a row of samples instead of gathering them:
    each component of the point an iterator as a real (the grid's last, along the lanes, in one
    component) or an integral constant, through locals and state set once before the probe's
    statement (a local's initializer: anywhere before, C's scope), no exit before.  Each: the
    probe, the lanes' axis, the block's first point in C (:func:`unit_check`)."""
    its, sets = {f"it_{it}": k for k, it in enumerate(ir.iters)}, dict[tuple[str, str], list]()
    for k, st in enumerate(body):
        for x in S.nodes(st, object):
            found: list[tuple[tuple[str, str], S.Expr | None]]
            if isinstance(x, S.Set):
                found = [((x.space, x.name), x.value)]
            elif isinstance(x, S.Local) and x.init is not None:
                found = [(("l", x.name), x.init)]
            else:  # (anything else that names a local: a probe's targets, a loop's variable, a fold's target)
                names = list(getattr(x, "targets", ())) + [getattr(x, a) for a in ("var", "target") if hasattr(x, a)]
                found = [(("l", name), None) for name in names]
            for key, v in found:
                sets.setdefault(key, []).append((k if x is st else k + 0.5 if isinstance(x, S.Local) else -1, v))
    stop = next((k for k, st in enumerate(body) if S.nodes(st, S.Exit, most=0) or S.nodes(st, S.Label, most=0)), len(body))

    def resolve(e, before: int, depth: int = 0):  # ("i"/"r", k): iterator k (as a real); ("c", v): a constant
        if isinstance(e, S.Ref) and e.space == "l" and e.name in its and ("l", e.name) not in sets:
            return ("i", its[e.name])
        if isinstance(e, S.Const) and e.ty in ("int", "real"):
            v = float(e.value)  # type: ignore[arg-type]
            return ("c", v) if math.isfinite(v) and v.is_integer() and abs(v) <= UNIT_MAP else None
        got = resolve(e.a, before, depth + 1) if isinstance(e, S.Cast) and e.ty == "real" else None
        if got is not None:
            return ("r", got[1]) if got[0] == "i" else got if got[0] == "c" else None
        where = sets.get((e.space, e.name), []) if isinstance(e, S.Ref) and e.space in ("l", "s") and depth < 16 else []
        if len(where) == 1 and (0 <= where[0][0] < before or where[0][0] == before + 0.5) and where[0][1] is not None:
            got = resolve(where[0][1], int(where[0][0]), depth + 1)
            return got if got is not None and (got[0] == "c" or (got[0] == "r") == (e.ty == "real")) else None
        return None
    out, last = [], ("r", len(ir.iters) - 1)
    for k, st in enumerate(body[:stop]):
        for pr in S.nodes(st, S.Probe):
            comps = [resolve(e, k) for e in pr.pos]
            if not (pr.inside or pr.border or len(comps) != ir.images[pr.image].dim or None in comps
                    or any(c[0] == "i" for c in comps) or comps.count(last) != 1):
                out.append((pr, comps.index(last), tuple(f"(double)its[{c[1]}]" if c[0] == "r" else f"({c[1]!r})" for c in comps)))
    return out


def unit_check(units: list, ir: S.StrandIR) -> list[str]:
    """``tl_create_lanes``'s test where there are :func:`unit_rows`, every probed map is diagonal and the positions kept:
    ``un_``, whether every such probe loads rows in this block (its map's entries integral, scale 1 and
    stride 1 along the lanes: the index points are integers below 2^53, exact in any order, the first
    lane's plus the lane), each one's first ``base`` (``ub_``).  The lanes whose support leaves the image
    (``ok`` false: NaN, whatever they load) load too where every load of the block (``ob_`` .. ``ob_ + hi_``,
    the strides positive) lies between the image's first and last sample in memory (0 .. ``bhi_``): a row
    that starts or ends at the image's border loads as its inner lanes do."""
    out = ["    if (v_ == 3) {", f"        un_ = m_ <= {UNIT_IT}" + "".join(
        f" && its[{k}] >= -{UNIT_IT} && its[{k}] <= {UNIT_IT}" for k in range(len(ir.iters))) + ";", "    }"]
    for j, (pr, axis, pos) in enumerate(units):
        d, r = ir.images[pr.image].dim, next(k.radius for k in ir.kernels if k.name == pr.kernel)
        out += [f"    if (un_) {{  /* probe {j}: image {pr.image}, the lanes along its axis {axis} */",
                f"        const tl_img *im = &img[{pr.image}];",
                f"        const double x_[{d}] = {{{', '.join(pos)}}};",
                "        int64_t ob_ = 0, hi_ = m_ - 1, bhi_ = 0;",
                f"        un_ = im->stride[{axis}] == 1 && im->m[{5 * axis}] == 1.0;",
                f"        for (int a = 0; a < {d} && un_; a++) {{",
                "            double s = im->m[5 * a], o = im->m[4 * a + 3], n0 = o + s * x_[a];",
                f"            un_ = s == floor(s) && o == floor(o) && fabs(s) <= {UNIT_MAP}.0 && fabs(o) <= {UNIT_MAP}.0"
                " && fabs(n0) <= (double)(im->size[a] + m_) && im->stride[a] > 0;",
                f"            ob_ += un_ ? ((int64_t)n0 + {1 - r}) * im->stride[a] : 0;",
                f"            hi_ += {2 * r - 1} * im->stride[a];",
                "            bhi_ += (im->size[a] - 1) * im->stride[a];",
                "        }",
                "        un_ = un_ && ob_ >= 0 && ob_ + hi_ <= bhi_;",
                f"        ub_[{j}] = ob_;",
                "    }"]
    return out
