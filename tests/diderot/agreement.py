"""The check most Diderot tests make: the C executor, on one thread and on two, gives the
strand interpreter's result (docs/diderot-compiled.md).  One helper for every test file of
this folder (the folder is on the path, not a package: ``from agreement import agree``)."""

from __future__ import annotations

import functools
import re

import numpy as np

_NUM = re.compile(r"-?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?)")


def printed_close(a: str, b: str, rtol: float = 1e-9) -> None:
    """The same text, with numbers equal within ``rtol`` (a sum's order may differ) and zeros printed with the
    same sign (``-0`` is not ``0``); equal text when ``rtol`` is 0."""
    if rtol == 0:
        assert a == b
        return
    assert _NUM.split(a) == _NUM.split(b)
    ta, tb = _NUM.findall(a), _NUM.findall(b)
    x, y = np.array([float(t) for t in ta]), np.array([float(t) for t in tb])
    assert np.allclose(x, y, rtol=rtol, atol=rtol / 10, equal_nan=True)
    signs = [(s.startswith("-"), t.startswith("-"), s, t) for s, t, u, v in zip(ta, tb, x, y) if u == 0 and v == 0]
    assert all(p == q for p, q, _, _ in signs), f"a printed zero's sign differs: {[(s, t) for p, q, s, t in signs if p != q]}"


def same_bits(a, b) -> bool:
    """Equal arrays bit for bit (signed zeros included), NaN where NaN of either sign."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    keep = ~np.isnan(a)
    return a[keep].tobytes() == b[keep].tobytes()


def same_run(a, b) -> None:
    """Two C runs of one program (built two ways) agree bit for bit: counts, steps and every
    output (:func:`same_bits`)."""
    assert (a.steps, a.active, a.stable) == (b.steps, b.active, b.stable)
    for name in a.outputs:
        assert same_bits(a.outputs[name], b.outputs[name]), name


def same(a, b, rtol: float = 1e-9) -> None:
    """Two RunResults agree: counts, steps, grid, output names, shapes and dtypes; ints and
    bools exactly, reals within ``rtol`` (bit for bit when 0), ⊥ at the same places."""
    assert (a.steps, a.active, a.stable, a.grid_shape) == (b.steps, b.active, b.stable, b.grid_shape)
    assert a.outputs.keys() == b.outputs.keys()
    for name in a.outputs:
        x, y = np.asarray(a.outputs[name]), np.asarray(b.outputs[name])
        assert x.shape == y.shape and x.dtype == y.dtype, name
        if x.dtype == object:  # sequences of any length: each strand's alike
            for u, v in zip(x.reshape(-1), y.reshape(-1)):
                same_items(u, v, rtol, name)
            continue
        if x.dtype.kind != "f":
            assert np.array_equal(x, y), name
        elif rtol == 0:
            assert np.array_equal(x, y, equal_nan=True), name
        else:
            assert np.array_equal(np.isnan(x), np.isnan(y)), name
            assert np.allclose(x, y, rtol=rtol, atol=rtol / 10, equal_nan=True), (name, np.nanmax(abs(x - y)))


def same_items(x, y, rtol: float, name: str) -> None:
    """One output's values agree (:func:`same`'s rule): shape, dtype, ints exactly, reals within ``rtol``."""
    assert x.shape == y.shape and x.dtype == y.dtype, name
    if x.dtype.kind != "f":
        assert np.array_equal(x, y), name
    else:
        assert np.allclose(x, y, rtol=rtol, atol=rtol / 10, equal_nan=True) and np.array_equal(np.isnan(x), np.isnan(y)), name


def agree(p, values=None, *, rtol: float = 1e-9, threads: bool = True, **run):
    """Run ``p`` (a StrandProgram) with ``values`` on the interpreter and on the C executor
    (and on two threads unless ``threads`` is False); assert that the C executor ran (no
    fallback) and that every result, the printed text included, agrees.  The interpreter's
    result and the C executor's one-thread result."""
    values = values or {}
    a = p.run(values, backend="interp", **run)
    b = p.run(values, backend="c", **run)
    assert p.executor_note is None, p.executor_note
    same(a, b, rtol)
    printed_close(a.printed, b.printed, rtol)
    if threads:
        two = p.run(values, backend="c", threads=2, **run)
        same(b, two, rtol)
        printed_close(b.printed, two.printed, rtol)
    return a, b


def run_variant(text: str, values: dict, monkeypatch, switches: dict, threads: int = 1, limit=None):
    """Run the Diderot program ``text`` on the C executor built afresh with the module switches
    ``switches`` set (``{(module, "NAME"): value}``): the program, its result and the C source."""
    from tensorlang.lang.diderot import parse_program, strands
    from tensorlang.lang.diderot import typecheck as check
    from tensorlang.targets.c import strands as CS

    for (module, name), value in switches.items():
        monkeypatch.setattr(module, name, value)
    monkeypatch.setattr(CS, "_RUNNERS", {})  # build this variant afresh
    p = strands(check(parse_program(text)))
    res = p.run(values, backend="c", threads=threads, **({} if limit is None else {"limit": limit}))
    assert p.executor_note is None
    return p, res, next(iter(CS._RUNNERS.values())).source


