// strands_linalg.h: the library routines of S.Lib statements (eigensystems, inverse) where a strand program
// uses them (strands.py); see docs/diderot-compiled.md.
#define TL_EIG_EPS 3.552713678800501e-15  /* 16 ulps of 1: Diderot's threshold on a repeated root */
static void tl_unit(int n, double *v) {
    double s = v[0] * v[0] + v[1] * v[1];
    s = sqrt(n == 3 ? s + v[2] * v[2] : s);
    if (s > TL_EIG_EPS) { s = 1 / s; for (int k = 0; k < n; k++) v[k] *= s; }
}
/* 2x2 (upper triangle): the closed form of Diderot's executables (the interpreter's _eig2) */
static void tl_eig2(const double *m, double *out) {
    double mean = 0.5 * (m[0] + m[3]), m00 = m[0] - mean, m01 = m[1], m11 = m[3] - mean;
    double q = m00 - m11, d = 4.0 * m01 * m01 + q * q;
    if (!(d > TL_EIG_EPS)) { out[0] = out[1] = 0.0 + mean; out[2] = 1; out[3] = 0; out[4] = 0; out[5] = 1; return; }
    double vv = 0.5 * sqrt(d), r1[2] = {m00 - vv, m01}, r2[2] = {m01, m11 - vv}, e1[2], e0[2];
    double sg = r1[0] * r2[0] + r1[1] * r2[1] > 0 ? 1.0 : -1.0;
    e1[0] = r1[0] + sg * r2[0]; e1[1] = r1[1] + sg * r2[1]; tl_unit(2, e1);
    e0[0] = e1[1]; e0[1] = -e1[0]; tl_unit(2, e0);
    out[0] = vv + mean; out[1] = -vv + mean; out[2] = e0[0]; out[3] = e0[1]; out[4] = e1[0]; out[5] = e1[1];
}
static void tl_cross(const double *a, const double *b, double *r) {
    r[0] = a[1] * b[2] - a[2] * b[1]; r[1] = a[2] * b[0] - a[0] * b[2]; r[2] = a[0] * b[1] - a[1] * b[0];
}
static double tl_dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void tl_toward(double *a, const double *b) {  /* a + b where they point the same way, else a - b */
    double sg = tl_dot3(a, b) > 0 ? 1.0 : -1.0;
    for (int k = 0; k < 3; k++) a[k] += sg * b[k];
}
/* the rows b of u - wI (u: the upper triangle 00 01 02 11 12 22); its null direction (a single root: crosses of
   rows, _null1) or two vectors perpendicular to its rows (a double root: from their sum's largest entry, _null2) */
static void tl_rows(const double *u, double w, double *b) {
    b[0] = u[0] - w; b[1] = b[3] = u[1]; b[2] = b[6] = u[2]; b[4] = u[3] - w; b[5] = b[7] = u[4]; b[8] = u[5] - w;
}
static void tl_null1(const double *b, double *v) {
    double c[3];
    tl_cross(b, b + 3, v);
    tl_cross(b + 3, b + 6, c); tl_toward(v, c);
    tl_cross(b, b + 6, c); tl_toward(v, c);
}
static void tl_null2(const double *b, double *p, double *v) {
    double s[3] = {b[0], b[1], b[2]};
    tl_toward(s, b + 3); tl_toward(s, b + 6);
    int i = s[0] * s[0] < s[1] * s[1] ? 1 : 0;
    i = s[i] * s[i] < s[2] * s[2] ? 2 : i;
    if (i == 0) { p[0] = s[1] - s[2]; p[1] = -s[0]; p[2] = s[0]; }
    else if (i == 1) { p[0] = -s[1]; p[1] = s[0] - s[2]; p[2] = s[1]; }
    else { p[0] = -s[2]; p[1] = s[2]; p[2] = s[0] - s[1]; }
    tl_cross(p, s, v);
}
/* 3x3 (upper triangle): the closed form of Diderot's executables operation for operation (the interpreter's _eig3
   says how); out: the values, largest first, then the vectors */
