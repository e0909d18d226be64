// strands_prelude.h: the head of every strand program's source (strands.py); see docs/diderot-compiled.md.
#if defined(__clang__)  /* no fused multiply-add but where written (fma): the interpreter's bits (gcc: -std=c99) */
#pragma STDC FP_CONTRACT OFF
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* a run-time error: its code (strands.py ERRORS) in the low 3 bits, above them where the
   operation is in the program (TL_AT: its line and column; 0: unknown). The one reported (tl_err_flag) is the
   interpreter's: the first failure in its order (the step, then the strand), not the first in time (threads, a
   solo strand's many steps). An operation that fails keeps its thread's first failure (tl_tf) and raises
   tl_err_any; the drivers, where that is up, claim it with its place in that order (tl_claim), the lowest kept */
#ifdef _OPENMP
int omp_get_thread_num(void);
#define TL_TID() (omp_get_thread_num() & 255)
#else
#define TL_TID() 0
#endif
static int64_t tl_err_flag, tl_err_up, tl_err_k1 = INT64_MAX, tl_err_k2;  /* (k1, k2): the kept failure's place */
#define tl_err_any __atomic_load_n(&tl_err_up, __ATOMIC_RELAXED)  /* (read by other threads: never hoisted) */
static struct { int64_t v; char pad[56]; } tl_tf[256];  /* each thread's first failure not yet claimed */
#define TL_AT(line, col) ((int64_t)(line) << 32 | (int64_t)(col))
static inline void tl_fail(int64_t code, int64_t at) {
    int64_t *f = &tl_tf[TL_TID()].v;
    if (!*f) *f = code | at << 3;
    __atomic_store_n(&tl_err_up, 1, __ATOMIC_RELAXED);
}
static int tl_kpos; void tl_set_kpos(int k) { tl_kpos = k; }  /* a run on arrays holding its positions */
static int64_t tl_fc[2]; static int tl_fc_set;  /* a permuted run's counts (active, stable) at the step's start (driver.c) */
/* ints are 64-bit two's complement and wrap (as the interpreter's do): no undefined overflow */
static inline int64_t tl_iadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t tl_isub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t tl_imul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t tl_idiv(int64_t a, int64_t b, int64_t at) {
    if (b == 0) { tl_fail(1, at); return 0; }
    return b == -1 ? tl_isub(0, a) : a / b;
}
static inline int64_t tl_imod(int64_t a, int64_t b, int64_t at) { if (b == 0) { tl_fail(6, at); return 0; } return b == -1 ? 0 : a % b; }
static inline int64_t tl_ichk(int64_t i, int64_t n, int64_t at) { if (i < 0 || i >= n) { tl_fail(2, at); return 0; } return i; }
static inline int64_t tl_schk(int64_t i, int64_t n, int64_t at) { if (i < 0 || i >= n) { tl_fail(4, at); return 0; } return i; }
typedef union { double r; int64_t i; } tl_cell;
typedef struct { const double *data; int64_t len; int64_t comps; int64_t kept; } tl_seq;  /* (kept: tl_ar_gkeep's) */
static tl_seq *tl_sq;
void tl_set_seqs(tl_seq *s) { tl_sq = s; }
static inline double tl_at(int k, int64_t i, int c, int64_t at) {
    const tl_seq *q = &tl_sq[k];
    if (i < 0 || i >= q->len) { tl_fail(4, at); return 0; }
    return q->data[i * q->comps + c];
}
static inline int64_t tl_ati(int k, int64_t i, int c, int64_t at) {  /* an int (or bool) sequence's: its cells hold int64s */
    const tl_seq *q = &tl_sq[k];
    if (i < 0 || i >= q->len) { tl_fail(4, at); return 0; }
    return ((const tl_cell *)q->data)[i * q->comps + c].i;
}
/* the sequences of any length a method makes: cells of its thread's arena (grown by doubling up to tl_ar_max cells,
   the memory budget's share of a thread, tl_set_armax; emptied when a method starts; docs/diderot-compiled.md).
   Past it: error 7 and cell -1; every access is checked, by index (a grown arena moves) */
