"""Features the C executor once left to the interpreter (docs/diderot-compiled.md, "What runs in
C, and what falls back"): each now runs in C (no ``executor_note``) and agrees with the
interpreter, on one thread and on two, over generated variants."""

from __future__ import annotations

import numpy as np
import pytest
from agreement import agree

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


def _prog(text: str):
    return strands(check(parse_program(text)))


COUNT = """#version 2.0
input int n = 3;
input real{{}} xs = {{0.5, -1.0, 2.0}};
strand S ({params}) {{
  output int a = numStrands() * {k} + 100 * numStable();
  output real b = real(numActive()) * 0.5 + {arg};
  update {{ b += real(numStrands()); stabilize; }}
}}
{create}
"""
#: grids of one to three axes (bounds from inputs, negative lows, empty), a collection over a sequence
COUNTS = [("int i", "real(i)", "create_array { S(i) | i in 0..n }"),
          ("int i, int j", "real(i - j)", "create_array { S(i, j) | i in -1..n, j in 2..4 }"),
          ("int i, int j, int k", "real(i * j - k)", "create_collection { S(i, j, k) | i in 0..1, j in -2..n, k in n..n+2 }"),
          ("real x", "x", "create_collection { S(x) | x in xs }"),
          ("int i, real x", "x * real(i)", "create_array { S(i, xs[i % 3]) | i in 5..n+9 }"),
          ("int i", "real(i)", "create_array { S(i) | i in n..1 }")]


@needs_cc
@pytest.mark.parametrize("params, arg, create", COUNTS)
@pytest.mark.parametrize("k", [1, 3])
def test_a_state_initializer_counts_every_strand_the_grid_makes(params, arg, create, k):
    p = _prog(COUNT.format(params=params, arg=arg, create=create, k=k))
    for n in (3, 0):
        agree(p, {"n": n})


#: statements over sequences of any length a method makes: ``{}``, literals, ``@`` on either side, comprehensions
#: over ranges, inputs and locals, foreach, reductions, indexing, length, print, items of ints and vectors, a function's argument
SEQ_PARTS = [
    "acc = acc @ (real(k) * 0.5 - real(i));",
    "acc = real(k * k) @ acc;",
    "if (k % 2 == i % 2) { acc = acc @ {real(k), -1.0}; }",
    "ks = ks @ (k * i - 3);",
    "vs = vs @ [real(k), real(i)];",
    "acc = acc @ { x * real(k) | x in xs };",
    "acc = { a + 1.0 | a in acc };",
    "ks = { j * 2 | j in 0..k };",
    "acc = f(acc, real(k));",
    "t += sum { a | a in acc } + real(length(ks));",
    "if (length(acc) > 0) { t += acc[length(acc) - 1] + max { a | a in acc }; }",
    "foreach (vec2 v in vs) { t += v[0] - 0.25 * v[1]; }",
    "foreach (int j in ks) { t += real(j); }",
    "bool[] bs = { a > 0.0 | a in acc }; t += real(length(bs)); if (length(bs) > 0 && bs{0}) { t += 0.5; }",
    "real[] tmp = acc; acc = ys @ tmp; ys = tmp;",
    'print(i, " ", k, " ", acc, " ", vs, " ", ks, " ", xs, "\\n");',
]
SEQ = """#version 2.0
input real{{}} xs = {{0.5, -1.0, 2.0}};
function real[] f (real[] s, real c) = s @ {{c, mean {{ a | a in s }}}};
strand S (int i) {{
  output real t = 0.0;
  output int n = 0;
  update {{
    real[] acc = {{}};
    real[] ys = {{1.0}};
    int[] ks = {{i}};
    vec2[] vs = {{}};
    foreach (int k in 0..{hi}) {{
      {body}
    }}
    n = length(acc) + 10 * length(ks) + 100 * length(vs);
    t += {tail};
    {stab}
  }}
}}
create_collection {{ S(i) | i in 0..4 }}
"""


