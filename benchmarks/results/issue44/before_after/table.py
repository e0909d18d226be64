"""The tables of measure.py's run: ``python table.py OUTDIR`` (writes OUTDIR/summary.json
and prints markdown; ``--docs``: the tables of docs/performance.md; ``--pack``: the processes'
JSON packed into OUTDIR/processes.json.gz first).

Per tree and contender: the best batch over all rounds (each round one process) and the
median of the rounds' medians, wall clock and process CPU time.  Ratios are paired: a
peer over tensorlang within one process, after over before between the two processes of
one round (adjacent in time, their order alternating); the median over rounds is given
with the range.  % of bound: the bound's time, max(flops / FMA peak, bytes / bandwidth)
(limits-*.json, the better of the start and end passes), over the best batch."""

from __future__ import annotations

import glob
import gzip
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

PEERS = {"structure": ("opt_einsum", "numpy"), "cfd": ("jax", "numba", "opt_einsum"), "small": ("numba", "numpy", "ctypes (bare call)")}


def _files(outdir: Path) -> dict[str, dict]:
    """name -> JSON of a run directory's processes: the files measure.py wrote, or, once
    packed (``pack``), the one ``processes.json.gz`` holding them all."""
    packed = outdir / "processes.json.gz"
    found = json.loads(gzip.decompress(packed.read_bytes())) if packed.exists() else {}
    for f in glob.glob(str(outdir / "*-*.json")):  # the limits passes stay files of their own
        found[Path(f).name] = json.loads(Path(f).read_text())
    return found


def pack(outdir: str) -> None:
    """Every process's JSON of a run directory into processes.json.gz (the files removed)."""
    out = Path(outdir)
    found = {name: d for name, d in _files(out).items() if not name.startswith("limits")}
    (out / "processes.json.gz").write_bytes(gzip.compress(json.dumps(found).encode(), 9))
    for name in found:
        if (out / name).exists():
            (out / name).unlink()


def _load(outdir: Path):
    runs = defaultdict(dict)  # (group, round) -> tree -> data
    files = _files(outdir)
    for name, d in files.items():
        if not name.startswith("limits"):
            runs[(d["group"], d["round"])][d["tree"]] = d
    limits = [d for name, d in sorted(files.items()) if name.startswith("limits")]
    return runs, limits


def unique_flops(kernel: str, label: str, flops: float) -> float:
    """The symmetric kernels' own work: the unique entries, one multiply-add each per row."""
    parts = dict(p.split("=") for p in label.split() if "=" in p)
    if kernel == "moment3":
        m, n = int(parts["m"]), int(parts["n"])
        return 2.0 * m * n * (n + 1) * (n + 2) / 6
    if kernel == "covariance":
        m, n = int(parts["m"]), int(parts["n"])
        return 1.0 * m * n * (n + 1)
    return flops


