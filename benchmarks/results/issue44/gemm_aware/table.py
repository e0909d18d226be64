"""The table of docs/performance.md ("Fusion up to the whole L2") from run2-5.json: per case the
best thread CPU time over the passes, and the ratio old / contender per pass (median, range)."""
import json
import statistics
import sys

runs = [json.load(open(f"run{i}.json")) for i in (2, 3, 4, 5)]
for key in ("cpu_ms", "ms"):
    print(f"-- {key}: best over {len(runs)} passes (ms); old / contender, median [min-max] over passes")
    for k, row in enumerate(runs[0]):
        names = list(row[key])
        base = names[0]
        best = {n: min(r[k][key][n] for r in runs) for n in names}
        cells = []
        for n in names:
            ratios = [r[k][key][base] / r[k][key][n] for r in runs]
            cells.append(f"{n} {best[n]:.2f}" + ("" if n == base else f" ({statistics.median(ratios):.2f} [{min(ratios):.2f}-{max(ratios):.2f}])"))
        print(f"{row['case']:52s} " + "; ".join(cells))
print("load (1 min) during the passes:", sorted({round(r[k]['load'], 1) for r in runs for k in range(len(r))})[::4], file=sys.stdout)
