# ruff: noqa: E731, E702, E401, B023 -- a measurement script (the lambdas run in the iteration that makes them)
import time, numpy as np, tensorlang as tl

for n in (32, 64, 100):
    rng = np.random.default_rng(n)
    U = rng.uniform(0, 1, (n, n))
    v = rng.uniform(0, 1, n)
    x = rng.uniform(0.5, 1.5, n)
    src = f"in var U : [{n} {n}]\nin var v : [{n}]\ninout var x : [{n}]\nx = ((U # v) . [2 3]) * x\n"
    kb = tl.compile(src, backend="c", threads=1, skip_passes=("rows",))
    ka = tl.compile(src, backend="c", threads=1)
    xb, xa = x.copy(), x.copy()
    fb = lambda: kb(out={"x": xb}, U=U, v=v, x=xb)
    fa = lambda: ka(out={"x": xa}, U=U, v=v, x=xa)
    res = {"b": [], "a": []}
    for r in range(21):
        for k, f in (("b", fb), ("a", fa)) if r % 2 else (("a", fa), ("b", fb)):
            t = time.process_time()
            for _ in range(20000):
                f()
            res[k].append((time.process_time() - t) / 20000)
    b, a = np.median(res["b"]), np.median(res["a"])
    print(f"N={n}: before {b * 1e9:.0f} ns after {a * 1e9:.0f} ns  after/before speedup {b / a:.3f}")