static void tl_eig3(const double *m, double *out) {
    double *w = out, *v = out + 3, u[6] = {m[0], m[1], m[2], m[4], m[5], m[8]}, b[9];
    double mean = (u[0] + u[3] + u[5]) / 3.0;
    u[0] -= mean; u[3] -= mean; u[5] -= mean;
    double norm = sqrt(u[0] * u[0] + 2 * u[1] * u[1] + 2 * u[2] * u[2] + u[3] * u[3] + 2 * u[4] * u[4] + u[5] * u[5]);
    double rn = norm > TL_EIG_EPS ? 1 / norm : 1.0;
    for (int k = 0; k < 6; k++) u[k] *= rn;
    double q = (u[1] * u[1] + u[2] * u[2] + u[4] * u[4] - u[0] * u[3] - u[0] * u[5] - u[3] * u[5]) / 3.0;
    double r = 0.5 * (u[0] * u[3] * u[5] + u[2] * (2 * u[1] * u[4] - u[2] * u[3]) - u[0] * u[4] * u[4] - u[1] * u[1] * u[5]);
    double d = q * q * q - r * r;
    if (d > TL_EIG_EPS) {  /* three distinct roots */
        double th = atan2(sqrt(d), r) / 3.0, mm = sqrt(q), ss = sin(th), cc = cos(th), s3 = sqrt(3.0);
        w[0] = 2 * mm * cc; w[1] = mm * (-cc + s3 * ss); w[2] = mm * (-cc - s3 * ss);
        for (int i = 0; i < 3; i++) { tl_rows(u, w[i], b); tl_null1(b, v + 3 * i); }
    } else if (fabs(r) > TL_EIG_EPS) {  /* a single and a double root */
        double c = cbrt(r);
        int one = c > 0 ? 0 : 2;
        w[0] = c > 0 ? 2 * c : -c; w[1] = -c; w[2] = c > 0 ? -c : 2 * c;
        tl_rows(u, w[one], b); tl_null1(b, v + 3 * one);
        tl_rows(u, w[1], b); tl_null2(b, v + (one ? 0 : 3), v + (one ? 3 : 6));
    } else {  /* a triple root (or ⊥): the axes */
        for (int k = 0; k < 9; k++) v[k] = k % 4 == 0;
        w[0] = w[1] = w[2] = 0;
    }
    int k = fabs(w[0]) > fabs(w[2]) ? 0 : 2;  /* one frame, kept on the larger outer value's vector */
    tl_unit(3, v + 3 * k);
    double s = tl_dot3(v + 3, v + 3 * k);
    for (int c = 0; c < 3; c++) v[3 + c] -= s * v[3 * k + c];
    tl_unit(3, v + 3);
    if (k == 0) tl_cross(v, v + 3, v + 6);
    else tl_cross(v + 3, v + 6, v);
    for (int i = 0; i < 3; i++) w[i] = w[i] / rn + mean;
}
static void tl_eig(int n, const double *m, double *out) {
    if (n == 2) tl_eig2(m, out);
    else tl_eig3(m, out);
}
/* inv of a 2x2 or 3x3 matrix as Diderot's executables compute it (the interpreter's FV.inv_det, operation for
   operation): (trace·I - M)/det and ((tr² - tr M²)/2·I - tr·M + M²)/det; a singular one gives ±inf and NaN */
static void tl_inv(int n, const double *m, double *out) {
    double t, d, h, mm[9];
    if (n == 2) {
        t = m[0] + m[3]; d = m[0] * m[3] - m[1] * m[2];
        out[0] = (t * 1.0 - m[0]) / d; out[1] = (t * 0.0 - m[1]) / d; out[2] = (t * 0.0 - m[2]) / d; out[3] = (t * 1.0 - m[3]) / d;
        return;
    }
    for (int k = 0; k < 9; k++) mm[k] = m[k / 3 * 3] * m[k % 3] + m[k / 3 * 3 + 1] * m[3 + k % 3] + m[k / 3 * 3 + 2] * m[6 + k % 3];
    t = m[0] + m[4] + m[8];
    h = t * t - (mm[0] + m[3] * m[1] + m[4] * m[4] + m[5] * m[7] + m[6] * m[2] + m[7] * m[5] + m[8] * m[8]);
    d = m[0] * m[4] * m[8] + m[1] * m[5] * m[6] + m[2] * m[3] * m[7] - (m[2] * m[4] * m[6] + m[1] * m[3] * m[8] + m[0] * m[5] * m[7]);
    for (int k = 0; k < 9; k++) out[k] = ((k % 4 ? 0.0 * h / 2.0 : 1.0 * h / 2.0) - t * m[k] + mm[k]) / d;
}
