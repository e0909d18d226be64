"""Run Diderot's public examples through tensorlang and compare with the real compiler's outputs.

    python benchmarks/diderot/examples.py --ref /work/diderot-ref [--examples DIR] [--only life,iso2d]

``--ref`` is a reference directory made with the real compiler (one folder per example, each
with a ``runs.json`` that lists its runs: program, arguments, input files, output files, and
a ``runs/<run>/`` folder holding the inputs and the outputs of ``diderotc --double --exec``).
``make_reference.py`` makes one from a checkout of the examples.
``--examples`` is a checkout of Diderot-Language/examples: a program found there under the
same name is taken from there (so the test runs the public text unchanged), otherwise (the
variants the examples' scripts derive with sed) from the reference directory.

Every run is repeated in a fresh temporary directory holding the run's inputs, as
``python -m tensorlang run PROGRAM ARGS``; every output NRRD (and snapshot) is compared with
the reference: shape, positions of NaNs, and values within a tolerance (relative to the
reference's largest magnitude).  Particle systems (circle, sphere, halftone), whose final
positions depend on every rounding, are compared by statistics instead (the particle count
and the mean distance to the nearest neighbour).  Nothing here raises on tensorlang's
errors: a failed run is a row of the table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: relative tolerance of a value comparison (of the reference's largest finite magnitude)
TOLERANCE = 1e-6
#: runs compared by statistics (final positions depend on every rounding): example -> how
STATISTICAL = {"circle": "points", "circle-2.0": "points", "sphere": "points", "halftone": "points"}
#: runs not compared at all: what they show is the executable's own command line
NOT_COMPARED = {"help", "missing-which"}


@dataclass
class Outcome:
    example: str
    run: str
    status: str  # "same", "differs", "tensorlang error", "not run"
    detail: str = ""
    seconds: float | None = None
    ref_seconds: float | None = None
    files: dict = field(default_factory=dict)

    def row(self) -> str:
        t = f"{self.seconds:.2f}" if self.seconds is not None else ""
        r = f"{self.ref_seconds:.3f}" if self.ref_seconds is not None else ""
        return f"| {self.example} | {self.run} | {self.status} | {self.detail} | {t} | {r} |"


def read_nrrd(path: Path) -> np.ndarray:
    """The array of an NRRD file, axes in the file's order (fastest first), as float64."""
    return read_nrrd_kinds(path)[0]


def read_nrrd_kinds(path: Path) -> tuple[np.ndarray, list[str]]:
    """The array (axes fastest first, float64) and the axes' kinds."""
    import nrrd

    data, header = nrrd.read(str(path), index_order="F")
    return np.asarray(data, dtype=np.float64), [str(k) for k in header.get("kinds", [])]


#: header fields not compared: how the bytes are stored, not what they mean
HEADER_IGNORED = {"endian", "encoding", "data file", "datafile", "line skip", "byte skip"}


def compare_headers(got: Path, ref: Path) -> list[str]:
    """The header fields (type, dimension, sizes, kinds, orientation, ...) where two NRRD
    files differ, as ``field: ours vs reference``; empty when the meta-data agree."""
    import nrrd

    def fields(path: Path) -> dict:
        return {k: str(v).replace("\n", " ") for k, v in nrrd.read_header(str(path)).items()
                if k not in HEADER_IGNORED}

    g, r = fields(got), fields(ref)
    return [f"{k}: {g.get(k, '(none)')} vs {r.get(k, '(none)')}" for k in sorted(set(g) | set(r))
            if g.get(k) != r.get(k)]


def sorted_strands(a: np.ndarray) -> np.ndarray:
    """A collection's strands (its last axis) in lexicographic order of their values."""
    cols = a.reshape(-1, a.shape[-1])
    order = np.lexsort(cols[::-1]) if cols.shape[0] else np.arange(a.shape[-1])
    return a[..., order]


