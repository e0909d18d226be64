// probe_entry.c: a probe kernel's entry point tl_probe (probe.py); placeholders: docs/c-backend.md, "The C files".
/* The probes of n points; with sort, in the order of the image's blocks (tl_sort) unless
   tl_sort finds them coherent already: the results are then written in block order,
   packed (PACKED doubles a point: each distinct derivative once), and tl_unpack copies
   each to its point's own index: the same numbers in the same places.
   The block order's buffers (the sorted coordinates, n*D doubles; key, n int32; the
   packed results, n*PACKED doubles; each starting on a 64-byte line, 192 bytes more) are
   scratch where scratch is given (the caller's memory, reused from call to call: fresh
   pages cost the kernel's zeroing and a fault each), else malloc'd here. */
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
        const size_t lines_sorted = ((size_t)n * D * sizeof(double) + 63) / 64;
        const size_t lines_key = ((size_t)n * sizeof(int32_t) + 63) / 64;
        const size_t lines_packed = ((size_t)n * PACKED * sizeof(double) + 63) / 64;
        char *own = scratch != NULL ? NULL : (char *)malloc((lines_sorted + lines_key + lines_packed) * 64 + 64);
        char *block = scratch != NULL ? scratch : own;
        /* each buffer starts on a 64-byte line (tl_sort's streaming stores) */
        double *sorted = block != NULL ? (double *)(block + (64 - (uintptr_t)block % 64) % 64) : NULL;
        int32_t *key = block != NULL ? (int32_t *)((char *)sorted + lines_sorted * 64) : NULL;
        double *packed = block != NULL ? (double *)((char *)key + lines_key * 64) : NULL;
        int64_t total = 1;
        for (int a = 0; a < D; a++) total *= ((sizes[a] - 1) >> SHIFT) + 1;
        /* the blocks' ends, for a probe block by block: from tiles where the blocks hold TL_TILES
           points on average, else from the image where they hold TL_REGION_POINTS */
        const int copy = TL_TILES > 0 && n >= TL_TILES * total;
        int64_t *ends = copy || (TL_REGION_POINTS > 0 && n >= TL_REGION_POINTS * total) ? (int64_t *)malloc((size_t)total * sizeof(int64_t)) : NULL;
        const int64_t blocks = block != NULL ? tl_sort(n, pts, sizes, M, sorted, key, ends, threads) : -1;
        if (blocks > 0 && ends != NULL)
            tl_probe_tiles(n, sorted, data, sizes, M, packed, threads, ends, blocks, copy);
        else if (blocks > 0) {
            /* the rows of the points about two blocks ahead are asked for (REGION_AHEAD) */
            int64_t look = TL_FILL_REGIONBLOCKS * (n / blocks);
            look = look < B ? B : look > TL_FILL_REGIONAHEAD ? TL_FILL_REGIONAHEAD : look;
            tl_probe_points(n, sorted, 1, data, sizes, M, packed, threads, look);
        }
        if (blocks > 0)
            tl_unpack(n, key, packed, out, threads);
        free(ends);
        free(own);
        if (blocks > 0)
            return;
    }
    tl_probe_points(n, pts, 0, data, sizes, M, out, threads, 0);
}
