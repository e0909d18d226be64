"""Probes of images from strand programs, generated as C: 004 §2.2's sum at one point (the
map, cell, domain test, weights, separable sum and chain rule of the interpreter's probes:
docs/diderot-compiled.md, "How a run goes")."""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

from ...errors import error
from ...sampling.image import Image
from ...strand_ir import ir as S

#: an image's C descriptor: its samples where they lie (``stride``: elements between
#: neighbours along each space axis, ``cstride`` between a voxel's components), so that an
#: NRRD file's data (fastest axis first) and a numpy array of any layout are read in place
#: ``diag``: the map's linear part diagonal with no zero on its diagonal (one test instead of
#: one per entry: :func:`index_map`; ``DIAG`` False: never, for tests)
DIAG = True
TYPEDEF = ("typedef struct { const double *data; int64_t size[3]; int64_t vox; double m[16]; int64_t ident; "
           "int64_t stride[3]; int64_t cstride; int64_t diag; } tl_img;")
PRELUDE = (TYPEDEF + "\n"
           "static inline int64_t tl_pmod(int64_t a, int64_t p) { int64_t r = a % p; return r < 0 ? r + p : r; }\n"
           # a 3-D probe's axis-0 taps in one vector (LANES): contiguous in an NRRD file's layout
           "#if defined(__GNUC__)\n"
           + "".join(f"typedef double tl_v{w} __attribute__((vector_size({8 * w})));\n"
                     f"static inline tl_v{w} tl_ld{w}(const double *p, int64_t s) {{\n"
                     f"    tl_v{w} v; if (s == 1) memcpy(&v, p, sizeof v); "
                     f"else v = (tl_v{w}){{{', '.join(f'p[{k} * s]' for k in range(w))}}}; return v;\n}}\n"
                     for w in (2, 4))
           + "#endif\n")


def axes_offset(axes: tuple, d: int) -> int:
    """Where derivative component ``axes`` sits in its order's block (the last axis fastest)."""
    return sum(x * d ** (len(axes) - 1 - i) for i, x in enumerate(axes))


def derivative_components(d: int, order: int):
    """(times each axis is differentiated, offset) of each component, in storage order."""
    for axes in itertools.product(range(d), repeat=order):
        yield tuple(axes.count(a) for a in range(d)), axes_offset(axes, d)


def _derive(coeffs: tuple[float, ...], m: int) -> list[float]:
    c = [float(x) for x in coeffs]
    for _ in range(m):
        c = [c[i] * i for i in range(1, len(c))]
    return c or [0.0]


def _horner_names(c: list[str], x: str) -> str:
    """The polynomial of coefficients ``c`` (C expressions, the constant first) at ``x``, by Horner."""
    expr = c[-1]
    for coef in reversed(c[:-1]):
        expr = f"({coef} + ({expr}) * {x})"
    return expr


def kernels(ir: S.StrandIR) -> list[str]:
    """One C function per kernel and derivative order the probes use."""
    found: dict[str, int] = {}
    for s in S.nodes((ir.create, ir.init, ir.start, ir.global_start, ir.update, ir.stabilize, ir.global_block), S.Probe):
        found[s.kernel] = max(found.get(s.kernel, 0), s.order)
    lines = []
    for k in ir.kernels:
        for m in range(found.get(k.name, -1) + 1):
            if m < len(k.segments):  # tap t's own polynomial in u = f - i, as the interpreter's weights
                rows = [list(row) for row in k.segments[m]]
                width = max(len(row) for row in rows)
                # every tap's coefficients in one table (zeros above a tap's degree): the taps'
                # Horner steps in SIMD lanes, no branch; the same operations as tap by tap
                rows = [row + [0.0] * (width - len(row)) for row in rows]
                table = ", ".join("{" + ", ".join(map(repr, row)) + "}" for row in rows)
                coef = [f"tl_c_{k.name}_{m}[t][{j}]" for j in range(width)]
                lines += [f"static const double tl_c_{k.name}_{m}[{len(rows)}][{width}] = {{{table}}};",
                          f"static inline void tl_w_{k.name}_{m}(double f, double *restrict w) {{",
                          f"    for (int t = 0; t < {len(rows)}; t++) {{", f"        double u = f - ({1 - k.radius} + t);",
                          f"        w[t] = {_horner_names(coef, 'u')};", "    }", "}"]
                continue
            lines += [f"static inline double tl_k_{k.name}_{m}(double u, int t) {{", "    (void)t;", "    double a = fabs(u), r;"]
            lines += [f"    {'else if' if piece else 'if'} (a < {piece + 1}) r = {_horner_names(list(map(repr, _derive(coeffs, m))), 'a')};"
                      for piece, coeffs in enumerate(k.pieces)]
            lines += ["    else r = 0.0;", "    return u < 0 ? -r : r;" if m % 2 else "    return r;", "}"]
    return lines


