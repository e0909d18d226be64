"""Roofline plots: every case of a suite as a point (arithmetic intensity, attained GFlop/s)
under the machine's two measured ceilings, the FMA peak (machine.measure_fma_peak: a loop
of independent vector FMAs, the core's own bound) and bandwidth, at the run's thread
count; the BLAS matrix-product rate is drawn as a dashed line below the peak (runs saved
before the FMA peak was measured have the GEMM rate as their roof).

The roofline model (Williams, Waterman and Patterson) bounds a kernel that moves B bytes and
does F flops by ``min(peak, bandwidth × F/B)``.  A point's height below its roof is how far
that kernel sits from the floor the issue asks us to report.  We draw, per case, tensorlang's
fastest correct contender (filled) and the fastest correct peer (hollow), joined by a thin
line, so that both the gap to the roof and the gap to the best peer show at once.

The flops and bytes are the case's own counts (each suite documents them: compulsory
traffic, not what a contender actually moves), so a point above the bandwidth roof means
the data stayed in cache between calls, which small cases do.
"""

from __future__ import annotations

from pathlib import Path


def roofline_points(results: dict, suite: str) -> list[dict]:
    """One record per case of ``suite`` with timed contenders: the case's intensity
    (flops per byte) and, for tensorlang's and the best peer's fastest correct contender,
    the name and attained GFlop/s.  Cases without flops or bytes are left out."""
    points = []
    for case in results["cases"]:
        if case["suite"] != suite or not case.get("flops") or not case.get("bytes"):
            continue
        timed = [r for r in case["contenders"] if r.get("status") == "ok" and r.get("median_s")]
        ours, peer = _fastest(timed, "tensorlang"), _fastest(timed, "peer")
        if ours is None and peer is None:
            continue
        point = {"kernel": case["kernel"], "label": case["label"], "threads": case.get("threads", 1),
                 "intensity": case["flops"] / case["bytes"]}
        for key, rec in (("tensorlang", ours), ("peer", peer)):
            if rec is not None:
                point[key] = rec["name"]
                point[f"{key}_GFLOPps"] = case["flops"] / rec["median_s"] / 1e9
        points.append(point)
    return points


def _fastest(timed: list[dict], family: str) -> dict | None:
    """The record of ``family`` in ``timed`` with the least median time, or None."""
    recs = [r for r in timed if r["family"] == family]
    return min(recs, key=lambda r: r["median_s"]) if recs else None


def write_rooflines(results: dict, directory: Path, plt) -> list[str]:
    """``<suite>_roofline.png`` for each suite with points, under the ceilings measured at
    the run's thread count; the names written (relative to ``directory``)."""
    limits = results.get("limits", {}).get(str(results.get("threads", 1)))
    if not limits:
        return []
    from .report import _plain_log_ticks as plain_log_ticks  # report imports this module lazily

    gemm, bandwidth = limits["gemm_GFLOPps"], limits["bandwidth_GBps"]
    peak = limits.get("fma_peak_GFLOPps") or gemm
    written = []
    for suite in results["suites"]:
        points = roofline_points(results, suite)
        if not points:
            continue
        fig, ax = plt.subplots(figsize=(7, 5))
        lows = [p["intensity"] for p in points]
        x_low, x_high = min(min(lows) / 2, peak / bandwidth / 4), max(max(lows) * 2, peak / bandwidth * 4)
        ridge = peak / bandwidth
        roof = "FMA peak" if limits.get("fma_peak_GFLOPps") else "GEMM"
        ax.plot([x_low, ridge, x_high], [bandwidth * x_low, peak, peak], color="black", linewidth=1.5,
                label=f"roof: {roof} {peak:.0f} GFlop/s, {bandwidth:.0f} GB/s")
        if gemm < peak:
            ax.plot([gemm / bandwidth, x_high], [gemm, gemm], color="black", linewidth=0.8, linestyle="--",
                    label=f"BLAS GEMM {gemm:.0f} GFlop/s")
        kernels = sorted({p["kernel"] for p in points})
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for k, kernel in enumerate(kernels):
            colour = colours[k % len(colours)]
            for p in (p for p in points if p["kernel"] == kernel):
                ours, theirs = p.get("tensorlang_GFLOPps"), p.get("peer_GFLOPps")
                if ours is not None and theirs is not None:
                    ax.plot([p["intensity"]] * 2, [ours, theirs], color=colour, linewidth=0.6, alpha=0.6)
                if ours is not None:
                    ax.plot(p["intensity"], ours, "o", color=colour)
                if theirs is not None:
                    ax.plot(p["intensity"], theirs, "o", markerfacecolor="none", color=colour)
            ax.plot([], [], "o", color=colour, label=kernel)
        ax.plot([], [], "o", color="gray", label="tensorlang (fastest)")
        ax.plot([], [], "o", color="gray", markerfacecolor="none", label="best peer")
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_ticks(ax.xaxis)
        plain_log_ticks(ax.yaxis)
        ax.set_xlabel("arithmetic intensity (flops per compulsory byte)")
        ax.set_ylabel("attained GFlop/s")
        ax.set_title(f"{suite}: roofline ({results.get('threads', 1)} thread(s), "
                     f"{'quick' if results.get('quick') else 'full'} run)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        fig.tight_layout()
        name = f"{suite}_roofline.png"
        fig.savefig(Path(directory) / name, dpi=110)
        plt.close(fig)
        written.append(name)
    return written
