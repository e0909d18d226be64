"""The Performance table of docs/diderot.md from a ``tensorlang bench diderot --threads 2``
run: ``python benchmarks/diderot/table.py benchmarks/results/diderot/results.json``.

Per program: tensorlang's time against each peer timed in the same run (ratios: above 1,
tensorlang is faster), the probe bound's share at 1 and 2 threads (the bound at each
thread count from the limits measured in the run), strands per second, compile times."""

from __future__ import annotations

import json
import re
import sys


def _bound(case: dict, limits: dict, threads: int) -> float:
    lim = limits[str(threads)]
    return max(case["flops"] / (lim["gemm_GFLOPps"] * 1e9), case["bytes"] / (lim["bandwidth_GBps"] * 1e9))


def table(results: dict) -> list[str]:
    limits = results["limits"]
    n = results["threads"]
    rows = ["| program | strands | tensorlang 1 thread, strands/s | ÷ Diderot seq | ÷ Diderot pthread -n 1 "
            f"| {n} threads: ÷ Diderot pthread -n {n} | ÷ numpy | % of probe bound (1 / {n} threads) "
            "| compile: tensorlang / diderotc |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for case in results["cases"]:
        t = {c["name"]: c.get("median_s") for c in case["contenders"]}
        one, many = t.get("tensorlang[c] 1 thread"), t.get("tensorlang[c]")

        def ratio(peer: str, ours: float | None, t: dict = t) -> str:
            return f"{t[peer] / ours:.2f}" if t.get(peer) and ours else "–"

        notes = " ".join(case["notes"])
        ours = re.search(r"compile time ([0-9.]+) s", notes)
        theirs = re.search(r"diderot \(seq\): diderotc took ([0-9.]+) s", notes)
        pct = (f"{100 * _bound(case, limits, 1) / one:.1f} / {100 * _bound(case, limits, n) / many:.1f}"
               if one and many else "–")
        rows.append(f"| {case['kernel']} ({case['label']}) | {case['size']} | "
                    f"{case['size'] / one:.3g} | " if one else f"| {case['kernel']} | {case['size']} | – | ")
        rows[-1] += (f"{ratio('diderot (seq)', one)} | {ratio('diderot (pthread) 1 thread', one)} | "
                     f"{ratio('diderot (pthread)', many)} | {ratio('numpy', one)} | {pct} | "
                     f"{ours.group(1) if ours else '–'} s / {theirs.group(1) if theirs else '–'} s |")
    return rows


if __name__ == "__main__":
    print("\n".join(table(json.load(open(sys.argv[1])))))