def _seq_variant(seed: int) -> str:
    import random
    rnd = random.Random(seed)
    body = " ".join(rnd.sample(SEQ_PARTS, rnd.randint(3, 7)))
    tail = rnd.choice(["real(length(ys))", "acc{i % 2} if length(acc) > 1 else -1.0", "sum { a | a in acc }",
                       "real(ks[length(ks) - 1])", "acc[i]"])  # (acc[i]: past the end for some strands: error[input])
    stab = rnd.choice(["stabilize;", "if (t > 4.0) stabilize;", "if (i == 2) die; if (n > 12) stabilize;"])
    return SEQ.format(hi=rnd.randint(1, 5), body=body, tail=tail, stab=stab)


@needs_cc
@pytest.mark.parametrize("seed", range(10))
def test_sequences_of_any_length_a_method_makes_run_in_c(seed):
    from tensorlang.errors import TensorLangError
    p = _prog(_seq_variant(seed))
    assert strand_plan(p.checked)[1] is None
    try:
        want = p.run({}, backend="interp", limit=4)
    except TensorLangError as exc:  # an index past a sequence's end: the same error from C
        with pytest.raises(TensorLangError) as info:
            p.run({}, backend="c", limit=4)
        assert (info.value.code, str(info.value)) == (exc.code, str(exc))
        return
    got, _ = agree(p, {}, limit=4)
    assert got.outputs.keys() == want.outputs.keys()


@needs_cc
def test_a_method_whose_sequences_pass_the_arena_is_refused_clearly(monkeypatch):
    """The arena grows to the memory budget's share of a thread, and past it the run is error[too-large]."""
    from tensorlang.errors import TensorLangError
    text = """#version 2.0
strand S (int i) { output int n = 0; update { real[] s = {1.0}; foreach (int k in 0..21) { s = s @ s; } n = length(s); stabilize; } }
create_array { S(i) | i in 0..1 }
"""
    p = _prog(text)
    assert p.run({}, backend="interp").outputs["n"].tolist() == [2 ** 22] * 2
    assert p.run({}, backend="c").outputs["n"].tolist() == [2 ** 22] * 2
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2 ** 25))  # 2^21 cells a thread: s @ s of 2^21 takes more
    with pytest.raises(TensorLangError, match="memory budget gives a thread") as info:
        p.run({}, backend="c")
    assert info.value.code == "too-large"


@needs_cc
def test_a_sequence_grown_item_by_item_runs_in_c():
    """acc = acc @ x copies acc whenever something was made since it last grew: the cells taken grow
    as the square of its length (1,500 items: over a million cells), which a fixed 2^20-cell arena
    refused where the interpreter ran it (review)."""
    text = """#version 2.0
strand S (int i) {
  output real t = 0.0;
  output int n = 0;
  update {
    real[] acc = {};
    foreach (int k in 0..1499) { real[] nb = {real(k), real(i)}; acc = acc @ sum { x | x in nb }; }
    n = length(acc);
    t = sum { a | a in acc };
    stabilize;
  }
}
create_collection { S(i) | i in 0..1 }
"""
    got, _ = agree(_prog(text), {})
    assert got.outputs["n"].tolist() == [1500, 1500]


NEIGHBOURS = """#version 2.0
input real r = 1.6;
real gsum = 0.0;
strand S (int i) {
  vec2 pos = [real(i % 4), real(i / 4)];
  output real near = 0.0;
  output int cnt = 0;
  int t = 0;
  update {
    real[] ds = {};
    foreach (S n in sphere(r)) { ds = ds @ |n.pos - pos|; }
    real[] ws = { 1.0 / (1.0 + d) | d in ds };
    near = sum { w | w in ws } + gsum;
    cnt = length(ds);
    t += 1;
    if (t > 2) stabilize;
  }
}
global {
  real[] xs = { 0.5 * real(k) | k in 0..3 };
  xs = xs @ (mean { s.near | s in S.all });
  gsum = sum { x | x in xs };
  print(xs, " ", length(xs), "\\n");
}
create_collection { S(i) | i in 0..11 }
"""


@needs_cc
@pytest.mark.parametrize("r", [0.9, 1.6, 3.0])
def test_sequences_in_a_sphere_query_and_in_the_global_block_run_in_c(r):
    agree(_prog(NEIGHBOURS), {"r": r})


