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

PROGRAMS = Path(__file__).parent / "more" / "unseen13"
STORED = PROGRAMS / "diderotc.json"

make, written = agreement.input_files(unseen10_inputs.make)  # img2, vol, vec2, mat2, vec3, mat3, line, rs


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
    + _runs("q11_strings", ("0", []), ("w", ["-who", "a \"b\" \\t", "-sep", " ; ", "-θ", "0.25"]))
    + _runs("q12_snapmulti", ("0", []), ("s1", ["-s", "1"]), ("s2", ["-s", "2", "-l", "3", "-rate", "0.9"]))
    + _runs("q13_vrlite", ("0", []), ("o", ["-step", "0.25", "-opac", "1", "-lo", "0.5", "-hi", "0.5", "-res", "5"]))
    + _runs("q14_globalstats", ("0", []), ("h", ["-hs", "0.2", "-maxit", "12"]))
    + _runs("q15_ridge3d", ("0", []))
    + _runs("q16_v1synth", ("0", []), ("w1", ["-which", "1", "-sz0", "4"]), ("w2", ["-which", "2", "-ext", "2"]))
    + _runs("q17_v1split", ("0", []))
    + _runs("q18_repel", ("0", []), ("r", ["-np", "5", "-rad", "2"]))
    + _runs("q19_heronnan", ("0", []), ("e", ["-eps", "0", "-cap", "8"]))
    + _runs("q20_plot1d", ("0", []), ("r", ["-res", "7", "-x0", "1.75", "-x1", "-2"]))
)


diderotc_flags = unseen9_inputs.diderotc_flags  # (a snapshot build each)


if __name__ == "__main__":
    agreement.remake_main(sys.modules[__name__], sys.argv[1:], timeout=15)
