"""The C target's probe renderer: a probe step (004 §2.2's sum for a batch of points) as C,
one function per (dimension, kernel, derivative order, voxel size), :data:`BATCH` points
across the vector lanes (docs/internals/fields-probes.md has the layout and why)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ...sampling.kernels import KERNELS, Kernel, at_integer
from ...schedule.probe import SORT_SHIFT, ProbeStep
from . import csrc

#: The layout's constants (docs/internals/fields-probes.md): points per batch; in block order
#: the rows of REGION_BLOCKS blocks' points ahead prefetched, at most REGION_AHEAD points
BATCH, REGION_BLOCKS, REGION_AHEAD = 8, 2, 512
#: tl_unpack's points per run, the results' bytes from which it streams, runs prefetched ahead
UNPACK, UNPACK_STREAM_BYTES, UNPACK_AHEAD = 64, 8 << 20, 1
#: points with at most one jump per COHERENT_POINTS points are not sorted (0: always sorted, the tests)
COHERENT_POINTS = 16
#: a scalar image's 4-tap rows loaded whole and transposed in registers (False: gathered, the tests)
ROWS = True
#: in the given order each batch asks for the coordinates of the batch this many ahead (0: none)
POINTS_AHEAD = 16
#: in block order, each block's samples copied into a tile (csrc/probe_points.c's tl_probe_tiles) where
#: the blocks hold at least TILES points on average (0: never; docs/performance.md, "Fields probes: each
#: block's samples copied into a tile")
TILES = 1024
#: else, from REGION_POINTS a block, block by block from the image, the next block's rows asked for (tl_probe_tiles
#: without the copy; fewer: each point's own rows, tl_probe_points; docs/performance.md, "Fields probes: the next block's rows")
REGION_POINTS = 64


def _horner(coeffs: np.ndarray, var: str) -> str:
    text = repr(float(coeffs[-1]))
    for c in coeffs[-2::-1]:
        text = f"({text}*{var} + {float(c)!r})"
    return text


def _weights(kern: Kernel, order: int, a: int) -> str:
    """C statements setting w{a}[m][t][j] for m = 0..order, t = tap, from f (a double)."""
    s = kern.radius
    lines = []
    for t, i in enumerate(range(1 - s, s + 1)):
        if i <= 0:
            piece, arg, sign = -i, f"(f + {float(-i)!r})", 1
        else:
            piece, arg, sign = i - 1, f"({float(i)!r} - f)", -1
        for m in range(order + 1):
            value = f"{'-' if sign < 0 and m % 2 else ''}({_horner(kern.piece(piece, m), 'x')})"
            # i >= 1: at f = 0 the tap sits at the end of this piece: the exact right-hand limit
            # (reconstruct.at_integer: 0 past the support, not the polynomial's residue), computed
            # first, then selected (a select of two values vectorizes)
            select = f" h = f == 0.0 ? {at_integer(kern, -i, m)!r} : h;" if i >= 1 else ""
            lines.append(f"{{ double x = {arg}; double h = {value};{select} w{a}[{m}][{t}][j] = h; (void)x; }}")
    return "\n            ".join(lines)


def _combos(d: int, order: int) -> list[tuple[int, ...]]:
    """Derivative counts per axis (m0, ..., m_{d-1}) summing to ``order``."""
    return [c for c in itertools.product(range(order + 1), repeat=d) if sum(c) == order]


def _lanes_sums(d: int, S: int, order: int, ncomp: int, combos: list[tuple[int, ...]]) -> list[str]:
    """The batch's sums with its B points across the vector lanes, innermost axis first, each
    a chain of multiply-adds in tap order; ``R<k>_<j>`` is component k's derivative
    combination ``combos[j]`` (docs/internals/fields-probes.md has the layout)."""
    out: list[str] = []
    for m in range(order + 1):  # the innermost axis's weights, in registers; the others' read where used
        for t in range(S):
            out.append(f"const tl_bd W{d - 1}_{m}_{t} = TL_LOADB(w{d - 1}[{m}][{t}]);")

    def weight(a: int, m: int, t: int) -> str:
        return f"W{a}_{m}_{t}" if a == d - 1 else f"TL_LOADB(w{a}[{m}][{t}])"

    def counts_of(a: int) -> list[tuple[int, ...]]:
        """Derivative counts of axes a .. d-1 a level-a sum carries (at most ``order``)."""
        return [c for c in itertools.product(range(order + 1), repeat=d - a) if sum(c) <= order]

    def name(a: int, k: int, taps: tuple[int, ...], c: tuple[int, ...]) -> str:
        return f"L{a}_{k}_" + "".join(map(str, taps)) + "_" + "".join(map(str, c))

    def axis(a: int, k: int, taps: tuple[int, ...]) -> None:
        """Emit axis a's sums for the outer taps ``taps`` (one per axis before a)."""
        if a == d - 1:
            tag = "".join(map(str, taps))
            if S == 4 and ncomp == 1 and ROWS:  # a row is 4 doubles: 8 rows loaded, transposed in registers
                row = " + ".join([f"{tap}*st{b}" for b, tap in enumerate(taps) if tap]) or "0"
                for z in range(4):
                    out.append(f"const tl_bd Z_{tag}{z} = tl_join(data + first[{z}] + {row}, data + first[{z + 4}] + {row});")
                for u in range(4):  # the even (u even) or odd lanes of two rows' pairs: Z 0,1 then Z 2,3
                    idx = ", ".join(f"{2 * j + u % 2}, {2 * j + u % 2 + 8}" for j in range(4))
                    out.append(f"const tl_bd U_{tag}{u} = TL_SHUF8(Z_{tag}{u - u % 2}, Z_{tag}{u - u % 2 + 1}, {idx});")
                for t, (u, lo) in enumerate([(0, 0), (1, 0), (0, 2), (1, 2)]):
                    idx = ", ".join(map(str, [lo, lo + 1, lo + 8, lo + 9, lo + 4, lo + 5, lo + 12, lo + 13]))
                    out.append(f"const tl_bd G_{k}_{tag}{t} = TL_SHUF8(U_{tag}{u}, U_{tag}{u + 2}, {idx});")
            else:
                for t in range(S):
                    offset = " + ".join([f"{tap}*st{b}" for b, tap in enumerate(taps) if tap] + ([f"{t * ncomp + k}"] if t * ncomp + k else [])) or "0"
                    out.append(f"const tl_bd G_{k}_{tag}{t} = TL_GATHER(data + {offset}, fi);")
            children = [f"G_{k}_{''.join(map(str, taps))}{t}" for t in range(S)]
            for c in counts_of(a):
                terms = [f"{weight(a, c[0], t)} * {children[t]}" for t in range(S)]
                out.append(f"const tl_bd {name(a, k, taps, c)} = {' + '.join(terms)};")
            return
        wanted = [c for c in counts_of(a) if a > 0 or sum(c) == order]
        for t in range(S):  # each sum accumulated as its taps' terms come (few vectors live)
            axis(a + 1, k, taps + (t,))
            for c in wanted:
                acc = name(a, k, taps, c) + ("" if t == S - 1 else f"_{t}")
                term = f"{weight(a, c[0], t)} * {name(a + 1, k, taps + (t,), c[1:])}"
                out.append(f"const tl_bd {acc} = {name(a, k, taps, c)}_{t - 1} + {term};" if t else
                           f"const tl_bd {acc} = {term};")

    for k in range(ncomp):
        axis(0, k, ())
        for j, c in enumerate(combos):
            out.append(f"const tl_bd R{k}_{j} = TL_SELECT(okm, {name(0, k, (), c)}, nanv);")
    return out


