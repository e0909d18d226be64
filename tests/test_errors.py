"""Rejected programs: stable codes, exact positions, typing rules, rendering (SPEC section 5).

Every case in the tables below states by hand where the error must point.  Columns
are 1-based and count characters of the line (see the comment next to each case).
Conventions the tables rely on:

* typing errors of an operator point at the start of the operator's expression (its
  left operand), contraction/transposition errors at the ``[`` of the failing pair;
* statement errors (``undeclared-assign``, ``assign-shape``, ``read-only``) point at the
  assigned variable's name; declaration errors (``redeclared``) at the redeclared name;
  an extent error of a declaration at the start of the declaration;
* ``uninit`` points at the offending read, or at the name of an ``out`` variable in its
  declaration when it is never assigned;
* syntax errors point at the first token (or character) the grammar cannot accept, or
  just past the last character of the program for an unexpected end of input.
"""

from __future__ import annotations

import re

import pytest

import tensorlang as tl
from tensorlang import TensorLangError
from tensorlang.lang.tl.ast import Binary, Contract, Neg, Number, Outer, Pair, Paren, Transpose, Var
from tensorlang.lang.tl.parser import parse_model


def reject(src: str) -> TensorLangError:
    with pytest.raises(TensorLangError) as info:
        tl.check(src)
    return info.value


