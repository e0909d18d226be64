"""Memory reuse by liveness (002 §6.2-6.3): which temporaries share a buffer, and that
programs whose temporaries share buffers still compute the interpreter's result."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, event, example, given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from tensorlang.ein import ir
from tensorlang.analysis.inplace import derive
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
    shared = reuse(p, roles(p.decls), into_results=False)  # among temporaries only
    assert [(s.name, s.owner, s.figure) for s in shared] == [("t2", "t1", "Fig. 16"), ("t3", "t1", "Fig. 16")]
    assert temporary_bytes(p, roles(p.decls), 8) == (3, 96)
    assert temporary_bytes(p, roles(p.decls), 8, shared) == (1, 32)


def test_fig16_needs_a_compatible_statement_and_fig20_takes_a_buffer_dead_before():
    head = "in var x : [3 3]\nout var v : [3 3]\nvar t1 : [3 3]\nvar t2 : [3 3]\nvar t3 : [3 3]\n"
    p = program(head + "t1 = x + x\nt2 = t1 ^ [1 2]\nt3 = t2 * x\nv = t3 + x\n")
    shared = reuse(p, roles(p.decls), into_results=False)
    # t2 reads t1 transposed: not in t1's buffer (Fig. 16 needs compatibility); t3 reads
    # t2 for the last time at the written index, so it takes t2's buffer rather than t1's
    # (dead before, Fig. 20)
    assert [(s.name, s.owner, s.figure) for s in shared] == [("t3", "t2", "Fig. 16")]
    p = program(head + "t1 = x + x\nt2 = t1 ^ [1 2]\nt3 = t2 ^ [1 2]\nv = t3 + x\n")
    assert [(s.name, s.owner, s.figure) for s in reuse(p, roles(p.decls), into_results=False)] == [("t3", "t1", "Fig. 20")]


def test_results_inputs_and_differently_shaped_temporaries_keep_their_buffers():
    p = program("in var x : [4]\nout var v : [4]\nout var u : [4]\nvar t : [2]\nv = x * x\nu = v * x\n"
                "t[i] = x[i+0] + x[i+2]\n")
    assert reuse(p, roles(p.decls)) == ()


def test_a_later_dead_assignment_keeps_the_buffer_busy():
    p = program(HEAD + "t1 = s * x\nt2 = t1 * w\nt1 = x + w\nt3 = t2 * w\nv = t3 + t2\n")
    # t1 is written again by statement 3: t2 (statement 2) may not live in its buffer;
    # t3 (statement 4) may, t1 being dead by then
    assert [(s.name, s.owner, s.figure) for s in reuse(p, roles(p.decls), into_results=False)] == [("t3", "t1", "Fig. 20")]


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
    lines = [f"in var x : [{n} {n}]", "in var s : []", f"out var v : [{n} {n}]"]
    lines += [f"var t{k} : [{n} {n}]" for k in range(count)]
    body = []
    for k in range(count):
        sources = ["x"] + [f"t{j}" for j in range(k)]
        def read(sources=sources):
            name = draw(st.sampled_from(sources))
            form = draw(st.sampled_from(["[i,j]", "[i,j]", "[j,i]", "sum", "in sum"]))
            if form == "in sum":  # read at the written index inside a Σ: Fig. 16 may still apply
                return f"(sum(q) {name}[i,j] * x[q,j])"
            return f"(sum(q) {name}[i,q])" if form == "sum" else f"{name}{form}"
        op = draw(st.sampled_from(["+", "-", "*"]))
        fn = draw(st.sampled_from(["", "sin", "abs"]))
        term = f"{read()} {op} {read()}"
        body.append(f"t{k}[i,j] = {fn}({term}) * s" if fn else f"t{k}[i,j] = ({term}) * s")
    body.append(f"v[i,j] = t{count - 1}[i,j] + " + draw(st.sampled_from([f"t{j}[j,i]" for j in range(count)] + ["x[i,j]"])))
    return "\n".join(lines + body) + "\n"


def _inputs(shape, seed: int):
    """x uniform in [-2, 2] with one entry ⊥, ±inf or ±0, and a scale s in {1.5, -0.5, ±0}."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, shape)
    x.reshape(-1)[rng.integers(0, math.prod(shape))] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0])
    return x, np.array(rng.choice([1.5, -0.5, 0.0, -0.0]))


