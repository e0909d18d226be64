"""The C of a 3-D bspln3 probe (targets/c/probe.py's source) with a wrapper, tl_phases, that times
tl_sort, tl_probe_points and tl_unpack separately (thread CPU time), and the variants measured:

    python gen.py ORDER OUT.c            the tree's kernel (SRC=dir: another source tree's)
    EMPTY=1    every sum replaced by one load (the floor without the sums)
    SHIFTS=a,b,c   blocks of 2^a x 2^b x 2^c cells (axis 0 outermost) instead of 16^3
    NEAR=k     the rows of the points k ahead also prefetched into L1, both lines of each row
    BOTH=1     the look-ahead asks for both lines of each row, not only the first"""
import os
import re
import sys

sys.path.insert(0, os.environ.get("SRC") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../src"))
from tensorlang.sampling.kernels import KERNELS  # noqa: E402
from tensorlang.targets.c import probe  # noqa: E402

WRAPPER = r'''
#include <time.h>
static double tl_now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
/* t[0] the sort, t[1] the probes, t[2] the unpacking (one thread); coherent points: t[1] only */
void tl_phases(int64_t n, const double *pts, const double *data, const int64_t *sizes, const double *M, double *out,
               char *scratch, double *t)
{
    const size_t lines_sorted = ((size_t)n * D * sizeof(double) + 63) / 64;
    const size_t lines_key = ((size_t)n * sizeof(int32_t) + 63) / 64;
    double *sorted = (double *)(scratch + (64 - (uintptr_t)scratch % 64) % 64);
    int32_t *key = (int32_t *)((char *)sorted + lines_sorted * 64);
    double *packed = (double *)((char *)key + lines_key * 64);
    const double a = tl_now();
    const int64_t blocks = tl_sort(n, pts, sizes, M, sorted, key, 1);
    const double b = tl_now();
    if (blocks <= 0) {
        tl_probe_points(n, pts, 0, data, sizes, M, out, 1, 0);
        t[0] = b - a; t[1] = tl_now() - b; t[2] = 0;
        return;
    }
    int64_t look = REGIONBLOCKS * (n / blocks);
    look = look < B ? B : look > REGIONAHEAD ? REGIONAHEAD : look;
    tl_probe_points(n, sorted, 1, data, sizes, M, packed, 1, look);
    const double c = tl_now();
    tl_unpack(n, key, packed, out, 1);
    t[0] = b - a; t[1] = c - b; t[2] = tl_now() - c;
}
'''


def empty(d, S, order, ncomp, combos):
    return [f"const tl_bd R0_{j} = TL_SELECT(okm, TL_LOADB(w0[0][{j % 4}]), nanv);" for j in range(len(combos))]


order, out = int(sys.argv[1]), sys.argv[2]
if os.environ.get("EMPTY"):
    probe._lanes_sums = empty
src, _ = probe.source(3, KERNELS["bspln3"], order, 1, None)
src += WRAPPER.replace("REGIONBLOCKS", str(probe.REGION_BLOCKS)).replace("REGIONAHEAD", str(probe.REGION_AHEAD))
if os.environ.get("SHIFTS"):
    src = src.replace("blocks[a] = ((sizes[a] - 1) >> SHIFT) + 1;", "blocks[a] = ((sizes[a] - 1) >> tl_shift[a]) + 1;")
    src = src.replace("k += ((int64_t)cell >> SHIFT) * mult[a];", "k += ((int64_t)cell >> tl_shift[a]) * mult[a];")
    src = src.replace("static int64_t tl_sort(", "static const int tl_shift[D] = {%s};\nstatic int64_t tl_sort(" % os.environ["SHIFTS"])
    assert src.count("tl_shift[a]") == 2
start = src.index("        if (look > 0 && p0 + look + B <= n)\n")
end = src.index("        int64_t first[B];", start)
block = src[start:end]
if os.environ.get("NEAR"):
    k = os.environ["NEAR"]
    near = block.replace("look > 0 && p0 + look", f"look > 0 && p0 + {k}").replace("(p0 + look + j)", f"(p0 + {k} + j)")
    near = re.sub(r"__builtin_prefetch\(([^,]*), 0, 1\);",
                  lambda m: f"__builtin_prefetch({m.group(1)}, 0, 3); __builtin_prefetch({m.group(1)} + 3, 0, 3);", near)
    src = src[:end] + near + src[end:]
if os.environ.get("BOTH"):
    both = re.sub(r"__builtin_prefetch\(([^,]*), 0, 1\);",
                  lambda m: f"__builtin_prefetch({m.group(1)}, 0, 1); __builtin_prefetch({m.group(1)} + 3, 0, 1);", block)
    src = src[:start] + both + src[end:]
with open(out, "w") as f:
    f.write(src)
