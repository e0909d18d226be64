"""Issue 44, ragged tiles: gcc's CPU time (user + system of the child processes) to build
the CFD kernels, cold (a fresh TENSORLANG_CACHE), before (ragged tiles and the split past
two blocks switched off) and after.  Usage: TENSORLANG_CACHE=$(mktemp -d) PYTHONPATH=src
python benchmarks/results/issue44/ragged/compile_time.py i,h 17,23,25,29,31"""
import json
import resource
import sys

sys.path[:0] = ["tests"]
import corpus  # noqa: E402

import tensorlang as tl  # noqa: E402
from tensorlang.loops import microkernel as mk  # noqa: E402

new_tile_of, new_split = mk.tile_of, mk.split_rows


def old_tile_of(loop, itemsize):
    found = new_tile_of(loop, itemsize)
    return None if found is None or found.tail(itemsize) else found


def old_split(rows, extent):
    found = new_split(rows, extent)
    return found if found is not None and len(found) == 2 else None


def children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


for k in sys.argv[1].split(","):
    for n in [int(a) for a in sys.argv[2].split(",")]:
        E = max(1, 2**20 // n**3)
        src = corpus.interpolation_source(n, E) if k == "i" else corpus.helmholtz_source(n, E)
        line = {"kind": k, "n": n}
        for name in ("before", "after"):
            if name == "before":
                mk.tile_of, mk.split_rows = old_tile_of, old_split
            t0 = children()
            try:
                tl.compile(src, backend="c", threads=1)
            finally:
                mk.tile_of, mk.split_rows = new_tile_of, new_split
            line[f"{name}_gcc_s"] = round(children() - t0, 2)
        print(json.dumps(line), flush=True)
