"""The inputs of the programs in ``more/unseen9/`` (an eighth round: runs with snapshots, ``-s N``, of grids and
collections that are born, die and stabilize, with start methods, global start and update blocks, sequences of
any length as outputs, ``-l`` cutting a run, ``-s`` past the run's end and runs of no step; the parallel
executables, ``-n 2``; ``#version 1.0`` programs and programs adapted from the public examples) and the stored
outputs of diderotc's executables on them (``more/unseen9/diderotc.json``): ``diderotc --double --exec
--snapshot``, and ``--target=parallel`` too for a run given ``-n``.  ``python tests/diderot/unseen9_inputs.py
[RUN ...]`` remakes them where diderotc is on PATH (docs/diderot.md, "Programs written to combine the features")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import agreement
from unseen8_inputs import grid, write

PROGRAMS = Path(__file__).parent / "more" / "unseen9"
STORED = PROGRAMS / "diderotc.json"


def make(folder: Path) -> None:
    """Every input file of RUNS, written into ``folder`` (a few hundred bytes)."""
    for name, data in _files().items():
        (Path(folder) / name).write_bytes(data)


@cache
def _files() -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp) / "img.nrrd", grid([9, 8]), ["space dimension: 2", "space directions: (0.5,0) (0,0.5)",
                                                       "space origin: (-2,-1.75)"])
        write(Path(tmp) / "img_rot.nrrd", grid([9, 8]), ["space dimension: 2", "space directions: (0.5,0.2) (-0.2,0.5)",
                                                           "space origin: (-1.5,-1.4)"])
        pts = [[0.1 + 0.37 * i, 0.7 - 0.29 * ((i * 5) % 7)] for i in range(6)]  # float samples: rounded to float32
        write(Path(tmp) / "pts.nrrd", pts, ["kinds: 2-vector list"])
        write(Path(tmp) / "ws.nrrd", [0.1, 0.7, -1.3], ["kinds: list"])
        return {p.name: p.read_bytes() for p in Path(tmp).iterdir()}


def written(folder: Path) -> dict[str, dict]:
    """What a run wrote into ``folder``, less the input files ``make`` wrote."""
    return agreement.written(folder, make)


def _runs(prog: str, *argvs: tuple[str, list[str]]) -> list[tuple[str, str, list[str]]]:
    return [(f"{prog.split('_')[0]}_{k}", prog, argv) for k, argv in argvs]


_N2 = ["-n", "2"]
#: each run: (its name, the program, its command line); a run given -n is that of the parallel executable
RUNS: list[tuple[str, str, list[str]]] = (
    _runs("y01_gridsnap", ("0", []), ("s1", ["-s", "1"]), ("s2l3", ["-s", "2", "-l", "3"]), ("s50", ["-s", "50"]),
          ("s3", ["-s", "3", "-lim", "5"]), ("sp", ["-s", "2", "-sp-y", "why", "-o-p", "pp.nrrd"]),
          ("l2", ["-l", "2"]), ("s2l4", ["-s", "2", "-l", "4"]), ("n2", ["-s", "1", *_N2]), ("n2l", ["-l", "3", "-s", "2", *_N2]))
    + _runs("y02_collsnap", ("0", []), ("s1", ["-s", "1"]), ("s3", ["-s", "3"]), ("s1l2", ["-s", "1", "-l", "2"]),
            ("s99", ["-s", "99", "-gens", "1"]), ("n2", ["-s", "1", *_N2]))
    + _runs("y03_seqsnap", ("0", []), ("s1", ["-s", "1"]), ("s2l2", ["-s", "2", "-l", "2"]), ("st0", ["-s", "1", "-steps", "0"]), ("l3", ["-s", "2", "-l", "3"]),
            ("o", ["-s", "2", "-o-hist", "h.nrrd", "-sp-path", "pp", "-o-k", "kk.nhdr"]),
            ("n2", ["-s", "1", *_N2]))
    + _runs("y04_zero", ("0", []), ("s1", ["-s", "1"]), ("hi0", ["-s", "1", "-hi", "0"]), ("hi1", ["-s", "1", "-hi", "2"]), ("pr", ["-print", "out.txt"]),
            ("n2", ["-s", "1", *_N2]))
    + _runs("y05_v1grid", ("0", []), ("s1", ["-s", "1"]), ("rot", ["-s", "2", "-pic", "img_rot.nrrd", "-ext", "3.5"]),
            ("l1", ["-s", "1", "-l", "1"]), ("n2", ["-s", "1", *_N2]))
    + _runs("y06_v1coll", ("0", []), ("s1", ["-s", "1"]), ("s2", ["-s", "2", "-gens", "4"]), ("l2", ["-s", "1", "-l", "2"]),
            ("n2", ["-s", "1", *_N2]))
    + _runs("y07_rootsish", ("0", []), ("pr", ["-print", "p.txt", "-count", "3"]), ("s2", ["-s", "2", "-count", "4", "-lo", "0.5", "-hi", "1000"]),
            ("n2", ["-s", "1", *_N2]))
    + _runs("y08_windowish", ("0", []), ("big", ["-fov", "12", "-w", "6", "-ht", "3", "-fill", "nan"]),
            ("s1", ["-s", "1", "-center", "1.5", "-1"]), ("n2", ["-s", "1", *_N2]))
    + _runs("y09_swarm", ("0", []), ("s1", ["-s", "1"]), ("s2", ["-s", "2", "-rad", "0.4", "-l", "3"]),
            ("n2", ["-s", "1", *_N2]), ("n2r", ["-rad", "0.9", "-s", "0", *_N2]))
    + _runs("y10_bspgrid", ("0", []), ("s2", ["-s", "2", "-side", "3"]), ("n2", ["-s", "0", *_N2]), ("n2s", ["-s", "4", "-side", "7", *_N2]))
    + _runs("y11_v1heron", ("0", []), ("s1", ["-s", "1"]), ("s3", ["-s", "3", "-nv", "3", "-vmax", "1e6"]),
            ("n2", ["-s", "2", *_N2]))
    + _runs("y12_gridtypes", ("0", []), ("s1", ["-s", "1"]), ("s2l2", ["-s", "2", "-l", "2", "-s", "1"]),
            ("n2", ["-s", "1", *_N2]))
    + _runs("y13_longrun", ("0", []), ("s5k", ["-s", "5000", "-l", "10002"]), ("s9999", ["-s", "9999", "-upto", "9999"]),
            ("n2", ["-s", "10000", "-l", "20000", *_N2]))
    + _runs("y14_v1print", ("0", []), ("s1", ["-s", "1", "-num", "30"]), ("l1", ["-s", "1", "-l", "1"]),
            ("n2", ["-s", "1", *_N2]))
    + _runs("y15_floatseq", ("0", []), ("s1", ["-s", "1"]))
)


def remake(names: list[str], built: dict[tuple[str, str], Path] | None = None, *, runs=None, programs: Path = PROGRAMS,
           store: Path = STORED, make=make) -> None:
    """Build each program with diderotc --double --exec --snapshot (and --target=parallel for a run given -n),
    run it and store what it printed and wrote (``built``: executables already built, (program, target) -> path;
    ``runs``, ``programs``, ``store`` and ``make``: another round's, RUNS and the rest of this module's by default)."""
    stored = json.loads(store.read_text()) if store.exists() else {}
    built = dict(built or {})
    with tempfile.TemporaryDirectory() as tmp:
        for name, prog, argv in RUNS if runs is None else runs:
            if name not in names:
                continue
            target = "parallel" if "-n" in argv else "sequential"
            if (prog, target) not in built:
                (Path(tmp) / target).mkdir(exist_ok=True)
                shutil.copy(programs / f"{prog}.diderot", Path(tmp) / target)
                make(Path(tmp) / target)  # (diderotc reads an image's default file as it compiles)
                subprocess.run(["diderotc", "--double", "--exec", "--snapshot", f"--target={target}", f"{prog}.diderot"],
                               cwd=Path(tmp) / target, check=True, capture_output=True)
                built[prog, target] = Path(tmp) / target / prog
            with tempfile.TemporaryDirectory() as run_dir:
                make(Path(run_dir))
                try:
                    run = subprocess.run([str(built[prog, target]), *argv], cwd=run_dir, capture_output=True, text=True,
                                         timeout=15)
                    stored[name] = {"rc": run.returncode, "stdout": run.stdout, "files": agreement.written(run_dir, make)}
                except subprocess.TimeoutExpired:  # (diderotc's parallel runtime can hang: docs/diderot.md)
                    stored[name] = {"rc": "hangs", "stdout": "", "files": {}}
            print(name, stored[name]["rc"], len(stored[name]["files"]), flush=True)
    store.write_text(json.dumps(dict(sorted(stored.items())), separators=(",", ":")) + "\n")


if __name__ == "__main__":
    if shutil.which("diderotc") is None:
        sys.exit("diderotc is not on PATH (/work/shared/tools/diderot/README.md)")
    prebuilt = {}
    if len(sys.argv) > 2 and sys.argv[1] == "--built":  # a folder with seq/ and par/ executables
        for target, sub in (("sequential", "seq"), ("parallel", "par")):
            prebuilt.update({(p.stem, target): p.with_suffix("") for p in (Path(sys.argv[2]) / sub).glob("*.diderot")
                             if p.with_suffix("").exists()})
        sys.argv[1:3] = []
    remake(sys.argv[1:] or [r[0] for r in RUNS], prebuilt)
    print(len(json.loads(STORED.read_text())), "runs stored")
