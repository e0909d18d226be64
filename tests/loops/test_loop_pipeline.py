"""The named loop pipeline (loops/__init__.py ``LOOP_PIPELINE``): its names are unique,
each rewrite but ``lower`` can be left out (``loop_program(..., skip=(name,))``) and the
C kernel then still computes what the reference interpreter does, the loop program
records the rewrites that ran, and ``--emit loops`` prints them on its first line.  The
last four, ``tiles``, ``packed-blas``, ``functions`` and ``inputs``, make the choices the
C printer once made itself: skipped, the C has no register tile, no BLAS call, no
statement as a function of its own, or copies an inout variable's input instead of
reading it; where each local buffer lives is decided after them, always."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import LOOP_PIPELINE, LOOP_REWRITE_NAMES, STRUCTURE_REWRITES, interchange, loop_program
from tensorlang.loops.printer import to_text
from tensorlang.schedule import steps
from tensorlang.machine import blas
from tensorlang.targets.c.codegen import PACKED_BLAS_MARK, TILE_MARK

from corpus import helmholtz_source
from structure.test_compressed import SUMS, SUPPORTS
from structure.test_direct_sum_structure import _poly

#: Programs that between them give every rewrite something to change (checked by
#: test_every_rewrite_changes_some_program).
PROGRAMS = {
    "covariance": "in var X : [7 4]\nout var C : [4 4]\nC[j,k] = sum(i) X[i,j]*X[i,k]\n",  # compress (triangular)
    "polyreg2": _poly(64, 8, 2),  # compress (packed), pieces, pack-in-producer
    "upper half cube": SUPPORTS["TTM on an upper half cube"],  # restrict
    "upper matrix times vector": SUMS["upper matrix times vector"],  # restrict-sums
    "contraction": ("in var A : [6 6]\nin var t : [4 6 6 6]\nout var v : [4 6 6 6]\n"
                    "v[e,i,j,k] = sum(l) A[i,l] * t[e,l,j,k]\n"),  # interchange
    "helmholtz": helmholtz_source(4, 3),  # a fused loop (lower)
    "helmholtz 8": helmholtz_source(8, 2),  # rows of one 64-byte vector (tiles)
    "polyreg2 large": _poly(400, 8, 2),  # a packed product worth a BLAS call (packed-blas, PACKED_BLAS_WORK below)
    "scale in place": "in var s : []\ninout var x : [9 9]\nx = s * x\n",  # inputs
}


@pytest.fixture(autouse=True)
def loops_everywhere(monkeypatch):
    """Every contraction on generated loops (no BLAS or Gram step), and small ones
    interchanged too."""
    monkeypatch.setattr(steps, "BLAS_WORK", 1 << 62)
    monkeypatch.setattr(steps.GramStep, "why_not", lambda self, vector_bytes: "loops everywhere")
    monkeypatch.setattr(steps, "C_BLAS_WORK", 1 << 62)
    monkeypatch.setattr(steps, "PACKED_BLAS_WORK", 100_000)
    monkeypatch.setattr(interchange, "INTERCHANGE_WORK", 0)


_KERNELS: dict[str, object] = {}


def _kernel(text: str):
    """The C kernel of ``text`` with every rewrite (built once: every test here runs under
    the same :func:`loops_everywhere`)."""
    if text not in _KERNELS:
        try:
            _KERNELS[text] = tl.compile(text, backend="c")
        except TensorLangError as exc:  # no C compiler here
            pytest.skip(str(exc))
    return _KERNELS[text]


def _program(kernel, skip=()):
    """The loop program of ``kernel`` with ``skip`` left out, for the caps C compiles with."""
    facts = kernel._compiled_for("facts", "c").facts
    return loop_program(kernel.schedule, facts.declared, skip=skip,
                        blas_int_max=facts.caps.blas_int_max if facts.caps.blas else None)


def _nests(program) -> tuple:
    """What a rewrite may change of a loop program (not its records)."""
    return tuple((nest.body, nest.packs, nest.interchanged, nest.fma, nest.inputs) for nest in program.nests)


def _inputs(kernel, seed: int = 0) -> dict:
    """Random finite inputs that keep the declarations' promises (zeros outside a
    declared support)."""
    rng = np.random.default_rng(seed)
    structures = {d.name: d.structure for d in kernel.ein.decls}
    inputs = {}
    for name in kernel.checked.inputs:
        shape = kernel.checked.context.shapes[name]
        value = rng.uniform(-1, 1, shape)
        s = structures.get(name)
        inputs[name] = np.where(s.unique_mask(shape), value, 0.0) if s is not None else value
    return inputs


def test_the_names_are_unique_and_lower_comes_first():
    names = [name for name, _ in LOOP_PIPELINE]
    assert len(names) == len(set(names)) and tuple(names) == LOOP_REWRITE_NAMES
    assert names[0] == "lower" and set(STRUCTURE_REWRITES) <= set(names)
    assert all(callable(rewrite) for _, rewrite in LOOP_PIPELINE)


@pytest.mark.slow
def test_every_rewrite_changes_some_program():
    """The programs below exercise every rewrite: leaving it out changes the nests of at
    least one of them (else the meaning test would prove nothing about it)."""
    kernels = {name: _kernel(text) for name, text in PROGRAMS.items()}
    for rewrite in LOOP_REWRITE_NAMES[1:]:
        if rewrite == "packed-blas" and blas.find("float64") is None:
            continue  # no BLAS to call here
        assert any(_nests(_program(k, (rewrite,))) != _nests(k.loop_program) for k in kernels.values()), rewrite


def _changed_by(rewrite: str) -> list[str]:
    return [name for name, text in PROGRAMS.items()
            if _nests(_program(_kernel(text), (rewrite,))) != _nests(_kernel(text).loop_program)]


@pytest.mark.slow
@pytest.mark.parametrize("rewrite", LOOP_REWRITE_NAMES[1:])
def test_skipping_one_rewrite_keeps_the_values(monkeypatch, rewrite):
    """Each rewrite alone left out (on the programs where that changes the nests), the C
    kernel still agrees with the reference interpreter (with the numpy target, itself
    checked against the interpreter, for Helmholtz at n = 8: the interpreter evaluates
    its n⁹ outer product as written, over a session's memory budget)."""
    changed = _changed_by(rewrite)
    if rewrite == "packed-blas" and blas.find("float64") is None:
        pytest.skip(f"no BLAS here ({blas.why_not()})")
    assert changed
    for name in changed:
        text = PROGRAMS[name] + f"// without {rewrite}\n"  # a text of its own: no kernel cached for it
        try:
            kernel = tl.compile(text, backend="c", skip_passes=(rewrite,))
        except TensorLangError as exc:  # no C compiler here
            pytest.skip(str(exc))
        assert rewrite not in kernel.loop_program.rewrites
        assert all(rewrite not in nest.rewrites for nest in kernel.loop_program.nests)
        reference = tl.compile(text, backend="numpy" if name == "helmholtz 8" else "interp")
        for seed in (0, 1):
            inputs = _inputs(kernel, seed)
            got, expected = kernel(**inputs), reference(**inputs)
            assert set(got) == set(expected)
            for out, value in expected.items():
                np.testing.assert_allclose(got[out], value, rtol=1e-12, atol=1e-12, err_msg=f"{name} {out}")


def test_the_program_records_the_rewrites_that_ran():
    kernel = _kernel(PROGRAMS["covariance"])
    assert kernel.loop_program.rewrites == LOOP_REWRITE_NAMES
    (nest,) = kernel.loop_program.nests
    assert nest.rewrites == ("compress", "parallel")
    assert _program(kernel, ("compress",)).rewrites == tuple(n for n in LOOP_REWRITE_NAMES if n != "compress")
    dense = loop_program(kernel.schedule, kernel._compiled_for("facts", "c").facts.declared, compressed=False)
    assert dense.rewrites == tuple(n for n in LOOP_REWRITE_NAMES if n not in STRUCTURE_REWRITES)
    assert not any(set(STRUCTURE_REWRITES) & set(nest.rewrites) for nest in dense.nests)


def test_the_printed_loops_list_the_rewrites():
    kernel = _kernel(PROGRAMS["contraction"])
    first = kernel.ir("loops").splitlines()[0]
    assert first == "# loop rewrites: " + ", ".join(LOOP_REWRITE_NAMES)
    skipped = to_text(_program(kernel, ("interchange", "parallel")), kernel.schedule).splitlines()[0]
    assert skipped == "# loop rewrites: " + ", ".join(n for n in LOOP_REWRITE_NAMES if n not in ("interchange", "parallel"))


def test_unknown_names_and_lower_cannot_be_skipped():
    kernel = _kernel(PROGRAMS["covariance"])
    with pytest.raises(ValueError, match="unknown loop rewrite 'fuse'"):
        _program(kernel, ("fuse",))
    with pytest.raises(ValueError, match="'lower' cannot be skipped"):
        _program(kernel, ("lower",))
    assert _program(kernel, "compress").rewrites == _program(kernel, ("compress",)).rewrites  # one name as a string


@pytest.mark.slow
def test_the_printers_choices_are_the_last_rewrites_and_skipping_them_changes_the_c():
    """``tiles``, ``packed-blas``, ``functions`` and ``inputs`` end the pipeline; skipped,
    the C has the plain blocks instead of register tiles, the block loops instead of a
    BLAS call, a fused loop's statements inline, a copy of the inout variable's input."""
    assert LOOP_REWRITE_NAMES[-4:] == ("tiles", "packed-blas", "functions", "inputs")
    scale = _kernel(PROGRAMS["scale in place"])
    assert "read until the first assignment" in scale.target.source and "from the caller's input" in scale.ir("loops")
    copied = tl.compile(PROGRAMS["scale in place"] + "// copied\n", backend="c", skip_passes=("inputs",))
    assert "if (v1_in != v1) memcpy(" in copied.target.source and "from the caller's input" not in copied.ir("loops")
    helmholtz = _kernel(PROGRAMS["helmholtz 8"])
    assert TILE_MARK in helmholtz.target.source and "TL_NOINLINE void" in helmholtz.target.source
    assert "# a function of its own" in helmholtz.ir("loops")
    without = tl.compile(PROGRAMS["helmholtz 8"] + "// no tiles\n", backend="c", skip_passes=("tiles",))
    assert TILE_MARK not in without.target.source and "tiles" not in without.loop_program.rewrites
    inline = tl.compile(PROGRAMS["helmholtz 8"] + "// inline\n", backend="c", skip_passes=("functions",))
    assert "TL_NOINLINE void" not in inline.target.source and "# a function of its own" not in inline.ir("loops")
    if blas.find("float64") is None:
        pytest.skip(f"no BLAS here ({blas.why_not()})")
    poly = _kernel(PROGRAMS["polyreg2 large"])
    assert PACKED_BLAS_MARK in poly.target.source
    without = tl.compile(PROGRAMS["polyreg2 large"] + "// no blas\n", backend="c", skip_passes=("packed-blas",))
    assert PACKED_BLAS_MARK not in without.target.source and "tl_set_blas" not in without.target.source
