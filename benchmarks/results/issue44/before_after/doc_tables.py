"""The two tables of docs/performance.md's section "The cases far from the bound (the table of
2026-11-28), before and after in one interleaved run", from run/summary.json and run2/summary.json (``python table.py run && python table.py run2`` first):
``python doc_tables.py`` in this directory."""

import json
import re

r1 = json.load(open("run/summary.json"))
r2 = json.load(open("run2/summary.json"))


def t(s):
    for u, sc in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= sc:
            return f"{s / sc:.3g} {u}"


def rat(S, key):
    r = S["cases"].get(key, {}).get("after_over_before", {}).get("tensorlang[c]")
    return f"{1 / r['median']:.2f} ({1 / r['max']:.2f}–{1 / r['min']:.2f})" if r else "–"


def inproc(S, key, tree, peer):
    r = S["cases"][key]["peer_over_tl"].get(f"{tree}: {peer}")
    return f"{r['median']:.2f}" if r else "–"


LIM = {
    "moment3": "FMA: load ports, whole blocks",
    "covariance": "FMA: load ports",
    "bspln3": "gathers (22 lines a point)",
    "interpolation": "FMA: tile broadcasts, L2 temporaries",
    "helmholtz": "FMA: tile broadcasts, L2 temporaries",
    "matmul_2x2": "call overhead",
}
rows = [
    ("structure | moment3 | m=4096 n=32", "opt_einsum"),
    ("structure | moment3 | m=1024 n=24", "opt_einsum"),
    ("structure | moment3 | m=256 n=16", "opt_einsum"),
    ("fields | bspln3_hessian | 256^3 (beyond L2), 1000000 points", None),
    ("fields | bspln3_gradient | 256^3 (beyond L2), 1000000 points", None),
    ("fields | bspln3_value | 256^3 (beyond L2), 1000000 points", None),
    ("cfd | interpolation | n=16 E=256", "jax"),
    ("cfd | helmholtz | n=16 E=256", "jax"),
    ("small | matmul_2x2 | 2x2", "numba"),
    ("structure | covariance | m=256 n=16", "numpy"),
    ("structure | covariance | m=4096 n=32", "numpy"),
    ("structure | covariance | m=16384 n=64", "numpy"),
]
print(
    "| row | before | after | before ÷ after, run 1 | run 2 | peer (after, run 1) | × peer, before | × peer, after | after: % of bound | limited by |"
)
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for key, peer in rows:
    e = r1["cases"][key]
    c = e["contenders"]
    b = c["before: tensorlang[c]"]
    a = c["after: tensorlang[c]"]
    p = c.get(f"after: {peer}") if peer else None
    kern = key.split(" | ")[1]
    lab = key.split(" | ")[2].replace(" (beyond L2), 1000000 points", ", 10⁶ points").replace("256^3", "256³")
    pct = "–" if "small" in key else f"{a['pct_of_bound']:.0f}% ({e['bound_kind']})"
    lim = next(v for k, v in LIM.items() if k in kern)
    print(
        f"| {kern} {lab} | {t(b['best_s'])} | {t(a['best_s'])} | {rat(r1, key)} | {rat(r2, key)} | {(peer + ' ' + t(p['best_s'])) if p else '–'} | {inproc(r1, key, 'before', peer) if peer else '–'} | {inproc(r1, key, 'after', peer) if peer else '–'} | {pct} | {lim} |"
    )
print()
print(
    "| case | before: off | before: auto | before: off ÷ auto | after: off | after: auto | after: off ÷ auto, run 1 | run 2 | after: % of bound |"
)
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def oa(S, key, tree):
    r = S["cases"].get(key, {}).get("peer_over_tl", {}).get(f"{tree}: off/auto")
    return f"{r['median']:.2f} ({r['min']:.2f}–{r['max']:.2f})" if r else "–"


keys = [k for k in r1["cases"] if k.startswith("padding")]
order = {"interpolation": 0, "helmholtz": 1, "scale": 2, "multiply": 3, "matvec_mul": 4}
keys.sort(key=lambda k: (order[k.split(" | ")[1]], int(re.findall(r"\d+", k.split(" | ")[2])[0])))
for key in keys:
    c = r1["cases"][key]["contenders"]
    e = r1["cases"][key]
    bo, ba, ao, aa = (
        c[f"{t_}: tensorlang[c]{s}"]
        for t_, s in (("before", ""), ("before", " pad=auto"), ("after", ""), ("after", " pad=auto"))
    )
    pct = f"{ao['pct_of_bound']:.0f}% ({e['bound_kind']})" if ("interp" in key or "helm" in key) else "– (in cache)"
    print(
        f"| {key.split(' | ', 1)[1].replace(' | ', ' ')} | {t(bo['best_s'])} | {t(ba['best_s'])} | {oa(r1, key, 'before')} | {t(ao['best_s'])} | {t(aa['best_s'])} | {oa(r1, key, 'after')} | {oa(r2, key, 'after')} | {pct} |"
    )
