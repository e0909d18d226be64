"""``pad=`` / ``--pad``: the argument, ``padded_empty``, what the targets do with it, and
what ``--emit schedule`` and ``analyze`` say (000 §4, docs/c-backend.md "Padding")."""

import json

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.cli import main
from tensorlang.targets.c import build as c_build
from tensorlang import machine
from tensorlang.targets.c.build import find_compiler

needs_c = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")

MATVEC = "in var A : [7 5]\nin var x : [5]\nout var y : [7]\ny[i] = sum(k) A[i,k] * x[k]\n"
SCALE = "inout var x : [13 7]\nin var s : []\nx = s * x\n"


@pytest.mark.parametrize("bad", [3, 0, -4, 6, 2.0, True, "four", "", [4]])
def test_bad_pad_is_an_input_error(bad):
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(MATVEC, backend="numpy", pad=bad)
    assert info.value.code == "input"


def test_auto_is_the_simd_width_in_elements():
    width = machine.vector_bytes(find_compiler())
    assert width in (16, 32, 64)
    elements = lambda itemsize: machine.simd_elements(find_compiler(), itemsize)  # noqa: E731
    assert elements(8) * 8 == width and elements(4) * 4 == width
    assert tl.compile(MATVEC, backend="numpy", pad="auto").pad == elements(8)
    assert tl.compile(MATVEC, backend="numpy", pad="auto", dtype="float32").pad == elements(4)


@pytest.mark.parametrize("backend", ["numpy", "interp"])
def test_numpy_and_interp_accept_and_ignore_pad(backend):
    rng = np.random.default_rng(0)
    A, x = rng.uniform(-1, 1, (7, 5)), rng.uniform(-1, 1, 5)
    got = tl.compile(MATVEC, backend=backend, pad=4)(A=A, x=x)["y"]
    np.testing.assert_allclose(got, A @ x, rtol=1e-12)
    assert got.flags.c_contiguous


def test_padded_empty_layout():
    a = tl.padded_empty((7, 5), 4)
    assert a.shape == (7, 5) and a.dtype == np.float64 and not a.any()
    assert a.strides == (8 * 8, 8) and a.ctypes.data % 64 == 0
    f = tl.padded_empty((3,), "auto", dtype="float32")
    assert f.dtype == np.float32 and f.shape == (3,)
    for bad in [(-1,), ("a",), 7]:
        with pytest.raises(tl.TensorLangError):
            tl.padded_empty(bad, 4)


@needs_c
def test_padded_input_is_read_without_a_copy_and_others_are_copied():
    kernel = tl.compile(MATVEC, backend="c", pad=4)
    seen = {}
    kernel.target.store_hook = seen.update
    rng = np.random.default_rng(1)
    A = tl.padded_empty((7, 5), 4)
    A[...] = rng.uniform(-1, 1, (7, 5))
    x = rng.uniform(-1, 1, 5)
    y = kernel(A=A, x=x)["y"]
    np.testing.assert_allclose(y, A @ x, rtol=1e-12)
    assert np.shares_memory(seen["A"], A) and not np.shares_memory(seen["x"], x)
    plain = np.ascontiguousarray(A)
    kernel(A=plain, x=x)
    assert not np.shares_memory(seen["A"], plain)
    # a slice of the caller's own wider array has the padded strides, but its "padding"
    # is the caller's data: copied, never read in place (nor zeroed)
    wide = np.full((7, 8), 5.0)
    wide[:, :5] = A
    np.testing.assert_allclose(kernel(A=wide[:, :5], x=x)["y"], y, rtol=1e-12)
    assert not np.shares_memory(seen["A"], wide) and (wide[:, 5:] == 5.0).all()
    # a padded_empty array made for another pad or dtype is copied, not misread
    other = tl.padded_empty((7, 5), 16)  # (16, 16) in memory; pad 4 lays out (8, 8)
    other[...] = A
    np.testing.assert_allclose(kernel(A=other, x=x)["y"], y, rtol=1e-12)
    assert not np.shares_memory(seen["A"], other)


