"""An eleventh round of programs and inputs (``more/unseen12/``, ``unseen12_inputs.py``): global fields of globals the
global update sets, field locals of the global start and update blocks, int and vector sequences as inputs, locals,
arguments and outputs, strands dying in their start method, ``continue`` and ``stabilize`` in nested ``if``\\ s, a 3-D
image whose axes are not the world's, every kernel under its highest derivatives, ``image(1)[]`` fields, 64-bit ints
near 2^63, fields written inline, every kind of value printed, snapshots of sequences, a collection of 60 000 strands
and Diderot's fs3d-vec and unicode examples varied.
Each run must print and write what diderotc's executable did (``more/unseen12/diderotc.json``) on the interpreter
and on the C executor, which must not fall back (a run asked of C that it does not lower is error[backend] here)."""

from __future__ import annotations

from agreement import round_tests  # tests/diderot is on the path: the folder is not a package
import unseen12_inputs

#: runs where tensorlang differs from diderotc's executable on purpose (docs/diderot.md): run -> why
DIFFERENT: dict[str, str] = {
    **dict.fromkeys(["w04_0", "w04_l2", "w04_c"], "strands dying in their start method: diderotc's executable loses "
                    "others with them (of 0..5 with 1 and 4 dying, only 0 and 5 are left; tensorlang keeps 0, 2, 3, 5)"),
    **dict.fromkeys(["w05_l3", "w18_l4", "w18_s2"], "a grid cut by -l with no stable strand: diderotc's executable writes "
                    "no output and exits 1, tensorlang writes the grid as it stands (docs/diderot.md, Differences)"),
}
#: 60 000 and 50 600 strands: the C executor's (the interpreter takes far longer; each agreed in C when the round was
#: made); the C runs (a build each, so few): the grid (a global field that keeps a dropped global's first value, once
#: left to the interpreter, runs in C in test_strand_c_fallbacks and test_review_53)
_C_ONLY = {"w11_0", "w26_0"}
_C_RUNS = ("w26_0",)


class _Round:  # the inputs module, its runs cut to those this file runs on each executor
    def __init__(self, keep):
        self.__dict__.update(vars(unseen12_inputs))
        self.RUNS = [r for r in unseen12_inputs.RUNS if keep(r[0])]


test_every_run_has_its_stored_outputs = round_tests(unseen12_inputs, DIFFERENT)[1]
_, _, test_the_interpreter_prints_and_writes_what_diderotc_does, _ = round_tests(
    _Round(lambda n: n not in _C_ONLY), DIFFERENT)
_, _, _, test_the_c_executor_prints_and_writes_what_diderotc_does = round_tests(_Round(lambda n: n in _C_RUNS), DIFFERENT)
