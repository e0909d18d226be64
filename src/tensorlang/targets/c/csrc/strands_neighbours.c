// strands_neighbours.c: the neighbour queries of strand programs with sphere queries (strands.py);
// macros and fills: docs/diderot-compiled.md.
static double *tl_R0; static int64_t *tl_I0; static int8_t *tl_S0;
/* the positions the step reads: the snapshot's, or the state's own where no strand moves (TL_STILL) */
static const double *tl_RP;
/* declares p, strand j's position (two statements: only where a block's braces hold it) */
#define TL_POS(p, n, j) double p[3] = {0, 0, 0}; for (int a_ = 0; a_ < TL_D; a_++) p[a_] = tl_RP[tl_posrow[a_] * (n) + (j)]
static double tl_grid_h(const double *gr, const int64_t *gi);
static double *tl_gpos;
static int64_t *tl_gstart, *tl_gorder, *tl_gcell, tl_gcap, tl_gocap, tl_gpcap, tl_gccap, tl_gdim[3] = {1, 1, 1}, tl_gstride[3]; static double tl_gmin[3], tl_gh; static int tl_gok;
static __thread int64_t *tl_nbuf; static __thread int64_t tl_ncap;
/* room for one more neighbour in the thread's buffer (*buf, *cap: the caller's copies of tl_nbuf, tl_ncap) */
static int tl_nb_grow(int64_t **buf, int64_t *cap) {
    int64_t nc = 2 * *cap + 64; int64_t *nb = realloc(*buf, sizeof(int64_t) * (size_t)nc);
    if (!nb) { tl_err_flag = 3; return 0; }
    *buf = tl_nbuf = nb; *cap = tl_ncap = nc;
    return 1;
}
static int64_t *tl_P0, tl_n0;
/* p (cap elements) made room for need elements (its contents lost): 0 where memory runs out */
#define TL_GROW(p, cap, need) ((need) > (cap) ? (free(p), (p) = malloc(sizeof *(p) * (size_t)(need)), (cap) = (p) ? (need) : 0) : 0, (need) <= (cap))
/* neighbours in the order of the strands at the step's start (Diderot's, where it permutes them) */
static int tl_cmp64(const void *a, const void *b) {
    int64_t x_ = *(const int64_t *)a, y_ = *(const int64_t *)b;
#if TL_INDIRECT_KEY
    return (tl_P0[x_] > tl_P0[y_]) - (tl_P0[x_] < tl_P0[y_]);
#else
    return (x_ > y_) - (x_ < y_);
#endif
}
/* the neighbours in the order of their keys */
static void tl_nb_sort(int64_t *buf, int64_t len) {
    if (len > 32) qsort(buf, (size_t)len, sizeof(int64_t), tl_cmp64);
    else if (len > 1) {  /* a few neighbours (the usual case): each one's place by counting the smaller keys (distinct), no branch */
        int64_t t_[32], k; memcpy(t_, buf, sizeof(int64_t) * (size_t)len);
        for (int64_t p = 0; p < len; p++) { k = 0; for (int64_t q = 0; q < len; q++) k += tl_cmp64(&t_[q], &t_[p]) < 0; buf[k] = t_[p]; }
    }
}
static void tl_nb_build(int64_t n, double h) {
    int dense = h == -1.0; tl_gok = 0;  /* the radius depends on the strand: a cell size from the density */
    if (!dense && (!(h > 0) || !isfinite(h))) return;
    double mn[3] = {0, 0, 0}, mx[3] = {0, 0, 0}; int64_t cnt = 0;
    for (int64_t j = 0; j < n; j++) if (tl_S0[j] != 2 && (TL_FIN(n, j))) {
        for (int a = 0; a < TL_D; a++) {
            double c = tl_RP[tl_posrow[a] * n + j]; if (!cnt || c < mn[a]) mn[a] = c; if (!cnt || c > mx[a]) mx[a] = c;
        }
        cnt++;
    }
    if (dense) {
        double vol = 1; int k = 0;
        for (int a = 0; a < TL_D; a++) if (mx[a] > mn[a]) { vol *= mx[a] - mn[a]; k++; }
        h = cnt > 0 && k > 0 ? pow(vol / (double)cnt, 1.0 / k) : 1.0;
        if (!(h > 0) || !isfinite(h)) h = 1.0;
    }
    /* cells of the query radius, doubled while the bounding box would hold more than 16 cells a strand */
    for (int a = 0; a < TL_D; a++) if (!isfinite(mx[a] - mn[a])) return;  /* (no grid spans it: the search tests every strand) */
    double total;
    for (;; h *= 2) {
        total = 1;
        for (int a = 0; a < TL_D; a++) total *= floor((mx[a] - mn[a]) / h) + 1;
        if (total <= 16.0 * (double)cnt + 4096) break;
    }
    for (int a = 0; a < 3; a++) { tl_gdim[a] = a < TL_D ? (int64_t)(floor((mx[a] - mn[a]) / h) + 1) : 1; tl_gmin[a] = mn[a]; }
    tl_gstride[2] = 1; tl_gstride[1] = tl_gdim[2]; tl_gstride[0] = tl_gdim[1] * tl_gdim[2]; tl_gh = h;
    int64_t cells = (int64_t)total;
    /* the grid's arrays kept from step to step (new ones cost page faults); the order and positions padded by 4 zeros */
    if (!TL_GROW(tl_gstart, tl_gcap, cells + 1) | !TL_GROW(tl_gorder, tl_gocap, n + 4) | !TL_GROW(tl_gpos, tl_gpcap, TL_D * (n + 4))
        | !TL_GROW(tl_gcell, tl_gccap, n + 1)) return;  /* (the search then tests every strand) */
    memset(tl_gstart, 0, sizeof(int64_t) * (size_t)(cells + 1));
    for (int64_t j = 0; j < n; j++) if ((tl_gcell[j] = tl_S0[j] != 2 && (TL_FIN(n, j)) ? TL_CELL(n, j) : -1) >= 0) tl_gstart[tl_gcell[j] + 1]++;
    for (int64_t c = 0; c < cells; c++) tl_gstart[c + 1] += tl_gstart[c];
    /* the strands in cell order, each cell's ascending: a cell's start moves to its end, then back */
    for (int64_t j = 0; j < n; j++) if (tl_gcell[j] >= 0) tl_gorder[tl_gstart[tl_gcell[j]]++] = j;
    memmove(tl_gstart + 1, tl_gstart, sizeof(int64_t) * (size_t)cells); tl_gstart[0] = 0;
    /* the positions in the grid's order: a query reads its candidates' one after another */
    for (int64_t m = 0; m < cnt; m++) for (int a = 0; a < TL_D; a++) tl_gpos[TL_D * m + a] = tl_RP[tl_posrow[a] * n + tl_gorder[m]];
    memset(tl_gorder + cnt, 0, 4 * sizeof(int64_t)); memset(tl_gpos + TL_D * cnt, 0, TL_D * 4 * sizeof(double));
    tl_gok = 1;
}
/* Diderot's test (the squared distance summed in float, strictly below r2), decided in double where the sum
   lies farther from r2 than the three roundings to float can move it (1e-6 of it) */