def render(s: S.Probe, ir: S.StrandIR, ex: Callable[[S.Expr], str], pad: str, plan: dict | None = None,
           share: tuple[str, str] | None = None, fills: dict | None = None,
           reuse: tuple[list[str], list[str]] | None = None, known: bool = False) -> list[str]:
    """``share``: ("keep", name): an ``inside`` test that leaves its index-space point in
    ``l_NAME_xi0``..; ("use", name): a probe at the same point that reads it from there.
    ``reuse``: a point of this image mapped ahead of the update (:func:`index_map`).
    ``known``: the statement before (locals between) filled this cache at this shared point.
    ``fills``: a family's large cache fill (:data:`OUTLINE`; a 3-D probe's third derivatives
    are 90 KB of C) as a function of the file, its lines in ``fills`` by its name."""
    image = ir.images[s.image]
    radius = next(k.radius for k in ir.kernels if k.name == s.kernel)
    d, order, taps = image.dim, s.order, 2 * radius
    vox = int(np.prod(image.shape)) if image.shape else 1
    if d > 3 or len(s.pos) != d:
        raise error("internal", f"a probe of a {d}-D image at a point of {len(s.pos)} components")
    out = [f"{pad}{'int' if s.inside else 'double'} {', '.join('l_' + t for t in s.targets)};"]
    p, q = pad + "    ", pad
    if share is None or share[0] == "keep":  # the map to index space
        out += [f"{q}{{"] if share is None else [f"{q}double {', '.join(f'l_{s.targets[0]}_xi{a}' for a in range(d))};",
                                                 f"{q}{{"]
        out += [f"{p}const tl_img *im = &img[{s.image}];"] + [f"{p}double x{a} = {ex(e)};" for a, e in enumerate(s.pos)]
        out += index_map(d, p, reuse)
        if share is not None:
            out += [f"{p}l_{s.targets[0]}_xi{a} = xi{a};" for a in range(d)] + [f"{q}}}"]
    if share is not None:
        out += [f"{q}{{", f"{p}const tl_img *im = &img[{s.image}];"]
        out += [f"{p}double xi{a} = l_{share[1]}_xi{a};" for a in range(d)]
    out.append(f"{p}int ok = " + " && ".join(f"isfinite(xi{a})" for a in range(d)) + ";")
    out += [f"{p}double n{a} = floor(xi{a}), f{a} = xi{a} - n{a};" for a in range(d)]
    support = " && ".join(f"n{a} + {1 - radius} >= 0 && n{a} + {radius} <= (double)(im->size[{a}] - 1)"
                          for a in range(d))
    if s.inside:  # Diderot's generated test: s - 1 < x < size - s, strictly, on the index position
        strict = " && ".join(f"xi{a} > {radius - 1} && xi{a} < (double)(im->size[{a}] - {radius})" for a in range(d))
        return out + [f"{p}l_{s.targets[0]} = ok && {strict};", f"{pad}}}"]
    fam = plan.get(family(s)) if plan is not None else None
    top = fam[1] if fam is not None else order  # the orders this probe computes: 0..top
    sizes = [vox * d ** o for o in range(top + 1)]
    total, base = sum(sizes), sum(sizes[:order])
    if fam is not None:  # the function's cache of this image, kernel and border (cache_decls)
        key, cache = f"tl_pc{fam[0]}_x", f"tl_pc{fam[0]}_r"
        out.append(f"{p}if (" + " || ".join(f"!(xi{a} == {key}[{a}])" for a in range(d)) + ") {")
    else:
        key, cache = "", "pr"
        out += [f"{p}double pr[{total}];", f"{p}{{"]
    q, at = p + "    ", len(out)
    kernel = next(k for k in ir.kernels if k.name == s.kernel)

    def fill(top: int, n: int) -> list[str]:  # the cache's orders 0..top (n numbers) at the point, NaN where not ok
        return ([f"{q}ok = ok && {support};"] if s.border is None else []) + [
            f"{q}if (!ok) {{", f"{q}    for (int k = 0; k < {n}; k++) {cache}[k] = NAN;", f"{q}}} else {{"] + (
            _straight(s, kernel, q + "    ", d, top, radius, vox, cache, n)
            if d == 3 and s.border is None and top < len(kernel.segments) and STRAIGHT else
            _sums(s, q + "    ", d, top, taps, radius, vox, cache, sizes[:top + 1], len(kernel.segments))) + [f"{q}}}"]
    out += fill(top, total)
    if fam is not None and fills is not None and (fam[2] - 1) * _chars(out[at:]) > OUTLINE:
        # called: the orders up to the highest its block reads from here on; tl_pcJ_n: how far filled
        top = plan["fill"][id(s)] if plan is not None else top
        name = f"tl_probe_{s.image}_{s.kernel}_{s.border or 'in'}_{top}"  # the lines once, in the file
        ns, fs = (", ".join(f"double {v}{a}" for a in range(d)) for v in "nf")
        fills.setdefault(name, [f"TL_OUTLINE void {name}(const tl_img *im, int ok, {ns}, {fs}, double *restrict {cache}) {{"]
                         + [ln[len(q) - 4:] for ln in fill(top, sum(sizes[:top + 1]))] + ["}"])
        out[at - 1] = out[at - 1][:-3] + f" || tl_pc{fam[0]}_n < {order}) {{"
        out[at:] = [f"{q}{name}(im, ok, {', '.join(f'n{a}' for a in range(d))}, {', '.join(f'f{a}' for a in range(d))}, {cache});",
                    f"{q}tl_pc{fam[0]}_n = {top};"]
    elif known and fam is not None:  # an inline fill there computed every order: read them
        return out[:at - 1] + [f"{p}l_{t} = {cache}[{base + k}];" for k, t in enumerate(s.targets)] + [f"{pad}}}"]
    if fam is not None:
        out += [f"{q}{key}[{a}] = xi{a};" for a in range(d)]
    out.append(f"{p}}}")
    out += [f"{p}l_{t} = {cache}[{base + k}];" for k, t in enumerate(s.targets)]
    return out + [f"{pad}}}"]


