# Sourced by sort_unpack/run.sh and tiles/after.sh, with HERE (the script's folder: its gen.py), BUILD and
# BASE set: the probe C of gen.py for orders 0 1 2 from the tree at BASE (b0.so ...) and from this tree
# (a0.so ...), built into $BUILD; ROOT, PY and CC set; run CMD...: CMD printed and run niced on CPU 1.
ROOT=$(cd "$HERE/../../../.." && pwd)
PY=${PY:-/work/main/.venv/bin/python}
mkdir -p "$BUILD"
CC="gcc -O3 -std=c99 -fPIC -shared -fno-strict-aliasing -march=native -fopenmp"
rm -rf "$BUILD/base" && mkdir "$BUILD/base" && git -C "$ROOT" archive "$BASE" src | tar -x -C "$BUILD/base"
for o in 0 1 2; do
    SRC="$BUILD/base/src" $PY "$HERE/gen.py" $o "$BUILD/b$o.c" && nice -n 10 $CC "$BUILD/b$o.c" -o "$BUILD/b$o.so" -lm
    SRC="$ROOT/src" $PY "$HERE/gen.py" $o "$BUILD/a$o.c" && nice -n 10 $CC "$BUILD/a$o.c" -o "$BUILD/a$o.so" -lm
done
run() { echo "== $*"; nice -n 10 taskset -c 1 env "$@"; }
