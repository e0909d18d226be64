// strands_linalg.h: the library routines of S.Lib statements (eigensystems, inverse) where a strand program
// uses them (strands.py); see docs/diderot-compiled.md.
static const double tl_sgnref[4] = {1.0, 0.6180339887498949, 0.3819660112501051, 0.2360679774997897};
#define TL_EIG_EPS 3.552713678800501e-15  /* 16 ulps of 1 */
static void tl_unit2(double *v) {
    double s = sqrt(v[0] * v[0] + v[1] * v[1]);
    if (s > TL_EIG_EPS) { v[0] *= 1 / s; v[1] *= 1 / s; }
}
/* 2x2: the closed form of Diderot's executables (their eigenvectors' signs) */
static void tl_eig2(const double *m, double *out) {
    double mean = 0.5 * (m[0] + m[3]), m00 = m[0] - mean, m01 = m[1], m11 = m[3] - mean;
    double q = m00 - m11, d = 4.0 * m01 * m01 + q * q;
    if (!(d > TL_EIG_EPS)) { out[0] = out[1] = mean; out[2] = 1; out[3] = 0; out[4] = 0; out[5] = 1; return; }
    double vv = 0.5 * sqrt(d), r1[2] = {m00 - vv, m01}, r2[2] = {m01, m11 - vv}, e1[2], e0[2];
    double sg = r1[0] * r2[0] + r1[1] * r2[1] > 0 ? 1.0 : -1.0;
    e1[0] = r1[0] + sg * r2[0]; e1[1] = r1[1] + sg * r2[1]; tl_unit2(e1);
    e0[0] = e1[1]; e0[1] = -e1[0]; tl_unit2(e0);
    out[0] = vv + mean; out[1] = -vv + mean; out[2] = e0[0]; out[3] = e0[1]; out[4] = e1[0]; out[5] = e1[1];
}
static void tl_cross(const double *a, const double *b, double *r) {
    r[0] = a[1] * b[2] - a[2] * b[1]; r[1] = a[2] * b[0] - a[0] * b[2]; r[2] = a[0] * b[1] - a[1] * b[0];
}
/* 3x3, distinct eigenvalues: the signs of Diderot's executables (the interpreter's _eig3):
   the vectors of the outer eigenvalue farther from the middle one (the last on a tie) and of the middle one point
   along the null direction of a - wI (crosses of its rows), the third completes the frame */
