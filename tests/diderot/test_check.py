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


def test_field_declared_smoother_than_its_kernel():
    err = error_of(program("out = 1;", "field#2(2)[] G = ctmr ⊛ img;\n"))
    assert err.code == "assign-shape" and err.line == 5
