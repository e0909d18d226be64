// strands_driver.c: tl_create, tl_finish and tl_steps, every strand program's driver (strands.py);
// its TL_* macros and fills: docs/diderot-compiled.md.
#define TL_TILE 8  /* a tile of the solo driver: TL_TILE x TL_TILE strands */
static int64_t tl_cols;  /* the grid's last extent: the tiles' width (TL_SOLO) */
#define TL_CHUNKS 16  /* a parallel loop's chunks a thread, each a run of neighbouring blocks or tiles (one a chunk
   paid a shared counter's line per 64 strands; neighbouring tiles on two threads shared their state's lines) */
static inline int64_t tl_chunk(int64_t m, int threads) { int64_t c = m / ((int64_t)threads * TL_CHUNKS); return c > 1 ? c : 1; }
static int tl_fixed; void tl_set_fixed(int f) { tl_fixed = f; }  /* 1: the threads asked for (strands.FIXED_TEAM) */
#ifdef _OPENMP  /* else a run's team: the free cores (tl_threads.h), for the steps the faster of one thread and the team */
static tl_choice tl_steps_choice[64];  /* by the active strands' power of two: a small run's lesson is not a large one's */
#endif
#if !TL_CLANES
#define tl_create_lanes(its, m, n, b, R, I, gr, gi, img) 0
#endif
void tl_create(int64_t n, int nd, const int64_t *lo, const int64_t *ext, double *R, int64_t *I, int8_t *status,
               const double *gr, const int64_t *gi, const tl_img *img, int threads, int64_t *err) {
    int64_t cols = tl_cols = ext[nd - 1];
    tl_err_reset();
    *err = 0;
#ifdef _OPENMP
    if (threads > 1 && !tl_fixed) threads = tl_team(threads, threads);
#endif
    tl_gnd = nd <= 3 ? nd : 0;
    for (int k = 0; k < nd && k < 3; k++) tl_gext[k] = ext[k];
    if (cols <= 0) return;
    /* a row of the grid at a time: the other iterators divided out once per row */
    #pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t row = 0; row < n / cols; row++) {
        int64_t its[TL_ND], rem = row;
        for (int k = nd - 2; k >= 0; k--) { its[k] = lo[k] + rem % ext[k]; rem /= ext[k]; }
        for (int64_t c0 = 0; c0 < cols; c0 += TL_BK) {  /* TL_BK strands: whole 64s in lanes (TL_CLANES 2, a strand made */
            int64_t m = cols - c0 < TL_BK ? cols - c0 : TL_BK;  /* twice the same: 64s ending at the block's end), the rest one by one */
            int64_t w = TL_CLANES == 2 && c0 + m >= ((m + 63) & ~(int64_t)63) ? (m + 63) & ~(int64_t)63 : m, s = c0 + m - w;
            its[nd - 1] = lo[nd - 1] + s;
            int64_t made = TL_CLANES && w >= 64 ? tl_create_lanes(its, w, n, row * cols + s, R, I, gr, gi, img) : 0;
            if (TL_CLANES == 2 && made >= 64 && s + made < c0 + m) {  /* a row's first block: its last 64 again */
                its[nd - 1] = lo[nd - 1] + c0 + m - 64;
                if (tl_create_lanes(its, 64, n, row * cols + c0 + m - 64, R, I, gr, gi, img) == 64) made = c0 + m - s;
            }
            for (int64_t c = s + made > c0 ? s + made : c0; c < c0 + m; c++) { its[nd - 1] = lo[nd - 1] + c; tl_create_one(its, n, row * cols + c, R, I, gr, gi, img); }
            for (int64_t c = c0; c < c0 + m; c++) status[row * cols + c] = 0;
            if (tl_err_any) tl_claim(0, row * cols + c0);
        }
    }
    *err = tl_err_settle();
}
void tl_init_range(int64_t n, int64_t from, double *R, int64_t *I, int8_t *status, const double *gr,
                   const int64_t *gi, const tl_img *img, int threads) {
    #pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t i = from; i < n; i++) {  /* (a newborn's failure: after the step's updates, before its global block) */
        tl_init_one(n, i, R, I, gr, gi, img); status[i] = 0;
        if (tl_err_any) tl_claim(TL_LATE - 1, i);
    }
}
static int64_t tl_ndead, tl_fresh;  /* the dead strands, counted with the active ones; whether the first step is to come (below) */
#if TL_START  /* the start methods of the strands from .. n - 1, in order (those new made: at the next step's start, as in the
   interpreter); a permuted run's order then has the stable first (tmp: n cells); none queries (lower.py) */
