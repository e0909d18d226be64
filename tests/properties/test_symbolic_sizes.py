"""The symbolic type checker's guarantee, and the differential harness at two sizes.

From a random well-typed program of either statement form, a *symbolic* program is made
by writing every extent of its declarations as a name (the value 3 becomes ``s3``, so
equal extents get one symbol and different ones different symbols).  Then:

* if the symbolic program is rejected, it is for comparing a symbol with a number the
  program writes (a stack's length, eps's 2 or 3, ``sum(a:3)``): a shape rule, never
  anything else;
* if it is accepted, it never fails for a binding: at the original sizes it is the
  original program (the same EIN), and at a second, random binding every back end agrees
  with the reference interpreter's oracle, with NaN, ±inf and ±0 among the inputs; the
  only error allowed is error[input] for a binding that breaks a fixed position's range
  (``x[3]`` with n = 2), which the checker leaves to the binding by design.
"""

from __future__ import annotations

import os
import re

import numpy as np
from hypothesis import HealthCheck, event, given, note, settings, strategies as st

import pytest
import tensorlang as tl
from tensorlang.lang.tl.parser import parse_model

from properties.generators import oracle
from properties.harness import assert_close_to_oracle, cases, ein_oracle, Case

BACKENDS = [b for b in ("numpy", "c") if b in tl.available_backends()]
DECL = re.compile(r"^((?:in |out |inout )?var \w+ : )\[([0-9 ]*)\]", re.MULTILINE)
DECLARED = re.compile(r"^((?:in |out |inout )?var \w+ : )\[([\w ]*)\]", re.MULTILINE)
SHAPE_CODES = {"shape", "assign-shape", "index-extent"}


def symbolize(text: str) -> tuple[str, dict[str, int]]:
    """Every declared extent d as the symbol ``s{d}``; the binding that gives the program back."""
    found: dict[str, int] = {}

    def declaration(m: re.Match) -> str:
        names = []
        for d in m.group(2).split():
            found[f"s{d}"] = int(d)
            names.append(f"s{d}")
        return f"{m.group(1)}[{' '.join(names)}]"

    return DECL.sub(declaration, text), found


def _inputs(checked, seed: int) -> dict[str, np.ndarray]:
    """Inputs for the bound program, with NaN, ±inf and ±0 sprinkled in."""
    rng = np.random.default_rng(seed)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
    qualified = checked.context.qualified
    inputs = {}
    for name, shape in checked.context.shapes.items():
        if qualified and checked.context.quals[name] not in ("in", "inout"):
            continue
        value = rng.uniform(-1, 1, size=shape)
        mask = rng.random(size=shape) < 0.1
        value[mask] = rng.choice(specials, size=int(mask.sum()))
        inputs[name] = value
    return inputs


def _expected(form: str, text: str, inputs):
    tl.check(text)  # the program is well typed
    if form == "operator":
        return oracle(parse_model(text), inputs)
    kernel = tl.compile(text, backend="interp")
    return ein_oracle(kernel.ein, inputs)


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("TENSORLANG_SIZES_EXAMPLES", 100)), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(max_extent=4), values=st.lists(st.integers(1, 5), min_size=5, max_size=5),
       seed=st.integers(0, 2**32 - 1))
def test_a_program_accepted_with_symbols_runs_at_every_binding(case: Case, values, seed):
    text, original = symbolize(case.text)
    note(text)
    try:
        checked = tl.check(text)
    except tl.TensorLangError as exc:  # a symbol against a number the program writes
        assert exc.code in SHAPE_CODES, exc.render()
        event("rejected with symbols")
        return
    assert set(checked.symbols) == set(original)
    # at the original sizes, the program written with numbers
    concrete = tl.compile(case.text, backend="interp")
    kernel = tl.compile(text, backend="interp")
    if checked.symbols:
        assert kernel.specialize(**original).ein == concrete.ein
    # at a second binding, every back end against the oracle
    binding = {name: values[n % len(values)] for n, name in enumerate(sorted(original))}
    bound_text = DECLARED.sub(lambda m: f"{m.group(1)}[{' '.join(str(binding.get(d, d)) for d in m.group(2).split())}]",
                              text)
    try:
        bound = tl.check(bound_text)
    except tl.TensorLangError as exc:  # only a fixed position beyond a bound size
        assert exc.code == "dim-range" and "position" in exc.message, exc.render()
        with np.errstate(all="ignore"):
            try:
                kernel.specialize(**binding)
            except tl.TensorLangError as err:
                assert err.code == "input" and "do not fit" in err.message
            else:
                raise AssertionError("the binding broke a range condition but specialised") from None
        event("binding breaks a range condition")
        return
    inputs = _inputs(bound, seed)
    with np.errstate(all="ignore"):
        expected = _expected(case.form, bound_text, inputs)
    results = tuple(name for name in case.results)
    bound_case = Case(case.form, bound_text, inputs, expected, results)
    # sizes no input has (only results) come from params=
    given = {str(d) for name in checked.accepted_inputs for d in checked.context[name]}
    params = {name: value for name, value in binding.items() if name not in given}
    infinite = any(np.isinf(v).any() for v in inputs.values())
    kronecker = "delta[" in text or "eps[" in text
    for backend in BACKENDS:
        got = tl.compile(text, backend=backend, params=params)(**inputs)
        # docs/optimizer.md: where a δ/ε zero meets ⊥ the optimized program may be defined;
        # with infinite inputs, reassociation may turn a ⊥ into ±inf, and so a function of
        # it into a number (Σ_i v2·v3[i,i] with v2 = -inf and diagonal [-0.14, 0.85, 0.92]
        # is inf - inf = ⊥, v2·Σ_i v3[i,i] is -inf, and tanh of it -1: tests/fuzz/oracle.py
        # allows the same), and a product of sums computed as one sum of products may turn
        # ±inf into ⊥ ((0.66 - 0.09)·-inf is -inf, 0.66·-inf + -0.09·-inf is ⊥)
        for name, value in got.items():
            want = expected[name][0]
            undefined = np.isnan(want)
            loose = undefined if kronecker or infinite else None
            if loose is not None:
                value = np.where(loose, np.nan, value)
            if infinite:
                value = np.where(np.isinf(want) & np.isnan(value), want, value)
            got[name] = value
        assert_close_to_oracle(bound_case, got, "float64", f"{backend} at {binding}")
    event(f"compared at a second binding ({case.form} form)")
