"""The fields suite's probe bound (tensorlang_bench.suites.fields.counts: the larger of the flops at the FMA
peak and the bytes at the bandwidth, both measured now, one thread, as `tensorlang bench` does) for the
256^3 rows at 10^6 and 10^7 points, and the same bytes at the core's streaming read bandwidth alone
(../tiles/bw.c, printed by run.sh beside this):   PYTHONPATH=benchmarks python bound.py"""
from tensorlang_bench import machine
from tensorlang_bench.suites import fields

lim = machine.measure_limits((1,))[1]
peak, bw = lim.peak_gflops * 1e9, lim.bandwidth_gbs * 1e9
print(f"FMA peak {peak / 1e9:.1f} GFLOP/s, bandwidth {bw / 1e9:.1f} GB/s (copy {lim.copy_gbs:.1f}, "
      f"triad {lim.triad_gbs:.1f}, update {lim.update_gbs:.1f})")
for points in (1_000_000, 10_000_000):
    for order, name in enumerate(("value", "gradient", "Hessian")):
        flops, nbytes, once = fields.counts(order, 256, points)
        t = max(flops * points / peak, (nbytes * points + once) / bw)
        print(f"256^3, {points} points, {name}: bound {t * 1e3:.2f} ms (flops {flops * points / peak * 1e3:.2f} ms, "
              f"bytes {(nbytes * points + once) / 1e6:.0f} MB: {(nbytes * points + once) / bw * 1e3:.2f} ms)")
