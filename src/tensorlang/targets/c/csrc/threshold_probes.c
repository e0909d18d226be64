// threshold_probes.c: the probes that measure the parallel thresholds (threshold.py). See docs/c-backend.md.

#include <stdint.h>
int tl_probe_stream(double *restrict x, double s, int64_t n, int threads) {
#ifdef _OPENMP
#pragma omp parallel for schedule(TL_FILL_SCHEDULE) num_threads(threads) if(threads > 1)
#endif
    for (int64_t i = 0; i < n; i++) x[i] = s * x[i];
    return 0;
}
/* n points of the same update over blocks of BLOCK that stay in cache, each block swept
   n / (blocks * BLOCK) times by the thread that owns it */
int tl_probe_compute(double *restrict x, double s, int64_t n, int threads) {
    int64_t blocks = n / TL_FILL_BLOCK < TL_FILL_MAXBLOCKS ? n / TL_FILL_BLOCK : TL_FILL_MAXBLOCKS;
    if (blocks < 1) blocks = 1;
    int64_t sweeps = n / (blocks * TL_FILL_BLOCK);
#ifdef _OPENMP
#pragma omp parallel for schedule(TL_FILL_SCHEDULE) num_threads(threads) if(threads > 1)
#endif
    for (int64_t b = 0; b < blocks; b++)
        for (int64_t r = 0; r < sweeps; r++)
            for (int64_t i = 0; i < TL_FILL_BLOCK; i++) x[b * TL_FILL_BLOCK + i] = s * x[b * TL_FILL_BLOCK + i];
    return 0;
}
