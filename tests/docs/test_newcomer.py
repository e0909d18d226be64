"""What a newcomer tripped over, from a fresh clone and the docs only: each as a test
that failed before its fix (a misleading error, a page a user could not reach, a claim
the docs did not make)."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError

DOCS = Path(__file__).resolve().parents[2] / "docs"

GRADIENT = """
in var Dx : [p p]
in var w : [E p p p]
out var g : [E p p p]
g[e,i,j,k] = sum(l) Dx[i,l] * w[e,l,j,k]
"""


def test_a_forgotten_input_of_a_program_with_sizes_is_named():
    k = tl.compile(GRADIENT)
    with pytest.raises(TensorLangError, match=r"missing input 'w' of shape \[E p p p\]"):
        k(Dx=np.eye(3))


def test_a_misspelt_input_of_a_program_with_sizes_is_named_not_a_size():
    k = tl.compile(GRADIENT)
    with pytest.raises(TensorLangError, match=r"'ww' is no input of the program.*did you mean 'w'"):
        k(Dx=np.eye(3), ww=np.ones((2, 3, 3, 3)))


def test_a_size_nothing_could_bind_still_says_so():
    k = tl.compile("in var A : [n]\nout var B : [m]\nB[i] = sum(j) A[j]\n")
    with pytest.raises(TensorLangError, match=r"size 'm' has no value"):
        k(A=np.ones(3))


def test_float32_fortran_and_strided_inputs_give_the_documented_results():
    k = tl.compile(GRADIENT)
    rng = np.random.default_rng(0)
    Dx, w = rng.standard_normal((4, 4)), rng.standard_normal((3, 4, 4, 6))[..., 1:5]
    want = np.einsum("il,eljk->eijk", Dx, w)
    np.testing.assert_allclose(k(Dx=Dx, w=np.asfortranarray(w))["g"], want, rtol=1e-12, atol=1e-12)
    got = k(Dx=Dx.astype(np.float32), w=w.astype(np.float32))["g"]
    assert got.dtype == np.float64                  # as docs/howto/cfd.md says
    assert "float32 arrays are converted" in " ".join((DOCS / "howto" / "cfd.md").read_text().split())
    k32 = tl.compile(GRADIENT, dtype="float32")
    assert k32(Dx=Dx.astype(np.float32), w=w.astype(np.float32))["g"].dtype == np.float32


def test_a_diderot_user_reaches_the_diderot_pages_from_the_landing_page_and_how_to():
    assert "(diderot.md)" in (DOCS / "index.md").read_text()
    assert "(../diderot.md)" in (DOCS / "howto" / "fields.md").read_text()


def test_the_reference_check_how_to_says_what_zero_over_zero_is():
    text = " ".join((DOCS / "howto" / "reference-check.md").read_text().split())
    assert "`0 / 0` is `0`" in text and "assert_matches_reference" in text
    k = tl.compile("in var y : [2]\nout var z : [2]\nz = y / y\n", backend="interp")
    assert list(k(y=np.array([0.0, 2.0]))["z"]) == [0.0, 1.0]


def test_a_name_misspelt_only_in_case_gets_the_hint():
    k = tl.compile(GRADIENT)
    with pytest.raises(TensorLangError, match=r"'W' is no input of the program \(did you mean 'w'\?\)"):
        k(Dx=np.eye(3), W=np.ones((2, 3, 3, 3)))
    fixed = tl.compile("in var A : [2]\nout var B : [2]\nB = A * A\n")
    with pytest.raises(TensorLangError, match=r"no variable 'a' \(did you mean 'A'\?\)"):
        fixed(a=np.ones(2))


def test_a_misspelt_reconstruction_kernel_gets_the_hint():
    with pytest.raises(TensorLangError, match=r"unknown reconstruction kernel 'bspline3' \(did you mean 'bspln3'\?\)"):
        tl.field(np.ones((6, 6)), "bspline3")


def test_an_unknown_keyword_keeps_its_numpy_like_wording():
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'optimise' \(did you mean optimize\? it takes"):
        tl.einsum("ij,jk", np.ones((2, 2)), np.ones((2, 2)), optimise=True)


def test_run_random_inputs_without_sizes_asks_for_the_sizes(tmp_path, capsys):
    from tensorlang.cli import main

    prog = tmp_path / "grad.tl"
    prog.write_text(GRADIENT)
    assert main(["run", str(prog), "--random-inputs"]) != 0
    err = capsys.readouterr().err
    assert "size 'p' has no value" in err and "--param p=N" in err and "missing input" not in err


def test_two_sizes_in_one_param_say_one_param_per_size(tmp_path, capsys):
    from tensorlang.cli import main

    prog = tmp_path / "grad.tl"
    prog.write_text(GRADIENT)
    assert main(["run", str(prog), "--random-inputs", "--param", "E=3,p=4"]) != 0
    assert "one --param per size" in capsys.readouterr().err


def test_the_landing_page_and_readme_say_the_same_about_platforms():
    index = " ".join((DOCS / "index.md").read_text().split())
    readme = " ".join((DOCS.parent / "README.md").read_text().split())
    for text in (index, readme):
        assert "macOS should work" in text and "Windows is untested" in text


def test_ci_runs_the_readme_quick_start_commands_as_written():
    """The quick start works from a fresh clone because CI (.ci/run, a fresh virtual
    environment) runs each of README's two commands word for word."""
    import re

    readme = (DOCS.parent / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [line.strip() for line in re.findall(r"```sh\n(.*?)```", quick, re.S)[0].splitlines() if line.strip()]
    ci = [line.strip() for line in (DOCS.parent / ".ci" / "run").read_text().splitlines()]
    assert len(commands) == 2
    for command in commands:
        wanted = command.replace("pip install -e", "pip install --quiet -e")
        assert command in ci or wanted in ci, command


def test_run_with_a_dict_names_a_forgotten_input_too():
    k = tl.compile(GRADIENT)
    with pytest.raises(TensorLangError, match=r"missing input 'w'"):
        k.run({"Dx": np.eye(3)})
    assert k.for_inputs({"Dx": np.eye(3), "w": np.ones((2, 3, 3, 3))}).shapes["g"] == (2, 3, 3, 3)


def test_the_einsum_how_to_does_not_promise_more_than_blas_for_one_matrix_product():
    text = " ".join((DOCS / "howto" / "einsum.md").read_text().split())
    assert "BLAS's work either way" in text
    a, b = np.ones((40, 16)), np.ones((16, 12))
    np.testing.assert_array_equal(tl.einsum("ri,ij->rj", a, b), a @ b)


def test_a_dask_style_chunk_shape_is_refused_with_what_chunks_means():
    pytest.importorskip("dask")
    k = tl.compile("in var u : [E n]\nout var v : [E n]\nv = 2 * u\n")
    with pytest.raises(TensorLangError, match=r"lengths along the batch only.*chunks=10 cuts it into chunks of 10"):
        k.dask(u=np.ones((100, 4)), batch="E", chunks=(10, 4))


def test_the_teil_page_declares_each_variable_once_in_its_example():
    page = (DOCS / "teil.md").read_text()
    block = page.split("```\n", 2)[1]
    names = [line.split()[2] for line in block.splitlines() if " alloc " in f" {line}"]
    assert len(names) == len(set(names)), names


def test_numpy_testing_keywords_on_the_reference_check_name_what_it_takes():
    program = "in var A : [2]\nout var B : [2]\nB = A + A\n"
    with pytest.raises(tl.ArgumentError, match=r"'rtol' \(it takes: program, inputs, result, params, slack, fused\)"):
        tl.testing.assert_matches_reference(program, {"A": np.ones(2)}, {"B": np.full(2, 2.0)}, rtol=1e-9)
    with pytest.raises(tl.ArgumentError, match="did you mean params"):
        tl.testing.reference(program, {"A": np.ones(2)}, param={})


def test_an_array_given_to_the_builder_says_how_the_builder_takes_arrays():
    with pytest.raises(TensorLangError, match=r"not ndarray \(name an array tl\.var\(name, shape\)"):
        tl.kron(np.eye(2), np.eye(2))


def test_the_reference_check_names_a_forgotten_or_misspelt_input_instead_of_a_bottom_reference():
    program = "in var A : [3 4]\nin var B : [4 5]\nout var R : [3 5]\nR[i,k] = sum(j) A[i,j] * B[j,k]\n"
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    tl.testing.assert_matches_reference(program, {"A": A, "B": B}, A @ B)
    with pytest.raises(TensorLangError, match=r"missing input 'B' of shape \[4 5\]"):
        tl.testing.assert_matches_reference(program, {"A": A}, A @ B)
    with pytest.raises(TensorLangError, match=r"no variable 'Bb' \(did you mean 'B'\?\)"):
        tl.testing.reference(program, {"A": A, "Bb": B})


def test_a_kernel_with_sizes_called_positionally_says_to_name_the_inputs():
    k = tl.compile("in var A : [n n]\nin var u : [E n]\nout var v : [E n]\nv[e,a] = sum(i) A[a,i] * u[e,i]\n")
    for args in [(np.eye(2),), (np.eye(2), np.ones((3, 2)))]:  # (one array was taken for out=)
        with pytest.raises(TensorLangError, match=r"takes its inputs by name.*call k\(A=\.\.\., u=\.\.\.\)"):
            k(*args)
    with pytest.raises(TensorLangError, match=r"pass the dict as k.run\(d\) or k\(\*\*d\)"):
        k({"A": np.eye(2), "u": np.ones((3, 2))})
    assert k(A=np.eye(2), u=np.ones((3, 2)))["v"].shape == (3, 2)


def test_a_fixed_position_0_says_positions_count_from_1():
    with pytest.raises(TensorLangError, match=r"position 0 is outside dimension 2 of 'G', which has extent 6; "
                                              r"positions count from 1"):
        tl.check("in var G : [2 6]\nout var g : [2]\ng[e] = G[e,0]\n")
    with pytest.raises(TensorLangError, match=r"position 7 is outside dimension 2 of 'G', which has extent 6(?!;)"):
        tl.check("in var G : [2 6]\nout var g : [2]\ng[e] = G[e,7]\n")


def test_inside_axis_by_axis_is_the_support_test_on_every_point():
    """fields.reconstruct.inside (the ⊥ mask of every multi-probe field, |∇F| included)
    works axis by axis; here against the (N, dim) form it replaced, with ⊥ points and a
    world transform."""
    from tensorlang.fields import reconstruct
    from tensorlang.sampling.kernels import KERNELS
    rng = np.random.default_rng(1)
    turn = {2: [[0.6, -0.8], [0.8, 0.6]], 3: [[0.6, -0.8, 0], [0.8, 0.6, 0], [0, 0, 1]]}
    for shape, directions in [((40,), None), ((30, 31), None), ((12, 13, 14), None), ((30, 31), turn[2]),
                              ((12, 13, 14), turn[3])]:
        world = {"spacing": [0.5, 2, 1][:len(shape)], "origin": [-1, 3, 2][:len(shape)]}
        if directions is not None:  # rotated: every index axis depends on two world coordinates
            world["directions"] = directions
        img = tl.image(rng.standard_normal(shape), world=world)
        pts = rng.uniform(-8, 45, size=(3000, len(shape)))
        pts[0, 0], pts[1, -1], pts[2, 0] = np.nan, np.inf, -np.inf
        x = reconstruct.index_positions(img, pts)
        for name in ("tent", "bspln3", "c4hexic"):
            r, n = KERNELS[name].radius, np.floor(x)
            want = np.isfinite(x).all(-1) & ((n + 1 - r >= 0) & (n + r <= np.asarray(shape) - 1)).all(-1)
            got = reconstruct.inside(img, KERNELS[name], pts)
            assert (got == want).all() and 0 < got.sum() < len(pts) - 3


def test_a_reference_check_with_a_forgotten_input_names_it_not_its_size():
    program = "in var x : [B n]\nin var W : [n m]\nout var y : [B m]\ny[b,j] = sum(i) x[b,i] * W[i,j]\n"
    for prog in (program, tl.compile(program)):
        with pytest.raises(TensorLangError, match=r"missing input 'W' of shape \[n m\]"):
            tl.testing.assert_matches_reference(prog, {"x": np.ones((2, 3))}, {"y": np.ones((2, 4))})
        with pytest.raises(TensorLangError, match=r"'w' is no input of the program \(did you mean 'W'\?\)"):
            tl.testing.reference(prog, {"x": np.ones((2, 3)), "w": np.ones((3, 4))})


def test_the_reference_check_how_to_is_right_that_the_naive_softmax_is_undefined_where_exp_overflows():
    text = (DOCS / "howto" / "reference-check.md").read_text()
    stable = text.split('softmax = """', 1)[1].split('"""', 1)[0]
    naive = stable.replace(" - c[b]", "").replace(" - c[b]", "")
    t = 1e3 * np.random.default_rng(0).standard_normal((4, 5))
    e = np.exp(t - t.max(axis=1, keepdims=True))
    tl.testing.assert_matches_reference(stable, {"t": t}, e / e.sum(axis=1, keepdims=True))
    with pytest.raises(AssertionError, match=r"y: \d+ undefined \(⊥, NaN\) entries"):
        tl.testing.assert_matches_reference(naive, {"t": t}, e / e.sum(axis=1, keepdims=True))


def test_2d_points_on_an_rgb_image_say_to_pass_dim():
    rgb = np.zeros((16, 16, 3), dtype=np.uint8)
    with pytest.raises(TensorLangError, match=r"must have shape \(N, 3\), got \(5, 2\) \(an image whose last axis "
                                              r"holds each voxel's components, RGB say, is a 2-D field: "
                                              r"tl.field\(img, kernel, dim=2\)\)"):
        tl.field(rgb, "bspln3").probe(np.full((5, 2), 6.0))
    rgb_field = tl.field(rgb, "bspln3", dim=2)                # what the hint says: 2-D, three components
    assert (rgb_field.dim, rgb_field.shape) == (2, (3,))


def _how_to_commands() -> list[str]:
    """The inline `tensorlang ...` commands of the how-tos that name a program of examples/
    (the others name the reader's own file: prog.tl, PROG)."""
    found = []
    for page in sorted((DOCS / "howto").glob("*.md")):
        for command in re.findall(r"`(tensorlang [^`]+)`", " ".join(page.read_text().split())):
            if "examples/" in command:
                found.append(command)
    return found


def test_the_how_tos_name_a_command_on_an_example():
    assert any("examples/cfd/" in c for c in _how_to_commands())


@pytest.mark.slow
@pytest.mark.parametrize("command", _how_to_commands())
def test_a_how_to_command_on_an_example_runs(command):
    root = DOCS.parent
    proc = subprocess.run([sys.executable, "-m", "tensorlang", *shlex.split(command)[1:]], cwd=root,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(root / "src")})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "checksum=" in proc.stdout


