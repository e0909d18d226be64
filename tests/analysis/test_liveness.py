"""Memory reuse by liveness (002 §6.2-6.3): which temporaries share a buffer, and that
programs whose temporaries share buffers still compute the interpreter's result."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from tensorlang.analysis.liveness import live_after, peak_temporary_bytes, reuse, temporary_bytes
from tensorlang.semantics.interface import roles


def program(source: str):
    return tl.compile(source, backend="interp", opt=False).ein


HEAD = "in var s : []\nin var x : [4]\nin var w : [4]\nout var v : [4]\nvar t1 : [4]\nvar t2 : [4]\nvar t3 : [4]\n"


def test_live_after_each_statement():
    p = program(HEAD + "t1 = s * x\nt2 = t1 * w\nv = t2 + x\n")
    assert live_after(p, ["v"]) == (frozenset({"t1", "w", "x"}), frozenset({"t2", "x"}), frozenset({"v"}))


def test_fig16_a_compatible_statement_writes_the_buffer_it_reads_for_the_last_time():
    p = program(HEAD + "t1 = s * x\nt2 = t1 * w\nt3 = sin(t2) + t2\nv = t3 * s\n")
    shared = reuse(p, roles(p.decls))
    assert [(s.name, s.owner, s.figure) for s in shared] == [("t2", "t1", "Fig. 16"), ("t3", "t1", "Fig. 16")]
    assert temporary_bytes(p, roles(p.decls), 8) == (3, 96)
    assert temporary_bytes(p, roles(p.decls), 8, shared) == (1, 32)


def test_fig16_needs_a_compatible_statement_and_fig20_takes_a_buffer_dead_before():
    head = "in var x : [3 3]\nout var v : [3 3]\nvar t1 : [3 3]\nvar t2 : [3 3]\nvar t3 : [3 3]\n"
    p = program(head + "t1 = x + x\nt2 = t1 ^ [1 2]\nt3 = t2 * x\nv = t3 + x\n")
    shared = reuse(p, roles(p.decls))
    # t2 reads t1 transposed: not in t1's buffer (Fig. 16 needs compatibility); t3 reads
    # t2 for the last time at the written index, so it takes t2's buffer rather than t1's
    # (dead before, Fig. 20)
    assert [(s.name, s.owner, s.figure) for s in shared] == [("t3", "t2", "Fig. 16")]
    p = program(head + "t1 = x + x\nt2 = t1 ^ [1 2]\nt3 = t2 ^ [1 2]\nv = t3 + x\n")
    assert [(s.name, s.owner, s.figure) for s in reuse(p, roles(p.decls))] == [("t3", "t1", "Fig. 20")]


def test_results_inputs_and_differently_shaped_temporaries_keep_their_buffers():
    p = program("in var x : [4]\nout var v : [4]\nout var u : [4]\nvar t : [2]\nv = x * x\nu = v * x\n"
                "t[i] = x[i+0] + x[i+2]\n")
    assert reuse(p, roles(p.decls)) == ()


def test_a_later_dead_assignment_keeps_the_buffer_busy():
    p = program(HEAD + "t1 = s * x\nt2 = t1 * w\nt1 = x + w\nt3 = t2 * w\nv = t3 + t2\n")
    # t1 is written again by statement 3: t2 (statement 2) may not live in its buffer;
    # t3 (statement 4) may, t1 being dead by then
    assert [(s.name, s.owner, s.figure) for s in reuse(p, roles(p.decls))] == [("t3", "t1", "Fig. 20")]


def test_analyze_reports_temporary_memory_before_and_after_reuse():
    from tensorlang.analysis.report import report
    k = tl.compile(HEAD + "t1 = s * x\nt2 = t1 * w\nt3 = sin(t2) + t2\nv = t3 * s\n", backend="interp", opt=False)
    text = report(k.ein, k.optimized, 8)
    assert "temporaries: 3 buffers, 96 bytes; reusing dead temporaries' buffers (002 §6.2-6.3): 1 buffer, 32 bytes" in text


# ------------------------------------------------------------------ never a wrong result
@st.composite
def chains(draw):
    """Qualified programs with temporaries of one shape, each statement reading earlier
    temporaries at the written index, transposed, or summed."""
    n = draw(st.integers(1, 3))
    count = draw(st.integers(2, 5))
    lines = [f"in var x : [{n} {n}]", f"in var s : []", f"out var v : [{n} {n}]"]
    lines += [f"var t{k} : [{n} {n}]" for k in range(count)]
    body = []
    for k in range(count):
        sources = ["x"] + [f"t{j}" for j in range(k)]
        def read():
            name = draw(st.sampled_from(sources))
            form = draw(st.sampled_from(["[i,j]", "[i,j]", "[j,i]", "sum"]))
            return f"(sum(q) {name}[i,q])" if form == "sum" else f"{name}{form}"
        op = draw(st.sampled_from(["+", "-", "*"]))
        fn = draw(st.sampled_from(["", "sin", "abs"]))
        term = f"{read()} {op} {read()}"
        body.append(f"t{k}[i,j] = {fn}({term}) * s" if fn else f"t{k}[i,j] = ({term}) * s")
    body.append(f"v[i,j] = t{count - 1}[i,j] + " + draw(st.sampled_from([f"t{j}[j,i]" for j in range(count)] + ["x[i,j]"])))
    return "\n".join(lines + body) + "\n"


@pytest.mark.parametrize("opt", [False, True])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=chains(), seed=st.integers(0, 2**32 - 1))
def test_programs_whose_temporaries_share_buffers_match_the_interpreter(source, seed, opt):
    if "c" not in tl.available_backends():
        pytest.skip("no C compiler")
    note(source)
    k = tl.compile(source, backend="c", opt=opt)
    shared = k.schedule.buffers.shared
    event(f"{len(shared)} shared" if shared else "none shared")
    rng = np.random.default_rng(seed)
    n = k.ein.shapes["x"][0]
    x = rng.uniform(-2, 2, (n, n))
    x.reshape(-1)[rng.integers(0, n * n)] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0])
    s = np.array(rng.choice([1.5, -0.5, 0.0, -0.0]))
    want = tl.compile(source, backend="interp")(x=x, s=s)["v"]
    for _ in range(2):  # twice: the pooled buffers are reused between calls too
        got = k(x=x, s=s)["v"]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ reuse by size (Fig. 20)
FIG20_SHAPES = [(4,), (2, 3), (3, 2), (3, 4), (4, 3, 2), (2, 2, 2), (1, 4), (5,)]


@st.composite
def mixed_chains(draw):
    """Qualified programs whose temporaries have different shapes: each statement reads
    one or two earlier variables, each dimension of a read at a target index of the same
    extent where there is one, else summed."""
    count = draw(st.integers(3, 6))
    shapes = [draw(st.sampled_from(FIG20_SHAPES)) for _ in range(count)]
    out_shape = draw(st.sampled_from(FIG20_SHAPES))
    lines = ["in var x : [3 4]", "in var s : []"]
    lines += [f"var t{k} : [{' '.join(map(str, shape))}]" for k, shape in enumerate(shapes)]
    lines.append(f"out var v : [{' '.join(map(str, out_shape))}]")
    known = {"x": (3, 4)}

    def read(name: str, target: tuple[int, ...]) -> str:
        names = [f"i{d}" for d in range(len(target))]
        used, indices, summed = set(), [], []
        for d, n in enumerate(known[name]):
            free = [k for k, m in enumerate(target) if m == n and k not in used]
            if free and draw(st.booleans() | st.just(True)):
                used.add(free[0])
                indices.append(names[free[0]])
            else:
                indices.append(f"q{d}")
                summed.append(f"q{d}")
        access = f"{name}[{','.join(indices)}]"
        return f"(sum({','.join(summed)}) {access})" if summed else access

    body = []
    for k, shape in enumerate([*shapes, out_shape]):
        target = f"t{k}" if k < count else "v"
        sources = ["x"] + [f"t{j}" for j in range(k)]
        # mostly the latest temporaries: long chains leave earlier buffers dead
        first = draw(st.sampled_from(sources[-2:]))
        second = draw(st.sampled_from(sources))
        op = draw(st.sampled_from(["+", "*", "-"]))
        index = ",".join(f"i{d}" for d in range(len(shape)))
        body.append(f"{target}[{index}] = ({read(first, shape)} {op} {read(second, shape)}) * s")
        if k < count:
            known[target] = shape
    return "\n".join(lines + body) + "\n"


def _ranges_of(program, temps):
    """(first write, last read or write) per temporary: written here, not taken from liveness.py."""
    spans = {}
    for n, stmt in enumerate(program.statements):
        for name in [*stmt.reads, stmt.target]:
            if name in temps:
                start, _ = spans.get(name, (n, n))
                spans[name] = (start, n)
    return spans


@pytest.mark.parametrize("opt", [False, True])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=mixed_chains(), seed=st.integers(0, 2**32 - 1))
def test_temporaries_of_different_shapes_share_buffers_by_size(source, seed, opt):
    if "c" not in tl.available_backends():
        pytest.skip("no C compiler")
    note(source)
    k = tl.compile(source, backend="c", opt=opt)
    plan = k.target.schedule.buffers
    program = k.executed
    temps = {name for name, role in k.roles().items() if role == "temp"} & set(program.shapes)
    # a fused loop's per-iteration temporaries have no buffer (schedule/fusion.py)
    temps = {name for name in temps if not plan.is_local(plan.slot_of[name])}
    # which memory each temporary lives in: its slot's, or for an alias slot its owner's
    memory = {}
    for name in temps:
        buffer = plan.buffers[plan.slot_of[name]]
        memory[name] = buffer.alias or buffer.name
        owner = plan.buffers[plan.slot_of[memory[name]]]
        assert not owner.alias and math.prod(program.shapes[name]) <= owner.size, (name, owner)
        assert plan.variable_shapes[name] == program.shapes[name] or buffer.shape == program.shapes[name]
    spans = _ranges_of(program, temps)
    fig16 = {(s.name, s.owner) for s in plan.shared if s.figure == "Fig. 16"}
    names = sorted(n for n in temps if n in spans)
    for a in names:
        for b in names:
            if a < b and memory[a] == memory[b]:
                (a0, a1), (b0, b1) = sorted([spans[a], spans[b]])
                # live ranges of one buffer never overlap; they touch only in a Fig. 16 statement
                assert a1 < b0 or (a1 == b0 and fig16), (a, b, spans[a], spans[b])
    event("by size" if any(b.alias for b in plan.buffers) else "no alias slot")
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (3, 4))
    x.reshape(-1)[rng.integers(0, 12)] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0])
    s = np.array(rng.choice([1.5, -0.5, 0.0, -0.0]))
    want = tl.compile(source, backend="interp")(x=x, s=s)["v"]
    for _ in range(2):  # twice: the pooled buffers (and their views) are reused between calls
        got = k(x=x, s=s)["v"]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_fig20_by_size_a_smaller_temporary_takes_a_dead_larger_buffer(monkeypatch):
    # fusion over i would make t1 and t2 per-iteration locals: this is the buffer plan of
    # the statement-by-statement schedule, as 002 Fig. 20 draws it
    monkeypatch.setenv("TENSORLANG_FUSE", "0")
    source = ("in var A : [2 5]\nin var B : [3 5]\nin var C : [4 5]\nin var D : [2 5]\nin var u : [5 5 5 5]\n"
              "out var v : [2 3 4 2]\nvar t1 : [5 5 5 2]\nvar t2 : [5 5 4 2]\nvar t3 : [5 3 4 2]\n"
              "t1[i,j,k,d] = sum(l) u[i,j,k,l] * D[d,l]\nt2[i,j,c,d] = sum(k) t1[i,j,k,d] * C[c,k]\n"
              "t3[i,b,c,d] = sum(j) t2[i,j,c,d] * B[b,j]\nv[a,b,c,d] = sum(i) t3[i,b,c,d] * A[a,i]\n")
    p = program(source)
    shared = reuse(p, roles(p.decls))
    assert [(s.name, s.owner, s.figure) for s in shared] == [("t3", "t1", "Fig. 20")]
    assert reuse(p, roles(p.decls), by_size=False) == ()
    assert temporary_bytes(p, roles(p.decls), 8, shared) == (2, 8 * (250 + 200))
    assert peak_temporary_bytes(p, roles(p.decls), 8) == 8 * (250 + 200)
    k = tl.compile(source, backend="c", opt=False)
    plan = k.target.schedule.buffers
    t3 = plan.buffers[plan.slot_of["t3"]]
    assert t3.alias == "t1" and t3.shape == (5, 3, 4, 2) and plan.pool_bytes == 8 * (250 + 200)
    assert f"real *v{plan.slot_of['t3']}" in k.target.source and f"real *v{plan.slot_of['t1']}," in k.target.source
    rng = np.random.default_rng(0)
    inputs = {name: rng.uniform(-1, 1, p.shapes[name]) for name in "ABCDu"}
    want = tl.compile(source, backend="interp")(**inputs)["v"]
    for _ in range(2):
        np.testing.assert_allclose(k(**inputs)["v"], want, rtol=1e-12)
    text = tl.compile(source, backend="interp", opt=False)
    from tensorlang.analysis.report import temporary_memory
    line = temporary_memory(text.ein, 8)
    assert "2 buffers, 3600 bytes (one shape per buffer: 3 buffers, 4560 bytes); peak live 3600 bytes" in line
