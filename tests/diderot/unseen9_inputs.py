"""The inputs of the programs in ``more/unseen9/`` (an eighth round: runs with snapshots, ``-s N``, of grids and
collections that are born, die and stabilize, with start methods, global start and update blocks, sequences of
any length as outputs, ``-l`` cutting a run, ``-s`` past the run's end and runs of no step; the parallel
executables, ``-n 2``; ``#version 1.0`` programs and programs adapted from the public examples) and the stored
outputs of diderotc's executables on them (``more/unseen9/diderotc.json``): ``diderotc --double --exec
--snapshot``, and ``--target=parallel`` too for a run given ``-n``.  ``python tests/diderot/unseen9_inputs.py
[RUN ...]`` remakes them where diderotc is on PATH (docs/diderot.md, "Programs written to combine the features")."""

from __future__ import annotations

import sys
from pathlib import Path

import agreement
from unseen8_inputs import grid, write

PROGRAMS = Path(__file__).parent / "more" / "unseen9"
STORED = PROGRAMS / "diderotc.json"


def _build(f: Path) -> None:
    write(f / "img.nrrd", grid([9, 8]), ["space dimension: 2", "space directions: (0.5,0) (0,0.5)", "space origin: (-2,-1.75)"])
    write(f / "img_rot.nrrd", grid([9, 8]), ["space dimension: 2", "space directions: (0.5,0.2) (-0.2,0.5)",
                                             "space origin: (-1.5,-1.4)"])
    pts = [[0.1 + 0.37 * i, 0.7 - 0.29 * ((i * 5) % 7)] for i in range(6)]  # float samples: rounded to float32
    write(f / "pts.nrrd", pts, ["kinds: 2-vector list"])
    write(f / "ws.nrrd", [0.1, 0.7, -1.3], ["kinds: list"])


make, written = agreement.input_files(_build)  # every input file of RUNS (a few hundred bytes); what a run wrote


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


def diderotc_flags(argv: list[str]) -> list[str]:
    """diderotc's build options for a run: every run a snapshot build, the parallel one for a run given ``-n``."""
    return ["--snapshot", "--target=parallel" if "-n" in argv else "--target=sequential"]


if __name__ == "__main__":
    prebuilt = {}
    if len(sys.argv) > 2 and sys.argv[1] == "--built":  # a folder with seq/ and par/ executables
        for target, sub in (("sequential", "seq"), ("parallel", "par")):
            prebuilt.update({(p.stem, "--snapshot", f"--target={target}"): p.with_suffix("")
                             for p in (Path(sys.argv[2]) / sub).glob("*.diderot") if p.with_suffix("").exists()})
        sys.argv[1:3] = []
    agreement.remake_main(sys.modules[__name__], sys.argv[1:], built=prebuilt, timeout=15)