def prog(*lines: str) -> str:
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- table
# (id, code, rule, source, line, col)
CASES = [
    # ---------------------------------------------------------------- redeclared (s-var)
    ("redecl-third-line", "redeclared", "s-var",
     prog("var A : [2 2]", "var B : [2]", "var A : [2 2]"), 3, 5),          # 'var A': A at col 5
    ("redecl-different-qualifier", "redeclared", "s-var",
     prog("in var x : [3]", "out var y : [3]", "inout var x : [3]", "y = x"), 3, 11),  # 'inout var x'
    ("redecl-indented-after-comment", "redeclared", "s-var",
     prog("var u : []", "var v : []", "// v again, with another shape", "  var   v : [4]"), 4, 9),
    # ---------------------------------------------------------------- undeclared-assign (ok-stmt)
    ("assign-undeclared-c", "undeclared-assign", "ok-stmt",
     prog("var a : [2]", "var b : [2]", "c = a + b"), 3, 1),
    ("assign-undeclared-indented", "undeclared-assign", "ok-stmt",
     prog("var a : [2]", "", "a = a", "  bb = a"), 4, 3),
    ("assign-undeclared-case", "undeclared-assign", "ok-stmt",
     prog("in var a : [2]", "out var b : [2]", "b = a", "B = a"), 4, 1),     # names are case-sensitive
    # ---------------------------------------------------------------- assign-shape (ok-stmt)
    ("assign-shape-outer", "assign-shape", "ok-stmt",
     prog("var A : [2 3]", "var B : [3 2]", "var C : [2 2]", "C = A # B"), 4, 1),
    ("assign-shape-scalar-from-vector", "assign-shape", "ok-stmt",
     prog("var x : [3]", "var s : []", "s = x"), 3, 1),
    ("assign-shape-transposed", "assign-shape", "ok-stmt",
     prog("var M : [2 3]", "var N : [3 2]", "N = M ^ [1 2] // fine", "  M = M ^ [1 2]"), 4, 3),
    # ---------------------------------------------------------------- undeclared (t-var)
    ("undeclared-right-operand", "undeclared", "t-var",
     prog("var x : [2]", "x = x + y"), 2, 9),
    ("undeclared-in-outer", "undeclared", "t-var",
     prog("var A : [2 2]", "var s : []", "s = (A # B) . [[1 3] [2 4]]"), 3, 10),  # 's = (A # B': B at 10
    ("undeclared-under-minus", "undeclared", "t-var",
     prog("var v : [3]", "v = sqrt(v)", "v = -w"), 3, 6),
    # ---------------------------------------------------------------- shape
    ("shape-contr-extents", "shape", "t-contr",
     prog("var A : [2 3]", "var s : []", "s = A . [1 2]"), 3, 9),            # '[' of the pair
    ("shape-contr-extents-group", "shape", "t-contr-group",
     prog("var T : [2 2 3 4]", "var s : []", "s = T . [[1 2] [3 4]]"), 3, 16),  # second pair
    ("shape-elem-plus", "shape", "t-elem",
     prog("var a : [2]", "var b : [3]", "a = a + b"), 3, 5),
    ("shape-elem-minus-no-broadcast", "shape", "t-elem",
     prog("var a : [2 2]", "var b : [2]", "b = b - a . [1 2]"), 3, 5),        # [2] - [] is not allowed
    ("shape-smul-non-scalars", "shape", "t-smul",
     prog("var x : [2]", "var y : [2 2]", "y = y * x"), 3, 5),
    ("shape-smul-nested", "shape", "t-smul",
     prog("var A : [2 2]", "var x : [2]", "x = (A # x) . [2 3]", "x = x + (x * A)"), 4, 10),
    ("shape-sdiv-vector-right", "shape", "t-sdiv",
     prog("var x : [2]", "var y : [2 2]", "y = y / x"), 3, 5),
    ("shape-sdiv-scalar-over-tensor", "shape", "t-sdiv",
     prog("var s : []", "var A : [2]", "A = s / A"), 3, 5),
    ("shape-zero-extent", "shape", "s-var",
     prog("var a : [2]", "out var b : [3 0]"), 2, 1),                        # start of the declaration
    ("shape-zero-extent-first", "shape", "s-var",
     prog("// nothing here", "var z : [0]"), 2, 1),
    # ---------------------------------------------------------------- dim-range
    ("dim-contr-beyond-rank", "dim-range", "t-contr",
     prog("var A : [2 2]", "var s : [2]", "s = A . [1 3]"), 3, 9),
    ("dim-contr-zero", "dim-range", "t-contr",
     prog("var A : [2 2]", "var s : []", "s = A . [0 1]"), 3, 9),
    ("dim-trans-beyond-rank", "dim-range", "t-trans",
     prog("var A : [2 2]", "A = A ^ [2 3]"), 2, 9),
    ("dim-trans-after-contraction", "dim-range", "t-trans",
     prog("var A : [2 2 3]", "var b : [3]", "b = A . [1 2] ^ [1 2]"), 3, 17),  # rank is 1 after '.'
    ("dim-contr-same-dim", "dim-range", "t-contr",
     prog("var A : [2 2]", "var s : []", "s = A . [2 2]"), 3, 9),
    ("dim-group-shared-dim", "dim-range", "t-contr-group",
     prog("var T : [2 2 2 2]", "var s : []", "s = T . [[1 2] [2 3]]"), 3, 16),
    ("dim-group-beyond-rank", "dim-range", "t-contr-group",
     prog("var T : [2 2 2 2]", "var s : []", "s = T . [[1 2] [3 5]]"), 3, 16),
    ("dim-contr-scalar", "dim-range", "t-contr",
     prog("var s : []", "s = (s * s) . [1 2]"), 2, 15),
    ("dim-contr-scalar-literal", "dim-range", "t-contr",
     prog("var s : []", "", "s = 2 . [1 2]"), 3, 9),
    # ---------------------------------------------------------------- read-only (d-in-var)
    ("read-only-in", "read-only", "d-in-var",
     prog("in var a : [2]", "out var b : [2]", "a = a + a", "b = a"), 3, 1),
    ("read-only-late", "read-only", "d-in-var",
     prog("in var a : [2]", "out var b : [2]", "b = a", "   a = b"), 4, 4),
    ("read-only-matrix", "read-only", "d-in-var",
     prog("in var M : [2 2]", "inout var v : [2]", "v = (M # v) . [2 3]", "M = M ^ [1 2]"), 4, 1),
]

