"""The fuzzers' shared oracle (issue 16): what any input may do, and how every target
must agree with the reference interpreter.

* Anything a user gives tensorlang (program text, arguments, argv) either works or raises
  :class:`tensorlang.TensorLangError` with a code other than ``internal``; any other
  exception, and any ``internal`` error, is a bug.  Nothing hangs: every example runs
  under :func:`no_hang` (:data:`HANG_SECONDS`, a guard against an endless stage, not a
  speed test).
* A program that checks runs on every available target, optimized and not, and agrees
  with the front end's own interpreter on inputs with ⊥ (NaN), ±inf and ±0 among them
  (:func:`assert_targets_agree`, with the relaxations docs/optimizer.md documents).

Bounded for CI: :func:`fuzz_settings` takes the number of examples a CI run affords;
``TENSORLANG_FUZZ_EXAMPLES=N`` runs N examples per fuzzer instead (long local runs).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

import numpy as np
from hypothesis import HealthCheck, settings

import tensorlang as tl

#: An example that runs longer than this is reported as a hang.
HANG_SECONDS = int(os.environ.get("TENSORLANG_FUZZ_HANG", "120"))
#: Inputs with more elements than this are not drawn (an edit can make an extent huge).
MAX_ELEMENTS = 20_000


def fuzz_settings(ci_examples: int) -> settings:
    """``ci_examples`` per CI run, or ``$TENSORLANG_FUZZ_EXAMPLES`` when set."""
    examples = int(os.environ.get("TENSORLANG_FUZZ_EXAMPLES", "0") or 0) or ci_examples
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck),
                    print_blob=True)


@contextlib.contextmanager
def no_hang(what: str = "example"):
    """Fail (not wait forever) when the body runs past :data:`HANG_SECONDS`."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum, frame):
        raise AssertionError(f"hang: the {what} ran for more than {HANG_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def assert_clean(exc: tl.TensorLangError) -> None:
    """A rejection is fine when it is a TensorLangError with a real code and a sane place."""
    assert exc.code != "internal", exc.render()
    assert exc.line is None or exc.line >= 1, exc.render()
    text = exc.render()
    assert "Traceback" not in text, text


# ---------------------------------------------------------------- inputs with edges
EDGE_VALUES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5])


def draw_inputs(kernel, seed: int, mode: str) -> dict[str, np.ndarray]:
    """Inputs for every input variable of ``kernel``.

    ``finite``: uniform values with exact ±0 and ±1 among them; ``cancel``: values that
    cancel in sums (x and -x, large and small); ``edges``: ±0, ±inf, NaN mixed in."""
    rng = np.random.default_rng(seed)
    names = list(kernel.inputs) or list(kernel.optional_inputs)
    out = {}
    for name in names:
        shape = kernel.shapes[name]
        n = int(np.prod(shape, dtype=np.int64))
        values = rng.uniform(-2, 2, size=n)
        if mode == "cancel":
            values = np.where(rng.random(n) < 0.5, values * 1e4, values)
            half = n // 2
            values[half:2 * half] = -values[:half] + rng.uniform(-1e-3, 1e-3, size=half)
        special = rng.random(n) < (0.3 if mode == "edges" else 0.15)
        pool = EDGE_VALUES if mode == "edges" else EDGE_VALUES[[0, 1, 5, 6, 7]]
        values = np.where(special, rng.choice(pool, size=n), values)
        out[name] = values.reshape(shape)
    return out


def _finite_inputs(inputs) -> bool:
    return all(np.isfinite(v).all() for v in inputs.values())


def rounding_bounds(reference, inputs, dtype: str = "float64") -> dict[str, np.ndarray]:
    """Per result, the absolute rounding-error bound of the program as written (the
    harness's first-order bound on the lowered EIN program, times its slack): where the
    interpreter's own sum cancels, a reassociated target may differ by that much."""
    from properties.harness import EPS, SLACK, ein_oracle

    try:
        with np.errstate(all="ignore"):
            evaluated = ein_oracle(reference.ein, {n: v.astype(np.float64) for n, v in inputs.items()})
    except Exception:  # noqa: BLE001 - no bound: the plain tolerance alone
        return {}
    bounds = {}
    for name in reference.outputs:
        if name in evaluated:
            value, bound = (np.asarray(x, dtype=np.float64) for x in evaluated[name])
            bound = (bound + (np.abs(value) if dtype == "float32" else 0.0)) * SLACK * EPS[dtype]
            bounds[name] = np.where(np.isfinite(bound), bound, 0.0)
    return bounds