def _chars(lines: list[str]) -> int:
    """The characters of a fill, its sums in vector lanes left out (the scalar ones count)."""
    n, lanes = 0, False
    for ln in (x.lstrip() for x in lines):
        lanes = ln == "#if defined(__GNUC__)" or (lanes and ln != "#else")
        n += 0 if lanes else len(ln)
    return n


#: a 3-D probe's sums as straight-line code (False: the loops of 1-D and 2-D probes)
STRAIGHT = True
#: where a family's cache fill inline at each of a function's probes of it would repeat more
#: characters than this, the probes call it (inline, gcc drops the orders a probe does not read)
OUTLINE = 16384


def index_map(d: int, p: str, reuse: tuple[list[str], list[str]] | None = None) -> list[str]:
    """``xi0``.. = the world point ``x0``.. mapped by the rows ``im->m``, an entry 0 skipped
    (0·∞ adds no NaN: the interpreter's NaN there is a point outside as well), one test where
    the map is diagonal; in the order of Diderot's executables (sampling/image.py: index_point).  ``reuse``: a point
    and its index position that this map gave ahead of the update (tl_ahead), taken where
    the point is equal (±0 give the same cell and fraction)."""
    out = [f"{p}double {', '.join(f'xi{a}' for a in range(d))};"]
    if reuse is not None:
        same = " && ".join(f"x{a} == {w}" for a, w in enumerate(reuse[0]))
        out += [f"{p}if ({same}) {{"] + [f"{p}    xi{a} = {k};" for a, k in enumerate(reuse[1])]
    out.append(f"{p}{'} else ' if reuse is not None else ''}if (im->diag) {{")
    out += [f"{p}    xi{a} = {row_map(d, a, 'im->m[{}]', True)};" for a in range(d)]
    out.append(f"{p}}} else {{")
    out += [f"{p}    xi{a} = {row_map(d, a, 'im->m[{}]')};" for a in range(d)]
    return out + [f"{p}}}"]


def row_map(d: int, a: int, m: str, diagonal: bool = False) -> str:
    """Index coordinate ``a`` of ``x0``.. from the map's entries ``m`` (a format of an entry's number) in Diderot's
    order: 1-D ``fma(s, x, t)``; else the products (an entry 0 skipped; ``diagonal``: the one), then ``t``."""
    if d == 1:
        return f"fma({m.format(0)}, x0, {m.format(3)})"
    terms = [f"({m.format(4 * a + c)} != 0 ? {m.format(4 * a + c)} * x{c} : 0.0)" for c in range(d)]
    return f"({f'{m.format(5 * a)} * x{a}' if diagonal else ' + '.join(terms)}) + {m.format(4 * a + 3)}"