@needs_cc
def test_an_index_past_a_local_sequence_is_the_interpreters_error():
    from tensorlang.errors import TensorLangError
    p = _prog("""#version 2.0
strand S (int i) { output real y = 0.0; update { real[] s = { real(k) | k in 0..i }; y = s[3 - i]; stabilize; } }
create_collection { S(i) | i in 0..3 }
""")
    errors = []
    for backend in ("interp", "c"):
        with pytest.raises(TensorLangError) as info:
            p.run({}, backend=backend)
        errors.append((info.value.code, str(info.value)))
    assert errors[0] == errors[1] and errors[0][0] == "input" and "sequence index out of range" in errors[0][1]


INIT = """#version 2.0
input real[2] pair = {{0.25, 0.75}};
input int m = 2;
real gi = 0.0;
int base = 1;
initialize {{ {init} }}
strand S (int i) {{
  output real u = 0.0;
  update {{ u = gi + real(i * base); {upd} stabilize; }}
}}
update {{ gi += 1.0; }}
create_collection {{ S(i) | i in 0..base }}
"""


@needs_cc
@pytest.mark.parametrize("init, upd", [
    ("gi = pair[0] + pair[1]; base = base * 3 + m;", ""),
    ('base = m + 4; print("init ", gi, " ", base, "\\n");', 'print(i, " ", gi, "\\n");'),
    ("if (m > 2) { base = 7; } else { gi = -1.5; }", "if (i == 1) die;"),
])
def test_the_initialize_block_runs_before_the_strands_of_a_c_run(init, upd):
    p = _prog(INIT.format(init=init, upd=upd))
    for m in (2, 5):
        agree(p, {"m": m})


@needs_cc
def test_globalinit_in_c_prints_what_diderotc_does():
    from pathlib import Path
    p = _prog((Path(__file__).parent / "more" / "globalinit.diderot").read_text())
    res = p.run({}, backend="c")
    assert p.executor_note is None and res.outputs["u"].tolist() == [1.0, 2.0, 3.0] and res.printed == "0 1\n1 1\n2 1\n"


@needs_cc
def test_a_field_of_a_global_the_initialize_block_assigns_keeps_its_first_value_in_c():
    """Also where the global is read inside a computed operand or a function (review: C kept
    the block's value of c there, the interpreter and diderotc its first).  Such programs fell
    back to the interpreter; C reads the first value from a slot of its own (c@0) now."""
    text = """#version 2.0
input image(2)[] img;
real c = 1.0;
function real sc() = c * 2.0;
field#0(2)[] F = c * (img ⊛ tent);
field#0(2)[] G = (c * 2.0) * (img ⊛ tent);
field#0(2)[] H = sc() * (img ⊛ tent);
initialize { c = 2.0; }
strand S (int i) { output vec3 y = [0.0, 0.0, 0.0]; update { y = [F([0.5, 0.5]), G([0.5, 0.5]), H([0.5, 0.5])]; stabilize; } }
create_collection { S(i) | i in 0..1 }
"""
    a, _ = agree(_prog(text), {"img": np.arange(16.0).reshape(4, 4)}, threads=False)
    assert a.outputs["y"].tolist() == [[2.5, 5.0, 5.0]] * 2


@needs_cc
def test_the_empty_sequence_takes_its_targets_type_in_c():
    """``{}`` assigned, returned, on either side of ``@``: its items take the type the place
    wants (review: each fell back with "values of type void" while the declaration ran in C).  (``s @ {}``
    of a sequence ``s`` is ``{s}``, a sequence of sequences, as in diderotc: test_unseen_programs.py)"""
    text = """#version 2.0
function real[] none() = {};
strand S (int i) {
  output int n = 0;
  output real t = 0.0;
  update {
    real[] a = {};
    a = {};
    a = real(i) @ {};
    a = ({} @ 1.0) @ a;
    a = a @ none();
    n = length({} @ real(i)) + length(none());
    t = sum { x | x in a };
    stabilize;
  }
}
create_collection { S(i) | i in 0..3 }
"""
    got, _ = agree(_prog(text), {})
    assert got.outputs["n"].tolist() == [1, 1, 1, 1]


