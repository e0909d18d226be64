"""The C of a 3-D bspln3 probe (targets/c/probe.py's source, from the tree at SRC) with tl_phases, a
wrapper that times tl_sort, the probes and tl_unpack separately (thread CPU time), making the
choices tl_probe makes (tiles where the blocks hold >= probe.TILES points; else, in the tree of this
change, where the blocks hold >= probe.REGION_POINTS, the blocks probed from the image with the next
block's rows asked for; else, and in the tree before it, tl_probe_points with its look-ahead):

    SRC=dir python gen.py ORDER OUT.c       (REGION=0: the tree's REGION_POINTS set to 0, the look-ahead always)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from probe_bench import phases_c, tree  # noqa: E402

KERNELS, probe = tree()

order, out = int(sys.argv[1]), sys.argv[2]
src, _ = probe.source(3, KERNELS["bspln3"], order, 1, None)
new = "int64_t total, int copy)" in src
region = int(os.environ.get("REGION", str(getattr(probe, "REGION_POINTS", 0))))
wrapper = phases_c(probe, "tl_sort(n, pts, sizes, M, sorted, key, ends, 1)", f"copy || ({region} > 0 && n >= {region} * total)",
                   "tl_probe_tiles(n, sorted, data, sizes, M, packed, 1, ends, blocks, copy)" if new
                   else "tl_probe_tiles(n, sorted, data, sizes, M, packed, 1, ends, blocks)",
                   f"    const int copy = n >= {probe.TILES} * total;\n")
with open(out, "w") as f:
    f.write(src + wrapper)
