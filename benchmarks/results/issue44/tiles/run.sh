#!/bin/sh
# The per-block tile copy (tiles.patch: at TILES=32, tiled wherever 10^6 points are probed) against main's probe (docs/performance.md, "Fields probes:
# the per-block copy into tiles, measured and not kept").  From the repository root:
#     sh benchmarks/results/issue44/tiles/run.sh > benchmarks/results/issue44/tiles/log.txt
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
PY=${PY:-/work/main/.venv/bin/python}
BUILD=${BUILD:-/tmp/probe_tiles}
mkdir -p "$BUILD"
CC="gcc -O3 -std=c99 -fPIC -shared -fno-strict-aliasing -march=native -fopenmp"
# the src of main before the tiles (base), and it with tiles.patch applied (src)
BASE=${BASE:-111a91a3}
rm -rf "$BUILD/base" "$BUILD/src" && mkdir "$BUILD/base" && git -C "$ROOT" archive "$BASE" src | tar -x -C "$BUILD/base"
cp -r "$BUILD/base/src" "$BUILD/src" && (cd "$BUILD" && patch -s -p1 < "$HERE/tiles.patch")
for o in 0 1 2; do
    SRC="$BUILD/base/src" $PY "$HERE/gen.py" $o "$BUILD/p$o.c" && nice -n 10 $CC "$BUILD/p$o.c" -o "$BUILD/p$o.so" -lm
    SRC="$BUILD/src" TILES=32 $PY "$HERE/gen.py" $o "$BUILD/t$o.c" && nice -n 10 $CC "$BUILD/t$o.c" -o "$BUILD/t$o.so" -lm
done
SRC="$BUILD/base/src" COHERENT=0 $PY "$HERE/gen.py" 0 "$BUILD/pc0.c" && nice -n 10 $CC "$BUILD/pc0.c" -o "$BUILD/pc0.so" -lm
SRC="$BUILD/src" TILES=32 COHERENT=0 $PY "$HERE/gen.py" 0 "$BUILD/tc0.c" && nice -n 10 $CC "$BUILD/tc0.c" -o "$BUILD/tc0.so" -lm
PH="$ROOT/benchmarks/results/issue44/probe_phases/phases.py"
cd "$BUILD"
run() { echo "== $*"; nice -n 10 taskset -c 1 env "$@"; }
uptime
lscpu | grep -E "Model name|L1d|L2|L3"
# 1. the three orders, 10^6 random points, 256^3 (power-of-two strides), 250^3 and 64^3 (in L2)
for s in 256 250 64; do run SIZE=$s $PY "$PH" p0.so,t0.so,p1.so,t1.so,p2.so,t2.so 7; done
# 2. the rows hot (every point in a 6^3-cell region, sorted all the same): the arithmetic, from the image and from a tile
run SC=0.02 SIZE=256 $PY "$PH" pc0.so,tc0.so 7
# 3. a streaming read's bandwidth on this core now (bw.c), and the image's sizes (no tiles): what the power-of-two strides cost on this machine
gcc -O2 -march=native "$HERE/bw.c" -o bw && run ./bw
run $PY "$ROOT/benchmarks/results/issue44/probe_phases/sizes.py" p0.so 256,250,257 7
uptime