def test_run_without_inputs_says_how_the_command_line_gives_them(capsys):
    from tensorlang import cli
    example = str(DOCS.parent / "examples" / "interpolation_grouped.tl")
    assert cli.main(["run", example]) != 0
    err = capsys.readouterr().err
    assert "missing input 'A' of shape [5 5]; on the command line: --input NAME=FILE.npy, --inputs FILE.npz, " \
           "or --random-inputs" in err and "Traceback" not in err


def test_tensorlang_alone_lists_the_commands(capsys):
    from tensorlang import cli
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert all(f"\n    {c} " in err for c in ("check", "run", "compile", "analyze", "explain"))


@pytest.mark.slow
def test_a_multi_probe_field_is_undefined_exactly_outside_the_domain():
    from tensorlang.fields import reconstruct
    from tensorlang.sampling.kernels import KERNELS
    rng = np.random.default_rng(2)
    img = tl.image(rng.standard_normal((30, 31)), world={"spacing": [0.5, 2], "directions": [[0.6, -0.8], [0.8, 0.6]]})
    pts = rng.uniform(-30, 45, size=(3000, 2))
    probes = tl.norm(tl.grad(tl.field(img, "bspln3"))).probe(pts)      # |∇F|: two probes, one ⊥ mask
    inside = reconstruct.inside(img, KERNELS["bspln3"], pts)
    assert (np.isnan(probes) == ~inside).all() and 0 < inside.sum() < len(pts)