static void tl_starts(int64_t from, int64_t n, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi,
                      const tl_img *img, int64_t *ord, int64_t *nlive, int64_t *tmp) {
    tl_ordp = ord; tl_nl = nlive[0]; tl_status = status; tl_bstart = 1;
    for (int64_t i = from; i < n; i++) {
        int r = status[i] ? 0 : tl_start(n, i, R, I, gr, gi, img); if (r == 1) r = tl_stabilize(n, i, R, I, gr, gi, img);
        if (r) status[i] = (int8_t)r; tl_claim(0, i); } tl_bstart = 0;
    int64_t k = 0, ns = 0, x = 0, dy = 0;  /* the stable, the active, then the fresh (from ..) walked as tl_steps' loop */
    for (int s = 1; TL_INDIRECT && s >= -1; s--) for (int64_t q = (x = k, 0); q < nlive[0]; q++)
        if (s < 0 ? ord[q] >= from : ord[q] < from && status[ord[q]] == s) { tmp[k++] = ord[q]; ns += s == 1; }
    while (TL_INDIRECT && x < k - dy) {  /* Diderot's swaps: a stable one to the first active place, a dead one to the last */
        int64_t i = tmp[x], jx = status[i] == 2 ? k - ++dy : status[i] == 1 ? ns++ : x; tmp[x] = tmp[jx]; tmp[jx] = i; x += status[i] != 2; }
    if (TL_INDIRECT) { memcpy(ord, tmp, sizeof(int64_t) * (size_t)(k - dy)); nlive[0] = k - dy; }
    nlive[1] = n;
}
#endif
/* after creation: the global start block, then each strand's start method in order */
void tl_begin(int64_t n, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi, const tl_img *img,
              int64_t *err, int64_t *ord, int64_t *nlive, int64_t *rank) {
    tl_err_reset(); tl_ordp = ord; tl_nl = *nlive; tl_status = status; tl_nb = tl_bkeep = 0;  /* (none a failed run left) */
    tl_fc[0] = n; tl_fc[1] = 0; tl_fc_set = 1;  /* (the first step's counts: before the start methods, as diderotc's) */
#if TL_GSTART
    tl_gbegin(n, R, I, status, gr, gi, img); tl_claim(0, -1);
#endif
#if TL_START  /* (a bulk-synchronous program's first super-step runs the start methods: it runs, its global block too, though they left none active) */
    tl_starts(0, n, R, I, status, gr, gi, img, ord, nlive, rank); tl_fresh = TL_BSP && n > 0; tl_bkeep = tl_nb;  /* (kept for the first step) */
#endif
    (void)R; (void)I; (void)gr; (void)gi; (void)img; (void)rank; *err = tl_err_settle();
}
#if TL_COMM  /* run, strands and active ones at tl_S0's copy: within a run of n, a status only leaves 0 (active) */
static int64_t tl_s0_run = -1, tl_s0_n = -1, tl_s0_act = -1;
#endif
int64_t tl_finish(int64_t n, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi, const tl_img *img,
                  int threads, int64_t *err, int64_t *ord, int64_t *nlive) {
    tl_ordp = ord; tl_nl = *nlive; tl_status = status;
    int g = TL_CALL_GLOBAL;
    if (tl_err_any) tl_claim(TL_LATE, -1);
    if (g) {
        #pragma omp parallel for schedule(dynamic, 64) num_threads(threads) if (threads > 1)
        for (int64_t q = 0; q < (TL_INDIRECT ? *nlive : n); q++) {
            int64_t i = TL_INDIRECT ? ord[q] : q;
            if (status[i] != 0) continue;
#if TL_COMM
            if (g == 1) tl_drop(n, i, R, I);  /* the shared variables as the step found them */
#endif
            status[i] = (int8_t)(g == 1 ? tl_stabilize(n, i, R, I, gr, gi, img) : 2);
            if (tl_err_any) tl_claim(TL_LATE, q);
        }
#if TL_INDIRECT
        int64_t kept = 0;  /* the dead leave the order; the others keep theirs */
        for (int64_t q = 0; q < *nlive; q++) if (status[ord[q]] != 2) ord[kept++] = ord[q];
        *nlive = kept;
#endif
    }
    int64_t active;
    tl_count(status, n, &active, &tl_ndead);  /* (the dead: the next step's start reads them, one pass over the statuses) */
    *err = tl_err_settle();
    return active;
}
/* the update of the strands b_ .. b_ + TL_BK - 1 (a function: the loop's pointers are its own, whether
   OpenMP runs it or, at one thread, a plain loop) */