@needs_c
def test_results_are_unpadded_views_and_out_receives_a_copy():
    kernel = tl.compile(SCALE, backend="c", pad=4)
    x = np.arange(13 * 7, dtype=float).reshape(13, 7)
    before = x.copy()
    result = kernel(x=x, s=2.0)["x"]
    assert result.shape == (13, 7) and result.base is not None
    np.testing.assert_array_equal(result, 2 * before)
    np.testing.assert_array_equal(x, before)  # the caller's input is never written
    target = np.empty((13, 7))
    assert kernel(x=x, s=3.0, out={"x": target})["x"] is target
    np.testing.assert_array_equal(target, 3 * before)
    # the padded result buffer is kept for the next call with out=: no stale values
    kernel(x=-x, s=5.0, out={"x": target})
    np.testing.assert_array_equal(target, -5 * before)
    again = kernel(x=x, s=7.0)["x"]  # without out=, a fresh buffer: the earlier result stands
    np.testing.assert_array_equal(target, -5 * before)
    np.testing.assert_array_equal(again, 7 * before)


@needs_c
def test_threads_and_float32_with_padding():
    rng = np.random.default_rng(2)
    A, x = rng.uniform(-1, 1, (7, 5)), rng.uniform(-1, 1, 5)
    y = tl.compile(MATVEC, backend="c", pad=8, threads=2)(A=A, x=x)["y"]
    np.testing.assert_allclose(y, A @ x, rtol=1e-12)
    y32 = tl.compile(MATVEC, backend="c", pad="auto", dtype="float32")(A=A.astype("f4"), x=x.astype("f4"))["y"]
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, A @ x, rtol=1e-5)


@needs_c
def test_symbolic_sizes_pass_pad_to_each_specialisation():
    text = "in var A : [n n]\nin var x : [n]\nout var y : [n]\ny[i] = sum(k) A[i,k] * x[k]\n"
    kernel = tl.compile(text, backend="c", pad=4)
    rng = np.random.default_rng(3)
    for n in (3, 5):
        A, x = rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, n)
        np.testing.assert_allclose(kernel(A=A, x=x)["y"], A @ x, rtol=1e-12)
    specialised = list(kernel._by_shapes.values())
    assert len(specialised) == 2 and all(k.pad == 4 and k.target.pad == 4 for k in specialised)


