"""Diderot programs drawn from a small grammar by hypothesis' structural strategies
(issue 41): expressions and statements nested at random, with names taken from C,
CPython and the generated code, extreme numbers and every operator.  Each is checked and
run in the interpreter for at most 3 super-steps: it works or raises a TensorLangError
whose code is not ``internal``; anything else is a bug."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import tensorlang as tl
import tensorlang.lang.diderot as D

from fuzz import oracle
from hostile.diderot_corpus import C_NAMES

NAMES = st.sampled_from(["x", "y", "k", *C_NAMES[:40]])
NUMBERS = st.sampled_from(["0", "1", "7", "-1", "9223372036854775807", str(2**64), "0.0", "1.5", "1e308",
                           "1e-320", "∞", "π", "nan"])
OPS = st.sampled_from(["+", "-", "*", "/", "%", "^", "<", "==", "&&", "||", "•", "⊗", "×"])


def _expr(children):
    return st.one_of(
        st.tuples(children, OPS, children).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["-", "!"]), children).map(lambda t: f"{t[0]}{t[1]}"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.tuples(st.sampled_from(["sqrt", "abs", "real", "length", "normalize", "f"]), children)
        .map(lambda t: f"{t[0]}({t[1]})"),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.tuples(children, children).map(lambda t: f"{t[0]}[{t[1]}]"),
    )


EXPR = st.recursive(st.one_of(NAMES, NUMBERS), _expr, max_leaves=12)


def _stmt(children):
    return st.one_of(
        st.tuples(EXPR, children, children).map(lambda t: f"if ({t[0]}) {{ {t[1]} }} else {{ {t[2]} }}"),
        st.tuples(NAMES, EXPR, children).map(lambda t: f"foreach (int {t[0]} in 0..{t[1]}) {{ {t[2]} }}"),
        st.lists(children, min_size=1, max_size=3).map(" ".join),
    )


LEAF_STMT = st.one_of(
    st.tuples(st.sampled_from(["x", "k"]), st.sampled_from(["=", "+=", "/=", "%="]), EXPR)
    .map(lambda t: f"{t[0]} {t[1]} {t[2]};"),
    st.tuples(st.sampled_from(["real", "int", "vec2", "bool"]), NAMES, EXPR).map(lambda t: f"{t[0]} {t[1]} = {t[2]};"),
    st.sampled_from(["stabilize;", "die;", "continue;", "new S(1);", 'print(x, "\\n");']),
)
STMT = st.recursive(LEAF_STMT, _stmt, max_leaves=8)


@st.composite
def programs(draw):
    strand = draw(st.sampled_from(["S", "main", "NULL", "tl_state", "Py_None"]))
    body = draw(STMT).replace("new S(", f"new {strand}(")
    grid = draw(st.sampled_from(["[ {s}(i) | i in 0..{n} ]", "{{ {s}(i) | i in 0..{n} }}"]))
    n = draw(st.sampled_from(["0", "2", "n", "-3"]))
    return ("#version 2.0\ninput int n = 2;\nfunction real f(real a) = a * 2.0;\n"
            f"strand {strand} (int i) {{\n  output real x = 0.0;\n  int k = i;\n  update {{ {body} }}\n}}\n"
            f"initially {grid.format(s=strand, n=n)};\n")


@oracle.fuzz_settings(60)
@given(programs())
def test_generated_diderot_programs_run_or_fail_with_a_code(text):
    try:
        program = D.strands(D.typecheck(D.parse_program(text)))
        program.run({}, backend="interp", limit=3)
    except tl.TensorLangError as exc:
        assert exc.code != "internal", exc.render() + "\n" + text
    except RecursionError:  # pragma: no cover - the parse above runs outside a guarded entry point
        raise