def _prefix(d: int, S: int, order: int, ncomp: int) -> str:
    """The source's head: the includes and the shape's macros (csrc/probe_*.c read them)."""
    full = ncomp * d ** order
    edge = (1 << SORT_SHIFT) + S - 1
    return f"""
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#define D {d}
#define S {S}
#define NC {ncomp}
#define PACKED {ncomp * len(_combos(d, order))}  /* doubles of a point's packed result */
#define UNPACK {max(1, min(UNPACK, 4096 // (ncomp * full)))}  /* points tl_unpack gathers (32 KiB at most) */
#define UNPACK_AHEAD {UNPACK_AHEAD}  /* runs of UNPACK points whose packed results are asked for ahead */
#define B {BATCH}  /* points per batch: the lanes of the per-point arithmetic */
#define TL_TILES {TILES}  /* blocks copied into tiles where they hold this many points on average (0: never) */
#define TL_REGION_POINTS {REGION_POINTS}  /* else probed block by block, the next block's rows asked for, from this many (0: never) */
#define TL_TILE_EDGE {edge}  /* a tile's samples per axis: a block's cells and its support */
#define TL_TILE_SIZE {ncomp * edge ** d}  /* a tile's doubles */
"""


def _wparams(d: int, order: int) -> str:
    return ", ".join(f"double w{a}[{order + 1}][S][B]" for a in range(d))