#: statements over the state's sequences of any length (outputs and not): kept across steps, read, reset, grown
KEPT_PARTS = [
    "hist = hist @ (real(t) * 0.5 - real(i));",
    "hist = real(t * t) @ hist;",
    "if (t % 2 == i % 2) { hist = hist @ {real(t), -1.0}; }",
    "ks = ks @ (t * i - 3);",
    "vs = vs @ [real(t), real(length(hist))];",
    "hist = { h + 1.0 | h in hist };",
    "if (length(ks) > 2) { ks = { k / 2 | k in ks }; }",
    "bs = { h > 1.0 | h in hist };",
    "if (length(hist) > 5) { hist = {}; }",
    "tmp = hist; hist = ks2r(ks); ks = { i + length(tmp) | x in tmp };",
    "u += sum { h | h in hist } + real(length(vs));",
    "foreach (vec2 v in vs) { u += v[0] - 0.25 * v[1]; }",
    'print(i, " ", t, " ", hist, " ", ks, " ", bs, "\\n");',
    "if (i == 1 && t == 2) new S(i + 7);",
]
KEPT = """#version 2.0
function real[] ks2r(int[] ks) = {{ real(k) | k in ks }};
strand S (int i) {{
  output real[] hist = {init};
  output int[] ks = {{i}};
  output vec2{{}} vs = {{}};
  output bool[] bs = {{}};
  output real u = 0.0;
  real[] tmp = {{}};
  int t = 0;
  update {{
    t += 1;
    {body}
    {stab}
  }}
  {stabilize}
}}
create_collection {{ S(i) | i in 0..3 }}
"""


def _kept_variant(seed: int) -> str:
    import random
    rnd = random.Random(seed)
    body = " ".join(rnd.sample(KEPT_PARTS, rnd.randint(3, 7)))
    stab = rnd.choice(["if (t > 2) stabilize;", "if (t > i + 1) stabilize;", "if (i == 2 && t == 2) die; if (t > 3) stabilize;",
                       "if (t > 2) u += hist[length(hist) - 1 - i]; if (t > 3) stabilize;"])  # (past the start: error[input])
    stabilize = rnd.choice(["", "stabilize { hist = hist @ u; ks = {}; }", "stabilize { u = real(length(hist) + length(vs)); }"])
    return KEPT.format(body=body, stab=stab, stabilize=stabilize, init=rnd.choice(["{}", "{real(i)}", "{ real(k) | k in 0..i }"]))


@needs_cc
@pytest.mark.parametrize("seed", range(12))
def test_sequences_of_any_length_in_the_state_and_outputs_run_in_c(seed):
    """Kept across steps (each strand's block), stable strands keep theirs, new ones get theirs, snapshots
    read them as they were; outputs of reals, ints, vectors and bools as the interpreter gives them."""
    from tensorlang.errors import TensorLangError
    from agreement import same
    p = _prog(_kept_variant(seed))
    assert strand_plan(p.checked)[1] is None
    try:
        want = p.run({}, backend="interp", limit=6)
    except TensorLangError as exc:  # an index past a sequence's start: the same error from C
        with pytest.raises(TensorLangError) as info:
            p.run({}, backend="c", limit=6)
        assert (info.value.code, str(info.value)) == (exc.code, str(exc))
        return
    got, _ = agree(p, {}, limit=6)
    assert got.outputs.keys() == want.outputs.keys()
    snaps: dict = {"interp": [], "c": []}
    for be in snaps:
        p.run({}, backend=be, limit=6, snapshot=2, on_snapshot=lambda k, r, be=be: snaps[be].append((k, r)), threads=2)
    assert [k for k, _ in snaps["interp"]] == [k for k, _ in snaps["c"]]
    for (_, a), (_, b) in zip(snaps["interp"], snaps["c"]):
        same(a, b)


@needs_cc
def test_the_states_sequences_past_the_memory_budget_are_refused_clearly(monkeypatch):
    """Each strand's kept block counts: past half the budget, error[too-large] at the assignment (the
    interpreter bounds each sequence alone: it runs this)."""
    from tensorlang.errors import TensorLangError
    p = _prog("""#version 2.0
strand S (int i) { output real[] h = {1.0}; int t = 0; update { h = h @ h; t += 1; if (t >= 14) stabilize; } }
create_collection { S(i) | i in 0..99 }
""")
    assert [len(h) for h in p.run({}, backend="c", threads=2).outputs["h"]] == [2 ** 14] * 100
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2 ** 24))  # 2^20 cells kept in all: 100 strands of 2^14 take more
    with pytest.raises(TensorLangError, match="the strands' state") as info:
        p.run({}, backend="c")
    assert info.value.code == "too-large" and "2:65" in str(info.value)