USERS = DOCS.parent / "examples" / "users"


def _numpy_ax(D, u, G):
    ur, us, ut = (np.einsum("il,eljk->eijk", D, u), np.einsum("jl,eilk->eijk", D, u),
                  np.einsum("kl,eijl->eijk", D, u))
    wr = G[:, 0] * ur + G[:, 1] * us + G[:, 2] * ut
    ws = G[:, 1] * ur + G[:, 3] * us + G[:, 4] * ut
    wt = G[:, 2] * ur + G[:, 4] * us + G[:, 5] * ut
    return np.einsum("li,eljk->eijk", D, wr) + np.einsum("lj,eilk->eijk", D, ws) + np.einsum("lk,eijl->eijk", D, wt)


def test_every_newcomer_example_is_listed_and_run_here():
    listed = set(re.findall(r"^\| `([\w.]+\.tl)` \|", (USERS / "README.md").read_text(), re.M))
    assert listed == {p.name for p in USERS.glob("*.tl")} == {"ax_operator.tl", "softmax.tl"}


@pytest.mark.parametrize("E, n", [(3, 4), (2, 5)])
def test_the_ax_operator_example_is_numpys(E, n):
    rng = np.random.default_rng(n)
    D, u, G = rng.standard_normal((n, n)), rng.standard_normal((E, n, n, n)), rng.standard_normal((E, 6, n, n, n))
    got = tl.compile(USERS / "ax_operator.tl", backend="numpy")(D=D, u=u, G=G)["w"]
    np.testing.assert_allclose(got, _numpy_ax(D, u, G), rtol=1e-11, atol=1e-11)


