"""The C of a 3-D bspln3 probe (targets/c/probe.py's source, from the tree at SRC) with tl_phases, a
wrapper that times tl_sort, the probes and tl_unpack separately (thread CPU time), making the
choices tl_probe makes (tiles where the blocks hold >= probe.TILES points; else, in the tree of this
change, where the blocks hold >= probe.REGION_POINTS, the blocks probed from the image with the next
block's rows asked for; else, and in the tree before it, tl_probe_points with its look-ahead):

    SRC=dir python gen.py ORDER OUT.c       (REGION=0: the tree's REGION_POINTS set to 0, the look-ahead always)"""
import os
import sys

sys.path.insert(0, os.environ.get("SRC") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../src"))
from tensorlang.sampling.kernels import KERNELS  # noqa: E402
from tensorlang.targets.c import probe  # noqa: E402

HEAD = r'''
#include <time.h>
static double tl_now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
void tl_phases(int64_t n, const double *pts, const double *data, const int64_t *sizes, const double *M, double *out,
               char *scratch, double *t)
{
    const size_t lines_sorted = ((size_t)n * D * sizeof(double) + 63) / 64;
    const size_t lines_key = ((size_t)n * sizeof(int32_t) + 63) / 64;
    double *sorted = (double *)(scratch + (64 - (uintptr_t)scratch % 64) % 64);
    int32_t *key = (int32_t *)((char *)sorted + lines_sorted * 64);
    double *packed = (double *)((char *)key + lines_key * 64);
    int64_t total = 1;
    for (int a = 0; a < D; a++) total *= ((sizes[a] - 1) >> SHIFT) + 1;
    const int copy = n >= TILES_MIN * total;
    int64_t *ends = copy || (REGION > 0 && n >= REGION * total) ? (int64_t *)malloc((size_t)total * sizeof(int64_t)) : NULL;
    const double a = tl_now();
    const int64_t blocks = tl_sort(n, pts, sizes, M, sorted, key, ends, 1);
    const double b = tl_now();
    if (blocks <= 0) {  /* coherent points: the given order */
        tl_probe_points(n, pts, 0, data, sizes, M, out, 1, 0);
        t[0] = b - a; t[1] = tl_now() - b; t[2] = 0;
        free(ends);
        return;
    }
    if (ends != NULL) {
        TILES_CALL;
    } else {
        int64_t look = REGIONBLOCKS * (n / blocks);
        look = look < B ? B : look > REGIONAHEAD ? REGIONAHEAD : look;
        tl_probe_points(n, sorted, 1, data, sizes, M, packed, 1, look);
    }
    const double c = tl_now();
    tl_unpack(n, key, packed, out, 1);
    t[0] = b - a; t[1] = c - b; t[2] = tl_now() - c;
    free(ends);
}
'''

order, out = int(sys.argv[1]), sys.argv[2]
src, _ = probe.source(3, KERNELS["bspln3"], order, 1, None)
new = "int64_t total, int copy)" in src
wrapper = HEAD.replace("REGIONBLOCKS", str(probe.REGION_BLOCKS)).replace("REGIONAHEAD", str(probe.REGION_AHEAD))
region = int(os.environ.get("REGION", str(getattr(probe, "REGION_POINTS", 0))))
wrapper = wrapper.replace("TILES_MIN", str(probe.TILES)).replace("REGION", str(region))
wrapper = wrapper.replace("TILES_CALL", "tl_probe_tiles(n, sorted, data, sizes, M, packed, 1, ends, blocks, copy)" if new
                          else "tl_probe_tiles(n, sorted, data, sizes, M, packed, 1, ends, blocks)")
with open(out, "w") as f:
    f.write(src + wrapper)