def _oracle(source: str, opt: bool):
    """What a C kernel that shares buffers is checked against, ⊥ entries exactly.

    As lowered (``opt=False``): the interpreter.  Optimized: the NumPy target on the same
    optimized program, which shares no buffers.  The optimizer's own ⊥ behaviour is not
    these tests' subject: factoring t[i,j] out of Σ_q t[i,j]·x[q,j] (summation binding)
    gives t·Σ_q x_q = inf·(-inf) = -inf where the sum as written is ⊥ (inf·1.6 + inf·-1.8),
    as docs/optimizer.md ("Reassociation") allows with infinite inputs."""
    return tl.compile(source, backend="numpy", opt=True) if opt else tl.compile(source, backend="interp")


@pytest.mark.slow
@pytest.mark.parametrize("opt", [False, True])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=chains(), seed=st.integers(0, 2**32 - 1))
@example(source="in var x : [3 3]\nin var s : []\nout var v : [3 3]\nvar t0 : [3 3]\nvar t1 : [3 3]\n"
         "t0[i,j] = (x[i,j] + x[i,j]) * s\nt1[i,j] = (x[i,j] + (sum(q) t0[i,j] * x[q,j])) * s\nv[i,j] = t1[i,j] + t0[j,i]\n",
         seed=0)  # CI's randomized run: -inf in x[2,2], s = -0.5
def test_programs_whose_temporaries_share_buffers_match_the_interpreter(source, seed, opt):
    if "c" not in tl.available_backends():
        pytest.skip("no C compiler")
    note(source)
    k = tl.compile(source, backend="c", opt=opt)
    shared = k.schedule.buffers.shared
    event(f"{len(shared)} shared" if shared else "none shared")
    x, s = _inputs(k.ein.shapes["x"], seed)
    want = _oracle(source, opt)(x=x, s=s)["v"]
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
@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=mixed_chains(), seed=st.integers(0, 2**32 - 1))
# the optimizer moves sums of t0 apart (reassociation): ⊥ where an infinity meets its
# opposite in one order, inf in the other, as docs/optimizer.md allows with infinite inputs
@example(source="in var x : [3 4]\nin var s : []\nvar t0 : [2 3]\nvar t1 : [4]\nvar t2 : [4]\nout var v : [2 2 2]\n"
                "t0[i0,i1] = ((sum(q1) x[i1,q1]) + (sum(q1) x[i1,q1])) * s\n"
                "t1[i0] = ((sum(q0) x[q0,i0]) * (sum(q0,q1) t0[q0,q1])) * s\n"
                "t2[i0] = ((sum(q0,q1) t0[q0,q1]) + (sum(q0,q1) t0[q0,q1])) * s\n"
                "v[i0,i1,i2] = ((sum(q0) t1[q0]) * (sum(q0,q1) x[q0,q1])) * s\n", seed=6201)
def test_temporaries_of_different_shapes_share_buffers_by_size(source, seed, opt):
    if "c" not in tl.available_backends():
        pytest.skip("no C compiler")
    note(source)
    k = tl.compile(source, backend="c", opt=opt)
    plan = k.schedule.buffers
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
    fig16 = {(s.name, s.owner) for s in plan.shared if s.figure.startswith("Fig. 16")}
    names = sorted(n for n in temps if n in spans)
    for a in names:
        for b in names:
            if a < b and memory[a] == memory[b]:
                (a0, a1), (b0, b1) = sorted([spans[a], spans[b]])
                # live ranges of one buffer never overlap; they touch only in a Fig. 16 statement
                assert a1 < b0 or (a1 == b0 and fig16), (a, b, spans[a], spans[b])
    event("by size" if any(b.alias for b in plan.buffers) else "no alias slot")
    x, s = _inputs((3, 4), seed)
    want = _oracle(source, opt)(x=x, s=s)["v"]
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
    plan = k.schedule.buffers
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


