"""Programs written to combine Diderot's features in ways the other tests do not (``more/unseen/``:
fields of vectors and matrices with ∇⊗ ∇× ∇• and higher derivatives, c4hexic and bspln5, border
control probed outside, rotated and sheared images, collections with new and die, stabilize
methods, reductions over active, stable and all strands (of none too), continue, conditional
tensors, ``:`` of order-3 tensors, int division of negatives, NaN in min/max, printing, command-line
inputs, snapshots, versions 1.0 and 2.0; a second round, u68-u134: sequences and foreach, sphere
queries in 1-D/2-D/3-D, images of integer and double samples with skewed axes, every kernel to its
continuity, inside at edges, order-3 algebra, evals/evecs of Hessians; a fourth, u137-u158: programs as
the Diderot papers write them, curvature, ridges, particles, streamlines, LIC, volume rendering, glyphs, with
sequences, every output type, {} in each place, C, Greek and primed names, the whole scalar basis).  Each runs as ``tensorlang run`` runs it, on the
interpreter and on the C executor, and must print and write what the executable built by
``diderotc --double --exec`` printed and wrote (``more/unseen/diderotc.json``, made by
``unseen_inputs.py``): the same exit status, the same text (numbers within 1e-9), the same output
files with the same header fields, values within 1e-9 of the file's largest, NaN at the same places
and zeros of the same sign."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import tensorlang as tl
from agreement import printed_close, same_files  # tests/diderot is on the path: the folder is not a package
from tensorlang.targets.c import build as c_build
from unseen_inputs import PROGRAMS, STORED, args, make, outputs

EXPECTED = json.loads(STORED.read_text())
NAMES = sorted(EXPECTED)
#: the programs the C executor leaves to the interpreter (none now: docs/diderot-compiled.md, "What runs in C")
INTERP_ONLY: set[str] = set()
needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


def _run(name: str, backend: str, folder: Path, monkeypatch) -> tuple[int, str, dict]:
    make(folder)
    prog = shutil.copy(PROGRAMS / f"{name}.diderot", folder)
    monkeypatch.chdir(folder)
    out = io.StringIO()
    with redirect_stdout(out):
        rc = tl.compile(str(prog), backend=backend).main(args(Path(prog).read_text()))
    return rc, out.getvalue(), outputs(folder)


def _same(name: str, got: tuple[int, str, dict]) -> None:
    want = EXPECTED[name]
    rc, text, files = got
    assert rc == want["rc"]
    printed_close(want["stdout"], text, 1e-9)
    same_files(want["files"], files)


@pytest.mark.parametrize("name", NAMES)
def test_the_interpreter_prints_and_writes_what_diderotc_does(name, tmp_path, monkeypatch):
    _same(name, _run(name, "interp", tmp_path, monkeypatch))


@needs_cc
@pytest.mark.slow  # a C build each (about 1 s of CPU): the interpreter runs above are the quick tier
@pytest.mark.parametrize("name", [n for n in NAMES if n not in INTERP_ONLY])
def test_the_c_executor_prints_and_writes_what_diderotc_does(name, tmp_path, monkeypatch):
    _same(name, _run(name, "c", tmp_path, monkeypatch))


def test_every_program_has_its_stored_outputs():
    assert sorted(p.stem for p in PROGRAMS.glob("*.diderot")) == NAMES


#: (globals, update body, y as diderotc's executable gives it): the empty sequence {} where its place gives it a type
#: (x @ {} is {x}, a sequence of sequences where x is one: diderotc tries T @ T[] first), nested fixed-length
#: sequences (real[3][2] is two real[3]s), names with primes (C names them otherwise: x' is no C identifier);
#: the last field: whether the C executor runs it (sequences of sequences are the interpreter's)
SNIPPETS = [
    ("", "foreach (real x in {}) { y += x; }", 0.0, True),
    ("", "foreach (vec3 v in {}) { y += v[0]; }", 0.0, True),
    ("", "real[] a = {} @ real(i); y = real(length(a));", 1.0, True),
    ("real[] e = {};", "y = sum { x | x in e } + real(length(e @ {}));", 1.0, False),
    ("", "real[] b = {1.0}; y = real(length({} @ b));", 1.0, False),
    ("function int count(vec2[] ps) = length(ps);", "y = real(count({}));", 0.0, True),
    ("", "real[3][2] g = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}; y = g[1][0] + 10.0*g[0][2];", 34.0, True),
    ("real g'' = 0.5;", "real x' = 2.0; foreach (int k' in 0..2) { x' += real(k') * g''; } y = x';", 3.5, True),
]


def _snippet(glob: str, body: str) -> str:
    return ("#version 2.0\n" + glob + "\nstrand S (int i) { output real y = 0.0; update { " + body + " stabilize; } }\n"
            "create_array { S(i) | i in 0..1 }\n")


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=[needs_cc, pytest.mark.slow])])
@pytest.mark.parametrize("glob, body, want, in_c", SNIPPETS)
def test_snippets_give_what_diderotc_gives(glob, body, want, in_c, backend, tmp_path, monkeypatch):
    if backend == "c" and not in_c:
        pytest.skip("the interpreter's")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TENSORLANG_STRAND_BACKEND", backend)  # (c: an error, not the interpreter, where C cannot run it)
    assert tl.compile(_snippet(glob, body), lang="diderot", backend=backend).main([]) == 0
    import nrrd
    assert nrrd.read("y.nrrd")[0].tolist() == [want, want]


@pytest.mark.parametrize("body, code", [
    ("real[] a = {1.0}; real[] b = a @ {};", "assign-shape"),  # {a}, a real[][], in diderotc too
    ("real[] a = {1.0}; a = {} @ a;", "assign-shape"),
    ("real[2][3] g = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};", "assign-shape"),  # three real[2]s are wanted
    ("y = real(2^3);", "shape"),  # real() of an int only, and int ^ int is a real
    ("real inf = 1.0; y = inf;", "syntax"),  # inf is a real literal in diderotc's lexer
    ("y = modulate(y, 2.0);", "shape"),  # modulate of tensors and fields only
    ("int k = clamp(0, 3, i); y = real(k);", "assign-shape"),  # clamp of ints is a real
])
def test_programs_diderotc_refuses_are_refused(body, code):
    from tensorlang.errors import TensorLangError
    from tensorlang.lang.diderot import parse_program
    from tensorlang.lang.diderot import typecheck as check
    text = ("#version 2.0\nstrand S (int i) { output real y = 0.0; update { " + body + " stabilize; } }\n"
            "create_array { S(i) | i in 0..1 }\n")
    with pytest.raises(TensorLangError) as info:
        check(parse_program(text))
    assert info.value.code == code


def test_a_strand_without_an_update_method_is_refused():
    from tensorlang.errors import TensorLangError
    from tensorlang.lang.diderot import parse_program
    from tensorlang.lang.diderot import typecheck as check
    with pytest.raises(TensorLangError, match="has no update method") as info:  # diderotc: "missing an update method"
        check(parse_program("#version 2.0\nstrand S (int i) { output real y = 0.0; }\ncreate_array { S(i) | i in 0..1 }\n"))
    assert info.value.code == "syntax"


@pytest.mark.parametrize("dim, probe", [(1, "0.1"), (2, "[0.1, 0.2]")])
def test_grad_outer_of_a_scalar_field_is_refused(dim, probe):
    """diderotc: "type error for unary operator '∇⊗'" (∇ is the gradient of a scalar field)."""
    from tensorlang.errors import TensorLangError
    from tensorlang.lang.diderot import parse_program
    from tensorlang.lang.diderot import typecheck as check
    text = (f"#version 2.0\ninput image({dim})[] img;\nfield#2({dim})[] F = bspln3 ⊛ img;\n"
            f"strand S (int i) {{ output real y = 0.0; update {{ y = |∇⊗F({probe})|; stabilize; }} }}\n"
            "create_array { S(i) | i in 0..1 }\n")
    with pytest.raises(TensorLangError, match="use ∇") as info:
        check(parse_program(text))
    assert info.value.code == "shape"


@pytest.mark.parametrize("create", ["create_array", "create_collection"])
def test_of_two_iterators_of_one_name_the_first_is_bound(create):
    """``{ S(i, i) | i in 0..1, i in 5..7 }``: diderotc's `i` is the first iterator's (a 2 x 3 grid of
    0 0 0 1 1 1); the interpreter took the last's and the C executor's code did not compile (two ``l_it_i``)."""
    import numpy as np
    from agreement import agree
    from tensorlang.lang.diderot import parse_program, strands
    from tensorlang.lang.diderot import typecheck as check
    text = ("#version 2.0\nstrand S (int i, int j) { output real x = 0.0; update { x = real(i + 10 * j); stabilize; } }\n"
            f"{create} {{ S(i, i) | i in 0..1, i in 5..7 }}\n")
    a, _ = agree(strands(check(parse_program(text))))
    assert np.array_equal(np.ravel(a.outputs["x"]), [0.0] * 3 + [11.0] * 3)
    assert a.grid_shape == ((2, 3) if create == "create_array" else None)


@pytest.mark.parametrize("stmt", ["die;", "stabilize;", "new S(5);"])
def test_die_stabilize_and_new_in_a_stabilize_method_are_refused(stmt):
    """diderotc: '"die" statment outside of start/update method/block' (and of stabilize, new); `new` in a
    stabilize method ran here, each new strand stabilizing into another until the cap."""
    from tensorlang.errors import TensorLangError
    from tensorlang.lang.diderot import parse_program
    from tensorlang.lang.diderot import typecheck as check
    text = ("#version 2.0\nstrand S (int i) { output real y = 0.0; update { y = 1.0; stabilize; }\n"
            f"  stabilize {{ {stmt} }} }}\ncreate_collection {{ S(i) | i in 0..2 }}\n")
    with pytest.raises(TensorLangError, match="start and update methods") as info:
        check(parse_program(text))
    assert info.value.code == "syntax"


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=[needs_cc, pytest.mark.slow])])
def test_a_state_variable_set_under_an_if_in_a_foreach_keeps_the_new_value(backend, tmp_path, monkeypatch):
    """diderotc's executable writes 1 1 1 here (its bug: a state variable assigned only inside an ``if`` in a
    ``foreach`` keeps its old value; a local so assigned does not): docs/diderot.md."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TENSORLANG_STRAND_BACKEND", backend)
    text = ("#version 2.0\nstrand S (int n) { output real p = 1.0;\n  update { foreach (int d in 2..5) "
            "{ if (n % d == 0) { p = 0.0; } } stabilize; } }\ncreate_array { S(n) | n in 7..9 }\n")
    assert tl.compile(text, lang="diderot", backend=backend).main([]) == 0
    import nrrd
    assert nrrd.read("p.nrrd")[0].tolist() == [1.0, 0.0, 0.0]