static inline int tl_near(const double *p, const double *c, double r2, int fast) {
    double e_ = TL_D2E(p, c);
    return (e_ < 0.999999 * r2 || e_ > 1.000001 * r2) && fast ? e_ < r2 : (TL_D2(p, c)) < r2;
}
/* the candidates m .. m + 3 of the grid's order (those before m1) within r of c: tested without a branch on the
   outcome (the order and positions padded), tl_near where a sum is too close to r2 to decide */
static inline void tl_near4(int64_t m, int64_t m1, const double *c, double r2, int fast, int *ok) {
    int amb = !fast;
    for (int u = 0; u < 4; u++) {
        const double *p = tl_gpos + TL_D * (m + u); double e_ = TL_D2E(p, c);
        ok[u] = (e_ < r2) & (m + u < m1); amb |= (e_ >= 0.999999 * r2) & (e_ <= 1.000001 * r2) & (m + u < m1);
    }
    if (amb) for (int u = 0; u < 4; u++) ok[u] = m + u < m1 && tl_near(tl_gpos + TL_D * (m + u), c, r2, fast);
}
static int64_t tl_nb_search(int64_t n, int64_t i, const double *c, double r, const int64_t **out) {
    int64_t len = 0, *buf = tl_nbuf, cap = tl_ncap;
    *out = buf;
    for (int a = 0; a < TL_D; a++) if (!isfinite(c[a])) return 0;
    if (!(r >= 0)) return 0;
    double r2 = r * r;
    int fast = r2 > 1e-30 && r2 < 1e30;
    if (!tl_gok) {
        for (int64_t j = 0; j < n; j++) {
            TL_POS(p, n, j);
            if (j != i && tl_S0[j] != 2 && tl_near(p, c, r2, fast) && (len < cap || tl_nb_grow(&buf, &cap))) buf[len++] = j;
            else if (tl_err_flag == 3) return 0;
        }
    } else {
        int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
        for (int a = 0; a < TL_D; a++) {
            double rr = r * (1 + 1e-6) + 1e-300, l = floor((c[a] - rr - tl_gmin[a]) / tl_gh), h = floor((c[a] + rr - tl_gmin[a]) / tl_gh);
            if (h < 0 || l > (double)(tl_gdim[a] - 1)) return 0;
            lo[a] = l < 0 ? 0 : (int64_t)l; hi[a] = h > (double)(tl_gdim[a] - 1) ? tl_gdim[a] - 1 : (int64_t)h;
        }
        const int64_t *gs = tl_gstart, *go = tl_gorder;  /* a column of cells: one run of candidates */
        for (int64_t x = lo[0]; x <= (TL_D > 1 ? hi[0] : lo[0]); x++) for (int64_t y = lo[1]; y <= (TL_D > 2 ? hi[1] : lo[1]); y++) {
            int64_t cl = (TL_D > 1 ? x * tl_gstride[0] : 0) + (TL_D > 2 ? y * tl_gstride[1] : 0);
            int64_t m0 = gs[cl + lo[TL_D - 1]], m1 = gs[cl + hi[TL_D - 1] + 1];
            while (len + (m1 - m0) + 4 > cap) if (!tl_nb_grow(&buf, &cap)) return 0;
            for (int64_t m = m0; m < m1; m += 4) {
                int ok[4]; tl_near4(m, m1, c, r2, fast, ok);
                for (int u = 0; u < 4; u++) { buf[len] = go[m + u]; len += ok[u] & (go[m + u] != i); }
            }
        }
    }
    *out = buf;
    tl_nb_sort(buf, len);
    return len;
}
#if TL_STILL
/* No strand moves: the answers of the queries around pos kept from the first step, each strand's a pattern
   of offsets j - i (strands on a grid share a handful); a run whose strands keep dying stops keeping them */
static int32_t *tl_kpid[TL_SITES]; static int64_t *tl_kstart[TL_SITES], *tl_koff[TL_SITES], tl_klong[TL_SITES];
/* each block of TL_BK strands' runs of one pattern (tl_kbs: the block's first run), kept with the
   patterns; full: the run's pattern read across the whole block stays within the strands */