def _memory_spans(k):
    """Per variable with a buffer of its own or shared (temporaries and results): the
    memory it lives in (an alias slot's owner's) and its live span (first write, last
    read or write; a result lives to the end), computed here, not by liveness.py."""
    plan = k.schedule.buffers
    program = k.executed
    roles_ = k.roles()
    names = {n for n, r in roles_.items() if r in ("temp", "out") and n in program.shapes}
    names = {n for n in names if n in plan.slot_of and not plan.is_local(plan.slot_of[n])}
    memory = {}
    for name in names:
        buffer = plan.buffers[plan.slot_of[name]]
        memory[name] = buffer.alias or buffer.name
    spans = {}
    last = len(program.statements)
    for n, stmt in enumerate(program.statements):
        for name in [*stmt.reads, stmt.target]:
            if name in names:
                start, _ = spans.get(name, (n, n))
                spans[name] = (start, last if roles_[name] == "out" else n)
    return plan, memory, spans


@pytest.mark.slow
@pytest.mark.parametrize("opt, pad", [(False, 1), (True, 1), (False, 4)])
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(source=chains(), seed=st.integers(0, 2**32 - 1))
def test_no_two_live_values_share_memory_results_and_sums_included(source, seed, opt, pad, monkeypatch):
    """Fig. 20 into results and Fig. 16 in Σ statements: the plan never puts two values
    that are live at once in one memory (they touch only in the Fig. 16 statement that
    reads one for the last time while writing the other, which then runs in place), and
    the results equal the interpreter's with NaN, ±inf and ±0 among the inputs."""
    if "c" not in tl.available_backends():
        pytest.skip("no C compiler")
    monkeypatch.setenv("TENSORLANG_FUSE", "0")  # fused locals have no buffer: the plain plan shares most
    note(source)
    k = tl.compile(source, backend="c", opt=opt, pad=pad)  # pad 4: padded buffers share by shape
    plan, memory, spans = _memory_spans(k)
    event("in a result" if any(s.in_result for s in plan.shared) else "no result shared")
    event("Fig. 16 in a sum" if any(s.dying and any(isinstance(n, ir.Sum) for n in ir.nodes(k.executed.statements[s.at].body))
                                    for s in plan.shared) else "no Fig. 16 in a sum")
    names = sorted(n for n in memory if n in spans)
    for a in names:
        for b in names:
            if a < b and memory[a] == memory[b]:
                (a0, a1), (b0, b1) = sorted([spans[a], spans[b]])
                # touching only where the later one's first statement reads the other
                # for the last time, at the written index only (002 Fig. 16)
                first, other = (b, a) if spans[b][0] == b0 else (a, b)
                stmt = k.executed.statements[b0]
                assert a1 < b0 or (a1 == b0 and stmt.target == first and derive(stmt, other).compatible), \
                    (a, b, spans[a], spans[b])
    x, s = _inputs(k.ein.shapes["x"], seed)
    want = _oracle(source, opt)(x=x, s=s)["v"]
    out = np.full(x.shape, 7.0)
    for call in (lambda: k(x=x, s=s)["v"], lambda: k(x=x, s=s, out={"v": out})["v"]):
        for _ in range(2):  # twice: pooled buffers and a caller's out= array are reused
            got = call()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


FIG20 = ("in var A : [5 5]\nin var B : [5 5]\nin var C : [5 5]\nin var u : [5 5 5]\nout var v : [5 5 5]\n"
         "var tmp1 : [5 5 5]\nvar tmp2 : [5 5 5]\n"
         "tmp1[i,j,k] = sum(l) C[k,l] * u[i,j,l]\ntmp2[i,j,k] = sum(l) B[j,l] * tmp1[i,l,k]\n"
         "v[i,j,k] = sum(l) A[i,l] * tmp2[l,j,k]\n")


