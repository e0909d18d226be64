"""Issue 44's padding row: the padding suite's fused cases (the interpolation, the inverse
Helmholtz operator) with three contenders only, interleaved as measure.py does (best of
41 batches): no padding, pad="auto", pad=W with plain arrays (copied in and out by the
call).  Run pinned, e.g. ``PYTHONPATH=src:benchmarks taskset -c 1 python table.py OUT.json``.
"""

import importlib.util
import json
import sys
import time
from pathlib import Path

from tensorlang_bench.contenders import Peers
from tensorlang_bench.machine import blas_threads
from tensorlang_bench.suites import padding
from tensorlang_bench.suites.common import Context

KEEP = ("tensorlang[c]", "tensorlang[c] pad=auto", "tensorlang[c] pad=W")


def main(out: str) -> None:
    spec = importlib.util.spec_from_file_location("measure", Path(__file__).resolve().parents[1] / "measure.py")
    assert spec is not None and spec.loader is not None
    measure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(measure)
    ctx = Context(Peers(1), threads=1, fma=False)
    found = {}
    with blas_threads(1):
        for case in padding.cases(ctx):
            if case.kernel not in ("interpolation", "helmholtz"):
                continue
            for c in case.contenders:
                if c.name not in KEEP:
                    c.make = None
            key = f"{case.kernel} | {case.label}"
            found[key] = measure.time_case(case)
            print(key, " ".join(f"{n}={v['best_s'] * 1e3:.3f}ms" for n, v in found[key].items()), flush=True)
    with open(out, "w") as fh:
        json.dump({"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cases": found}, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