def _cells(d: int, kern: Kernel, order: int) -> str:
    """``tl_cells`` (csrc/probe_cells.c): a batch's cells, domain test and weights (the
    weights' polynomials are the kernel's, as literals: :func:`_weights`)."""
    s = kern.radius
    weights = "\n".join(
        f"    for (int j = 0; j < B; j++) {{ double f = fr[{a}][j];\n            {_weights(kern, order, a)}\n    }}"
        for a in range(d))
    return csrc.text("probe_cells.c", wparams=_wparams(d, order), weights=weights, low=repr(float(s - 1)), radius=s,
                     first=repr(float(1 - s)))


def _points(d: int, kern: Kernel, order: int, ncomp: int, parallel: int) -> str:
    """``tl_probe_points`` and ``tl_unpack`` (csrc/probe_points.c) with their generated parts."""
    S, s = kern.support, kern.radius
    combos = _combos(d, order)
    full, nc = d ** order, len(combos)
    # where each index-space derivative component (a tuple of axes) comes from
    fill = [combos.index(tuple(axes.count(a) for a in range(d))) for axes in itertools.product(range(d), repeat=order)]
    prefetch_rows = " ".join(
        "__builtin_prefetch(r" + "".join(f" + {t}*st{b}" for b, t in enumerate(taps) if t) + ", 0, 1);"
        for taps in itertools.product(range(S), repeat=d - 1))
    # one double a point (a scalar value): a full batch's results are one vector, stored whole
    direct = ("if (count == B) {\n            TL_STOREB(out + p0, R0_0);\n            return;\n        }\n        "
              if ncomp * nc == 1 else "")
    return csrc.text(
        "probe_points.c", full=full, wparams=_wparams(d, order), strides=", ".join(f"st{a} = stride[{a}]" for a in range(d)),
        unused=" ".join(f"(void)st{a};" for a in range(d)), parallel=parallel, ahead=POINTS_AHEAD, firsttap=1 - s,
        radius=s, rows=prefetch_rows, wdecls=" ".join(f"double w{a}[{order + 1}][S][B];" for a in range(d)),
        wargs=", ".join(f"w{a}" for a in range(d)), lanes="\n        ".join(_lanes_sums(d, S, order, ncomp, combos)),
        keep="\n        ".join(f"TL_STOREB(res[{k * nc + j}], R{k}_{j});" for k in range(ncomp) for j in range(nc)),
        results=f"{direct}double res[{ncomp * nc}][B];",
        packs="\n                    ".join(f"o[k*{nc} + {c}] = res[k*{nc} + {c}][j];" for c in range(nc)),
        stores="\n                    ".join(f"o[k*{full} + {j}] = res[k*{nc} + {c}][j];" for j, c in enumerate(fill)),
        unpacks="\n                ".join(f"o[k*{full} + {j}] = r[k*{nc} + {c}];" for j, c in enumerate(fill)),
        streambytes=f"{UNPACK_STREAM_BYTES}.0")


#: The cffi declaration of every probe's entry point (csrc/probe_entry.c).
DECLARATION = ("void tl_probe(int64_t n, const double *pts, const double *data, const int64_t *sizes, "
               "const double *M, double *out, int nthreads, int sort, char *scratch);")


