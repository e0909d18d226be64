"""The Diderot grammar: both versions' spellings, Unicode and ASCII operators,
precedence, error[syntax] at positions, and every public example (when its mirror is here)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import ast as A
from tensorlang.lang.diderot.parse import parse_program

HERE = Path(__file__).parent / "programs"
MIRROR = Path("/work/.mirror/Diderot-Language+examples/repo")


def wrap(expr: str, version: str = "1.0") -> A.Expr:
    text = f"#version {version}\nstrand s () {{ output real x = {expr}; update {{ stabilize; }} }}\ninitially [ s() | i in 0..0 ];\n"
    return parse_program(text).strand.state[0].init


def test_programs_in_both_versions_parse():
    one = parse_program((HERE / "countdown.diderot").read_text())
    two = parse_program((HERE / "neighbours.diderot").read_text())
    assert one.version == "1.0" and one.create.grid and one.update is not None
    assert two.version == "2.0" and not two.create.grid
    assert [m for m, _ in one.strand.methods] == ["update", "stabilize"]


def test_precedence_power_binds_tighter_than_minus_and_is_right_associative():
    e = wrap("-a^b^c")
    assert isinstance(e, A.Unary) and isinstance(e.operand, A.BinOp) and e.operand.op == "^"
    assert isinstance(e.operand.right, A.BinOp) and e.operand.right.op == "^"


def test_conditional_expression_and_norm():
    e = wrap("|x| if a < b else 2")
    assert isinstance(e, A.Cond) and isinstance(e.then, A.Norm)


@pytest.mark.parametrize("ascii_, uni", [("a (*) b", "⊛"), ("a \\dot b", "•"), ("a \\otimes b", "⊗"),
                                         ("a \\times b", "×"), ("a ⋅ b", "•")])
def test_ascii_spellings_read_as_the_unicode_operators(ascii_, uni):
    assert wrap(ascii_).op == uni


def test_derivative_spellings():
    assert wrap("\\nabla\\otimes F(x)").func.op == "∇⊗"
    assert wrap("∇F(x)").func.op == "∇"
    assert wrap("\\pi").value == pytest.approx(3.141592653589793)


def test_reduction_and_sequence_index():
    e = wrap("sum { P.x | P in s.all } + e{1}")
    assert isinstance(e.left, A.Apply) and isinstance(e.left.args[0], A.Comprehension)
    assert isinstance(e.right, A.SeqIndex)


def test_syntax_error_has_a_position():
    with pytest.raises(TensorLangError) as info:
        parse_program("#version 1.0\nstrand s () {\n  output real x = 1 +;\n}\n")
    assert info.value.code == "syntax" and info.value.line == 3


def test_unknown_version_is_refused():
    with pytest.raises(TensorLangError) as info:
        parse_program("#version 3.0\n")
    assert info.value.code == "syntax"


def _examples():
    if not MIRROR.exists():
        return []
    names = subprocess.run(["git", "-C", str(MIRROR), "ls-tree", "-r", "--name-only", "HEAD"],
                           capture_output=True, text=True, check=False).stdout.split()
    return [n for n in names if n.endswith(".diderot")]


@pytest.mark.skipif(not MIRROR.exists(), reason="the examples' mirror is not on this machine")
@pytest.mark.parametrize("name", _examples())
def test_every_public_example_parses_and_typechecks(name):
    from tensorlang.lang.diderot import typecheck as check
    text = subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{name}"], capture_output=True, text=True,
                          check=True).stdout
    check(parse_program(text))


def test_walk_visits_every_node_before_its_children_in_field_order():
    """``ast.walk``, the traversal the analyses share: pre-order, fields in order, tuples
    (a strand's (name, block) methods) flattened, spans and plain values left out."""
    e = wrap("f(1, [a, 2.0]) + -b")
    kinds = [type(n).__name__ for n in A.walk(e)]
    assert kinds == ["BinOp", "Apply", "Var", "Num", "TensorLit", "Var", "Num", "Unary", "Var"]
    program = parse_program((HERE / "countdown.diderot").read_text())
    assert list(A.children(program.strand.methods)) == [body for _, body in program.strand.methods]
    assert not any(isinstance(n, A.Span) for n in A.walk(program))
    assert A.Stabilize in A.kinds(program.strand) and A.New not in A.kinds((program.strand, None))
    assert list(A.walk(None)) == [] and list(A.children("x")) == []
