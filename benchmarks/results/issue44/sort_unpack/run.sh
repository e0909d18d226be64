#!/bin/sh
# Before (main at BASE) and after (this tree) in one interleaved process per size: the three phases of the
# 3-D bspln3 probe (gen.py's tl_phases), paired ratios before/after, outputs compared bit for bit.
# From the repository root:   sh benchmarks/results/issue44/sort_unpack/run.sh > benchmarks/results/issue44/sort_unpack/log.txt
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-/tmp/probe_sort_unpack}
BASE=${BASE:-abdab737}
ROUNDS=${ROUNDS:-9}
. "$HERE/../build_pairs.sh"
cd "$BUILD"
uptime
for s in 256 128 64; do run SIZE=$s N=1000000 $PY "$HERE/pairs.py" b0.so,a0.so,b1.so,a1.so,b2.so,a2.so $ROUNDS; done
run SIZE=256 N=10000000 $PY "$HERE/pairs.py" b0.so,a0.so,b1.so,a1.so,b2.so,a2.so 5
uptime
# the bound of these rows now, and the core's streaming read bandwidth (a 128 MiB array summed)
gcc -O2 -march=native "$HERE/../tiles/bw.c" -o bw && run ./bw
run PYTHONPATH="$ROOT/benchmarks" $PY "$HERE/bound.py"
uptime
