"""A sixth round of programs and inputs (``more/unseen7/``, ``unseen7_inputs.py``): the scalar basis, int
division, linear algebra and prints on NaN, infinities, signed zeros and extremes given on the command line;
reductions over empty sets of strands, globals written by the global update, strands born by ``new`` and cut
by ``-l``, stabilize and die in start methods, grids with snapshots; programs shaped like the public examples
(a probe window of vimg, a ray cast of mip, Heron's iteration) run with other sizes, cameras, steps, limits and
images (cropped, padded, resampled, of other sample types); hostile command lines (an option twice, counts and
limits out of range, values of the wrong type).  Each run must print and write what the executable of
``diderotc --double --exec`` did (``more/unseen7/diderotc.json``), on the interpreter and on the C executor:
the same exit status, the same text (numbers within 1e-9), the same files (``agreement.same_files``)."""

from __future__ import annotations

import pytest

from agreement import compiled, round_tests  # tests/diderot is on the path: the folder is not a package
from tensorlang.targets.c import build as c_build
import unseen7_inputs
from unseen7_inputs import PROGRAMS, RUNS

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
#: runs where tensorlang differs from diderotc's executable on purpose (docs/diderot.md): run -> why
DIFFERENT: dict[str, str] = {
    **dict.fromkeys(["w02_2", "h_intbig"], "32-bit ints: diderotc wraps (-2^31 / -1 stops it with SIGFPE); tensorlang's are 64 bits"),
    **dict.fromkeys(["w04_3", "w04_5"], "diderotc reassociates 1e300 * (x * 0.0) into (1e300 * x) * 0.0: -nan, not 0"),
    **dict.fromkeys(["w09_2", "w09_0"], "die in a start method of a permuted collection: diderotc skips a strand's updates"),
    **dict.fromkeys(["w10_u8", "w10_half", "w10_tiny", "w11_d"], "an image input's samples: diderotc's reads float only"),
    **dict.fromkeys(["w08_nan", "w11_l2", "w12_eps0", "w12_one", "w12_zero"],
                    "a grid stopped by -l with no strand stable: tensorlang writes the outputs as they stand"),
    **dict.fromkeys(["h_lneg", "h_lhuge", "h_n0", "h_nbig", "h_int", "h_real"],
                    "option values diderotc's parser wraps, clamps or reads a prefix of: error[input] here"),
}
_run, test_every_run_has_its_stored_outputs, test_the_interpreter_prints_and_writes_what_diderotc_does, \
    test_the_c_executor_prints_and_writes_what_diderotc_does = round_tests(unseen7_inputs, DIFFERENT, ("input", "too-large"))


def _program(name: str, backend: str):
    return compiled(str(PROGRAMS / f"{name}.diderot"), backend)


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=[needs_cc, pytest.mark.slow])])
def test_a_double_root_of_a_matrix_of_negative_zeros_is_plus_zero(backend, tmp_path, monkeypatch):
    """``evals([[-0,0],[0,-0]])``: Diderot's closed form adds the mean back to the double root 0 (0 + -0 is 0);
    both executors gave the mean itself, -0."""
    _run(next(r for r in RUNS if r[0] == "w03_negz"), backend, tmp_path, monkeypatch)


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=[needs_cc, pytest.mark.slow])])
def test_start_methods_that_leave_no_strand_active_still_make_a_super_step(backend, tmp_path, monkeypatch):
    """Diderot runs the start methods inside the first super-step, so that step runs, its global update too
    (one line printed), though every strand stabilized in its start method; both executors ran no step."""
    _run(next(r for r in RUNS if r[0] == "w09_9"), backend, tmp_path, monkeypatch)
    res = _program("w09_stabmeth", backend).program.run({"cut": 9}, backend=backend)
    assert (res.steps, res.stable, res.active, res.printed) == (1, 6, 0, "0 6 -15\n")
