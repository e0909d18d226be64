"""Writing results: JSON (everything), markdown tables, matplotlib plots (PNG).

The markdown is what docs/performance.md quotes; the JSON keeps every number (quartiles,
samples, notes) for anyone who wants to re-plot or compare runs.  Plots need matplotlib;
without it they are skipped with a note in the markdown.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

JSON_NAME, MD_NAME = "results.json", "results.md"


def _fmt_time(s: float | None) -> str:
    if s is None:
        return "–"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            return f"{s / scale:.3g} {unit}"
    return "–"  # pragma: no cover


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}g}"


def _pct(x: float | None) -> str:
    """A percentage; below 0.1% with two significant digits, so that a tiny fraction
    (a 2x2 product against the machine's limit) does not print as a false 0.0%."""
    if x is None:
        return "–"
    return f"{100 * x:.2g}%" if 0 < x < 1e-3 else f"{100 * x:.1f}%"


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _load(values) -> str:
    return "unknown" if not values else " / ".join(f"{v:.2f}" for v in values)


def write_json(results: dict, directory: Path) -> Path:
    path = Path(directory) / JSON_NAME
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, default=_jsonable) + "\n")
    os.replace(tmp, path)
    return path


def _jsonable(obj):
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return str(obj)


def _status_text(rec: dict) -> str:
    if rec["status"] == "ok":
        return ""
    if rec["status"] == "wrong":
        return f"**wrong** (relative error {rec.get('relative_error', float('nan')):.1e}), not timed"
    if rec["status"] == "error":
        return f"**error**: {rec.get('error', '')}"
    return f"skipped: {rec.get('note', '')}"


def machine_markdown(results: dict) -> list[str]:
    m = results["machine"]
    mem = m.get("memory_bytes")
    lines = [
        "## Machine",
        "",
        f"- CPU: {m['cpu']}, {m['logical_cpus']} logical CPUs ({m['usable_cpus']} usable)"
        + (f", {mem / 2**30:.1f} GiB memory" if mem else ""),
        f"- caches: {', '.join(f'{k} {v}' for k, v in m['caches'].items()) or 'unknown'}",
        f"- platform: {m['platform']}, Python {m['python']}",
    ]
    for blas in m["blas"]:  # thread counts at start-up; the pinned ones are under "threads"
        lines.append("- BLAS/OpenMP library: " + ", ".join(f"{k}={v}" for k, v in blas.items() if k not in ("filepath", "num_threads")))
    lines.append("- versions: " + ", ".join(f"{k} {v or 'missing'}" for k, v in m["versions"].items()))
    if results.get("thread_settings"):
        lines.append("- threads: " + ", ".join(f"{k} {v}" for k, v in results["thread_settings"].items()))
    lines.append(f"- load average (1, 5, 15 min) at start {_load(m.get('load_average'))}, at end {_load(results.get('load_average_after'))}"
                 " (other processes on the machine make timings noisy)")
    lines += ["", "### Measured limits", "",
              "Bandwidth (the best of copy, triad and in-place update), the FMA peak (a C loop of independent",
              "vector fused multiply-adds: the compute roof) and the BLAS matrix-product rate beside it;",
              "a kernel's \"% of limit\" compares it with the bandwidth and the FMA peak, at the run's thread count.", "",
              "| threads | copy GB/s | triad GB/s | update GB/s | FMA peak GFLOP/s | BLAS GEMM GFLOP/s |",
              "| --- | --- | --- | --- | --- | --- |"]
    for t, lim in sorted(results["limits"].items(), key=lambda kv: int(kv[0])):
        update = lim.get("update_GBps")  # absent from runs saved before it was measured
        fma = lim.get("fma_peak_GFLOPps")  # absent from older runs (the GEMM rate was the roof)
        fma_text = "–" if fma is None else f"{fma:.1f} ({lim.get('fma_vectors') or '?'})"
        lines.append(f"| {t} | {lim['copy_GBps']:.1f} | {lim['triad_GBps']:.1f} | {'–' if update is None else f'{update:.1f}'} | "
                     f"{fma_text} | {lim['gemm_GFLOPps']:.1f} (n={lim['gemm_n']}) |")
    lines.append("")
    return lines


