"""kernel.py's one call path, ``Runner.call``: every way of calling a compiled kernel goes
through it (the C caller first, then the general path), and its two branches agree."""

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.kernel import Kernel, Runner

MATMUL = "in var A : [2 3]\nin var B : [3 2]\nout var C : [2 2]\nC = A # B . [2 3]\n"
PROGRAMS = {
    "matmul": (MATMUL, {"A": (2, 3), "B": (3, 2)}),
    "scalar": ("in var s : []\nin var x : [3]\nout var y : [3]\ny = s * x\n", {"s": (), "x": (3,)}),
    "inout": ("in var y : [4]\ninout var x : [4]\nx = x + y * x\n", {"y": (4,), "x": (4,)}),
}


class Spy:
    """A C caller's stand-in: counts the calls offered to it and hands them to ``caller``
    (the kernel's real one), or declines every one (None: the general path's branch)."""

    def __init__(self, caller):
        self.caller, self.calls = caller, 0

    def __call__(self, arrays, out):
        self.calls += 1
        return None if self.caller is None else self.caller(arrays, out)


def _spied(k: Kernel, arrays: dict, decline: bool = False) -> Spy:
    k(**arrays)  # the first call checks the store's size and arms the runner
    assert k._c_call is k.runner.c_call  # the C entry's view is the runner's caller
    spy = Spy(None if decline else k.runner.c_call)
    k.runner.c_call = k._c_call = spy  # not a C Caller: the C entry hands every call to Runner.call
    return spy


