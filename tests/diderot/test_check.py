"""Ill-typed Diderot programs: each class of error has its code and position."""

from __future__ import annotations

import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program
from tensorlang.lang.diderot import typecheck as check

HEAD = """#version 1.0
input image(2)[] img;
field#0(2)[] F0 = tent ⊛ img;
field#1(2)[] F1 = ctmr ⊛ img;
"""


def program(update: str, globals_: str = "") -> str:
    return (HEAD + globals_ + "strand s (int i) {\n  output real out = 0;\n  update {\n    " + update +
            "\n    stabilize;\n  }\n}\ninitially [ s(i) | i in 0..1 ];\n")


def error_of(text: str) -> TensorLangError:
    with pytest.raises(TensorLangError) as info:
        check(parse_program(text))
    return info.value


def test_a_well_typed_program_checks():
    check(parse_program(program("vec2 g = ∇F1([0.5, 0.5]);\n    out = g[0] + F0([1, 1]);")))


@pytest.mark.parametrize("update, code, col", [
    ("vec2 g = ∇F0([0.5, 0.5]);", "continuity", 14),      # derivative of a C0 field
    ("real v = F1([0.5, 0.5, 0.5]);", "shape", 14),       # probe at the wrong dimension
    ("real v = [1, 2, 3];", "assign-shape", 14),          # vec3 stored in a real
    ("real v = frobnicate(1.0);", "undeclared", 14),      # unknown function
    ("real v = w + 1;", "undeclared", 14),                 # unknown variable
    ("out = true;", "assign-shape", 11),                   # bool into real
    ("real v = [1, 2] • [1, 2, 3];", "shape", 14),        # contraction of mismatched vectors
    ("if (1) { out = 2; }", "shape", 9),                   # condition not bool
    ("i = 2;", "read-only", 5),                            # a strand parameter
])
def test_each_error_class_has_its_code_and_position(update, code, col):
    err = error_of(program(update))
    assert err.code == code
    assert err.line == 8 and err.col == col


def test_redeclared_global():
    err = error_of(program("out = 1;", "real F1 = 2;\n"))
    assert err.code == "redeclared" and err.line == 5


def test_a_state_variable_or_a_local_declared_twice_is_redeclared_where_it_is():
    state = error_of(program("", "").replace("output real out = 0;", "output real out = 0;\n  real out = 1;"))
    local = error_of(program("real v = 1;\n    real v = 2;"))
    assert (state.code, state.message, state.diagnostics[0].span.line) == ("redeclared", "out is declared twice", 7)
    assert (local.code, local.message) == ("redeclared", "v is declared twice in this block")
    assert local.diagnostics[0].span.line == 9


def test_field_declared_smoother_than_its_kernel():
    err = error_of(program("out = 1;", "field#2(2)[] G = ctmr ⊛ img;\n"))
    assert err.code == "assign-shape" and err.line == 5


def test_every_expression_kind_has_a_typing_rule_and_an_interpreter_rule():
    """The checker types (``Checker.e_KIND``) and the interpreter compiles
    (``Compiler.e_KIND``) each kind of ``ast.Expr`` by a method of its name: a new kind
    lists here until both have one."""
    import typing

    from tensorlang.lang.diderot import ast as A
    from tensorlang.lang.diderot.check import Checker
    from tensorlang.lang.diderot.interp import Compiler

    kinds = typing.get_args(A.Expr)
    assert len(kinds) >= 23
    assert [f"{who.__name__}.e_{k.__name__}" for who in (Checker, Compiler) for k in kinds
            if not hasattr(who, f"e_{k.__name__}")] == []


@pytest.mark.parametrize("stmt, where", [("stabilize;", "a function"), ("die;", "a function"),
                                         ("continue;", "the global block"), ("new s(1);", "the global block"),
                                         ("return 1.0;", "a strand method")])
def test_a_statement_out_of_its_place_is_a_syntax_error(stmt, where):
    if where == "a function":
        text = program("", "function real f(real x) { " + stmt + " return x; }\n")
    elif where == "the global block":
        text = program("").replace("\ninitially [", "\nglobal { " + stmt + " }\ninitially [")
    else:
        text = program(stmt)
    e = error_of(text)
    assert e.code == "syntax" and f"{stmt.split()[0].rstrip(';')} is allowed only in" in str(e)


def test_every_statement_kind_has_its_checking_rule_unless_it_only_stands_somewhere():
    """``Checker.s_KIND`` checks a statement of that kind (``stabilize``, ``die`` and
    ``continue`` have only their places, ``check.PLACES``); the uninitialized-variable rule
    dispatches the same way, the kinds that only read values falling to ``s_other``."""
    from typing import get_args

    from tensorlang.lang.diderot import ast as syntax
    from tensorlang.lang.diderot.check import PLACES, Checker, _Inits
    kinds = {cls.__name__ for cls in get_args(syntax.Stmt)}
    bare = {"Stabilize", "Die", "Continue"}
    assert {k for k in kinds if hasattr(Checker, "s_" + k)} == kinds - bare
    assert {cls.__name__ for cls in PLACES} >= bare
    assert {k for k in kinds if hasattr(_Inits, "s_" + k)} == {"Block", "Decl", "Assign", "If", "Foreach"}


def test_the_divergence_of_a_1d_field_is_refused_as_diderotc_refuses_a_tensor_axis_of_one():
    text = ("#version 1.0\ninput image(1)[1] img;\nfield#2(1)[1] V = bspln3 ⊛ img;\nstrand s (int i) {\n"
            "  output real a = 0;\n  update {\n    a = (∇•V)(0.5);\n    stabilize;\n  }\n}\ninitially [ s(i) | i in 0..1 ];\n")
    err = error_of(text)  # (the interpreter failed with error[internal] on it; C gave numbers)
    assert err.code == "shape" and err.line == 7 and "dimension 2 or 3" in err.message