NESTED_GLOBAL = """#version 2.0
input real[3][2] c = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
real[3][2] a = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
strand S (int i) {
  output real[3][2] y = a;
  output real z = 0.0;
  update { z = c[1][2] + 10.0 * a[0][1] + 1000.0 * real(length(a)) + 10000.0 * real(length(a[0])); stabilize; }
}
create_collection { S(i) | i in 0..0 };
"""


def test_a_global_and_an_input_of_nested_fixed_length_sequences():
    """``real[3][2]`` globals and inputs were refused at run time ("not a sequence of real{3}": the check
    compared an item with the innermost element's shape); diderotc gives z = 32026 and y = 1..6."""
    import numpy as np
    from agreement import agree
    from tensorlang.lang.diderot import parse_program, strands
    from tensorlang.lang.diderot import typecheck as check
    p = strands(check(parse_program(NESTED_GLOBAL)))
    a, _ = agree(p)
    assert a.outputs["z"].tolist() == [32026.0] and np.ravel(a.outputs["y"]).tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert agree(p, {"c": [[1, 2, 3], [4, 5, 7]]})[0].outputs["z"].tolist() == [32027.0]


def test_two_outputs_one_file_is_refused_where_it_is_declared():
    """``y'`` and ``yp`` are both written to yp.nrrd (and named by -o-yp): refused at the second, not at run time."""
    from tensorlang.errors import TensorLangError
    from tensorlang.lang.diderot import parse_program
    from tensorlang.lang.diderot import typecheck as check
    text = ("#version 2.0\nstrand S (int i) { output real y' = 1.0; output real yp = 2.0; update { stabilize; } }\n"
            "create_collection { S(i) | i in 0..1 };\n")
    with pytest.raises(TensorLangError, match="yp.nrrd") as info:
        check(parse_program(text))
    assert info.value.code == "redeclared"