def _inputs(shapes: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {n: rng.uniform(-2, 2, s) for n, s in shapes.items()}


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_every_call_of_a_kernel_goes_through_its_runner(backend):
    k = tl.compile(MATMUL, backend=backend)
    assert isinstance(k.runner, Runner) and k.runner.kernel is k
    arrays = _inputs(PROGRAMS["matmul"][1], 0)
    spy = _spied(k, arrays)
    k(**arrays)
    k(**arrays, out={"C": np.empty((2, 2))})
    k.run(arrays)
    k.run(arrays, out={"C": np.empty((2, 2))}, compressed=True)
    k(A=np.asfortranarray(arrays["A"]), B=arrays["B"])  # unusual: offered, then the general path
    assert spy.calls == 5


def test_a_symbolic_kernels_specialisations_go_through_their_runners():
    k = tl.compile("in var A : [n n]\nin var B : [n n]\nout var C : [n n]\nC = A # B . [2 3]\n", backend="c")
    arrays = _inputs({"A": (3, 3), "B": (3, 3)}, 1)
    special = k.for_inputs(arrays)
    spy = _spied(special, arrays)
    k(**arrays)  # found by the inputs' shapes
    k(A=arrays["A"].tolist(), B=arrays["B"])  # not plain: found by binding the sizes
    k.run(arrays)
    assert spy.calls == 3


def test_a_declined_call_reaches_the_general_path(monkeypatch):
    k = tl.compile(MATMUL, backend="c")
    arrays = _inputs(PROGRAMS["matmul"][1], 2)
    spy = _spied(k, arrays, decline=True)
    general = []
    real = Kernel._general
    monkeypatch.setattr(Kernel, "_general", lambda self, a, o: general.append(1) or real(self, a, o))
    np.testing.assert_allclose(k(**arrays)["C"], arrays["A"] @ arrays["B"], rtol=1e-14)
    with pytest.raises(tl.TensorLangError) as info:
        k(A=arrays["A"])  # the general path reports
    assert info.value.code == "input" and spy.calls == 2 and len(general) == 2


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_c_caller_and_the_general_path_give_the_same_results(name):
    """The same calls on two kernels of one program, one whose C caller takes them, one
    whose every call goes to the general path: equal results, bit for bit, and the
    in-place idiom and out= targets honoured alike."""
    source, shapes = PROGRAMS[name]
    taken, general = tl.compile(source, backend="c"), tl.compile(source, backend="c")
    first = _inputs(shapes, 3)
    _spied(taken, first)
    declined = _spied(general, first, decline=True)
    for seed in range(4, 8):
        calls = [(_inputs(shapes, seed), None)]
        if name == "scalar":  # a number for a scalar input, a Python one and a numpy one
            calls += [({**calls[0][0], "s": float(seed)}, None), ({**calls[0][0], "s": np.float32(seed)}, None)]
        result = next(iter(taken.outputs))
        calls.append((calls[0][0], {result: np.empty(taken.shapes[result])}))
        if name == "inout":
            calls.append((calls[0][0], {"x": calls[0][0]["x"]}))  # in place
        for arrays, out in calls:
            copies = [({n: np.copy(v) for n, v in arrays.items()}, None if out is None else
                       {n: (np.copy(arrays[n]) if arrays.get(n) is v else np.copy(v)) for n, v in out.items()})
                      for _ in range(2)]
            (a, o), (b, p) = copies
            if out is not None and name == "inout" and out.get("x") is arrays["x"]:
                o, p = {"x": a["x"]}, {"x": b["x"]}
            got, want = taken(**a, out=o), general(**b, out=p)
            assert list(got) == list(want)
            for key in got:
                np.testing.assert_array_equal(got[key], want[key])
                if o is not None and key in o:
                    assert got[key] is o[key] and want[key] is p[key]
    if taken.runner.c_call.caller is not None:
        assert taken.runner.c_call.caller.calls > 0  # the C caller took them
    assert declined.calls > 0


@pytest.mark.parametrize("backend", ["c", "numpy", "interp"])
def test_a_target_offers_one_call_path(backend):
    """A runner offers ``run`` and its C caller (or None): no other call path of its own."""
    target = tl.compile(MATMUL, backend=backend).target
    assert callable(target.run) and hasattr(target, "c_call")
    assert not [name for name in dir(target) if "fast" in name.lower()]


class Raising:
    """A C caller's stand-in that raises ``exc`` on every call."""

    def __init__(self, exc: Exception):
        self.exc, self.calls = exc, 0

    def __call__(self, arrays, out):
        self.calls += 1
        raise self.exc


def _counting_general(monkeypatch) -> list:
    general: list = []
    real = Kernel._general
    monkeypatch.setattr(Kernel, "_general", lambda self, a, o: general.append(1) or real(self, a, o))
    return general


def test_a_raising_c_caller_is_redone_on_the_general_path_unless_the_kernel_failed(monkeypatch):
    """``Runner.raise_if_failed``, the rule of ``Runner.call`` and of the C entry (``_c_call_raised``):
    a KernelFailed ran and leaves with the kernel's source; anything else is redone."""
    from tensorlang.errors import KernelFailed
    k = tl.compile(MATMUL, backend="c")
    arrays = _inputs(PROGRAMS["matmul"][1], 9)
    want = arrays["A"] @ arrays["B"]
    k(**arrays)
    general = _counting_general(monkeypatch)
    k.runner.c_call = k._c_call = Raising(ValueError("not this call"))
    np.testing.assert_allclose(k(**arrays)["C"], want, rtol=1e-14)
    np.testing.assert_allclose(k.run(arrays)["C"], want, rtol=1e-14)
    np.testing.assert_allclose(k._c_call_raised(ValueError("from C"), dict(arrays))["C"], want, rtol=1e-14)
    assert len(general) == 3
    k.runner.c_call = k._c_call = Raising(KernelFailed("backend", "the C kernel failed (status 3)"))
    for call in (lambda: k(**arrays), lambda: k.run(arrays),
                 lambda: k._c_call_raised(KernelFailed("backend", "status 3"), dict(arrays))):
        with pytest.raises(KernelFailed) as info:
            call()
        assert info.value.code == "backend" and info.value.filename == k.source.filename
    assert len(general) == 3 and k._c_call.calls == 2


def test_an_einsum_runner_whose_ordered_call_declines_goes_through_the_kernels_runner(monkeypatch):
    """A misaligned operand has the cache key of an aligned one; the kernel's ``ordered``
    call declines it (callext.fits) and the runner's ``Runner.call`` computes it."""
    rng = np.random.default_rng(10)
    a, b = rng.uniform(-1, 1, (3, 7)), rng.uniform(-1, 1, (7, 2))
    np.testing.assert_allclose(tl.einsum("ij,jk->ik", a, b, backend="c"), a @ b, rtol=1e-14)
    misaligned = np.frombuffer(bytearray(a.nbytes + 1), dtype=a.dtype, count=a.size, offset=1).reshape(a.shape)
    misaligned[...] = a
    assert misaligned.flags.c_contiguous and not misaligned.flags.aligned
    general = _counting_general(monkeypatch)
    np.testing.assert_allclose(tl.einsum("ij,jk->ik", misaligned, b, backend="c"), a @ b, rtol=1e-14)
    assert len(general) == 1
