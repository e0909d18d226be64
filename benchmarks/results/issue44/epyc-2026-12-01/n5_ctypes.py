import ctypes
import numpy as np
import time
import statistics
import random
import os

libs = {
    n: ctypes.CDLL(f"/tmp/{n}.so")
    for n in ["before5", "a5nf_noomp", "v_nopf", "v_nowpf"]
}
rng = np.random.default_rng(0)
A, B, C = (rng.standard_normal((5, 5)) for _ in range(3))
u = rng.standard_normal((8388, 5, 5, 5))
v = np.empty_like(u)
def P(a):
    return a.ctypes.data_as(ctypes.c_void_p)
args = [P(A), P(B), P(C), P(u), P(v), ctypes.c_int(1)]
ref = None
for n, l in libs.items():
    l.tl_step0(*args)
    if ref is None:
        ref = v.copy()
    print(n, np.array_equal(v, ref))
t = {n: [] for n in libs}
for _r in range(60):
    o = list(libs)
    random.shuffle(o)
    for n in o:
        c0 = time.thread_time()
        for _ in range(5):
            libs[n].tl_step0(*args)
        t[n].append((time.thread_time() - c0) / 5)
for n in libs:
    print(f"{n:12s} {statistics.median(t[n]) * 1e3:.3f} min {min(t[n]) * 1e3:.3f}")
print(os.getloadavg())