NESTED_ANY = """#version 2.0
input real{}{} a = {{1.0, 4.0}, {2.0, 3.0}};
strand S (int i) {
  output real z = 0.0;
  update { z = a[1][0] + real(length(a[0])); stabilize; }
}
create_collection { S(i) | i in 0..0 };
"""


@pytest.mark.parametrize("value, z", [(None, 4.0), ([[1.0], [2.0, 3.0, 4.0]], 3.0), ([[1, 2], (3,)], 5.0),
                                      ([["x"], [1.0]], None), ([[1.0], "ab"], None), ([[[1.0]], [2.0]], None),
                                      ([1.0, 2.0], None), ([[1.0], [{}]], None)])
def test_an_input_of_sequences_of_any_length_is_checked_item_by_item(value, z):
    """Items of a ``real{}{}`` input are sequences of reals of any length: others are error[input] (a string
    item was read as a sequence, a real item was a TypeError)."""
    from tensorlang.errors import TensorLangError
    from tensorlang.lang.diderot import parse_program, strands
    from tensorlang.lang.diderot import typecheck as check
    p = strands(check(parse_program(NESTED_ANY)))
    values = {} if value is None else {"a": value}
    if z is None:
        with pytest.raises(TensorLangError, match="not a sequence of real") as info:
            p.run(values, backend="interp")
        assert info.value.code == "input"
    else:
        assert p.run(values, backend="interp").outputs["z"].tolist() == [z]