SYNTAX_CASES = [
    # (id, source, line, col)
    # missing bracket: the parser notices at the next token
    ("missing-rsqb-shape", "var x : [2 3\nvar y : [2]\n", 2, 1),
    ("missing-rsqb-pair", "var A : [2 2]\nvar s : []\ns = A . [1 2\ns = s", 4, 1),
    ("missing-rpar", "var x : [2]\nx = (x + x\nx = x", 3, 1),
    ("missing-lsqb-shape", "var x : 2]\n", 1, 9),
    # stray tokens
    ("stray-star", "var x : [2]\nx = x * * x\n", 2, 9),
    ("stray-rsqb", "var x : [2]\nx = x ]\n", 2, 7),
    ("stray-number-after-stmt", "var x : [2]\nx = x\n  3 = x\n", 3, 3),
    ("stray-colon", "var x : [2]\n\nx : x\n", 3, 3),
    # bad characters
    ("bad-char-dollar", "var x : [2]\nx = a $ b\n", 2, 7),
    ("bad-char-at", "var x : [2]\nvar y : [2]\ny = x @ x\n", 3, 7),
    ("bad-char-non-ascii", "var x : [2]\nvar \u00e9 : [2]\n", 2, 5),
    # unexpected end of input (no trailing newline: the position is just past the last character)
    ("eof-after-plus", "var x : [2]\nx = x +", 2, 8),
    ("eof-after-equal", "var x : [2]\nx =", 2, 4),
    ("eof-in-shape", "var x : [2", 1, 11),
    ("eof-after-var", "var x : [2]\nvar", 2, 4),
    # reserved words cannot name variables
    ("reserved-exp", "var exp : [2]\n", 1, 5),
    ("reserved-sum", "in var x : [2]\nout var sum : [2]\n", 2, 9),
    ("reserved-in", "var in : [2]\n", 1, 5),
    ("reserved-var", "var a : []\n  var var : []\n", 2, 7),
    # '#' binds tighter than the postfix operators: 'x . [1 2] # y' does not parse
    ("hash-after-contract", "var x : [2 2]\nvar y : [2]\nx = x . [1 2] # y\n", 3, 15),
    ("hash-after-transpose", "var x : [2 2]\nx = x ^ [1 2] # x\n", 2, 15),
    # negative extents are not integers of the grammar
    ("negative-extent", "var x : [-2]\n", 1, 10),
]


@pytest.mark.parametrize("name,code,rule,src,line,col", CASES, ids=[c[0] for c in CASES])
def test_rejected_with_code_position_and_rule(name, code, rule, src, line, col):
    err = reject(src)
    assert (err.code, err.line, err.col) == (code, line, col), str(err)
    assert err.rule == rule, str(err)
    assert len(err.diagnostics) == 1, str(err)
    # the rendering carries the same facts
    first = str(err).splitlines()[0]
    assert first.startswith(f"<string>:{line}:{col}: error[{code}]: ")
    assert f"rule: {rule}" in str(err)


@pytest.mark.parametrize("name,src,line,col", SYNTAX_CASES, ids=[c[0] for c in SYNTAX_CASES])
def test_syntax_errors(name, src, line, col):
    err = reject(src)
    assert (err.code, err.line, err.col) == ("syntax", line, col), str(err)


def test_every_code_has_three_cases():
    codes = [c[1] for c in CASES] + ["syntax"] * len(SYNTAX_CASES)
    for code in ("redeclared", "undeclared-assign", "assign-shape", "undeclared", "shape", "dim-range",
                 "syntax", "read-only"):
        assert codes.count(code) >= 3, code


# --------------------------------------------------------------------------- messages
def test_assign_shape_message_shows_both_types():
    err = reject(prog("var A : [2 3]", "var B : [3 2]", "var C : [2 2]", "C = A # B"))
    assert "[2 2]" in err.message and "[2 3 3 2]" in err.message


def test_shape_messages_name_the_rule_and_types():
    err = reject(prog("var a : [2]", "var b : [3]", "a = a + b"))
    assert "[2]" in err.message and "[3]" in err.message
    assert "t-elem" in str(err)


def test_contraction_extent_message_names_extents():
    err = reject(prog("var A : [2 3]", "var s : []", "s = A . [1 2]"))
    assert "2" in err.message and "3" in err.message


def test_reserved_word_message_names_the_word():
    err = reject("var exp : [2]\n")
    assert "exp" in err.message and "reserved" in err.message


def test_names_that_merely_start_with_keywords_are_fine():
    tl.check(prog("in var input : [2]", "out var outer : [2]", "var expo : [2]", "var variable : [2]",
                  "expo = input", "variable = expo", "outer = variable"))


def test_transposing_a_dimension_with_itself_is_allowed():
    tl.check(prog("var A : [2 3]", "A = A ^ [1 1]"))


