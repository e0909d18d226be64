"""Prefetch hints of a fused batch loop (loops/fusion.py ``_prefetch``, codegen ``prefetch``).

Each program buffer the loop walks one slab per element (a slab of at most L1), read or
written, streams: the next element's slabs are asked for towards L2, as one run of
lines in the order the statements first touch the buffers, shared out over the
statements' outer loops by their work (a written slab's lines for writing).  Hints
never address outside their buffer and change no bit of any result."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import fusion
from tensorlang.loops.ir import Ahead, Loop, walk
from c_source import generate
from tensorlang.targets.c import build as c_build

from corpus import helmholtz_reference, helmholtz_source, interpolation_source, kron3


def _c(source, **options):
    try:
        return tl.compile(source, backend="c", threads=1, **options)
    except TensorLangError as exc:  # no C compiler here
        pytest.skip(str(exc))


def _fused_loops(k):
    return [node for nest in k.loop_program.nests if nest.fused for node in nest.body
            if isinstance(node, Loop) and node.var == "e"]


def _inner_hints(k) -> list[tuple[str, Ahead]]:
    """(the loop's variable, hint) for each hint inside the fused batch loop."""
    (batch,) = _fused_loops(k)
    return [(node.var, ahead) for node in walk(batch.body) if isinstance(node, Loop) for ahead in node.prefetch]


def _runs(k) -> list[tuple[str, int, int, bool]]:
    """Each hint as (buffer, first line, last line + 1, for writing), in the body's order."""
    for _, ahead in _inner_hints(k):
        assert ahead.at == (("e", 1),) and ahead.spread and ahead.lines is not None
    return [(k.loop_program.names[a.slot], *a.lines, a.write) for _, a in _inner_hints(k)]


def _covers_each_slab_once(runs, slabs: dict[str, int]) -> bool:
    """The hints ask for every line of each slab once, the slabs one after another."""
    order = list(dict.fromkeys(name for name, *_ in runs))
    joined = [(name, line) for name, first, stop, _ in runs for line in range(first, stop)]
    return joined == [(name, line) for name in order for line in range(slabs[name])] and set(order) == set(slabs)


def test_the_fused_interpolation_streams_u_and_v(tmp_path, capsys):
    k = _c(interpolation_source(8, 64))
    (loop,) = _fused_loops(k)
    assert loop.prefetch == ()  # no burst at the start of an element
    runs = _runs(k)
    # not A, B, C (no batch index); u read first, then v written: 64 lines each (4 KiB)
    assert _covers_each_slab_once(runs, {"u": 64, "v": 64})
    assert [name for name, *_ in runs][0] == "u" and all(write == (name == "v") for name, _, _, write in runs)
    # shared out over the three products (equal work): 128 lines, 42 or 43 a statement
    (batch,) = _fused_loops(k)
    shares = [sum(stop - first for _, first, stop, _ in
                  [(k.loop_program.names[a.slot], *a.lines, a.write) for a in node.prefetch])
              for node in batch.body if isinstance(node, Loop)]
    assert shares == [42, 43, 43]
    c = k.target.source
    assert "__builtin_prefetch(tl_ahead" in c and "if (x_e + 1 < 64LL)" in c  # none past the last element
    from tensorlang.cli import main
    program = tmp_path / "interp.tl"
    program.write_text(interpolation_source(8, 64))
    assert main(["compile", str(program), "--emit", "loops"]) == 0
    shown = capsys.readouterr().out
    assert "prefetch u[e+1], spread, lines 0..41" in shown and "prefetch for writing v[e+1], spread" in shown


def test_helmholtz_streams_its_inputs_and_its_output():
    k = _c(helmholtz_source(8, 64))
    assert _fused_loops(k)[0].prefetch == ()
    runs = _runs(k)
    # u (the first product's), D (the elementwise product's), v (the last product's)
    assert _covers_each_slab_once(runs, {"u": 64, "D": 64, "v": 64})
    assert list(dict.fromkeys(name for name, *_ in runs)) == ["u", "D", "v"]
    assert all(write == (name == "v") for name, _, _, write in runs)


@pytest.mark.slow
@pytest.mark.parametrize("fma", [False, True])
def test_large_slabs_are_shared_out_over_the_statements(fma, tmp_path, capsys):
    """n = 16: one element's u, D and v are 32 KiB (512 lines) each; the six products
    do equal work, so each asks for 256 of the 1536 lines, 16 an iteration."""
    helm = _c(helmholtz_source(16, 3), fma=fma)
    (batch,) = _fused_loops(helm)
    outer = [node for node in batch.body if isinstance(node, Loop)]
    names = helm.loop_program.names
    assert [[(names[a.slot], a.lines, a.write) for a in node.prefetch] for node in outer] == [
        [("u", (0, 256), False)], [("u", (256, 512), False)], [("D", (0, 256), False)],
        [("D", (256, 512), False)], [("v", (0, 256), True)], [("v", (256, 512), True)]]
    c = helm.target.source
    assert "if (x_e + 1 < 3LL)" in c and ", 3);" not in c  # none past the last element; none into L1
    assert "tl_l < 256LL + (x_" in c and "__builtin_prefetch(tl_ahead3 + 64 * tl_l, 1, 2)" in c

    interp = _c(interpolation_source(16, 3), fma=fma)
    assert _covers_each_slab_once(_runs(interp), {"u": 512, "v": 512})
    from tensorlang.cli import main
    program = tmp_path / "helm.tl"
    program.write_text(helmholtz_source(16, 3))
    assert main(["compile", str(program), "--emit", "loops"] + (["--fma"] if fma else [])) == 0
    shown = capsys.readouterr().out
    assert "prefetch u[e+1], spread, lines 0..255" in shown and "prefetch for writing v[e+1], spread, lines 256..511" in shown
    assert "into L1" not in shown


@pytest.mark.parametrize("n", [4, 5, 12, 13])
def test_every_streamed_line_is_asked_for_once(n):
    """Slabs of 512 bytes to 17 KiB, a run split across statements anywhere."""
    for source, slabs in ((helmholtz_source(n, 64), ("u", "D", "v")), (interpolation_source(n, 64), ("u", "v"))):
        lines = -(-n**3 * 8 // 64)
        assert _covers_each_slab_once(_runs(_c(source)), dict.fromkeys(slabs, lines))


def test_buffers_within_l1_and_one_loop_statements_get_the_read_slabs_at_the_start():
    """E = 3 at n = 4: u, D and v are 4.5 KiB together, in L1 from call to call."""
    k = _c(helmholtz_source(4, 3))
    assert _inner_hints(k) == []
    (loop,) = _fused_loops(k)
    assert [(k.loop_program.names[a.slot], a.at, a.spread, a.write) for a in loop.prefetch] == [
        ("D", (("e", 1),), False, False), ("u", (("e", 1),), False, False)]
    # an outer product's rows: the statement is one simd loop, no loop of its own to share
    outer = _c("in var x : [4096]\nin var w : [512]\nout var v : [4096 512]\nvar y : [4096]\n"
               "y = 2 * x\nv = y # w\n")
    assert "fused" in outer.ir("loops") and walk_prefetch(outer) == []


def _with_hint_min(monkeypatch, value: str):
    from tensorlang import machine
    monkeypatch.setenv("TENSORLANG_HINT_MIN_SLAB", value)
    machine.cache_sizes.cache_clear()


@pytest.mark.parametrize("hint_min", ["2048", ""])
def test_slabs_under_the_cpus_hint_minimum_are_left_to_its_prefetcher(monkeypatch, hint_min):
    """On an AMD CPU (machine.HINT_MIN_SLAB_AMD) an element's slabs under 2 KiB get no
    hint: n <= 6 of the CFD kernels; n = 7 (2,744-byte slabs) keeps every hint."""
    from tensorlang import machine
    try:
        if hint_min:
            _with_hint_min(monkeypatch, hint_min)
        else:  # the default on an AMD CPU, whatever this machine is
            monkeypatch.delenv("TENSORLANG_HINT_MIN_SLAB")
            monkeypatch.setattr(machine, "_vendor", lambda: "AuthenticAMD")
            machine.cache_sizes.cache_clear()
        assert machine.cache_sizes().hint_min == 2048
        assert "next-element hints from 2048 B slabs" in machine.cache_sizes().describe()
        for n in (4, 5, 6):
            for source in (helmholtz_source(n, 64), interpolation_source(n, 64)):
                k = _c(source + "\n" * (n + 3 + len(hint_min)))  # another text: not a kernel compiled before
                assert _inner_hints(k) == [] and _fused_loops(k)[0].prefetch == ()
                assert "__builtin_prefetch(" not in k.target.source
        seven = _c(helmholtz_source(7, 64) + "\n" * (11 + len(hint_min)))
        lines = -(-7**3 * 8 // 64)
        assert _covers_each_slab_once(_runs(seven), dict.fromkeys(("u", "D", "v"), lines))
        rng = np.random.default_rng(5)
        S, D, u = rng.uniform(-1, 1, (5, 5)), rng.uniform(0.5, 1.5, (64, 5, 5, 5)), rng.uniform(-1, 1, (64, 5, 5, 5))
        bare = _c(helmholtz_source(5, 64) + "\n" * (20 + len(hint_min)))
        monkeypatch.setenv("TENSORLANG_HINT_MIN_SLAB", "0")
        machine.cache_sizes.cache_clear()
        hinted = _c(helmholtz_source(5, 64) + "\n" * (30 + len(hint_min)))
        assert _inner_hints(hinted) != []
        assert np.array_equal(bare(S=S, D=D, u=u)["v"], hinted(S=S, D=D, u=u)["v"])
    finally:
        machine.cache_sizes.cache_clear()


def test_the_hint_minimum_is_amds_and_read_from_cpuinfo(monkeypatch, tmp_path):
    from tensorlang import machine
    monkeypatch.delenv("TENSORLANG_HINT_MIN_SLAB")
    assert machine.hint_min_slab("AuthenticAMD") == machine.HINT_MIN_SLAB_AMD == 2048
    assert machine.hint_min_slab("GenuineIntel") == 0 == machine.hint_min_slab("ARM")
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n")
    assert machine._vendor(info) == "AuthenticAMD"
    info.write_text("processor : 0\nmodel name : something\n")
    assert machine._vendor(info) is None and machine._vendor(tmp_path / "missing") is None
    monkeypatch.setenv("TENSORLANG_HINT_MIN_SLAB", "512")
    assert machine.hint_min_slab("AuthenticAMD") == 512


def walk_prefetch(k) -> list[Ahead]:
    return [a for nest in k.loop_program.nests for node in walk(nest.body) if isinstance(node, Loop) for a in node.prefetch]


def test_slabs_larger_than_l1_get_no_hint(monkeypatch):
    monkeypatch.setenv("TENSORLANG_CACHE_SIZES", "l1=16384,l2=1048576")
    from tensorlang import machine as cache
    cache.cache_sizes.cache_clear()
    try:
        k = _c(helmholtz_source(16, 3) + "\n\n")  # 32 KiB slabs, above this L1 of 16 KiB
        assert _fused_loops(k)[0].prefetch == () and _inner_hints(k) == []
        assert "__builtin_prefetch(" not in k.target.source
    finally:
        cache.cache_sizes.cache_clear()


def _without_hints(monkeypatch, source: str, **options):
    with monkeypatch.context() as m:
        m.setattr(fusion, "_prefetch", lambda loop, *rest: loop)
        plain = _c(source + "\n\n\n", **options)  # another text: not the cached kernel
    assert "__builtin_prefetch(" not in plain.target.source
    return plain


_specials = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0])


@pytest.mark.slow
@pytest.mark.parametrize("fma", [False, True])
@pytest.mark.parametrize("n, E", [(6, 37), (16, 3)])
def test_the_hints_change_no_result(monkeypatch, fma, n, E):
    helm_source, interp_source = helmholtz_source(n, E), interpolation_source(n, E)
    kernels = [(_c(interp_source, fma=fma), _without_hints(monkeypatch, interp_source, fma=fma), "interp"),
               (_c(helm_source, fma=fma), _without_hints(monkeypatch, helm_source, fma=fma), "helm")]
    assert all("__builtin_prefetch(" in hinted.target.source for hinted, _, _ in kernels)

    @settings(max_examples=10, deadline=None)
    @given(seed=st.integers(0, 2**32 - 1), special=_specials, where=st.integers(0, E * n**3 - 1))
    def check(seed, special, where):
        rng = np.random.default_rng(seed)
        u = rng.uniform(-1, 1, (E, n, n, n))
        u.flat[where] = special
        mats = {name: rng.uniform(-1, 1, (n, n)) / n for name in "ABCS"}
        D = rng.uniform(0.5, 1.5, (E, n, n, n))
        for hinted, plain, which in kernels:
            args = ({"A": mats["A"], "B": mats["B"], "C": mats["C"], "u": u} if which == "interp"
                    else {"S": mats["S"], "D": D, "u": u})
            got, want = hinted(**args)["v"], plain(**args)["v"]
            assert np.array_equal(got, want, equal_nan=True)
            assert np.array_equal(np.signbit(got), np.signbit(want))
            finite = np.isfinite(u).all(axis=(1, 2, 3))  # elements without ⊥/inf: the reference
            ref = (kron3(mats["A"], mats["B"], mats["C"], u) if which == "interp"
                   else helmholtz_reference({"S": mats["S"], "D": D, "u": u}))
            assert np.allclose(got[finite], ref[finite], rtol=1e-10, atol=1e-12)

    check()


CHECKER = r"""
#include <stdio.h>
#include <stdlib.h>
static const char *tl_lo[16], *tl_hi[16];
static int tl_buffers;
static long tl_asked;
static void tl_check(const void *p) {
    const char *c = (const char *)p;
    for (int i = 0; i < tl_buffers; i++) if (c >= tl_lo[i] && c < tl_hi[i]) { tl_asked++; return; }
    fprintf(stderr, "prefetch outside every buffer: %p\n", p);
    abort();
}
#define __builtin_prefetch(p, rw, loc) tl_check(p)
"""


def _prefetches_in_bounds(source: str) -> int:
    """Run the C of ``source`` (fma, no BLAS) on exactly-sized heap buffers with every
    prefetch checked to lie inside one of them; the number of prefetches asked."""
    compiler = c_build.find_compiler()
    if compiler is None:
        pytest.skip("no C compiler")
    kernel = tl.compile(source, backend="interp")  # for the program only
    generated = generate(kernel.executed, "float64", blas=False, fma=True, parallel_work=1)
    lines = [CHECKER, generated.source, "int main(void) {"]
    for n, shape in enumerate(generated.loop_program.shapes):
        size = int(np.prod(shape))
        lines += [f"    real *v{n} = calloc({max(size, 1)}, sizeof(real));",
                  f"    tl_lo[tl_buffers] = (const char *)v{n}; tl_hi[tl_buffers++] = (const char *)(v{n} + {size});"]
    for function in generated.functions:
        lines.append(f"    {function.name}({', '.join([f'v{s}' for s in (*function.slots, *function.inputs)] + ['1'])});")
    lines += ['    printf("%ld\\n", tl_asked);', "    return 0;", "}"]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp, "k.c"), Path(tmp, "k")
        src.write_text("\n".join(lines) + "\n")
        built = subprocess.run([*compiler.command, "-O1", "-std=c99", str(src), "-o", str(exe), "-lm"],
                               capture_output=True, text=True)
        assert built.returncode == 0, built.stderr[-3000:]
        ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr[-2000:]
    return int(ran.stdout.strip())