def _straight(s: S.Probe, kernel: S.KernelSlot, q: str, d: int, top: int, radius: int, vox: int, cache: str,
              total: int) -> list[str]:
    """A 3-D probe's sums as named scalars (:func:`straight`, also the lanes' code of
    strands_batch), no arrays or loops."""
    out = consts(d, q) + [f"{q}int64_t base = " + " + ".join(f"((int64_t)n{a} + {1 - radius}) * st{a}" for a in range(d)) + ";"]
    sums = straight(s.kernel, kernel, d, top, vox, q)
    if LANES and 2 * radius in (2, 4):  # the same sums with axis 0's taps in one vector (GNU C's vectors)
        sums = [f"{q}#if defined(__GNUC__)", *straight(s.kernel, kernel, d, top, vox, q, True), f"{q}#else", *sums, f"{q}#endif"]
    return out + sums + [f"{q}{cache}[{k}] = r{k};" for k in range(total)]


def consts(d: int, q: str, diag: str = "(int)im->diag") -> list[str]:
    """The descriptor ``im`` of a ``d``-D image as the constants :func:`straight` reads: its samples, the
    map's rows ``m``, the strides, the last index of each axis ``hi``, whether the map is the identity or
    diagonal (``diag``: the C expression that says so)."""
    return [f"{q}const double *restrict data = im->data;",
            f"{q}const double " + ", ".join(f"m{k} = im->m[{k}]" for k in range(4 * d)) + ";",
            f"{q}const int64_t " + ", ".join(f"st{a} = im->stride[{a}]" for a in range(d)) + ", cst = im->cstride;",
            f"{q}const double " + ", ".join(f"hi{a} = (double)(im->size[{a}] - 1)" for a in range(d)) + ";",
            f"{q}const int ident = (int)im->ident, diag = {diag};",
            f"{q}(void)data; (void)cst; (void)ident; (void)diag;" + "".join(f" (void)m{k};" for k in range(4 * d))
            + "".join(f" (void)st{a}; (void)hi{a};" for a in range(d))]


def straight(name: str, kernel: S.KernelSlot, d: int, top: int, vox: int, q: str, lanes: bool = False) -> list[str]:
    """The probe's weights, separable sums and chain rule as straight-line scalar code
    (``r0``, ``r1``, ..: the orders 0..top, as the cache stores them), from ``f0``.. (the
    fractions), ``base`` (the support's first sample), ``data``, ``st0``.., ``cst``,
    ``m0``..``m15`` and ``ident`` in scope: the same operations in the same order as the
    loops of :func:`_sums`.  ``lanes``: the sums over axes 1.. in vectors of axis 0's taps
    (``tl_vT``, :data:`PRELUDE`), each lane the scalar sum's operations in its order."""
    out: list[str] = []
    radius, taps = kernel.radius, 2 * kernel.radius
    for a in range(d):
        for m in range(top + 1):
            width = max(len(row) for row in kernel.segments[m])  # tl_w_'s Horner steps, a scalar per tap
            if lanes:  # the taps' Horner steps in the lanes of one vector, u = f - (1 - radius + t)
                col = [f"(tl_v{taps}){{{', '.join(f'tl_c_{name}_{m}[{t}][{k}]' for t in range(taps))}}}" for k in range(width)]
                offs = ", ".join(f"{1 - radius + t}.0" for t in range(taps))
                out.append(f"{q}tl_v{taps} wv{a}_{m} = {_horner_names(col, f'(f{a} - (tl_v{taps}){{{offs}}})')};")
                out += [f"{q}double w{a}_{m}_{t} = wv{a}_{m}[{t}];" for t in range(taps)]
                continue
            for t in range(taps):
                coef = [f"tl_c_{name}_{m}[{t}][{k}]" for k in range(width)]
                out.append(f"{q}double w{a}_{m}_{t} = {_horner_names(coef, f'(f{a} - ({1 - radius} + {t}))')};")
    for c in range(vox):
        comp = f" + {c} * cst" if vox > 1 else ""
        part = (_LaneSums if lanes else _Sums)(out, q, d, taps, comp, c)
        base = 0
        for o in range(top + 1):
            for counts, flat in derivative_components(d, o):
                out.append(f"{q}double r{base + c * d ** o + flat} = {part(0, counts, ())};")
            base += vox * d ** o
    # to world space where the map is not the identity: each order, axis after axis
    base = vox
    for o in range(1, top + 1):
        n = vox * d ** o
        names = [f"r{base + k}" for k in range(n)]
        for k in reversed(range(o)):  # the last axis first (_to_world)
            tw = [f"tw{o}_{k}_{e}" for e in range(n)]
            out += [f"{q}double {t} = {nm};" for t, nm in zip(tw, names)]
            out += [f"{q}{names[i]} = ident ? {names[i]} : " + " + ".join(f"m{m} * {tw[j]}" for m, j in terms) + ";"
                    for i, terms in _chain(d, o, vox, k)]
        base += n
    return out


