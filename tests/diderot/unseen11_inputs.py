"""The inputs of the programs in ``more/unseen11/`` (a tenth round: programs of Diderot's public examples
rewritten in other ways (iso2d, fs2d-vec, tensor, mip, lic, plot1d, dvr, steps), ``#version 1.0`` programs with
the old syntax, strands with many outputs of mixed types, ``tensor[3,3,3]`` derivatives and inputs, ``new``
strands in updates with sequences grown by ``@``, global updates changing globals that fields read, globals
computed at start-up from images, border controls on vector and matrix images, ``∇×`` of fields built by
arithmetic and a grid of 50 653 strands) and the stored outputs of diderotc's executables on them
(``more/unseen11/diderotc.json``: ``diderotc --double --exec --snapshot``).  ``python
tests/diderot/unseen11_inputs.py [RUN ...]`` remakes them where diderotc is on PATH (docs/diderot.md, "Programs
written to combine the features")."""

from __future__ import annotations

import sys
from pathlib import Path

import agreement
import unseen9_inputs
import unseen10_inputs
from unseen8_inputs import grid, write

PROGRAMS = Path(__file__).parent / "more" / "unseen11"
STORED = PROGRAMS / "diderotc.json"


def _build(f: Path) -> None:
    unseen10_inputs.make(f)  # img2, vol, vec2, mat2, vec3, mat3, line, rs
    write(f / "cmap.nrrd", grid([10], 3), ["space dimension: 1", "space directions: none (0.25)", "space origin: (-1.1)",
                                            "kinds: 3-vector space"])
    write(f / "pts.nrrd", [[-1.3 + 0.37 * i, -1.1 + 0.29 * ((i * 5) % 7)] for i in range(7)], ["kinds: 2-vector list"],
          t="double")


make, written = agreement.input_files(_build)  # every input file of RUNS (about 45 kB); what a run wrote


def _runs(prog: str, *argvs: tuple[str, list[str]]) -> list[tuple[str, str, list[str]]]:
    return [(f"{prog.split('_')[0]}_{k}", prog, argv) for k, argv in argvs]


#: each run: (its name, the program, its command line)
RUNS: list[tuple[str, str, list[str]]] = (
    _runs("t01_isoflow", ("0", []), ("v", ["-isoval", "-0.3", "-size", "6", "-stepsMax", "8"]))
    + _runs("t02_v1iso", ("0", []), ("e", ["-epsilon", "0.01", "-cmin", "-2.4", "-1", "-cmax", "1", "2.2"]))
    + _runs("t03_fs2dvec", ("0", []), ("id", ["-which", "ident"]), ("jac", ["-which", "jac", "-shear", "0"]),
            ("sw", ["-which", "swirl", "-angle", "-45", "-size0", "4"]), ("no", ["-which", "none", "-size1", "2", "-size0", "2"]))
    + _runs("t04_tensor333", ("0", []), ("l", ["-l", "1"]))
    + _runs("t05_newgain", ("0", []), ("t", ["-thresh", "-0.2", "-gens", "1"]), ("s1", ["-s", "1"]))
    + _runs("t06_mixedouts", ("0", []), ("l", ["-level", "0.5"]))
    + _runs("t07_mipish", ("0", []), ("o", ["-camOrtho", "true", "-camFOV", "10", "-iresU", "5", "-iresV", "4"]))
    + _runs("t08_lic", ("0", []), ("h", ["-h0", "0.3", "-stepnum", "3"]))
    + _runs("t09_v1tensor", ("0", []), ("r", ["-r0", "1", "0", "0", "-r1", "0", "2", "0", "-r2", "1", "1", "3"]))
    + _runs("t10_v1plot", ("0", []), ("t", ["-athick", "0.5", "-pthick", "4", "-xsize", "8"]))
    + _runs("t11_dvrsmall", ("0", []), ("f", ["-fog", "0.5", "0.6", "0.7", "0.05", "-isoval", "0.3", "-camOrtho", "true"]))
    + _runs("t12_stepsish", ("0", []))
    + _runs("t13_big3d", ("0", []), ("s5", ["-side", "5", "-lo", "-9"]))
    + _runs("t14_startglobals", ("0", []), ("n", ["-n", "9"]))
    + _runs("t15_never3d", ("l4", ["-l", "4"]), ("s2", ["-s", "2", "-l", "5", "-rate", "0.6"]))
    + _runs("t16_bordervec", ("0", []))
    + _runs("t17_fnframes", ("0", []))
    + _runs("t18_curlmix", ("0", []), ("a", ["-a", "-0.5"]))
    + _runs("t19_v1swarm", ("0", []), ("g", ["-gens", "0", "-hh", "0.5"]))
    + _runs("t20_seqgrow", ("0", []), ("m", ["-maxlen", "2"]), ("s1", ["-s", "1"]))
    + _runs("t21_globalshift", ("0", []), ("r", ["-rate", "0.25"]))
    + _runs("t22_mat3ops", ("0", []))
    + _runs("t23_startlocals", ("0", []), ("k", ["-k", "-2.5"]))
    + _runs("t24_v1misc", ("0", []), ("sc", ["-scale", "-0.5"]))
    + _runs("t25_newsnap", ("0", []), ("s1", ["-s", "1", "-cap", "12"]), ("l2", ["-l", "2", "-spread", "0.9"]))
    + _runs("t26_evecs3", ("0", []))
)


diderotc_flags = unseen9_inputs.diderotc_flags  # (a snapshot build each)


if __name__ == "__main__":
    agreement.remake_main(sys.modules[__name__], sys.argv[1:], timeout=15)
