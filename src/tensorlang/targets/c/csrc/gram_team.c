// gram_team.c: the Gram kernels' team size (gram.py, loops/parallel.py ``team``) (docs/c-backend.md, "The C files").

#ifdef _OPENMP
#include <omp.h>
#endif

/* the threads a call uses: one where TEAM < 0 (its work is below the machine's measured
   threshold), else `threads` (0: OpenMP's default), at most TEAM where TEAM > 0 */
static int TL_FILL_Pteam(int threads) {
#ifdef _OPENMP
    if (TEAM < 0) return 1;
    int nt = threads > 0 ? threads : omp_get_max_threads();
    return TEAM > 0 && nt > TEAM ? TEAM : nt;
#else
    (void)threads;
    return 1;
#endif
}
