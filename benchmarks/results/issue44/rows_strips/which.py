# ruff: noqa: E731, E702, BLE001 -- a measurement script (it reports any contender that fails to build)
"""Which bench kernels (full sizes) the rows/strips rewrites or the GEMM rule change."""

from collections import defaultdict
from tensorlang.loops import jam
from tensorlang.schedule import steps
from tensorlang_bench.contenders import Peers
from tensorlang_bench.suites import blas, inplace, padding, einsum, structure, cfd
from tensorlang_bench.suites.common import Context

hits = defaultdict(set)
current = [""]
orig_rows, orig_strips = jam._rows, jam._strips


def rows(loop):
    r = orig_rows(loop)
    if r is not None:
        hits[current[0]].add(f"rows({loop.var}:{loop.extent})")
    return r


def strips(loop, fresh):
    r = orig_strips(loop, fresh)
    if r is not None:
        hits[current[0]].add(f"strips({loop.var}:{loop.extent})")
    return r


jam._rows, jam._strips = rows, strips
orig_why = steps.GemmStep.why_not


def why(self, from_c=False):
    r = orig_why(self, from_c)
    if r and r.startswith("a dot or matrix-vector"):
        hits[current[0]].add("no-gemm")
    return r


steps.GemmStep.why_not = why
ctx = Context(Peers(disabled=("torch", "jax", "numba", "opt_einsum")), backends=("c",))
for mod in (blas, inplace, padding, einsum, structure, cfd):
    for case in mod.cases(ctx):
        inputs = None
        for c in case.contenders:
            if c.family != "tensorlang" or c.make is None or "interp" in c.name:
                continue
            current[0] = f"{case.suite} {case.kernel} {case.label}"
            inputs = inputs or case.make_inputs()
            try:
                b = c.make(inputs)
                b.call()
            except Exception as e:
                print("ERR", current[0], c.name, type(e).__name__, e)
for k, v in hits.items():
    print(k, sorted(v))