typedef struct { int32_t p; int16_t t, e; int8_t full; } tl_kseg;
static int64_t *tl_kbs[TL_SITES]; static tl_kseg *tl_krn[TL_SITES];
static int64_t tl_kn = -1, tl_kdead = -1, tl_krun = -1, tl_run, tl_kresets, tl_kprev = -1;
static int tl_gbuilt, tl_kall; static double tl_ghw;  /* the spatial grid, made only where some strand searches */
static void tl_grid_need(int64_t n) { if (!tl_gbuilt) { tl_gbuilt = 1; tl_nb_build(n, tl_ghw); } }
void tl_set_run(int64_t run) { tl_run = run; }
/* prev: the run whose creation placed its strands where this run's places them (Run.prev), or -1 */
void tl_set_prev(int64_t prev) { tl_kprev = prev; }
/* a site's arrays of one strand count (pid, start, bs, rn), kept from call to call where large enough
   (bytes, by TL_GROW): new ones are page faults of every page written, each call */
static char *tl_kpool[TL_SITES][4]; static int64_t tl_kpsz[TL_SITES][4];
static void *tl_kget(int k, int s, size_t bytes) { return TL_GROW(tl_kpool[k][s], tl_kpsz[k][s], (int64_t)bytes) ? tl_kpool[k][s] : 0; }
static void tl_keep_free(void) {
    for (int k = 0; k < TL_SITES; k++) {
        free(tl_koff[k]);
        tl_kpid[k] = 0; tl_kstart[k] = 0; tl_koff[k] = 0; tl_kbs[k] = 0; tl_krn[k] = 0;
    }
}
static uint64_t tl_khash(const int64_t *o, int64_t len) {
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)len;
    for (int64_t k = 0; k < len; k++) h = (h ^ (uint64_t)o[k]) * 1099511628211ULL;
    return h ^ (h >> 29);
}
/* Strands on a lattice (positions an affine map of the grid's iterators, within dev): a neighbour is at most
   R = r (1 + 1e-6) + 2 sqrt(d) dev away, among a box of grid offsets (tl_lbd per axis, tl_lbo as j - i) */
