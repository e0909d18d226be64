"""A twelfth round of programs and inputs (``more/unseen13/``, ``unseen13_inputs.py``): small applications in the
style of Diderot's examples (LIC, isocontour particles born and dying in one update, ridges in 3-D, volume
rendering, plot1d, fs2d and heron varied), global updates computing statistics and stopping the run, evals and
evecs of tensor fields, ``normalize`` of zero vectors, ``lerp``/``clamp``/``clerp`` of tensors, ``fmod`` and
``%`` of negatives, ``atan2`` of signed zeros, int overflow, NaN in conditions, ``inside`` at exact borders,
functions of fields, ``foreach`` over every kind of range and sequence, strings with escapes and snapshots.
Each run must print and write what diderotc's executable did (``more/unseen13/diderotc.json``) on the interpreter
and on the C executor, which must not fall back (a run asked of C that it does not lower is error[backend] here)."""

from __future__ import annotations

from agreement import round_tests  # tests/diderot is on the path: the folder is not a package
import unseen13_inputs

#: runs where tensorlang differs from diderotc's executable on purpose (docs/diderot.md): run -> why
DIFFERENT: dict[str, str] = {
    "q27_0": "an output copied from a state variable that the same update then changes (last = p; p = p + d;): "
             "diderotc's executable writes the state variable's new value (its C++ copies sv_p into sv_last after "
             "writing sv_p back); tensorlang keeps the value the output was given",
    "q28_r": "strands born by new in the super-step whose global update stabilizes, in a program whose strands "
             "query each other: diderotc's executable writes them from its copy of the state as it was when the step "
             "began, which they never had (stale values of earlier strands; zeros in a fresh slot); tensorlang "
             "writes them as they were made (docs/diderot-language.md: the step's other changes are dropped in both)",
}
#: the C runs (a build each, so few; q01_0, the slowest in the interpreter, runs in C only; every run agreed in C when the round was made): q24's strand parameter real[]
#: and q31's start methods that run new fell back to the interpreter before
_C_RUNS = ("q01_0", "q24_s1", "q31_0", "q31_s")


class _Round:  # the inputs module, its runs cut to those this file runs on each executor
    def __init__(self, keep):
        self.__dict__.update(vars(unseen13_inputs))
        self.RUNS = [r for r in unseen13_inputs.RUNS if keep(r[0])]


test_every_run_has_its_stored_outputs = round_tests(unseen13_inputs, DIFFERENT)[1]
_, _, test_the_interpreter_prints_and_writes_what_diderotc_does, _ = round_tests(_Round(lambda n: n != "q01_0"), DIFFERENT)
_, _, _, test_the_c_executor_prints_and_writes_what_diderotc_does = round_tests(_Round(lambda n: n in _C_RUNS), DIFFERENT)