def assert_agree(name: str, got, ref, who: str, strict_nan: bool, bound=None, rtol: float = 1e-9,
                 optimizer_bottom=None) -> None:
    """``got`` (a target's result) against ``ref`` (the interpreter's).

    Where the interpreter is defined, the target computes the same value: the same
    infinity, or a finite number within a rounding tolerance (relative 1e-9 of the
    output's magnitude: loose enough for any summation order, tight enough for any real
    miscompilation), or within ``bound`` (the program's own rounding bound, for sums
    that cancel).  Where the interpreter gives ⊥ the target must too when
    ``strict_nan`` (finite inputs, no δ/ε); docs/optimizer.md lets reassociation and δ/ε
    selection turn ⊥ into a value otherwise, and with infinite inputs an infinity into ⊥
    (a factor moved into a sum: inf·(2 + -0) = inf, inf·2 + inf·-0 = ⊥), only where
    ``optimizer_bottom`` (the program the target ran, read by the reference interpreter:
    :func:`optimizer_bottoms`) is ⊥ too, when it is given.  The sign of a zero is not compared
    here (test_robustness_numbers.py does that on chosen programs)."""
    got = np.asarray(got)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, f"{who} {name}: shape {got.shape} != {ref.shape}"
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    nan = np.isnan(ref)
    if strict_nan:
        assert np.array_equal(np.isnan(got), nan), f"{who} {name}: ⊥ differs\n got {got}\n ref {ref}"
    inf = np.isinf(ref)
    if not strict_nan:  # the optimizer's order: (Σ_a x_a z_a)·y computed as Σ_a x_a z_a y meets y = inf term by term
        inf &= ~(np.isnan(got) & (True if optimizer_bottom is None else np.isnan(optimizer_bottom)))
    assert np.array_equal(got[inf], ref[inf]), f"{who} {name}: infinities differ\n got {got}\n ref {ref}"
    fin = np.isfinite(ref)
    if fin.any():
        scale = 1.0 + float(np.abs(ref[fin]).max())
        err = np.abs(got[fin] - ref[fin])
        allowed = rtol * scale + (np.broadcast_to(bound, ref.shape)[fin] if bound is not None else 0.0)
        assert np.all(np.isfinite(got[fin])) and np.all(err <= allowed), (
            f"{who} {name}: off by {err.max()} (scale {scale})\n got {got}\n ref {ref}")


def show_every_stage(kernel) -> None:
    """Every printable stage (``--emit``), the generated code and the report print, or
    refuse with a TensorLangError that is not internal."""
    from tensorlang import stages

    for show in ([lambda s=s: kernel.ir(s) for s in stages.IR_STAGES]
                 + [lambda t=t: kernel.code(t) for t in stages.CODE_STAGES] + [kernel.report]):
        try:
            assert isinstance(show(), str)
        except tl.TensorLangError as exc:
            assert_clean(exc)


def assert_targets_agree(text: str, lang: str, seed: int, mode: str, params=None,
                         max_elements: int = MAX_ELEMENTS, dtype: str = "float64") -> None:
    """Check ``text``; if it checks, print every stage, run it on every target (optimized
    and not) on inputs of ``mode`` and compare with the interpreter.  Any non-TensorLangError is a bug."""
    try:  # every symbolic size the program has gets a value: the given one, else 3
        params = {name: (params or {}).get(name, 3) for name in tl.check(text, lang=lang).symbols}
        reference = tl.compile(text, lang=lang, params=params, backend="interp", dtype=dtype)
    except tl.TensorLangError as exc:
        assert_clean(exc)
        return
    show_every_stage(reference)
    if sum(int(np.prod(reference.shapes[n], dtype=object)) for n in reference.inputs) > max_elements:
        return  # too big to draw and compare quickly
    inputs = {n: v.astype(dtype) for n, v in draw_inputs(reference, seed, mode).items()}
    try:
        expected = reference(**inputs)
    except tl.TensorLangError as exc:
        assert_clean(exc)
        assert exc.code == "too-large", exc.render()
        return
    bounds = rounding_bounds(reference, inputs, dtype)
    strict_nan = _finite_inputs(inputs) and not any(w in text for w in ("delta", "eps", "diag", "expa", "proj"))
    # the C target also with fma=True: ⊥ and infinities move only where a product of
    # finite numbers overflows (docs/optimizer.md, "Fused multiply-add"), which these
    # inputs (|x| <= 2, or 2e4 when cancelling) do not reach, so the same checks hold
    runs = [(backend, opt, False) for backend in tl.available_backends() for opt in (True, False)
            if backend != "interp" or opt]
    runs += [("c", True, True)] if "c" in tl.available_backends() else []
    for backend, opt, fma in runs:
        who = f"{backend}{'' if opt else ' (no opt)'}{' (fma)' if fma else ''}"
        try:
            kernel = tl.compile(text, lang=lang, params=params, backend=backend, opt=opt, dtype=dtype, fma=fma)
            got = kernel(**inputs)
        except tl.TensorLangError as exc:
            assert_clean(exc)
            assert exc.code == "too-large", f"{who}: {exc.render()}"
            continue
        assert set(got) == set(expected), (who, sorted(got), sorted(expected))
        bottoms = {} if strict_nan else optimizer_bottoms(kernel, inputs)
        for name in expected:
            assert np.asarray(got[name]).dtype == np.dtype(dtype), (who, name, got[name].dtype)
            assert_agree(name, got[name], expected[name], who, strict_nan, bounds.get(name),
                         1e-9 if dtype == "float64" else 1e-4, bottoms.get(name))


def optimizer_bottoms(kernel, inputs) -> dict[str, np.ndarray]:
    """Each result of the EIN program ``kernel`` runs (the optimized one unless ``opt=False``)
    under the reference interpreter: where it is ⊥ and the source's reference is not, the
    optimizer's order met an infinity term by term (docs/optimizer.md, "Reassociation"), which
    a target may share; nowhere else.  Empty where that program does not evaluate."""
    from tensorlang.ein import interp

    try:
        with np.errstate(all="ignore"):
            store = interp.run(kernel.executed, {n: np.asarray(v, dtype=np.float64) for n, v in inputs.items()})
        return {name: np.asarray(store[name], dtype=np.float64) for name in kernel.outputs}
    except Exception:  # noqa: BLE001 - no second reading: the plain relaxation
        return {}