def compare_arrays(got: np.ndarray, ref: np.ndarray, tol: float = TOLERANCE) -> tuple[bool, str]:
    """Shape, NaN and infinity positions, then values within ``tol`` of max |ref|."""
    if got.shape != ref.shape:
        return False, f"shape {got.shape} vs reference {ref.shape}"
    nan_g, nan_r = np.isnan(got), np.isnan(ref)
    if not np.array_equal(nan_g, nan_r):
        return False, f"NaN at {int(np.sum(nan_g != nan_r))} differing positions"
    inf_g, inf_r = np.isinf(got), np.isinf(ref)
    if not np.array_equal(inf_g & (got > 0), inf_r & (ref > 0)) or not np.array_equal(inf_g & (got < 0), inf_r & (ref < 0)):
        return False, f"infinities at {int(np.sum(inf_g != inf_r))} differing positions"
    finite = np.isfinite(ref)
    if not finite.any():
        return True, "max err 0"
    scale = max(float(np.max(np.abs(ref[finite]))), 1e-300)
    err = float(np.max(np.abs(got[finite] - ref[finite]))) / scale
    return err <= tol, f"max rel err {err:.2g}"


def compare_points(got: np.ndarray, ref: np.ndarray, rel: float = 0.05) -> tuple[bool, str]:
    """Two point sets (fastest axis: coordinates): counts within 10 %, mean nearest-neighbour
    distance within ``rel``."""
    g, r = got.reshape(got.shape[0], -1).T, ref.reshape(ref.shape[0], -1).T
    if g.shape[1] != r.shape[1]:
        return False, f"{g.shape[1]}-D points vs reference {r.shape[1]}-D"
    if abs(len(g) - len(r)) > 0.1 * max(len(r), 1):
        return False, f"{len(g)} points vs reference {len(r)}"

    def mean_nn(p):
        if len(p) < 2:
            return 0.0
        from scipy.spatial import cKDTree

        d, _ = cKDTree(p).query(p, k=2)
        return float(np.mean(d[:, 1]))

    a, b = mean_nn(g), mean_nn(r)
    ok = abs(a - b) <= rel * max(b, 1e-300)
    return ok, f"{len(g)} vs {len(r)} points, mean nearest-neighbour distance {a:.4g} vs {b:.4g}"


def numbers(text: str) -> list:
    return re.findall(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)", text)


def compare_stdout(got: str, ref: str) -> str:
    """'same', 'same numbers' (within 1e-6), 'same lines, another order' (strands print in
    the order they run, which Diderot does not define) or 'differs'."""
    if got == ref:
        return "same"
    if sorted(got.splitlines()) == sorted(ref.splitlines()):
        return "same lines, another order"
    a, b = numbers(got), numbers(ref)
    if len(a) == len(b):
        try:
            x, y = np.array(a, dtype=float), np.array(b, dtype=float)
            if np.allclose(x, y, rtol=1e-6, atol=1e-9, equal_nan=True):
                return "same numbers"
        except ValueError:
            pass
    return "differs"


def program_path(ref_dir: Path, examples: Path | None, example: str, program: str) -> Path:
    if examples is not None and (examples / example / program).is_file():
        return examples / example / program
    return ref_dir / example / program


