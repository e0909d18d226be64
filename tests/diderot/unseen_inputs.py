"""The synthetic NRRD inputs of the programs in ``more/unseen/`` and the stored outputs of
``diderotc --double --exec`` on them (``more/unseen/diderotc.json``); ``python
tests/diderot/unseen_inputs.py [NAME ...]`` remakes the stored outputs where diderotc is on PATH
(docs/diderot.md, "Features found missing, and where tensorlang differs").  Sample values are
multiples of 1/8, exact in the single precision Diderot's executables read an input image in."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

PROGRAMS = Path(__file__).parent / "more" / "unseen"
STORED = PROGRAMS / "diderotc.json"


def _write(path: Path, data, kinds, dirs=None, origin=None, t="float") -> None:
    data = np.asarray(data)
    head = ["NRRD0004", f"type: {t}", f"dimension: {data.ndim}", "sizes: " + " ".join(map(str, data.shape[::-1]))]
    if dirs is not None:
        head += [f"space dimension: {len(origin)}", "space directions: " + " ".join(dirs),
                 "space origin: (" + ",".join(map(str, origin)) + ")"]
    head += ["kinds: " + " ".join(kinds), "endian: little", "encoding: raw", "", ""]
    dtype = {"float": "<f4", "double": "<f8", "unsigned char": "u1", "short": "<i2", "int": "<i4"}[t]
    path.write_bytes("\n".join(head).encode() + np.ascontiguousarray(data, dtype).tobytes())


def _val(*idx, c=0) -> float:
    s = sum(i * (7 + 6 * n) + c * 5 + (i * i) % (3 + n) for n, i in enumerate(idx))
    return (s % 17) / 8.0 - 1.0 + 0.25 * idx[0] - 0.125 * (idx[-1] % 4)


def _grid(sizes, comps=0):
    """Samples over ``sizes`` (fastest axis first) in C order: slowest axis first, components last."""
    rows = np.indices(sizes[::-1]).reshape(len(sizes), -1).T  # each row: slowest index ... fastest
    vals = [[_val(*r[::-1], c=c) for c in range(comps)] if comps else _val(*r[::-1]) for r in rows.tolist()]
    return np.array(vals).reshape(tuple(sizes[::-1]) + ((comps,) if comps else ()))


def make(folder: Path) -> None:
    """Every input file the programs name, written into ``folder``."""
    f = Path(folder)
    d2, o2 = ["(0.5,0.0)", "(0.0,0.625)"], [-2.0, -2.5]
    d3 = ["(0.5,0,0)", "(0,0.5,0)", "(0,0,0.5)"]
    _write(f / "s1.nrrd", _grid([12]), ["space"], ["(0.5)"], [-1.0])
    _write(f / "s2.nrrd", _grid([10, 9]), ["space"] * 2, d2, o2)
    _write(f / "s3.nrrd", _grid([8, 7, 6]), ["space"] * 3, ["(0.5,0,0)", "(0,0.5,0)", "(0,0,0.75)"], [-2.0, -1.5, -2.0])
    _write(f / "v2.nrrd", _grid([10, 9], 2), ["2-vector", "space", "space"], ["none"] + d2, o2)
    _write(f / "v3.nrrd", _grid([8, 8, 8], 3), ["3-vector"] + ["space"] * 3, ["none"] + d3, [-2.0] * 3)
    _write(f / "m2.nrrd", _grid([10, 9], 4), ["2D-matrix", "space", "space"], ["none"] + d2, o2)
    _write(f / "m3.nrrd", _grid([6, 6, 6], 9), ["3D-matrix"] + ["space"] * 3, ["none"] + d3, [-1.5] * 3)
    _write(f / "v3in2.nrrd", _grid([10, 9], 3), ["3-vector", "space", "space"], ["none"] + d2, o2)
    _write(f / "rot2.nrrd", _grid([9, 8]), ["space"] * 2, ["(0.4,0.3)", "(-0.3,0.4)"], [0.5, -1.0])
    _write(f / "shear3.nrrd", _grid([7, 7, 7]), ["space"] * 3, ["(0.3,0.1,0)", "(0,0.35,0.05)", "(0.02,0,0.3)"],
           [-0.5, -0.6, 0.0])
    nan3 = _grid([8, 7, 6])
    nan3[2:4, 3, 2:5] = np.nan  # (slowest axis first)
    _write(f / "nan3.nrrd", nan3, ["space"] * 3, ["(0.5,0,0)", "(0,0.5,0)", "(0,0,0.75)"], [-2.0, -1.5, -2.0])
    _write(f / "pts2.nrrd", [[-1.3 + 0.37 * i, -1.1 + 0.29 * ((i * 5) % 7)] for i in range(9)], ["2-vector", "list"],
           t="double")
    _write(f / "rs.nrrd", [0.5, -1.25, 3.0, 2.0, -0.0, 7.5], ["list"], t="double")
    # second round: integer and double sample types, non-uniform and non-axis-aligned geometry
    _write(f / "u8.nrrd", (_grid([11, 9]) * 8 + 16).astype(int), ["space"] * 2, ["(0.3,0.0)", "(0.0,0.7)"],
           [-1.5, -2.75], t="unsigned char")
    _write(f / "i16.nrrd", (_grid([7, 8, 6]) * 64).astype(int) - 17, ["space"] * 3,
           ["(0.4,0.1,0)", "(-0.1,0.45,0.02)", "(0.05,0,0.6)"], [-1.0, -1.25, -1.5], t="short")
    _write(f / "d1.nrrd", _grid([14]) * 1.5, ["space"], ["(0.3)"], [0.7], t="double")
    _write(f / "skew2.nrrd", _grid([10, 12]), ["space"] * 2, ["(0.35,0.1)", "(0.2,0.55)"], [-1.75, -2.5],
           t="double")
    _write(f / "i32v2.nrrd", (_grid([9, 10], 2) * 8).astype(int), ["2-vector", "space", "space"],
           ["none", "(0.5,0.0)", "(0.0,0.45)"], [-2.0, -2.0], t="int")
    _write(f / "s2r.nrrd", _grid([10, 9])[::-1] * 0.5, ["space"] * 2, ["(0.2,0.15)", "(-0.15,0.2)"], [0.1, -0.8])
    _write(f / "p3.nrrd", [[0.1 * i - 0.4, 0.05 * i * i - 0.3, 0.3 - 0.07 * i] for i in range(7)], ["3-vector", "list"],
           t="double")
    # fourth round: a transfer function, RGBA over values -1.5 .. 2.25 (16 samples of a 1-D image of 4-vectors)
    _write(f / "tf4.nrrd", [[min(1.0, 0.125 * k), 0.5 - abs(k - 8) / 16.0, 1.0 - k / 16.0, (k % 5) / 4.0] for k in range(16)],
           ["4-vector", "space"], ["none", "(0.25)"], [-1.5])


INPUTS = ("s1", "s2", "s3", "v2", "v3", "m2", "m3", "v3in2", "rot2", "shear3", "nan3", "pts2", "rs", "u8", "i16", "d1",
          "skew2", "i32v2", "p3", "s2r", "tf4")


def args(text: str) -> list[str]:
    """The command line a program's ``// args:`` line gives it."""
    m = re.search(r"^// args:(.*)$", text, re.M)
    return m.group(1).split() if m else []