def test_fig20_literally_tmp1_lives_in_the_result_before_it_is_written(monkeypatch):
    monkeypatch.setenv("TENSORLANG_FUSE", "0")  # fusion would make tmp1 a per-iteration local
    p = program(FIG20)
    shared = reuse(p, roles(p.decls))
    assert [(s.name, s.owner, s.figure, s.in_result) for s in shared] == [("tmp1", "v", "Fig. 20 (result)", True)]
    assert reuse(p, roles(p.decls), into_results=False) == ()
    assert peak_temporary_bytes(p, roles(p.decls), 8) == 2000
    assert peak_temporary_bytes(p, roles(p.decls), 8, shared) == 1000
    from tensorlang.analysis.report import temporary_memory
    assert temporary_memory(p, 8).endswith(
        "temporaries: 2 buffers, 2000 bytes; reusing dead temporaries' buffers (002 §6.2-6.3): 2 buffers, 2000 bytes; "
        "and results' buffers before they are written (002 Fig. 20): 1 buffer, 1000 bytes; "
        "peak live 2000 bytes, 1000 bytes outside results' buffers")
    k = tl.compile(FIG20, backend="c", opt=False)
    plan = k.schedule.buffers
    assert plan.slot_of["tmp1"] == plan.slot_of["v"] and plan.pool_bytes == 1000
    rng = np.random.default_rng(1)
    inputs = {name: rng.uniform(-1, 1, p.shapes[name]) for name in ("A", "B", "C", "u")}
    inputs["u"][1, 2, 3], inputs["u"][0, 0, 0], inputs["A"][2, 2] = np.nan, np.inf, -0.0
    want = tl.compile(FIG20, backend="interp")(**inputs)["v"]
    out = np.zeros((5, 5, 5))
    for _ in range(2):
        np.testing.assert_allclose(k(**inputs)["v"], want, rtol=1e-12)
        got = k(**inputs, out={"v": out})["v"]
        assert got is out
        np.testing.assert_allclose(out, want, rtol=1e-12)


def test_a_result_read_before_written_or_of_another_shape_takes_no_temporary():
    head = "in var x : [4]\nvar t : [4]\nvar w : [2]\n"
    # inout: the result holds the caller's value until it is written
    p = program(head + "inout var v : [4]\nt = x * v\nv = t + x\n")
    assert reuse(p, roles(p.decls)) == ()
    # another shape: a result's buffer has no alias slot (it is made per call or is out=)
    p = program(head + "out var v : [4]\nw[i] = x[i+0] + x[i+2]\nv[i] = x[i] * (sum(j) w[j])\n")
    assert reuse(p, roles(p.decls)) == ()
    # t read by the result's own statement at another point: it may not sit in v's buffer
    p = program(head + "out var v : [4]\nt = x * x\nv[i] = t[-i+5]\n")
    assert reuse(p, roles(p.decls)) == ()
    # read there at the written index: Fig. 16 into the result (the statement runs in place)
    p = program(head + "out var v : [4]\nt = x * x\nv = t * x\n")
    assert [(s.name, s.owner, s.figure) for s in reuse(p, roles(p.decls))] == [("t", "v", "Fig. 20 (result)")]


F16_SUM = ("in var A : [4 4]\nin var x : [4]\nin var s : []\nout var v : [2]\nvar y : [4]\nvar t : [4]\n"
           "y = s * x\nt[i] = sum(k) y[i] * A[i,k] * x[k]\nv[i] = t[i+0] * t[i+2]\n")