#define TL_LBOX 343
static int64_t tl_lbd[TL_LBOX][3], tl_lbo[TL_LBOX], tl_lK[3]; static int tl_lnb, tl_lall; static char tl_lsure[TL_LBOX];
static int tl_lattice(int64_t n, double r) {
    int nd = (int)tl_gnd, d = TL_D;
    int64_t st[3] = {0, 0, 0}, tot = 1, it[3] = {0, 0, 0}, K[3] = {0, 0, 0};
    if (nd < 1 || nd > d || !(r >= 0) || !isfinite(r) || n < 2) return 0;
    for (int a = nd - 1; a >= 0; a--) { st[a] = tot; tot *= tl_gext[a]; }
    if (tot != n) return 0;
    double o[3], u[3][3] = {{0}}, len[3], dev = 0, scale = r;
    for (int c = 0; c < d; c++) o[c] = tl_RP[tl_posrow[c] * n];
    for (int a = 0; a < nd; a++) for (int c = 0; c < d; c++) if (tl_gext[a] > 1) u[a][c] = tl_RP[tl_posrow[c] * n + st[a]] - o[c];
    /* a row of the grid at a time (its last axis), 8 lanes across it: the largest deviation and
       |p|, none of them not finite */
    int L = nd - 1;
    for (int64_t row = 0, cols = tl_gext[L]; row < n / cols; row++) {
        double ev[8] = {0}, sv[8] = {0}; int64_t bv[8] = {0};
        for (int c = 0; c < d; c++) {
            double qc = o[c], uc = u[L][c];
            for (int a = 0; a < L; a++) qc += (double)it[a] * u[a][c];
            const double *P = tl_RP + tl_posrow[c] * n + row * cols;
            int64_t c0 = 0;
            for (; c0 + 8 <= cols; c0 += 8) {
                _Pragma("omp simd")
                for (int l = 0; l < 8; l++) {
                    double p = P[c0 + l], e = fabs(p - (qc + (double)(c0 + l) * uc)), ap = fabs(p);
                    bv[l] |= !(e < INFINITY); ev[l] = e > ev[l] ? e : ev[l]; sv[l] = ap > sv[l] ? ap : sv[l];
                }
            }
            for (; c0 < cols; c0++) {
                double p = P[c0], e = fabs(p - (qc + (double)c0 * uc)), ap = fabs(p);
                bv[0] |= !(e < INFINITY); ev[0] = e > ev[0] ? e : ev[0]; sv[0] = ap > sv[0] ? ap : sv[0];
            }
        }
        for (int l = 0; l < 8; l++) { if (bv[l]) return 0; if (ev[l] > dev) dev = ev[l]; if (sv[l] > scale) scale = sv[l]; }
        for (int a = L - 1; a >= 0 && ++it[a] == tl_gext[a]; a--) it[a] = 0;
    }
    dev += 1e-12 * scale;
    if (dev > 1e-6 * scale) return 0;
    double R = r * (1 + 1e-6) + 2 * sqrt((double)d) * dev;
    int64_t count = 1;
    for (int a = 0; a < nd; a++) {
        len[a] = 0;
        for (int c = 0; c < d; c++) len[a] += u[a][c] * u[a][c];
        len[a] = sqrt(len[a]);
        for (int b = 0; b < a; b++) {
            double dot = 0;
            for (int c = 0; c < d; c++) dot += u[a][c] * u[b][c];
            if (!(fabs(dot) <= 1e-12 * len[a] * len[b])) return 0;
        }
        if (tl_gext[a] > 1 && !(len[a] > 2 * dev)) return 0;
        K[a] = tl_gext[a] > 1 ? (int64_t)fmin(floor(R / len[a]), (double)(tl_gext[a] - 1)) : 0;
        count *= 2 * K[a] + 1;
        if (count > TL_LBOX) return 0;
    }
    tl_lnb = 0; tl_lall = 1;
    for (int a = 0; a < 3; a++) tl_lK[a] = K[a];
    for (int64_t b = 0; b < count; b++) {  /* the box in row-major order: ascending j - i */
        int64_t rem = b, dd[3] = {0, 0, 0}, ofs = 0; double s2 = 0; int zero = 1;
        for (int a = nd - 1; a >= 0; a--) {
            dd[a] = rem % (2 * K[a] + 1) - K[a]; rem /= 2 * K[a] + 1;
            s2 += (double)dd[a] * len[a] * (double)dd[a] * len[a]; ofs += dd[a] * st[a]; zero = zero && dd[a] == 0;
        }
        if (zero || s2 > R * R * (1 + 1e-6)) continue;
        for (int a = 0; a < 3; a++) tl_lbd[tl_lnb][a] = dd[a];
        /* sure: nearer than r by more than the test's roundings wherever the strands lie */
        double far = sqrt(s2) * (1 + 1e-12) + 2 * sqrt((double)d) * dev;
        tl_lsure[tl_lnb] = r * r > 1e-30 && r * r < 1e30 && far * far < r * r * (1 - 1e-5);
        tl_lall = tl_lall && tl_lsure[tl_lnb];
        tl_lbo[tl_lnb++] = ofs;
    }
    return 1;
}
/* the patterns of query site k (radius r); none kept past 64 offsets a strand or out of memory */
static void tl_keep_site(int k, int64_t n, double r, const int8_t *status, int64_t dead) {
    int64_t npat = 0, nofs = 0, cap = 1024, hcap = 1024, limit = 64 * n + 4096, err0 = tl_err_flag;
    int64_t it[3] = {0, 0, 0};
    double r2 = r * r; int fast = r2 > 1e-30 && r2 < 1e30, lat = tl_lattice(n, r);
    if (!lat) tl_grid_need(n);
    int32_t *pid = tl_kget(k, 0, sizeof(int32_t) * (size_t)(n + 1)), *tab = malloc(sizeof(int32_t) * (size_t)hcap);
    int64_t *start = tl_kget(k, 1, sizeof(int64_t) * (size_t)(n + 2)), *off = malloc(sizeof(int64_t) * (size_t)cap);
    int ok = pid && tab && start && off;
    int32_t last = -1;
    for (int64_t h = 0; ok && h < hcap; h++) tab[h] = -1;
    if (ok) start[0] = 0;
    /* no strand dead and every offset of the box surely near: a strand the box fits around has pattern 0 */
    int inner = ok && lat && tl_lall && dead == 0 && tl_lnb <= cap;
    if (inner) {
        memcpy(off, tl_lbo, sizeof(int64_t) * (size_t)tl_lnb);
        tab[tl_khash(off, tl_lnb) & (uint64_t)(hcap - 1)] = 0; nofs = tl_lnb; start[npat = 1] = nofs;
    }
    for (int64_t i = 0; ok && i < n; i++) {
        int L = (int)tl_gnd - 1;
        if (inner && it[L] == tl_lK[L] && tl_gext[L] - 2 * tl_lK[L] > 1) {  /* a row's inner strands at once */
            int fo = 1;
            for (int a = 0; a < L && fo; a++) fo = it[a] >= tl_lK[a] && it[a] < tl_gext[a] - tl_lK[a];
            int64_t m = fo ? tl_gext[L] - 2 * tl_lK[L] - 1 : 0;  /* (the last one: below) */
            for (int64_t q = 0; q < m; q++) pid[i + q] = status[i + q] == 0 ? 0 : -1;
            i += m; it[L] += m;
        }
        pid[i] = -1;
        int fits = inner;
        for (int a = 0; a < (int)tl_gnd && fits; a++) fits = it[a] >= tl_lK[a] && it[a] < tl_gext[a] - tl_lK[a];
        if (status[i] != 0 || fits) {
            if (fits && status[i] == 0) pid[i] = 0;
            for (int a = (int)tl_gnd - 1; lat && a >= 0 && ++it[a] == tl_gext[a]; a--) it[a] = 0;
            continue;
        }
        TL_POS(c, n, i);
        const int64_t *nb = 0; int64_t len = lat ? tl_lnb : tl_nb_search(n, i, c, r, &nb);  /* (at most, on a lattice) */
        if (tl_err_flag || nofs + len > limit) { ok = 0; break; }
        if (nofs + len > cap) {
            int64_t nc = 2 * (nofs + len); int64_t *no = realloc(off, sizeof(int64_t) * (size_t)nc);
            if (!no) { ok = 0; break; }
            off = no; cap = nc;
        }
        int64_t *o = off + nofs;  /* the candidate pattern, where a new one would go */
        if (lat) {  /* the box's offsets in the grid (ascending j), each tested as the search would */
            len = 0;
            for (int b = 0; b < tl_lnb; b++) {
                int in = 1;
                for (int a = 0; a < (int)tl_gnd; a++) in = in && (uint64_t)(it[a] + tl_lbd[b][a]) < (uint64_t)tl_gext[a];
                int64_t j = i + tl_lbo[b];
                if (!in || tl_S0[j] == 2) continue;
                double q[3] = {0, 0, 0};
                for (int a = 0; a < TL_D && !tl_lsure[b]; a++) q[a] = tl_RP[tl_posrow[a] * n + j];
                if (tl_lsure[b] || tl_near(q, c, r2, fast)) o[len++] = tl_lbo[b];
            }
            for (int a = (int)tl_gnd - 1; a >= 0 && ++it[a] == tl_gext[a]; a--) it[a] = 0;
        } else for (int64_t q = 0; q < len; q++) o[q] = nb[q] - i;
        if (last >= 0 && start[last + 1] - start[last] == len) {  /* the previous strand's pattern (a row of a grid shares it) */
            const int64_t *pl = off + start[last]; int64_t q = 0;
            while (q < len && pl[q] == o[q]) q++;
            if (q == len) { pid[i] = (int32_t)last; continue; }
        }
        uint64_t h = tl_khash(o, len) & (uint64_t)(hcap - 1);
        for (;; h = (h + 1) & (uint64_t)(hcap - 1)) {
            int32_t p = tab[h];
            if (p < 0 || (start[p + 1] - start[p] == len && !memcmp(off + start[p], o, sizeof(int64_t) * (size_t)len))) break;
        }
        if (tab[h] >= 0) { pid[i] = last = tab[h]; continue; }
        tab[h] = (int32_t)npat; pid[i] = last = (int32_t)npat; nofs += len; start[++npat] = nofs;
        if (2 * npat > hcap) {  /* the table grows: the patterns hashed again */
            int64_t nh = 4 * hcap; int32_t *nt = malloc(sizeof(int32_t) * (size_t)nh);
            if (!nt) { ok = 0; break; }
            for (int64_t g = 0; g < nh; g++) nt[g] = -1;
            for (int64_t p = 0; p < npat; p++) {
                uint64_t g = tl_khash(off + start[p], start[p + 1] - start[p]) & (uint64_t)(nh - 1);
                while (nt[g] >= 0) g = (g + 1) & (uint64_t)(nh - 1);
                nt[g] = (int32_t)p;
            }
            free(tab); tab = nt; hcap = nh;
        }
    }
    free(tab);
    int64_t nblk = n / TL_BK + 1, nrun = 0, *bs = ok ? tl_kget(k, 2, sizeof(int64_t) * (size_t)(nblk + 1)) : 0;
    tl_kseg *rn = ok ? tl_kget(k, 3, sizeof(tl_kseg) * (size_t)(n + 1)) : 0;
    if (!bs || !rn) { free(off); tl_err_flag = err0; return; }
    for (int64_t b = 0; b < nblk; b++) {  /* each block's runs, found once */
        int64_t i0 = b * TL_BK, m = n - i0 < TL_BK ? n - i0 : TL_BK;
        int d = m < TL_BK;  /* (a block of one pattern: one run, found by a loop in lanes) */
        if (!d) for (int u = 1; u < TL_BK; u++) d |= pid[i0 + u] != pid[i0];
        bs[b] = nrun;
        for (int64_t t = 0, e; t < m; t = e) {
            int32_t p = pid[i0 + t];
            for (e = d ? t + 1 : m; e < m && pid[i0 + e] == p; e++) ;
            if (p < 0) continue;
            /* full: a run of a quarter block or more, folded across the block where that reads within the strands */
            int full = m == TL_BK && 4 * (e - t) >= TL_BK;
            for (int64_t q = start[p]; full && q < start[p + 1]; q++) full = i0 + off[q] >= 0 && i0 + off[q] + TL_BK <= n;
            rn[nrun].p = p; rn[nrun].t = (int16_t)t; rn[nrun].e = (int16_t)e; rn[nrun].full = (int8_t)full; nrun++;
        }
    }
    bs[nblk] = nrun; tl_kpid[k] = pid; tl_kstart[k] = start; tl_koff[k] = off; tl_kbs[k] = bs; tl_krn[k] = rn;
    tl_klong[k] = 0;  /* the longest pattern */
    for (int64_t p = 0; p < npat; p++) if (start[p + 1] - start[p] > tl_klong[k]) tl_klong[k] = start[p + 1] - start[p];
}
/* at a super-step's start: the grid and the kept answers, found again where strands were born or died since */
static void tl_nb_step(int64_t n, int64_t dead, const double *gr, const int64_t *gi, const int8_t *status, int threads) {
    if (tl_kn == n && tl_kdead == dead && tl_krun == tl_run) return;
    /* the answers of the run before (all its strands active) serve a run placed as it was while all are active */
    int64_t act, died; tl_count(status, n, &act, &died);
    int all = dead == 0 && act == n;
    int same = tl_krun >= 0 && tl_krun == tl_kprev && tl_krun != tl_run && tl_kall && tl_kn == n && all;
    tl_kresets = tl_krun == tl_run ? tl_kresets + 1 : 0;
    tl_kn = n; tl_kdead = dead; tl_krun = tl_run;
    if (!same) tl_keep_free();
    tl_gbuilt = 0; tl_gok = 0; tl_ghw = tl_grid_h(gr, gi);
    if (!same && tl_kresets < 3 && n < INT32_MAX) {
        tl_kall = all;
        TL_FILL_KEEP
    }
    for (int k = 0; k < TL_SITES; k++) if (!tl_kpid[k] || !TL_ALLKEPT) tl_grid_need(n);  /* some strand searches */
    (void)gr; (void)gi; (void)status; (void)threads;
}
static inline int64_t tl_nb_kept(int k, int64_t i, const int64_t **out) {
    const int32_t *pid = tl_kpid[k];
    if (!pid || pid[i] < 0) return -1;
    const int64_t *st = tl_kstart[k] + pid[i];
    *out = tl_koff[k] + st[0];
    return st[1] - st[0];
}
static inline int64_t tl_nb_query(int v, int64_t n, int64_t i, const double *c, double r, const int64_t **out) {
    (void)v; return tl_nb_search(n, i, c, r, out);
}
#else
/* Strands move: each query site keeps a Verlet list per strand (within r (1 + TL_VM) of its centre), valid while
   every strand stays within TL_VM r / 2 of its place at the epoch's start (tl_vpos, tl_vD: the most moved) */
