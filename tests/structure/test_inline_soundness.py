"""Rule inlining (003 §5.2) reads a tensor through its definition only while the
definition still says what the tensor holds: not through a statement that reads the
value it replaces (``w0[i,j] = w0[1,i]``: its ``w0`` is the old one), and not once a
tensor the definition reads has been assigned again (analysis.structure.record).

Found by the C sanitizer property test: inlining ``w0[i,1]`` through its own definition
again and again made ``w3[i,j] = w0[i,1]`` look constant, so "symmetric", and the C
target computed half of it and mirrored the rest."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.analysis.structure import infer, record
from tensorlang.errors import TensorLangError

SELF = "inout var w0 : [3 3]\nout var w3 : [3 3]\nw0[i,j] = w0[1,i]\nw3[i,j] = w0[i,1]\n"
STALE = ("inout var f : [3]\nvar G : [3 3]\nout var D : [3 3]\nG[i,j] = f[i] * f[j]\nf[i] = f[i] + 1\n"
         "D[i,j] = G[i,1] * f[j]\n")


@pytest.mark.parametrize("text", [SELF, STALE], ids=["reads itself", "reads a tensor assigned again"])
@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_no_false_symmetry_and_the_reference_result(text, backend):
    try:
        k = tl.compile(text, backend=backend)
    except TensorLangError as exc:  # no C compiler here
        pytest.skip(str(exc))
    found = infer(k.ein)
    last = k.ein.statements[-1].target
    assert found[last].groups == ()  # neither w3 nor D is symmetric
    rng = np.random.default_rng(4)
    inputs = {n: rng.uniform(-2, 2, k.shapes[n]) for n in k.inputs}
    inputs[k.inputs[0]].reshape(-1)[0] = np.nan
    want = tl.compile(text, backend="interp")(**{n: v.copy() for n, v in inputs.items()})
    got = k(**{n: v.copy() for n, v in inputs.items()})
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-13, atol=1e-13, err_msg=name)


def test_a_definition_that_reads_its_own_target_is_not_inlined():
    k = tl.compile(SELF, backend="interp")
    assert infer(k.ein)["w0"].definition is None


def test_assigning_a_tensor_drops_the_definitions_that_read_it():
    k = tl.compile("in var f : [3]\nin var g : [3]\nvar G : [3 3]\nvar H : [3 3]\nout var C : [3 3]\n"
                   "G[i,j] = f[i] * f[j]\nH[i,j] = g[i] * g[j]\nC[i,j] = G[i,j] + H[i,j]\n", backend="interp")
    tensors = infer(k.ein)
    assert tensors["G"].definition is not None and tensors["H"].definition is not None
    record(tensors, tensors["f"])  # f assigned again
    assert tensors["G"].definition is None  # it read f
    assert tensors["H"].definition is not None  # it did not