@pytest.mark.parametrize("source", [helmholtz_source(16, 3), interpolation_source(16, 3), helmholtz_source(8, 5)])
def test_no_hint_addresses_outside_its_buffer(source):
    """Also the last element's and the last sub-slab's iterations: a guard each."""
    assert _prefetches_in_bounds(source) > 0


def _mode_program(n: int, E: int, flips: tuple[bool, bool, bool], helm: bool) -> tuple[str, str]:
    """A chain of three mode products on E elements of size n (each matrix or its
    transpose, by ``flips``), optionally followed by D ⊙ and a second chain (the
    Helmholtz operator's shape); the program and its numpy.einsum subscripts."""
    pairs = " ".join(f"[{2 + m} {5 + 2 * m + (1 if flip else 0)}]" for m, flip in enumerate(flips))
    cube = f"[{E} {n} {n} {n}]"
    head = "".join(f"in var {name} : [{n} {n}]\n" for name in "ABC") + f"in var u : {cube}\nout var v : {cube}\n"
    if not helm:
        return head + f"v = u # A # B # C . [{pairs}]\n", ""
    return (head + f"in var D : {cube}\nvar t : {cube}\nvar r : {cube}\n"
            f"t = u # A # B # C . [{pairs}]\nr = D * t\nv = r # C # B # A . [{pairs}]\n"), ""