#define TL_VM 0.3
typedef struct { const int64_t *p; int64_t len, ep; double cb[3], lim; } tl_vent;
typedef struct tl_vblk { struct tl_vblk *next; int64_t cap; int64_t e[]; } tl_vblk;
static tl_vent *tl_vls; static double *tl_vpos, tl_vD, tl_vh;
static int64_t tl_run, tl_vrun = -1, tl_vn = -1, tl_sn = -1, tl_vep = 1, tl_vsteps, tl_vresets, tl_vstored, tl_vmax;
static int tl_von, tl_voff, tl_vfull, tl_gstep; static tl_vblk *tl_vall;
static __thread tl_vblk *tl_vcur; static __thread int64_t tl_vused, tl_vcep;
void tl_set_run(int64_t run) { tl_run = run; }
void tl_set_prev(int64_t prev) { (void)prev; }
/* this super-step's grid, made by the first query that searches (one thread; the others wait) */
static void tl_grid_fresh(void) {
    if (__atomic_load_n(&tl_gstep, __ATOMIC_ACQUIRE)) return;
    #pragma omp critical (tl_grid)
    {
        if (!tl_gstep) { tl_nb_build(tl_sn, tl_vh); __atomic_store_n(&tl_gstep, 1, __ATOMIC_RELEASE); }
    }
}
static void tl_vfree(void) {
    while (tl_vall) { tl_vblk *b = tl_vall->next; free(tl_vall); tl_vall = b; }
    tl_vstored = 0; tl_vfull = 0; tl_vep++;
}
/* a copy of a list in the thread's current block (kept until the epoch ends); 0 past tl_vmax entries or memory */
static int64_t *tl_vstore(const int64_t *src, int64_t len) {
    if (tl_vcep != tl_vep) { tl_vcur = 0; tl_vcep = tl_vep; }
    if (!tl_vcur || tl_vused + len > tl_vcur->cap) {
        int64_t cap = len > 8192 ? len : 8192;
        if (__atomic_add_fetch(&tl_vstored, cap, __ATOMIC_RELAXED) > tl_vmax) return 0;
        tl_vblk *b = malloc(sizeof(tl_vblk) + sizeof(int64_t) * (size_t)cap);
        if (!b) return 0; else b->cap = cap;
        #pragma omp critical (tl_vlist)
        { b->next = tl_vall; tl_vall = b; }
        tl_vcur = b; tl_vused = 0;
    }
    int64_t *dst = tl_vcur->e + tl_vused;
    tl_vused += len; if (len) memcpy(dst, src, sizeof(int64_t) * (size_t)len);  /* (src may be NULL where len is 0) */
    return dst;
}
/* the strands of list L (m of them) that the search's test finds within r of c, written to buf:
   32 at a time, the double sums first (no branch on the outcome), Diderot's float test only
   where a sum is too close to r2 to decide, then the keepers */
