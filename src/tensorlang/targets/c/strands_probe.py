"""Probes of images from strand programs, generated as C: 004 §2.2's sum at one point.

Per probe statement: the world-to-index map (``m``: the rows of the homogeneous
inverse of the image's index-to-world map, an entry 0 skipped as the interpreter
does), the cell n = ⌊x⌋ and fraction f, the domain test (the kernel's whole support
inside the image; ⊥ outside unless a border mode maps the taps: clamp, wrap,
mirror), the weights of every tap and derivative order from the kernel's pieces
(one Horner polynomial per piece, as :meth:`fields.kernels.Kernel.weights`), the
separable sum (innermost axis first: contiguous samples), and the chain rule to world
space where the map's linear part is not the identity (the interpreter's
``reconstruct.to_world``, axis by axis).  ``inside`` probes write the domain test.
"""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

from ...errors import error
from ...strand_ir import ir as S

PRELUDE = ("typedef struct { const double *data; int64_t size[3]; int64_t vox; double m[16]; int64_t ident; } tl_img;\n"
           "static inline int64_t tl_pmod(int64_t a, int64_t p) { int64_t r = a % p; return r < 0 ? r + p : r; }\n")


def _derive(coeffs: tuple[float, ...], m: int) -> list[float]:
    c = [float(x) for x in coeffs]
    for _ in range(m):
        c = [c[i] * i for i in range(1, len(c))]
    return c or [0.0]


def _horner(c: list[float], x: str) -> str:
    expr = repr(c[-1])
    for coef in reversed(c[:-1]):
        expr = f"({coef!r} + ({expr}) * {x})"
    return expr


def _orders(body, found: dict[str, int]) -> None:
    for s in body or ():
        if isinstance(s, S.Probe):
            found[s.kernel] = max(found.get(s.kernel, 0), s.order)
        for attr in ("then", "other", "body"):
            _orders(getattr(s, attr, ()), found)


def kernels(ir: S.StrandIR) -> list[str]:
    """One C function per kernel and derivative order the probes use."""
    found: dict[str, int] = {}
    for body in (ir.create, ir.init, ir.update, ir.stabilize, ir.global_block):
        _orders(body, found)
    lines = []
    for k in ir.kernels:
        for m in range(found.get(k.name, -1) + 1):
            if m < len(k.segments):  # tap t's own polynomial in u = f - i, as the interpreter's weights
                lines.append(f"static inline double tl_k_{k.name}_{m}(double u, int t) {{")
                lines.append("    switch (t) {")
                lines += [f"    case {t}: return {_horner(list(row), 'u')};" for t, row in enumerate(k.segments[m])]
                lines += ["    default: return 0.0;", "    }", "}"]
                continue
            lines.append(f"static inline double tl_k_{k.name}_{m}(double u, int t) {{")
            lines.append("    (void)t;")
            lines.append("    double a = fabs(u), r;")
            for piece, coeffs in enumerate(k.pieces):
                word = "if" if piece == 0 else "else if"
                lines.append(f"    {word} (a < {piece + 1}) r = {_horner(_derive(coeffs, m), 'a')};")
            lines.append("    else r = 0.0;")
            lines.append("    return u < 0 ? -r : r;" if m % 2 else "    return r;")
            lines.append("}")
    return lines