def test_emit_schedule_and_analyze_say_what_was_chosen(tmp_path, capsys):
    prog = tmp_path / "p.tl"
    prog.write_text("in var A : [7 5]\nin var x : [5]\nout var y : [7]\nout var z : [7 5]\n"
                    "y[i] = sum(k) A[i,k] * x[k]\nz[i,j] = A[i,j] / 2\n")
    assert main(["compile", str(prog), "--emit", "schedule", "--pad", "4"]) == 0
    text = capsys.readouterr().out
    assert "padded to [7 8] (pad 4)" in text
    assert "pad 4: true extents over k (i indexes a dimension that is not padded)" in text
    assert "pad 4: padded over j (zero maps to zero)" in text
    assert main(["analyze", str(prog), "--pad", "4"]) == 0
    text = capsys.readouterr().out
    assert "padding (pad 4" in text and "pad 4: padded over j" in text
    assert main(["analyze", str(prog), "--pad", "4", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)["padding"]
    assert facts["pad"] == 4 and [s["mode"] for s in facts["statements"]] == ["true extents", "padded"]
    assert main(["compile", str(prog), "--emit", "loops", "--pad", "auto"]) == 0
    assert main(["compile", str(prog), "--emit", "schedule", "--pad", "5"]) != 0
    assert "error[input]" in capsys.readouterr().err


@needs_c
def test_cli_run_with_pad(tmp_path, capsys):
    prog = tmp_path / "p.tl"
    prog.write_text(MATVEC)
    assert main(["run", str(prog), "--random-inputs", "--pad", "4", "--backend", "c", "--json"]) == 0


# ------------------------------------------------------- pad="auto" decides (issue 44)
@needs_c
@pytest.mark.parametrize("text, why", [
    # every padded extent a multiple of the width: nothing to remove
    ("in var A : [64 64]\nout var y : [64 64]\ny = A * A\n", "no remainder"),
    # a contraction whose factor may be inf: its padding would need re-zeroing
    ("in var A : [64 7]\nin var B : [7 7]\nout var y : [64 7]\ny[i,j] = sum(k) A[i,k] * B[k,j]\n", "re-zeroed"),
    # elementwise work does not pay for copying into padded buffers
    ("in var A : [64 7]\nout var y : [64 7]\ny = A * A\n", "do not amortise"),
])
def test_auto_pads_only_where_it_pays(text, why):
    """Issue 44: ``pad="auto"`` is never slower than no padding, so it pads only where it
    removes a vector remainder at no other cost (schedule.padding.auto_pad)."""
    kernel = tl.compile(text, backend="c", pad="auto")
    assert kernel.pad == 1 and kernel.target.pad == 1 and why in kernel.auto_pad.why
    assert kernel.options.pad_auto is False
    assert kernel.code("c") == tl.compile(text, backend="c").code("c")  # the unpadded kernel itself


@pytest.mark.slow
@needs_c
def test_auto_keeps_the_fused_schedule_and_pads_its_locals():
    """A fused loop (the CFD interpolation's) is worth more than padding the caller's
    buffers (every call would copy them): auto keeps the fused loop, the caller's arrays
    as they are (pad 1), and pads the loop's locals only, copying u and v through
    per-iteration padded locals (issue 44); the values are the unpadded kernel's."""
    text = ("in var A : [7 7]\nin var u : [30 7 7 7]\nout var v : [30 7 7 7]\n"
            "v[e,i,j,k] = sum(l,m,q) A[i,l] * A[j,m] * A[k,q] * u[e,l,m,q]\n")
    width = machine.simd_elements(find_compiler(), 8)
    if width <= 1 or 7 % width == 0:
        pytest.skip("no vectors, or no remainder")
    kernel = tl.compile(text, backend="c", pad="auto")
    plain = tl.compile(text, backend="c")
    assert kernel.pad == 1 and kernel.target.pad == 1 and kernel.auto_pad.locals == width
    assert kernel.options.pad_locals == width and "locals padded" in kernel.auto_pad.why
    [step] = kernel.schedule.steps
    assert step.fusion is not None
    names = {local.name for local in step.fusion.locals}
    assert {"u_p", "v_p"} <= names  # the batched buffers, copied through padded locals
    rng = np.random.default_rng(3)
    A, u = rng.uniform(-1, 1, (7, 7)), rng.uniform(-1, 1, (30, 7, 7, 7))
    np.testing.assert_allclose(kernel(A=A, u=u)["v"], plain(A=A, u=u)["v"], rtol=1e-13, atol=1e-13)


@needs_c
def test_auto_pads_where_every_condition_holds(monkeypatch):
    """With the amortisation thresholds at 0, a zero-preserving loop over an extent with a
    remainder is padded to the vector width, and computes what the unpadded kernel does."""
    from tensorlang.schedule import padding as rules

    monkeypatch.setattr(rules, "AUTO_FLOPS_PER_COPIED", 0)
    monkeypatch.setattr(rules, "AUTO_MIN_ELEMENTS", 0)
    text = "in var A : [64 7]\nout var y : [64 7]\ny = A * A\n"
    kernel = tl.compile(text, backend="c", pad="auto")
    width = machine.simd_elements(find_compiler(), 8)
    if width <= 1:
        pytest.skip("no vectors")
    assert kernel.pad == width and "removes the remainders of extents 7" in kernel.auto_pad.why
    A = np.random.default_rng(1).uniform(-1, 1, (64, 7))
    np.testing.assert_array_equal(kernel(A=A)["y"], A * A)
