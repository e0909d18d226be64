"""Features the C executor once left to the interpreter (docs/diderot-compiled.md, "What runs in
C, and what falls back"): each now runs in C (no ``executor_note``) and agrees with the
interpreter, on one thread and on two, over generated variants."""

from __future__ import annotations

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


def test_counting_in_the_initializer_of_strands_made_by_new_falls_back():
    text = """#version 2.0
strand S (int i) { output int a = numStrands(); update { if (i < 2) new S(i + 5); stabilize; } }
create_collection { S(i) | i in 0..2 }
"""
    ir, why = strand_plan(_prog(text).checked)
    assert ir is None and "made by new" in why


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


@pytest.mark.parametrize("scale", ["c", "(c * 2.0)", "sc()"])
def test_a_field_of_a_global_the_initialize_block_assigns_falls_back(scale):
    """Also where the global is read inside a computed operand or a function (review: C kept
    the block's value of c there, the interpreter and diderotc its first)."""
    text = f"""#version 2.0
input image(2)[] img;
real c = 1.0;
function real sc() = c * 2.0;
field#0(2)[] F = {scale} * (img ⊛ tent);
initialize {{ c = 2.0; }}
strand S (int i) {{ output real y = 0.0; update {{ y = F([0.5, 0.5]); stabilize; }} }}
create_collection {{ S(i) | i in 0..1 }}
"""
    assert "initialize block assigns (c)" in strand_plan(_prog(text).checked)[1]


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
