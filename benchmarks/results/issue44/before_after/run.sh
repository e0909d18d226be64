#!/bin/bash
# The run of 2026-11-29: CPU 1 reserved 19:40-20:20 UTC; the driver waits on CPU 0, the workers run on CPU 1.
cd "$(dirname "$0")"
OUT=${1:-run}
export TL_CPU=1 TL_DEADLINE=$(date -u -d '20:16:30' +%s) TL_END=$(date -u -d '20:18:40' +%s)
exec taskset -c 0 /work/benchenv/bin/python measure.py drive "$OUT" 12