def source(d: int, kern: Kernel, order: int, ncomp: int, parallel: int | None = None) -> tuple[str, str]:
    """The C source of ``tl_probe`` and its cffi declaration: the shape's macros, then
    csrc/probe_*.c with their generated parts; on threads from ``parallel`` points."""
    S = kern.support
    parallel = (1 << 62) if parallel is None else parallel
    src = (_prefix(d, S, order, ncomp)
           + csrc.text("probe_head.h")
           + _cells(d, kern, order)
           + csrc.text("probe_sort.c", shift=SORT_SHIFT, parallelpoints=parallel, coherent=COHERENT_POINTS)
           + _points(d, kern, order, ncomp, parallel)
           + csrc.text("probe_entry.c", regionblocks=REGION_BLOCKS, regionahead=REGION_AHEAD))
    return src, DECLARATION


#: the names a probe's source defines, renamed per step (several steps share one source)
_LOCAL_NAMES = ("tl_cells", "tl_sort", "tl_probe_points", "tl_batch", "tl_probe_tiles", "tl_region", "tl_rows", "tl_unpack", "tl_bd", "tl_bm", "tl_bdu", "tl_bmu", "tl_v4u",
                "tl_gather2", "tl_join2")
_MACROS = ("D", "S", "NC", "PACKED", "UNPACK", "UNPACK_AHEAD", "B", "TL_THREAD", "TL_TILES", "TL_REGION_POINTS", "TL_TILE_EDGE", "TL_TILE_SIZE", "SHIFT", "TL_SELECT", "TL_STREAM_DOUBLES",
           "TL_STREAM_RUN", "TL_STREAM_FENCE", "TL_LOADB", "TL_LOADM", "TL_STOREB", "TL_GATHER", "TL_SHUF8", "tl_join")


def general_entry(runner) -> Any:
    """The general entry (:data:`DECLARATION`: any number of points) of a compiled kernel's first probe step."""
    n = next(k for k, step in enumerate(runner.steps) if isinstance(step, ProbeStep))
    return getattr(runner.lib, f"tl_step{n}_points")


def step_function(name: str, step: ProbeStep, comment: str, parallel: int | None) -> tuple[str, str]:
    """A :class:`ProbeStep` as C: the probe's source, its names, options and fused
    multiply-adds made the step's own, and ``name`` running it on the step's points (the
    C target's convention); returns the text and the general entry's cffi declaration."""
    src, _ = source(step.dim, KERNELS[step.kernel], step.order, step.ncomp, parallel)
    entry = f"{name}_points"  # the general entry (general_entry)
    d = step.dim
    slots = sorted({step.target, *step.operands})
    params = ", ".join(f"real *v{s}" for s in slots)
    renames = "".join(f"#define {local} {name}_{local.removeprefix('tl_')}\n" for local in _LOCAL_NAMES)
    undo = "".join(f"#undef {local}\n" for local in (*_LOCAL_NAMES, *_MACROS))
    text = f"""/* probe step: {comment} */
#if defined(__clang__)
#pragma float_control(push)
#elif defined(__GNUC__)
#pragma GCC push_options
#endif
{renames}#define tl_probe {entry}
{src}
#undef tl_probe
{undo}#if defined(__clang__)
#pragma float_control(pop)
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif
int {name}({params}, int nthreads)
{{
    /* the geometry: per axis its world-to-index row, then its number of samples */
    int64_t sizes[{d}];
    double M[{d * (d + 1)}];
    for (int a = 0; a < {d}; a++) {{
        for (int c = 0; c <= {d}; c++) M[a*{d + 1} + c] = v{step.geometry}[a*{d + 2} + c];
        sizes[a] = (int64_t)v{step.geometry}[a*{d + 2} + {d + 1}];
    }}
    {entry}({step.n}, v{step.points}, v{step.image}, sizes, M, v{step.target}, nthreads, {int(step.sort)}, NULL);
    return 0;
}}
"""
    return text, DECLARATION.replace("tl_probe(", f"{entry}(")
