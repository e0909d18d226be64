// probe_entry.c: a probe kernel's entry point tl_probe (fields/cprobe.py): the
// points sorted by block where asked (tl_sort), then the generated tl_probe_points.
// Placeholders: TL_FILL_REGIONBLOCKS and TL_FILL_REGIONAHEAD (cprobe.REGION_BLOCKS,
// REGION_AHEAD: how far ahead, in block order, the rows of points are prefetched).
/* The probes of n points; with sort, in the order of the image's blocks (tl_sort) unless
   tl_sort finds them coherent already, each result still written at its point's own
   index: the same numbers in the same places.
   The sort's buffers (the sorted coordinates, n*D doubles, then perm and key, n int32
   each; the first two on 64-byte lines, 128 bytes more) are scratch where scratch is given (the caller's memory, reused from call to
   call: fresh pages cost the kernel's zeroing and a fault each), else malloc'd here. */
void tl_probe(int64_t n, const double *pts, const double *data, const int64_t *sizes,
              const double *M, double *out, int nthreads, int sort, char *scratch)
{
#ifdef _OPENMP
    const int threads = nthreads > 0 ? nthreads : omp_get_max_threads();  /* 0: OpenMP's default */
#else
    const int threads = 1;
    (void)nthreads;
#endif
    if (sort && n > 0 && n < INT32_MAX) {
        char *own = scratch != NULL ? NULL : (char *)malloc((size_t)n * (D * sizeof(double) + 2 * sizeof(int32_t)) + 128);
        char *block = scratch != NULL ? scratch : own;
        /* the sorted coordinates and perm start on 64-byte lines (tl_sort's streaming stores) */
        double *sorted = block != NULL ? (double *)(block + (64 - (uintptr_t)block % 64) % 64) : NULL;
        int32_t *perm = block != NULL ? (int32_t *)((char *)sorted + ((size_t)n * D * sizeof(double) + 63) / 64 * 64)
                                      : NULL;
        const int64_t blocks = block != NULL ? tl_sort(n, pts, sizes, M, perm, sorted, perm + n, threads) : -1;
        if (blocks > 0) {
            /* the rows of the points about two blocks ahead are asked for (REGION_AHEAD) */
            int64_t look = TL_FILL_REGIONBLOCKS * (n / blocks);
            look = look < B ? B : look > TL_FILL_REGIONAHEAD ? TL_FILL_REGIONAHEAD : look;
            tl_probe_points(n, sorted, perm, data, sizes, M, out, threads, look);
            free(own);
            return;
        }
        free(own);
    }
    tl_probe_points(n, pts, NULL, data, sizes, M, out, threads, 0);
}