@pytest.mark.parametrize("decl, value, message", [
    ("real[2] g = {1.0, 2.0}", [1.0, 2.0, 3.0], "got 3 items: it takes 2"),
    ("real[2] g = {1.0, 2.0}", [], "got 0 items: it takes 2"),
    ("real[3][2] g = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}", [[1, 2, 3]] * 3, "got 3 items: it takes 2"),
    ("int{} g = {1, 2}", [1.5, 3.0], "not a sequence of int"),
    ("int{} g = {1, 2}", [1.0, float("nan")], "not a sequence of int")])
def test_a_sequence_input_of_the_wrong_length_or_items_is_refused(decl, value, message):
    """A fixed-length sequence's length was not checked (the interpreter ran with 3 items of a real[2], C read
    2, or raised IndexError for fewer); an int sequence took 1.5 (the interpreter kept it, C truncated it)."""
    from tensorlang.errors import TensorLangError
    from tensorlang.lang.diderot import parse_program, strands
    from tensorlang.lang.diderot import typecheck as check
    text = (f"#version 2.0\ninput {decl};\nstrand S (int i) {{ output real z = 0.0; "
            "update { z = real(length(g)); stabilize; } }\ncreate_collection { S(i) | i in 0..0 };\n")
    p = strands(check(parse_program(text)))
    for backend in ("interp", "c"):
        with pytest.raises(TensorLangError, match=message.replace("[", r"\[")) as info:
            p.run({"g": value}, backend=backend)
        assert info.value.code == "input"
