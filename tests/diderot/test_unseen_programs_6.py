"""A fifth round of programs and inputs (``more/unseen6/``, ``unseen6_inputs.py``): four probe programs (1-D,
2-D and 3-D scalars, 2-D vectors) run on NRRD files of other orientations (flipped, rotated, permuted, LPS),
spacings without directions (negative ones too), ``axis mins``/``maxs``, measurement frames, key/value pairs,
ascii and gzip encodings, a detached header, tiny and huge spacings, headers Teem refuses; and programs of the
kinds new users write (field-valued globals built from others and passed to functions, kernels to their highest
derivatives, tensor[3,3] fields with evals/evecs, border control, strands that never stabilize stopped by
``-l``, strands that all die, empty and 1-wide grids, prints of every type, command-line inputs in every form).
Each run must print and write what the executable of ``diderotc --double --exec`` did
(``more/unseen6/diderotc.json``), on the interpreter and on the C executor: the same exit status, the same
text (numbers within 1e-9), the same files, headers and values (within 1e-9 of the file's largest)."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from agreement import compiled, round_tests  # tests/diderot is on the path: the folder is not a package
from tensorlang.errors import TensorLangError
from tensorlang.targets.c import build as c_build
import unseen6_inputs
from unseen6_inputs import PROGRAMS, make, write

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
_run, test_every_run_has_its_stored_outputs, test_the_interpreter_prints_and_writes_what_diderotc_does, \
    test_the_c_executor_prints_and_writes_what_diderotc_does = round_tests(unseen6_inputs, {})


def _program(name: str, backend: str):
    return compiled(str(PROGRAMS / f"{name}.diderot"), backend)


@pytest.mark.parametrize("expr", ["∇V(p)", "∇∇V(p)"])
def test_grad_of_a_1d_vector_field_is_refused(expr):
    """diderotc: "type error for unary operator '∇'" (∇ takes a scalar field, in 1-D too); tensorlang took it
    as ∇⊗ there (and refused it in 2-D and 3-D)."""
    from tensorlang.lang.diderot import parse_program
    from tensorlang.lang.diderot import typecheck as check
    text = ("#version 2.0\ninput image(1)[2] img;\nfield#2(1)[2] V = bspln3 ⊛ img;\n"
            f"strand S (int i) {{ output vec2 z = [0.0, 0.0]; update {{ real p = 0.1; z = {expr}; stabilize; }} }}\n"
            "create_array { S(i) | i in 0..1 }\n")
    with pytest.raises(TensorLangError, match="use ∇⊗") as info:
        check(parse_program(text))
    assert info.value.code == "shape"


@pytest.mark.parametrize("file, says", [("a_lps.nrrd", "space 'right-anterior' is none of NRRD's space names"),
                                        ("a_units.nrrd", "axis 0 has a space direction and units too")])
def test_a_header_teem_refuses_is_refused_clearly(file, says, tmp_path, monkeypatch):
    """Teem's reader (Diderot's executables) refuses a space name that NRRD has not and an axis given a space
    direction and a spacing, min, max or units; tensorlang took the directions and ignored the rest."""
    from tensorlang.sampling.image import load
    make(tmp_path)
    with pytest.raises(TensorLangError, match=says) as info:
        load(str(tmp_path / file))
    assert info.value.code == "input"
    head = (tmp_path / "a_flipx.nrrd").read_bytes()
    for extra in (b"spacings: 0.5 nan\n", b"axis mins: nan -1\n"):
        (tmp_path / "x.nrrd").write_bytes(head.replace(b"kinds:", extra + b"kinds:"))
        with pytest.raises(TensorLangError, match="has a space direction and") as info:
            load(str(tmp_path / "x.nrrd"))


def test_a_negative_nan_on_the_command_line_is_the_quiet_nan(tmp_path, monkeypatch):
    """``-a -nan``: Teem's option parser gives the quiet NaN, sign bit clear (printed ``nan``); Python's
    ``float("-nan")`` kept the sign, printed ``-nan``."""
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with redirect_stdout(out):
        assert _program("v11_inputs", "interp").main(["-a", "-nan"]) == 0
    assert out.getvalue() == "x;false;nan\n"


def _world(path: Path, lines: list[str], shape=(3, 4)) -> np.ndarray:
    from tensorlang.sampling.image import load
    write(path, np.arange(float(np.prod(shape))).reshape(shape), lines)
    return load(str(path)).world


@pytest.mark.parametrize("name", ["right anterior superior", "rightanteriorsuperior", "Right-Anterior-Superior",
                                  "left posterior superior", "leftanteriorsuperior", "3D right handed", "3Drighthanded"])
def test_every_spelling_of_a_space_name_teem_reads_is_read(name, tmp_path):
    """Teem reads a space name in any case with its words joined by -, a blank or nothing (diderotc's
    executables read all of these); only the dashed spellings were taken."""
    lines = ["space directions: (0.5,0,0) (0,0.25,0) (0,0,2)", "space origin: (1,2,3)"]
    base = _world(tmp_path / "a.nrrd", ["space: RAS", *lines], (2, 3, 4))
    assert np.array_equal(_world(tmp_path / "b.nrrd", [f"space: {name}", *lines], (2, 3, 4)), base)


def test_a_blank_between_two_numbers_of_a_vector_is_refused_not_joined(tmp_path):
    """Blanks beside a vector's brackets and commas are Teem's; one between two digits joined them into one number
    (``(0 .5,0)`` read as 0.5, ``(1 2,0)`` as 12): a world map diderotc's executables do not use. Refused."""
    from tensorlang.sampling.image import load
    assert np.array_equal(_world(tmp_path / "a.nrrd", ["space dimension: 2", "space directions: ( 0.5 , 0 )( 0,0.5 )"]),
                          _world(tmp_path / "b.nrrd", ["space dimension: 2", "space directions: (0.5,0) (0,0.5)"]))
    for bad in ("(0 .5,0) (0,0.5)", "(1 2,0) (0,1)"):
        write(tmp_path / "c.nrrd", np.zeros((3, 4)), ["space dimension: 2", f"space directions: {bad}"])
        with pytest.raises(TensorLangError) as info:
            load(str(tmp_path / "c.nrrd"))
        assert info.value.code == "input"


def test_field_names_are_read_in_any_case(tmp_path):
    """Teem reads ``SPACE DIRECTIONS:``, ``Space Origin:``, ``Spacings:`` as their lower-case names; pynrrd
    dropped them (another world map) or refused ``Type:``."""
    lines = ["space dimension: 2", "space directions: (0.5,0) (0,0.25)", "space origin: (1,2)"]
    base = _world(tmp_path / "a.nrrd", lines)
    shouted = ["SPACE DIMENSION: 2", "SPACE DIRECTIONS: (0.5,0) (0,0.25)", "Space Origin: (1,2)"]
    assert np.array_equal(_world(tmp_path / "b.nrrd", shouted), base)
    head = (tmp_path / "a.nrrd").read_bytes().replace(b"type: float", b"Type: float").replace(b"sizes:", b"Sizes:")
    (tmp_path / "c.nrrd").write_bytes(head)
    from tensorlang.sampling.image import load
    assert np.array_equal(load(str(tmp_path / "c.nrrd")).world, base)
