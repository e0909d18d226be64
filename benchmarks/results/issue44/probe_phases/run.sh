#!/bin/sh
# Where a bspln3 probe's time goes (docs/performance.md, "Fields probes: where the time goes").
# From the repository root, with the venv active:  sh benchmarks/results/issue44/probe_phases/run.sh > log.txt
# Builds every variant into $BUILD, then times them interleaved on CPU 1 (thread CPU time).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
BUILD=${BUILD:-/tmp/probe_phases}
mkdir -p "$BUILD"
CC="gcc -O3 -std=c99 -fPIC -shared -fno-strict-aliasing -march=native -fopenmp"
build() {  # name, generator, order, env...
    name=$1; gen=$2; order=$3; shift 3
    env "$@" python "$HERE/$gen" "$order" "$BUILD/$name.c" && nice -n 10 $CC "$BUILD/$name.c" -o "$BUILD/$name.so" -lm
}
# the outer-first kernel (not kept): the tree's src with outer_first.patch applied
rm -rf "$BUILD/src" && cp -r "$ROOT/src" "$BUILD/src" && (cd "$BUILD" && patch -s -p1 < "$HERE/outer_first.patch")
for o in 0 1 2; do
    build p$o gen.py $o
    build q$o gen.py $o SRC="$BUILD/src"
done
build e0 gen.py 0 EMPTY=1
for sh in 3,4,5 2,5,5 2,2,8; do build a$(echo $sh | tr -d ,)_0 gen.py 0 SHIFTS=$sh; done
build n16_0 gen.py 0 NEAR=16
build b_0 gen.py 0 BOTH=1
cd "$BUILD"
run() { echo "== $*"; nice -n 10 taskset -c 1 env "$@"; }
uptime
# 1. the phases (sort, probe, unpack) of the tree's kernel and the outer-first one, 256^3 and 250^3, 10^6 random points
run SIZE=256 python "$HERE/phases.py" p0.so,q0.so,p1.so,q1.so,p2.so,q2.so 9
run SIZE=250 python "$HERE/phases.py" p0.so,q0.so,p1.so,q1.so,p2.so,q2.so 9
# 2. the rows in cache (every point in a 6^3 region: the arithmetic), and the floor without the sums (e0)
run SIZE=250 SC=0.02 python "$HERE/phases.py" p0.so,q0.so,e0.so,p2.so,q2.so 9
run SIZE=256 SC=0.02 python "$HERE/phases.py" p0.so,q0.so,e0.so,p2.so,q2.so 9
# 3. the image's sizes: the same work on 240^3 ... 257^3
for s in 256 240 250 255 257; do run SIZE=$s python "$HERE/phases.py" p0.so 7; done
# 4. other block shapes (2^a cells per axis, axis 0 outermost), rows prefetched into L1, both lines of a row prefetched
run SIZE=256 python "$HERE/phases.py" p0.so,a345_0.so,a255_0.so,a228_0.so,n16_0.so,b_0.so 9
run SIZE=250 python "$HERE/phases.py" p0.so,a345_0.so,a255_0.so,a228_0.so,n16_0.so,b_0.so 9
# 5. the sizes interleaved in one process (sizes.py)
run python "$HERE/sizes.py" p0.so 256,250,240,255,257,128 9
# 6. the same 256^3 samples from arrays with other strides (pitch_log.txt: orders 0, 1, 2)
for o in 0 1 2; do run python "$HERE/pitch.py" p$o.so 256,256:260,260:256,264 13; done
uptime