#: a global sequence of any length the global block (or the initialize block) assigns, grows, resets; the strands read it
GSEQ_PARTS = [
    "hist = hist @ (mean { s.y | s in S.all });",
    "ks = ks @ numActive();",
    "if (length(hist) > 3) { hist = { h * 0.5 | h in hist }; }",
    "vs = vs @ [real(length(ks)), max { s.y | s in S.all }];",
    "if (length(ks) > 2) { ks = {}; }",
    'print(length(hist), " ", hist, " ", ks, " ", vs, "\\n");',
    "hist = {1.0, -2.0} @ hist;",
]
GSEQ = """#version 2.0
input real{{}} xs = {{0.5, -1.0}};
real[] hist = xs;
int[] ks = {{}};
vec2[] vs = {{}};
initialize {{ {init} }}
strand S (int i) {{
  output real y = 0.0;
  int t = 0;
  update {{
    t += 1;
    y += {read};
    foreach (int k in ks) {{ y += real(k) * 0.125; }}
    foreach (vec2 v in vs) {{ y -= v[0] - v[1]; }}
    if (t == {steps}) stabilize;
  }}
}}
update {{ {body} }}
create_collection {{ S(i) | i in 0..3 }}
"""


def _gseq_variant(seed: int) -> str:
    import random
    rnd = random.Random(seed)
    return GSEQ.format(body=" ".join(rnd.sample(GSEQ_PARTS, rnd.randint(2, 5))), steps=rnd.randint(2, 5),
                       init=rnd.choice(["", "hist = hist @ 2.0;", "ks = {1, 2} @ ks; hist = {};"]),
                       read=rnd.choice(["hist[length(hist) - 1] + real(i)", "sum { h | h in hist }",
                                        "hist[i] if i < length(hist) else -1.0", "hist[i]"]))  # (hist[i]: past its end: error[input])


@needs_cc
@pytest.mark.parametrize("seed", range(10))
def test_a_global_sequence_the_global_block_assigns_runs_in_c(seed):
    from tensorlang.errors import TensorLangError
    p = _prog(_gseq_variant(seed))
    assert strand_plan(p.checked)[1] is None
    for xs in ([0.5, -1.0], [], [3.0, 1.0, 4.0, 1.0, 5.0]):
        try:
            want = p.run({"xs": xs}, backend="interp", limit=6)
        except TensorLangError as exc:
            with pytest.raises(TensorLangError) as info:
                p.run({"xs": xs}, backend="c", limit=6)
            assert (info.value.code, str(info.value)) == (exc.code, str(exc))
            continue
        got, _ = agree(p, {"xs": xs}, limit=6)
        assert got.printed == want.printed


@needs_cc
def test_an_initialize_block_appending_to_a_global_sequence_runs_in_c():
    """It fell back, its reason a value of a type the strands read (review): it runs in Python before the strands."""
    p = _prog("""#version 2.0
real[] hist = {1.0};
initialize { hist = hist @ 2.0; hist = { h * 3.0 | h in hist } @ hist; }
strand S (int i) { output real y = 0.0; update { y = hist[i] + real(length(hist)); stabilize; } }
create_collection { S(i) | i in 0..3 }
""")
    got, _ = agree(p, {})
    assert got.outputs["y"].tolist() == [7.0, 10.0, 5.0, 6.0]


#: a strand's start method: state set once the strand is made, stabilize or die there (the stabilize method runs);
#: the global start block before it (its stabilize does nothing)
START_PARTS = [
    "y = scale * real(i);",
    "if (i % 3 == 0) stabilize;",
    "if (i == 4) die;",
    "hist = hist @ real(i * i);",
    "n = length(hist) + base;",
    'print("start ", i, " ", y, "\\n");',
    "if (y > 2.0) { n = -n; continue; }",
    "foreach (int k in 0..i) { y += real(k) * 0.5; }",
]
START = """#version 2.0
int base = 0;
real scale = 1.0;
initialize {{ base = 3; scale = 0.5 * real(base); }}
strand S (int i) {{
  output real y = 0.0;
  output int n = 0;
  output real[] hist = {{}};
  {start_kw} {{ {start} }}
  update {{
    n += 1;
    y = y + real(base);
    hist = hist @ y;
    if (n >= i) stabilize;
  }}
  {stabilize}
}}
{glob}
{gstart}
create_{how} {{ S(i) | i in 0..7 }}
"""


