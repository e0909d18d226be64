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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from probe_bench import phases_c, tree  # noqa: E402

KERNELS, probe = tree()

def empty(d, S, order, ncomp, combos):
    return [f"const tl_bd R0_{j} = TL_SELECT(okm, TL_LOADB(w0[0][{j % 4}]), nanv);" for j in range(len(combos))]


order, out = int(sys.argv[1]), sys.argv[2]
if os.environ.get("EMPTY"):
    probe._lanes_sums = empty
src, _ = probe.source(3, KERNELS["bspln3"], order, 1, None)
src += phases_c(probe)
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