def test_grouped_contraction_numbers_dims_before_removal():
    # dims 3 and 4 exist in the operand before [1 2] removes two of them
    tl.check(prog("var T : [2 2 3 3]", "var s : []", "s = T . [[1 2] [3 4]]"))
    # ...but a second, separate contraction counts in the smaller operand
    err = reject(prog("var T : [2 2 3 3]", "var s : []", "s = T . [1 2] . [3 4]"))
    assert (err.code, err.line, err.col, err.rule) == ("dim-range", 3, 17, "t-contr")


# --------------------------------------------------------------------------- uninit
UNINIT_CASES = [
    ("temp-read-before-assigned",
     prog("in var a : [2]", "out var b : [2]", "var t : [2]", "b = a + t", "t = a"), 4, 9),
    ("temp-read-in-own-first-assignment",
     prog("in var a : [2]", "out var b : [2]", "var t : [2]", "t = a + t", "b = t"), 4, 9),
    ("out-never-assigned",
     prog("in var a : [2]", "var t : [2]", "out var r : [2]", "t = a"), 3, 9),
    ("out-never-assigned-indented",
     prog("in var a : [2]", "  out   var r2 : [2]", "out var r1 : [2]", "r1 = a"), 2, 13),
    ("out-read-before-assigned",
     prog("in var x : [2]", "out var y : [2]", "var t : [2]", "t = y + x", "y = t"), 4, 5),
    ("out-read-in-own-first-assignment",
     prog("in var x : [2 2]", "out var y : [2]", "y = (x # y) . [2 3]"), 3, 10),
]


@pytest.mark.parametrize("name,src,line,col", UNINIT_CASES, ids=[c[0] for c in UNINIT_CASES])
def test_uninit(name, src, line, col):
    err = reject(src)
    assert (err.code, err.line, err.col) == ("uninit", line, col), str(err)


def test_uninit_message_names_the_variable():
    err = reject(prog("in var a : [2]", "var t : [2]", "out var r : [2]", "t = a"))
    assert "'r'" in err.message or "r " in err.message


@pytest.mark.parametrize(
    "src",
    [
        # the same shapes of program as above, without any qualifier: every variable is inout
        prog("var a : [2]", "var b : [2]", "var t : [2]", "b = a + t", "t = a"),
        prog("var a : [2]", "var t : [2]", "var r : [2]", "t = a"),
        prog("var x : [2]", "var y : [2]", "var t : [2]", "t = y + x", "y = t"),
        prog("var x : [2 2]", "var y : [2]", "y = (x # y) . [2 3]"),
        prog("var x : [2]", "x = x"),
        prog("var x : [2]"),
    ],
)
def test_programs_without_qualifiers_never_give_uninit(src):
    tl.check(src)


def test_qualified_programs_that_initialise_everything_pass():
    tl.check(prog("in var a : [2]", "inout var c : [2]", "out var b : [2]", "var t : [2]",
                  "t = a + c", "b = t", "b = b + t", "c = b"))


# --------------------------------------------------------------------------- several diagnostics
def test_all_statement_errors_are_reported():
    src = prog(
        "var x : [2]",
        "var x : [3]",          # 2:5 redeclared
        "var y : [2]",
        "y = x + z",            # 4:9 undeclared
        "q = y",                # 5:1 undeclared-assign
        "y = y . [1 2]",        # 6:9 dim-range
        "y = x",                # fine
        "y = y # y",            # 8:1 assign-shape
    )
    err = reject(src)
    got = [(d.code, d.span.line, d.span.col) for d in err.diagnostics]
    assert got == [
        ("redeclared", 2, 5),
        ("undeclared", 4, 9),
        ("undeclared-assign", 5, 1),
        ("dim-range", 6, 9),
        ("assign-shape", 8, 1),
    ]
    assert (err.code, err.line, err.col) == ("redeclared", 2, 5)
    rendered = str(err)
    for code, line, col in got:
        assert f"<string>:{line}:{col}: error[{code}]:" in rendered


# --------------------------------------------------------------------------- rendering
HEAD = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<col>\d+): error\[(?P<code>[a-z-]+)\]: (?P<msg>.+)$")