class _Sums:
    """``P(level, counts)[t_0..t_level-1]``: the separable sum over the axes level..d-1
    (``counts`` their derivative orders) of voxel component ``c``, each a named scalar
    written once into ``out``; the taps summed from 0 up, as the scalar probe's loops."""

    def __init__(self, out: list, q: str, d: int, taps: int, comp: str, c: int):
        self.out, self.q, self.d, self.taps, self.comp, self.c = out, q, d, taps, comp, c
        self.memo: dict[tuple, str] = {}

    def __call__(self, level: int, counts: tuple, ts: tuple) -> str:
        """The sum's name, its line written the first time it is asked for (:meth:`sum`)."""
        key = (level, counts, ts)
        if key not in self.memo:
            self.memo[key] = self.sum(level, counts, ts)
        return self.memo[key]

    def sum(self, level: int, counts: tuple, ts: tuple) -> str:
        name = f"p{self.c}_{level}_{''.join(map(str, counts))}_{''.join(map(str, ts))}"
        acc = "0"
        for t in range(self.taps):
            if level == self.d - 1:
                offs = " + ".join(f"{tt} * st{a}" for a, tt in enumerate(ts + (t,)) if tt)
                v = f"data[base{' + ' + offs if offs else ''}{self.comp}]"
            else:
                v = self(level + 1, counts[1:], ts + (t,))
            acc = f"({acc} + w{level}_{counts[0]}_{t} * {v})"
        self.out.append(f"{self.q}double {name} = {acc};")
        return name


class _LaneSums(_Sums):
    """:class:`_Sums` with the taps of axis 0 in the lanes of one vector from level 1 on
    (``v..``: lane t is ``P(level, counts)[t, ..]``); level 0 adds the lanes in tap order."""

    def sum(self, level: int, counts: tuple, ts: tuple) -> str:
        if level == 0:  # the products in lanes (the weights' vector wv0_..), added in tap order
            inner = self(1, counts[1:], ())
            prod = f"x{inner[1:]}_{counts[0]}"
            self.out.append(f"{self.q}tl_v{self.taps} {prod} = wv0_{counts[0]} * {inner};")
            terms = [f"{prod}[{t}]" for t in range(self.taps)]
        else:
            def row(t: int) -> str:
                offs = " + ".join(f"{tt} * st{a + 1}" for a, tt in enumerate(ts + (t,)) if tt)
                return f"tl_ld{self.taps}(data + base{' + ' + offs if offs else ''}{self.comp}, st0)"
            terms = [f"w{level}_{counts[0]}_{t} * "
                     + (row(t) if level == self.d - 1 else self(level + 1, counts[1:], ts + (t,))) for t in range(self.taps)]
        acc = "0.0"
        for term in terms:
            acc = f"({acc} + {term})"
        name = f"{'pv'[level > 0]}{self.c}_{level}_{''.join(map(str, counts))}_{''.join(map(str, ts))}"
        self.out.append(f"{self.q}{'double' if level == 0 else f'tl_v{self.taps}'} {name} = {acc};")
        return name


#: a 3-D probe whose kernel has 2 or 4 taps sums axis 0's taps in vector lanes (False: scalar sums, for tests)
LANES = True


def family(s: S.Probe) -> tuple[int, str, str | None]:
    """Probes of one image through one kernel and border: at the same point they share
    the cell, the weights and the samples."""
    return (s.image, s.kernel, s.border)


