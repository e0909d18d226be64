"""The einsum front end lowers a Spec to EIN directly (lang/einsum/lower.py); node for
node, that EIN is what the model language makes of the index-form program the front end
once printed and parsed (the oracle below writes that text, the model language parses,
checks and lowers it), over generated Specs, the table of test_einsum.py and
opt_einsum's corpus."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tensorlang import einsum_api
from tensorlang.lang import einsum as front, tl as model
from tensorlang.lang.einsum.lower import lower
from tensorlang.lang.tl.parser import parse_model

from test_einsum import TABLE, einsum_calls


def _shape(shape) -> str:
    return "[" + " ".join(str(n) for n in shape) + "]"


def _name(label: str) -> str:
    return f"z{label[2:]}" if label.startswith("..") else label


def model_text(spec) -> str:
    """The index-form program of ``spec`` as the front end wrote it before it lowered
    directly (the oracle)."""
    lines = [f"in var T{k} : {_shape(shape)}" for k, shape in enumerate(spec.shapes)]
    lines.append(f"out var Res : {_shape(spec.result_shape)}")
    factors = []
    for k, term in enumerate(spec.terms):
        indices = ["1" if spec.broadcast(k, d) else _name(label) for d, label in enumerate(term)]
        factors.append(f"T{k}[{','.join(indices)}]" if term else f"T{k}")
    right = " * ".join(factors)
    if spec.summed:
        right = f"sum({', '.join(_name(label) for label in spec.summed)}) {right}"
    lines.append(f"Res[{','.join(_name(label) for label in spec.output)}] = {right}")
    return "\n".join(lines) + "\n"


def _text_route(spec):
    checked = model.LANGUAGE.check(parse_model(model_text(spec)))
    return checked, model.LANGUAGE.lower(checked)


def _agree(subscripts: str, shapes) -> None:
    spec = front.parse(subscripts, tuple(tuple(s) for s in shapes))
    checked, ein = _text_route(spec)
    assert lower(spec) == ein
    ours = front.check(spec)
    assert ours.program == ein
    assert dict(ours.interface.roles) == dict(checked.interface.roles)
    assert dict(ours.context.shapes) == dict(checked.context.shapes)
    assert ours.inputs == checked.inputs and ours.results == checked.results


@pytest.mark.parametrize("subscripts, shapes", TABLE, ids=[s for s, _ in TABLE])
def test_the_table_lowers_as_the_text_did(subscripts, shapes):
    _agree(subscripts, shapes)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(einsum_calls())
def test_generated_specs_lower_as_the_text_did(call):
    text, shapes = call
    try:
        front.parse(text, tuple(tuple(s) for s in shapes))
    except front.EinsumError:
        return  # numpy's business (tests/lang/einsum/test_einsum.py checks the errors)
    _agree(text, shapes)


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])


@settings(max_examples=120, deadline=None)
@given(einsum_calls(), st.integers(0, 2**31))
def test_the_reference_is_the_model_languages_to_the_bit(call, seed):
    """The einsum front end's reference is EIN's evaluator now (it was the model
    language's interpreter on the text): on inputs with NaN, ±inf and ±0 the two give the
    same bits, NaN where NaN, the sign of every zero."""
    text, shapes = call
    try:
        spec = front.parse(text, tuple(tuple(s) for s in shapes))
    except front.EinsumError:
        return
    rng = np.random.default_rng(seed)
    supplied = {}
    for k, shape in enumerate(spec.shapes):
        x = rng.uniform(-1, 1, shape)
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=max(1, flat.size // 3), replace=False) if flat.size else []
        flat[picks] = rng.choice(SPECIAL, size=len(picks))
        supplied[f"T{k}"] = x
    dtype = np.dtype(np.float64)
    ours = np.asarray(front.LANGUAGE.interpret(front.check(spec), supplied, dtype)["Res"])
    theirs = np.asarray(model.LANGUAGE.interpret(_text_route(spec)[0], supplied, dtype)["Res"])
    np.testing.assert_array_equal(ours, theirs)
    assert np.array_equal(np.signbit(ours), np.signbit(theirs))


def test_opt_einsums_corpus_lowers_as_the_text_did():
    contract_tests = pytest.importorskip("opt_einsum.tests.test_contract")
    testing = pytest.importorskip("opt_einsum.testing")
    for expression in contract_tests.tests:
        views = testing.build_views(expression)
        _agree(expression, [np.shape(v) for v in views])


def test_compile_spec_writes_no_text(monkeypatch):
    """tl.einsum's kernels start from the EIN program: nothing is parsed."""
    from tensorlang.lang import lark_support

    monkeypatch.setattr(lark_support, "parse", lambda *args: pytest.fail("parsed program text"))
    spec = front.parse("ij,jk->ik", ((2, 3), (3, 4)))
    kernel = einsum_api.compile_spec(spec, np.dtype(np.float64), "numpy")
    assert kernel.ein == lower(spec)
    assert "Res[i,k] = sum(j) T0[i,j] * T1[j,k]" in kernel.ir("ast")
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(kernel(T0=a, T1=b)["Res"], a @ b)
