// probe_sort.c: tl_sort, a probe's points sorted by the image's blocks (probe.py). See docs/c-backend.md.
/* From here on multiply-adds may be fused (one rounding instead of two: the sums stay
   within the reference's rounding, not bit-equal to it). */
#if defined(__clang__)
#pragma clang fp contract(fast)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=fast")
#endif

/* The points in the order of the image's blocks of 2^SHIFT cells per axis (a counting
   sort by block, stable): points in one block read the same rows, so a gather that
   missed every cache for random points hits L1 and L2.  sorted[q] is the coordinates of
   sorted point q (64-byte aligned, for the streaming stores; else plain stores).  key[p]
   is first point p's block (total <= n < 2^31), then, once sorted, its place q in the
   block order (the inverse permutation: tl_unpack reads each result back from there);
   where ends is given, ends[k] is the end of block k's points in the block order.
   A point outside or not finite goes to the block of cell 0 (its result is NaN either
   way).  Returns the number of blocks, 0 where the points are coherent already (not
   sorted: key is then no order), or -1 where memory for the counts could not be had
   (the caller then probes in the given order). */
#define SHIFT TL_FILL_SHIFT
/* whole lines stored without being read first (streaming stores: SSE2, every x86-64),
   elsewhere plain stores; the fence orders them before the barrier or return */
#if defined(__SSE2__)
#include <emmintrin.h>
#define TL_STREAM_DOUBLES(dst, src, count) \
    do { for (int i_ = 0; i_ < (count); i_ += 2) _mm_stream_pd((dst) + i_, _mm_load_pd((src) + i_)); } while (0)
#define TL_STREAM_FENCE() _mm_sfence()
/* count doubles from src to dst (8-byte aligned): the lines wholly inside streamed, the
   partial lines at either end stored plainly */
#define TL_STREAM_RUN(dst, src, count) \
    do { int64_t i_ = 0; const int64_t c_ = (count); \
         for (; i_ < c_ && (uintptr_t)((dst) + i_) % 64 != 0; i_++) (dst)[i_] = (src)[i_]; \
         for (; i_ + 8 <= c_; i_ += 8) \
             for (int h_ = 0; h_ < 8; h_ += 2) _mm_stream_pd((dst) + i_ + h_, _mm_loadu_pd((src) + i_ + h_)); \
         for (; i_ < c_; i_++) (dst)[i_] = (src)[i_]; } while (0)
#else
#define TL_STREAM_RUN(dst, src, count) \
    do { for (int64_t i_ = 0; i_ < (count); i_++) (dst)[i_] = (src)[i_]; } while (0)

#define TL_STREAM_DOUBLES(dst, src, count) \
    do { for (int i_ = 0; i_ < (count); i_++) (dst)[i_] = (src)[i_]; } while (0)