def run_one(ref: Path, examples: Path | None, example: str, run: dict, timeout: float,
            python: str = sys.executable, tol: float = TOLERANCE, src: Path | None = None) -> Outcome:
    out = Outcome(example, run["name"], "not run", ref_seconds=run.get("seconds_seq"))
    if run["name"] in NOT_COMPARED or not (run.get("outputs") or run.get("snapshots")):
        out.detail = "nothing to compare (no reference output)"
        return out
    if not isinstance(run.get("rc"), int):
        out.detail = f"the reference did not run ({run.get('rc')})"
        return out
    rdir = ref / example / "runs" / run["name"]
    prog = program_path(ref, examples, example, run["program"])
    if not prog.is_file():
        out.detail = f"program {run['program']} not found"
        return out
    with tempfile.TemporaryDirectory(prefix=f"tl-diderot-{example}-") as tmp:
        work = Path(tmp)
        shutil.copy(prog, work / prog.name)
        for name in run.get("inputs", {}):
            dst = work / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(os.path.realpath(rdir / name), dst)
        env = dict(os.environ)
        src = src or Path(__file__).resolve().parents[2] / "src"
        if src.is_dir():
            env["PYTHONPATH"] = str(src) + os.pathsep + env.get("PYTHONPATH", "")
        cmd = [python, "-m", "tensorlang", "run", prog.name] + list(run["args"])
        import time

        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            out.status, out.detail = "tensorlang error", f"timed out after {timeout:.0f} s"
            return out
        out.seconds = time.perf_counter() - start
        if proc.returncode != 0 and not (run.get("rc") != 0 and run.get("snapshots")):
            # (a reference that failed after writing its snapshots -- a grid stopped at -l
            # with no stable strand writes no output, exit 1 -- is compared on the snapshots)
            lines = [ln.strip() for ln in (proc.stderr or proc.stdout).strip().splitlines() if ln.strip()]
            errors = [ln for ln in lines if "error" in ln.lower()]
            out.status = "tensorlang error"
            out.detail = (errors[0] if errors else lines[-1] if lines else f"exit status {proc.returncode}")[:200]
            return out
        files = list(run["outputs"]) + list(run.get("snapshots", []))
        bad = []
        for name in files:
            got_path, ref_path = work / name, rdir / name
            if not got_path.is_file():
                bad.append(f"{name}: not written")
                continue
            try:
                got, _ = read_nrrd_kinds(got_path)
                want, kinds = read_nrrd_kinds(ref_path)
            except Exception as exc:  # noqa: BLE001 - an unreadable output is a difference
                bad.append(f"{name}: unreadable ({type(exc).__name__}: {exc})"[:200])
                continue
            header = compare_headers(got_path, ref_path)
            if header:
                bad.append(f"{name}: header {'; '.join(header)}"[:200])
            how = STATISTICAL.get(example)
            ok, what = compare_points(got, want) if how == "points" else compare_arrays(got, want, tol)
            if not ok and how != "points" and kinds and kinds[-1] == "list" and got.shape == want.shape:
                # Diderot's runtime fills a dead strand's slot with the last strand: a
                # collection's snapshots list the strands in storage order, not creation order
                ok2, what2 = compare_arrays(sorted_strands(got), sorted_strands(want), tol)
                if ok2:
                    ok, what = True, what2 + " up to the strands' order"
            out.files[name] = what
            if not ok:
                bad.append(f"{name}: {what}")
        ref_stdout = (rdir / "stdout.txt").read_text(errors="replace") if (rdir / "stdout.txt").is_file() else ""
        stdout = compare_stdout(proc.stdout, ref_stdout) if ref_stdout else ""
        if bad:
            out.status = "differs"
            out.detail = "; ".join(bad[:3]) + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else "")
        else:
            out.status = "same"
            worst = [w for w in out.files.values()]
            out.detail = (worst[0] if len(worst) == 1 else f"{len(worst)} files") + (f"; stdout {stdout}" if stdout else "")
        return out


def load_runs(ref: Path, example: str) -> list[dict]:
    path = ref / example / "runs.json"
    if not path.is_file():
        return []
    return json.loads(path.read_text())["runs"]


def examples_in(ref: Path) -> list[str]:
    return sorted(p.parent.name for p in ref.glob("*/runs.json"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default=os.environ.get("TENSORLANG_DIDEROT_REF", "/work/diderot-ref"))
    ap.add_argument("--examples", default=None, help="a checkout of Diderot-Language/examples (programs unchanged)")
    ap.add_argument("--only", default="", help="comma-separated examples")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    ap.add_argument("--tol", type=float, default=TOLERANCE)
    ap.add_argument("--json", default=None, help="also write the outcomes here")
    ap.add_argument("--src", default=None, help="the tensorlang sources to run (default: this checkout's src/)")
    args = ap.parse_args(argv)
    ref = Path(args.ref)
    examples = Path(args.examples) if args.examples else None
    names = [n for n in args.only.split(",") if n] or examples_in(ref)
    rows = []
    print("| example | run | status | detail | tensorlang s | diderot s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in names:
        runs = load_runs(ref, name)
        if not runs:
            rows.append(Outcome(name, "-", "not run", "no reference (runs.json) for it"))
            print(rows[-1].row(), flush=True)
        for run in runs:
            rows.append(run_one(ref, examples, name, run, args.timeout, tol=args.tol,
                                src=Path(args.src) if args.src else None))
            print(rows[-1].row(), flush=True)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    print("\n" + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