def test_the_softmax_example_is_the_reference_for_a_max_subtracting_softmax():
    t = 1e3 * np.random.default_rng(0).standard_normal((4, 5))
    e = np.exp(t - t.max(axis=1, keepdims=True))
    tl.testing.assert_matches_reference(USERS / "softmax.tl", {"t": t}, e / e.sum(axis=1, keepdims=True))


@pytest.mark.slow
def test_the_examples_readme_block_runs(monkeypatch):
    monkeypatch.chdir(DOCS.parent)
    block = re.findall(r"```python\n(.*?)```", (USERS / "README.md").read_text(), re.S)[0]
    namespace: dict = {}
    exec(compile(block, "examples/users/README.md", "exec"), namespace)
    np.testing.assert_allclose(namespace["w"], _numpy_ax(namespace["D"], namespace["u"], namespace["G"]),
                               rtol=1e-10, atol=1e-9)


def test_a_dask_array_of_unknown_chunk_sizes_says_to_compute_them():
    da = pytest.importorskip("dask.array")
    X = da.from_array(np.arange(40.0).reshape(20, 2), chunks=(5, 2))
    filtered = X[X[:, 0] > 10]                      # dask's nan chunk sizes
    k = tl.compile("in var X : [N d]\nout var C : [d d]\nC[i,j] = sum(r) X[r,i] * X[r,j]\n", backend="numpy")
    with pytest.raises(TensorLangError, match=r"'X' has unknown chunk sizes along its batch dimension \(after a "
                                              r"filter, say\): call X.compute_chunk_sizes\(\) first"):
        k.dask(X=filtered, batch="N")
    want = np.arange(40.0).reshape(20, 2)[6:]
    got = k.dask(X=filtered.compute_chunk_sizes(), batch="N")["C"].compute(scheduler="synchronous")
    np.testing.assert_allclose(got, want.T @ want)                # chunk 1 of the filtered array is empty
    square = tl.compile("in var X : [N d]\nout var Y : [N d]\nY[r,i] = X[r,i] * X[r,i]\n", backend="numpy")
    got = square.dask(X=filtered.compute_chunk_sizes(), batch="N")["Y"].compute(scheduler="synchronous")
    np.testing.assert_allclose(got, want * want)