def cache_decls(body, ir: S.StrandIR, pad: str) -> tuple[list[str], dict]:
    """A C function's probe caches: per image, kernel and border, the last index position
    and every derivative order the function probes there (all computed at once, their
    separable sums shared), so that ``F(x)`` after ``∇F(x)`` is a lookup.  Nothing
    outlives the call."""
    sites = [(family(s), s.order) for s in S.nodes(body, S.Probe) if not s.inside]
    found = {fam: max(o for f, o in sites if f == fam) for fam, _ in sites}
    plan: dict = {"fill": _fill_orders(body or (), {})}
    lines: list[str] = []
    for j, (fam, top) in enumerate(sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or ""))):
        d, vox = ir.images[fam[0]].dim, int(np.prod(ir.images[fam[0]].shape))
        plan[fam] = (j, top, sum(f == fam for f, _ in sites))
        total = sum(vox * d ** o for o in range(top + 1))
        lines += [f"{pad}double tl_pc{j}_x[{d}] = {{{', '.join(['NAN'] * d)}}}, tl_pc{j}_r[{total}];",
                  f"{pad}int tl_pc{j}_n = -1; (void)tl_pc{j}_x; (void)tl_pc{j}_r; (void)tl_pc{j}_n;"]
    return lines, plan


def _fill_orders(body, orders: dict) -> dict:
    """A called fill's orders: up to the highest its family's probes read from it on in its block."""
    for i, s in enumerate(body):
        if isinstance(s, S.Probe) and not s.inside:
            orders[id(s)] = max(t.order for t in S.nodes(body[i:], S.Probe) if family(t) == family(s))
        for attr in ("then", "other", "body"):
            _fill_orders(getattr(s, attr, None) or (), orders)
    return orders