def render(s: S.Probe, ir: S.StrandIR, ex: Callable[[S.Expr], str], pad: str) -> list[str]:
    image = ir.images[s.image]
    radius = next(k.radius for k in ir.kernels if k.name == s.kernel)
    d, order, taps = image.dim, s.order, 2 * radius
    vox = int(np.prod(image.shape)) if image.shape else 1
    if d > 3 or len(s.pos) != d:
        raise error("internal", f"a probe of a {d}-D image at a point of {len(s.pos)} components")
    out = [f"{pad}{'int' if s.inside else 'double'} {', '.join('l_' + t for t in s.targets)};", f"{pad}{{"]
    p = pad + "    "
    out.append(f"{p}const tl_img *im = &img[{s.image}];")
    for a, e in enumerate(s.pos):
        out.append(f"{p}double x{a} = {ex(e)};")
    for a in range(d):
        terms = " ".join(f"if (im->m[{4 * a + c}] != 0) xi{a} += im->m[{4 * a + c}] * x{c};" for c in range(d))
        out.append(f"{p}double xi{a} = im->m[{4 * a + 3}]; {terms}")
    out.append(f"{p}int ok = " + " && ".join(f"isfinite(xi{a})" for a in range(d)) + ";")
    out += [f"{p}double n{a} = floor(xi{a}), f{a} = xi{a} - n{a};" for a in range(d)]
    support = " && ".join(f"n{a} + {1 - radius} >= 0 && n{a} + {radius} <= (double)(im->size[{a}] - 1)"
                          for a in range(d))
    if s.inside:  # Diderot's generated test: s - 1 < x < size - s, strictly, on the index position
        strict = " && ".join(f"xi{a} > {radius - 1} && xi{a} < (double)(im->size[{a}] - {radius})" for a in range(d))
        return out + [f"{p}l_{s.targets[0]} = ok && {strict};", f"{pad}}}"]
    if s.border is None:
        out.append(f"{p}ok = ok && {support};")
    nout = len(s.targets)
    out.append(f"{p}if (!ok) {{")
    out += [f"{p}    l_{t} = NAN;" for t in s.targets]
    out.append(f"{p}}} else {{")
    q = p + "    "
    for a in range(d):
        out.append(f"{q}int64_t ix{a}[{taps}];")
        size = f"im->size[{a}]"
        if s.border is None:
            out.append(f"{q}for (int t = 0; t < {taps}; t++) ix{a}[t] = (int64_t)n{a} + {1 - radius} + t;")
        elif s.border == "clamp":
            out.append(f"{q}{{ double c = n{a} < -{taps} ? -{taps} : (n{a} > (double){size} + {taps} ? (double){size} + {taps} : n{a});")
            out.append(f"{q}  for (int t = 0; t < {taps}; t++) {{ int64_t v = (int64_t)c + {1 - radius} + t; "
                       f"ix{a}[t] = v < 0 ? 0 : (v > {size} - 1 ? {size} - 1 : v); }} }}")
        else:
            period = size if s.border == "wrap" else f"(2 * {size})"
            out.append(f"{q}{{ double r = fmod(n{a}, (double){period}); if (r < 0) r += (double){period};")
            line = f"{q}  for (int t = 0; t < {taps}; t++) {{ int64_t v = tl_pmod((int64_t)r + {1 - radius} + t, {period});"
            if s.border == "mirror":
                line += f" if (v >= {size}) v = {period} - 1 - v;"
            out.append(line + f" ix{a}[t] = v; }} }}")
        for m in range(order + 1):
            out.append(f"{q}double w{a}_{m}[{taps}]; for (int t = 0; t < {taps}; t++) "
                       f"w{a}_{m}[t] = tl_k_{s.kernel}_{m}(f{a} - ({1 - radius} + t), t);")
    strides = ["1"] * d
    for a in range(d - 2, -1, -1):
        strides[a] = f"im->size[{a + 1}] * {strides[a + 1]}" if strides[a + 1] != "1" else f"im->size[{a + 1}]"
    out.append(f"{q}double res[{nout}];")
    combos = sorted({tuple(axes.count(a) for a in range(d)) for axes in itertools.product(range(d), repeat=order)})
    for counts in combos:
        out.append(f"{q}for (int c = 0; c < {vox}; c++) {{")
        inner = q + "    "
        out.append(f"{inner}double s0 = 0;")
        loop = inner
        for a in range(d):
            out.append(f"{loop}for (int t{a} = 0; t{a} < {taps}; t{a}++) {{")
            loop += "    "
            if a < d - 1:
                out.append(f"{loop}double s{a + 1} = 0;")
        offset = " + ".join(f"ix{a}[t{a}] * {strides[a]}" if strides[a] != "1" else f"ix{a}[t{a}]" for a in range(d))
        out.append(f"{loop}s{d - 1} += w{d - 1}_{counts[d - 1]}[t{d - 1}] * im->data[({offset}) * {vox} + c];")
        for a in range(d - 1, -1, -1):
            loop = loop[:-4]
            out.append(f"{loop}}}")
            if a > 0:
                out.append(f"{loop}s{a - 1} += w{a - 1}_{counts[a - 1]}[t{a - 1}] * s{a};")
        axes_list = sorted({perm for axes in itertools.product(range(d), repeat=order)
                            if tuple(axes.count(a) for a in range(d)) == counts for perm in [axes]})
        for axes in axes_list:
            flat = sum(ax * d ** (order - 1 - k) for k, ax in enumerate(axes))
            out.append(f"{inner}res[c * {d ** order} + {flat}] = s0;")
        out.append(f"{q}}}")
    if order:
        out.append(f"{q}if (!im->ident) {{")
        out += _to_world(q + "    ", d, order, vox)
        out.append(f"{q}}}")
    out += [f"{q}l_{t} = res[{k}];" for k, t in enumerate(s.targets)]
    return out + [f"{p}}}", f"{pad}}}"]


def _to_world(pad: str, d: int, order: int, vox: int) -> list[str]:
    """res[c, a1..ak] -> Σ_a M[a, j] res[c, .., a, ..], one derivative axis after another."""
    n = vox * d ** order
    out = [f"{pad}double tw[{n}];"]
    for k in range(order):
        out.append(f"{pad}memcpy(tw, res, sizeof tw);")
        for c in range(vox):
            for axes in itertools.product(range(d), repeat=order):
                def at(ax, c=c):
                    return c * d ** order + sum(x * d ** (order - 1 - i) for i, x in enumerate(ax))
                terms = " + ".join(f"im->m[{4 * a + axes[k]}] * tw[{at(axes[:k] + (a,) + axes[k + 1:])}]"
                                   for a in range(d))
                out.append(f"{pad}res[{at(axes)}] = {terms};")
    return out


def pack(ffi, images: tuple[S.ImageSlot, ...], values) -> tuple[object, list]:
    """The images' C descriptors from the run's values (images as
    :class:`tensorlang.sampling.image.Image`, border-controlled ones with ``.image``)."""
    arr = ffi.new("tl_img[]", max(1, len(images)))
    keep: list = [arr]
    for k, slot in enumerate(images):
        img = values[slot.name]
        img = getattr(img, "image", img)
        data = np.ascontiguousarray(img.data, dtype=np.float64)
        if img.dim != slot.dim or tuple(data.shape[img.dim:]) != slot.shape:
            raise error("input", f"image {slot.name}: expected {slot.dim}-D with voxels {list(slot.shape)}, "
                                 f"got {img.dim}-D with voxels {list(data.shape[img.dim:])}")
        keep.append(data)
        m = np.asarray(img.to_index, dtype=np.float64)
        d = slot.dim
        desc = arr[k]
        desc.data = ffi.cast("const double *", data.ctypes.data)
        for a in range(3):
            desc.size[a] = int(data.shape[a]) if a < d else 1
        desc.vox = int(np.prod(slot.shape)) if slot.shape else 1
        for a in range(d):
            for c in range(d):
                desc.m[4 * a + c] = float(m[a, c])
            desc.m[4 * a + 3] = float(m[a, d])
        desc.ident = int(np.array_equal(m[:d, :d], np.eye(d)))
    return arr, keep