def assert_rendered(text: str, filename: str, line: int, col: int, code: str, source_line: str):
    lines = text.splitlines()
    m = HEAD.match(lines[0])
    assert m, lines[0]
    assert (m["file"], int(m["line"]), int(m["col"]), m["code"]) == (filename, line, col, code)
    assert lines[1].endswith(source_line), lines[1]
    assert str(line) in lines[1][: len(lines[1]) - len(source_line)]  # the gutter shows the line number
    start = len(lines[1]) - len(source_line)
    caret = lines[2]
    assert caret.index("^") == start + col - 1, (lines[1], caret)
    assert caret[: start + col - 1].strip() == ""


@pytest.mark.parametrize(
    "src,line,col,code,source_line",
    [
        (prog("var a : [2]", "var b : [3]", "", "a = a + b"), 4, 5, "shape", "a = a + b"),
        (prog("var x : [2]", "x = a $ b"), 2, 7, "syntax", "x = a $ b"),
        (prog("in var a : [2]", "var t : [2]", "  out var r : [2]", "t = a"), 3, 11, "uninit", "  out var r : [2]"),
        (prog("var A : [2 2]", "var s : []", "s = A . [1 3]"), 3, 9, "dim-range", "s = A . [1 3]"),
    ],
)
def test_rendering_with_a_real_file(tmp_path, src, line, col, code, source_line):
    path = tmp_path / "prog.tl"
    path.write_text(src)
    err = reject(str(path))
    assert (err.code, err.line, err.col) == (code, line, col)
    assert err.filename == str(path)
    assert_rendered(str(err), str(path), line, col, code, source_line)


def test_rendering_with_a_pathlib_path(tmp_path):
    path = tmp_path / "p.tl"
    path.write_text(prog("var x : [2]", "", "x = x + y"))
    err = reject(path)
    assert_rendered(str(err), str(path), 3, 9, "undeclared", "x = x + y")
    assert "t-var" in str(err)


def test_rendering_positions_with_crlf_line_endings(tmp_path):
    path = tmp_path / "crlf.tl"
    path.write_bytes(b"var x : [2]\r\nvar y : [3]\r\nx = x + y\r\n")
    err = reject(str(path))
    assert (err.code, err.line, err.col) == ("shape", 3, 5)
    assert_rendered(str(err), str(path), 3, 5, "shape", "x = x + y")


def test_eof_error_with_trailing_newline_points_into_the_file(tmp_path):
    path = tmp_path / "eof.tl"
    path.write_text("var x : [2]\nx = x +\n")
    err = reject(str(path))
    assert err.code == "syntax"
    # just past the '+' on line 2, where the program stops
    assert (err.line, err.col) == (2, 8)
    assert_rendered(str(err), str(path), 2, 8, "syntax", "x = x +")


def test_rendered_source_line_is_the_line_the_parser_counted(tmp_path):
    path = tmp_path / "ff.tl"
    path.write_text("// page\x0cbreak\nvar x : [2]\nx = x + y\n")
    err = reject(str(path))
    assert (err.code, err.line, err.col) == ("undeclared", 3, 9)
    assert_rendered(str(err), str(path), 3, 9, "undeclared", "x = x + y")


# --------------------------------------------------------------------------- limits in check
def test_absurd_extents_are_too_large():
    err = reject(prog("var ok : [2]", "in var x : [100000000000 100000000000 100000000000]"))
    assert (err.code, err.line, err.col) == ("too-large", 2, 1)


def test_extents_just_below_the_limit_are_accepted():
    tl.check(prog("var x : [1073741824 1073741824 3]"))  # 3 * 2^60 < 2^62
    err = reject(prog("var x : [1073741824 1073741824 4]"))  # exactly 2^62
    assert err.code == "too-large"


def test_deep_parentheses_are_a_syntax_error_with_position():
    err = reject("var x : []\nx = " + "(" * 300 + "x" + ")" * 300)
    assert (err.code, err.line) == ("syntax", 2)
    assert 5 <= err.col <= 5 + 300


def test_parentheses_in_comments_do_not_count_as_nesting():
    tl.check("var x : [2]\n// " + "(" * 250 + "\nx = x\n")


# --------------------------------------------------------------------------- precedence
def parse_expr(expr: str, decls: str = ""):
    program = parse_model(decls + "x = " + expr + "\n")
    return program.stmts[0].expr


A, B, C, s, x, w, u = (Var(n) for n in "ABCsxwu")


