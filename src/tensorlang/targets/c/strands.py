"""The C renderer and executor of the strand IR (:mod:`tensorlang.strand_ir.ir`): the state
as struct-of-arrays, ``tl_create`` and ``tl_steps`` in C, probes from :mod:`.strands_probe`
(docs/diderot-compiled.md, "From the typed program to C" and "How a run goes")."""

from __future__ import annotations

import dataclasses
import itertools
import math
import threading
from typing import Any, Mapping

import numpy as np

from ...errors import error
from ...limits import _human, check_allocation, memory_budget_bytes
from ...strand_ir import EXECUTORS, UNAVAILABLE
from ...strand_ir import ir as S
from . import build as c_build
from . import strands_batch as B
from . import strands_narrow as NW
from . import strands_probe as P

_CTY = {"int": "int64_t", "real": "double", "bool": "int", "string": "int64_t"}
#: int arithmetic that wraps in two's complement, as the interpreter's does
_IWRAP = {"+": "tl_iadd", "-": "tl_isub", "*": "tl_imul"}

PRELUDE = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int64_t tl_err_flag;
/* ints are 64-bit two's complement and wrap (as the interpreter's do): no undefined overflow */
static inline int64_t tl_iadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t tl_isub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t tl_imul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t tl_idiv(int64_t a, int64_t b) {
    if (b == 0) { tl_err_flag = 1; return 0; }
    return b == -1 ? tl_isub(0, a) : a / b;
}
static inline int64_t tl_imod(int64_t a, int64_t b) { if (b == 0) { tl_err_flag = 1; return 0; } return b == -1 ? 0 : a % b; }
static inline int64_t tl_ichk(int64_t i, int64_t n) { if (i < 0 || i >= n) { tl_err_flag = 2; return 0; } return i; }
static inline int64_t tl_schk(int64_t i, int64_t n) { if (i < 0 || i >= n) { tl_err_flag = 4; return 0; } return i; }
typedef struct { const double *data; int64_t len; int64_t comps; } tl_seq;
static const tl_seq *tl_sq;
void tl_set_seqs(const tl_seq *s) { tl_sq = s; }
static inline double tl_at(int k, int64_t i, int c) {
    const tl_seq *q = &tl_sq[k];
    if (i < 0 || i >= q->len) { tl_err_flag = 4; return 0; }
    return q->data[i * q->comps + c];
}
static inline int64_t tl_iabs(int64_t a) { return a < 0 ? tl_isub(0, a) : a; }
static inline int64_t tl_imin(int64_t a, int64_t b) { return b < a ? b : a; }
static inline int64_t tl_imax(int64_t a, int64_t b) { return b > a ? b : a; }
static inline int64_t tl_iclamp(int64_t lo, int64_t hi, int64_t x) { return x <= lo ? lo : hi <= x ? hi : x; }
static inline double tl_min(double a, double b) { return (isnan(a) || isnan(b)) ? NAN : (b < a ? b : a); }
static inline double tl_max(double a, double b) { return (isnan(a) || isnan(b)) ? NAN : (b > a ? b : a); }
static inline double tl_clamp(double lo, double hi, double x) { return x <= lo ? lo : hi <= x ? hi : x; }
/* a select whose arms are both evaluated (cheap, without side effects): no branch to mispredict
   (the ints' by a mask the C compiler cannot see through: GCC turns c ? a : b back into a jump) */
static inline int64_t tl_seli(int c, int64_t a, int64_t b) {
    int64_t m = (int64_t)(0 - (uint64_t)(c != 0));
#if defined(__GNUC__)
    __asm__("" : "+r"(m));
#endif
    return b ^ ((a ^ b) & m);
}
static inline double tl_selr(int c, double a, double b) { return c ? a : b; }
#ifndef TL_BK  /* strands a block of the update loop (dynamic OpenMP chunks); 256 where folds are blocked */
#define TL_BK 64
#endif
/* the strands active (0) and dead (2), counted in 16-bit lanes a chunk at a time */
static void tl_count(const int8_t *status, int64_t n, int64_t *active, int64_t *dead) {
    int64_t a = 0, d = 0;
    for (int64_t i0 = 0; i0 < n; i0 += 16384) {
        uint16_t ac = 0, dc = 0; int64_t e = n - i0 < 16384 ? n : i0 + 16384;
        for (int64_t i = i0; i < e; i++) { ac += status[i] == 0; dc += status[i] == 2; }
        a += ac; d += dc;
    }
    *active = a; *dead = d;
}
#if defined(__GNUC__)  /* a block's folds on whole cache lines: a vector store split over two lines stalls the next load */
#define TL_ALIGN __attribute__((aligned(64)))
#else
#define TL_ALIGN
#endif
#if defined(__GNUC__)  /* a strand's update inlined in the loop over a block, that loop's rare calls kept out of it */
#define TL_INLINE static inline __attribute__((always_inline))
#define TL_OUTLINE static __attribute__((noinline))
#else
#define TL_INLINE static inline
#define TL_OUTLINE static
#endif
#if defined(__GNUC__) && !defined(__clang__)  /* the create in lanes: floor and selects vectorized (FP flags
   ignored: no value changes), no SLP fusing of a multiply with an alternating add and subtract */
#define TL_CLATTR __attribute__((optimize("no-trapping-math", "no-tree-slp-vectorize")))
#else
#define TL_CLATTR
#endif
#if defined(__GNUC__) && !defined(__clang__)  /* tl_bk_fill: its loops across a block's lanes stay whole (gcc's
   unroll-and-jam of the offsets' loop left them scalar) */
#define TL_NOJAM __attribute__((optimize("no-loop-unroll-and-jam")))
#else
#define TL_NOJAM
#endif
static inline double tl_sgn(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); }
static inline double tl_pow(double a, double b) { return pow(a, b); }
static inline double tl_div(double a, double b) { return b == 0 && (a == 0 || isnan(a)) ? NAN : a / b; }
/* x^n for an int n by repeated squaring, bits high to low, as Diderot's executables and the interpreter
   (the leading zero bits square 1.0, exactly 1.0: skipped) */
static inline double tl_ipow(double a, int64_t n) {
    uint64_t m = n < 0 ? 0 - (uint64_t)n : (uint64_t)n, bit = (uint64_t)1 << 63; double r = 1.0;
    for (; bit > m; bit >>= 1) ;
    for (; bit; bit >>= 1) { r = r * r; if (m & bit) r = r * a; }
    return n < 0 ? tl_div(1.0, r) : r;
}
static inline double tl_sqrt(double x) { return x >= 0 ? sqrt(x) : NAN; }
static inline double tl_nrm(double x, double n) { return n != 0 ? x / n : x * 0.0; }
static char *tl_pbuf; static size_t tl_plen, tl_pcap;
static void tl_pput(const char *s, size_t n) {
    if (tl_plen + n + 1 > tl_pcap) {
        size_t cap = 2 * (tl_plen + n + 1) + 256; char *nb = realloc(tl_pbuf, cap);
        if (!nb) { tl_err_flag = 3; return; }
        tl_pbuf = nb; tl_pcap = cap;
    }
    memcpy(tl_pbuf + tl_plen, s, n); tl_plen += n;
}
static void tl_pstr(const char *s) { tl_pput(s, strlen(s)); }
/* where each print statement's text starts, and its strand (-1: a global block): a program
   that is not bulk-synchronous has its text sorted strand by strand, as Diderot's runs */
static int64_t *tl_pmk; static size_t tl_pmn, tl_pmcap;
static void tl_pmark(int64_t owner) {
    if (tl_pmn + 2 > tl_pmcap) {
        size_t cap = 2 * tl_pmcap + 64; int64_t *nb = realloc(tl_pmk, cap * sizeof *nb);
        if (!nb) { tl_err_flag = 3; return; }
        tl_pmk = nb; tl_pmcap = cap;
    }
    tl_pmk[tl_pmn++] = (int64_t)tl_plen; tl_pmk[tl_pmn++] = owner;
}
const int64_t *tl_pmarks(int64_t *n) { *n = (int64_t)tl_pmn; tl_pmn = 0; return tl_pmk; }
static void tl_pint(int64_t v) { char b[32]; int n = snprintf(b, sizeof b, "%lld", (long long)v); tl_pput(b, (size_t)n); }
static void tl_pbool(int v) { tl_pstr(v ? "true" : "false"); }
static void tl_preal(double v) {
    if (isnan(v)) { tl_pstr(signbit(v) ? "-nan" : "nan"); return; }
    if (isinf(v)) { tl_pstr(v > 0 ? "inf" : "-inf"); return; }
    char b[40]; int n = snprintf(b, sizeof b, "%.17g", v); tl_pput(b, (size_t)n);
}
const char *tl_printed(int64_t *n) { *n = (int64_t)tl_plen; tl_plen = 0; return tl_pbuf; }
"""

#: the library routines of ``S.Lib`` statements (included where a program uses them):
#: cyclic Jacobi rotations for the symmetric eigenproblem (accurate to rounding, as
#: LAPACK's, for the 2×2 and 3×3 matrices Diderot has), the inverse by cofactors
LINALG = r"""
static const double tl_sgnref[4] = {1.0, 0.6180339887498949, 0.3819660112501051, 0.2360679774997897};
#define TL_EIG_EPS 3.552713678800501e-15  /* 16 ulps of 1 */
static void tl_unit2(double *v) {
    double s = sqrt(v[0] * v[0] + v[1] * v[1]);
    if (s > TL_EIG_EPS) { v[0] *= 1 / s; v[1] *= 1 / s; }
}
/* 2x2: the closed form of Diderot's executables (their eigenvectors' signs) */
static void tl_eig2(const double *m, double *out) {
    double mean = 0.5 * (m[0] + m[3]), m00 = m[0] - mean, m01 = m[1], m11 = m[3] - mean;
    double q = m00 - m11, d = 4.0 * m01 * m01 + q * q;
    if (!(d > TL_EIG_EPS)) { out[0] = out[1] = mean; out[2] = 1; out[3] = 0; out[4] = 0; out[5] = 1; return; }
    double vv = 0.5 * sqrt(d), r1[2] = {m00 - vv, m01}, r2[2] = {m01, m11 - vv}, e1[2], e0[2];
    double sg = r1[0] * r2[0] + r1[1] * r2[1] > 0 ? 1.0 : -1.0;
    e1[0] = r1[0] + sg * r2[0]; e1[1] = r1[1] + sg * r2[1]; tl_unit2(e1);
    e0[0] = e1[1]; e0[1] = -e1[0]; tl_unit2(e0);
    out[0] = vv + mean; out[1] = -vv + mean; out[2] = e0[0]; out[3] = e0[1]; out[4] = e1[0]; out[5] = e1[1];
}
static void tl_cross(const double *a, const double *b, double *r) {
    r[0] = a[1] * b[2] - a[2] * b[1]; r[1] = a[2] * b[0] - a[0] * b[2]; r[2] = a[0] * b[1] - a[1] * b[0];
}
/* 3x3, distinct eigenvalues: the signs of Diderot's executables (the interpreter's _eig3):
   the vectors of the outer eigenvalue farther from the middle one (the last on a tie) and of the middle one point
   along the null direction of a - wI (crosses of its rows), the third completes the frame */
