"""The numpy/scipy versions of the ``diderot`` bench suite's programs: their probes against
scipy, and (when the real compiler is on PATH) their outputs against the real Diderot
executables on small sizes: the suite's reference must compute what the programs mean."""

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from tensorlang_bench.suites import diderot_peers as dp


def test_probe_matches_scipy_and_finite_differences():
    from scipy import ndimage

    img = dp.smooth2d(40)
    rng = np.random.default_rng(1)
    x = rng.uniform(-0.9, 0.9, size=(200, 2))
    v, g = dp.probe(img, "bspln3", x, grad=True)
    xi = img.to_index(x)[:, ::-1].T  # scipy's coordinates: array axes, slowest first
    assert np.allclose(v, ndimage.map_coordinates(img.data, xi, order=3, prefilter=False), rtol=0, atol=1e-12)
    assert np.allclose(dp.probe(img, "tent", x), ndimage.map_coordinates(img.data, xi, order=1), rtol=0, atol=1e-12)
    h = 1e-6
    for a in range(2):
        e = np.zeros(2)
        e[a] = h
        fd = (dp.probe(img, "bspln3", x + e) - dp.probe(img, "bspln3", x - e)) / (2 * h)
        assert np.allclose(g[:, a], fd, rtol=1e-5, atol=1e-6)


def test_inside_is_strict_on_the_index_position():
    img = dp.Img(np.zeros((6, 5)), 2, np.array([0.0, 0.0]), 1.0)  # sizes 5 (x), 6 (y)
    pts = np.array([[1.0, 1.5], [1.0 + 1e-9, 1.5], [2.999, 3.5], [3.0, 3.5], [1.5, 3.999], [1.5, 4.0]])
    assert dp.inside(img, "bspln3", pts).tolist() == [False, True, True, False, True, False]
    assert dp.inside(img, "tent", np.array([[0.0, 1.0], [0.5, 1.0], [3.99, 4.99], [4.0, 1.0]])).tolist() == [
        False, True, True, False]


SMALL = {
    "vimg": lambda: ({"images": {"img": dp.smooth2d(40), "cmap": dp.colormap()},
                      "args": dict(center=[0.1, -0.05], height=2.2, resU=32, resV=24, level=0.2, width=0.05,
                                   vmin=-1.0, vmax=1.0, background=[0.1, 0.2, 0.3])}),
    "iso2d": lambda: ({"images": {"img": dp.smooth2d(40)},
                       "args": dict(level=0.1, res=40, lo=[-0.95, -0.95], hi=[0.95, 0.95], maxSteps=16, tol=1e-6)}),
    "life": lambda: ({"images": {"board": dp.board(32)}, "args": dict(N=32, gens=7)}),
    "sphere": lambda: ({"args": dict(num=300, rad=0.3, step=0.01, gens=5)}),
    "mip": lambda: ({"images": {"vol": dp.blob3d(16)},
                     "args": dict(eye=[4.0, 3.0, 2.0], at=[0.0, 0.0, 0.0], up=[0.0, 0.0, 1.0], fov=30.0, resU=24,
                                  resV=20, near=-2.0, far=2.0, dt=0.05)}),
    "dvr": lambda: ({"images": {"vol": dp.blob3d(20)},
                     "args": dict(eye=[4.0, 3.0, 2.0], at=[0.0, 0.0, 0.0], up=[0.0, 0.0, 1.0], fov=30.0, resU=24,
                                  resV=20, near=-2.0, far=2.0, dt=0.02, level=0.5, thick=0.05, stopAt=0.01,
                                  light=[1.0, 1.0, 2.0], ka=0.2, kd=0.7, ks=0.3, shiny=30.0, tint=[0.9, 0.8, 0.6])}),
}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("diderotc") is None, reason="diderotc (the real Diderot compiler) is not on PATH")
@pytest.mark.parametrize("name", sorted(SMALL))
def test_numpy_version_matches_diderot_executable(name, tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORLANG_BENCH_CACHE", os.environ.get("TENSORLANG_BENCH_CACHE") or tempfile.mkdtemp())
    inp = SMALL[name]()
    want = dp.NUMPY[name](inp)
    args = dict(inp["args"])
    for key, img in inp.get("images", {}).items():
        dp.write_nrrd(tmp_path / f"{key}.nrrd", img, "float" if name == "life" else "double")
        args[key] = f"{key}.nrrd"
    for key, pts in inp.get("points", {}).items():
        dp.write_list_nrrd(tmp_path / f"{key}.nrrd", pts)
        args[key] = f"{key}.nrrd"
    proxies = {} if name == "life" else {f"{k}.nrrd": tmp_path / f"{k}.nrrd" for k in list(inp.get("images", {}))
                                         + list(inp.get("points", {}))}
    built = dp.build(name, "seq", proxies)
    got = dp.run_exe(built.exe, Path(tmp_path), dp.cli_args(args), "out.nrrd")
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) <= 1e-8 * np.max(np.abs(want))


OUTPUT = {"vimg": "rgb", "iso2d": "x", "life": "alive", "sphere": "pos", "mip": "m", "dvr": "rgba"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SMALL))
def test_tensorlang_runs_the_bench_programs_as_the_numpy_versions(name, tmp_path):
    # the suite's tensorlang contender on small inputs: C (where the executor takes the
    # program) against the numpy version, which the test above holds to the real executables
    import tensorlang as tl

    inp = SMALL[name]()
    want = dp.NUMPY[name](inp)
    args = dict(inp["args"])
    for key, img in inp.get("images", {}).items():
        dp.write_nrrd(tmp_path / f"{key}.nrrd", img)
        args[key] = str(tmp_path / f"{key}.nrrd")
    shutil.copy(dp.PROGRAMS / f"{name}.diderot", tmp_path)
    prog = tl.compile(str(tmp_path / f"{name}.diderot"))
    got = np.asarray(prog(**{k: np.asarray(v, dtype=float) if isinstance(v, list) else v for k, v in args.items()})[
        OUTPUT[name]], dtype=np.float64)
    assert prog.program.executor_note is None  # it ran in C
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) <= (1e-6 if name == "iso2d" else 1e-9) * max(1.0, np.max(np.abs(want)))