def test_outer_binds_tighter_than_contraction():
    assert parse_expr("A # B . [2 3]") == Contract(Outer(A, B), (Pair(2, 3),), False)


def test_scalar_multiplication_binds_tighter_than_addition():
    assert parse_expr("s * x + w") == Binary("+", Binary("*", s, x), w)
    assert parse_expr("w + s * x") == Binary("+", w, Binary("*", s, x))


def test_minus_is_left_associative():
    a, b, c = Var("a"), Var("b"), Var("c")
    assert parse_expr("a - b - c") == Binary("-", Binary("-", a, b), c)
    assert parse_expr("a - (b - c)") == Binary("-", a, Paren(Binary("-", b, c)))
    assert parse_expr("a / b * c") == Binary("*", Binary("/", a, b), c)


def test_unary_minus_binds_tighter_than_outer():
    assert parse_expr("-A # B") == Outer(Neg(A), B)
    assert parse_expr("A # -B") == Outer(A, Neg(B))
    assert parse_expr("-x . [1 2]") == Contract(Neg(x), (Pair(1, 2),), False)
    assert parse_expr("-2") == Neg(Number(2.0))


def test_outer_is_left_associative():
    assert parse_expr("A # B # C") == Outer(Outer(A, B), C)


def test_postfix_operators_chain_left_to_right():
    assert parse_expr("x . [1 2] ^ [1 3]") == Transpose(Contract(x, (Pair(1, 2),), False), Pair(1, 3))
    assert parse_expr("x ^ [1 3] . [1 2]") == Contract(Transpose(x, Pair(1, 3)), (Pair(1, 2),), False)
    assert parse_expr("x . [1 2] . [1 2]") == Contract(Contract(x, (Pair(1, 2),), False), (Pair(1, 2),), False)


def test_postfix_binds_tighter_than_multiplication():
    assert parse_expr("s * x . [1 2]") == Binary("*", s, Contract(x, (Pair(1, 2),), False))
    assert parse_expr("A # B * s") == Binary("*", Outer(A, B), s)


def test_grouped_pairs():
    expected = Contract(Outer(Outer(Outer(A, B), C), u), (Pair(2, 9), Pair(4, 8), Pair(6, 7)), True)
    assert parse_expr("A # B # C # u . [[2 9] [4 8] [6 7]]") == expected
    assert parse_expr("x . [[1 2]]") == Contract(x, (Pair(1, 2),), True)
    assert parse_expr("x . [[1 2]]") != parse_expr("x . [1 2]")


def test_comments_are_ignored():
    text = "// header comment # ( [\nvar x : [2] // trailing\n// between\nx = x // a # b\n   // end"
    program = parse_model(text)
    assert [d.name for d in program.decls] == ["x"]
    assert program.stmts[0].expr == x


def test_node_equality_ignores_spans():
    assert parse_expr("A # B") == parse_expr("   A   #B")


def test_declaration_after_a_statement_is_reported_at_the_declaration():
    with pytest.raises(TensorLangError) as info:
        tl.check("var x : [2]\nx = x\nout var y : [2]\n")
    assert (info.value.code, info.value.line, info.value.col) == ("syntax", 3, 1)
    assert "declarations must come before statements" in info.value.message


@pytest.mark.slow
def test_expression_nested_beyond_the_depth_limit_is_too_large():
    from tensorlang.errors import MAX_DEPTH

    src = "var x : []\nx = " + " + ".join(["x"] * (MAX_DEPTH + 1)) + "\n"
    with pytest.raises(TensorLangError) as info:
        tl.check(src)
    assert (info.value.code, info.value.line) == ("too-large", 2)
    ok = "var x : []\nx = " + " + ".join(["x"] * (MAX_DEPTH - 1)) + "\n"
    assert float(tl.compile(ok)(x=1.0)["x"]) == MAX_DEPTH - 1


def test_a_misplaced_qualifier_says_how_declarations_are_written():
    with pytest.raises(TensorLangError) as info:
        tl.check("var in A : [3 4]\n")
    assert info.value.code == "syntax" and (info.value.line, info.value.col) == (1, 5)
    assert "[in|out|inout] var NAME" in info.value.message
    with pytest.raises(TensorLangError) as info:
        tl.check("in A : [3]\n")
    assert info.value.code == "syntax" and "expected 'var'" in info.value.message
