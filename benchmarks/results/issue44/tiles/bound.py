"""% of the fields suite's probe bound (tensorlang_bench.suites.fields.counts: the larger of the
flops at the FMA peak and the bytes at the bandwidth, both measured now, one thread, as
`tensorlang bench` does) for the 256^3, 10^6-point rows, from the phases' median times in
log.txt:   python bound.py log.txt      (run pinned: taskset -c 1; PYTHONPATH=benchmarks)"""
import re
import sys

from tensorlang_bench import machine
from tensorlang_bench.suites import fields

lim = machine.measure_limits((1,))[1]
peak, bw = lim.peak_gflops * 1e9, lim.bandwidth_gbs * 1e9
print(f"FMA peak {peak / 1e9:.1f} GFLOP/s, bandwidth {bw / 1e9:.1f} GB/s (copy {lim.copy_gbs:.1f}, "
      f"triad {lim.triad_gbs:.1f}, update {lim.update_gbs:.1f})")
bounds = {}
for order, name in enumerate(("value", "gradient", "Hessian")):
    flops, nbytes, once = fields.counts(order, 256, 1_000_000)
    t = max(flops * 1e6 / peak, (nbytes * 1e6 + once) / bw)
    bounds[order] = t
    print(f"{name}: bound {t * 1e3:.2f} ms (flops {flops * 1e6 / peak * 1e3:.2f} ms, bytes {(nbytes * 1e6 + once) / bw * 1e3:.2f} ms)")
text = open(sys.argv[1]).read()
part = text.split("== SIZE=256 ")[1].split("== ")[0]
for lib, med in re.findall(r"^(\w+)\.so min ms sort/probe/unpack: \[[^\]]*\] median: \[([^\]]*)\]", part, re.M):
    total = sum(map(float, med.split())) * 1e-3
    order = int(lib[-1])
    print(f"{lib}: sort+probe+unpack {total * 1e3:.1f} ms, {100 * bounds[order] / total:.0f}% of the bound")
