"""A review's findings (rev54) about inputs: int sequences near 2^63 (C made them INT64_MIN; a list mixing a big int
with a float was refused; a text sequence file of a huge int crashed the interpreter), string inputs that no command
line can pass (NUL, a lone surrogate: C crashed or cut the text), and an NRRD name format whose width makes names of
100 MB.  The global fields' findings are cases of ``test_review_53``."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.sampling import image

SEQ = """#version 2.0
input int{} is;
strand S (int i) { output int y = 0; update { y = is[i]; stabilize; } }
create_collection { S(i) | i in 0..1 };
"""
TEXT = """#version 2.0
input string a = "x";
strand S (int i) { output real y = 0.0; update { print("[", a, "]\\n"); stabilize; } }
create_collection { S(i) | i in 0..0 };
"""
BACKENDS = ["interp", pytest.param("c", marks=pytest.mark.slow)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_items_near_2_to_the_63_are_exact_in_both_executors(backend, tmp_path):
    p = tl.compile(SEQ, lang="diderot", backend=backend)
    assert p.run({"is": np.array([2**63 - 1, -(2**63)])}).y.tolist() == [2**63 - 1, -(2**63)]
    assert p.run({"is": [2**63 - 1, 1.0]}).y.tolist() == [2**63 - 1, 1]  # (not rounded through a float array)
    (tmp_path / "two.txt").write_text("7\n-5\n")
    assert p.run({"is": str(tmp_path / "two.txt")}).y.tolist() == [7, -5]


@pytest.mark.parametrize("text", ["9223372036854775806\n5\n", "nan\n1\n", "inf\n1\n", "uint64"])
def test_a_sequence_file_of_no_64_bit_ints_is_refused(text, tmp_path):
    if text == "uint64":  # (rev54b: an OverflowError in both executors)
        import nrrd

        nrrd.write(str(tmp_path / "is.nrrd"), np.array([2**64 - 1, 0], dtype=np.uint64))
    else:
        (tmp_path / "is.txt").write_text(text)
    with pytest.raises(TensorLangError, match="no 64-bit int") as err:
        tl.compile(SEQ, lang="diderot", backend="interp").run({"is": str(next(tmp_path.iterdir()))})
    assert err.value.code == "input"


@pytest.mark.parametrize("value, why", [("a\x00b", "x00"), ("\ud800", "ud800")])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_string_no_command_line_can_pass_is_refused(value, why, backend):
    with pytest.raises(TensorLangError, match=why) as err:
        tl.compile(TEXT, lang="diderot", backend=backend).run({"a": value})
    assert err.value.code == "input"


def test_a_string_of_bytes_that_are_not_utf8_is_taken():
    assert tl.compile(TEXT, lang="diderot", backend="interp").run({"a": "\udcff"}).printed == "[\udcff]\n"


def test_a_name_format_too_wide_for_a_path_is_refused_before_a_name_is_made(tmp_path):
    (tmp_path / "w.nhdr").write_text("NRRD0004\ntype: double\ndimension: 2\nsizes: 2 3\nencoding: raw\n"
                                     "endian: little\ndata file: p%099999999d.raw 0 2 1\n")
    with pytest.raises(TensorLangError, match="width makes names longer") as err:
        image.load(str(tmp_path / "w.nhdr"))
    assert err.value.code == "input"


LATER = """#version 2.0
input image(2)[] img;
field#2(2)[] F = bspln3 ⊛ img;
real g = 0.5;
vec2 q = [0.1, 0.2];
strand S (int i) { output real v = 0.0; update { v = F(q); stabilize; } }
start {
  real c = 2.0;
  field#2(2)[] H = c * F + g * F;
  c = 9.0;
  g = 1.5;
  print(H(q) / F(q), "\\n");
}
update {
  field#2(2)[] H = g * F;
  g = g + 1.0;
  field#2(2)[] K = g * H;
  print(H(q) / F(q), " ", K(q) / F(q), "\\n");
}
create_collection { S(i) | i in 0..0 }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_global_blocks_field_local_reads_its_globals_where_it_is_probed(backend, tmp_path):
    # diderotc's executables (rev54's fl3, fl4): the locals of its definition as they were where it was declared
    # (c = 2), the globals as they are where it is probed (g = 1.5, then 2.5); both executors took g at the declaration
    import nrrd

    nrrd.write(str(tmp_path / "img.nrrd"), np.random.default_rng(3).random((8, 8)) + 1.0,
               {"space dimension": 2, "space origin": [-1.0, -1.0], "space directions": [[0.3, 0.0], [0.0, 0.3]]})
    printed = tl.compile(LATER, lang="diderot", backend=backend).run({"img": str(tmp_path / "img.nrrd")}).printed
    assert [float(x) for x in printed.split()] == pytest.approx([3.5, 2.5, 6.25])
    assert len(printed.splitlines()) == 2


