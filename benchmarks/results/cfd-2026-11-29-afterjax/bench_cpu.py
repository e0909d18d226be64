"""`tensorlang bench` suites timed in process CPU time instead of the wall clock: every
batch's clock is time.process_time (all threads of the process, XLA's too; a wait for the
CPU is not counted).  For a machine whose CPUs other processes share: the wall clock there
charges each call the time other processes held the CPU.

    PYTHONPATH=src:benchmarks taskset -c N python bench_cpu.py OUT_DIR SUITE...
"""
from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

from tensorlang_bench import report, runner, timing

runner.time_interleaved = functools.partial(timing.time_interleaved, clock=time.process_time)
runner.time_paired = functools.partial(timing.time_paired, clock=time.process_time)
out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
results = runner.run(sys.argv[2:], threads=1, progress=False,
                     command="bench_cpu.py " + " ".join(sys.argv[1:]) + " (process CPU time)")
report.write_all(results, out)
print("\n".join(report.summary_markdown(results)))