def _start_variant(seed: int) -> str:
    import random
    rnd = random.Random(seed)
    start = " ".join(rnd.sample(START_PARTS, rnd.randint(2, 5)))
    return START.format(start_kw=rnd.choice(["start", "initialize"]), start=start, stabilize=rnd.choice(["", "stabilize { y = -y; }"]),
                        how=rnd.choice(["collection"] if "die" in start else ["collection", "array"]),
                        gstart=rnd.choice(["", 'start { base = base * 2; scale = -scale; print("gstart ", numActive(), " ", base, "\\n"); }',
                                           "start { if (base > 2) { base = 1; stabilize; } scale += 1.0; }"]),
                        glob=rnd.choice([""] if "die" in start else ["", 'update { base += 1; print(base, " ", numActive(), " ", numStable(), " ", '
                                             'sum { s.y | s in S.all }, "\\n"); }']))


@needs_cc
@pytest.mark.parametrize("seed", range(10))
def test_a_strands_start_method_runs_in_c(seed):
    """(Beside new, counts and the permuted order: test_strand_c_fallbacks_2.py.)"""
    from agreement import same
    p = _prog(_start_variant(seed))
    assert strand_plan(p.checked)[1] is None
    agree(p, {}, limit=9)
    snaps: dict = {"interp": [], "c": []}
    for be in snaps:
        p.run({}, backend=be, limit=9, snapshot=3, on_snapshot=lambda k, r, be=be: snaps[be].append((k, r)))
    assert [k for k, _ in snaps["interp"]] == [k for k, _ in snaps["c"]]
    for (_, a), (_, b) in zip(snaps["interp"], snaps["c"]):
        same(a, b)


NESTED = """#version 2.0
input real r = 1.6;
input real r2 = 1.1;
strand S (int i) {{
  vec2 pos = [real(i % 4) + 0.1 * real(i / 4), real(i / 4)];
  output real near = 0.0;
  output int cnt = 0;
  int t = 0;
  update {{
    foreach (S a in sphere(r)) {{
      {inner}
    }}
    t += 1;
    {move}
    if (t > 2) stabilize;
  }}
}}
{glob}
create_collection {{ S(i) | i in 0..11 }}
"""
NESTED_INNER = [
    "foreach (S b in sphere(r2)) { near += |a.pos - b.pos| + 0.01 * real(cnt); cnt += 1; }",
    "near += sum { |b.pos - pos| | b in sphere(r2) } - a.near; cnt += sum { 1 | b in sphere(r2) };",
    "foreach (S b in sphere(a.pos, r2)) { near += b.near * 0.5 - a.near; cnt += 1; }",
    "real[] ds = {}; foreach (S b in sphere(r2)) { ds = ds @ |b.pos - a.pos|; } near += max { d | d in ds } if length(ds) > 0 else -1.0;",
]


@needs_cc
@pytest.mark.parametrize("inner", NESTED_INNER)
@pytest.mark.parametrize("move, glob", [("", ""), ("pos = pos + [0.05 * near, -0.02 * real(cnt)];", ""),
                                        ("", 'update { print(sum { s.near | s in S.all }, "\\\\n"); }')])
def test_a_sphere_query_inside_another_runs_in_c(inner, move, glob):
    """Its neighbours read in C as j1 (space m), the outer query's copied into the arena first."""
    p = _prog(NESTED.format(inner=inner, move=move, glob=glob))
    assert strand_plan(p.checked)[1] is None
    for r, r2 in ((1.6, 1.1), (0.9, 3.0), (3.0, 0.5)):
        agree(p, {"r": r, "r2": r2})