def _sums(s: S.Probe, q: str, d: int, top: int, taps: int, radius: int, vox: int, cache: str,
          sizes: list[int], segmented: int) -> list[str]:
    """The taps, the weights of orders 0..top, and the separable sums into ``cache`` (the
    orders one after another, each voxel component's derivatives row-major, world space).
    ``segmented``: the orders whose weights have a table (``tl_w_``)."""
    out = []
    affine = d > 1 and s.border is None  # the taps at strides from the support's first sample
    for a in range(d):
        size = f"im->size[{a}]"
        out.append(f"{q}const int64_t st{a} = im->stride[{a}];" if affine else f"{q}int64_t ix{a}[{taps}];")
        if s.border is None and not affine:
            out.append(f"{q}for (int t = 0; t < {taps}; t++) ix{a}[t] = (int64_t)n{a} + {1 - radius} + t;")
        elif s.border == "clamp":
            out.append(f"{q}{{ double c = n{a} < -{taps} ? -{taps} : (n{a} > (double){size} + {taps} ? (double){size} + {taps} : n{a});")
            out.append(f"{q}  for (int t = 0; t < {taps}; t++) {{ int64_t v = (int64_t)c + {1 - radius} + t; "
                       f"ix{a}[t] = v < 0 ? 0 : (v > {size} - 1 ? {size} - 1 : v); }} }}")
        elif s.border is not None:
            period = size if s.border == "wrap" else f"(2 * {size})"
            out.append(f"{q}{{ double r = fmod(n{a}, (double){period}); if (r < 0) r += (double){period};")
            line = f"{q}  for (int t = 0; t < {taps}; t++) {{ int64_t v = tl_pmod((int64_t)r + {1 - radius} + t, {period});"
            if s.border == "mirror":
                line += f" if (v >= {size}) v = {period} - 1 - v;"
            out.append(line + f" ix{a}[t] = v; }} }}")
        for m in range(top + 1):
            if m < segmented:  # the taps' weights at once (tl_w_: a table of Horner polynomials)
                out.append(f"{q}double w{a}_{m}[{taps}]; tl_w_{s.kernel}_{m}(f{a}, w{a}_{m});")
                continue
            out.append(f"{q}double w{a}_{m}[{taps}]; for (int t = 0; t < {taps}; t++) "
                       f"w{a}_{m}[t] = tl_k_{s.kernel}_{m}(f{a} - ({1 - radius} + t), t);")
    if affine:
        out.append(f"{q}const double *dp = im->data + "
                   + " + ".join(f"((int64_t)n{a} + {1 - radius}) * st{a}" for a in range(d)) + ";")
    else:
        out.append(f"{q}const double *dp = im->data;")
        for a in range(d):  # the taps' offsets along each axis, in elements
            out.append(f"{q}{{ const int64_t st = im->stride[{a}]; for (int t = 0; t < {taps}; t++) ix{a}[t] *= st; }}")
    if vox > 1:
        out.append(f"{q}const int64_t cst = im->cstride;")
    out.append(f"{q}for (int c = 0; c < {vox}; c++) {{")
    r = q + "    "

    def name(level: int, counts: tuple[int, ...]) -> str:  # counts: derivatives along axes level..d-1
        return f"P{level}_" + "".join(map(str, counts))

    def dims(level: int) -> str:
        return "".join(f"[{taps}]" for _ in range(level))

    inner = d - 1

    def idx(level: int, last: str = "") -> str:  # the innermost level's sums are kept [t1]..[t0]
        ts = [f"t{b}" for b in range(level)] + ([last] if last else [])
        if level + bool(last) == inner and ts:
            ts = ts[1:] + ts[:1]
        return "".join(f"[{t}]" for t in ts)

    # innermost axis: the samples, gathered once, each order's sum in its own accumulator
    suffixes: dict[int, list[tuple[int, ...]]] = {inner: [(m,) for m in range(top + 1)]}
    out.append(r + " ".join(f"double {name(inner, c)}{dims(inner)};" for c in suffixes[inner]))
    comp = " + c * cst" if vox > 1 else ""
    offset = " + ".join(f"ix{b}[t{b}]" for b in range(inner)) + (" + " if inner else "") + f"ix{inner}[t]" + comp
    if affine:  # the taps of axis 0 in SIMD lanes (contiguous samples where the stride is 1, an
        # NRRD file's layout), each lane's sum in the same order as tap by tap
        out.append(r + " ".join(f"memset({name(inner, (m,))}, 0, sizeof {name(inner, (m,))});"
                                for m in range(top + 1)))
        row = " + ".join([f"t{b} * st{b}" for b in range(1, inner)] + [f"t * st{inner}"]) + comp
        for variant, at in (("if (st0 == 1) {", "row[t0]"), ("} else {", "row[t0 * st0]")):
            out.append(r + variant)
            out += _nest(r + "    ", range(1, inner), taps, lambda lp, at=at: [
                f"{lp}for (int t = 0; t < {taps}; t++) {{", f"{lp}    const double *row = dp + {row};",
                f"{lp}    for (int t0 = 0; t0 < {taps}; t0++) {{ double v = {at}; "
                + " ".join(f"{name(inner, (m,))}{idx(inner)} += w{inner}_{m}[t] * v;" for m in range(top + 1)) + " }",
                f"{lp}}}"])
        out.append(f"{r}}}")
    else:
        out += _nest(r, range(inner), taps, lambda lp: [
            lp + " ".join(f"double a{m} = 0;" for m in range(top + 1)),
            f"{lp}for (int t = 0; t < {taps}; t++) {{ double v = dp[{offset}]; "
            + " ".join(f"a{m} += w{inner}_{m}[t] * v;" for m in range(top + 1)) + " }",
            lp + " ".join(f"{name(inner, (m,))}{idx(inner)} = a{m};" for m in range(top + 1))])
    # the outer axes, innermost first: each partial sum of the next level weighted once per order
    for level in range(inner - 1, -1, -1):
        suffixes[level] = [(m,) + c for c in suffixes[level + 1] for m in range(top + 1 - sum(c))]
        out.append(r + " ".join(f"double {name(level, c)}{dims(level)};" for c in suffixes[level]))
        out += _nest(r, range(level), taps, lambda lp, level=level: [
            f"{lp}{{ double a = 0; for (int t = 0; t < {taps}; t++) a += w{level}_{c[0]}[t] * "
            f"{name(level + 1, c[1:])}{idx(level, 't')}; {name(level, c)}{idx(level)} = a; }}" for c in suffixes[level]])
    base = 0
    for o in range(top + 1):
        for counts, flat in derivative_components(d, o):
            out.append(f"{r}{cache}[{base} + c * {d ** o} + {flat}] = {name(0, counts)};")
        base += sizes[o]
    out.append(f"{q}}}")
    base = sizes[0]
    for o in range(1, top + 1):
        out += [f"{q}if (!im->ident) {{", f"{q}    double *res = {cache} + {base};"] + _to_world(q + "    ", d, o, vox) + [f"{q}}}"]
        base += sizes[o]
    return out


def _nest(pad: str, axes: range, taps: int, body: Callable[..., list[str]]) -> list[str]:
    """``body(its indent)`` inside loops over the taps ``t<b>`` of each axis ``b`` of ``axes``."""
    k = len(axes)
    return ([f"{pad}{'    ' * j}for (int t{b} = 0; t{b} < {taps}; t{b}++) {{" for j, b in enumerate(axes)]
            + body(pad + "    " * k) + [f"{pad}{'    ' * j}}}" for j in reversed(range(k))])