def off_and_on(text: str, values: dict, monkeypatch, flip, threads: int = 1, limit=None, fixed=None):
    """:func:`run_variant` with the module switches ``flip`` (``((module, "NAME"), ...)``) all
    off, then all on (``fixed`` as given in both): the two runs agree bit for bit
    (:func:`same_run`).  The program, the two results and the two C sources."""
    runs = [run_variant(text, values, monkeypatch, {**(fixed or {}), **dict.fromkeys(flip, on)}, threads, limit)
            for on in (False, True)]
    (p, off, src0), (_, on, src1) = runs
    same_run(off, on)
    return p, off, on, src0, src1


def same_files(want: dict[str, dict], got: dict[str, dict]) -> None:
    """The files a run wrote (``unseen_inputs.outputs``) are those diderotc's executable wrote: the same
    names, texts (numbers within 1e-9), headers and values (within 1e-9 of the file's largest, NaN where
    NaN, the sign of every zero)."""
    assert sorted(got) == sorted(want)
    for fname, w in want.items():
        g = got[fname]
        printed_close(w.get("text", ""), g.get("text", ""), 1e-9)
        assert g["header"] == w["header"], fname
        x, y = np.array(w["values"], dtype=np.float64), np.array(g["values"], dtype=np.float64)
        assert x.shape == y.shape, fname
        assert np.array_equal(np.isnan(x), np.isnan(y)), fname
        scale = np.max(np.abs(x[np.isfinite(x)]), initial=0.0)
        assert np.allclose(x, y, rtol=1e-9, atol=1e-9 * scale, equal_nan=True), (fname, np.nanmax(abs(x - y)))
        zeros = (x == 0) & (y == 0)
        assert np.array_equal(np.signbit(x[zeros]), np.signbit(y[zeros])), fname


def written(folder, make) -> dict[str, dict]:
    """What a run wrote into ``folder`` (``unseen_inputs.outputs``), less the input files ``make`` writes there."""
    import tempfile
    from pathlib import Path

    from unseen_inputs import outputs

    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as out:
        make(Path(tmp))
        inputs = {p.name for p in Path(tmp).iterdir()}
        for p in Path(folder).iterdir():
            if p.name not in inputs and p.is_file():
                (Path(out) / p.name).symlink_to(p.resolve())
        return outputs(Path(out))


def input_files(build):
    """A round's ``make(folder)`` and ``written(folder)`` (the functions :func:`run_stored` and :func:`remake` take)
    from ``build(folder)``, which writes every input file of the round's runs: the files are built once (kept as
    bytes) and copied into each folder asked for; ``written`` is what a run wrote there, less those files."""
    import tempfile
    from pathlib import Path

    @functools.cache
    def files() -> dict[str, bytes]:
        with tempfile.TemporaryDirectory() as tmp:
            build(Path(tmp))
            return {p.name: p.read_bytes() for p in Path(tmp).iterdir()}

    def make(folder) -> None:
        for name, data in files().items():
            (Path(folder) / name).write_bytes(data)

    def written_there(folder) -> dict[str, dict]:
        return written(folder, make)

    return make, written_there


@functools.cache
def compiled(path: str, backend: str):
    """The program at ``path`` compiled for ``backend`` (once a session)."""
    import tensorlang as tl

    return tl.compile(path, backend=backend)


