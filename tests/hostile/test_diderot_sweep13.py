"""Diderot programs and runs written as a user would, with features in unusual places (issue
[diderot], "programs you have not seen"; the sweep after test_diderot_sweep12.py): each
finding of the sweep that was fixed, checked on the strand interpreter and on the C executor,
against what ``diderotc --double --exec``'s executable did with the same program."""

from __future__ import annotations

import io

import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.strands.runner import StrandRun
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


def program(text: str):
    return strands(check(parse_program(text)))


# A grid whose iteration range is empty (an input bound makes it so) has no strand: Diderot's
# executable says "no stable strands at termination, so no output" and exits 1; the command
# line wrote an NRRD file with an axis of size 0, which Teem (unu, nrrdLoad) cannot read.
EMPTY_GRID = """#version 2.0
input int hi = 3;
strand S (int i, int j) {
  output real r = 0.0;
  update { r = real(i * 10 + j); stabilize; }
}
create_array { S(i, j) | i in 0..hi, j in 2..1 };
"""


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=needs_cc)])
@pytest.mark.parametrize("snapshot", [[], ["-s", "1"]], ids=["run", "snapshots"])
def test_an_empty_grid_writes_no_file_and_exits_1_as_diderot_does(tmp_path, backend, snapshot):
    p = StrandRun(program(EMPTY_GRID))
    err = io.StringIO()
    argv = ["-o", str(tmp_path / "r.nrrd"), "-sp", str(tmp_path / "snap"), *snapshot]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TENSORLANG_STRAND_BACKEND", backend)
        assert p.main(argv, out=io.StringIO(), err=err) == 1
    assert "no stable strands at termination, so no output" in err.getvalue()
    assert list(tmp_path.iterdir()) == []
    res = p.program.run({}, backend=backend)  # from Python: the grid's empty array, as before
    assert res.outputs["r"].shape == (4, 0) and res.grid_shape == (4, 0)
