"""The inputs of the programs in ``more/unseen13/`` (a twelfth round: whole small applications in the style of
Diderot's examples (LIC, isocontour particles, ridges in 3-D, volume rendering, plot1d, fs2d, heron), particles
born by ``new`` while others die, global updates that compute statistics and stop the run, evals and evecs of
2-D and 3-D tensor fields, ``normalize`` of zero vectors, ``lerp``/``clamp``/``clerp`` of vectors and matrices,
``fmod`` and ``%`` of negatives, ``atan2`` of signed zeros, int overflow, NaN in conditions, ``inside`` of every
kernel at exact borders, functions taking and returning fields, ``foreach`` over every kind of range and
sequence, strings with escapes, snapshots of several outputs) and the stored outputs of diderotc's executables
on them (``more/unseen13/diderotc.json``: ``diderotc --double --exec --snapshot``).  ``python
tests/diderot/unseen13_inputs.py [RUN ...]`` remakes them where diderotc is on PATH (docs/diderot.md,
"Programs written to combine the features")."""

from __future__ import annotations

import sys
from pathlib import Path

import agreement
import unseen9_inputs
import unseen10_inputs
from unseen8_inputs import write

PROGRAMS = Path(__file__).parent / "more" / "unseen13"
STORED = PROGRAMS / "diderotc.json"



def _build(f: Path) -> None:
    unseen10_inputs.make(f)  # img2, vol, vec2, mat2, vec3, mat3, line, rs
    write(f / "p3.nrrd", [[0.3 * i - 1.2, 0.2 * ((i * 3) % 7) - 0.6, 0.15 * i * i - 0.9] for i in range(8)],
          ["kinds: 3-vector list"], t="double")


make, written = agreement.input_files(_build)  # every input file of RUNS; what a run wrote


def _runs(prog: str, *argvs: tuple[str, list[str]]) -> list[tuple[str, str, list[str]]]:
    return [(f"{prog.split('_')[0]}_{k}", prog, argv) for k, argv in argvs]


#: each run: (its name, the program, its command line)
RUNS: list[tuple[str, str, list[str]]] = (
    _runs("q01_licstreak", ("0", []), ("h", ["-hs", "0.3", "-len", "4", "-sx", "5", "-sy", "3"]))
    + _runs("q02_isoswarm", ("0", []), ("i", ["-iso", "-0.2", "-seeds", "5", "-maxgen", "1"]))
    + _runs("q03_tensorevecs2", ("0", []), ("n", ["-sc", "-1"]))
    + _runs("q04_tensorevecs3", ("0", []))
    + _runs("q05_zeronorm", ("0", []), ("t", ["-frac", "-1.5", "-lo", "1", "1", "1", "-hi", "0", "0", "0", "-big", "inf"]))
    + _runs("q06_modsigns", ("0", []), ("b", ["-base", "-3", "-ang", "0", "-reps", "0"]))
    + _runs("q07_nancmp", ("0", []), ("n", ["-x0", "nan"]), ("t", ["-x0", "-inf", "-tol", "nan"]))
    + _runs("q08_insideall", ("0", []))
    + _runs("q09_fieldfns", ("0", []), ("w", ["-w", "1"]))
    + _runs("q10_foreachs", ("0", []), ("n", ["-upto", "0", "-ws", "rs.nrrd"]))
    + _runs("q11_strings", ("0", []), ("w", ["-who", "a \"b\" \\t", "-sep", " ; ", "-θ", "0.25"]),
            ("u", ["-who", "Zoë → ∇F", "-sep", "·"]))
    + _runs("q12_snapmulti", ("0", []), ("s1", ["-s", "1"]), ("s2", ["-s", "2", "-l", "3", "-rate", "0.9"]))
    + _runs("q13_vrlite", ("0", []), ("o", ["-step", "0.25", "-opac", "1", "-lo", "0.5", "-hi", "0.5", "-res", "5"]))
    + _runs("q14_globalstats", ("0", []), ("h", ["-hs", "0.2", "-maxit", "12"]))
    + _runs("q15_ridge3d", ("0", []))
    + _runs("q16_v1synth", ("0", []), ("w1", ["-which", "1", "-sz0", "4"]), ("w2", ["-which", "2", "-ext", "2"]))
    + _runs("q17_v1split", ("0", []))
    + _runs("q18_repel", ("0", []), ("r", ["-np", "5", "-rad", "2"]))
    + _runs("q19_heronnan", ("0", []), ("e", ["-eps", "0", "-cap", "8"]))
    + _runs("q20_plot1d", ("0", []), ("r", ["-res", "7", "-x0", "1.75", "-x1", "-2"]))
    + _runs("q21_griddie", ("0", []), ("c", ["-cut", "0.05"]), ("l2", ["-l", "2"]))
    + _runs("q22_globalstop", ("0", []), ("r", ["-rate", "0.9", "-tol", "0.05"]))
    + _runs("q23_promote", ("0", []), ("k", ["-k", "7"]))
    + _runs("q24_seqhist", ("0", []), ("g", ["-gens", "1"]), ("s1", ["-s", "1"]))
    + _runs("q25_v1vr", ("0", []), ("n", ["-near", "0", "-far", "0.5", "-stepSz", "0.05", "-imgRes", "3"]))
    + _runs("q26_curl3", ("0", []), ("h", ["-hs", "0.5"]))
    + _runs("q27_outcopy", ("0", []))
    + _runs("q28_sphere2d", ("0", []), ("r", ["-rad", "0.3", "-crowd", "2"]))
    + _runs("q29_starts", ("0", []), ("l", ["-lvl", "0.9"]))
    + _runs("q30_vec3seq", ("0", []))
    + _runs("q31_startnew", ("0", []), ("d", ["-depth", "0"]), ("s", ["-step", "1.5", "-s", "1"]))
    + _runs("q32_iso2dhex", ("0", []), ("i", ["-isoval", "1.0", "-stepMax", "0.05", "-maxIter", "30"]))
    + _runs("q33_mipcam", ("0", []), ("c", ["-eye", "-5", "1", "1", "-up", "0", "0", "1", "-fov", "30", "-res", "4"]))
    + _runs("q34_v1heron", ("0", []), ("e", ["-eps", "0.001", "-cap", "3"]))
    + _runs("q35_globaldie", ("0", []), ("e", ["-enough", "9", "-rate", "-0.3"]))
    + _runs("q36_inside3d", ("0", []))
    + _runs("q37_jacevals", ("0", []))
)


diderotc_flags = unseen9_inputs.diderotc_flags  # (a snapshot build each)


if __name__ == "__main__":
    agreement.remake_main(sys.modules[__name__], sys.argv[1:], timeout=15)