def test_fig16_inside_a_sum_runs_in_place_through_the_one_analysis(monkeypatch):
    monkeypatch.setenv("TENSORLANG_FUSE", "0")
    from tensorlang.schedule.plan import loop_statements
    p = program(F16_SUM)
    # without the schedule's test, a Σ statement may become a BLAS step: no Fig. 16
    assert reuse(p, roles(p.decls)) == ()
    shared = reuse(p, roles(p.decls), loop_statements(p.shapes))
    assert [(s.name, s.owner, s.figure, s.dying) for s in shared] == [("t", "y", "Fig. 16", "y")]
    k = tl.compile(F16_SUM, backend="c", opt=False)
    plan = k.schedule.buffers
    assert plan.slot_of["t"] == plan.slot_of["y"]
    # the statement was renamed: it reads its own target at the written index and the
    # one derivation says so (no scratch buffer, no copy back, no interchange)
    loops = k.ir("loops")
    assert "t[i] = sum(k) t[i] * A[i,k] * x[k]" in loops and "copy" not in loops.lower()
    assert "t read at (i) = written index: in place" in k.ir("schedule")
    rng = np.random.default_rng(2)
    A, x = rng.uniform(-1, 1, (4, 4)), rng.uniform(-1, 1, 4)
    x[1], A[2, 3] = np.nan, np.inf
    for s_ in (np.array(1.5), np.array(-0.0)):
        want = tl.compile(F16_SUM, backend="interp")(A=A, x=x, s=s_)["v"]
        for _ in range(2):
            got = k(A=A, x=x, s=s_)["v"]
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(got, want, rtol=1e-12)


#: A matrix-vector product between the two BLAS thresholds (C_BLAS_WORK <= 96 * 96 <
#: BLAS_WORK: a BLAS step in C, a loop nest where BLAS is called from Python) whose
#: result dies in a Fig. 16 statement, and a second one the tensor scale keeps in loops.
BETWEEN = ("in var A : [96 96]\nin var x : [96]\nin var s : []\nout var v : [96]\nvar y : [96]\nvar t : [96]\n"
           "var w : [96]\ny = s * x\nt[i] = sum(k) A[i,k] * y[k]\nw[i] = t[i] * x[i]\nv[i] = sum(k) A[i,k] * w[k]\n")


def test_analyze_decides_what_runs_as_loops_as_the_c_target_does(monkeypatch, tmp_path, capsys):
    """``tensorlang analyze`` describes the C target's schedule: its Fig. 16 test of the
    statements that run as loops uses the C target's BLAS threshold (BLAS from C), so
    its sharing is the C kernel's (docs/compatible.md)."""
    monkeypatch.setenv("TENSORLANG_FUSE", "0")
    from tensorlang import cli
    from tensorlang.schedule import steps
    from tensorlang.targets.c import build as c_build
    from tensorlang.targets import blas_int_max

    if c_build.find_compiler() is None or blas_int_max(np.dtype("float64")) is None:
        pytest.skip("needs a C compiler and a BLAS the generated C can call")
    assert steps.C_BLAS_WORK <= 96 * 96 < steps.BLAS_WORK
    k = tl.compile(BETWEEN, backend="c")
    schedule, executed = k.schedule, k.executed
    in_loops = {id(s) for step in schedule.steps if isinstance(step, steps.LoopStep) for s in step.statements}
    c_loops = [id(s) in in_loops for s in executed.statements]
    assert c_loops[0] is False and c_loops[1:] == [True] * (len(c_loops) - 1)  # the product is a BLAS step

    given = []
    real = cli.report
    monkeypatch.setattr(cli, "report", lambda *args, **kw: given.append(args[3]) or real(*args, **kw))
    path = tmp_path / "between.tl"
    path.write_text(BETWEEN)
    assert cli.main(["analyze", str(path)]) == 0
    (loop_statements,) = given
    runs_as_loops = loop_statements(executed.shapes)
    assert [runs_as_loops(n, s) for n, s in enumerate(executed.statements)] == c_loops
    shared = schedule.buffers.shared
    assert reuse(executed, roles(executed.decls), runs_as_loops) == shared
    # the printed memory line after the optimizer: the temporaries' buffers the C kernel keeps
    after = capsys.readouterr().out.split("after the optimizer:")[1]
    line = next(x for x in after.splitlines() if x.strip().startswith("temporaries:"))
    n, b = temporary_bytes(executed, roles(executed.decls), 8, shared)
    assert line.split("; peak")[0].endswith(f"{n} {'buffer' if n == 1 else 'buffers'}, {b} bytes")