static __thread tl_cell *tl_ar; static __thread int64_t tl_ar_top, tl_ar_cap;
static int64_t tl_ar_max = (int64_t)1 << 20;
void tl_set_armax(int64_t m) { tl_ar_max = m; }
static int64_t tl_ar_new(int64_t n, int64_t c, int64_t at) {  /* n items of c cells */
    int64_t need = n < 0 || n > (tl_ar_max - tl_ar_top) / c ? -1 : tl_ar_top + n * c, cap = tl_ar_cap ? tl_ar_cap : 4096;
    if (need > tl_ar_cap) {
        while (cap < need) cap = cap > tl_ar_max / 2 ? tl_ar_max : 2 * cap;
        tl_cell *grown = realloc(tl_ar, sizeof(tl_cell) * (size_t)cap);
        if (grown) { tl_ar = grown; tl_ar_cap = cap; } else need = -1;
    }
    if (need < 0) { tl_fail(7, at); return -1; }
    tl_ar_top = need; return need - n * c;
}
static inline int tl_ar_ok(int64_t b, int64_t k) { return b >= 0 && k >= 0 && k < tl_ar_top - b; }
static inline int64_t tl_ar_cell(int64_t b, int64_t n, int64_t i, int64_t c, int64_t k, int64_t at) {
    if (i < 0 || i >= n) { tl_fail(4, at); return -1; }
    return b >= 0 && tl_ar_ok(b, i * c + k) ? b + i * c + k : -1;  /* (b >= 0: n items of c cells were taken) */
}
#define TL_AR(F, T, M) static inline int64_t tl_ar_put##F(int64_t b, int64_t k, T v) { if (tl_ar_ok(b, k)) tl_ar[b + k].M = v; return 0; } \
    static inline T tl_ar_at##F(int64_t b, int64_t n, int64_t i, int64_t c, int64_t k, int64_t at) { \
        int64_t x = tl_ar_cell(b, n, i, c, k, at); return x < 0 ? 0 : tl_ar[x].M; }
TL_AR(, double, r) TL_AR(i, int64_t, i)
/* a @ b (na, nb items of c cells): b where a is empty, a where b is or follows a, a extended where it ends at the
   top, else a copy of both at the top (a cell taken is never written again) */
static int64_t tl_ar_cat(int64_t a, int64_t na, int64_t b, int64_t nb, int64_t c, int64_t at) {
    if (na <= 0 || nb <= 0) return na <= 0 ? b : a;
    int64_t la = na * c, lb = nb * c, r = a + la == tl_ar_top ? a : -1;  /* (na, nb: within the cells a, b took) */
    if (!tl_ar_ok(a, la - 1) || !tl_ar_ok(b, lb - 1)) { if (a >= 0 && b >= 0) tl_fail(4, at); return -1; }  /* (never past the top) */
    if (a + la == b) return a;
    if (r < 0 && (r = tl_ar_new(la, 1, at)) >= 0) memcpy(tl_ar + r, tl_ar + a, sizeof(tl_cell) * (size_t)la);
    if (r < 0 || tl_ar_new(lb, 1, at) < 0) return -1;
    memcpy(tl_ar + r + la, tl_ar + b, sizeof(tl_cell) * (size_t)lb); return r;
}
/* a sequence of any length kept in the strand state or a global across steps: its own block (the slot holds its
   address, 0: empty), copied from and into the arena (tl_ar_kget, tl_ar_keep); the blocks of a run in its list
   (tl_kp: the first block, the cells taken, the most cells: the memory budget's half, else error 7; the run's) */
typedef struct tl_kb { struct tl_kb *next; int64_t n, cap; tl_cell *d; } tl_kb;
static int64_t *tl_kp;
void tl_kp_use(int64_t *kp) { tl_kp = kp; }
void tl_kp_free(int64_t *kp) { for (tl_kb *k = (tl_kb *)(intptr_t)kp[0], *x; k; k = x) { x = k->next; free(k->d); free(k); } kp[0] = kp[1] = 0; }
int64_t tl_kp_len(int64_t h) { return h ? ((tl_kb *)(intptr_t)h)->n : 0; }
void tl_kp_copy(int64_t h, int64_t c, void *out) { if (tl_kp_len(h)) memcpy(out, ((tl_kb *)(intptr_t)h)->d, sizeof(tl_cell) * (size_t)(tl_kp_len(h) * c)); }
void tl_kp_gather(const int64_t *hs, int64_t n, int64_t c, int64_t *lens, tl_cell *out) {  /* n blocks' lengths, (out) cells */
    for (int64_t j = 0; j < n; j++) { lens[j] = tl_kp_len(hs[j]); if (out) { tl_kp_copy(hs[j], c, out); out += lens[j] * c; } } }