static int64_t tl_vfilter(int64_t n, int64_t i, const int64_t *L, int64_t m, const double *c, double r2, int64_t *buf) {
    int64_t len = 0; double lo2 = 0.999999 * r2, hi2 = 1.000001 * r2;
    for (int64_t q0 = 0; q0 < m; q0 += 32) {
        const int64_t *Lq = L + q0; int64_t w = m - q0 < 32 ? m - q0 : 32; double e[32]; int amb = 0;
        for (int64_t q = 0; q < w; q++) {
            TL_POS(p, n, Lq[q]);
            double e_ = TL_D2E(p, c);
            e[q] = e_; amb |= (e_ >= lo2) & (e_ <= hi2);
        }
        if (amb) for (int64_t q = 0; q < w; q++) if (e[q] >= lo2 && e[q] <= hi2) {
            TL_POS(p, n, Lq[q]);
            e[q] = tl_near(p, c, r2, 1) ? 0.0 : INFINITY;
        }
        for (int64_t q = 0; q < w; q++) { int64_t j = Lq[q]; buf[len] = j; len += (e[q] < r2) & (j != i) & (tl_S0[j] != 2); }
    }
    return len;
}
/* An epoch's lists of every active strand (radius rl), each pair tested once (cells at least rl wide: 5 runs of
   cells after a strand's own), bucketed by neighbour, scattered by strand: ascending lists; 0 where it cannot */
