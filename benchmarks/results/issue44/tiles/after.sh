#!/bin/sh
# Before (main at 111a91a3) and after (this tree: tiles where the blocks hold >= probe.TILES points on
# average) in one interleaved run per size, then the % of the probe bound (bound.py).  From the repository root:
#     sh benchmarks/results/issue44/tiles/after.sh > benchmarks/results/issue44/tiles/after_log.txt
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-/tmp/probe_tiles_after}
BASE=${BASE:-111a91a3}
. "$HERE/../build_pairs.sh"
PH="$ROOT/benchmarks/results/issue44/probe_phases/phases.py"
cd "$BUILD"
uptime
for s in 256 128 64; do run SIZE=$s $PY "$PH" b0.so,a0.so,b1.so,a1.so,b2.so,a2.so 7; done
uptime