def main(outdir: str) -> None:
    out = Path(outdir)
    runs, limits = _load(out)
    peak = max(x["fma_peak_gflops"] for x in limits) * 1e9
    bw = max(max(x["copy_gbs"], x["triad_gbs"], x["update_gbs"]) for x in limits) * 1e9
    per = defaultdict(lambda: defaultdict(list))  # (group, case) -> (tree, contender) -> [contender stats]
    paired = defaultdict(list)  # (group, case, contender) -> [after best / before best]
    paired_cpu = defaultdict(list)
    inproc = defaultdict(list)  # (group, case, tree, peer) -> [peer best / tl best]
    meta = {}
    loads = defaultdict(list)
    after_jax = defaultdict(lambda: defaultdict(list))  # (case, tree) -> predecessor -> [wall/median, cpu/median]
    for (group, _rnd), trees in sorted(runs.items()):
        for tree, d in trees.items():
            loads[tree] += [d["load_start"][0], d["load_end"][0]]
            for case, c in d["cases"].items():
                meta[(group, case)] = (c["flops"], c["bytes"])
                for name, s in c["contenders"].items():
                    per[(group, case)][(tree, name)].append(s)
                tl = c["contenders"].get("tensorlang[c]")
                for peer in PEERS.get(group, ()):
                    if tl and peer in c["contenders"]:
                        inproc[(group, case, tree, peer)].append(c["contenders"][peer]["best_s"] / tl["best_s"])
                auto = c["contenders"].get("tensorlang[c] pad=auto")
                if tl and auto:  # padding: off over auto, in one process
                    inproc[(group, case, tree, "off/auto")].append(tl["best_s"] / auto["best_s"])
                if group == "cfd" and tl:
                    mw = statistics.median(w for n, _, w, _ in c["batches"] if n == "tensorlang[c]")
                    mc = statistics.median(x for n, _, _, x in c["batches"] if n == "tensorlang[c]")
                    for n, prev, w, x in c["batches"]:
                        if n == "tensorlang[c]" and prev is not None:
                            after_jax[(case, tree)][prev].append((w / mw, x / mc, w, x))
        if "before" in trees and "after" in trees:
            for case, c in trees["after"]["cases"].items():
                b = trees["before"]["cases"].get(case)
                if not b:
                    continue
                for name, s in c["contenders"].items():
                    if name in b["contenders"]:
                        paired[(group, case, name)].append(s["best_s"] / b["contenders"][name]["best_s"])
                        paired_cpu[(group, case, name)].append(s["cpu_best_s"] / b["contenders"][name]["cpu_best_s"])

    def agg(stats):
        return {"best_s": min(s["best_s"] for s in stats), "median_s": statistics.median(s["median_s"] for s in stats),
                "cpu_best_s": min(s["cpu_best_s"] for s in stats),
                "cpu_median_s": statistics.median(s["cpu_median_s"] for s in stats), "processes": len(stats)}

    def rng(xs):
        return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)} if xs else None

    summary = {"peak_gflops": peak / 1e9, "bandwidth_gbs": bw / 1e9, "limits": limits,
               "load": {t: (min(v), max(v)) for t, v in loads.items()}, "cases": {}}
    for (group, case), by in sorted(per.items()):
        flops, nbytes = meta[(group, case)]
        kernel, label = case.split(" | ")
        bound_s = max(unique_flops(kernel, label, flops) / peak, nbytes / bw)
        entry = {"flops": flops, "unique_flops": unique_flops(kernel, label, flops), "bytes": nbytes,
                 "bound_s": bound_s, "bound_kind": "FMA" if unique_flops(kernel, label, flops) / peak >= nbytes / bw
                 else "memory", "contenders": {}}
        for (tree, name), stats in sorted(by.items()):
            a = agg(stats)
            a["pct_of_bound"] = 100 * bound_s / a["best_s"]
            entry["contenders"][f"{tree}: {name}"] = a
        entry["after_over_before"] = {n: rng(v) for (g, c, n), v in paired.items() if (g, c) == (group, case)}
        entry["after_over_before_cpu"] = {n: rng(v) for (g, c, n), v in paired_cpu.items() if (g, c) == (group, case)}
        entry["peer_over_tl"] = {f"{t}: {p}": rng(v) for (g, c, t, p), v in inproc.items() if (g, c) == (group, case)}
        summary["cases"][f"{group} | {case}"] = entry
    summary["tl_after_predecessor"] = {
        f"{case} | {tree}": {prev: {"n": len(v), "wall_over_median": statistics.median(x[0] for x in v),
                                    "cpu_over_median": statistics.median(x[1] for x in v),
                                    "wall_min_s": min(x[2] for x in v), "cpu_min_s": min(x[3] for x in v)}
                             for prev, v in sorted(preds.items())}
        for (case, tree), preds in sorted(after_jax.items())}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))

    print(f"FMA peak {peak / 1e9:.1f} GFLOP/s, bandwidth {bw / 1e9:.1f} GB/s; load {summary['load']}")
    print("| case | contender | before best (median) | after best (median) | after/before (best, median of rounds; range) | after: % of bound |")
    print("| --- | --- | --- | --- | --- | --- |")
    for key, e in summary["cases"].items():
        names = sorted({k.split(": ", 1)[1] for k in e["contenders"]})
        for name in names:
            b, a = e["contenders"].get(f"before: {name}"), e["contenders"].get(f"after: {name}")
            r = e["after_over_before"].get(name)
            fmt = lambda s: f"{s['best_s'] * 1e3:.4g} ms ({s['median_s'] * 1e3:.4g})" if s else "–"  # noqa: E731
            rr = f"{r['median']:.3f} ({r['min']:.3f}–{r['max']:.3f}, n={r['n']})" if r else "–"
            pct = f"{a['pct_of_bound']:.0f}% ({e['bound_kind']})" if a else "–"
            print(f"| {key} | {name} | {fmt(b)} | {fmt(a)} | {rr} | {pct} |")
    print("\npeer / tensorlang[c], best batches in one process, median over rounds (range):")
    for key, e in summary["cases"].items():
        for k, r in sorted(e["peer_over_tl"].items()):
            print(f"  {key} | {k}: {r['median']:.3f} ({r['min']:.3f}–{r['max']:.3f})")
    print("\ntensorlang[c] (cfd n=16) by the contender run just before it, over the process's median:")
    for k, preds in summary["tl_after_predecessor"].items():
        print("  " + k + ": " + ", ".join(f"{p} wall {v['wall_over_median']:.3f} cpu {v['cpu_over_median']:.3f} (n={v['n']})"
                                          for p, v in preds.items()))




