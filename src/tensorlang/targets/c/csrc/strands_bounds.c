// strands_bounds.c: the block bounds of a scalar image for a ray's maximum (strands_batch.bounds):
// out[b0 + nb0 * (b1 + nb1 * b2)] bounds every probe whose cell lies within one of the cells
// 8b-1 .. 8b+8 on each axis (the block's cells and one on each side): the largest sample of
// their supports (8b - r .. 8b + 8 + r), plus 1e-10 of the largest magnitude there and 1e-300;
// NaN where a sample there is not finite.  An axis the image lacks has size 1.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
static void tl_win(int64_t b, int64_t r, int64_t size, int64_t *lo, int64_t *hi) {
    *lo = 8 * b - r < 0 ? 0 : 8 * b - r;
    *hi = 8 * b + 8 + r > size - 1 ? size - 1 : 8 * b + 8 + r;
}
int tl_bounds(const double *data, const int64_t *size, const int64_t *st, int64_t r, double *out, const int64_t *os,
              const int64_t *p) {  // p: the axes, fastest first (rows read in place, elementwise)
    int64_t nb[3], lo, hi, n0 = size[p[0]], n1 = size[p[1]], n2 = size[p[2]], s0 = st[p[0]];
    for (int a = 0; a < 3; a++) nb[a] = (size[p[a]] - 1) / 8 + 1;
    double *mx = malloc(sizeof(double) * 2 * (size_t)(nb[0] * nb[1] * n2)), *ab = mx + nb[0] * nb[1] * n2;
    double *rm = malloc(sizeof(double) * 3 * (size_t)n0), *ra = rm + n0, *re = ra + n0;
    if (!mx || !rm) { free(mx); free(rm); return 1; }
    for (int64_t k2 = 0; k2 < n2; k2++)
        for (int64_t b1 = 0; b1 < nb[1]; b1++) {
            for (int64_t k = 0; k < n0; k++) { rm[k] = -INFINITY; ra[k] = 0; re[k] = 0; }
            tl_win(b1, r, n1, &lo, &hi);
            for (int64_t k1 = lo; k1 <= hi; k1++) {  // the second axis's window, sample by sample of the rows
                const double *row = data + k1 * st[p[1]] + k2 * st[p[2]];
                if (s0 == 1)
                    for (int64_t k = 0; k < n0; k++) {
                        double v = row[k];  // re: NaN where a sample is not finite
                        rm[k] = v > rm[k] ? v : rm[k]; ra[k] = fabs(v) > ra[k] ? fabs(v) : ra[k]; re[k] += v - v;
                    }
                else
                    for (int64_t k = 0; k < n0; k++) {
                        double v = row[k * s0];
                        rm[k] = v > rm[k] ? v : rm[k]; ra[k] = fabs(v) > ra[k] ? fabs(v) : ra[k]; re[k] += v - v;
                    }
            }
            for (int64_t b = 0; b < nb[0]; b++) {  // the first axis's windows
                double m = -INFINITY, a = 0, e = 0;
                tl_win(b, r, n0, &lo, &hi);
                for (int64_t k = lo; k <= hi; k++) { m = rm[k] > m ? rm[k] : m; a = ra[k] > a ? ra[k] : a; e += re[k]; }
                mx[(k2 * nb[1] + b1) * nb[0] + b] = m; ab[(k2 * nb[1] + b1) * nb[0] + b] = e == 0 ? a : INFINITY;
            }
        }
    for (int64_t b2 = 0; b2 < nb[2]; b2++)  // the third
        for (int64_t b1 = 0; b1 < nb[1]; b1++)
            for (int64_t b = 0; b < nb[0]; b++) {
                double m = -INFINITY, s = 0;
                tl_win(b2, r, n2, &lo, &hi);
                for (int64_t k = lo; k <= hi; k++) {
                    m = mx[(k * nb[1] + b1) * nb[0] + b] > m ? mx[(k * nb[1] + b1) * nb[0] + b] : m;
                    s = ab[(k * nb[1] + b1) * nb[0] + b] > s ? ab[(k * nb[1] + b1) * nb[0] + b] : s;
                }
                out[b * os[p[0]] + b1 * os[p[1]] + b2 * os[p[2]]] = isfinite(s) ? m + (1e-10 * s + 1e-300) : NAN;
            }
    free(mx); free(rm);
    return 0;
}
