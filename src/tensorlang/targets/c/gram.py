"""Gram products in C, ``XᵀX`` and ``T[i,j,k] = Σ_n X_ni X_nj X_nk``: the sorted entries
computed once, the others filled in the same call; one function per shape
(docs/c-backend.md, "The Gram kernel").  :func:`step_function` renders a schedule's
:class:`~tensorlang.schedule.steps.GramStep` on the loops stage's team."""

from __future__ import annotations

from dataclasses import dataclass

from ...schedule.steps import GramStep
from . import csrc

#: Columns of a block (one AVX-512 vector of doubles).
BLOCK = 8
#: Rows of X per packed panel (an 8-row block stays in L1; docs/c-backend.md, "The Gram kernel").
KC = 128


@dataclass(frozen=True)
class GramShape:
    """X as an n × m matrix (``transposed``: given as m × n); the result m × m (order 3: m × m × m)."""

    n: int
    m: int
    transposed: bool  # X given as m × n (``in,jn->ij``): row stride 1, column stride n
    order: int = 2  # 2: XᵀX (m × m); 3: T[i,j,k] = Σ_n X_ni X_nj X_nk (m × m × m)
    strip: bool = False  # the last m mod 8 columns as a column strip (the schedule's GramStep.strip)

    @property
    def blocks(self) -> int:
        return -(-self.m // BLOCK)

    @property
    def kc(self) -> int:
        """Rows per packed panel."""
        return min(self.n, KC)

    @property
    def work_doubles(self) -> int:
        mp = self.blocks * BLOCK
        return mp ** self.order + 2 * self.blocks * self.kc * BLOCK + BLOCK  # work tensor, 2 panels, alignment


def _tile(width: int, simd: bool, scaled: bool = False, rows: int = 8, prefix: str = "") -> str:
    """The micro-kernel of a tile of 8 rows × ``width`` 8-column blocks, ``c[u][w] += Σ_r
    a[r][u] · b[r][w]`` (``scaled``: times ``s[8r]``, the third factor; ``rows`` < 8: the last rows only)."""
    name = prefix + f"{'stile' if scaled else 'tile'}{width}" + (f"_{rows}" if rows < 8 else "")
    low = 8 - rows
    scale = "const double *restrict s, " if scaled else ""
    if simd:
        lines = [f"static inline void {name}(const double *restrict a, const double *restrict b, {scale}long kc, "
                 "double *restrict c, int first, const char *pf, const double *restrict src, double *restrict dst, long cn) {"]
        lines += [f"    __m512d c{u}{w} = first ? _mm512_setzero_pd() : _mm512_load_pd(c + {u} * MP + {8 * w});"
                  for u in range(low, 8) for w in range(width)]
        lines.append("    for (long r = 0; r < kc; r++) {")
        lines.append("        _mm_prefetch(pf + 64 * r, _MM_HINT_T1);  /* a later panel's rows, from memory */")
        lines.append("        if (r < cn) _mm512_store_pd(dst + 8 * r, _mm512_loadu_pd(src + r * M));  /* packs the next */")
        lines += ["        __m512d t = _mm512_set1_pd(s[8 * r]);"] * scaled
        for w in range(width):
            load = f"_mm512_load_pd(b + {w} * kc * 8 + 8 * r)"
            lines.append(f"        __m512d v{w} = {f'_mm512_mul_pd({load}, t)' if scaled else load};")
        for u in range(low, 8):
            lines.append(f"        __m512d a{u} = _mm512_set1_pd(a[8 * r + {u}]);")
            for w in range(width):
                lines.append(f"        c{u}{w} = _mm512_fmadd_pd(a{u}, v{w}, c{u}{w});")
        lines += ["    }", *(f"    _mm512_store_pd(c + {u} * MP + {8 * w}, c{u}{w});" for u in range(low, 8)
                                for w in range(width)), "}"]
        return "\n".join(lines)
    factor = "(s[8 * r] * b[w * kc * 8 + 8 * r + v])" if scaled else "b[w * kc * 8 + 8 * r + v]"
    return f"""static inline void {name}(const double *restrict a, const double *restrict b, {scale}long kc,
                         double *restrict c, int first, const char *pf, const double *restrict src,
                         double *restrict dst, long cn) {{
    (void)pf;
    for (long r = 0; r < cn; r++)
        for (int v = 0; v < 8; v++) dst[8 * r + v] = src[r * M + v];
    double acc[8][{8 * width}];
    for (int u = {low}; u < 8; u++)
        for (int j = 0; j < {8 * width}; j++) acc[u][j] = first ? 0.0 : c[u * MP + j];
    for (long r = 0; r < kc; r++)
        for (int u = {low}; u < 8; u++) {{
            double q = a[8 * r + u];
            for (int w = 0; w < {width}; w++)
                for (int v = 0; v < 8; v++) acc[u][8 * w + v] += q * {factor};
        }}
    for (int u = {low}; u < 8; u++)
        for (int j = 0; j < {8 * width}; j++) c[u * MP + j] = acc[u][j];
}}"""


def _row_dispatch(width: int, prefix: str = "") -> str:
    """``srow{width}(rows, ...)``: the scaled tile of its last ``rows`` rows."""
    cases = "\n".join(f"    case {r}: {prefix}stile{width}_{r}(a, b, s, kc, c, first, pf, NULL, NULL, 0); return;"
                      for r in range(1, 8))
    return (f"static inline void {prefix}srow{width}(int rows, const double *restrict a, const double *restrict b, "
            "const double *restrict s, long kc, double *restrict c, int first, const char *pf) {\n"
            f"    switch (rows) {{\n{cases}\n"
            f"    default: {prefix}stile{width}(a, b, s, kc, c, first, pf, NULL, NULL, 0);\n    }}\n}}")


def _strip_group(tail: int) -> int:
    """Row blocks per strip call: group × (tail + 1) + 1 vector registers of 32."""
    return 31 // (tail + 1)


def _strip(tail: int, simd: bool, prefix: str = "") -> str:
    """``strip(a, t, kc, c, first, count)``: the last ``tail`` columns of X against ``count``
    row blocks, 8 rows a vector (one case per count: the accumulators are registers)."""
    group = _strip_group(tail)
    lines = [f"static void {prefix}strip(const double *restrict a, const double *restrict t, long kc, double *restrict c, "
             "int first, long count) {", "    switch (count) {"]
    for count in range(group, 0, -1):
        lines.append(f"    case {count}: {{")
        if simd:
            lines += [f"        __m512d c{b}_{q} = first ? _mm512_setzero_pd() : _mm512_load_pd(c + {q} * MP + {8 * b});"
                      for b in range(count) for q in range(tail)]
            lines.append("        for (long r = 0; r < kc; r++) {")
            lines += [f"            __m512d v{b} = _mm512_load_pd(a + {b} * kc * 8 + 8 * r);" for b in range(count)]
            for q in range(tail):
                lines.append(f"            __m512d s{q} = _mm512_set1_pd(t[8 * r + {q}]);")
                for b in range(count):
                    lines.append(f"            c{b}_{q} = _mm512_fmadd_pd(v{b}, s{q}, c{b}_{q});")
            lines.append("        }")
            lines += [f"        _mm512_store_pd(c + {q} * MP + {8 * b}, c{b}_{q});" for b in range(count) for q in range(tail)]
        else:
            lines += [f"        double acc[{tail}][{8 * count}];",
                      f"        for (int q = 0; q < {tail}; q++)",
                      f"            for (int i = 0; i < {8 * count}; i++) acc[q][i] = first ? 0.0 : c[q * MP + i];",
                      "        for (long r = 0; r < kc; r++)",
                      f"            for (int q = 0; q < {tail}; q++)",
                      f"                for (int b = 0; b < {count}; b++)",
                      "                    for (int u = 0; u < 8; u++) acc[q][8 * b + u] += a[b * kc * 8 + 8 * r + u] * t[8 * r + q];",
                      f"        for (int q = 0; q < {tail}; q++)",
                      f"            for (int i = 0; i < {8 * count}; i++) c[q * MP + i] = acc[q][i];"]
        lines += ["        break;", "    }"]
    return "\n".join([*lines, "    }", "}"])


def _core(scaled: bool, suffix: str, prefix: str) -> str:
    """The packing and the driver (csrc/gram_pack.c, then gram_body3.c or gram_body2.c)."""
    body = "gram_body3.c" if scaled else "gram_body2.c"
    return csrc.text("gram_pack.c", s=suffix, p=prefix) + csrc.text(body, s=suffix, p=prefix)


#: The macros a Gram block defines, undefined after it (the kernel's other steps follow).
MACROS = ("N", "M", "MB", "MP", "KC", "TRANSPOSED", "STRIP", "TB", "SG", "TEAM", "TL_GRAM_PORTABLE")


def source(shape: GramShape, portable: bool = False, team: int = -1, prefix: str = "tl_") -> str:
    """The C of ``<prefix>gram(x, res, work, threads)`` for ``shape`` (``portable``: no
    intrinsics; ``team``: the loops stage's ``TEAM``; ``prefix``: of every name it defines)."""
    mp = shape.blocks * BLOCK
    head = [
        "/* generated by tensorlang: X^T X, upper triangle and mirror (targets/c/gram.py) */",
        "#include <stddef.h>",
        f"#define N {shape.n}L",
        f"#define M {shape.m}L",
        f"#define MB {shape.blocks}L",
        f"#define MP {mp}L",
        f"#define KC {shape.kc}L",
        f"#define TRANSPOSED {int(shape.transposed)}",
    ]
    scaled, tail, strip = shape.order == 3, shape.m % BLOCK, shape.strip
    head += ["#define TL_GRAM_PORTABLE 1"] * portable
    head += [f"#define STRIP {int(strip)}", f"#define TB {shape.m // BLOCK if strip else shape.blocks}L"]
    head += [f"#define SG {_strip_group(tail)}L"] * strip + [f"#define TEAM {team}"]
    head += ["#if defined(__AVX512F__) && !defined(TL_GRAM_PORTABLE)", "#include <immintrin.h>"]

    def tiles(simd: bool) -> str:  # with AVX-512 intrinsics, or plain loops
        parts = [_tile(w, simd, scaled, prefix=prefix) for w in (1, 2, 3)]
        if scaled:  # the first row block of each i: only the rows j >= i
            parts += [_tile(w, simd, True, r, prefix) for w in (1, 2, 3) for r in range(1, 8)]
            parts += [_row_dispatch(w, prefix) for w in (1, 2, 3)]
        return "\n".join(parts + ([_strip(tail, simd, prefix)] if strip else []))
    # two copies: on threads, and one thread without OpenMP (a region of one costs a team set-up)
    serial = "\n".join(line for line in _core(scaled, "seq", prefix).splitlines() if "#pragma omp" not in line)
    entry = (f"static int {prefix}gram(const double *restrict x, double *restrict res, double *restrict work, "
             "int threads) {\n"
             f"    int nt = {prefix}team(threads);\n"
             f"    return nt > 1 ? {prefix}run_par(x, res, work, nt) : {prefix}run_seq(x, res, work, 1);\n}}\n")
    undefine = "".join(f"#undef {name}\n" for name in MACROS)
    return ("\n".join(head) + "\n" + tiles(True) + "\n#else\n" + tiles(False) + "\n#endif\n" + csrc.text("gram_team.c", p=prefix)
            + _core(scaled, "par", prefix) + serial + "\n" + entry + undefine)


def step_function(name: str, step: GramStep, comment: str, team: int) -> str:
    """The C function ``int name(real *v<slot>..., int nthreads)`` of a Gram step: the Gram
    function prefixed with ``name``, called on a work block of its own (NO_MEMORY where none)."""
    shape = GramShape(step.n, step.m, step.transposed, step.order, step.strip)
    order = "X^T X" if step.order == 2 else "sum_n X_ni X_nj X_nk"
    params = ", ".join(f"real *restrict v{slot}" for slot in sorted((step.operand, step.target)))
    return (f"/* Gram step ({order}, m = {step.m}: the sorted entries, the others filled in): {comment} */\n"
            + source(shape, team=team, prefix=f"{name}_") + "#include <stdlib.h>\n"
            f"int {name}({params}, int nthreads) {{\n"
            f"    double *work = (double *)malloc({shape.work_doubles}LL * sizeof(double));\n"
            "    if (work == NULL) return -2;  /* NO_MEMORY */\n"
            f"    int status = {name}_gram(v{step.operand}, v{step.target}, work, nthreads);\n"
            "    free(work);\n    return status;\n}\n")
