#!/bin/sh
# Before (main at 111a91a3) and after (this tree: tiles where the blocks hold >= probe.TILES points on
# average) in one interleaved run per size, then the % of the probe bound (bound.py).  From the repository root:
#     sh benchmarks/results/issue44/tiles/after.sh > benchmarks/results/issue44/tiles/after_log.txt
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
PY=${PY:-/work/main/.venv/bin/python}
BUILD=${BUILD:-/tmp/probe_tiles_after}
BASE=${BASE:-111a91a3}
mkdir -p "$BUILD"
CC="gcc -O3 -std=c99 -fPIC -shared -fno-strict-aliasing -march=native -fopenmp"
rm -rf "$BUILD/base" && mkdir "$BUILD/base" && git -C "$ROOT" archive "$BASE" src | tar -x -C "$BUILD/base"
for o in 0 1 2; do
    SRC="$BUILD/base/src" $PY "$HERE/gen.py" $o "$BUILD/b$o.c" && nice -n 10 $CC "$BUILD/b$o.c" -o "$BUILD/b$o.so" -lm
    SRC="$ROOT/src" $PY "$HERE/gen.py" $o "$BUILD/a$o.c" && nice -n 10 $CC "$BUILD/a$o.c" -o "$BUILD/a$o.so" -lm
done
PH="$ROOT/benchmarks/results/issue44/probe_phases/phases.py"
cd "$BUILD"
run() { echo "== $*"; nice -n 10 taskset -c 1 env "$@"; }
uptime
for s in 256 128 64; do run SIZE=$s $PY "$PH" b0.so,a0.so,b1.so,a1.so,b2.so,a2.so 7; done
uptime
