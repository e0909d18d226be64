"""Memory reuse by liveness (002 §6.2-6.3): which temporaries share a buffer, and that
programs whose temporaries share buffers still compute the interpreter's result."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from tensorlang.analysis.liveness import live_after, reuse, temporary_bytes
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