def run_stored(path: str, argv: list[str], want: dict, make, backend: str, folder, monkeypatch,
               refused: tuple[str, ...] = ("input",)) -> None:
    """Run the program at ``path`` with the command line ``argv`` in ``folder`` (where ``make`` writes the input
    files) on ``backend``, as a stored run of diderotc's executable ``want`` ({rc, stdout, files}) ran: the same
    exit status (1 where that crashed: refused here, error[CODE] with a code of ``refused``), the same text
    (numbers within 1e-9), the same files (:func:`same_files`)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from tensorlang.errors import TensorLangError

    make(folder)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("TENSORLANG_STRAND_BACKEND", backend)
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        try:
            rc = compiled(path, backend).main(list(argv))
        except TensorLangError as exc:  # (refused for their input, never error[internal])
            assert exc.code in refused, exc
            rc = 1
    assert rc == (1 if want["rc"] < 0 else want["rc"])
    printed_close(want["stdout"], out.getvalue(), 1e-9)
    same_files(want["files"], written(folder, make))  # (every zero's sign too)


def remake(inputs, names: list[str], built: dict[tuple, object] | None = None, timeout: float = 60) -> None:
    """Run the stored runs ``names`` of a round of unseen programs (the module ``inputs``: its ``PROGRAMS``,
    ``STORED``, ``RUNS``, ``make``, ``written`` and ``diderotc_flags(argv)``, the build options a run needs, and those of a program in
    ``PROGRAM_FLAGS`` where it has them) with
    diderotc's executables, and store what each printed and wrote. Each program is built with ``diderotc --double
    --exec`` and those options in a folder holding the inputs (a file a program names fixes its image's sample
    type), once for each set of options (``built``: executables already built, (program, *options) -> path); a
    run past ``timeout`` seconds is stored as one that hangs (diderotc's parallel runtime can: docs/diderot.md)."""
    import json
    import subprocess
    import tempfile
    from pathlib import Path

    stored = json.loads(inputs.STORED.read_text()) if inputs.STORED.exists() else {}
    built = dict(built or {})
    with tempfile.TemporaryDirectory() as tmp:
        for name, prog, argv in inputs.RUNS:
            if name not in names:
                continue
            key = (prog, *inputs.diderotc_flags(argv), *getattr(inputs, "PROGRAM_FLAGS", {}).get(prog, ()))
            if key not in built:
                where = Path(tmp) / str(len(built))
                where.mkdir()
                inputs.make(where)
                (where / f"{prog}.diderot").write_bytes((inputs.PROGRAMS / f"{prog}.diderot").read_bytes())
                subprocess.run(["diderotc", "--double", "--exec", *key[1:], f"{prog}.diderot"], cwd=where, check=True,
                               capture_output=True)
                built[key] = where / prog
            with tempfile.TemporaryDirectory() as run_dir:
                inputs.make(Path(run_dir))
                try:
                    run = subprocess.run([str(built[key]), *argv], cwd=run_dir, capture_output=True, text=True,
                                         timeout=timeout)
                    stored[name] = {"rc": run.returncode, "stdout": run.stdout, "files": inputs.written(Path(run_dir))}
                except subprocess.TimeoutExpired:
                    stored[name] = {"rc": "hangs", "stdout": "", "files": {}}
            print(name, stored[name]["rc"], len(stored[name]["files"]), flush=True)
    inputs.STORED.write_text(json.dumps(dict(sorted(stored.items())), separators=(",", ":")) + "\n")


def remake_main(inputs, argv: list[str], **options) -> None:
    """``python tests/diderot/unseenN_inputs.py [RUN ...]``: :func:`remake` of the runs named (all by default)."""
    import json
    import shutil
    import sys

    if shutil.which("diderotc") is None:
        sys.exit("diderotc is not on PATH (/work/shared/tools/diderot/README.md)")
    remake(inputs, argv or [r[0] for r in inputs.RUNS], **options)
    print(len(json.loads(inputs.STORED.read_text())), "runs stored")


def round_tests(inputs, different: dict[str, str], refused: tuple[str, ...] = ("input",)):
    """The tests every round of unseen programs makes (the module ``inputs``: ``PROGRAMS``, ``STORED``, ``RUNS``,
    ``make``): its stored runs cover its programs, and each run not in ``different`` (run -> why tensorlang
    differs from diderotc's executable on purpose, docs/diderot.md) prints and writes what that executable did, on
    the interpreter and (slow: a C build per program) on the C executor. Returns ``run_one(run, backend, folder,
    monkeypatch)`` (one stored run) and the three tests, for the test module to bind under their names."""
    import json
    from pathlib import Path

    import pytest

    from tensorlang.targets.c import build as c_build

    expected = json.loads(inputs.STORED.read_text())
    kept = [r for r in inputs.RUNS if r[0] not in different]

    def run_one(r: tuple[str, str, list[str]], backend: str, folder: Path, monkeypatch) -> None:
        name, prog, argv = r
        run_stored(str(inputs.PROGRAMS / f"{prog}.diderot"), argv, expected[name], inputs.make, backend, folder,
                   monkeypatch, refused)

    def test_every_run_has_its_stored_outputs():
        assert sorted(r[0] for r in inputs.RUNS) == sorted(expected)
        assert {r[1] for r in inputs.RUNS} == {p.stem for p in inputs.PROGRAMS.glob("*.diderot")}
        assert set(different) <= set(expected)

    @pytest.mark.parametrize("run", kept, ids=[r[0] for r in kept])
    def test_the_interpreter_prints_and_writes_what_diderotc_does(run, tmp_path, monkeypatch):
        run_one(run, "interp", tmp_path, monkeypatch)

    @pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
    @pytest.mark.slow  # a C build per program: the interpreter's runs above are the quick tier
    @pytest.mark.parametrize("run", kept, ids=[r[0] for r in kept])
    def test_the_c_executor_prints_and_writes_what_diderotc_does(run, tmp_path, monkeypatch):
        run_one(run, "c", tmp_path, monkeypatch)

    return (run_one, test_every_run_has_its_stored_outputs, test_the_interpreter_prints_and_writes_what_diderotc_does,
            test_the_c_executor_prints_and_writes_what_diderotc_does)
