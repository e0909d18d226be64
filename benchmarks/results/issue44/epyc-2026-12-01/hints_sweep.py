"""Fused CFD kernels' next-element hints on this machine: the generated C as is, without the
write hints, without any hint; built with the back end's flags, called through ctypes."""

import ctypes
import os
import random
import re
import statistics
import subprocess
import sys
import time
import numpy as np

sys.path.insert(0, "/work/main/tests")
import corpus

FLAGS = "-O3 -std=c99 -fPIC -shared -fno-strict-aliasing -march=native -fopenmp".split()


def variants(c):
    lines = c.split("\n")
    writes = {
        m.group(1)
        for l in lines
        for m in [re.search(r"const char \*(tl_ahead\d+) = .*", l)]
        if m
    }
    # which ahead pointers are written (prefetch ..., 1, 2)
    w = {
        p
        for p in writes
        if any(p in l and "__builtin_prefetch" in l and ", 1, " in l for l in lines)
    }
    nowrite = "\n".join(l for l in lines if not any(p in l for p in w))
    nohint = "\n".join(
        l for l in lines if "__builtin_prefetch" not in l and "tl_ahead" not in l
    )
    def noomp(s):
        return s.replace("#pragma omp parallel for", "// omp parallel for")
    r = {p for p in writes if p not in w}
    writeonly = "\n".join(l for l in lines if not any(p in l for p in r))
    return {
        "as is": c,
        "no write hint": nowrite,
        "write hint only": writeonly,
        "no hint": nohint,
    }


def emit(src, fma):
    open("/tmp/pf/k.tl", "w").write(src)
    out = subprocess.run(
        ["/work/main/.venv/bin/tensorlang", "compile", "/tmp/pf/k.tl", "--emit", "c"]
        + ([] if fma else ["--no-fma"]),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out


rows = []
for kind in sys.argv[1].split(","):
    for n in map(int, sys.argv[2].split(",")):
        E = max(1, 2**20 // n**3)
        src = (
            corpus.interpolation_source if kind == "interp" else corpus.helmholtz_source
        )(n, E)
        c = emit(src, True)
        sig = re.search(r"int tl_step0\(([^)]*)\)", c).group(1)
        decl = dict(re.findall(r"/\* (v\d+): (\w+) \[", c))
        shapes = {
            m[0]: tuple(int(x) for x in m[1].split(","))
            for m in re.findall(r"/\* (v\d+): \w+ \[([\d, ]+)\]", c)
        }
        params = re.findall(r"real \*restrict (v\d+)", sig)
        rng = np.random.default_rng(0)
        arrs = [rng.uniform(-1, 1, shapes[p]) for p in params]
        libs = {}
        for name, text in variants(c).items():
            f = f"/tmp/pf/{kind}{n}_{name.replace(' ', '_')}"
            open(f + ".c", "w").write(text)
            subprocess.run(
                ["gcc", *FLAGS, f + ".c", "-o", f + ".so", "-lm"], check=True
            )
            libs[name] = ctypes.CDLL(f + ".so")
        args = [a.ctypes.data_as(ctypes.c_void_p) for a in arrs] + [ctypes.c_int(1)]
        outs = {}
        for name, l in libs.items():
            l.tl_step0(*args)
            outs[name] = [a.copy() for a in arrs]
        same = all(
            all(np.array_equal(x, y) for x, y in zip(outs["as is"], o))
            for o in outs.values()
        )
        t = {k: [] for k in libs}
        for _r in range(int(os.environ.get("ROUNDS", 25))):
            o = list(libs)
            random.shuffle(o)
            for k in o:
                c0 = time.thread_time()
                for _ in range(3):
                    libs[k].tl_step0(*args)
                t[k].append((time.thread_time() - c0) / 3)
        base = statistics.median(t["as is"])
        print(
            f"{kind} n={n} E={E} same={same} "
            + "  ".join(
                f"{k}: {statistics.median(v) * 1e3:.3f} ms ({base / statistics.median(v):.2f}x)"
                for k, v in t.items()
            ),
            flush=True,
        )
print("load", os.getloadavg())
