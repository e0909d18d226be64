// strands_api.h: what the runner calls in a built strand program (strands.py, its cffi declarations,
// after strands_probe.TYPEDEF); see docs/diderot-compiled.md.

void tl_create(int64_t n, int nd, const int64_t *lo, const int64_t *ext, double *R, int64_t *I, int8_t *status,
               const double *gr, const int64_t *gi, const tl_img *img, int threads, int64_t *err);
int64_t tl_steps(int64_t n, int64_t k, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi,
                 const tl_img *img, int threads, int64_t *err, int64_t *active_out, int64_t *pending,
                 int64_t *ord, int64_t *nlive, int64_t *rank);
int64_t tl_finish(int64_t n, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi, const tl_img *img,
                  int threads, int64_t *err, int64_t *ord, int64_t *nlive);
void tl_init_range(int64_t n, int64_t from, double *R, int64_t *I, int8_t *status, const double *gr,
                   const int64_t *gi, const tl_img *img, int threads);
void tl_begin(int64_t n, double *R, int64_t *I, int8_t *status, double *gr, int64_t *gi, const tl_img *img,
              int64_t *err, int64_t *ord, int64_t *nlive, int64_t *rank);
int64_t tl_nbirths(void);
void tl_take_births(int64_t *par, int64_t *seq, double *br, int64_t *bi);
const char *tl_printed(int64_t *n);
const int64_t *tl_pmarks(int64_t *n);
void tl_set_strings(const char *const *more, int64_t n);
typedef struct { const double *data; int64_t len; int64_t comps; int64_t kept; } tl_seq;
void tl_set_seqs(tl_seq *s);
void tl_set_run(int64_t run);
void tl_set_prev(int64_t prev);
void tl_set_kpos(int k);
void tl_set_fixed(int f);
void tl_set_bmax(int64_t m);
void tl_set_armax(int64_t m);
void tl_out_real(const double *T, int64_t n, const int64_t *rows, int64_t m, const int64_t *cols, int64_t count, double *out);
void tl_kp_use(int64_t *kp);
void tl_kp_free(int64_t *kp);
void tl_kp_gather(const int64_t *hs, int64_t n, int64_t c, int64_t *lens, void *out);