#define TL_STREAM_FENCE() ((void)0)
#endif
static int64_t tl_sort(int64_t n, const double *pts, const int64_t *sizes, const double *M,
                   double *sorted, int32_t *key, int64_t *ends, int threads)
{
    int64_t blocks[D], mult[D], total = 1;
    for (int a = D - 1; a >= 0; a--) {
        blocks[a] = ((sizes[a] - 1) >> SHIFT) + 1;
        mult[a] = total;
        total *= blocks[a];
    }
    const int team = threads > 1 && n >= TL_FILL_PARALLELPOINTS ? threads : 1;
    /* each thread counts its own range of points into its own counts (team of them,
       total + 1 each), so that the sort stays stable: thread t's points of a block go
       after those of threads before it, the same order as one thread's */
    int64_t *count = (int64_t *)calloc((size_t)team * (size_t)(total + 1), sizeof(int64_t));
    if (count == NULL)
        return -1;
    int64_t all_jumps = 0;
    #pragma omp parallel num_threads(team) if(team > 1)
    {
        const int t = TL_THREAD();
        const int64_t from = n * t / team, to = n * (t + 1) / team;
        int64_t *mine = count + (int64_t)t * (total + 1);
        double top[D];
        for (int a = 0; a < D; a++) top[a] = (double)(sizes[a] - 1);
        /* the keys first, branch-free (the loop vectorizes), then the counts */
        for (int64_t p = from; p < to; p++) {
            const double *pt = pts + p * D;
            int64_t k = 0;
            for (int a = 0; a < D; a++) {
                double v = M[a*(D+1) + D];
                for (int c = 0; c < D; c++) v += M[a*(D+1) + c] * pt[c];
                /* the cell, clamped to the image: NaN fails both tests, cell 0 */
                const double cell = v >= 0.0 ? (v <= top[a] ? v : top[a]) : 0.0;
                k += ((int64_t)cell >> SHIFT) * mult[a];
            }
            key[p] = (int32_t)k;
        }
        /* the jumps: consecutive points neither in one block nor in the next along the
           innermost axis (branch-free; the loop vectorizes).  Few jumps (points on a grid
           in raster order, along a curve, already in block order): the given order
           reuses the rows as the block order would, and the sort is not paid */
        int64_t jumps = 0;
        for (int64_t p = from + 1; p < to; p++) {
            const int64_t step = (int64_t)key[p] - (int64_t)key[p - 1];
            jumps += (step < 0) | (step > 1);
        }
        #pragma omp atomic
        all_jumps += jumps;
        #pragma omp barrier
        /* the same for every thread: all read all_jumps after the barrier */
        if (TL_FILL_COHERENT == 0 || all_jumps * TL_FILL_COHERENT > n) {
            for (int64_t p = from; p < to; p++)
                mine[key[p]]++;
            #pragma omp barrier
            #pragma omp single
            {  /* each thread's first place in each block: blocks in order, threads in order */
                int64_t at = 0;
                for (int64_t k = 0; k < total; k++)
                    for (int u = 0; u < team; u++) {
                        int64_t *c = count + (int64_t)u * (total + 1) + k;
                        const int64_t here = *c;
                        *c = at;
                        at += here;
                    }
            }
            /* write-combined: each block's next points gather in a buffer of its own (8
               points' coordinates: whole lines; for 4096 blocks 768 KiB, in L2), and a full
               buffer goes to its place with streaming stores, which write whole lines
               without reading them first (a scattered store's line is read from memory
               first: most of the sort's time).  A line shared with another block or
               thread's part, and each block's last partial line, are stored plainly.
               Each point's place replaces its key (one sequential store) */
            char *room = (char *)malloc((size_t)total * (8 * D * sizeof(double) + sizeof(int64_t)) + 64);
            double *cbuf = room != NULL ? (double *)(room + (64 - (uintptr_t)room % 64)) : NULL;
            int64_t *begin = cbuf != NULL ? (int64_t *)(cbuf + (size_t)total * 8 * D) : NULL;
            if (begin != NULL && (uintptr_t)sorted % 64 == 0) {
                for (int64_t k = 0; k < total; k++) begin[k] = mine[k];
                for (int64_t p = from; p < to; p++) {
                    const int64_t k = key[p];
                    const int64_t q = mine[k]++;
                    key[p] = (int32_t)q;
                    double *cb = cbuf + k * 8 * D;
                    for (int c = 0; c < D; c++) cb[(q & 7) * D + c] = pts[p * D + c];
                    if ((q & 7) == 7) {
                        if (q - 7 >= begin[k]) {
                            TL_STREAM_DOUBLES(sorted + (q - 7) * D, cb, 8 * D);
                        } else {
                            for (int64_t r = begin[k]; r <= q; r++)
                                for (int c = 0; c < D; c++) sorted[r * D + c] = cb[(r & 7) * D + c];
                        }
                    }
                }
                for (int64_t k = 0; k < total; k++) {  /* the blocks' last partial lines */
                    const int64_t end = mine[k], c8 = end & ~(int64_t)7;
                    for (int64_t r = c8 > begin[k] ? c8 : begin[k]; r < end; r++)
                        for (int c = 0; c < D; c++) sorted[r * D + c] = cbuf[k * 8 * D + (r & 7) * D + c];
                }
                TL_STREAM_FENCE();
            } else {  /* no memory for the buffers: plain stores */
                for (int64_t p = from; p < to; p++) {
                    const int64_t q = mine[key[p]]++;
                    key[p] = (int32_t)q;
                    for (int c = 0; c < D; c++) sorted[q * D + c] = pts[p * D + c];
                }
            }
            free(room);
        }
    }
    if (ends != NULL)  /* the last thread's places past its points of each block: the blocks' ends */
        for (int64_t k = 0; k < total; k++) ends[k] = count[(int64_t)(team - 1) * (total + 1) + k];
    free(count);
    return TL_FILL_COHERENT == 0 || all_jumps * TL_FILL_COHERENT > n ? total : 0;
}

