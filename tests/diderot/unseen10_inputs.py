"""The inputs of the programs in ``more/unseen10/`` (a ninth round: field-valued locals in strands and functions,
functions composing probes, border control under derivatives, matrix fields of 2-D and 3-D with every operator,
``∇×`` in 2-D and 3-D, five-argument ``lerp``, ``modulate``, slices inside reductions, strings and escapes in
``print``, deep ``if``/``else`` chains, globals computed at start-up, inputs of every type, global updates reading
reductions, grids of 1-D and 3-D, strands cut by ``-l``, ``#version 1.0`` programs and a collection of 52 900
strands) and the stored outputs of diderotc's executables on them (``more/unseen10/diderotc.json``: ``diderotc
--double --exec --snapshot``, ``--target=parallel`` for a run given ``-n``).  ``python
tests/diderot/unseen10_inputs.py [RUN ...]`` remakes them where diderotc is on PATH (docs/diderot.md, "Programs
written to combine the features")."""

from __future__ import annotations

import sys
from pathlib import Path

import agreement
import unseen9_inputs
from unseen8_inputs import grid, write

PROGRAMS = Path(__file__).parent / "more" / "unseen10"
STORED = PROGRAMS / "diderotc.json"


def _build(f: Path) -> None:
    o2, o3 = "space origin: (-2.5,-2.25)", "space origin: (-2,-2,-2)"
    d2, d3 = "(0.5,0) (0,0.5)", "(0.5,0,0) (0,0.5,0) (0,0,0.5)"
    write(f / "img2.nrrd", grid([11, 10]), ["space dimension: 2", f"space directions: {d2}", o2])
    write(f / "vol.nrrd", grid([9, 9, 9]), ["space dimension: 3", f"space directions: {d3}", o3])
    for name, sizes, kind, comps in (("vec2", [11, 10], "2-vector", 2), ("mat2", [11, 10], "2D-matrix", 4),
                                     ("vec3", [9, 9, 9], "3-vector", 3), ("mat3", [9, 9, 9], "3D-matrix", 9)):
        space = ["space dimension: 2", f"space directions: none {d2}", o2] if len(sizes) == 2 else \
            ["space dimension: 3", f"space directions: none {d3}", o3]
        write(f / f"{name}.nrrd", grid(sizes, comps), space + [f"kinds: {kind}" + " space" * len(sizes)])
    write(f / "line.nrrd", grid([16]), ["space dimension: 1", "space directions: (0.25)", "space origin: (-2)"])
    write(f / "rs.nrrd", [0.5, -1.25, 3.0, 2.0, 7.5], ["kinds: list"], t="double")


make, written = agreement.input_files(_build)  # every input file of RUNS (about 40 kB); what a run wrote


def _runs(prog: str, *argvs: tuple[str, list[str]]) -> list[tuple[str, str, list[str]]]:
    return [(f"{prog.split('_')[0]}_{k}", prog, argv) for k, argv in argvs]


#: each run: (its name, the program, its command line); a run given -n is that of the parallel executable
RUNS: list[tuple[str, str, list[str]]] = (
    _runs("z01_fieldlocal", ("0", []), ("a", ["-a", "-1.5"]))
    + _runs("z02_borders", ("0", []))
    + _runs("z03_mat2field", ("0", []))
    + _runs("z04_mat3field", ("0", []))
    + _runs("z05_curl", ("0", []), ("a", ["-a", "2"]))
    + _runs("z06_lerp", ("0", []), ("r", ["-lo", "1", "-hi", "-1", "-num", "4"]))
    + _runs("z07_modulate", ("0", []))
    + _runs("z08_slicereduce", ("0", []), ("c3", ["-count", "3"]), ("n2", ["-s", "0", "-n", "2"]))
    + _runs("z09_strings", ("0", []), ("t", ["-tag", "two words", "-sep", "\\t;", "-reps", "1"]))
    + _runs("z10_ifchain", ("0", []), ("cut", ["-cut", "0.6"]))
    + _runs("z11_globalinit", ("0", []), ("c", ["-c0", "0.3", "-0.2", "-gain", "-0.5"]))
    + _runs("z12_inputs", ("req", ["-count", "4", "-scale", "2", "-keep", "true", "-w3", "1", "2", "3", "-t2", "1", "0", "0.5", "1"]),
            ("all", ["-count", "5", "-scale", "-0.5", "-keep", "false", "-w3", "0", "0.5", "-1", "-t2", "2", "1", "-1", "0",
                     "-base", "7", "-off", "1e-3", "-flip", "true", "-label", "lbl", "-u", "3", "4", "-q", "1", "2", "3", "4",
                     "-m2", "0", "1", "1", "0", "-trio", "3", "2", "1", "-more", "rs.nrrd", "-lin", "line.nrrd"]),
            ("miss", ["-count", "2", "-scale", "1"]))
    + _runs("z13_globalupd", ("0", []), ("d", ["-decay", "0.9", "-start0", "2"]), ("n2", ["-s", "0", "-n", "2"]))
    + _runs("z14_grid3d", ("0", []), ("gap", ["-gap", "0.3"]))
    + _runs("z15_grid1d", ("0", []), ("l3", ["-l", "3"]), ("res", ["-res", "5"]))
    + _runs("z16_never", ("l4", ["-l", "4"]), ("s1", ["-s", "1", "-l", "5"]), ("l1", ["-l", "1", "-rate", "2"]))
    + _runs("z17_big", ("0", []), ("n2", ["-s", "0", "-n", "2"]), ("k", ["-keep", "1.95", "-side", "100"]))
    + _runs("z18_fnprobes", ("0", []))
    + _runs("z19_v1grid", ("0", []), ("big", ["-ext", "3", "-res", "4"]))
    + _runs("z20_v1coll", ("0", []), ("st", ["-stepsz", "0.3"]))
    + _runs("z21_vec3ops", ("0", []))
    + _runs("z22_vec2ops", ("0", []))
    + _runs("z23_fieldfn", ("0", []))
    + _runs("z24_globalfield", ("0", []), ("r", ["-rate", "-0.25"]))
    + _runs("z25_fieldcapture", ("0", []))
    + _runs("z26_biggrid", ("30", ["-side", "30"]), ("n2", ["-side", "40", "-s", "0", "-n", "2"]))
    + _runs("z27_mat2more", ("0", []))
    + _runs("z28_zerosminus", ("0", []))
)


diderotc_flags = unseen9_inputs.diderotc_flags  # (a snapshot build each, the parallel one for a run given -n)


if __name__ == "__main__":
    agreement.remake_main(sys.modules[__name__], sys.argv[1:], timeout=15)