# ------------------------------------------------ a review of the merges above (nested folds, start blocks)
NESTED_FOLD = """#version 2.0
strand S (int i) {
  vec2 pos = [real(i % 4), real(i / 4)];
  output real x = real(i * i);
  output real c = 0.0;
  update { c = sum { sum { p.x | q in sphere(1.5) } | p in sphere(1.1) }; stabilize; }
}
create_collection { S(i) | i in 0..11 }
"""


@needs_cc
def test_a_fold_inside_another_query_reads_the_outer_neighbour():
    """The inner fold reads the outer query's neighbour ``p``: folded in bulk with the strands'
    own blocks (tl_bk_fill) it read the inner one (C gave 84 where the interpreter gives 51)."""
    a, _ = agree(_prog(NESTED_FOLD))
    assert list(a.outputs["c"][:3]) == [51.0, 145.0, 230.0]


START_RADIUS = """#version 2.0
input real{} xs = {1.0};
input int n = 10;
real r = 1.0;
strand S (int i) {
  vec2 pos = [real(i), 0.0];
  output int c = 0;
  update { c = sum { 1 | p in sphere(r) }; stabilize; }
}
start { r = xs[0]; print("start ", numStrands(), "\\n"); }
create_collection { S(i) | i in 0..n-1 }
"""


@needs_cc
def test_a_global_start_block_beside_a_sphere_query_runs_in_c_and_its_radius_is_not_kept_across_calls():
    """The global start block's C function had the name of the neighbour grid's table (the C
    did not compile); a radius it sets was taken as steady, its neighbour lists kept from the
    call before; with no strand it printed nothing."""
    p = _prog(START_RADIUS)
    counts = [list(agree(p, {"xs": [x]})[1].outputs["c"]) for x in (3.5, 1.5, 3.5)]
    assert counts[0] == counts[2] == [3, 4, 5, 6, 6, 6, 6, 5, 4, 3] and counts[1] == [1, 2, 2, 2, 2, 2, 2, 2, 2, 1]
    _, none = agree(p, {"n": 0})
    assert none.printed == "start 0\n"


@needs_cc
def test_a_nested_query_in_a_loop_gives_its_arena_cells_back(monkeypatch):
    """Each pass of the outer query copies its neighbours into the arena: they were held until the
    method ended, so 4,000 passes took more than a thread's share (error[too-large], no position)."""
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2 ** 18))  # 2^14 cells a thread
    a, _ = agree(_prog("""#version 2.0
strand S (int i) {
  real pos = 0.1 * real(i);
  output real c = 0.0;
  update { foreach (int t in 0..3999) { c += sum { sum { 1.0 | q in sphere(1.5) } | p in sphere(1.1) }; } stabilize; }
}
create_collection { S(i) | i in 0..5 }
"""))
    assert a.outputs["c"].tolist() == [100000.0] * 6
    agree(_prog("""#version 2.0
strand S (int i) {
  real pos = 0.1 * real(i);
  output real c = 0.0;
  update {
    real[] ds = {}; real[] es = {1.0};
    foreach (int t in 0..2) { foreach (S p in sphere(1.1)) { ds = ds @ sum { q.pos | q in sphere(1.5) }; es = {1.0, p.pos}; } }
    c = sum { d | d in ds } + es[1] + real(length(ds)); stabilize;
  }
}
create_collection { S(i) | i in 0..5 }
"""))  # (its cells kept: the body sets sequences declared before it)


@needs_cc
def test_a_method_loads_only_the_kept_sequences_it_names(monkeypatch):
    """``update`` never names ``hist``: it is no longer copied into the arena each step, so its
    cells do not count against the method's share of a thread (two threads failed where one ran)."""
    p = _prog("""#version 2.0
input int m = 100000;
strand S (int i) {
  output real{} hist = { real(k) | k in 0..m-1 };
  output int k = 0;
  update { real{} s = { real(j) | j in 0..m-1 }; k += length(s); if (k >= 3 * m) stabilize; }
}
create_collection { S(i) | i in 0..0 }
""")
    agree(p, {"m": 50})
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2 ** 22))  # 2^17 cells a thread of two: hist and s take more
    for threads in (1, 2):
        assert p.run({}, backend="c", threads=threads).outputs["k"].tolist() == [300000]