static int64_t tl_ar_kget(int64_t h, int64_t c, int64_t at) {  /* h's items (of c cells) at the arena's top */
    int64_t b = tl_ar_new(tl_kp_len(h), c, at); if (b >= 0) tl_kp_copy(h, c, tl_ar + b); return b; }
static int64_t tl_ar_keep(int64_t h, int64_t b, int64_t n, int64_t c, int64_t at) {  /* h holding n items from b */
    tl_kb *k = (tl_kb *)(intptr_t)h;
    if (n <= 0 || !tl_ar_ok(b, n * c - 1)) { if (k) k->n = 0; return h; }  /* (cells refused: the error is up) */
    if (!k && (k = calloc(1, sizeof(tl_kb)))) { int64_t old = __atomic_load_n(&tl_kp[0], __ATOMIC_RELAXED);
        do k->next = (tl_kb *)(intptr_t)old; while (!__atomic_compare_exchange_n(&tl_kp[0], &old, (int64_t)(intptr_t)k, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); }
    if (k && n * c > k->cap) {
        int64_t cap = n * c > 2 * k->cap ? n * c : 2 * k->cap;
        tl_cell *d = __atomic_add_fetch(&tl_kp[1], cap - k->cap, __ATOMIC_RELAXED) <= tl_kp[2] ? realloc(k->d, sizeof(tl_cell) * (size_t)cap) : 0;
        if (d) { k->d = d; k->cap = cap; } else { __atomic_sub_fetch(&tl_kp[1], cap - k->cap, __ATOMIC_RELAXED); k->n = 0; tl_fail(7, at); return (int64_t)(intptr_t)k; }
    }
    if (!k) { tl_fail(7, at); return 0; }
    memcpy(k->d, tl_ar + b, sizeof(tl_cell) * (size_t)(n * c)); k->n = n; return (int64_t)(intptr_t)k;
}
/* the blocks of kept row k (items of c cells) as a step found them, for other strands' queries: row k of I0 their
   copies (in buffer s of 8, kept from step to step of a call, counted in the run's cells tl_kp[1]: a tl_kb as 4) */
static struct { tl_kb *kb; tl_cell *d; int64_t nkb, nd; } tl_ks[8];
static void *tl_ks_grow(void *p, int64_t *have, int64_t want, int64_t cells) {  /* (error 7: past the budget, 3: no memory) */
    if (want <= *have) return p;
    free(p); tl_kp[1] -= *have * cells; *have = 0;
    if (tl_kp[1] + want * cells > tl_kp[2]) { tl_err_flag = 7; tl_err_k1 = INT64_MIN; return 0; }  /* (kept: the step's first) */
    if (!(p = malloc(sizeof(tl_cell) * (size_t)(want * cells)))) { tl_err_flag = 3; return 0; }
    tl_kp[1] += want * cells; *have = want; return p;
}
static void tl_ks_free(void) { for (int s = 0; s < 8; s++) {  /* (their cells given back: after a call's steps) */
    if (tl_kp) tl_kp[1] -= 4 * tl_ks[s].nkb + tl_ks[s].nd; free(tl_ks[s].kb); free(tl_ks[s].d); tl_ks[s].kb = 0; tl_ks[s].d = 0; tl_ks[s].nkb = tl_ks[s].nd = 0; } }
static void tl_kp_snap(int s, int64_t k, int64_t c, int64_t n, const int64_t *I, int64_t *I0) {
    int64_t cells = 0, o = 0;
    if (s < 0 || s >= 8) { tl_err_flag = 3; return; }  /* (lower refuses a ninth: never reached) */
    for (int64_t j = 0; j < n; j++) cells += tl_kp_len(I[k * n + j]) * c;
    tl_ks[s].kb = tl_ks_grow(tl_ks[s].kb, &tl_ks[s].nkb, n, 4); tl_ks[s].d = tl_ks_grow(tl_ks[s].d, &tl_ks[s].nd, cells, 1);
    for (int64_t j = 0, h, m; j < n; j++, o += m * c) {
        h = I[k * n + j]; m = tl_ks[s].nkb < n || tl_ks[s].nd < cells ? 0 : tl_kp_len(h);  /* (error 3 or 7: none read) */
        if (m) { tl_ks[s].kb[j] = (tl_kb){0, m, m * c, tl_ks[s].d + o}; tl_kp_copy(h, c, tl_ks[s].d + o); }
        I0[k * n + j] = m ? (int64_t)(intptr_t)&tl_ks[s].kb[j] : 0;
    }
}
/* a global sequence of any length the global block assigns: kept (its cells as an input's), read as the input was */
static int64_t tl_ar_gkeep(int64_t k, int64_t b, int64_t n, int64_t c, int64_t at) {
    tl_seq *q = &tl_sq[k]; tl_kb *kb = (tl_kb *)(intptr_t)(q->kept = tl_ar_keep(q->kept, b, n, c, at));
    q->data = kb ? &kb->d[0].r : q->data; q->len = kb ? kb->n : 0; return 0;
}
/* a narrow int (8, 16, 32 bits) compared with an int64 (a global, a constant) in the narrow width: 2-8x the lanes */
#define TL_NCMP(B) static inline int##B##_t tl_nc##B(int64_t b) { return b < INT##B##_MIN ? INT##B##_MIN : b > INT##B##_MAX ? INT##B##_MAX : (int##B##_t)b; } \
    static inline int tl_ge##B(int##B##_t a, int64_t b) { return (a >= tl_nc##B(b)) & (b <= INT##B##_MAX); } \
    static inline int tl_gt##B(int##B##_t a, int64_t b) { return (a > tl_nc##B(b)) | (b < INT##B##_MIN); } \
    static inline int tl_eq##B(int##B##_t a, int64_t b) { return (a == (int##B##_t)b) & (b == (int##B##_t)b); }
TL_NCMP(8) TL_NCMP(16) TL_NCMP(32)
static inline int64_t tl_iabs(int64_t a) { return a < 0 ? tl_isub(0, a) : a; }
static inline int64_t tl_imin(int64_t a, int64_t b) { return b < a ? b : a; }
static inline int64_t tl_imax(int64_t a, int64_t b) { return b > a ? b : a; }
static inline int64_t tl_iclamp(int64_t lo, int64_t hi, int64_t x) { return x <= lo ? lo : hi <= x ? hi : x; }
static inline double tl_z0(double s) { return s == 0 ? 0.0 : s; }  /* 0 - b, b + 0, b - -0 (strands.py _ZERO_SUMS): GCC 12 folds 0.0 - fabs(x) to -0 */
static inline double tl_min(double a, double b) { return b < a ? b : a; }  /* std::min and max, as diderotc's C++: NaN only where a is */
static inline double tl_max(double a, double b) { return a < b ? b : a; }
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
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8 && defined(__AVX512BW__)  /* loops in lanes: 512-bit
   vectors where the target has them (gcc's default is 256) */
#define TL_WIDE __attribute__((target("prefer-vector-width=512")))
#else
#define TL_WIDE
#endif
#if defined(__GNUC__) && !defined(__clang__)  /* floor and selects vectorized (FP flags ignored: no value changes);
   no SLP, which fuses a multiply with an alternating add and subtract (vfmaddsub) even under -ffp-contract=off */
#define TL_NOTRAP __attribute__((optimize("no-trapping-math")))
#define TL_NOSLP __attribute__((optimize("no-tree-slp-vectorize")))
#define TL_CLATTR TL_WIDE __attribute__((optimize("no-trapping-math", "no-tree-slp-vectorize")))
#else
#define TL_NOTRAP
#define TL_NOSLP
#define TL_CLATTR
#endif
#if defined(__GNUC__) && !defined(__clang__)  /* tl_bk_fill: its loops across a block's lanes stay whole (gcc's
   unroll-and-jam of the offsets' loop left them scalar) */
#define TL_NOJAM TL_WIDE __attribute__((optimize("no-loop-unroll-and-jam")))
#else
#define TL_NOJAM
#endif
#define TL_LATE (INT64_MAX - 1)  /* the place of a step's global block and stabilize (after every update) */
static void tl_keep(int64_t k1, int64_t k2, int64_t f) {  /* failure f at place (k1, k2): kept where the lowest */
    #pragma omp critical (tl_err)
    if ((tl_err_flag & 7) != 3 && (tl_err_flag & 7) != 5  /* (no memory, too many births: not replaced) */
        && (!tl_err_flag || k1 < tl_err_k1 || (k1 == tl_err_k1 && k2 < tl_err_k2))) {
        tl_err_flag = f; tl_err_k2 = k2; __atomic_store_n(&tl_err_k1, k1, __ATOMIC_RELAXED);
    }
}
static int64_t tl_take(void) { int64_t *f = &tl_tf[TL_TID()].v, v = *f; *f = 0; return v; }
TL_OUTLINE void tl_claim(int64_t k1, int64_t k2) { int64_t f = tl_take(); if (f) tl_keep(k1, k2, f); }
/* a solo strand's step u goes on: its failure at step u - 1 claimed, and no failure kept at an earlier step */
TL_OUTLINE int tl_go(int64_t u, int64_t i) { tl_claim(u - 1, i); return u <= __atomic_load_n(&tl_err_k1, __ATOMIC_RELAXED); }
static int64_t *tl_fails;  /* a permuted run's failures by strand at two threads or more (its walk claims them in order) */
TL_OUTLINE void tl_mark(int64_t i, int64_t n) {
    int64_t f = tl_take(); if (!f) return;
    #pragma omp critical (tl_err)
    if (!tl_fails) tl_fails = calloc((size_t)n, sizeof *tl_fails);
    if (tl_fails) tl_fails[i] = f; else tl_keep(0, i, f);
}
static void tl_err_reset(void) {
    if (tl_err_any) memset(tl_tf, 0, sizeof tl_tf);
    free(tl_fails); tl_fails = 0;
    tl_err_flag = 0; tl_err_up = 0; tl_err_k1 = INT64_MAX; tl_err_k2 = 0;
}
static int64_t tl_err_settle(void) {  /* the error to report, failures no driver claimed kept after the claimed ones */
    if (tl_err_any) for (int t = 0; t < 256; t++) if (tl_tf[t].v) { tl_keep(INT64_MAX, t, tl_tf[t].v); tl_tf[t].v = 0; }
    return tl_err_flag;
}
/* the strands active (0) and dead (2), counted in byte lanes 192 at a time (three 64-byte vectors) */
TL_WIDE static void tl_count(const int8_t *status, int64_t n, int64_t *active, int64_t *dead) {
    int64_t a = 0, d = 0;
    for (int64_t i0 = 0; i0 < n; i0 += 192) {
        uint8_t ac = 0, dc = 0; int64_t e = n - i0 < 192 ? n : i0 + 192;
        for (int64_t i = i0; i < e; i++) { ac += status[i] == 0; dc += status[i] == 2; }
        a += ac; d += dc;
    }
    *active = a; *dead = d;
}
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
static inline double tl_nrm(double x, double n) { return x * (1 / n); }  /* normalize: Diderot's reciprocal */
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
/* a real output of m components (Run.state): rows[0..m) of T (n columns) for the strands cols[0..count) (NULL: all),
   each strand's m values together, by blocks whose out stays in L1 (docs/performance.md: numpy's strided copy was slower) */
void tl_out_real(const double *T, int64_t n, const int64_t *rows, int64_t m, const int64_t *cols, int64_t count, double *out) {
    for (int64_t q0 = 0; q0 < count; q0 += 1024)
        for (int64_t j = 0, e = count - q0 < 1024 ? count : q0 + 1024; j < m; j++)
            for (int64_t q = q0; q < e; q++) out[q * m + j] = T[rows[j] * n + (cols ? cols[q] : q)];
}