TWO = """#version 2.0
input image(2)[] img;
field#2(2)[] F = bspln3 ⊛ img;
real g = 0.5;
real g2 = 1.0;
field#2(2)[] G = g2 * F + g * F;
real h = G([0.1, 0.2]) / F([0.1, 0.2]);
strand S (int i) {
  int n = 0;
  output real v = 0.0;
  update { n += 1; v = G([0.1, 0.2]) / F([0.1, 0.2]); print(h, " ", v, "\\n"); if (n >= 3) { stabilize; } }
}
update { g2 = g2 * 2.0; g = 4.0; }
create_collection { S(i) | i in 0..0 }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_global_field_keeps_the_first_value_of_each_global_whose_assignment_diderotc_drops(backend, tmp_path):
    # rev54b's h15: g2's assignment is kept (the update reads it first), g's dropped: diderotc's G is g2·F + 0.5·F
    # (both executors read g's new value too: 4.5·F, then 8.5·F; C left such a field to the interpreter, it keeps
    # g's first value in a slot of its own now)
    import nrrd

    nrrd.write(str(tmp_path / "img.nrrd"), np.random.default_rng(3).random((8, 8)) + 1.0,
               {"space dimension": 2, "space origin": [-1.0, -1.0], "space directions": [[0.3, 0.0], [0.0, 0.3]]})
    p = tl.compile(TWO, lang="diderot", backend=backend)
    printed = p.run({"img": str(tmp_path / "img.nrrd")}).printed  # (h: a global initializer probes G before any update)
    assert [float(x) for x in printed.split()] == pytest.approx([1.5, 1.5, 1.5, 2.5, 1.5, 4.5])


COPIES = """#version 2.0
input int{} is;
real{} rs = {1.5, -2.0, 3.25};
function int first(int{} q) = q[0] + length(q);
function real last(real{} q) { real{} w = q @ 7.0; return w[length(w) - 1] + q[0]; }
strand S (int i) { output int y = 0; output real z = 0.0;
  update { int{} c = is; c = c @ 9; real{} d = rs; y = c[i] + first(is) + c[length(c) - 1]; z = last(rs) + d[i] + last(d);
           stabilize; } }
create_collection { S(i) | i in 0..1 };
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_global_sequence_of_any_length_is_copied_into_a_local_or_an_argument(backend):
    # rev54b: C refused `int{} c = is;` and `first(is)` ("the sequence is of any length as a value"): the interpreter ran them
    got = tl.compile(COPIES, lang="diderot", backend=backend).run({"is": [2**53 + 1, -7]})
    assert got.y.tolist() == [2 * (2**53 + 1) + 2 + 9, -7 + 2**53 + 1 + 2 + 9]
    assert got.z.tolist() == [8.5 + 1.5 + 8.5, 8.5 - 2.0 + 8.5]


REV54C = {  # rev54c's a6 and e6, with the values diderotc's executables printed (ratios to F(q))
    "initialize": ("""real g = 0.5;
initialize {
  real c = 2.75;
  field#2(2)[] H = c * F + g * F;
  g = 3.125;
  c = 100.0;
  print(H(q) / F(q), " ", g, "\\n");
}
strand S (int i) { output real v = 0.0; update { v = g; stabilize; } }
create_collection { S(i) | i in 0..0 }
""", [3.25, 3.125]),  # (the initialize block's field local reads g where it is declared, not where probed)
    "creation's arguments": ("""real t = 1.0;
real e = 2.5;
field#2(2)[] FE = e * F;
strand S (real p) {
  output real y = 0.0;
  int n = 0;
  update { n += 1; print(FE(q) / F(q), "\\n"); y = t; if (n >= 3) { stabilize; } }
}
update { t = t + 1.0; e = t * 10.0; }
create_collection { S(e) | i in 0..0 }
""", [2.5, 20.0, 30.0]),  # (the creation reads e's stored value: its assignment is kept)
}


@pytest.mark.parametrize("case", REV54C)
def test_global_fields_and_field_locals_as_diderotc_in_the_initialize_block_and_the_creation(case, tmp_path):
    import nrrd

    nrrd.write(str(tmp_path / "img.nrrd"), np.random.default_rng(3).random((8, 8)) + 1.0,
               {"space dimension": 2, "space origin": [-1.0, -1.0], "space directions": [[0.3, 0.0], [0.0, 0.3]]})
    text = "#version 2.0\ninput image(2)[] img;\nfield#2(2)[] F = bspln3 ⊛ img;\nvec2 q = [0.1, 0.2];\n" + REV54C[case][0]
    printed = tl.compile(text, lang="diderot", backend="interp").run({"img": str(tmp_path / "img.nrrd")}).printed
    assert [float(x) for x in printed.split()] == pytest.approx(REV54C[case][1])