def _failed(case: dict) -> str:
    """The contenders of a case that were wrong or raised: ``name (wrong)``, comma-separated."""
    bad = [f"{r['name']} ({r['status']})" for r in case["contenders"] if r["status"] in ("wrong", "error")]
    return _escape(", ".join(bad)) if bad else ""


def summary_markdown(results: dict) -> list[str]:
    """Per case: the best tensorlang back end against the best peer."""
    lines = ["## Summary: tensorlang against the best peer", "",
             "Ratio = best peer's time / tensorlang's time (above 1: tensorlang is faster).", "",
             "A contender whose result was wrong, or that raised, is not timed; the last column names",
             "each such one, so that the summary never hides a failure (the case tables say why).", "",
             "| suite | kernel | size | tensorlang | time | best peer | time | ratio | % of limit | failed |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for case in results["cases"]:
        tl = [r for r in case["contenders"] if r["family"] == "tensorlang" and "median_s" in r]
        best_tl = min(tl, key=lambda r: r["median_s"]) if tl else None
        peer = next((r for r in case["contenders"] if r["name"] == case["best_peer"]), None)
        lines.append(
            f"| {case['suite']} | {case['kernel']} | {case['label']} | {best_tl['name'] if best_tl else '–'} | "
            f"{_fmt_time(best_tl['median_s']) if best_tl else '–'} | {case['best_peer'] or '–'} | "
            f"{_fmt_time(peer['median_s']) if peer else '–'} | "
            f"{_fmt(best_tl.get('ratio_to_best_peer')) if best_tl else '–'} | "
            f"{_pct(best_tl.get('fraction_of_limit')) if best_tl else '–'} | {_failed(case)} |"
        )
    lines.append("")
    return lines


#: A thread count's time above this many times the first count's is flagged "slower".
SLOWER = 1.05


def threads_markdown(results: dict) -> list[str]:
    """Every contender's median at each thread count of a run with several
    (``--threads 1,2``), and the speedup of each count over the first; a tensorlang
    contender more than 5% slower with more threads is flagged (issue 21: threads must
    never hurt).  Empty for a run at one count."""
    counts = results.get("thread_counts") or []
    runs = results.get("thread_runs") or {}
    if len(counts) < 2:
        return []
    first, others = counts[0], counts[1:]
    lines = [f"## Threads: {' against '.join(str(c) for c in counts)}", "",
             f"Each count is a run of its own (the contenders interleaved within it); speedup = time at {first} "
             f"thread(s) / time at the count (above 1: more threads are faster). A tensorlang contender more than "
             f"{(SLOWER - 1) * 100:.0f}% slower with more threads is flagged.", "",
             "| suite | kernel | size | contender | " + " | ".join(f"time at {c}" for c in counts) + " | "
             + " | ".join(f"speedup at {c}" for c in others) + " | flag |",
             "|" + " --- |" * (4 + len(counts) + len(others) + 1)]
    by_count = {c: {(k["suite"], k["kernel"], k["label"]): k for k in runs[str(c)]} for c in counts}
    for key, case in by_count[first].items():
        for rec in case["contenders"]:
            times = []
            for c in counts:
                other = by_count[c].get(key)
                match = next((r for r in other["contenders"] if r["name"] == rec["name"]), None) if other else None
                times.append(match.get("median_s") if match else None)
            if times[0] is None or all(t is None for t in times[1:]):
                continue
            speedups = [times[0] / t if t else None for t in times[1:]]
            slower = rec["family"] == "tensorlang" and any(t is not None and t > SLOWER * times[0] for t in times[1:])
            lines.append(f"| {case['suite']} | {case['kernel']} | {case['label']} | {rec['name']} | "
                         + " | ".join(_fmt_time(t) if t is not None else "–" for t in times) + " | "
                         + " | ".join(_fmt(x) if x is not None else "–" for x in speedups) + " | "
                         + ("slower" if slower else "") + " |")
    lines.append("")
    for count in others:  # the decisive comparison: interleaved in one run
        rows = []
        for case in runs[str(count)]:
            recs = {r["name"]: r for r in case["contenders"] if "median_s" in r}
            many, one = recs.get("tensorlang[c]"), recs.get("tensorlang[c] 1 thread")
            if many and one:
                key = "alone_median_s" if "alone_median_s" in many and "alone_median_s" in one else "median_s"
                ratio = one[key] / many[key]
                flag = "slower" if many[key] > SLOWER * one[key] else ""
                if flag and many.get("same_code_both_thread_counts"):
                    flag = "slower, same C (noise)"
                rows.append(f"| {case['suite']} | {case['kernel']} | {case['label']} | {_fmt_time(one[key])} | "
                            f"{_fmt_time(many[key])} | {_fmt(ratio)} | {flag} |")
        if rows:
            lines += [f"Interleaved in the {count}-thread run: tensorlang[c] with threads=1 and with threads={count}, "
                      "the same kernel timed in turns, by themselves after the peers' round and a pause "
                      "(runner.THREADS_PAUSE_S: the peers' idle pools stop spinning), in batches of at least "
                      "runner.PAIR_BATCH_S (each kernel's steady state; speedup above 1: threads pay). "
                      "\"same C\": the two builds generated the same C (no statement has work enough for a "
                      "parallel loop), so a difference between them is the timing's noise, not threads.", "",
                      f"| suite | kernel | size | threads=1 | threads={count} | speedup | flag |",
                      "| --- | --- | --- | --- | --- | --- | --- |", *rows, ""]
    return lines


#: the einsum suite's contender that calls ``tl.contract_expression`` (suites/einsum.py)
EXPRESSION = "tensorlang[c] contract_expression"


def expression_markdown(results: dict) -> list[str]:
    """``tl.contract_expression`` against ``tl.einsum`` (``tensorlang[c]``) on every case
    where both were timed (the einsum suite).  Where the run timed the two again by
    themselves, batch beside batch (the case's ``pairs``, timing.time_paired), the ratio
    is the median of the rounds' ratios and "slower" means its first quartile is above 1
    (the expression slower in three rounds of four); otherwise the ratio is that of the
    round-robin's medians and "slower" means the expression's first quartile is above
    tl.einsum's third (the inter-quartile ranges do not overlap)."""
    rows = []
    for case in results["cases"]:
        recs = {r["name"]: r for r in case["contenders"] if "median_s" in r}
        einsum, expr = recs.get("tensorlang[c]"), recs.get(EXPRESSION)
        if not (einsum and expr):
            continue
        paired = expr.get("paired")
        if paired:
            t_einsum, t_expr, ratio = paired["a_median_s"], paired["b_median_s"], paired["ratio"]
            spread = f"{_fmt(paired['q1'])}–{_fmt(paired['q3'])}"
            flag = "slower" if paired["q1"] > 1 else ""
            cpu = _fmt(paired.get("cpu_ratio"))
        else:
            t_einsum, t_expr = einsum["median_s"], expr["median_s"]
            ratio, spread, cpu = t_expr / t_einsum, "–", "–"
            flag = "slower" if expr["q1_s"] > einsum["q3_s"] else ""
        rows.append(f"| {case['kernel']} | {case['label']} | {_fmt_time(t_einsum)} | "
                    f"{_fmt_time(t_expr)} | {_fmt(ratio)} | {spread} | {cpu} | {flag} |")
    if not rows:
        return []
    return ["## contract_expression against tl.einsum", "",
            "The same contraction called as `tl.einsum(subs, *ops)` (tensorlang[c]) and as "
            "`expr(*ops)` with `expr = tl.contract_expression(subs, *shapes)` built once, timed again by "
            "themselves after the round-robin, batch beside batch (the same number of calls in both, "
            "the order alternating); ratio = expression / tl.einsum, the median over the rounds of the "
            "two batches' ratio, with its quartiles (at most 1: the expression is at least as fast); "
            "CPU ratio: the same of the process's CPU time (a busy machine's waits left out). "
            "\"slower\": the ratio's first quartile is above 1.", "",
            "| kernel | size | tl.einsum | contract_expression | ratio | ratio's quartiles | CPU ratio | flag |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |", *rows, ""]


def case_table(case: dict) -> list[str]:
    per = case["per"] > 1
    base = case.get("baseline")
    head = ["contender", "time (median)", "IQR"]
    head += ["per element"] if per else []
    head += ["GFLOP/s", "GB/s", "% of limit", "vs best peer"]
    head += [f"above {base}"] if base else []
    head += ["notes"]
    lines = [f"#### {case['kernel']}, {case['label']}  "
             f"({case['flops']:.3g} flops, {case['bytes']:.3g} bytes, {case['bound']}-bound on this machine; "
             f"best peer: {case['best_peer'] or '–'})", "",
             "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for rec in case["contenders"]:
        if "median_s" in rec:
            cells = [rec["name"], _fmt_time(rec["median_s"]), _fmt_time(rec["q3_s"] - rec["q1_s"])]
            cells += [_fmt_time(rec["per_element_s"])] if per else []
            cells += [_fmt(rec["GFLOPps"]), _fmt(rec["GBps"]), _pct(rec["fraction_of_limit"]),
                      _fmt(rec.get("ratio_to_best_peer"))]
            cells += [_fmt_time(rec["above_baseline_s"]) if rec["above_baseline_s"] >= 0 else "-" + _fmt_time(-rec["above_baseline_s"])] if base else []
            cells += [_escape(rec["note"])]
        else:
            cells = [rec["name"]] + ["–"] * (len(head) - 2) + [_escape(_status_text(rec))]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for note in case.get("notes") or []:
        lines += [f"Note: {_escape(note)}", ""]
    return lines


def _threads_text(results: dict) -> str:
    counts = results.get("thread_counts")
    if counts and len(counts) > 1:
        return (f"{results['threads']} thread(s) (then {', '.join(str(c) for c in counts[1:])}: "
                "the table \"Threads\")")
    return f"{results['threads']} thread(s)"


def write_markdown(results: dict, directory: Path, plots: list[str], plot_note: str = "") -> Path:
    when = results["started"]
    lines = [
        "# tensorlang benchmark results",
        "",
        f"Run {when}, {'quick (smoke check)' if results['quick'] else 'full'} mode, "
        f"{_threads_text(results)} for every contender, {results['seconds']:.0f} s. "
        f"Suites: {', '.join(results['suites'])}. tensorlang back ends: {', '.join(results['backends'])}.",
        f"Command: `{results['command']}`" if results.get("command") else "",
        "",
    ]
    lines += machine_markdown(results)
    if results["missing_peers"]:
        lines += ["### Peers not available in this run", ""]
        lines += [f"- {note}" for note in results["missing_peers"].values()]
        lines.append("")
    lines += summary_markdown(results)
    lines += threads_markdown(results)
    lines += expression_markdown(results)
    if plots or plot_note:
        lines += ["## Plots", ""]
        lines += [f"![{p}]({p})" for p in plots]
        if plot_note:
            lines.append(plot_note)
        lines.append("")
    suite = None
    for case in results["cases"]:
        if case["suite"] != suite:
            suite = case["suite"]
            lines += [f"## Suite `{suite}`", ""]
        lines += case_table(case)
    path = Path(directory) / MD_NAME
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------ plots
def _series(cases: list[dict], value) -> dict[str, tuple[list, list]]:
    """contender -> (sizes, values) over the cases of one kernel."""
    out: dict[str, tuple[list, list]] = {}
    for case in cases:
        for rec in case["contenders"]:
            v = value(case, rec)
            if v is None:
                continue
            xs, ys = out.setdefault(rec["name"], ([], []))
            xs.append(case["size"])
            ys.append(v)
    return out


def _by_kernel(results: dict, suite: str) -> dict[str, list[dict]]:
    kernels: dict[str, list[dict]] = {}
    for case in results["cases"]:
        if case["suite"] == suite:
            kernels.setdefault(case["kernel"], []).append(case)
    return kernels


_COLORS = {
    "tensorlang[c]": "tab:red", "tensorlang[c] fma": "tab:pink", "tensorlang[c] no fma": "tab:pink",
    "tensorlang[numpy]": "tab:orange", "tensorlang[interp]": "gold", "tensorlang[c] contract_expression": "darkred",
    "numpy": "black", "numpy.einsum": "tab:gray", "numpy.einsum(optimal)": "tab:brown", "opt_einsum": "tab:purple",
    "torch": "tab:blue", "jax": "tab:green", "numba": "tab:cyan",
}


def _style(name: str) -> dict:
    """The same colour for a contender in every plot; tensorlang's lines drawn heavier."""
    style = {"linewidth": 2.5, "marker": "o"} if name.startswith("tensorlang") else {"linewidth": 1.2, "marker": "."}
    if name in _COLORS:
        style["color"] = _COLORS[name]
    return style


def _grid(plt, count: int, width: float, height: float):
    """Subplots in rows of at most two, flattened."""
    cols = min(count, 2)
    rows = -(-count // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def _plain_log_ticks(axis) -> None:
    """Log-axis tick labels as plain numbers (0.2, 1, 50) rather than 2×10⁻¹; minor ticks
    2 and 5 of each decade are labelled too when the axis spans at most two decades."""
    import math

    from matplotlib.ticker import FuncFormatter

    def minor(value, _pos):
        low, high = sorted(axis.get_view_interval())
        if value <= 0 or low <= 0 or high / low > 100:
            return ""
        mantissa = value / 10 ** math.floor(math.log10(value) + 1e-9)
        return f"{value:g}" if round(mantissa) in (2, 5) and abs(mantissa - round(mantissa)) < 1e-6 else ""

    axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
    axis.set_minor_formatter(FuncFormatter(minor))


def _legend(axes) -> None:
    """One legend (on the first panel) naming every contender drawn in any panel: a
    contender that appears only in a later panel must not go unnamed."""
    handles: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        axes[0].legend(list(handles.values()), list(handles), fontsize=8)


def write_plots(results: dict, directory: Path) -> tuple[list[str], str]:
    """PNG files written (names relative to ``directory``), and a note if there are none."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "Plots skipped: matplotlib is not installed (pip install -e '.[bench]')."
    written = []
    title_tail = f"({results['threads']} thread(s), {'quick' if results['quick'] else 'full'} run)"
    for suite in results["suites"]:
        kernels = _by_kernel(results, suite)
        if not kernels:
            continue
        if suite == "cfd":
            fig, axes = _grid(plt, len(kernels), 6, 4.5)
            for ax, (kernel, cases) in zip(axes, kernels.items()):
                for name, (xs, ys) in _series(cases, lambda c, r: r.get("per_element_s")).items():
                    ax.plot(xs, [y * 1e6 for y in ys], label=name, **_style(name))
                ax.set_yscale("log")
                _plain_log_ticks(ax.yaxis)
                ax.set_xlabel("n (points per direction)")
                ax.set_ylabel("time per element (µs)")
                ax.set_title(kernel)
                ax.grid(True, which="both", alpha=0.3)
            _legend(axes)
            fig.suptitle(f"cfd: time per element {title_tail}")
            fig.tight_layout()
            name = "cfd_time_per_element.png"
            fig.savefig(Path(directory) / name, dpi=110)
            plt.close(fig)
            written.append(name)
        if suite == "small":
            cases = kernels[next(iter(kernels))]
            recs = [r for r in cases[0]["contenders"] if "median_s" in r]
            fig, ax = plt.subplots(figsize=(7, 0.45 * len(recs) + 1.5))
            ax.barh([r["name"] for r in recs], [r["median_s"] * 1e6 for r in recs],
                    color=["tab:red" if r["family"] == "tensorlang" else "tab:gray" if r["family"] == "baseline" else "tab:blue" for r in recs])
            ax.set_xscale("log")
            from matplotlib.patches import Patch

            present = [f for f in ("tensorlang", "baseline", "peer") if any(r["family"] == f for r in recs)]
            colours = {"tensorlang": "tab:red", "baseline": "tab:gray", "peer": "tab:blue"}
            ax.legend(handles=[Patch(color=colours[f], label=f) for f in present], fontsize=8, loc="best")
            ax.set_xlabel("time per call (µs, log scale)")
            _plain_log_ticks(ax.xaxis)
            ax.set_title(f"small: 2x2 matrix product, per-call time\n{title_tail}")
            fig.tight_layout()
            name = "small_per_call.png"
            fig.savefig(Path(directory) / name, dpi=110)
            plt.close(fig)
            written.append(name)
            continue
        fig, axes = _grid(plt, len(kernels), 5.5, 4.2)
        for ax, (kernel, cases) in zip(axes, kernels.items()):
            base_name = cases[0]["speedup_base"]

            def speedup(case, rec, base_name=base_name):
                base = next((r for r in case["contenders"] if r["name"] == base_name and "median_s" in r), None)
                return base["median_s"] / rec["median_s"] if base and "median_s" in rec else None

            for name, (xs, ys) in _series(cases, speedup).items():
                ax.plot(xs, ys, label=name, **_style(name))
            ax.set_xscale("log")
            ax.set_yscale("log")
            _plain_log_ticks(ax.yaxis)
            sizes = sorted({c["size"] for c in cases})
            if suite != "inplace":  # few sizes, not decades apart: label each one plainly
                from matplotlib.ticker import NullFormatter, NullLocator

                ax.set_xticks(sizes, [str(x) for x in sizes])
                ax.xaxis.set_minor_locator(NullLocator())
                ax.xaxis.set_minor_formatter(NullFormatter())
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_xlabel({"cfd": "n (points per direction)", "blas": "n (matrix order)"}.get(
                suite, "N (vector length; matrix order for matvec_mul)" if suite == "inplace" else "size"))
            ax.set_ylabel(f"speedup over {base_name} (×)")
            ax.set_title(kernel)
            ax.grid(True, which="both", alpha=0.3)
        _legend(axes)
        fig.suptitle(f"{suite}: speedup versus size {title_tail}")
        fig.tight_layout()
        name = f"{suite}_speedup.png"
        fig.savefig(Path(directory) / name, dpi=110)
        plt.close(fig)
        written.append(name)
    from .roofline import write_rooflines

    written += write_rooflines(results, directory, plt)
    return written, ""


def write_all(results: dict, directory: Path) -> dict[str, object]:
    """JSON, plots, markdown into ``directory`` (created); the paths written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    json_path = write_json(results, directory)
    plots, note = write_plots(results, directory)
    md_path = write_markdown(results, directory, plots, note)
    return {"json": json_path, "markdown": md_path, "plots": [directory / p for p in plots], "plot_note": note}


BEGIN, END = "<!-- bench:begin (generated by tensorlang bench --docs) -->", "<!-- bench:end -->"


#: The folder beside the page that receives copies of the run's plots: a documentation
#: site (mkdocs) serves only files under its docs folder, so a link into benchmarks/results
#: would be broken there (and `mkdocs build --strict` rejects it).
DOC_PLOTS = "bench"


def update_doc(results: dict, doc: Path, results_dir: Path, plots: list[str]) -> Path:
    """Replace the generated part of a markdown page (between BEGIN and END, appended if
    absent) with the run's machine, limits, summary and plots.  The plots are copied into
    :data:`DOC_PLOTS` beside the page and linked there; the full tables are named by their
    path (outside the documentation site)."""
    doc, results_dir = Path(doc), Path(results_dir)
    here = doc.parent if str(doc.parent) else Path(".")
    if plots:
        (here / DOC_PLOTS).mkdir(parents=True, exist_ok=True)
        for p in plots:
            shutil.copyfile(results_dir / p, here / DOC_PLOTS / p)
    tables = Path(os.path.relpath(results_dir / MD_NAME, Path.cwd())) if results_dir.is_absolute() else results_dir / MD_NAME
    body = [BEGIN, "", f"Measured {results['started']} ({'quick' if results['quick'] else 'full'} run, "
            f"{results['threads']} thread(s), {results['seconds']:.0f} s); every table: "
            f"`{tables.as_posix()}` in the repository.", ""]
    body += ["#" + line if line.startswith("## ") or line.startswith("### ") else line for line in machine_markdown(results)]
    body += ["#" + line if line.startswith("## ") else line for line in summary_markdown(results)]
    body += ["#" + line if line.startswith("## ") else line for line in threads_markdown(results)]
    body += [f"![{p}]({DOC_PLOTS}/{p})" for p in plots] + ["", END]
    text = doc.read_text() if doc.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + "\n".join(body) + tail
    else:
        text = text + ("\n" if text and not text.endswith("\n") else "") + "\n".join(body) + "\n"
    doc.write_text(text)
    return doc


def main(argv=None) -> int:
    """``python -m tensorlang_bench.report RESULTS.json [DIR] [--docs PAGE.md]``: re-draw
    tables and plots from a saved run (and refresh a page's generated part)."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m tensorlang_bench.report RESULTS.json [OUT_DIR] [--docs PAGE.md]", file=sys.stderr)
        return 2
    docs = None
    if "--docs" in args:
        i = args.index("--docs")
        docs = args[i + 1]
        del args[i:i + 2]
    results = json.loads(Path(args[0]).read_text())
    directory = Path(args[1]) if len(args) > 1 else Path(args[0]).parent
    written = write_all(results, directory)
    print(f"wrote {written['markdown']}" + "".join(f", {p}" for p in written["plots"]))
    if docs:
        print(f"updated {update_doc(results, Path(docs), directory, [p.name for p in written['plots']])}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