#ifdef _OPENMP
int omp_in_parallel(void), omp_get_thread_num(void), omp_get_num_threads(void);
#else
static int omp_in_parallel(void) { return 0; } static int omp_get_thread_num(void) { return 0; } static int omp_get_num_threads(void) { return 1; }
#endif
#define TL_VT 64  /* the most threads that make an epoch's lists together */
static int32_t *tl_vpa[TL_VT], *tl_vtmp[TL_VT]; static int64_t tl_vpcap[TL_VT], tl_vnp[TL_VT], *tl_vcnt[TL_VT], tl_vccap[TL_VT], tl_vtcap[TL_VT];
static int64_t tl_vbep[TL_VSITES], *tl_vlist[TL_VSITES][TL_VT], tl_vlcap[TL_VSITES][TL_VT]; static int tl_vq[TL_VSITES];
static int tl_vbuild(int v, int64_t n, double r, int threads) {
    double rl = r * (1 + TL_VM), r2 = rl * rl;
    if (!tl_gok || !(rl * (1 + 1e-5) <= tl_gh) || !(r2 > 1e-30 && r2 < 1e30) || n >= INT32_MAX) return 0;
    int64_t Z = tl_gdim[2]; const int64_t *gs = tl_gstart, *go = tl_gorder; int bad = 0;
    for (int t = 0; t < (threads = threads < TL_VT ? threads : TL_VT); t++) tl_vnp[t] = 0;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1) reduction(|: bad)
    for (int64_t x = 0; x < tl_gdim[0]; x++) {
        int t = omp_get_thread_num(); int64_t np = tl_vnp[t];
        if (!bad) for (int64_t y = 0; y < tl_gdim[1]; y++) for (int64_t z = 0; z < Z; z++) {
            int64_t cl = x * tl_gstride[0] + y * tl_gstride[1] + z, r0[5], r1[5], nr = 0, zl = z > 0 ? z - 1 : 0, zh = z + 1 < Z ? z + 1 : z;
            for (int o = 0; o < 5 && gs[cl] < gs[cl + 1]; o++) {  /* its own cell (after the strand) and the next, then (0 1) (1 -1) (1 0) (1 1) */
                int64_t dx = o > 1, dy = o == 0 ? 0 : o == 1 ? 1 : o - 3, c0 = cl + dx * tl_gstride[0] + dy * tl_gstride[1] - z;
                if (x + dx < tl_gdim[0] && (uint64_t)(y + dy) < (uint64_t)tl_gdim[1]) { r0[nr] = o ? gs[c0 + zl] : -1; r1[nr++] = gs[c0 + zh + 1]; }
            }
            for (int64_t m = gs[cl]; m < gs[cl + 1]; m++) for (int64_t k = 0; k < nr; k++) {
                const double *c = tl_gpos + TL_D * m; int64_t m0 = r0[k] < 0 ? m + 1 : r0[k], m1 = r1[k];
                if (np + m1 - m0 > tl_vmax / threads) { bad = 1; goto out; }  /* (crowded strands: pairs grow as n^2; a thread's share of the cap) */
                int32_t *na = 2 * (np + m1 - m0 + 4) > tl_vpcap[t] ? realloc(tl_vpa[t], sizeof(int32_t) * (size_t)(8 * (np + m1 - m0) + 65536)) : 0;
                if (na) { tl_vpa[t] = na; tl_vpcap[t] = 8 * (np + m1 - m0) + 65536; } else if (2 * (np + m1 - m0 + 4) > tl_vpcap[t]) { bad = 1; goto out; }
                for (int64_t q = m0; q < m1; q += 4) {  /* 4 at a time as the search tests them */
                    int ok[4]; tl_near4(q, m1, c, r2, 1, ok);
                    for (int u = 0; u < 4; u++) { tl_vpa[t][2 * np] = (int32_t)go[m]; tl_vpa[t][2 * np + 1] = (int32_t)go[q + u]; np += ok[u]; }
                }
            }
        }
        out: tl_vnp[t] = np;
    }
    if (bad) return 0;
    /* each thread the lists of a range of strands (their pairs from every thread's) in its own arrays */
    #pragma omp parallel num_threads(threads) if (threads > 1) reduction(|: bad)
    do {
        int t = omp_get_thread_num(), nt = omp_get_num_threads(); int64_t lo = n * t / nt, w = n * (t + 1) / nt - lo, ne, *k1, *k2, *Lv; int32_t *P, *T;
        if (!TL_GROW(tl_vcnt[t], tl_vccap[t], n + w + 2) && (bad = 1)) break;
        memset(k1 = tl_vcnt[t], 0, sizeof(int64_t) * (size_t)(n + w + 2)); k2 = k1 + n + 1;  /* by neighbour; by strand (from lo) */
        for (int u = 0; u < threads; u++)  /* each pair twice: (strand P[k], neighbour P[k ^ 1]) for an active strand */
            for (int64_t k = 0; k < 2 * tl_vnp[u]; k++) if ((uint64_t)((P = tl_vpa[u])[k] - lo) < (uint64_t)w && tl_S0[P[k]] == 0) { k1[P[k ^ 1] + 1]++; k2[P[k] - lo + 1]++; }
        for (int64_t j = 0; j < n; j++) k1[j + 1] += k1[j];
        for (int64_t j = 0; j < w; j++) k2[j + 1] += k2[j];
        if (__atomic_add_fetch(&tl_vstored, ne = k2[w], __ATOMIC_RELAXED) > tl_vmax && (bad = 1)) break;
        if ((!TL_GROW(tl_vtmp[t], tl_vtcap[t], ne + 1) | !TL_GROW(tl_vlist[v][t], tl_vlcap[v][t], ne + 1)) && (bad = 1)) break;  /* (one more: no NULL + 0) */
        T = tl_vtmp[t]; Lv = tl_vlist[v][t];
        for (int u = 0; u < threads; u++)  /* the strands by neighbour */
            for (int64_t k = 0; k < 2 * tl_vnp[u]; k++) if ((uint64_t)((P = tl_vpa[u])[k] - lo) < (uint64_t)w && tl_S0[P[k]] == 0) T[k1[P[k ^ 1]]++] = P[k];
        for (int64_t j = 0, at = 0; j < n; j++) for (; at < k1[j]; at++) Lv[k2[T[at] - lo]++] = j;  /* (k2[i - lo]: then the end of i's list) */
        for (int64_t i = lo; i < lo + w; i++) if (tl_S0[i] == 0 && (TL_FIN(n, i))) {
            tl_vent *e = tl_vls + (int64_t)v * n + i;
            e->p = Lv + (i > lo ? k2[i - lo - 1] : 0); e->len = k2[i - lo] - (i > lo ? k2[i - lo - 1] : 0); e->ep = tl_vep; e->lim = rl * (1 - 1e-5) - tl_vD;
            for (int a = 0; a < 3; a++) e->cb[a] = a < TL_D ? tl_RP[tl_posrow[a] * n + i] : 0;
        }
    } while (0);
    return !bad;
}
static int64_t tl_nb_query(int v, int64_t n, int64_t i, const double *c, double r, const int64_t **out) {
    double r2 = r * r;
    int use = tl_von && !__atomic_load_n(&tl_vfull, __ATOMIC_RELAXED) && n == tl_sn && r >= 0 && r2 > 1e-30 && r2 < 1e29;
    for (int a = 0; a < TL_D; a++) use = use && isfinite(c[a]);
    if (!use) { tl_grid_fresh(); return tl_nb_search(n, i, c, r, out); }
    int qv = 1 + 2 * (tl_vsteps == 1); if ((__atomic_load_n(&tl_vq[v], __ATOMIC_RELAXED) & qv) != qv) __atomic_fetch_or(&tl_vq[v], qv, __ATOMIC_RELAXED);
    if (tl_vbep[v] != tl_vep && !omp_in_parallel()) { tl_grid_fresh(); tl_vbuild(v, n, r, 1); tl_vbep[v] = tl_vep; }  /* the epoch's first query: all lists */
    tl_vent *e = tl_vls + (int64_t)v * n + i;
    double room = e->lim - tl_vD - r * (1 + 1e-5), dc2 = 0;
    for (int a = 0; a < TL_D; a++) dc2 += (c[a] - e->cb[a]) * (c[a] - e->cb[a]);
    const int64_t *L = e->p; int64_t m = e->len;
    if (e->ep != tl_vep || !(room > 0 && dc2 < room * room)) {  /* the list made again, around c */
        tl_grid_fresh();
        double rl = r * (1 + TL_VM);
        const int64_t *nb; int64_t k = tl_nb_search(n, i, c, rl, &nb);
        if (tl_err_flag == 3) { *out = nb; return 0; }
        int64_t *kept = tl_vstore(nb, k);
        L = nb; m = k; e->ep = 0;
        if (!kept) __atomic_store_n(&tl_vfull, 1, __ATOMIC_RELAXED);  /* the lists too large: searches from now on */
        if (kept) {
            e->p = L = kept; e->len = k; e->ep = tl_vep; e->lim = rl * (1 - 1e-5) - tl_vD;
            for (int a = 0; a < 3; a++) e->cb[a] = a < TL_D ? c[a] : 0;
        }
    }
    int64_t *buf = tl_nbuf, cap = tl_ncap;
    while (m > cap) if (!tl_nb_grow(&buf, &cap)) { *out = buf; return 0; }
    int64_t len = tl_vfilter(n, i, L, m, c, r2, buf);  /* (in place where L is the buffer: writes trail reads) */
    if (TL_INDIRECT_KEY) tl_nb_sort(buf, len);  /* the keys' order may have changed since the list was made */
    *out = buf;
    return len;
}
/* at a super-step's start: the epoch kept while every living strand is within TL_VM r / 2 of its
   position at the epoch's start (a strand whose position is not finite, then and now, can be no
   neighbour), else a new one */
