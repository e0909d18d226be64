"""BLAS steps printed as C (docs/c-backend.md, "BLAS called from C"): a step that ``runs``
in C as ``int tl_stepN(real *v<slot>..., int nthreads)`` calling GEMM, GEMV or SYRK
through the pointers ``tl_set_blas`` installs; a ``BlasProduct`` as one SYRK or GEMM."""

from __future__ import annotations

from ...loops.ir import BlasProduct
from ...schedule.gemm import Gemm
from . import csrc
from ...machine.blas import CBLAS32, CBLAS64, FORTRAN32


#: The wrappers every source with BLAS steps carries (csrc/tl_blas.h): row-major GEMM,
#: SYRK and GEMV over the pointers ``tl_set_blas`` installs, in the calling convention
#: ``tl_blas_kind`` names (machine/blas.py: CBLAS64, CBLAS32, FORTRAN32).
WRAPPERS = csrc.text("tl_blas.h", cblas64=CBLAS64, cblas32=CBLAS32, fortran32=FORTRAN32)


def _call(g: Gemm, a: str, b: str, c: str) -> str:
    """The C call computing one product of ``g`` from the pointers ``a``, ``b``, ``c``."""
    if g.n == 1:  # C (m x 1) = op(A) x, x = B's k values (B k x 1 or 1 x k: contiguous either way)
        rows, cols = (g.k, g.m) if g.trans_a else (g.m, g.k)
        return f"tl_gemv({int(g.trans_a)}, {rows}LL, {cols}LL, {a}, {b}, {c})"
    if g.m == 1:  # C (1 x n) = x op(B), x = A's k values: Cᵀ = op(B)ᵀ x
        rows, cols = (g.n, g.k) if g.trans_b else (g.k, g.n)
        return f"tl_gemv({int(not g.trans_b)}, {rows}LL, {cols}LL, {b}, {a}, {c})"
    return (f"tl_gemm({int(g.trans_a)}, {int(g.trans_b)}, {g.m}LL, {g.n}LL, {g.k}LL, {a}, {g.lda}LL, "
            f"{b}, {g.ldb}LL, {c})")


def is_gram(g: Gemm) -> bool:
    """Whether ``g`` is ``AᵀA`` or ``AAᵀ`` of one buffer: SYRK's upper triangle, then copied."""
    return (g.batch == 1 and g.a == g.b != g.c and g.m == g.n > 1 and g.trans_a != g.trans_b
            and g.lda == g.ldb)


def function(name: str, g: Gemm, kind: str, comment: str) -> str:
    """``int name(real *v<slot>..., int nthreads)`` running ``g``, headed by its comment."""
    params = ", ".join([f"real *v{slot}" for slot in g.slots] + ["int nthreads"])
    routine = "gemv" if 1 in (g.m, g.n) else "syrk" if is_gram(g) else "gemm"
    lines = [f"/* BLAS step ({kind}, {routine} in C): {comment} */", f"int {name}({params}) {{",
             "    (void)nthreads;"]
    if routine == "syrk":  # zeroed first: BLAS may scale beta = 0 by multiplying (NaN · 0 is NaN)
        n, c = g.n, f"v{g.c}"
        lines += [f"    memset({c}, 0, (size_t){n * n}LL * sizeof(real));",
                  f"    if (tl_syrk({int(g.trans_a)}, {n}LL, {g.k}LL, v{g.a}, {g.lda}LL, {c}, {n}LL) != 0) return -1;",
                  f"    for (int64_t i = 1; i < {n}LL; ++i)",
                  f"        for (int64_t j = 0; j < i; ++j) {c}[i * {n}LL + j] = {c}[j * {n}LL + i];"]
    elif g.batch == 1:
        lines.append(f"    if ({_call(g, f'v{g.a}', f'v{g.b}', f'v{g.c}')} != 0) return -1;")
    else:
        a = f"v{g.a} + t * {g.stride_a}LL" if g.stride_a else f"v{g.a}"
        b = f"v{g.b} + t * {g.stride_b}LL" if g.stride_b else f"v{g.b}"
        lines += [f"    for (int64_t t = 0; t < {g.batch}LL; ++t) {{",
                  f"        if ({_call(g, a, b, f'v{g.c} + t * {g.m * g.n}LL')} != 0) return -1;", "    }"]
    if g.scale != 1.0:  # numpy.multiply(out, scale, out=out), as the Python step does (finite: blas_shape)
        lines.append(f"    for (int64_t i = 0; i < {g.batch * g.m * g.n}LL; ++i) v{g.c}[i] *= (real){float(g.scale)!r};")
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n"


def packed_call(node: BlasProduct) -> list[str]:
    """The C computing a packed block product by one BLAS call (:class:`~tensorlang.loops.ir.BlasProduct`),
    its target zeroed first (BLAS may scale by beta = 0); the last statement is the call."""
    p = node.product
    lda, ldb, ldc = node.leading
    target = f"v{p.target}"
    zero = f"memset({target}, 0, (size_t){node.zeroed}LL * sizeof(real));"
    if node.routine == "syrk":
        return [zero, f"tl_syrk({int(p.left_summed_first)}, {p.rows}LL, {p.summed}LL, v{p.left}, {lda}LL, "
                      f"{target}, {ldc}LL)"]
    return [zero, f"tl_gemm({int(p.left_summed_first)}, {int(not p.right_summed_first)}, {p.rows}LL, {p.cols}LL, "
                  f"{p.summed}LL, v{p.left}, {lda}LL, v{p.right}, {ldb}LL, {target})"]