static void tl_eig3_signs(const double *a, double *out) {
    double *w = out, scale = fmax(fmax(fabs(w[0]), fabs(w[2])), 1e-300);
    if (fmin(w[0] - w[1], w[1] - w[2]) <= 1e-12 * scale) return;
    int keep = (w[0] - w[1]) - (w[1] - w[2]) > 1e-9 * scale ? 0 : 2, idx[2] = {keep, 1};
    for (int t = 0; t < 2; t++) {
        int i = idx[t];
        double b[9], res[3], crs[3];
        for (int k = 0; k < 9; k++) b[k] = a[k] - (k % 4 == 0 ? w[i] : 0.0);
        tl_cross(b, b + 3, res);
        for (int pr = 0; pr < 2; pr++) {
            tl_cross(pr ? b : b + 3, b + 6, crs);
            double sg = res[0] * crs[0] + res[1] * crs[1] + res[2] * crs[2] > 0 ? 1.0 : -1.0;
            for (int c = 0; c < 3; c++) res[c] += sg * crs[c];
        }
        double *vi = out + 3 + 3 * i;
        if (res[0] * vi[0] + res[1] * vi[1] + res[2] * vi[2] < 0)
            for (int c = 0; c < 3; c++) vi[c] = -vi[c];
    }
    if (keep == 0) tl_cross(out + 3, out + 6, out + 9);
    else tl_cross(out + 6, out + 9, out + 3);
}
static void tl_eig(int n, const double *m, double *out) {
    double a[16], v[16];
    for (int k = 0; k < n * n; k++)
        if (!isfinite(m[k])) { for (int q = 0; q < n + n * n; q++) out[q] = NAN; return; }
    if (n == 2) { tl_eig2(m, out); return; }
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) { a[r * n + c] = 0.5 * (m[r * n + c] + m[c * n + r]); v[r * n + c] = r == c; }
    for (int sweep = 0; sweep < 64; sweep++) {
        int turned = 0;
        for (int p = 0; p < n - 1; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p * n + q], app = a[p * n + p], aqq = a[q * n + q];
                if (apq == 0) continue;
                if (fabs(apq) <= 1e-18 * (fabs(app) + fabs(aqq))) { a[p * n + q] = a[q * n + p] = 0; continue; }
                turned = 1;
                double th = (aqq - app) / (2 * apq);  /* cot 2θ; t = tan θ, the smaller root */
                double t = fabs(th) > 1e150 ? 0.5 / fabs(th) : 1 / (fabs(th) + sqrt(th * th + 1));
                if (th < 0) t = -t;
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; k++) {
                    double x = a[k * n + p], y = a[k * n + q];
                    a[k * n + p] = c * x - s * y; a[k * n + q] = s * x + c * y;
                }
                for (int k = 0; k < n; k++) {
                    double x = a[p * n + k], y = a[q * n + k];
                    a[p * n + k] = c * x - s * y; a[q * n + k] = s * x + c * y;
                }
                a[p * n + q] = a[q * n + p] = 0;
                for (int k = 0; k < n; k++) {
                    double x = v[k * n + p], y = v[k * n + q];
                    v[k * n + p] = c * x - s * y; v[k * n + q] = s * x + c * y;
                }
            }
        if (!turned) break;
    }
    int used[4] = {0, 0, 0, 0};
    for (int r = 0; r < n; r++) {  /* largest first; the first of equal ones first */
        int best = -1;
        for (int k = 0; k < n; k++)
            if (!used[k] && (best < 0 || a[k * n + k] > a[best * n + best])) best = k;
        used[best] = 1;
        out[r] = a[best * n + best];
        double dot = 0;
        for (int c = 0; c < n; c++) dot += tl_sgnref[c] * v[c * n + best];
        for (int c = 0; c < n; c++) out[n + r * n + c] = dot < 0 ? -v[c * n + best] : v[c * n + best];
    }
    if (n == 3) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) a[r * 3 + c] = 0.5 * (m[r * 3 + c] + m[c * 3 + r]);
        tl_eig3_signs(a, out);
    }
}
static void tl_inv(int n, const double *m0, double *out) {
    double d, m[9], big = 0;  /* scaled by a power of two near the largest entry: no overflow */
    int e = 0;
    for (int k = 0; k < n * n; k++) big = fabs(m0[k]) > big ? fabs(m0[k]) : big;
    if (big > 0 && isfinite(big)) frexp(big, &e);
    for (int k = 0; k < n * n; k++) m[k] = ldexp(m0[k], -e);
    if (n == 2) {
        d = m[0] * m[3] - m[1] * m[2];
        out[0] = m[3] / d; out[1] = -m[1] / d; out[2] = -m[2] / d; out[3] = m[0] / d;
    } else {
        out[0] = m[4] * m[8] - m[5] * m[7]; out[1] = m[2] * m[7] - m[1] * m[8]; out[2] = m[1] * m[5] - m[2] * m[4];
        out[3] = m[5] * m[6] - m[3] * m[8]; out[4] = m[0] * m[8] - m[2] * m[6]; out[5] = m[2] * m[3] - m[0] * m[5];
        out[6] = m[3] * m[7] - m[4] * m[6]; out[7] = m[1] * m[6] - m[0] * m[7]; out[8] = m[0] * m[4] - m[1] * m[3];
        d = m[0] * out[0] + m[1] * out[3] + m[2] * out[6];
        for (int k = 0; k < 9; k++) out[k] /= d;
    }
    int bad = d == 0 || !isfinite(d);
    for (int k = 0; k < n * n; k++) bad |= !isfinite(m[k]);
    for (int k = 0; k < n * n; k++) out[k] = bad ? NAN : ldexp(out[k], -e);
}
"""

ERRORS = {1: "integer division or remainder by zero", 2: "a tensor index out of range",
          3: "no memory for the printed output", 4: "a sequence index out of range"}
#: tl_err_flag 5: new made more strands in one super-step than the memory budget holds


class Renderer:
    def __init__(self, ir: S.StrandIR, steps: int | None = None):
        """``steps``: the most super-steps a run makes (counters narrow to it; None: any number)."""
        self.ir = ir
        self.state: dict[str, tuple[str, int]] = {}
        self.globals: dict[str, tuple[str, int]] = {}
        for space, slots in (("s", ir.state), ("g", ir.globals)):
            nr = ni = 0
            table = self.state if space == "s" else self.globals
            for slot in slots:
                if slot.ty == "real":
                    table[slot.name] = ("R", nr)
                    nr += 1
                else:
                    table[slot.name] = ("I", ni)
                    ni += 1
            if space == "s":
                self.nr, self.ni = nr, ni
            else:
                self.gnr, self.gni = nr, ni
        #: the int rows stored narrow (in the first bytes of their 64-bit row): row -> bits
        self.ranges = NW.Ranges(ir, steps)
        self.narrow = {self.state[name][1]: bits for name, bits in self.ranges.solve().items()}
        self.method = "update"
        self.plain = False  # selects as C's ?: (tl_lanes)
        self.shared_xi: dict[int, tuple[str, str]] = {}
        self.reuse: dict[int, tuple[list[str], list[str]]] = {}  # tl_update_pf's, below
        self.known = False  # the probe being rendered finds its cache filled at its point (stmts)
        self.fills: dict[str, list[str]] = {}  # a probe family's cache fill, by name (strands_probe.render)
        pos = {name for name in self.state if name.startswith("pos.")}
        moved = any(isinstance(st, S.Set) and st.space == "s" and st.name in pos
                    for body in (ir.update, ir.stabilize, ir.global_block) for st in S.nodes(body or (), S.Set))
        #: no statement after creation sets a position (and Diderot's permuted order is off)
        self.still = ir.sphere is not None and bool(pos) and not moved and not ir.indirect
        # the globals the global block sets: a radius that reads one may change between steps
        changing = {st.name for st in S.nodes(ir.global_block or (), S.Set) if st.space == "g"}
        #: the queries whose answers are kept (TL_STILL: around the strand's pos, with a
        #: radius of constants and unchanging globals), numbered
        self.kept = {id(q): k for k, q in enumerate(
            q for q in S.nodes(ir, S.Reduce) if self.still and q.which == "sphere" and not q.center
            and q.radius is not None and _steady(q.radius, changing))}
        #: the kept queries of update whose fold reads only the neighbours' snapshot, globals and
        #: constants: folded for a block of strands at once (tl_bk_fill), slot b
        self.blocked = {id(q): b for b, q in enumerate(q for q in S.nodes(ir.update, S.Reduce) if id(q) in self.kept
                                                        and q.op in _FOLDS and not q.body and _pure(q.value))}
        #: every sphere query, numbered: its neighbour lists where strands move (tl_nb_query)
        self.sites = {id(q): v for v, q in enumerate(q for q in S.nodes(ir, S.Reduce) if q.which == "sphere")}

    # ---- expressions
    def ex(self, e) -> str:
        if isinstance(e, S.Const):
            if e.ty == "bool":
                return "1" if e.value else "0"
            if e.ty in ("int", "string"):
                return f"INT64_C({int(e.value)})"  # type: ignore[call-overload]
            v = float(e.value)  # type: ignore[arg-type]
            if v != v:
                return "NAN"
            if v in (float("inf"), float("-inf")):
                return "INFINITY" if v > 0 else "(-INFINITY)"
            return f"({v!r})"
        if isinstance(e, S.Ref):
            return self.ref(e.space, e.name)
        if isinstance(e, S.Bin):
            if e.op in ("==", "!=") and _root_of(e.a) is not None and _zero(e.b):
                # |v| == 0 as v•v == 0 (the same truth for every argument, NaN and negatives
                # included: the root is 0 exactly where its argument is): no square root
                return f"({self.ex(_root_of(e.a))} {e.op} 0.0)"
            a, b = self.ex(e.a), self.ex(e.b)
            if e.ty == "int" and e.op == "/":
                return f"tl_idiv({a}, {b})"
            if e.ty == "int" and e.op == "%":
                return f"tl_imod({a}, {b})"
            if e.ty == "real" and e.op == "/":
                return f"tl_div({a}, {b})"
            if e.ty == "int" and e.op in _IWRAP:
                return f"{_IWRAP[e.op]}({a}, {b})"
            return f"({a} {e.op} {b})"
        if isinstance(e, S.Un):
            if e.ty == "int" and e.op == "-":
                return f"tl_isub(0, {self.ex(e.a)})"
            return f"({e.op}{self.ex(e.a)})"
        if isinstance(e, S.Call):
            return f"{e.fn}({', '.join(self.ex(a) for a in e.args)})"
        if isinstance(e, S.Sel):
            if self.plain:  # in lanes (tl_lanes): a select the vectorizer blends
                return f"({self.ex(e.c)} ? {self.ex(e.a)} : {self.ex(e.b)})"
            if e.ty != "string" and _eager(e.a) and _eager(e.b):  # data-dependent conditions (life's rule)
                return f"tl_sel{'r' if e.ty == 'real' else 'i'}({self.ex(e.c)}, {self.ex(e.a)}, {self.ex(e.b)})"
            return f"({self.ex(e.c)} ? {self.ex(e.a)} : {self.ex(e.b)})"
        if isinstance(e, S.At):
            at = f"tl_at({e.seq}, {self.ex(e.index)}, {e.comp})"
            return at if e.ty == "real" else f"(({_CTY[e.ty]}){at})"
        if isinstance(e, S.Len):
            return f"tl_sq[{e.seq}].len"
        return f"(({_CTY[e.ty]})({self.ex(e.a)}))"

    def ref(self, space: str, name: str) -> str:
        if space == "l":
            return f"l_{name}"
        if space == "g":
            arr, k = self.globals[name]
            return f"g{arr.lower()}[{k}]"
        arr, k = self.state[name]
        at = "j" if space in ("n", "o") else "i"
        base = ("tl_RP" if self.still and name.startswith("pos.") else f"tl_{arr}0") if space == "n" else arr
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
            code = {"update": {"continue": 0, "stabilize": 1, "die": 2},
                    "stabilize": {"continue": 1, "stabilize": 1, "die": 2},
                    "global": {"continue": 0, "stabilize": 1, "die": 2},
                    "create": {"continue": 0, "stabilize": 0, "die": 0}}[self.method][s.kind]
            return [f"{pad}return {code};"]
        if isinstance(s, S.Label):
            return [f"{s.name}: ;"]
        if isinstance(s, S.Reduce):
            return self.reduce(s, pad)
        if isinstance(s, S.Lib):
            n = len(s.args)
            size = {"eig": int(round(n ** 0.5)), "inv": int(round(n ** 0.5))}[s.fn]
            return ([f"{pad}{{ const double a_[{n}] = {{{', '.join(self.ex(a) for a in s.args)}}}; "
                     f"double r_[{len(s.targets)}]; tl_{s.fn}({size}, a_, r_);"]
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
                    text = x.encode("unicode_escape").decode("ascii").replace('"', '\\"')
                    out.append(f'{pad}tl_pstr("{text}");')
                else:
                    fn = {"int": "tl_pint", "real": "tl_preal", "bool": "tl_pbool", "string": "tl_pstrid"}[x.ty]
                    out.append(f"{pad}{fn}({self.ex(x)});")
            return out
        raise error("internal", f"the strand renderer has no case for {type(s).__name__}")

    def reduce(self, s: S.Reduce, pad: str) -> list[str]:
        """A reduction (or foreach) over a set of strands or the neighbours a sphere query
        finds: the loop's head by the set, then one fold of ``value`` by the operator."""
        t, inner, ty = f"l_{s.target}", pad + "        ", _CTY[s.ty]
        init = {"sum": "0", "count": "0", "mean": "0", "product": "1", "all": "1", "exists": "0",
                "max": "0", "min": "0"}
        out = [f"{pad}{ty} {t} = {init[s.op]};"] if s.op != "each" else []
        if id(s) in self.blocked and self.method == "update":
            b = self.blocked[id(s)]
            out.append(f"{pad}if ((bk_->filled || tl_bk_fill(bk_, n, gr, gi)) && bk_->ok[{b}]) {t} = bk_->v{b}[i - bk_->i0]; else")
        if s.which == "sphere":
            assert s.radius is not None
            at = ", ".join(self.ex(c) for c in s.center) or ", ".join(self.ref("s", nm) for nm in self.pos_slots())
            r = self.ex(s.radius)
            if id(s) in self.kept:  # the answer kept from the first step (TL_STILL), else the search
                out += [f"{pad}{{", f"{pad}    int64_t cnt = 0; const int64_t *nb_; int64_t base_ = i;",
                        f"{pad}    int64_t nn_ = tl_nb_kept({self.kept[id(s)]}, i, &nb_);",
                        f"{pad}    if (nn_ < 0) {{ double c_[3] = {{{at}}}; nn_ = tl_nb_search(n, i, c_, {r}, &nb_); base_ = 0; }}"]
            else:
                out += [f"{pad}{{", f"{pad}    int64_t cnt = 0; const int64_t *nb_, base_ = 0; double c_[3] = {{{at}}};",
                        f"{pad}    int64_t nn_ = tl_nb_query({self.sites[id(s)]}, n, i, c_, {r}, &nb_);"]
            out += [f"{pad}    for (int64_t q_ = 0; q_ < nn_; q_++) {{", f"{pad}        int64_t j = nb_[q_] + base_; (void)j;"]
        else:
            st = "status" if self.method == "global" else "tl_status"  # a strand method reads the statuses so far
            test = {"all": f"{st}[j] != 2", "active": f"{st}[j] == 0", "stable": f"{st}[j] == 1"}[s.which]
            out += [f"{pad}{{", f"{pad}    int64_t cnt = 0;"]
            if self.ir.indirect and s.op != "count":  # Diderot's order of the living strands
                out += [f"{pad}    for (int64_t o_ = 0; o_ < tl_nl; o_++) {{",
                        f"{pad}        int64_t j = tl_ordp[o_]; if (!({test})) continue;"]
            else:
                out += [f"{pad}    for (int64_t j = 0; j < n; j++) {{", f"{pad}        if (!({test})) continue;"]
        out += self.stmts(s.body, inner)
        if s.op in _FOLDS:
            out.append(inner + _FOLDS[s.op].format(t=t, v=self.ex(s.value), ty=ty))
        out += [f"{inner}cnt++;", f"{pad}    }}", f"{pad}    (void)cnt;"]
        if s.op in _FINAL and s.ty == "real":
            out.append(f"{pad}    {_FINAL[s.op].format(t=t)}")
        return out + [f"{pad}}}"]

    def block_fill(self) -> str:
        """``tl_bk_fill``: the blocked queries' folds for the strands ``i0 .. i0 + TL_BK - 1``:
        a run of strands with one kept pattern folds each offset across the run (consecutive
        strands read consecutive neighbours: contiguous loads, not a gather per strand), each
        strand's fold in the pattern's order, as the query's own loop folds it."""
        sites = [q for q in S.nodes(self.ir.update, S.Reduce) if id(q) in self.blocked]  # in slot order
        out = [f"typedef struct {{ int64_t i0; int filled, ok[{len(sites)}];"
               + "".join(f" {self._fold_cty(q)} v{b}[TL_BK] TL_ALIGN;" for b, q in enumerate(sites)) + " } tl_bk;",
               "TL_NOJAM TL_OUTLINE int tl_bk_fill(tl_bk *bk, int64_t n, const double *gr, const int64_t *gi) {",
               "    int64_t i0 = bk->i0; bk->filled = 1; (void)gr; (void)gi;"]
        for b, q in enumerate(sites):
            v, real = f"bk->v{b}[u_]", q.op in _FINAL and q.ty == "real"
            init, value = {"product": "1", "all": "1"}.get(q.op, "0"), self.ex(q.value)
            # an int sum whose terms the narrow analysis bounds by m: summed in 8 or 16 bits where
            # the pattern's length keeps every partial sum within them (then widened once)
            m = 1 if q.op == "count" else self.ranges.bound(q.value) if q.op == "sum" and q.ty == "int" else None
            full = [BLOCK_FULL.format(cond=f"if (len_ <= {lim // m}) ", ty=f"int{bits}_t", init=init, v=v,
                                      fold=_FOLDS[q.op].format(t="a_[u_]", v=value, ty=_CTY[q.ty]))
                    for bits, lim in ((8, 127), (16, 32767)) if m is not None and 0 < m <= lim // 8]
            full.append(BLOCK_FULL.format(cond="", ty=_CTY[q.ty], init=init, v=v,
                                          fold=_FOLDS[q.op].format(t="a_[u_]", v=value, ty=_CTY[q.ty])))
            out.append(BLOCK_SITE.format(b=b, k=self.kept[id(q)], v=v, init=init, full=" else\n".join(full),
                                         final=_FINAL[q.op].format(t=v).replace("cnt", "len_") if real else "",
                                         fold=_FOLDS[q.op].format(t=v, v=value, ty=_CTY[q.ty])))
        return "\n".join(out + ["    return 1;", "}"])

    def _fold_cty(self, q) -> str:
        """A blocked fold's C type: 32 bits for an int count or sum of values within ±1 (a kept
        pattern has at most n - 1 < 2³¹ neighbours), where lanes then run twice as many strands."""
        m = 1 if q.op == "count" else self.ranges.bound(q.value) if q.op == "sum" and q.ty == "int" else None
        return "int32_t" if m is not None and m <= 1 else _CTY[q.ty]

    def lanes(self) -> list[str]:
        """``tl_lanes``: the update of a block of strands as loops the C compiler can vectorize
        (docs/diderot-compiled.md, "How a run goes"); empty where the update does not allow it."""
        if not self.blocked or self.ir.stabilize or self.ir.indirect:
            return []
        update = self.ir.update
        cut = next((k for k, st in enumerate(update) if S.nodes(st, S.Reduce, most=0)), len(update))
        if any(S.nodes(update[:cut], kind, most=0) for kind in (S.Local, S.For, S.Probe, S.Lib)):
            cut = 0
        first: list[str] = []
        rest: list[str] = []
        self.plain, self.conds = True, 0
        try:
            names: set[str] = set()
            ok = len(S.nodes(update, object, most=400)) <= 400 and self.lane_stmts(update[:cut], [], first, names) \
                and self.lane_stmts(update[cut:], [], rest, names)
        finally:
            self.plain = False
        if not ok:
            return []
        kept = " || ".join(f"!tl_kpid[{self.kept[key]}]" for key in self.blocked)
        head = "        int64_t i = b_ + u_; (void)i; int go_ = "
        return (["static int tl_lanes(int64_t b_, int64_t n, double *restrict R, int64_t *restrict I, "
                 "int8_t *restrict status, const double *gr, const int64_t *gi, const tl_img *img, tl_bk *bk_) {",
                 "    int64_t m_ = n - b_ < TL_BK ? n - b_ : TL_BK; int any_ = 0; int8_t go_a[TL_BK], r_a[TL_BK];",
                 f"    if ({kept}) return 0;  /* (then tl_bk_fill's folds are not all kept) */",
                 "    for (int64_t u_ = 0; u_ < m_; u_++) {", head + "status[i] == 0, r_ = 0;"]
                + ["        " + ln for ln in first]
                + ["        go_a[u_] = (int8_t)go_; r_a[u_] = (int8_t)r_; any_ |= go_;", "    }",
                   "    if (any_ && !bk_->filled) tl_bk_fill(bk_, n, gr, gi);",
                   "    for (int64_t u_ = 0; u_ < m_ && any_; u_++) {", head + "go_a[u_], r_ = r_a[u_];"]
                + ["        " + ln for ln in rest]
                + ["        r_a[u_] = (int8_t)r_;", "    }",
                   "    for (int64_t u_ = 0; u_ < m_; u_++) status[b_ + u_] = r_a[u_] ? r_a[u_] : status[b_ + u_];",
                   "    (void)R; (void)I; (void)gr; (void)gi; (void)img;", "    return 1;", "}"])

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
                    ty = _CTY[s.ty] if any(st.space == "l" and st.name == name for st in S.nodes(self.ir.update, S.Set)) \
                        else self._fold_cty(s)
                    out.append(f"{ty} l_{name} = bk_->v{self.blocked[id(s)]}[u_];")
                else:  # (a copy of a 32-bit local that nothing sets again is one too)
                    ty = "int32_t" if isinstance(s.init, S.Ref) and s.init.space == "l" and \
                        any(ln.startswith(f"int32_t l_{s.init.name} = ") for ln in out) and not any(
                            st.space == "l" and st.name == name for st in S.nodes(self.ir.update, S.Set)) else _CTY[s.ty]
                    out.append(f"{ty} l_{name} = {self.ex(s.init) if s.init is not None else '0'};")
            elif isinstance(s, S.Set) and s.space in ("l", "s") and _lane_safe(s.value):
                ref = self.ref(s.space, s.name)
                out.append(f"{ref} = {pred} ? {self.ex(s.value)} : {ref};")
            elif isinstance(s, S.If) and _lane_safe(s.cond):
                self.conds += 1
                c = f"c{self.conds}_"
                out.append(f"int {c} = ({self.ex(s.cond)}) != 0;")
                if not (self.lane_stmts(s.then, path + [c], out, names)
                        and self.lane_stmts(s.other, path + [f"!{c}"], out, names)):
                    return False
            elif isinstance(s, S.Probe) and self.method == "create" and all(_lane_safe(e) for e in s.pos) \
                    and not names & set(s.targets) and (probe := B.lane_probe(s, self.ir, self.ex, "")) is not None:
                names.update(s.targets)
                out += probe
            elif isinstance(s, S.Exit) and s.kind in ("continue", "stabilize", "die"):
                code = {"continue": 0, "stabilize": 1, "die": 2}[s.kind]
                out.append(f"{{ int e_ = {pred}; r_ = e_ ? {code} : r_; go_ &= !e_; }}")
            else:
                return False
        return True

    def create_lanes(self) -> list[str]:
        """``tl_create_lanes``: the create of up to ``TL_BK`` strands along the grid's last
        iterator as one loop the C compiler vectorizes (as :meth:`lanes`: every statement
        under its strand's predicate, each set a select; probes and ``inside`` tests as
        straight-line code, :func:`.strands_batch.lane_probe`). It returns 0 where an image
        is smaller than its kernel's support (the strands are made one by one). Empty where
        the create does not allow lanes."""
        body, ir = self.ir.create + self.ir.init, self.ir
        if not CREATE_LANES or not ir.iters or len(S.nodes(body, object, most=400)) > 400:
            return []
        lines: list[str] = []
        self.plain, self.conds, self.method = True, 0, "create"
        try:
            ok = self.lane_stmts(body, [], lines, {f"it_{it}" for it in ir.iters})
        finally:
            self.plain = False
        if not ok:
            return []
        small = B.lane_images(body, ir)
        last = len(ir.iters) - 1
        return (["TL_CLATTR static int tl_create_lanes(const int64_t *its, int64_t m_, int64_t n, int64_t b_, "
                 "double *restrict R, int64_t *restrict I, const double *gr, const int64_t *gi, const tl_img *img) {",
                 f"    if ({' || '.join(small)}) return 0;" if small else "",
                 "    for (int64_t u_ = 0; u_ < m_; u_++) {",
                 "        int64_t i = b_ + u_; (void)i; int go_ = 1, r_ = 0; (void)r_;"]
                + [f"        int64_t l_it_{it} = its[{k}]{' + u_' if k == last else ''}; (void)l_it_{it};"
                   for k, it in enumerate(ir.iters)]
                + ["        " + ln for ln in lines]
                + ["    }", "    (void)R; (void)I; (void)gr; (void)gi; (void)img; (void)n;", "    return 1;", "}"])

    def pos_slots(self) -> list[str]:
        return sorted((name for name in self.state if name.startswith("pos.")), key=lambda x: int(x[4:]))

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
        # neighbours in the order of the strands at the step's start (Diderot's, where it permutes them)
        key = "tl_P0[x_] > tl_P0[y_]) - (tl_P0[x_] < tl_P0[y_]" if self.ir.indirect else "x_ > y_) - (x_ < y_"
        d2e = "0.0" + "".join(f" + (p[{a}] - c[{a}]) * (p[{a}] - c[{a}])" for a in range(d))
        return f"static const int64_t tl_posrow[{d}] = {{{rowlist}}};\n" + NEIGHBOURS.format(
            d=d, d2=d2, d2e=d2e, fin=fin, cell=cell, key=key, still=int(self.still), sites=max(1, len(self.kept)),
            vsites=max(1, len(self.sites)), indirect=int(self.ir.indirect),
            allkept=int(len(self.kept) == len([q for q in S.nodes(self.ir, S.Reduce) if q.which == "sphere"])),
            keep="\n        ".join(f"tl_keep_site({k}, n, {self.ex(q.radius)}, status, dead);" for q, k in self._kept_queries()))

    def _kept_queries(self) -> list:
        by_id = {id(q): q for q in S.nodes(self.ir, S.Reduce)}
        return [(by_id[key], k) for key, k in self.kept.items()]

    def snapshot(self) -> str:
        """The copy of the state at a step's start that the step reads (``tl_R0``, ``tl_I0``):
        the rows other strands read and the positions; where no strand moves, the positions
        once per call (they do not change)."""
        read = {r.name for r in S.nodes(self.ir, S.Ref) if r.space == "n"} | set(self.ir.shared)
        pos = set(self.pos_slots())
        out = [f"tl_RP = {'R' if self.still else 'tl_R0'};"] if self.ir.sphere is not None else []
        for name in sorted((read | pos) - (pos if self.still else set()), key=lambda nm: self.state[nm]):
            arr, k = self.state[name]
            ty = "double" if arr == "R" else f"int{self.narrow.get(k, 64)}_t"
            out.append(f"memcpy(tl_{arr}0 + {k} * (size_t)n, {arr} + {k} * (size_t)n, sizeof({ty}) * (size_t)n);")
        return "\n        ".join(out)

    # ---- the program
    def function(self, name: str, method: str, body, per_strand: bool, batched: list | None = None) -> list[str]:
        self.method = method
        args = ("int64_t n, int64_t i, double *restrict R, int64_t *restrict I, const double *gr, "
                "const int64_t *gi, const tl_img *img") if per_strand else \
            "int64_t n, double *restrict R, int64_t *restrict I, const int8_t *status, double *gr, int64_t *gi, const tl_img *img"
        final = {"update": 0, "stabilize": 1, "global": 0, "create": 0}[method]
        decls, self.probe_plan = P.cache_decls(body, self.ir, "    ")  # probes at one point share their work
        self.shared_xi = _shared_points(body)
        # a 3-D family's world point and index position, mapped by tl_ahead (the first family's per image)
        self.reuse = {b.probe.image: ([f"pf[{(b.at_r + a) * B.LANES} + l]" for a in range(b.dim)], [
            f"pf[{(b.at_x + a) * B.LANES} + l]" for a in range(b.dim)]) for b in reversed(batched or []) if not b.lanes}
        if batched:  # the block's probes (strands_batch) preload the caches
            decls, args = B.decls(batched, decls), args + ", const double *restrict pf, int l"
        if method == "update" and self.blocked:
            args += ", tl_bk *bk_"
        lines = [f"static int {name}({args}) {{"] + decls + self.stmts(body, "    ")
        unused = "    (void)n; (void)R; (void)I; (void)gr; (void)gi; (void)img;" + ("" if per_strand else " (void)status;")
        return lines + [unused, f"    return {final};", "}"]

    def source(self) -> str:
        ir = self.ir
        texts = ", ".join('"' + t.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"' for t in ir.strings)
        lines = ["#define TL_BK 256" if self.blocked else "", PRELUDE, P.PRELUDE, f"static const char *const tl_strs[] = {{{texts or '0'}}};",
                 "static const char *const *tl_more; static int64_t tl_nmore;",
                 "void tl_set_strings(const char *const *more, int64_t n) { tl_more = more; tl_nmore = n; }",
                 f"static void tl_pstrid(int64_t k) {{ if (k >= 0 && k < {len(ir.strings)}) tl_pstr(tl_strs[k]); "
                 f"else if (k >= {len(ir.strings)} && k - {len(ir.strings)} < tl_nmore) tl_pstr(tl_more[k - {len(ir.strings)}]); }}"]
        lines += P.kernels(ir)
        if S.nodes((ir.create, ir.init, ir.update, ir.stabilize, ir.global_block), S.Lib, most=0):
            lines.append(LINALG)
        nbr = sum(1 for slot in ir.params if self.state[slot][0] == "R")
        nbi = len(ir.params) - nbr
        lines.append(BIRTHS.format(nbr=max(1, nbr), nbi=max(1, nbi)))
        lines.append("static int64_t *tl_ordp, tl_nl; /* the living strands in Diderot's order (a permuted run) */")
        lines.append("static const int8_t *tl_status; /* the strands' statuses, for numStrands() in a method */")
        lines.append("static int64_t tl_gext[3], tl_gnd; /* the grid's extents (tl_create) */")
        if ir.sphere is not None:
            lines += [self.neighbours()] + ([self.block_fill()] if self.blocked else [])
            drop = " ".join(f"{self.row(arr, k, arr, 'n')}[i] = {self.row(arr, k, f'tl_{arr}0', 'tl_n0')}[i];"
                            for arr, k in (self.state[name] for name in ir.shared
                                           if not (self.still and name.startswith("pos."))))
            lines.append("static void tl_drop(int64_t n, int64_t i, double *R, int64_t *I) "
                         f"{{ if (!tl_R0 || i >= tl_n0) return; {drop} (void)n; (void)R; (void)I; }}")
            lines.append(f"static double tl_grid_h(const double *gr, const int64_t *gi) {{ (void)gr; (void)gi; "
                         f"return {self.ex(ir.sphere)}; }}")
        at = len(lines)
        lines += self.function("tl_create_one", "create", ir.create + ir.init, True)
        lines += self.function("tl_init_one", "create", ir.init, True)
        clanes = self.create_lanes()
        lines += clanes
        glob = ir.global_block is not None
        solo = not (glob or ir.sphere is not None or ir.indirect or ir.births or ir.prints)
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
        lines += self.function("tl_stabilize", "stabilize", ir.stabilize or (), True)
        if ir.global_block is not None:
            lines += self.function("tl_global", "global", ir.global_block, False)
        lines[at:at] = [ln for fill in self.fills.values() for ln in fill]
        # the iterators reach tl_create_one as locals: pass them through a tiny wrapper
        lines = [ln.replace("static int tl_create_one(int64_t n, int64_t i,",
                            "static int tl_create_one(const int64_t *its, int64_t n, int64_t i,") for ln in lines]
        its = "".join(f"    int64_t l_it_{it} = its[{k}]; (void)l_it_{it};\n" for k, it in enumerate(ir.iters))
        src = "\n".join(lines).replace("static int tl_create_one(const int64_t *its, int64_t n, int64_t i, "
                                        "double *restrict R, int64_t *restrict I, const double *gr, "
                                        "const int64_t *gi, const tl_img *img) {\n",
                                        "static int tl_create_one(const int64_t *its, int64_t n, int64_t i, "
                                        "double *restrict R, int64_t *restrict I, const double *gr, "
                                        "const int64_t *gi, const tl_img *img) {\n" + its, 1)
        # a solo strand's update that reads no other strand's state steps on copies of its own
        own = (self.nr, self.ni, self.cell) if B.OWN and solo and not any(b.lanes for b in batched) \
            and not S.nodes(ir.update, S.Reduce, most=0) else None  # (lanes: strands_batch.BLOCK)
        who = "1, 0, Rl, Il" if own else "n, i, R, I"
        return src + DRIVER.format(nd=nd, has_global=int(glob), comm=int(ir.sphere is not None), indirect=int(ir.indirect),
                                   solo=int(solo), batch=int(bool(batched)), bks=len(self.blocked), lanes=int(bool(lanes)),
                                   bkarg=", &bk_" if self.blocked else "",
                                   block=B.block_steps(batched, own) if batched else "",
                                   steps_exact=B.STEPS_EXACT if own else "#define TL_STEPS\n",
                                   solo_steps=" " * 20 + B.own_steps(own, "", f"tl_update({who}, gr, gi, img)", " " * 20),
                                   clanes=int(bool(clanes)), nr=max(self.nr, 1), ni=max(self.ni, 1), snap=self.snapshot() if ir.sphere is not None else "",
                                   call_global="tl_global(n, R, I, status, gr, gi, img)" if glob else "0")


DRIVER = r"""
#define TL_HAS_GLOBAL {has_global}
#define TL_COMM {comm}
#define TL_INDIRECT {indirect}
#define TL_SOLO {solo}
#define TL_BATCH {batch}
{steps_exact}#define TL_TILE 8
#define TL_BKS {bks}
#define TL_LANES {lanes}
#define TL_CLANES {clanes}
static int64_t tl_cols;  /* the grid's last extent: the tiles' width (TL_SOLO) */
void tl_create(int64_t n, int nd, const int64_t *lo, const int64_t *ext, double *R, int64_t *I, int8_t *status,
               const double *gr, const int64_t *gi, const tl_img *img, int threads) {{
    int64_t cols = tl_cols = ext[nd - 1];
    tl_gnd = nd <= 3 ? nd : 0;
    for (int k = 0; k < nd && k < 3; k++) tl_gext[k] = ext[k];
    if (cols <= 0) return;
    /* a row of the grid at a time: the other iterators divided out once per row */
    #pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t row = 0; row < n / cols; row++) {{
        int64_t its[{nd}], rem = row;
        for (int k = nd - 2; k >= 0; k--) {{ its[k] = lo[k] + rem % ext[k]; rem /= ext[k]; }}
#if TL_CLANES
        if (cols >= 8) {{  /* TL_BK strands in lanes (rows of a few strands: one by one) */
            for (int64_t c0 = 0; c0 < cols; c0 += TL_BK) {{
                int64_t m = cols - c0 < TL_BK ? cols - c0 : TL_BK;
                its[nd - 1] = lo[nd - 1] + c0;
                if (!tl_create_lanes(its, m, n, row * cols + c0, R, I, gr, gi, img))
                    for (int64_t c = c0; c < c0 + m; c++) {{ its[nd - 1] = lo[nd - 1] + c; tl_create_one(its, n, row * cols + c, R, I, gr, gi, img); }}
                for (int64_t c = c0; c < c0 + m; c++) status[row * cols + c] = 0;
            }}
            continue;
        }}
#endif
        for (int64_t c = 0; c < cols; c++) {{
            int64_t i = row * cols + c;
            its[nd - 1] = lo[nd - 1] + c;
            tl_create_one(its, n, i, R, I, gr, gi, img);
            status[i] = 0;
        }}
    }}
}}

void tl_init_range(int64_t n, int64_t from, double *R, int64_t *I, int8_t *status, const double *gr,
                   const int64_t *gi, const tl_img *img, int threads) {{
    #pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t i = from; i < n; i++) {{ tl_init_one(n, i, R, I, gr, gi, img); status[i] = 0; }}
}}

static int64_t tl_ndead;  /* the dead strands, counted with the active ones */
int64_t tl_finish(int64_t n, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi, const tl_img *img,
                  int threads, int64_t *err, int64_t *ord, int64_t *nlive) {{
    tl_ordp = ord; tl_nl = *nlive; tl_status = status;
    int g = {call_global};
    if (g) {{
        #pragma omp parallel for schedule(dynamic, 64) num_threads(threads) if (threads > 1)
        for (int64_t q = 0; q < (TL_INDIRECT ? *nlive : n); q++) {{
            int64_t i = TL_INDIRECT ? ord[q] : q;
            if (status[i] != 0) continue;
#if TL_COMM
            if (g == 1) tl_drop(n, i, R, I);  /* the shared variables as the step found them */
#endif
            status[i] = (int8_t)(g == 1 ? tl_stabilize(n, i, R, I, gr, gi, img) : 2);
        }}
#if TL_INDIRECT
        int64_t kept = 0;  /* the dead leave the order; the others keep theirs */
        for (int64_t q = 0; q < *nlive; q++) if (status[ord[q]] != 2) ord[kept++] = ord[q];
        *nlive = kept;
#endif
    }}
    int64_t active, dead;
    tl_count(status, n, &active, &dead);
    tl_ndead = dead;  /* (the next step's start reads it: one pass over the statuses) */
    *err = tl_err_flag;
    return active;
}}

/* the update of the strands b_ .. b_ + TL_BK - 1 (a function: the loop's pointers are its own, whether
   OpenMP runs it or, at one thread, a plain loop) */
static void tl_block(int64_t b_, int64_t n, double *R, int64_t *I, int8_t *status, const double *gr,
                            const int64_t *gi, const tl_img *img) {{
#if TL_BKS
    tl_bk bk_; bk_.i0 = b_; bk_.filled = 0;  /* the blocked queries' folds, made where first read */
#endif
#if TL_LANES
    if (tl_lanes(b_, n, R, I, status, gr, gi, img, &bk_)) return;  /* the block in lanes */
#endif
    for (int64_t i = b_; i < b_ + TL_BK && i < n; i++) {{
        if (status[i] != 0) continue;
        int r = tl_update(n, i, R, I, gr, gi, img{bkarg});
        if (r == 1) r = tl_stabilize(n, i, R, I, gr, gi, img);
        if (r) status[i] = (int8_t)r;
    }}
}}

TL_STEPS int64_t tl_steps(int64_t n, int64_t k, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi,
                 const tl_img *img, int threads, int64_t *err, int64_t *active_out, int64_t *pending,
                 int64_t *ord, int64_t *nlive, int64_t *rank) {{
    int64_t s = 0, active = 0;
    tl_err_flag = 0;
    tl_nb = 0;  /* births left by a step that failed (the caller raised) are dropped */
    tl_status = status;
    *pending = 0;
    int64_t dead0 = 0;
    tl_count(status, n, &active, &dead0);
    tl_ndead = dead0;
#if TL_COMM
    if (tl_n0 != n || !tl_R0) {{  /* the snapshot's buffers, kept from call to call while the count stays */
        free(tl_R0); free(tl_I0); free(tl_S0); free(tl_P0); tl_n0 = n;
        tl_R0 = malloc(sizeof(double) * {nr} * (size_t)n); tl_I0 = malloc(sizeof(int64_t) * {ni} * (size_t)n);
        tl_S0 = malloc((size_t)n); tl_P0 = malloc(sizeof(int64_t) * (size_t)n);
        if (!tl_R0 || !tl_I0 || !tl_S0 || !tl_P0) {{
            free(tl_R0); free(tl_I0); free(tl_S0); free(tl_P0); tl_R0 = 0; tl_I0 = 0; tl_S0 = 0; tl_P0 = 0; tl_n0 = 0;
            *err = 3; *active_out = active; return 0;
        }}
    }}
#endif
    while (s < k && active > 0) {{
#if TL_COMM
        {snap}
        memcpy(tl_S0, status, (size_t)n);
#if TL_INDIRECT
        for (int64_t q = 0; q < *nlive; q++) tl_P0[ord[q]] = q;
#endif
        tl_nb_step(n, tl_ndead, gr, gi, status);
#endif
#if TL_INDIRECT
        {{
            /* Diderot's permuted order: positions [stable | active]; the active ones update in
               position order; one that stabilizes swaps with the first active position, one that
               dies with the last living one (which updates next, in its place).  With threads the
               updates run first (rank[] holds their outcome), then the same walk reorders. */
            int64_t nl = *nlive, ns = 0;
            for (int64_t q = 0; q < nl; q++) ns += status[ord[q]] == 1;
            if (threads > 1) {{
                #pragma omp parallel for schedule(dynamic, 64) num_threads(threads)
                for (int64_t q = ns; q < nl; q++) {{
                    int64_t i = ord[q];
                    int r = tl_update(n, i, R, I, gr, gi, img);
                    if (r == 1) r = tl_stabilize(n, i, R, I, gr, gi, img);
                    rank[i] = r;
                }}
            }}
            int64_t ix = ns, st = 0, dy = 0, visit = 0;
            while (ix < nl - dy) {{
                int64_t i = ord[ix];
                int r;
                if (threads > 1) r = (int)rank[i];
                else {{ r = tl_update(n, i, R, I, gr, gi, img); if (r == 1) r = tl_stabilize(n, i, R, I, gr, gi, img); }}
                rank[i] = visit++;
                if (r) status[i] = (int8_t)r;
                if (r == 1) {{ int64_t jx = ns + st; ord[ix] = ord[jx]; ord[jx] = i; st++; ix++; }}
                else if (r == 2) {{ dy++; int64_t jx = nl - dy; ord[ix] = ord[jx]; ord[jx] = i; }}
                else ix++;
            }}
            *nlive = nl - dy;
        }}
#elif TL_SOLO
        /* no strand sees another's state or the step count (no global block, queries, new,
           print): the super-steps of one strand do not depend on the others', so each runs
           its (up to k - s) steps at once, its state in cache; the steps taken are the most
           any strand took, as the bulk-synchronous loop would count them */
        /* in tiles of the grid (its last iterator across, the others down; TL_TILE^2 strands):
           neighbouring strands probe neighbouring samples (rays, pixels), so a tile's strands
           find most of theirs in cache, where row by row the row above had left it */
        int64_t most = 0, cols = tl_cols > 0 ? tl_cols : n, rows = (n + cols - 1) / cols;
        int64_t ntc = (cols + TL_TILE - 1) / TL_TILE, ntr = (rows + TL_TILE - 1) / TL_TILE;
        #pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1) reduction(max: most)
        for (int64_t tt = 0; tt < ntr * ntc; tt++) {{
            int64_t r0 = (tt / ntc) * TL_TILE, c0 = (tt % ntc) * TL_TILE;
            for (int64_t row = r0; row < r0 + TL_TILE && row < rows; row++)
#if TL_BATCH
            {{{block}
            }}
#else
                for (int64_t i = row * cols + c0; i < row * cols + c0 + TL_TILE && i < (row + 1) * cols && i < n; i++) {{
                    int64_t u = 0;
{solo_steps}                    if (u > most) most = u;
                }}
#endif
        }}
        s += most;
        active = tl_finish(n, R, I, status, gr, gi, img, threads, err, ord, nlive);
        break;
#else
        if (threads > 1) {{
            #pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
            for (int64_t b_ = 0; b_ < n; b_ += TL_BK) tl_block(b_, n, R, I, status, gr, gi, img);
        }} else for (int64_t b_ = 0; b_ < n; b_ += TL_BK) tl_block(b_, n, R, I, status, gr, gi, img);
#endif
        if (tl_nb > 0) {{ *pending = 1; break; }}  /* the caller adds the new strands, then calls tl_finish */
        s++;
        active = tl_finish(n, R, I, status, gr, gi, img, threads, err, ord, nlive);
        if (tl_err_flag) break;
    }}
    *err = tl_err_flag;
    *active_out = active;
    return s;
}}
"""

BIRTHS = r"""
static int64_t tl_nb, tl_bcap, tl_bctr, *tl_bpar, *tl_bseq, *tl_bi; static double *tl_br;
/* the most strands new may make in one super-step: what the memory budget leaves (the caller's) */
static int64_t tl_bmax = INT64_MAX;
void tl_set_bmax(int64_t m) {{ tl_bmax = m; }}
static void tl_birth(int64_t i, const double *br, const int64_t *bi) {{
    #pragma omp critical (tl_births)
    {{
        if (tl_nb >= tl_bmax) tl_err_flag = 5;  /* refused now, not after the step: the buffer stays bounded */
        else if (tl_nb >= tl_bcap) {{
            int64_t cap = 2 * tl_bcap + 64;
            int64_t *p = realloc(tl_bpar, sizeof(int64_t) * (size_t)cap); if (p) tl_bpar = p;
            int64_t *q = realloc(tl_bseq, sizeof(int64_t) * (size_t)cap); if (q) tl_bseq = q;
            double *r = realloc(tl_br, sizeof(double) * {nbr} * (size_t)cap); if (r) tl_br = r;
            int64_t *t = realloc(tl_bi, sizeof(int64_t) * {nbi} * (size_t)cap); if (t) tl_bi = t;
            if (p && q && r && t) tl_bcap = cap; else tl_err_flag = 3;
        }}
        if (tl_nb < tl_bcap && tl_nb < tl_bmax) {{
            tl_bpar[tl_nb] = i; tl_bseq[tl_nb] = tl_bctr++;
            memcpy(tl_br + tl_nb * {nbr}, br, sizeof(double) * {nbr}); memcpy(tl_bi + tl_nb * {nbi}, bi, sizeof(int64_t) * {nbi});
            tl_nb++;
        }}
    }}
}}
int64_t tl_nbirths(void) {{ return tl_nb; }}
void tl_take_births(int64_t *par, int64_t *seq, double *br, int64_t *bi) {{
    memcpy(par, tl_bpar, sizeof(int64_t) * (size_t)tl_nb); memcpy(seq, tl_bseq, sizeof(int64_t) * (size_t)tl_nb);
    memcpy(br, tl_br, sizeof(double) * {nbr} * (size_t)tl_nb); memcpy(bi, tl_bi, sizeof(int64_t) * {nbi} * (size_t)tl_nb);
    tl_nb = 0;
}}
"""

NEIGHBOURS = r"""
static double *tl_R0; static int64_t *tl_I0; static int8_t *tl_S0;
/* the positions the step reads: the snapshot's, or the state's own where no strand moves (TL_STILL) */
static const double *tl_RP;
static double tl_grid_h(const double *gr, const int64_t *gi);
static double *tl_gpos;
static int64_t *tl_gstart, *tl_gorder, *tl_gcell, tl_gcap, tl_gocap, tl_gdim[3] = {{1, 1, 1}}, tl_gstride[3]; static double tl_gmin[3], tl_gh; static int tl_gok;
static __thread int64_t *tl_nbuf; static __thread int64_t tl_ncap;
/* room for one more neighbour in the thread's buffer (*buf, *cap: the caller's copies of tl_nbuf, tl_ncap) */
static int tl_nb_grow(int64_t **buf, int64_t *cap) {{
    int64_t nc = 2 * *cap + 64; int64_t *nb = realloc(*buf, sizeof(int64_t) * (size_t)nc);
    if (!nb) {{ tl_err_flag = 3; return 0; }}
    *buf = tl_nbuf = nb; *cap = tl_ncap = nc;
    return 1;
}}
static int64_t *tl_P0, tl_n0;
static int tl_cmp64(const void *a, const void *b) {{ int64_t x_ = *(const int64_t *)a, y_ = *(const int64_t *)b; return ({key}); }}
/* the neighbours in the order of their keys */
static void tl_nb_sort(int64_t *buf, int64_t len) {{
    if (len > 32) qsort(buf, (size_t)len, sizeof(int64_t), tl_cmp64);
    else if (len > 1) {{  /* a few neighbours (the usual case): each one's place by counting the smaller keys (distinct), no branch */
        int64_t t_[32], k; memcpy(t_, buf, sizeof(int64_t) * (size_t)len);
        for (int64_t p = 0; p < len; p++) {{ k = 0; for (int64_t q = 0; q < len; q++) k += tl_cmp64(&t_[q], &t_[p]) < 0; buf[k] = t_[p]; }}
    }}
}}
static void tl_nb_build(int64_t n, double h) {{
    int dense = h == -1.0; tl_gok = 0;  /* the radius depends on the strand: a cell size from the density */
    if (!dense && (!(h > 0) || !isfinite(h))) return;
    double mn[3] = {{0, 0, 0}}, mx[3] = {{0, 0, 0}}; int64_t cnt = 0;
    for (int64_t j = 0; j < n; j++) if (tl_S0[j] != 2 && ({fin})) {{
        for (int a = 0; a < {d}; a++) {{
            double c = tl_RP[tl_posrow[a] * n + j]; if (!cnt || c < mn[a]) mn[a] = c; if (!cnt || c > mx[a]) mx[a] = c;
        }}
        cnt++;
    }}
    if (dense) {{
        double vol = 1; int k = 0;
        for (int a = 0; a < {d}; a++) if (mx[a] > mn[a]) {{ vol *= mx[a] - mn[a]; k++; }}
        h = cnt > 0 && k > 0 ? pow(vol / (double)cnt, 1.0 / k) : 1.0;
        if (!(h > 0) || !isfinite(h)) h = 1.0;
    }}
    /* cells of the query radius (a query visits 2-3 per axis), coarser only where the bounding box would hold
       more than 16 cells a strand (strands on a surface leave most cells empty: the box's count, not theirs) */
    double total;
    for (;; h *= 2) {{
        total = 1;
        for (int a = 0; a < {d}; a++) total *= floor((mx[a] - mn[a]) / h) + 1;
        if (total <= 16.0 * (double)cnt + 4096) break;
    }}
    for (int a = 0; a < 3; a++) {{ tl_gdim[a] = a < {d} ? (int64_t)(floor((mx[a] - mn[a]) / h) + 1) : 1; tl_gmin[a] = mn[a]; }}
    tl_gstride[2] = 1; tl_gstride[1] = tl_gdim[2]; tl_gstride[0] = tl_gdim[1] * tl_gdim[2]; tl_gh = h;
    int64_t cells = (int64_t)total;
    /* the grid's arrays kept from step to step (new ones cost page faults); the order and positions padded by 4 zeros */
    if (cells + 1 > tl_gcap) {{ free(tl_gstart); tl_gstart = malloc(sizeof(int64_t) * (size_t)(cells + 1)); tl_gcap = tl_gstart ? cells + 1 : 0; }}
    if (n + 4 > tl_gocap) {{
        free(tl_gorder); free(tl_gpos); free(tl_gcell); tl_gorder = malloc(sizeof(int64_t) * (size_t)(n + 4));
        tl_gpos = malloc(sizeof(double) * {d} * (size_t)(n + 4)); tl_gcell = malloc(sizeof(int64_t) * (size_t)(n + 1));
        tl_gocap = tl_gorder && tl_gpos && tl_gcell ? n + 4 : 0; }}
    if (!tl_gcap || !tl_gocap) return;  /* (the search then tests every strand) */
    memset(tl_gstart, 0, sizeof(int64_t) * (size_t)(cells + 1));
    for (int64_t j = 0; j < n; j++) if ((tl_gcell[j] = tl_S0[j] != 2 && ({fin}) ? {cell} : -1) >= 0) tl_gstart[tl_gcell[j] + 1]++;
    for (int64_t c = 0; c < cells; c++) tl_gstart[c + 1] += tl_gstart[c];
    /* the strands in cell order, each cell's ascending: a cell's start moves to its end, then back */
    for (int64_t j = 0; j < n; j++) if (tl_gcell[j] >= 0) tl_gorder[tl_gstart[tl_gcell[j]]++] = j;
    memmove(tl_gstart + 1, tl_gstart, sizeof(int64_t) * (size_t)cells); tl_gstart[0] = 0;
    /* the positions in the grid's order: a query reads its candidates' one after another */
    for (int64_t m = 0; m < cnt; m++) for (int a = 0; a < {d}; a++) tl_gpos[{d} * m + a] = tl_RP[tl_posrow[a] * n + tl_gorder[m]];
    memset(tl_gorder + cnt, 0, 4 * sizeof(int64_t)); memset(tl_gpos + {d} * cnt, 0, {d} * 4 * sizeof(double));
    tl_gok = 1;
}}
/* Diderot's test, the squared distance summed in single precision strictly below r2, decided
   in double first: the three roundings to float move the sum by less than 1e-6 of it, so a
   sum in double farther than that from r2 (within float's normal range) decides alone */
static inline int tl_near(const double *p, const double *c, double r2, int fast) {{
    double e_ = {d2e};
    return (e_ < 0.999999 * r2 || e_ > 1.000001 * r2) && fast ? e_ < r2 : ({d2}) < r2;
}}
static int64_t tl_nb_search(int64_t n, int64_t i, const double *c, double r, const int64_t **out) {{
    int64_t len = 0, *buf = tl_nbuf, cap = tl_ncap;
    *out = buf;
    for (int a = 0; a < {d}; a++) if (!isfinite(c[a])) return 0;
    if (!(r >= 0)) return 0;
    double r2 = r * r;
    int fast = r2 > 1e-30 && r2 < 1e30;
    if (!tl_gok) {{
        for (int64_t j = 0; j < n; j++) {{
            double p[3] = {{0, 0, 0}};
            for (int a = 0; a < {d}; a++) p[a] = tl_RP[tl_posrow[a] * n + j];
            if (j != i && tl_S0[j] != 2 && tl_near(p, c, r2, fast) && (len < cap || tl_nb_grow(&buf, &cap))) buf[len++] = j;
            else if (tl_err_flag == 3) return 0;
        }}
    }} else {{
        int64_t lo[3] = {{0, 0, 0}}, hi[3] = {{0, 0, 0}};
        for (int a = 0; a < {d}; a++) {{
            double rr = r * (1 + 1e-6) + 1e-300, l = floor((c[a] - rr - tl_gmin[a]) / tl_gh), h = floor((c[a] + rr - tl_gmin[a]) / tl_gh);
            if (h < 0 || l > (double)(tl_gdim[a] - 1)) return 0;
            lo[a] = l < 0 ? 0 : (int64_t)l; hi[a] = h > (double)(tl_gdim[a] - 1) ? tl_gdim[a] - 1 : (int64_t)h;
        }}
        const int64_t *gs = tl_gstart, *go = tl_gorder;
        double lo2 = 0.999999 * r2, hi2 = 1.000001 * r2;
        /* the last axis's cells are consecutive: a run of candidates a column of cells, tested 4 at a time without
           a branch on the outcome (the order and positions padded); tl_near where the sum is too close to decide */
        for (int64_t x = lo[0]; x <= ({d} > 1 ? hi[0] : lo[0]); x++) for (int64_t y = lo[1]; y <= ({d} > 2 ? hi[1] : lo[1]); y++) {{
            int64_t cl = ({d} > 1 ? x * tl_gstride[0] : 0) + ({d} > 2 ? y * tl_gstride[1] : 0);
            int64_t m0 = gs[cl + lo[{d} - 1]], m1 = gs[cl + hi[{d} - 1] + 1];
            while (len + (m1 - m0) + 4 > cap) if (!tl_nb_grow(&buf, &cap)) return 0;
            for (int64_t m = m0; m < m1; m += 4) {{
                int amb = !fast, ok[4]; int64_t jj[4];
                for (int u = 0; u < 4; u++) {{
                    const double *p = tl_gpos + {d} * (m + u); double e_ = {d2e};
                    ok[u] = (e_ < r2) & (m + u < m1); amb |= (e_ >= lo2) & (e_ <= hi2) & (m + u < m1); jj[u] = go[m + u];
                }}
                if (amb) for (int u = 0; u < 4; u++) ok[u] = m + u < m1 && tl_near(tl_gpos + {d} * (m + u), c, r2, fast);
                for (int u = 0; u < 4; u++) {{ buf[len] = jj[u]; len += ok[u] & (jj[u] != i); }}
            }}
        }}
    }}
    *out = buf;
    tl_nb_sort(buf, len);
    return len;
}}
#define TL_STILL {still}
#define TL_SITES {sites}
#define TL_ALLKEPT {allkept}
#if TL_STILL
/* No strand moves after its creation (no statement sets pos): while no strand is born or
   dies, a query around a strand's pos with a radius that only constants and inputs make
   finds the same neighbours every super-step.  Those answers are kept, found once at the
   first step (and the grid with them): each as a pattern, its neighbours' offsets from the
   strand (j - i), which strands on a regular grid share (a handful of patterns in all), and
   each strand's pattern number.  A birth or a death, or another run, finds them again; a
   run whose strands keep dying stops keeping them after a few times. */
static int32_t *tl_kpid[TL_SITES]; static int64_t *tl_kstart[TL_SITES], *tl_koff[TL_SITES];
/* each block of TL_BK strands' runs of one pattern (tl_kbs: the block's first run), kept with the
   patterns; full: the run's pattern read across the whole block stays within the strands */
typedef struct {{ int32_t p; int16_t t, e; int8_t full; }} tl_kseg;
static int64_t *tl_kbs[TL_SITES]; static tl_kseg *tl_krn[TL_SITES];
static int64_t tl_kn = -1, tl_kdead = -1, tl_krun = -1, tl_run, tl_kresets, tl_kprev = -1;
static int tl_gbuilt, tl_kall; static double tl_ghw;  /* the spatial grid, made only where some strand searches */
static void tl_grid_need(int64_t n) {{ if (!tl_gbuilt) {{ tl_gbuilt = 1; tl_nb_build(n, tl_ghw); }} }}
void tl_set_run(int64_t run) {{ tl_run = run; }}
/* prev: the run whose strands this run's creation placed where it places them (the same grid and
   globals, positions made of nothing else: Run.prev), or -1 */
void tl_set_prev(int64_t prev) {{ tl_kprev = prev; }}
/* a site's arrays of one strand count (pid, start, bs, rn), kept from call to call where large enough:
   new ones are page faults of every page written, each call */
static void *tl_kpool[TL_SITES][4]; static size_t tl_kpsz[TL_SITES][4];
static void *tl_kget(int k, int s, size_t bytes) {{
    if (tl_kpsz[k][s] < bytes) {{ free(tl_kpool[k][s]); tl_kpool[k][s] = malloc(bytes); tl_kpsz[k][s] = tl_kpool[k][s] ? bytes : 0; }}
    return tl_kpool[k][s];
}}
static void tl_keep_free(void) {{
    for (int k = 0; k < TL_SITES; k++) {{
        free(tl_koff[k]);
        tl_kpid[k] = 0; tl_kstart[k] = 0; tl_koff[k] = 0; tl_kbs[k] = 0; tl_krn[k] = 0;
    }}
}}
static uint64_t tl_khash(const int64_t *o, int64_t len) {{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)len;
    for (int64_t k = 0; k < len; k++) h = (h ^ (uint64_t)o[k]) * 1099511628211ULL;
    return h ^ (h >> 29);
}}
/* Strands on a lattice: every position an affine map of the grid's iterators along
   orthogonal axes, within dev (checked on every strand, no birth since the grid was made).
   A strand within r of another is then at most R = r (1 + 1e-6) + 2 sqrt(d) dev away on the
   lattice, so its neighbours are among the grid offsets of a small box (tl_lbd: per axis,
   tl_lbo: as j - i, in ascending order), which the caller tests one by one: no spatial grid. */
#define TL_LBOX 343
static int64_t tl_lbd[TL_LBOX][3], tl_lbo[TL_LBOX], tl_lK[3]; static int tl_lnb, tl_lall; static char tl_lsure[TL_LBOX];
static int tl_lattice(int64_t n, double r) {{
    int nd = (int)tl_gnd, d = {d};
    int64_t st[3] = {{0, 0, 0}}, tot = 1, it[3] = {{0, 0, 0}}, K[3] = {{0, 0, 0}};
    if (nd < 1 || nd > d || !(r >= 0) || !isfinite(r) || n < 2) return 0;
    for (int a = nd - 1; a >= 0; a--) {{ st[a] = tot; tot *= tl_gext[a]; }}
    if (tot != n) return 0;
    double o[3], u[3][3] = {{{{0}}}}, len[3], dev = 0, scale = r;
    for (int c = 0; c < d; c++) o[c] = tl_RP[tl_posrow[c] * n];
    for (int a = 0; a < nd; a++) for (int c = 0; c < d; c++) if (tl_gext[a] > 1) u[a][c] = tl_RP[tl_posrow[c] * n + st[a]] - o[c];
    /* a row of the grid at a time (its last axis), 8 lanes across it: the largest deviation and
       |p|, none of them not finite */
    int L = nd - 1;
    for (int64_t row = 0, cols = tl_gext[L]; row < n / cols; row++) {{
        double ev[8] = {{0}}, sv[8] = {{0}}; int64_t bv[8] = {{0}};
        for (int c = 0; c < d; c++) {{
            double qc = o[c], uc = u[L][c];
            for (int a = 0; a < L; a++) qc += (double)it[a] * u[a][c];
            const double *P = tl_RP + tl_posrow[c] * n + row * cols;
            int64_t c0 = 0;
            for (; c0 + 8 <= cols; c0 += 8) {{
                _Pragma("omp simd")
                for (int l = 0; l < 8; l++) {{
                    double p = P[c0 + l], e = fabs(p - (qc + (double)(c0 + l) * uc)), ap = fabs(p);
                    bv[l] |= !(e < INFINITY); ev[l] = e > ev[l] ? e : ev[l]; sv[l] = ap > sv[l] ? ap : sv[l];
                }}
            }}
            for (; c0 < cols; c0++) {{
                double p = P[c0], e = fabs(p - (qc + (double)c0 * uc)), ap = fabs(p);
                bv[0] |= !(e < INFINITY); ev[0] = e > ev[0] ? e : ev[0]; sv[0] = ap > sv[0] ? ap : sv[0];
            }}
        }}
        for (int l = 0; l < 8; l++) {{ if (bv[l]) return 0; if (ev[l] > dev) dev = ev[l]; if (sv[l] > scale) scale = sv[l]; }}
        for (int a = L - 1; a >= 0 && ++it[a] == tl_gext[a]; a--) it[a] = 0;
    }}
    dev += 1e-12 * scale;
    if (dev > 1e-6 * scale) return 0;
    double R = r * (1 + 1e-6) + 2 * sqrt((double)d) * dev;
    int64_t count = 1;
    for (int a = 0; a < nd; a++) {{
        len[a] = 0;
        for (int c = 0; c < d; c++) len[a] += u[a][c] * u[a][c];
        len[a] = sqrt(len[a]);
        for (int b = 0; b < a; b++) {{
            double dot = 0;
            for (int c = 0; c < d; c++) dot += u[a][c] * u[b][c];
            if (!(fabs(dot) <= 1e-12 * len[a] * len[b])) return 0;
        }}
        if (tl_gext[a] > 1 && !(len[a] > 2 * dev)) return 0;
        K[a] = tl_gext[a] > 1 ? (int64_t)fmin(floor(R / len[a]), (double)(tl_gext[a] - 1)) : 0;
        count *= 2 * K[a] + 1;
        if (count > TL_LBOX) return 0;
    }}
    tl_lnb = 0; tl_lall = 1;
    for (int a = 0; a < 3; a++) tl_lK[a] = K[a];
    for (int64_t b = 0; b < count; b++) {{  /* the box in row-major order: ascending j - i */
        int64_t rem = b, dd[3] = {{0, 0, 0}}, ofs = 0; double s2 = 0; int zero = 1;
        for (int a = nd - 1; a >= 0; a--) {{
            dd[a] = rem % (2 * K[a] + 1) - K[a]; rem /= 2 * K[a] + 1;
            s2 += (double)dd[a] * len[a] * (double)dd[a] * len[a]; ofs += dd[a] * st[a]; zero = zero && dd[a] == 0;
        }}
        if (zero || s2 > R * R * (1 + 1e-6)) continue;
        for (int a = 0; a < 3; a++) tl_lbd[tl_lnb][a] = dd[a];
        /* sure: nearer than r by more than the test's roundings wherever the strands lie */
        double far = sqrt(s2) * (1 + 1e-12) + 2 * sqrt((double)d) * dev;
        tl_lsure[tl_lnb] = r * r > 1e-30 && r * r < 1e30 && far * far < r * r * (1 - 1e-5);
        tl_lall = tl_lall && tl_lsure[tl_lnb];
        tl_lbo[tl_lnb++] = ofs;
    }}
    return 1;
}}
/* the patterns of query site k (radius r) for the active strands; nothing kept where they
   would take more than 64 offsets a strand or memory runs out */
static void tl_keep_site(int k, int64_t n, double r, const int8_t *status, int64_t dead) {{
    int64_t npat = 0, nofs = 0, cap = 1024, hcap = 1024, limit = 64 * n + 4096, err0 = tl_err_flag;
    int64_t it[3] = {{0, 0, 0}};
    double r2 = r * r; int fast = r2 > 1e-30 && r2 < 1e30, lat = tl_lattice(n, r);
    if (!lat) tl_grid_need(n);
    int32_t *pid = tl_kget(k, 0, sizeof(int32_t) * (size_t)(n + 1)), *tab = malloc(sizeof(int32_t) * (size_t)hcap);
    int64_t *start = tl_kget(k, 1, sizeof(int64_t) * (size_t)(n + 2)), *off = malloc(sizeof(int64_t) * (size_t)cap);
    int ok = pid && tab && start && off;
    int32_t last = -1;
    for (int64_t h = 0; ok && h < hcap; h++) tab[h] = -1;
    if (ok) start[0] = 0;
    /* no strand dead and every offset of the box surely near: a strand the box fits around
       has them all (pattern 0) */
    int inner = ok && lat && tl_lall && dead == 0 && tl_lnb <= cap;
    if (inner) {{
        memcpy(off, tl_lbo, sizeof(int64_t) * (size_t)tl_lnb);
        tab[tl_khash(off, tl_lnb) & (uint64_t)(hcap - 1)] = 0; nofs = tl_lnb; start[npat = 1] = nofs;
    }}
    for (int64_t i = 0; ok && i < n; i++) {{
        int L = (int)tl_gnd - 1;
        if (inner && it[L] == tl_lK[L] && tl_gext[L] - 2 * tl_lK[L] > 1) {{  /* a row's inner strands at once */
            int fo = 1;
            for (int a = 0; a < L && fo; a++) fo = it[a] >= tl_lK[a] && it[a] < tl_gext[a] - tl_lK[a];
            int64_t m = fo ? tl_gext[L] - 2 * tl_lK[L] - 1 : 0;  /* (the last one: below) */
            for (int64_t q = 0; q < m; q++) pid[i + q] = status[i + q] == 0 ? 0 : -1;
            i += m; it[L] += m;
        }}
        pid[i] = -1;
        int fits = inner;
        for (int a = 0; a < (int)tl_gnd && fits; a++) fits = it[a] >= tl_lK[a] && it[a] < tl_gext[a] - tl_lK[a];
        if (status[i] != 0 || fits) {{
            if (fits && status[i] == 0) pid[i] = 0;
            for (int a = (int)tl_gnd - 1; lat && a >= 0 && ++it[a] == tl_gext[a]; a--) it[a] = 0;
            continue;
        }}
        double c[3] = {{0, 0, 0}};
        for (int a = 0; a < {d}; a++) c[a] = tl_RP[tl_posrow[a] * n + i];
        const int64_t *nb = 0; int64_t len = lat ? tl_lnb : tl_nb_search(n, i, c, r, &nb);  /* (at most, on a lattice) */
        if (tl_err_flag || nofs + len > limit) {{ ok = 0; break; }}
        if (nofs + len > cap) {{
            int64_t nc = 2 * (nofs + len); int64_t *no = realloc(off, sizeof(int64_t) * (size_t)nc);
            if (!no) {{ ok = 0; break; }}
            off = no; cap = nc;
        }}
        int64_t *o = off + nofs;  /* the candidate pattern, where a new one would go */
        if (lat) {{  /* the box's offsets in the grid (ascending j), each tested as the search would */
            len = 0;
            for (int b = 0; b < tl_lnb; b++) {{
                int in = 1;
                for (int a = 0; a < (int)tl_gnd; a++) in = in && (uint64_t)(it[a] + tl_lbd[b][a]) < (uint64_t)tl_gext[a];
                int64_t j = i + tl_lbo[b];
                if (!in || tl_S0[j] == 2) continue;
                double q[3] = {{0, 0, 0}};
                for (int a = 0; a < {d} && !tl_lsure[b]; a++) q[a] = tl_RP[tl_posrow[a] * n + j];
                if (tl_lsure[b] || tl_near(q, c, r2, fast)) o[len++] = tl_lbo[b];
            }}
            for (int a = (int)tl_gnd - 1; a >= 0 && ++it[a] == tl_gext[a]; a--) it[a] = 0;
        }} else for (int64_t q = 0; q < len; q++) o[q] = nb[q] - i;
        if (last >= 0 && start[last + 1] - start[last] == len) {{  /* the previous strand's pattern (a row of a grid shares it) */
            const int64_t *pl = off + start[last]; int64_t q = 0;
            while (q < len && pl[q] == o[q]) q++;
            if (q == len) {{ pid[i] = (int32_t)last; continue; }}
        }}
        uint64_t h = tl_khash(o, len) & (uint64_t)(hcap - 1);
        for (;; h = (h + 1) & (uint64_t)(hcap - 1)) {{
            int32_t p = tab[h];
            if (p < 0 || (start[p + 1] - start[p] == len && !memcmp(off + start[p], o, sizeof(int64_t) * (size_t)len))) break;
        }}
        if (tab[h] >= 0) {{ pid[i] = last = tab[h]; continue; }}
        tab[h] = (int32_t)npat; pid[i] = last = (int32_t)npat; nofs += len; start[++npat] = nofs;
        if (2 * npat > hcap) {{  /* the table grows: the patterns hashed again */
            int64_t nh = 4 * hcap; int32_t *nt = malloc(sizeof(int32_t) * (size_t)nh);
            if (!nt) {{ ok = 0; break; }}
            for (int64_t g = 0; g < nh; g++) nt[g] = -1;
            for (int64_t p = 0; p < npat; p++) {{
                uint64_t g = tl_khash(off + start[p], start[p + 1] - start[p]) & (uint64_t)(nh - 1);
                while (nt[g] >= 0) g = (g + 1) & (uint64_t)(nh - 1);
                nt[g] = (int32_t)p;
            }}
            free(tab); tab = nt; hcap = nh;
        }}
    }}
    free(tab);
    int64_t nblk = n / TL_BK + 1, nrun = 0, *bs = ok ? tl_kget(k, 2, sizeof(int64_t) * (size_t)(nblk + 1)) : 0;
    tl_kseg *rn = ok ? tl_kget(k, 3, sizeof(tl_kseg) * (size_t)(n + 1)) : 0;
    if (!bs || !rn) {{ free(off); tl_err_flag = err0; return; }}
    for (int64_t b = 0; b < nblk; b++) {{  /* each block's runs, found once */
        int64_t i0 = b * TL_BK, m = n - i0 < TL_BK ? n - i0 : TL_BK;
        int d = m < TL_BK;  /* (a block of one pattern: one run, found by a loop in lanes) */
        if (!d) for (int u = 1; u < TL_BK; u++) d |= pid[i0 + u] != pid[i0];
        bs[b] = nrun;
        for (int64_t t = 0, e; t < m; t = e) {{
            int32_t p = pid[i0 + t];
            for (e = d ? t + 1 : m; e < m && pid[i0 + e] == p; e++) ;
            if (p < 0) continue;
            /* a run of a quarter block or more folds every strand of the block where that reads no
               column outside the strands (one loop of TL_BK lanes), the run's lanes kept */
            int full = m == TL_BK && 4 * (e - t) >= TL_BK;
            for (int64_t q = start[p]; full && q < start[p + 1]; q++) full = i0 + off[q] >= 0 && i0 + off[q] + TL_BK <= n;
            rn[nrun].p = p; rn[nrun].t = (int16_t)t; rn[nrun].e = (int16_t)e; rn[nrun].full = (int8_t)full; nrun++;
        }}
    }}
    bs[nblk] = nrun;
    tl_kpid[k] = pid; tl_kstart[k] = start; tl_koff[k] = off; tl_kbs[k] = bs; tl_krn[k] = rn;
}}
/* at a super-step's start: the grid and the kept answers of this run, found again when
   strands were born or died since */
static void tl_nb_step(int64_t n, int64_t dead, const double *gr, const int64_t *gi, const int8_t *status) {{
    if (tl_kn == n && tl_kdead == dead && tl_krun == tl_run) return;
    /* the answers kept by the run before, made while all its strands were active, serve a run
       whose strands stand where its stood, while all of them are too */
    int same = tl_krun >= 0 && tl_krun == tl_kprev && tl_krun != tl_run && tl_kall && tl_kn == n && dead == 0;
    for (int64_t i = 0; i < n && same; i++) same = status[i] == 0;
    tl_kresets = tl_krun == tl_run ? tl_kresets + 1 : 0;
    tl_kn = n; tl_kdead = dead; tl_krun = tl_run;
    if (!same) tl_keep_free();
    tl_gbuilt = 0; tl_gok = 0; tl_ghw = tl_grid_h(gr, gi);
    if (!same && tl_kresets < 3 && n < INT32_MAX) {{
        int64_t act = 0;
        for (int64_t i = 0; i < n; i++) act += status[i] == 0;
        tl_kall = dead == 0 && act == n;
        {keep}
    }}
    for (int k = 0; k < TL_SITES; k++) if (!tl_kpid[k] || !TL_ALLKEPT) tl_grid_need(n);  /* some strand searches */
    (void)gr; (void)gi; (void)status;
}}
static inline int64_t tl_nb_kept(int k, int64_t i, const int64_t **out) {{
    const int32_t *pid = tl_kpid[k];
    if (!pid || pid[i] < 0) return -1;
    const int64_t *st = tl_kstart[k] + pid[i];
    *out = tl_koff[k] + st[0];
    return st[1] - st[0];
}}
static inline int64_t tl_nb_query(int v, int64_t n, int64_t i, const double *c, double r, const int64_t **out) {{
    (void)v; return tl_nb_search(n, i, c, r, out);
}}
#else
/* Strands move: each query site keeps, per strand, a neighbour list (a Verlet list): the
   strands within r (1 + TL_VM) of its centre when the list was made, found by the search.
   While the positions stay near those of the epoch's start (tl_vpos: every living strand
   within TL_VM r / 2 of its own, measured at each super-step's start, tl_vD the most), a
   list holds every strand the query can find, and the query tests only the list's strands,
   with the search's own test, in its order: the same neighbours in the same order.  A list
   is made again where its centre or the radius moved too far for that (checked at each
   query); all of them where some strand moved more than half the margin, was born, or
   became finite or not.  The spatial grid is made only in a super-step where some query
   searches (tl_grid_fresh), with cells of the margin's radius. */
#define TL_VSITES {vsites}
#define TL_INDIRECT_KEY {indirect}
#define TL_VM 0.3
typedef struct {{ const int64_t *p; int64_t len, ep; double cb[3], lim; }} tl_vent;
typedef struct tl_vblk {{ struct tl_vblk *next; int64_t cap; int64_t e[]; }} tl_vblk;
static tl_vent *tl_vls; static double *tl_vpos, tl_vD, tl_vh;
static int64_t tl_run, tl_vrun = -1, tl_vn = -1, tl_sn = -1, tl_vep = 1, tl_vsteps, tl_vresets, tl_vstored, tl_vmax;
static int tl_von, tl_voff, tl_vfull, tl_gstep; static tl_vblk *tl_vall;
static __thread tl_vblk *tl_vcur; static __thread int64_t tl_vused, tl_vcep;
void tl_set_run(int64_t run) {{ tl_run = run; }}
void tl_set_prev(int64_t prev) {{ (void)prev; }}
/* this super-step's grid, made by the first query that searches (one thread; the others wait) */
static void tl_grid_fresh(void) {{
    if (__atomic_load_n(&tl_gstep, __ATOMIC_ACQUIRE)) return;
    #pragma omp critical (tl_grid)
    {{
        if (!tl_gstep) {{ tl_nb_build(tl_sn, tl_vh); __atomic_store_n(&tl_gstep, 1, __ATOMIC_RELEASE); }}
    }}
}}
static void tl_vfree(void) {{
    while (tl_vall) {{ tl_vblk *b = tl_vall->next; free(tl_vall); tl_vall = b; }}
    tl_vstored = 0; tl_vfull = 0; tl_vep++;
}}
/* a copy of a list in the thread's current block (blocks never move: lists stay where they are
   until the epoch ends); 0 where the lists would take more than tl_vmax entries or memory runs out */
static int64_t *tl_vstore(const int64_t *src, int64_t len) {{
    if (tl_vcep != tl_vep) {{ tl_vcur = 0; tl_vcep = tl_vep; }}
    if (!tl_vcur || tl_vused + len > tl_vcur->cap) {{
        int64_t cap = len > 8192 ? len : 8192;
        if (__atomic_add_fetch(&tl_vstored, cap, __ATOMIC_RELAXED) > tl_vmax) return 0;
        tl_vblk *b = malloc(sizeof(tl_vblk) + sizeof(int64_t) * (size_t)cap);
        if (!b) return 0;
        b->cap = cap;
        #pragma omp critical (tl_vlist)
        {{ b->next = tl_vall; tl_vall = b; }}
        tl_vcur = b; tl_vused = 0;
    }}
    int64_t *dst = tl_vcur->e + tl_vused;
    tl_vused += len; memcpy(dst, src, sizeof(int64_t) * (size_t)len);
    return dst;
}}
/* the strands of list L (m of them) that the search's test finds within r of c, written to buf:
   32 at a time, the double sums first (no branch on the outcome), Diderot's float test only
   where a sum is too close to r2 to decide, then the keepers */
static int64_t tl_vfilter(int64_t n, int64_t i, const int64_t *L, int64_t m, const double *c, double r2, int64_t *buf) {{
    int64_t len = 0; double lo2 = 0.999999 * r2, hi2 = 1.000001 * r2;
    for (int64_t q0 = 0; q0 < m; q0 += 32) {{
        const int64_t *Lq = L + q0; int64_t w = m - q0 < 32 ? m - q0 : 32; double e[32]; int amb = 0;
        for (int64_t q = 0; q < w; q++) {{
            double p[3] = {{0, 0, 0}};
            for (int a = 0; a < {d}; a++) p[a] = tl_RP[tl_posrow[a] * n + Lq[q]];
            double e_ = {d2e};
            e[q] = e_; amb |= (e_ >= lo2) & (e_ <= hi2);
        }}
        if (amb) for (int64_t q = 0; q < w; q++) if (e[q] >= lo2 && e[q] <= hi2) {{
            double p[3] = {{0, 0, 0}};
            for (int a = 0; a < {d}; a++) p[a] = tl_RP[tl_posrow[a] * n + Lq[q]];
            e[q] = tl_near(p, c, r2, 1) ? 0.0 : INFINITY;
        }}
        for (int64_t q = 0; q < w; q++) {{ int64_t j = Lq[q]; buf[len] = j; len += (e[q] < r2) & (j != i) & (tl_S0[j] != 2); }}
    }}
    return len;
}}
static int64_t tl_nb_query(int v, int64_t n, int64_t i, const double *c, double r, const int64_t **out) {{
    double r2 = r * r;
    int use = tl_von && !__atomic_load_n(&tl_vfull, __ATOMIC_RELAXED) && n == tl_sn && r >= 0 && r2 > 1e-30 && r2 < 1e29;
    for (int a = 0; a < {d}; a++) use = use && isfinite(c[a]);
    if (!use) {{ tl_grid_fresh(); return tl_nb_search(n, i, c, r, out); }}
    tl_vent *e = tl_vls + (int64_t)v * n + i;
    double room = e->lim - tl_vD - r * (1 + 1e-5), dc2 = 0;
    for (int a = 0; a < {d}; a++) dc2 += (c[a] - e->cb[a]) * (c[a] - e->cb[a]);
    const int64_t *L = e->p; int64_t m = e->len;
    if (e->ep != tl_vep || !(room > 0 && dc2 < room * room)) {{  /* the list made again, around c */
        tl_grid_fresh();
        double rl = r * (1 + TL_VM);
        const int64_t *nb; int64_t k = tl_nb_search(n, i, c, rl, &nb);
        if (tl_err_flag == 3) {{ *out = nb; return 0; }}
        int64_t *kept = tl_vstore(nb, k);
        L = nb; m = k; e->ep = 0;
        if (!kept) __atomic_store_n(&tl_vfull, 1, __ATOMIC_RELAXED);  /* the lists too large: searches from now on */
        if (kept) {{
            e->p = L = kept; e->len = k; e->ep = tl_vep; e->lim = rl * (1 - 1e-5) - tl_vD;
            for (int a = 0; a < 3; a++) e->cb[a] = a < {d} ? c[a] : 0;
        }}
    }}
    int64_t *buf = tl_nbuf, cap = tl_ncap;
    while (m > cap) if (!tl_nb_grow(&buf, &cap)) {{ *out = buf; return 0; }}
    int64_t len = tl_vfilter(n, i, L, m, c, r2, buf);  /* (in place where L is the buffer: writes trail reads) */
    if (TL_INDIRECT_KEY) tl_nb_sort(buf, len);  /* the keys' order may have changed since the list was made */
    *out = buf;
    return len;
}}
/* at a super-step's start: the epoch kept while every living strand is within TL_VM r / 2 of its
   position at the epoch's start (a strand whose position is not finite, then and now, can be no
   neighbour), else a new one */
static void tl_nb_step(int64_t n, int64_t dead, const double *gr, const int64_t *gi, const int8_t *status) {{
    (void)dead; (void)status;
    double h = tl_grid_h(gr, gi);
    __atomic_store_n(&tl_gstep, 0, __ATOMIC_RELEASE); tl_gok = 0; tl_sn = n;
    if (tl_run != tl_vrun) {{ tl_vrun = tl_run; tl_vsteps = 0; tl_vresets = 0; tl_voff = 0; tl_vn = -1; }}
    tl_vsteps++;
    int on = !tl_voff && h > 0 && h * h > 1e-30 && h * h < 1e29 && n > 0
             && (double)n * (TL_VSITES * sizeof(tl_vent) + {d} * sizeof(double)) < 268435456.0;
    if (on && n == tl_vn && tl_von) {{
        double lim2 = 0.25 * TL_VM * TL_VM * h * h, most = 0; int keep = 1;
        for (int64_t j = 0; j < n && keep; j++) {{
            if (tl_S0[j] == 2) continue;
            double s2 = 0; int fc = 1, fe = 1;
            for (int a = 0; a < {d}; a++) {{
                double x = tl_RP[tl_posrow[a] * n + j], y = tl_vpos[a * n + j];
                fc = fc && isfinite(x); fe = fe && isfinite(y); s2 += (x - y) * (x - y);
            }}
            if (!fc && !fe) continue;
            if (!(s2 <= lim2)) keep = 0; else if (s2 > most) most = s2;
        }}
        if (keep) {{ tl_vD = sqrt(most) * (1 + 1e-9) + 1e-300; return; }}
    }}
    tl_vfree(); tl_vD = 0;
    if (tl_vn >= 0) tl_vresets++;
    if (tl_vresets >= 3 && tl_vsteps < 2 * tl_vresets) on = 0, tl_voff = 1;  /* epochs of a step or two: no gain */
    if (on && n != tl_vn) {{
        free(tl_vls); free(tl_vpos);
        tl_vls = calloc((size_t)n * TL_VSITES, sizeof(tl_vent)); tl_vpos = malloc(sizeof(double) * {d} * (size_t)n);
        if (!tl_vls || !tl_vpos) {{ free(tl_vls); free(tl_vpos); tl_vls = 0; tl_vpos = 0; on = 0; }}
    }}
    if (on) for (int a = 0; a < {d}; a++) memcpy(tl_vpos + a * n, tl_RP + tl_posrow[a] * n, sizeof(double) * (size_t)n);
    tl_von = on; tl_vn = on ? n : -1; tl_vh = on ? h * (1 + TL_VM) : h; tl_vmax = 64 * n + 65536;
}}
#endif
"""

DECLARATIONS = P.TYPEDEF + """
void tl_create(int64_t n, int nd, const int64_t *lo, const int64_t *ext, double *R, int64_t *I, int8_t *status,
               const double *gr, const int64_t *gi, const tl_img *img, int threads);
int64_t tl_steps(int64_t n, int64_t k, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi,
                 const tl_img *img, int threads, int64_t *err, int64_t *active_out, int64_t *pending,
                 int64_t *ord, int64_t *nlive, int64_t *rank);
int64_t tl_finish(int64_t n, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi, const tl_img *img,
                  int threads, int64_t *err, int64_t *ord, int64_t *nlive);
void tl_init_range(int64_t n, int64_t from, double *R, int64_t *I, int8_t *status, const double *gr,
                   const int64_t *gi, const tl_img *img, int threads);
int64_t tl_nbirths(void);
void tl_take_births(int64_t *par, int64_t *seq, double *br, int64_t *bi);
const char *tl_printed(int64_t *n);
const int64_t *tl_pmarks(int64_t *n);
void tl_set_strings(const char *const *more, int64_t n);
typedef struct { const double *data; int64_t len; int64_t comps; } tl_seq;
void tl_set_seqs(const tl_seq *s);
void tl_set_run(int64_t run);
void tl_set_prev(int64_t prev);
void tl_set_bmax(int64_t m);
"""


#: a fold's step (``t`` the accumulator, ``v`` the value, ``cnt`` the neighbours before) and its end
_FOLDS = {"sum": "{t} += {v};", "mean": "{t} += {v};", "count": "{t} += 1;", "product": "{t} *= {v};",
          "all": "{t} = {t} && ({v});", "exists": "{t} = {t} || ({v});",
          "max": "{{ {ty} v = {v}; if (cnt == 0 || v > {t}) {t} = v; }}",
          "min": "{{ {ty} v = {v}; if (cnt == 0 || v < {t}) {t} = v; }}"}
_FINAL = {"mean": "{t} = cnt ? {t} / (double)cnt : NAN;", "max": "if (cnt == 0) {t} = -INFINITY;",
          "min": "if (cnt == 0) {t} = INFINITY;"}

BLOCK_SITE = r"""    bk->ok[{b}] = tl_kpid[{k}] != 0;
    for (int64_t r_ = bk->ok[{b}] ? tl_kbs[{k}][i0 / TL_BK] : 0, r1_ = bk->ok[{b}] ? tl_kbs[{k}][i0 / TL_BK + 1] : 0; r_ < r1_; r_++) {{
        const tl_kseg *kr_ = tl_krn[{k}] + r_;  /* a run of strands with pattern p_ (site {b}: kept query {k}) */
        int64_t t_ = kr_->t, e_ = kr_->e, p_ = kr_->p;
        const int64_t *o_ = tl_koff[{k}] + tl_kstart[{k}][p_], len_ = tl_kstart[{k}][p_ + 1] - tl_kstart[{k}][p_];
        if (kr_->full) {{
{full}
        }} else {{
            for (int64_t u_ = t_; u_ < e_; u_++) {v} = {init};
            for (int64_t cnt = 0; cnt < len_; cnt++)
                for (int64_t u_ = t_, j0_ = i0 + o_[cnt]; u_ < e_; u_++) {{ int64_t j = j0_ + u_; {fold} }}
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
        isinstance(x, S.At) or (isinstance(x, S.Cast) and x.ty != "real") or (isinstance(x, S.Call) and x.fn[-3:] == "chk")
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


def _zero(e) -> bool:
    return isinstance(e, S.Const) and e.ty == "real" and float(e.value) == 0.0  # type: ignore[arg-type]


def _steady(e, changing: set[str]) -> bool:
    """Whether ``e`` has the same value in every strand and every step: constants and the
    globals outside ``changing`` combined by operators and functions."""
    if isinstance(e, S.Const):
        return True
    if isinstance(e, S.Ref):
        return e.space == "g" and e.name not in changing
    if isinstance(e, (S.Bin, S.Un, S.Call, S.Sel, S.Cast)):
        parts = [getattr(e, f.name) for f in dataclasses.fields(e)]
        kids = [x for p in parts for x in (p if isinstance(p, tuple) else (p,)) if not isinstance(x, str)]
        return all(_steady(x, changing) for x in kids)
    return False


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


#: Generated C above this many characters (higher derivatives of products of 3-D fields
#: reach megabytes) is compiled with -O1: half the compile time of -O3, the same IEEE results.
LARGE_SOURCE = 256 * 1024
#: no libm call sets errno (strand code never reads it): `sqrt` is one instruction, shared between
#: equal expressions; the same IEEE results (docs/diderot-compiled.md; -fno-trapping-math too made
#: life 8% slower)
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
        #: one C call at a time per program: the error code, print and birth buffers and the
        #: neighbour grid are the object's statics (cffi lets other Python threads run meanwhile)
        self.lock = threading.Lock()
        self.packed: dict = {}  # the last run's image descriptors (strands_probe.pack)
        #: no strand moves and creation places them by the grid and globals alone: the last run's
        #: (grid, globals, token), whose kept neighbours a run with the same grid and globals reuses
        self.placed = self.renderer.still and _placed(ir)
        self.last_place: tuple | None = None
        #: the state arrays of the last run that ended (at most SPARE_BYTES), for the next run with as
        #: many strands (new ones cost page faults of all the state: a third of a short call), and
        #: the rows tl_create may not set before reading them (zeroed there)
        self.spare: dict = {}
        written = {self.renderer.state[name] for name in _set_first(ir.create + ir.init)}
        self.unset = tuple([k for k in range(max(n, 1)) if (arr, k) not in written]
                           for arr, n in (("R", self.renderer.nr), ("I", self.renderer.ni)))

    def take(self, rows: tuple[int, int], n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """State arrays (R, I, status) for ``n`` strands: a finished run's, or new zeros."""
        kept = self.spare.pop((rows, n), None)
        if kept is None:
            return np.zeros((rows[0], n)), np.zeros((rows[1], n), dtype=np.int64), np.zeros(n, dtype=np.int8)
        for table, unset in zip(kept, self.unset):
            table[unset] = 0
        return kept

    def start(self, values: Mapping[str, Any], ranges: list[tuple[int, int]], threads: int = 1) -> "Run":
        return Run(self, values, ranges, threads)


class Run:
    def __init__(self, runner: Runner, values: Mapping[str, Any], ranges: list[tuple[int, int]], threads: int):
        r = self.runner = runner.renderer
        self.ffi, self.lib, self.lock = runner.ffi, runner.lib, runner.lock
        # printed text in the interpreter's order; counts of the strands as they update in order
        self.threads = 1 if runner.ir.prints or runner.ir.serial else threads
        self.chunks: list[tuple[int, bytes]] = []  # (strand, text) of each print statement, in order
        self.token = next(_RUN_TOKENS)
        ext = [max(0, hi - lo + 1) for lo, hi in ranges]
        self.n = n = math.prod(ext)
        self.owner = runner
        self.made = 0  # the super-steps asked for so far
        self.R, self.I, self.status = runner.take((max(r.nr, 1), max(r.ni, 1)), n)
        #: the living strands' columns in the executor's order (Diderot's permuted one where
        #: ``ir.indirect``: [stable | active], then the new), their count, each one's rank
        self.indirect = runner.ir.indirect
        # (the C side reads ord and rank only in a permuted run: elsewhere one element each)
        self.ord = np.arange(n if self.indirect else 1, dtype=np.int64)
        self.nlive = np.array([n], dtype=np.int64)
        self.rank = np.zeros(max(n, 1) if self.indirect else 1, dtype=np.int64)
        self.gr = np.zeros(max(r.gnr, 1))
        self.gi = np.zeros(max(r.gni, 1), dtype=np.int64)
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
        self.seqs = self.ffi.new("tl_seq[]", max(1, len(runner.ir.seqs)))
        for k, q in enumerate(runner.ir.seqs):  # the dynamic sequences: items × components, row-major
            check_allocation(len(values[q.name]) * q.comps, 8, f"the sequence {q.name}")
            data = np.ascontiguousarray(np.asarray([np.ravel(np.asarray(x, dtype=np.float64)) for x in values[q.name]],
                                                   dtype=np.float64).reshape(-1))
            self.keep.append(data)
            self.seqs[k].data = self.ffi.cast("const double *", data.ctypes.data)
            self.seqs[k].len = len(values[q.name])
            self.seqs[k].comps = q.comps
        self._active = n
        #: the run before whose strands creation places where it places this run's (Runner.placed), or -1
        self.prev = -1
        if runner.placed:
            key = (tuple(ranges), self.gr.tobytes(), self.gi.tobytes(), tuple(self.__dict__.get("_others", {})))
            last, runner.last_place = runner.last_place, (key, self.token)
            self.prev = last[1] if last is not None and last[0] == key else -1
        if n:
            lo = np.array([lo for lo, _ in ranges] or [0], dtype=np.int64)
            ex = np.array(ext or [1], dtype=np.int64)
            with self.lock:
                self._create(lo, ex, ranges)

    def _strings(self) -> None:
        """The texts of the strings the program does not spell (string inputs), for print;
        the sequences' descriptors."""
        others = self.__dict__.get("_others", {})
        texts = [self.ffi.new("char[]", t.encode("utf-8")) for t in sorted(others, key=others.get)]
        table = self.ffi.new("const char *[]", texts or [self.ffi.NULL])
        self._texts = (texts, table)
        self.lib.tl_set_strings(table, len(texts))
        self.lib.tl_set_seqs(self.seqs)

    def _create(self, lo, ex, ranges) -> None:
        self._strings()
        self.lib.tl_create(self.n, max(1, len(ranges)), self._p("int64_t *", lo), self._p("int64_t *", ex),
                           self._p("double *", self.R), self._p("int64_t *", self.I),
                           self._p("int8_t *", self.status), self._p("double *", self.gr),
                           self._p("int64_t *", self.gi), self.images, self.threads)
        self._take_printed()

    def release(self) -> None:
        """The run is over (its outputs copied out): its state arrays serve the next run."""
        if self.R.nbytes + self.I.nbytes + self.status.nbytes <= SPARE_BYTES:
            self.owner.spare = {((self.R.shape[0], self.I.shape[0]), self.n): (self.R, self.I, self.status)}

    def _other(self, text: str) -> int:
        """A number for a string the program does not spell (equal strings, equal numbers)."""
        others = self.__dict__.setdefault("_others", {})
        return others.setdefault(text, len(others))

    def _p(self, ctype: str, arr: np.ndarray):  # (the run's arrays each cast once)
        kept = self.__dict__.setdefault("_ptrs", {}).get(id(arr))
        if kept is None or kept[0] is not arr:
            kept = self.__dict__["_ptrs"][id(arr)] = (arr, self.ffi.cast(ctype, arr.ctypes.data))
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
            done = self._steps(k)
        self.made += done
        return done

    def _steps(self, k: int) -> int:
        err, act, pending = self.ffi.new("int64_t *"), self.ffi.new("int64_t *"), self.ffi.new("int64_t *")
        done = 0
        while done < k:
            R, I, status, gr, gi, img, threads = self._buffers()
            if self.runner.ir.births:  # the room left for new strands, with the strands there are now
                self.lib.tl_set_bmax(self._birth_room())
            done += int(self.lib.tl_steps(self.n, k - done, R, I, status, gr, gi, img, threads, err, act, pending,
                                          self._p("int64_t *", self.ord), self._p("int64_t *", self.nlive),
                                          self._p("int64_t *", self.rank)))
            self._active = int(act[0])
            self._check(err)
            if not pending[0]:
                break
            self._add_births()  # the update loop made new strands: they join, then the global block runs
            R, I, status, gr, gi, img, threads = self._buffers()
            self._active = int(self.lib.tl_finish(self.n, R, I, status, gr, gi, img, threads, err,
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
            raise error("input", ERRORS.get(int(err[0]), "a run-time error in a strand"))

    def _add_births(self) -> None:
        """Append the strands ``new`` made (in the order the interpreter makes them: by
        parent, then in the parent's order), their parameters set, their state initialised."""
        nb = int(self.lib.tl_nbirths())  # at most _birth_room(): tl_birth refused more (the memory budget)
        r = self.runner
        params = r.ir.params
        nbr = max(1, sum(1 for slot in params if r.state[slot][0] == "R"))
        nbi = max(1, len(params) - sum(1 for slot in params if r.state[slot][0] == "R"))
        par, seq = np.empty(nb, dtype=np.int64), np.empty(nb, dtype=np.int64)
        br, bi = np.empty((nb, nbr)), np.empty((nb, nbi), dtype=np.int64)
        self.lib.tl_take_births(self._p("int64_t *", par), self._p("int64_t *", seq), self._p("double *", br),
                                self._p("int64_t *", bi))
        self.__dict__.pop("_ptrs", None)  # (these arrays, and the state arrays replaced below, are not kept)
        # in a permuted run, parents in the order they updated (their rank), as Diderot appends them
        order = np.lexsort((seq, self.rank[par] if self.indirect else par))
        n0, n1 = self.n, self.n + nb
        R = np.zeros((self.R.shape[0], n1))
        R[:, :n0] = self.R
        I = np.zeros((self.I.shape[0], n1), dtype=np.int64)
        I[:, :n0] = self.I
        for k, bits in r.narrow.items():  # a narrow row's n0 values are its first bytes, the new ones zeros
            I[k].view(f"int{bits}")[n0:n1] = 0
        kr = ki = 0
        for slot in params:
            arr, row = r.state[slot]
            if arr == "R":
                R[row, n0:] = br[order, kr]
                kr += 1
            else:
                I[row, n0:] = bi[order, ki]
                ki += 1
        self.R, self.I, self.n = R, I, n1
        self.status = np.concatenate([self.status, np.zeros(nb, dtype=np.int8)])
        live = int(self.nlive[0]) if self.indirect else n0
        if self.indirect:
            self.ord = np.concatenate([self.ord[:live], np.arange(n0, n1, dtype=np.int64)])
            self.rank = np.zeros(max(n1, 1), dtype=np.int64)
        self.nlive = np.array([live + nb], dtype=np.int64)
        R_, I_, status, gr, gi, img, threads = self._buffers()
        self.lib.tl_init_range(n1, n0, R_, I_, status, gr, gi, img, threads)

    def _take_printed(self) -> None:
        if self.runner.ir.prints:
            n, m = self.ffi.new("int64_t *"), self.ffi.new("int64_t *")
            marks = self.lib.tl_pmarks(m)
            buf = self.lib.tl_printed(n)
            text = bytes(self.ffi.unpack(buf, n[0])) if n[0] else b""
            at = [int(marks[k]) for k in range(0, m[0], 2)] + [len(text)]
            if at[0] > 0:
                self.chunks.append((-1, text[:at[0]]))
            self.chunks += [(int(marks[2 * k + 1]), text[at[k]:at[k + 1]]) for k in range(m[0] // 2)]

    @property
    def printed(self) -> str:
        """The printed text in the order it was printed."""
        return b"".join(t for _, t in self.chunks).decode("utf-8", "replace")

    def printed_by_strand(self) -> str:
        """The printed text strand by strand (a global block's first), each strand's in the
        order printed: Diderot's order for a program that is not bulk-synchronous."""
        return b"".join(t for _, t in sorted(self.chunks, key=lambda c: c[0])).decode("utf-8", "replace")

    def _row(self, table: np.ndarray, k: int) -> np.ndarray:
        """Row ``k`` of an int table (``I``) as its ``n`` values (a narrow row: its first bytes)."""
        bits = self.runner.narrow.get(k)
        return table[k] if bits is None else table[k].view(f"int{bits}")[:self.n]

    def state(self, name: str, shape: tuple[int, ...], kind: str, cols: np.ndarray | None = None) -> np.ndarray:
        """A state variable of every strand (or of the strands ``cols``: their columns, or
        a mask over all): shape (n,) + ``shape``, a copy."""
        names = [name] if not shape else [f"{name}.{k}" for k in range(int(np.prod(shape)))]
        places = [self.runner.state[slot] for slot in names]
        table = self.R if places[0][0] == "R" else self.I
        rows = [k for _, k in places]
        count = self.n if cols is None else int(np.count_nonzero(cols)) if cols.dtype == bool else len(cols)
        out = np.empty((count, len(rows)), dtype=table.dtype)
        for j, k in enumerate(rows):  # one row of the table at a time: no copy of the whole table
            row = self._row(table, k) if table is self.I else table[k]
            out[:, j] = row if cols is None else row[cols]
        out = out.reshape((count,) + tuple(shape))
        if kind == "bool":
            return out.astype(bool)
        return out


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
    return not any(sp not in ("l", "s") or (sp == "s" and name.startswith("pos.")) for sp, name in bad)


#: False: every strand is made one by one (the tests compare both ways)
CREATE_LANES = True

#: the most bytes of state arrays a built program keeps from one run for the next
SPARE_BYTES = 64 << 20

_RUNNERS: dict[tuple, Runner] = {}
_WIDTHS: dict[tuple, tuple] = {}
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


_SEEN: dict[int, tuple[S.StrandIR, str]] = {}


EXECUTORS["c"] = build
UNAVAILABLE["c"] = c_build.why_no_compiler
