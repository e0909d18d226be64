"""The inputs of the programs in ``more/unseen12/`` (an eleventh round: global fields of globals the global update
sets, field locals of the global start and update blocks, int and vector sequences as inputs, locals,
arguments and outputs, strands dying in their start method, ``continue`` and ``stabilize`` in nested ``if``\\ s, a 3-D
image whose axes are not aligned with the world's, every kernel under its highest derivatives, ``image(1)[]``
fields, 64-bit ints near 2^63, fields written inline, every value printed, a collection of 60 000 strands, fs3d-vec and
unicode examples varied) and the stored outputs of diderotc's executables on them (``more/unseen12/diderotc.json``:
``diderotc --double --exec --snapshot``, ``--long-int`` for ``w14``).  ``python tests/diderot/unseen12_inputs.py
[RUN ...]`` remakes them where diderotc is on PATH (docs/diderot.md, "Programs written to combine the features")."""

from __future__ import annotations

import sys
from pathlib import Path

import agreement
import unseen9_inputs
import unseen10_inputs
from unseen8_inputs import grid, write

PROGRAMS = Path(__file__).parent / "more" / "unseen12"
STORED = PROGRAMS / "diderotc.json"
#: build options of one program beyond :func:`diderotc_flags`'s
PROGRAM_FLAGS = {"w14_longint": ["--long-int"]}


def _build(f: Path) -> None:
    unseen10_inputs.make(f)  # img2, vol, vec2, mat2, vec3, mat3, line, rs
    write(f / "obl.nrrd", grid([7, 8, 9]), ["space dimension: 3", "space directions: (0.4,0.1,0.05) (-0.1,0.35,0.1) "
                                            "(0.05,-0.1,0.45)", "space origin: (0.3,-1.2,0.8)"])
    write(f / "p3.nrrd", [[0.2 * i - 0.5, 0.3 * ((i * 3) % 5) - 0.6, 0.1 * i * i - 0.4] for i in range(6)],
          ["kinds: 3-vector list"], t="double")
    write(f / "cmap.nrrd", grid([10], 3), ["space dimension: 1", "space directions: none (0.25)", "space origin: (-1.1)",
                                            "kinds: 3-vector space"])
    write(f / "ints.nrrd", [4, -1, 2, -3], ["kinds: list"], t="int")
    write(f / "ks.nrrd", [12, -7, 0, 45, -30, 8], ["kinds: list"], t="int")
    write(f / "pts2.nrrd", [[0.1, 0.2], [-0.3, 0.4], [1.0, -1.0], [0.0, 0.0]], ["kinds: 2-vector list"], t="double")


make, written = agreement.input_files(_build)  # every input file of RUNS; what a run wrote


def _runs(prog: str, *argvs: tuple[str, list[str]]) -> list[tuple[str, str, list[str]]]:
    return [(f"{prog.split('_')[0]}_{k}", prog, argv) for k, argv in argvs]


#: each run: (its name, the program, its command line)
RUNS: list[tuple[str, str, list[str]]] = (
    _runs("w01_dropmix", ("0", []), ("r", ["-rate", "0.5"]))
    + _runs("w02_startlocals", ("0", []), ("k", ["-k", "-1"]))
    + _runs("w03_intseqs", ("0", []), ("l", ["-loud", "true", "-ws", "2", "-0.5"]))
    + _runs("w04_diestart", ("0", []), ("l2", ["-l", "2"]), ("c", ["-count", "5", "-shrink", "0.6"]))
    + _runs("w05_nestedctl", ("0", []), ("l3", ["-l", "3"]))
    + _runs("w06_oblique3d", ("0", []))
    + _runs("w07_kernels2d", ("0", []))
    + _runs("w08_line1d", ("0", []), ("r", ["-lo", "-1.5", "-hi", "1.0", "-num", "6"]))
    + _runs("w09_fs3dvec", ("0", []), ("id", ["-which", "ident"]), ("jac", ["-which", "jac"]),
            ("zr", ["-which", "zrot", "-parm0", "0.3", "0", "0"]), ("nt", ["-which", "ntorus", "-width", "2.5"]),
            ("no", ["-which", "nope", "-sz2", "1"]))
    + _runs("w10_unicodefields", ("0", []), ("d", ["-degrees", "75"]))
    + _runs("w11_bigcoll", ("0", []))
    + _runs("w12_startglobals", ("0", []), ("all", ["-flip", "true", "-m", "4", "-scale", "-1", "-shift", "1", "1", "-tint",
                                                     "0", "0", "2", "-quad", "0", "1", "0", "1", "-A", "1", "0", "0", "1",
                                                     "-label", "x y"]))
    + _runs("w13_v1curl", ("0", []))
    + _runs("w14_longint", ("0", []), ("b", ["-big", "-9223372036854775808", "-neg", "9223372036854775807"]))
    + _runs("w15_fnprobes3d", ("0", []), ("w", ["-wts", "0", "1", "-1"]))
    + _runs("w16_annealstable", ("0", []))
    + _runs("w17_seqfiles", ("0", []))
    + _runs("w18_never1d", ("l4", ["-l", "4"]), ("s2", ["-s", "2", "-l", "5", "-tag", "x y"]))
    + _runs("w19_inlinefields", ("0", []))
    + _runs("w20_matslices", ("0", []))
    + _runs("w21_v1births", ("0", []), ("t", ["-tol", "0.1"]))
    + _runs("w22_fieldfnglobals", ("0", []))
    + _runs("w23_printall", ("0", []), ("w", ["-who", "a \\ b", "-tiny", "-2.5e-310"]))
    + _runs("w24_insideborder", ("0", []))
    + _runs("w26_bighess", ("0", []), ("s", ["-sz0", "7", "-sz1", "5", "-angle", "-35", "-fov", "3"]))
    + _runs("w27_obliqueborder", ("0", []))
    + _runs("w25_snapdie", ("0", []), ("s1", ["-s", "1"]), ("g", ["-gens", "0", "-s", "2"]))
)


diderotc_flags = unseen9_inputs.diderotc_flags  # (a snapshot build each)


if __name__ == "__main__":
    agreement.remake_main(sys.modules[__name__], sys.argv[1:], timeout=15)
