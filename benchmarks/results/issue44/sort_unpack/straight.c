/* Results written straight to their points' places in block order (out[perm[q]]) against the tree's packed results in block
   order then tl_unpack's gather (out[p] = packed[key[p]], streamed): 10^6 points in 4096 blocks, P packed and F full
   doubles a point.   gcc -O3 -march=native straight.c -o straight && taskset -c 1 ./straight 1 1 (3 3, 6 9) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv) {
    int64_t n = 1000000; int P = atoi(argv[1]), F = atoi(argv[2]);  /* packed and full doubles a point */
    int32_t *key = malloc(n*4), *perm = malloc(n*4); int64_t cnt[4097] = {0};
    srand(4);
    for (int64_t p = 0; p < n; p++) { key[p] = rand() % 4096; cnt[key[p]+1]++; }
    for (int k = 0; k < 4096; k++) cnt[k+1] += cnt[k];
    for (int64_t p = 0; p < n; p++) { int64_t q = cnt[key[p]]++; key[p] = q; perm[q] = p; }
    double *packed = aligned_alloc(64, n*P*8), *out = aligned_alloc(64, n*F*8);
    memset(packed, 0, n*P*8); memset(out, 0, n*F*8);
    double bw = 1e9, bs = 1e9;
    for (int r = 0; r < 7; r++) {
        /* the current design: packed written in block order (plain), then the unpack: out in the points' order from packed[key[p]] */
        double t0 = now();
        for (int64_t q = 0; q < n; q++) for (int c = 0; c < P; c++) packed[q*P + c] = q + c;
        double run[64*9] __attribute__((aligned(64)));
        for (int64_t p0 = 0; p0 < n; p0 += 64) {
            for (int i = 0; i < 64; i++) { const double *s = packed + (int64_t)key[p0+i]*P; if (p0 + 128 < n) __builtin_prefetch(packed + (int64_t)key[p0+64+i]*P);
                for (int c = 0; c < F; c++) run[i*F + c] = s[c % P]; }
            for (int i = 0; i < 64*F; i += 8) _mm512_stream_pd(out + p0*F + i, _mm512_load_pd(run + i));
        }
        _mm_sfence();
        double t1 = now();
        /* straight to their places: out[perm[q]] written in block order */
        for (int64_t q = 0; q < n; q++) { double *o = out + (int64_t)perm[q]*F; for (int c = 0; c < F; c++) o[c] = q + c % P; }
        double t2 = now();
        if (t1 - t0 < bw) bw = t1 - t0; if (t2 - t1 < bs) bs = t2 - t1;
    }
    printf("P=%d F=%d: packed + unpack %.2f ms, straight to the places %.2f ms\n", P, F, bw*1e3, bs*1e3);
}
