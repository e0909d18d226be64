"""A fused batch loop asks for the next iteration's slab of each input it reads at
``[batch, ...]`` (loops/fusion.py ``_slabs_ahead``, codegen ``prefetch``): only inputs,
only slabs of at most PREFETCH_BYTES, never past the last iteration, and the results are
the same bits as without the hint."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import fusion

from corpus import helmholtz_source, interpolation_source


def _c(source, **options):
    try:
        return tl.compile(source, backend="c", threads=1, **options)
    except TensorLangError as exc:  # no C compiler here
        pytest.skip(str(exc))


def _fused_loops(k):
    return [node for nest in k.loop_program.nests if nest.fused for node in nest.body
            if hasattr(node, "prefetch") and node.var == "e"]


def test_the_fused_interpolation_prefetches_the_next_element_of_u_only(tmp_path, capsys):
    k = _c(interpolation_source(8, 64))
    (loop,) = _fused_loops(k)
    names = k.loop_program.names
    assert [names[s] for s in loop.prefetch] == ["u"]  # not A, B, C (no batch index), not v (written)
    c = k.target.source
    assert "__builtin_prefetch(" in c and "if (x_e + 1 < 64LL)" in c  # none past the last element
    from tensorlang.cli import main
    program = tmp_path / "interp.tl"
    program.write_text(interpolation_source(8, 64))
    assert main(["compile", str(program), "--emit", "loops"]) == 0
    assert "prefetch u[e+1]" in capsys.readouterr().out  # every stage printable


def test_helmholtz_prefetches_both_of_its_batched_inputs():
    k = _c(helmholtz_source(8, 64))
    (loop,) = _fused_loops(k)
    assert sorted(k.loop_program.names[s] for s in loop.prefetch) == ["D", "u"]


def test_slabs_past_the_budget_are_not_prefetched(monkeypatch):
    monkeypatch.setattr(fusion, "PREFETCH_BYTES", 8 * 8 ** 3 - 1)  # one element's u is 4 KiB
    k = _c(interpolation_source(8, 64) + "\n")  # another source text: not the cached kernel
    (loop,) = _fused_loops(k)
    assert loop.prefetch == ()
    assert "__builtin_prefetch(" not in k.target.source


@pytest.mark.parametrize("fma", [False, True])
def test_the_hint_changes_no_result(monkeypatch, fma):
    rng = np.random.default_rng(3)
    n, E = 6, 37
    args = {"A": rng.uniform(-1, 1, (n, n)), "B": rng.uniform(-1, 1, (n, n)), "C": rng.uniform(-1, 1, (n, n)),
            "u": rng.uniform(-1, 1, (E, n, n, n))}
    args["u"][3, 1, 2, 0] = np.nan
    args["u"][E - 1, 0, 0, 0] = np.inf
    with_hint = _c(interpolation_source(n, E), fma=fma)
    assert _fused_loops(with_hint)[0].prefetch
    monkeypatch.setattr(fusion, "PREFETCH_BYTES", 0)
    without = _c(interpolation_source(n, E) + "\n\n", fma=fma)
    assert _fused_loops(without)[0].prefetch == ()
    assert np.array_equal(with_hint(**args)["v"], without(**args)["v"], equal_nan=True)
