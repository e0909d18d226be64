"""Issue 41, tenth sweep: generated C of the model language at odd shapes and options,
the compiled Diderot strand executor under hostile run inputs, and the CLI's odd flags,
each finding fixed at its cause and covered here by its class.

* A grid of strands whose extents multiply past int64 (``-res 4294967296`` for a
  ``res x res`` grid) wrapped in numpy's product to 0 (or to a small or negative count):
  the compiled executor passed the memory check and failed with error[internal] (a
  reshape of 0 elements), the interpreter with a misleading count.  The count is now
  exact (Python integers) and the run is error[too-large] with it, on both executors.
* ``tensorlang run P --output ""`` exited 0 and wrote nothing; ``--output -`` wrote a file
  named ``-.npz``: both are error[input] (docs/cli.md).
"""

from __future__ import annotations

import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError

GRID = """input int res = 4;
strand S (int i, int j, int k) {
  output real v = 0.0;
  update { v = real(i + j + k); stabilize; }
}
initially [ S(i, j, k) | i in 0..res-1, j in 0..res-1, k in 0..KMAX ];
"""


@pytest.mark.parametrize("backend", ["c", "interp"])
@pytest.mark.parametrize("res, kmax", [(2**32, 0), (2**21, 2**21 - 1), (3037000500, 0), (2**31, 3)])
def test_grid_extents_that_overflow_int64_are_too_large(backend, res, kmax):
    """The strand count of a grid is the exact product of its extents, whatever int64 makes of it."""
    run = tl.compile(GRID.replace("KMAX", str(kmax)), lang="diderot", backend=backend)
    with pytest.raises(TensorLangError) as e:
        run(res=res)
    assert e.value.code == "too-large", e.value
    assert f"{res * res * (kmax + 1):,} strands" in str(e.value)


@pytest.mark.parametrize("output", ["", "-"])
def test_run_output_that_names_no_file_is_refused(tmp_path, monkeypatch, capsys, output):
    """``--output ""`` wrote nothing and exited 0; ``--output -`` wrote a file named ``-.npz``."""
    from tensorlang.cli import main

    monkeypatch.chdir(tmp_path)
    prog = tmp_path / "p.tl"
    prog.write_text("in var A : [3]\nout var B : [3]\nB = A * A\n")
    assert main(["run", str(prog), "--random-inputs", "--output", output, "-q"]) == 1
    assert "error[input]" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [prog]
