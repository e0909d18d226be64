"""Generated C for probes: 004 §2.2's sum for a batch of points, in parallel.

One C function per (dimension, kernel, derivative order, voxel size) computes, for every
point (an OpenMP loop over points), the index-space derivatives of that order of every
voxel component, the same numbers as :func:`reconstruct.probe` (which stays the
reference and the fallback where no C compiler works).

The kernel's weights are straight-line polynomials: for a fractional position f in
[0, 1), tap i = 1-s .. s reads |f − i| on one fixed piece of the kernel (piece −i for
i ≤ 0, piece i−1 for i ≥ 1), so each weight is one Horner evaluation in f with the
piece's coefficients as literals, and odd derivatives of taps right of the point change
sign.  The sum is separable (004 §2.2): the innermost axis is summed first for every
derivative order, then the next, so a d-dimensional probe of support S costs about
S^d·(k+1) multiply-adds per component rather than S^d·d^k.

Outside the domain (support leaving the image) or at a non-finite position the result
is NaN (⊥), as in the reference.  The world-space chain rule is applied by the caller.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .image import Image
from .kernels import Kernel


def _horner(coeffs: np.ndarray, var: str) -> str:
    text = repr(float(coeffs[-1]))
    for c in coeffs[-2::-1]:
        text = f"({text}*{var} + {float(c)!r})"
    return text


def _weights(kern: Kernel, order: int) -> str:
    """C statements setting w[m][t] for m = 0..order, t = tap, from f (a double)."""
    s = kern.radius
    lines = []
    for t, i in enumerate(range(1 - s, s + 1)):
        if i <= 0:
            piece, arg, sign = -i, f"(f + {float(-i)!r})", 1
        else:
            piece, arg, sign = i - 1, f"({float(i)!r} - f)", -1
        for m in range(order + 1):
            expr = _horner(kern.piece(piece, m), "a")
            neg = "-" if (sign < 0 and m % 2) else ""
            lines.append(f"{{ double a = {arg}; w[{m}][{t}] = {neg}({expr}); (void)a; }}")
    return "\n        ".join(lines)


def _combos(d: int, order: int) -> list[tuple[int, ...]]:
    """Derivative counts per axis (m0, ..., m_{d-1}) summing to ``order``."""
    return [c for c in itertools.product(range(order + 1), repeat=d) if sum(c) == order]


def source(d: int, kern: Kernel, order: int, ncomp: int) -> tuple[str, str]:
    """The C source of ``tl_probe`` and its cffi declaration."""
    S, s = kern.support, kern.radius
    combos = _combos(d, order)
    # partial sums: level a holds the counts of axes a..d-1 (the inner ones) with sum <= order
    levels = [[c for c in itertools.product(range(order + 1), repeat=d - a) if sum(c) <= order] for a in range(d)]
    full = d ** order
    # where each index-space derivative component (a tuple of axes) comes from
    fill = []
    for axes in itertools.product(range(d), repeat=order):
        counts = tuple(axes.count(a) for a in range(d))
        fill.append(combos.index(counts))

    def name(level: int, counts: tuple[int, ...]) -> str:
        return f"s{level}_" + "_".join(map(str, counts))

    body = []
    # the innermost axis (d-1) reads the data row
    inner = d - 1
    stride_expr = "0"
    for a in range(d):
        stride_expr = f"(({stride_expr})*sz{a} + (c{a} + {1 - s} + t{a}))" if a < d else stride_expr

    def loop(a: int, indent: str) -> list[str]:
        out: list[str] = []
        if a == inner:
            for counts in levels[a]:
                out.append(f"{indent}double {name(a, counts)}[NC] = {{0}};")
            out.append(f"{indent}for (int t{a} = 0; t{a} < {S}; t{a}++) {{")
            out.append(f"{indent}    const double *v = data + ({stride_expr})*NC;")
            out.append(f"{indent}    for (int k = 0; k < NC; k++) {{")
            for counts in levels[a]:
                out.append(f"{indent}        {name(a, counts)}[k] += w{a}[{counts[0]}][t{a}] * v[k];")
            out.append(f"{indent}    }}")
            out.append(f"{indent}}}")
            return out
        for counts in levels[a]:
            out.append(f"{indent}double {name(a, counts)}[NC] = {{0}};")
        out.append(f"{indent}for (int t{a} = 0; t{a} < {S}; t{a}++) {{")
        out.extend(loop(a + 1, indent + "    "))
        out.append(f"{indent}    for (int k = 0; k < NC; k++) {{")
        for counts in levels[a]:
            out.append(f"{indent}        {name(a, counts)}[k] += w{a}[{counts[0]}][t{a}] * {name(a + 1, counts[1:])}[k];")
        out.append(f"{indent}    }}")
        out.append(f"{indent}}}")
        return out

    body = loop(0, "        ")
    sizes = "\n".join(f"    const int64_t sz{a} = sizes[{a}];" for a in range(d))
    weights = "\n".join(
        f"        double w{a}[{order + 1}][{S}]; {{ double f = x[{a}] - fl[{a}]; double (*w)[{S}] = w{a};\n"
        f"        {_weights(kern, order)} }}" for a in range(d))
    stores = "\n".join(
        f"            o[k*{full} + {j}] = {name(0, combos[c])}[k];" for j, c in enumerate(fill))
    src = f"""
