import os
import statistics
import time
import numpy as np
import tensorlang as tl

src = open("/tmp/after5.tl").read()
rng = np.random.default_rng(0)
A, B, C = (rng.standard_normal((5, 5)) for _ in range(3))
u = rng.standard_normal((8388, 5, 5, 5))
v = np.empty_like(u)
k = tl.compile(src, threads=1, fma=False)
for _ in range(20):
    k(A=A, B=B, C=C, u=u, out={"v": v})
t = []
for _r in range(200):
    c0 = time.thread_time()
    k(A=A, B=B, C=C, u=u, out={"v": v})
    t.append(time.thread_time() - c0)
print(
    f"{os.environ['W']:7s} median {statistics.median(t) * 1e3:.3f} min {min(t) * 1e3:.3f}"
)
