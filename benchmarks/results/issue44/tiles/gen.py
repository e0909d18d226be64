"""The C of a 3-D bspln3 probe (targets/c/probe.py's source) with tl_phases, a wrapper that times
tl_sort, the probes and tl_unpack separately (thread CPU time), as probe_phases/gen.py does:

    python gen.py ORDER OUT.c                          the tree's kernel
    SRC=dir TILES=32 python gen.py ORDER OUT.c
        a tree with the tiles (tiles.patch applied: run.sh makes it; or this tree since it was
        committed): the blocks' samples copied into tiles and probed from there
        (tl_probe_tiles), where the blocks hold >= TILES points on average (unset: the tree's)
    COHERENT=0    points always sorted (else tl_sort leaves coherent points in their order)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from probe_bench import phases_c, tree  # noqa: E402

KERNELS, probe = tree()

order, out = int(sys.argv[1]), sys.argv[2]
tiled = hasattr(probe, "TILES")
if tiled:
    probe.TILES = int(os.environ.get("TILES", str(probe.TILES)))  # unset: the tree's default
probe.COHERENT_POINTS = int(os.environ.get("COHERENT", str(probe.COHERENT_POINTS)))
src, _ = probe.source(3, KERNELS["bspln3"], order, 1, None)
on = tiled and probe.TILES > 0
wrapper = phases_c(probe, "tl_sort(n, pts, sizes, M, sorted, key, ends, 1)" if tiled else
                   "tl_sort(n, pts, sizes, M, sorted, key, 1)", f"{int(on)} && n >= {probe.TILES if on else 0} * total",
                   "tl_probe_tiles(n, sorted, data, sizes, M, packed, 1, ends, blocks)" if tiled else "(void)0")
with open(out, "w") as f:
    f.write(src + wrapper)