#include <math.h>
#include <stdint.h>
#define NC {ncomp}

void tl_probe(int64_t n, const double *pts, const double *data, const int64_t *sizes,
              const double *M, double *out)
{{
{sizes}
    #pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < n; p++) {{
        double x[{d}], fl[{d}];
        int64_t cc[{d}];
        int ok = 1;
        for (int a = 0; a < {d}; a++) {{
            double v = M[a*{d + 1} + {d}];
            for (int b = 0; b < {d}; b++) v += M[a*{d + 1} + b] * pts[p*{d} + b];
            x[a] = v;
            if (!isfinite(v)) {{ ok = 0; break; }}
            fl[a] = floor(v);
            if (fl[a] + {1 - s} < 0 || fl[a] + {s} > (double)(sizes[a] - 1)) {{ ok = 0; break; }}
            cc[a] = (int64_t)fl[a];
        }}
        double *o = out + p*(NC*{full});
        if (!ok) {{
            for (int k = 0; k < NC*{full}; k++) o[k] = NAN;
            continue;
        }}
{chr(10).join(f"        const int64_t c{a} = cc[{a}];" for a in range(d))}
{weights}
{chr(10).join(body)}
        for (int k = 0; k < NC; k++) {{
{stores}
        }}
    }}
}}
"""
    decl = "void tl_probe(int64_t n, const double *pts, const double *data, const int64_t *sizes, " \
           "const double *M, double *out);"
    return src, decl


_BUILT: dict[tuple, Any] = {}


def available() -> bool:
    """Whether a C compiler works here (the probes then run in generated C)."""
    from ..targets.c import build
    return build.find_compiler() is not None


def probe(img: Image, kern: Kernel, order: int, points: np.ndarray) -> np.ndarray:
    """Index-space derivatives of ``order`` at world ``points``: shape (N,) + voxel shape
    + (dim,)*order, NaN outside; as :func:`reconstruct.probe` before its chain rule."""
    from ..targets.c import build

    ncomp = int(np.prod(img.voxel_shape, dtype=np.int64))
    key = (img.dim, kern.name, order, ncomp)
    loaded = _BUILT.get(key)
    if loaded is None:
        compiler = build.require_compiler()
        src, decl = source(img.dim, kern, order, ncomp)
        loaded = _BUILT[key] = build.build_and_load(src, compiler, decl)
    ffi, lib = loaded
    pts = np.ascontiguousarray(points, dtype=np.float64)
    data = np.ascontiguousarray(img.data, dtype=np.float64)
    sizes = np.asarray(img.sizes, dtype=np.int64)
    m = np.ascontiguousarray(img.to_index[: img.dim], dtype=np.float64)
    out = np.empty((pts.shape[0],) + img.voxel_shape + (img.dim,) * order)

    def ptr(a: np.ndarray, kind: str):
        return ffi.cast(kind, a.ctypes.data)

    lib.tl_probe(pts.shape[0], ptr(pts, "double *"), ptr(data, "double *"), ptr(sizes, "int64_t *"),
                 ptr(m, "double *"), ptr(out, "double *"))
    return out
