// strands_births.c: the buffer of the strands new makes (strands.py); follows strands_prelude.h, TL_NBR and TL_NBI defined (a new strand's real and int parameters); see docs/diderot-compiled.md.
static int64_t tl_nb, tl_bcap, tl_bctr, *tl_bpar, *tl_bseq, *tl_bi; static double *tl_br; static int tl_bstart; static int64_t tl_bkeep;
/* the most strands new may make in one super-step (what the memory budget leaves); tl_bstart: in a start method (parent -1) */
static int64_t tl_bmax = INT64_MAX;
void tl_set_bmax(int64_t m) { tl_bmax = m; }
static void tl_birth(int64_t i, const double *br, const int64_t *bi) {
    #pragma omp critical (tl_births)
    {
        if (tl_nb >= tl_bmax) tl_err_flag = 5;  /* refused now, not after the step: the buffer stays bounded */
        else if (tl_nb >= tl_bcap) {
            int64_t cap = 2 * tl_bcap + 64;
            int64_t *p = realloc(tl_bpar, sizeof(int64_t) * (size_t)cap); if (p) tl_bpar = p;
            int64_t *q = realloc(tl_bseq, sizeof(int64_t) * (size_t)cap); if (q) tl_bseq = q;
            double *r = realloc(tl_br, sizeof(double) * TL_NBR * (size_t)cap); if (r) tl_br = r;
            int64_t *t = realloc(tl_bi, sizeof(int64_t) * TL_NBI * (size_t)cap); if (t) tl_bi = t;
            if (p && q && r && t) tl_bcap = cap; else tl_err_flag = 3;
        }
        if (tl_nb < tl_bcap && tl_nb < tl_bmax) {
            tl_bpar[tl_nb] = tl_bstart ? -1 : i; tl_bseq[tl_nb] = tl_bctr++;
            memcpy(tl_br + tl_nb * TL_NBR, br, sizeof(double) * TL_NBR); memcpy(tl_bi + tl_nb * TL_NBI, bi, sizeof(int64_t) * TL_NBI);
            tl_nb++;
        }
    }
}
int64_t tl_nbirths(void) { return tl_nb; }
void tl_take_births(int64_t *par, int64_t *seq, double *br, int64_t *bi) {
    memcpy(par, tl_bpar, sizeof(int64_t) * (size_t)tl_nb); memcpy(seq, tl_bseq, sizeof(int64_t) * (size_t)tl_nb);
    memcpy(br, tl_br, sizeof(double) * TL_NBR * (size_t)tl_nb); memcpy(bi, tl_bi, sizeof(int64_t) * TL_NBI * (size_t)tl_nb);
    tl_nb = 0;
}