static void tl_block(int64_t b_, int64_t n, double *R, int64_t *I, int8_t *status, const double *gr,
                            const int64_t *gi, const tl_img *img) {
#if TL_BKS
    tl_bk bk_; bk_.i0 = b_; bk_.filled = 0;  /* the blocked queries' folds, made where first read */
#endif
#if TL_LANES
    if (tl_lanes(b_, n, R, I, status, gr, gi, img, &bk_)) return;  /* the block in lanes */
#endif
    for (int64_t i = b_; i < b_ + TL_BK && i < n; i++) {
        if (status[i] != 0) continue;
        int r = tl_update(n, i, R, I, gr, gi, img TL_BKARG);
        if (r == 1) r = tl_stabilize(n, i, R, I, gr, gi, img);
        if (r) status[i] = (int8_t)r;
    }
    if (tl_err_any) tl_claim(0, b_);  /* (a block's strands run in order on one thread: its first failure is its lowest) */
}
TL_STEPS int64_t tl_steps(int64_t n, int64_t k, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi,
                 const tl_img *img, int threads, int64_t *err, int64_t *active_out, int64_t *pending,
                 int64_t *ord, int64_t *nlive, int64_t *rank) {
    int64_t s = 0, active = 0;
    tl_err_reset();
    tl_nb = tl_bkeep; tl_bkeep = 0;  /* births a failed step left are dropped; the first step's start methods' kept */
    tl_status = status;
    *pending = 0;
    tl_count(status, n, &active, &tl_ndead);
#ifdef _OPENMP
    const int asked = threads; const int64_t t0_ = tl_clock(), active0 = active;
    int size_ = 0; for (int64_t w_ = active0; w_ > 1; w_ >>= 1) size_++;
    if (asked > 1 && !tl_fixed) threads = tl_pick(&tl_steps_choice[size_], tl_team(asked, asked));
#endif
#if TL_COMM
    if (tl_n0 != n || !tl_R0) {  /* the snapshot's buffers, kept from call to call while the count stays */
        free(tl_R0); free(tl_I0); free(tl_S0); free(tl_P0); tl_n0 = n; tl_s0_n = -1;
        tl_R0 = malloc(sizeof(double) * TL_NR * (size_t)n); tl_I0 = malloc(sizeof(int64_t) * TL_NI * (size_t)n);
        tl_S0 = malloc((size_t)n); tl_P0 = malloc(sizeof(int64_t) * (size_t)n);
        if (!tl_R0 || !tl_I0 || !tl_S0 || !tl_P0) {
            free(tl_R0); free(tl_I0); free(tl_S0); free(tl_P0); tl_R0 = 0; tl_I0 = 0; tl_S0 = 0; tl_P0 = 0; tl_n0 = 0;
            *err = 3; *active_out = active; return 0;
        }
    }
#endif
    for (; s < k && (active > 0 || tl_fresh); tl_fresh = 0) {
        if (!tl_fc_set) { tl_fc[0] = active; tl_fc[1] = n - active - tl_ndead; } tl_fc_set = 0;
#if TL_START
        if (nlive[1] < n) {  /* the strands new made start (their births join after this step's updates, first) */
            tl_starts(nlive[1], n, R, I, status, gr, gi, img, ord, nlive, rank); tl_count(status, n, &active, &tl_ndead);
            if (tl_err_flag) break; }
#endif
#if TL_COMM
        TL_FILL_SNAP
        if (tl_s0_run != tl_run || tl_s0_n != n || tl_s0_act != active) { memcpy(tl_S0, status, (size_t)n); tl_s0_run = tl_run; tl_s0_n = n; tl_s0_act = active; }
#if TL_INDIRECT
        for (int64_t q = 0; q < *nlive; q++) tl_P0[ord[q]] = q;
#endif
        tl_nb_step(n, tl_ndead, gr, gi, status, threads);
#endif
#if TL_INDIRECT
        {
            /* Diderot's permuted order (docs/diderot-compiled.md, "The strand order"); with threads the
               updates run first (rank[] holds their outcome), then the same walk reorders */
            int64_t nl = *nlive, ns = 0;
            for (int64_t q = 0; q < nl; q++) ns += status[ord[q]] == 1;
            if (threads > 1) {
                #pragma omp parallel for schedule(dynamic, 64) num_threads(threads)
                for (int64_t q = ns; q < nl; q++) {
                    int64_t i = ord[q];
                    int r = tl_update(n, i, R, I, gr, gi, img);
                    if (r == 1) r = tl_stabilize(n, i, R, I, gr, gi, img);
                    rank[i] = r;
                    if (tl_err_any) tl_mark(i, n);
                }
            }
            int64_t ix = ns, st = 0, dy = 0, visit = 0, *fl = tl_fails;  /* (one thread: its failures come in order) */
            while (ix < nl - dy) {
                int64_t i = ord[ix];
                int r;
                if (threads > 1) { r = (int)rank[i]; if (fl && fl[i]) tl_keep(0, visit, fl[i]); }
                else { r = tl_update(n, i, R, I, gr, gi, img); if (r == 1) r = tl_stabilize(n, i, R, I, gr, gi, img); }
                rank[i] = visit++;
                if (r) status[i] = (int8_t)r;
                if (r == 1) { int64_t jx = ns + st; ord[ix] = ord[jx]; ord[jx] = i; st++; ix++; }
                else if (r == 2) { dy++; int64_t jx = nl - dy; ord[ix] = ord[jx]; ord[jx] = i; }
                else ix++;
            }
            *nlive = nl - dy;
        }
#elif TL_SOLO
        /* no strand sees another: each runs its (up to k - s) steps at once, in TL_TILE^2 tiles of the grid (neighbours
           probe neighbouring samples); the steps taken are the most any strand took */
        int64_t most = 0, cols = tl_cols > 0 ? tl_cols : n, rows = (n + cols - 1) / cols;
        int64_t ntc = (cols + TL_TILE - 1) / TL_TILE, ntr = (rows + TL_TILE - 1) / TL_TILE;
        int64_t chunk = tl_chunk(ntr * ntc, threads);  /* (a band of tiles across the grid, where it has bands enough) */
        if (chunk > ntc) chunk = chunk / ntc * ntc;
        #pragma omp parallel for schedule(dynamic, chunk) num_threads(threads) if (threads > 1) reduction(max: most)
        for (int64_t tt = 0; tt < ntr * ntc; tt++) {
            int64_t r0 = (tt / ntc) * TL_TILE, c0 = (tt % ntc) * TL_TILE;
            for (int64_t row = r0; row < r0 + TL_TILE && row < rows; row++)
#if TL_BATCH
            {
TL_FILL_BLOCK
            }
#else
                for (int64_t i = row * cols + c0; i < row * cols + c0 + TL_TILE && i < (row + 1) * cols && i < n; i++) {
                    int64_t u = 0;
TL_FILL_SOLOSTEPS
                    if (u > most) most = u;
                }
#endif
        }
        s += most;  /* (tl_fresh is 0: TL_SOLO is not TL_BSP) */
        active = tl_finish(n, R, I, status, gr, gi, img, threads, err, ord, nlive);
        break;
#else
        if (threads > 1) {
            int64_t chunk = tl_chunk((n + TL_BK - 1) / TL_BK, threads);
            #pragma omp parallel for schedule(dynamic, chunk) num_threads(threads)
            for (int64_t b_ = 0; b_ < n; b_ += TL_BK) tl_block(b_, n, R, I, status, gr, gi, img);
        } else for (int64_t b_ = 0; b_ < n; b_ += TL_BK) tl_block(b_, n, R, I, status, gr, gi, img);
#endif
        if (tl_nb > 0) { tl_fresh = 0; *pending = 1; break; }  /* the caller adds the new strands, then calls tl_finish */
        s++;
        active = tl_finish(n, R, I, status, gr, gi, img, threads, err, ord, nlive);
        if (tl_err_flag) break;
    }
#ifdef _OPENMP  /* (ns per 1024 strand-steps) */
    if (asked > 1 && s > 0 && active0 > 0) tl_record(&tl_steps_choice[size_], threads, (tl_clock() - t0_) * 1024 / (active0 * s));
#endif
    tl_ks_free();
    *err = tl_err_settle();
    *active_out = active;
    return s;
}
