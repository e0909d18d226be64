// gram_team.c: the Gram kernels' team size (targets/c/gram.py): one thread below
// PARALLEL_WORK multiply-adds.  The generated prefix defines WORK and PARALLEL_WORK;
// placeholder TL_FILL_P as in gram_pack.c.

#ifdef _OPENMP
#include <omp.h>
#endif

/* the threads a call uses: `threads` (0: OpenMP's default), one below PARALLEL_WORK
   multiply-adds (the threshold measured on this machine, targets/c/threshold.py) */
static int TL_FILL_Pteam(int threads) {
#ifdef _OPENMP
    if ((double)WORK < (double)PARALLEL_WORK) return 1;
    return threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
    return 1;
#endif
}