def outputs(folder: Path) -> dict[str, dict]:
    """Each NRRD file (or detached header) a run wrote: its header's lines and its values (in file order)."""
    import nrrd
    got = {}
    for path in sorted([*Path(folder).glob("*.nrrd"), *Path(folder).glob("*.nhdr")]):
        if path.stem in INPUTS:
            continue
        head = path.read_bytes().split(b"\n\n", 1)[0].decode().splitlines()
        data, _ = nrrd.read(str(path))
        got[path.name] = {"header": [h for h in head if not h.startswith("#")],
                          "values": np.asarray(data, dtype=np.float64).ravel(order="F").tolist()}
    for path in Path(folder).glob("*.txt"):  # what -print wrote
        got[path.name] = {"header": [], "values": [], "text": path.read_text()}
    return got


def remake(names: list[str]) -> None:
    """Build each program with diderotc --double --exec, run it and store what it printed and wrote."""
    stored = json.loads(STORED.read_text()) if STORED.exists() else {}
    for name in names:
        prog = PROGRAMS / f"{name}.diderot"
        argv = args(prog.read_text())
        with tempfile.TemporaryDirectory() as tmp:
            make(Path(tmp))
            shutil.copy(prog, tmp)
            snap = ["--snapshot"] if "-s" in argv else []
            subprocess.run(["diderotc", "--double", "--exec", *snap, prog.name], cwd=tmp, check=True, capture_output=True)
            run = subprocess.run([f"./{name}", *argv], cwd=tmp, capture_output=True, text=True)
            stored[name] = {"rc": run.returncode, "stdout": run.stdout, "files": outputs(Path(tmp))}
        print(name, run.returncode, len(stored[name]["files"]))
    STORED.write_text(json.dumps(dict(sorted(stored.items())), separators=(",", ":")) + "\n")


if __name__ == "__main__":
    if shutil.which("diderotc") is None:
        sys.exit("diderotc is not on PATH (/work/shared/tools/diderot/README.md)")
    remake(sys.argv[1:] or sorted(p.stem for p in PROGRAMS.glob("*.diderot")))
