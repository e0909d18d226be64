"""Issue 44's padding row, the sizes around the table's: one fused program at several n
(2^20 points), its contenders interleaved per round and timed by the thread's CPU time
(best and median of ROUNDS batches), as table.py times them.  Contenders: ``off``,
``auto``, ``pad8`` (every buffer padded, plain arrays), ``pad8pp`` (the same kernel on
``tl.padded_empty`` inputs and result: no copy), ``loc8`` (the fused loops' locals
alone padded).  The runs quoted in docs/performance.md ("pad=auto weighs the remainder")
are in sizes.txt.  Run pinned, from the repository root:

    PYTHONPATH=src:benchmarks taskset -c 1 python benchmarks/results/issue44/pad/sizes.py interpolation 23,27,31 off,loc8,pad8,pad8pp 21
"""

import dataclasses
import sys
import time

import numpy as np

import tensorlang as tl
from tensorlang import api
from tensorlang.errors import Source
from tensorlang_bench.suites.common import CORPUS, make_rng


def kernel(source: str, how: str):
    if how == "off":
        return tl.compile(source, backend="c")
    if how == "auto":
        return tl.compile(source, backend="c", pad="auto")
    if how.startswith("pad8"):
        return tl.compile(source, backend="c", pad=8)
    options = dataclasses.replace(api.compile_options(backend="c"), pad_locals=int(how[3:]))
    return api.compile_source(Source(source), options=options)


def case(prog: str, n: int, hows: list[str], rounds: int, batch_s: float = 3e-3):
    E = max(1, 2**20 // n**3)
    source = getattr(CORPUS, prog + "_source")(n, E)
    rng = make_rng(n)
    shape = (E, n, n, n)
    if prog == "interpolation":
        inp = {k: rng.uniform(-1, 1, (n, n)) / n for k in "ABC"}
        inp["u"] = rng.uniform(-1, 1, shape)
    else:
        inp = {"S": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(0.5, 1.5, shape), "u": rng.uniform(-1, 1, shape)}
    bound, reference = {}, None
    for how in hows:
        k = kernel(source, how)
        if how.endswith("pp"):
            args = {}
            for name, value in inp.items():
                args[name] = tl.padded_empty(value.shape, k.pad)
                args[name][...] = value
            out = tl.padded_empty(shape, k.pad)
        else:
            args, out = inp, np.empty(shape)

        def call(k=k, out=out, args=args):
            return k(out={"v": out}, **args)
        call()
        if reference is None:
            reference = out.copy()
        assert np.allclose(out, reference, atol=1e-12), how
        start = time.thread_time()
        call()
        one = time.thread_time() - start
        bound[how] = (call, max(1, int(batch_s / max(one, 1e-7))))
    times: dict[str, list[float]] = {h: [] for h in hows}
    for r in range(rounds):
        for how in hows[r % len(hows):] + hows[:r % len(hows)]:
            call, count = bound[how]
            start = time.thread_time()
            for _ in range(count):
                call()
            times[how].append((time.thread_time() - start) / count)
    return {h: min(v) for h, v in times.items()}, {h: float(np.median(v)) for h, v in times.items()}


if __name__ == "__main__":
    prog, ns, hows, rounds = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
    for n in map(int, ns.split(",")):
        best, median = case(prog, n, hows, rounds)
        base = best[hows[0]]
        print(prog, n, " ".join(f"{h}={best[h] * 1e3:.2f}ms({base / best[h]:.2f},med {median[h] * 1e3:.2f})"
                                for h in hows), flush=True)