static void tl_eig3_signs(const double *a, double *out) {
    double *w = out, scale = fmax(fmax(fabs(w[0]), fabs(w[2])), 1e-300);
    if (fmin(w[0] - w[1], w[1] - w[2]) <= 1e-12 * scale) return;
    int keep = (w[0] - w[1]) - (w[1] - w[2]) > 1e-9 * scale ? 0 : 2, idx[2] = {keep, 1};
    for (int t = 0; t < 2; t++) {
        int i = idx[t];
        double b[9], res[3], crs[3];
        for (int k = 0; k < 9; k++) b[k] = a[k] - (k % 4 == 0 ? w[i] : 0.0);
        tl_cross(b, b + 3, res);
        for (int pr = 0; pr < 2; pr++) {
            tl_cross(pr ? b : b + 3, b + 6, crs);
            double sg = res[0] * crs[0] + res[1] * crs[1] + res[2] * crs[2] > 0 ? 1.0 : -1.0;
            for (int c = 0; c < 3; c++) res[c] += sg * crs[c];
        }
        double *vi = out + 3 + 3 * i;
        if (res[0] * vi[0] + res[1] * vi[1] + res[2] * vi[2] < 0)
            for (int c = 0; c < 3; c++) vi[c] = -vi[c];
    }
    if (keep == 0) tl_cross(out + 3, out + 6, out + 9);
    else tl_cross(out + 6, out + 9, out + 3);
}
static void tl_eig(int n, const double *m, double *out) {
    double a[16], v[16];
    for (int k = 0; k < n * n; k++)
        if (!isfinite(m[k])) { for (int q = 0; q < n + n * n; q++) out[q] = NAN; return; }
    if (n == 2) { tl_eig2(m, out); return; }
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) { a[r * n + c] = 0.5 * (m[r * n + c] + m[c * n + r]); v[r * n + c] = r == c; }
    for (int sweep = 0; sweep < 64; sweep++) {
        int turned = 0;
        for (int p = 0; p < n - 1; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p * n + q], app = a[p * n + p], aqq = a[q * n + q];
                if (apq == 0) continue;
                if (fabs(apq) <= 1e-18 * (fabs(app) + fabs(aqq))) { a[p * n + q] = a[q * n + p] = 0; continue; }
                turned = 1;
                double th = (aqq - app) / (2 * apq);  /* cot 2θ; t = tan θ, the smaller root */
                double t = fabs(th) > 1e150 ? 0.5 / fabs(th) : 1 / (fabs(th) + sqrt(th * th + 1));
                if (th < 0) t = -t;
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; k++) {
                    double x = a[k * n + p], y = a[k * n + q];
                    a[k * n + p] = c * x - s * y; a[k * n + q] = s * x + c * y;
                }
                for (int k = 0; k < n; k++) {
                    double x = a[p * n + k], y = a[q * n + k];
                    a[p * n + k] = c * x - s * y; a[q * n + k] = s * x + c * y;
                }
                a[p * n + q] = a[q * n + p] = 0;
                for (int k = 0; k < n; k++) {
                    double x = v[k * n + p], y = v[k * n + q];
                    v[k * n + p] = c * x - s * y; v[k * n + q] = s * x + c * y;
                }
            }
        if (!turned) break;
    }
    int used[4] = {0, 0, 0, 0};
    for (int r = 0; r < n; r++) {  /* largest first; the first of equal ones first */
        int best = -1;
        for (int k = 0; k < n; k++)
            if (!used[k] && (best < 0 || a[k * n + k] > a[best * n + best])) best = k;
        used[best] = 1;
        out[r] = a[best * n + best];
        double dot = 0;
        for (int c = 0; c < n; c++) dot += tl_sgnref[c] * v[c * n + best];
        for (int c = 0; c < n; c++) out[n + r * n + c] = dot < 0 ? -v[c * n + best] : v[c * n + best];
    }
    if (n == 3) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) a[r * 3 + c] = 0.5 * (m[r * 3 + c] + m[c * 3 + r]);
        tl_eig3_signs(a, out);
    }
}
static void tl_inv(int n, const double *m0, double *out) {
    double d, m[9], big = 0;  /* scaled by a power of two near the largest entry: no overflow */
    int e = 0;
    for (int k = 0; k < n * n; k++) big = fabs(m0[k]) > big ? fabs(m0[k]) : big;
    if (big > 0 && isfinite(big)) frexp(big, &e);
    for (int k = 0; k < n * n; k++) m[k] = ldexp(m0[k], -e);
    if (n == 2) {
        d = m[0] * m[3] - m[1] * m[2];
        out[0] = m[3] / d; out[1] = -m[1] / d; out[2] = -m[2] / d; out[3] = m[0] / d;
    } else {
        out[0] = m[4] * m[8] - m[5] * m[7]; out[1] = m[2] * m[7] - m[1] * m[8]; out[2] = m[1] * m[5] - m[2] * m[4];
        out[3] = m[5] * m[6] - m[3] * m[8]; out[4] = m[0] * m[8] - m[2] * m[6]; out[5] = m[2] * m[3] - m[0] * m[5];
        out[6] = m[3] * m[7] - m[4] * m[6]; out[7] = m[1] * m[6] - m[0] * m[7]; out[8] = m[0] * m[4] - m[1] * m[3];
        d = m[0] * out[0] + m[1] * out[3] + m[2] * out[6];
        for (int k = 0; k < 9; k++) out[k] /= d;
    }
    int bad = d == 0 || !isfinite(d);
    for (int k = 0; k < n * n; k++) bad |= !isfinite(m[k]);
    for (int k = 0; k < n * n; k++) out[k] = bad ? NAN : ldexp(out[k], -e);
}