def _mode_reference(args: dict, flips, helm: bool) -> np.ndarray:
    def chain(x, mats):
        for M, flip in zip(mats, flips):
            # the next mode of x contracts with M's first index (flip: its second); M's other index
            # is appended at the end, so after three modes the order is e, then the three new ones
            x = np.tensordot(x, M.T if flip else M, axes=([1], [0]))
        return x

    t = chain(args["u"], (args["A"], args["B"], args["C"]))
    if not helm:
        return t
    return chain(args["D"] * t, (args["C"], args["B"], args["A"]))


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(n=st.sampled_from([12, 13, 15, 16, 17]), E=st.integers(1, 3),
       flips=st.tuples(st.booleans(), st.booleans(), st.booleans()), helm=st.booleans(), fma=st.booleans(),
       special=_specials, seed=st.integers(0, 2**32 - 1))
def test_generated_mode_chains_with_and_without_hints(n, E, flips, helm, fma, special, seed):
    """Mode-product chains of 1-3 elements of 13.5-38.4 KiB (n = 12-17: buffers together
    within L1 or past it, a slab near L1) with the matrices either way round:
    the C kernel with its hints gives the bits of the one without and the reference's
    values, and none of its prefetches leaves its buffer."""
    source, _ = _mode_program(n, E, flips, helm)
    rng = np.random.default_rng(seed)
    args = {name: rng.uniform(-1, 1, (n, n)) / n for name in "ABC"}
    args["u"] = rng.uniform(-1, 1, (E, n, n, n))
    args["u"].flat[rng.integers(E * n**3)] = special
    if helm:
        args["D"] = rng.uniform(0.5, 1.5, (E, n, n, n))
    with pytest.MonkeyPatch.context() as m:
        hinted = _c(source, fma=fma)
        plain = _without_hints(m, source, fma=fma)
    got, want = hinted(**args)["v"], plain(**args)["v"]
    assert np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want))
    with np.errstate(invalid="ignore", over="ignore"):
        ref = _mode_reference(args, flips, helm)
    finite = np.isfinite(args["u"]).all(axis=(1, 2, 3))
    assert np.allclose(got[finite], ref[finite], rtol=1e-10, atol=1e-12)
    assert np.array_equal(np.isnan(got[~finite]), np.isnan(ref[~finite]))
    if "__builtin_prefetch(" in hinted.target.source:
        assert _prefetches_in_bounds(source) > 0