static void tl_nb_step(int64_t n, int64_t dead, const double *gr, const int64_t *gi, const int8_t *status, int threads) {
    (void)dead; (void)status;
    double h = tl_grid_h(gr, gi);
    __atomic_store_n(&tl_gstep, 0, __ATOMIC_RELEASE); tl_gok = 0; tl_sn = n;
    if (tl_run != tl_vrun) { tl_vrun = tl_run; tl_vsteps = 0; tl_vresets = 0; tl_voff = 0; tl_vn = -1; }
    tl_vsteps++;
    int on = !tl_voff && h > 0 && h * h > 1e-30 && h * h < 1e29 && n > 0
             && (double)n * (TL_VSITES * sizeof(tl_vent) + TL_D * sizeof(double)) < 268435456.0;
    if (on && n == tl_vn && tl_von) {
        double lim2 = 0.25 * TL_VM * TL_VM * h * h, most = 0; int keep = 1;
        for (int64_t j = 0; j < n && keep; j++) {
            if (tl_S0[j] == 2) continue;
            double s2 = 0; int fc = 1, fe = 1;
            for (int a = 0; a < TL_D; a++) {
                double x = tl_RP[tl_posrow[a] * n + j], y = tl_vpos[a * n + j];
                fc = fc && isfinite(x); fe = fe && isfinite(y); s2 += (x - y) * (x - y);
            }
            if (!fc && !fe) continue;
            if (!(s2 <= lim2)) keep = 0; else if (s2 > most) most = s2;
        }
        if (keep) { tl_vD = sqrt(most) * (1 + 1e-9) + 1e-300; threads = 1; goto team; }
    }
    tl_vfree(); tl_vD = 0;
    if (tl_vn >= 0) tl_vresets++;
    if (tl_vresets >= 3 && tl_vsteps < 2 * tl_vresets) on = 0, tl_voff = 1;  /* epochs of a step or two: no gain */
    if (on && n != tl_vn) {
        free(tl_vls); free(tl_vpos);
        tl_vls = calloc((size_t)n * TL_VSITES, sizeof(tl_vent)); tl_vpos = malloc(sizeof(double) * TL_D * (size_t)n);
        if (!tl_vls || !tl_vpos) { free(tl_vls); free(tl_vpos); tl_vls = 0; tl_vpos = 0; on = 0; }
    }
    if (on) for (int a = 0; a < TL_D; a++) memcpy(tl_vpos + a * n, tl_RP + tl_posrow[a] * n, sizeof(double) * (size_t)n);
    tl_von = on; tl_vn = on ? n : -1; tl_vh = on ? h * (1 + TL_VM) * (1 + 2e-5) : h; tl_vmax = 64 * n + 65536;
    team:  /* a new epoch's lists by the team, of the grid's radius (the query checks them), where the site was queried
              in the step before (tl_vq: 1; a run's first step: in the last run's first, 2) */
    for (int v = 0; v < TL_VSITES; v++) {
        if (threads > 1 && tl_von && tl_vq[v] & (tl_vsteps == 1 ? 2 : 1)) { tl_grid_fresh(); tl_vbuild(v, n, h, threads); tl_vbep[v] = tl_vep; }
        tl_vq[v] &= tl_vsteps == 1 ? 0 : 2;
    }
}
#endif