def _to_world(pad: str, d: int, order: int, vox: int) -> list[str]:
    """res[c, a1..ak] -> Σ_a M[a, j] res[c, .., a, ..], one derivative axis after another, the last first
    (Diderot's order: a zero's sign agrees, reconstruct.to_world)."""
    out = [f"{pad}double tw[{vox * d ** order}];"]
    for k in reversed(range(order)):
        out.append(f"{pad}memcpy(tw, res, sizeof tw);")
        out += [f"{pad}res[{i}] = " + " + ".join(f"im->m[{m}] * tw[{j}]" for m, j in terms) + ";"
                for i, terms in _chain(d, order, vox, k)]
    return out


def _chain(d: int, order: int, vox: int, k: int) -> list:
    """Step ``k`` of the chain rule on the components of one derivative order: each one's index and its
    terms (the map's entry ``m[4 a + j]``, the index of the component it weighs)."""
    def at(c: int, ax: tuple) -> int:
        return c * d ** order + axes_offset(ax, d)
    return [(at(c, axes), [(4 * a + axes[k], at(c, axes[:k] + (a,) + axes[k + 1:])) for a in range(d)])
            for c in range(vox) for axes in itertools.product(range(d), repeat=order)]


#: the most bytes of image samples :func:`pack`'s cache keeps alive between calls
KEEP = 64 << 20


def pack(ffi, images: tuple[S.ImageSlot, ...], values, cache: dict | None = None) -> tuple[object, list]:
    """The images' C descriptors from the run's values (images as :class:`tensorlang.sampling.image.Image`,
    border-controlled ones with ``.image``); those in ``cache`` (the built program's) where every image is the
    one packed last and its samples read-only (a program called again on its files; an image's world map is read-only)."""
    imgs = [getattr(values[slot.name], "image", values[slot.name]) for slot in images]
    key = imgs if cache is not None and all(isinstance(img, Image) and not img.data.flags.writeable
                                            for img in imgs) and sum(i.data.nbytes for i in imgs) <= KEEP else None
    last = cache.get("last") if cache is not None else None
    if key is not None and last is not None and len(last[0]) == len(key) and all(a is b for a, b in zip(last[0], key)):
        return last[1], last[2]
    arr = ffi.new("tl_img[]", max(1, len(images)))
    keep: list = [arr]
    for k, slot in enumerate(images):
        img = imgs[k]
        data = np.asarray(img.data)
        if img.dim != slot.dim or tuple(data.shape[img.dim:]) != slot.shape:
            raise error("input", f"image {slot.name}: expected {slot.dim}-D with voxels {list(slot.shape)}, "
                                 f"got {img.dim}-D with voxels {list(data.shape[img.dim:])}")
        d = slot.dim
        vox = int(np.prod(slot.shape)) if slot.shape else 1
        # read in place where it can be (a float64 array, the voxel's components one axis):
        # an NRRD file's samples are fastest-axis first, a transposed copy would cost more
        # than the probes of many programs
        flat = data.reshape(data.shape[:d] + (vox,)) if data.dtype == np.float64 else None
        if flat is None or any(x % 8 for x in flat.strides):
            flat = np.ascontiguousarray(data, dtype=np.float64).reshape(data.shape[:d] + (vox,))
        keep.append(flat)
        m = np.asarray(img.to_index, dtype=np.float64)
        desc = arr[k]
        desc.data = ffi.cast("const double *", flat.ctypes.data)
        for a in range(3):
            desc.size[a] = int(data.shape[a]) if a < d else 1
            desc.stride[a] = flat.strides[a] // 8 if a < d else 0
        desc.cstride = flat.strides[d] // 8
        desc.vox = vox
        for a, c in itertools.product(range(d), range(d + 1)):  # the linear part, then the offset in column 3
            desc.m[4 * a + (3 if c == d else c)] = float(m[a, c])
        desc.ident = int(np.array_equal(m[:d, :d], np.eye(d)))
        lin = m[:d, :d]
        desc.diag = int(DIAG and np.all(np.diag(lin) != 0) and np.array_equal(lin, np.diag(np.diag(lin))))
    if cache is not None:
        cache["last"] = (key, arr, keep) if key is not None else None
    return arr, keep