def _t(s: float) -> str:
    """A time in its unit, 3 significant digits."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


def docs(outdir: str) -> None:
    """The markdown rows of docs/performance.md's section (from summary.json)."""
    s = json.loads((Path(outdir) / "summary.json").read_text())
    cases = s["cases"]

    def get(key, tree, name):
        return cases[key]["contenders"].get(f"{tree}: {name}")

    def ratio(key, name, cpu=False):
        r = cases[key]["after_over_before_cpu" if cpu else "after_over_before"].get(name)
        return f"{1 / r['median']:.2f} ({1 / r['max']:.2f}–{1 / r['min']:.2f})" if r else "–"

    def inproc(key, tree, peer):
        r = cases[key]["peer_over_tl"].get(f"{tree}: {peer}")
        return f"{r['median']:.2f}" if r else "–"

    print("| row | before: tensorlang[c] | after: tensorlang[c] | before ÷ after (median of rounds, range) | "
          "peer, after run | × peer before | × peer after | after, % of bound (limit) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = [("structure | moment3 | m=4096 n=32", "opt_einsum"), ("structure | moment3 | m=1024 n=24", "opt_einsum"),
            ("structure | moment3 | m=256 n=16", "opt_einsum"),
            ("fields | bspln3_hessian | 256^3 (beyond L2), 1000000 points", None),
            ("fields | bspln3_gradient | 256^3 (beyond L2), 1000000 points", None),
            ("fields | bspln3_value | 256^3 (beyond L2), 1000000 points", None),
            ("cfd | interpolation | n=16 E=256", "jax"), ("cfd | helmholtz | n=16 E=256", "jax"),
            ("small | matmul_2x2 | 2x2", "numba"), ("small | matmul_2x2 | 2x2", "numpy"),
            ("small | matmul_2x2 | 2x2", "ctypes (bare call)"),
            ("structure | covariance | m=256 n=16", "numpy"), ("structure | covariance | m=4096 n=32", "numpy"),
            ("structure | covariance | m=16384 n=64", "numpy")]
    for key, peer in rows:
        if key not in cases:
            continue
        b, a = get(key, "before", "tensorlang[c]"), get(key, "after", "tensorlang[c]")
        p = get(key, "after", peer) if peer else None
        e = cases[key]
        pct = f"{a['pct_of_bound']:.0f}% ({e['bound_kind']})" if "small" not in key else "–"
        print(f"| {key.split(' | ', 1)[1]} | {_t(b['best_s'])} | {_t(a['best_s'])} | {ratio(key, 'tensorlang[c]')} | "
              f"{peer + ' ' + _t(p['best_s']) if p else '–'} | {inproc(key, 'before', peer) if peer else '–'} | "
              f"{inproc(key, 'after', peer) if peer else '–'} | {pct} |")
    print("\ncpu-time ratios (before ÷ after, best process CPU time):")
    for key, _ in rows:
        if key in cases:
            print(f"  {key}: {ratio(key, 'tensorlang[c]', cpu=True)}")
    print("\n| padding case | before: off | before: pad=auto | before: off ÷ auto | after: off | after: pad=auto | "
          "after: off ÷ auto | after: % of bound (off / auto) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, e in cases.items():
        if not key.startswith("padding"):
            continue
        c = e["contenders"]
        bo, ba = c["before: tensorlang[c]"], c["before: tensorlang[c] pad=auto"]
        ao, aa = c["after: tensorlang[c]"], c["after: tensorlang[c] pad=auto"]
        pct = (f"{ao['pct_of_bound']:.0f}% / {aa['pct_of_bound']:.0f}% ({e['bound_kind']})"
               if "interpolation" in key or "helmholtz" in key else "– (in cache)")

        def off_auto(tree, e=e):
            r = e["peer_over_tl"].get(f"{tree}: off/auto")
            return f"{r['median']:.2f} ({r['min']:.2f}–{r['max']:.2f})" if r else "–"

        print(f"| {key.split(' | ', 1)[1]} | {_t(bo['best_s'])} | {_t(ba['best_s'])} | {off_auto('before')} | "
              f"{_t(ao['best_s'])} | {_t(aa['best_s'])} | {off_auto('after')} | {pct} |")


if __name__ == "__main__":
    if "--pack" in sys.argv:
        pack(sys.argv[1])
    main(sys.argv[1])
    if "--docs" in sys.argv:
        docs(sys.argv[1])
