"""A review of the fifty-second round's merges (rev53): an ``int[]`` input given from Python with items outside 64 bits
(``1e19``, ``2**63``, a uint64 past 2^63) was taken (the interpreter kept a Python int of any size, C gave INT64_MIN),
where a scalar ``int`` input is refused; it is error[input] now, as items that are not whole (1.5, NaN) were."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError

SEQ = """#version 2.0
input int[] is = {1};
strand S (int i) { output int y = 0; update { y = is[i]; stabilize; } }
create_collection { S(i) | i in 0..1 };
"""


@pytest.mark.parametrize("items", [[1e19, 0.0], [2**63, 0], np.array([2**63, 2], dtype=np.uint64), [-(2**63) - 1, 0],
                                   [float("inf"), 0], ["1", 2], [0.0, 2.5], [float("nan"), 1.0], [2.0**63, 0.0]],
                         ids=["1e19", "2^63", "uint64", "below", "inf", "text", "fraction", "nan", "2.0^63"])
def test_int_sequence_items_outside_64_bits_are_refused(items):
    with pytest.raises(TensorLangError, match="not a sequence of int") as err:
        tl.compile(SEQ, lang="diderot", backend="interp").run({"is": items})
    assert err.value.code == "input"


@pytest.mark.parametrize("items", [[2**63 - 1, -(2**63)], np.array([1, 2], dtype=np.uint64), [True, 2], [1.0, -3.0],
                                   [-2.0**63, 9.223372036854774784e18]])
def test_int_sequence_items_of_64_bits_are_taken(items):
    got = tl.compile(SEQ, lang="diderot", backend="interp").run({"is": items}).y
    assert got.tolist() == [int(x) for x in items]


BIG = """#version 2.0
input int{} is;
int{} js = is;
update { js = js @ (is[0] + 2); }
strand S (int i) { output int y = 0; output int z = 0; int t = 0;
  update { y = is[i]; z = js[i] + js[length(js) - 1]; t += 1; if (t == 2) { stabilize; } } }
create_collection { S(i) | i in 0..1 };
"""


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=pytest.mark.slow)])
def test_int_sequence_items_past_2_to_the_53_stay_exact(backend):
    # C held a sequence's items as doubles (2^53 + 1 read as 2^53); an int's cells now hold int64s (tl_ati),
    # an input's and one the global update makes
    got = tl.compile(BIG, lang="diderot", backend=backend).run({"is": [2**53 + 1, -(2**62) - 3]})
    assert got.y.tolist() == [2**53 + 1, -(2**62) - 3]
    assert got.z.tolist() == [2 * (2**53 + 1) + 2, -(2**62) - 3 + 2**53 + 3]


GLOBAL_FIELD = """#version 2.0
input image(2)[] img;
field#2(2)[] F = bspln3 ⊛ img;
real gain = 1.0;
field#2(2)[] G = gain * F;
%s
strand S (int i) {
  vec2 p = [-0.5 + 0.3 * real(i), 0.2];
  output real y = 0.0;
  int k = 0;
  update { %s }
}
%s
create_array { S(i) | i in 0..2 }
"""
#: (before the strand, the update, after the strand) -> y as a multiple of F(p) plus a constant, as diderotc's
#: executables gave it (rev53b, rev54): an assignment to a global whose storage nothing else reads (the strands, or
#: a global block before an assignment there; not another global's initializer) is dropped by diderotc, so the field
#: keeps the global's first value; one the program reads elsewhere too reaches the field
CASES = {
    "start, dropped": ("", "y = G(p); stabilize;", "start { gain = 4.0; }", 1.0, 0.0),
    "initialize, dropped": ("initialize { gain = 3.0; }", "y = G(p); stabilize;", "", 1.0, 0.0),
    "initialize, read by the strands": ("initialize { gain = 3.0; }", "y = G(p) + gain; stabilize;", "", 3.0, 3.0),
    "update, dropped": ("", "y += G(p); k += 1; if (k > 2) stabilize;", "update { gain = 5.0; }", 3.0, 0.0),
    "update, printed after it: dropped": ("", "y += G(p); k += 1; if (k > 2) stabilize;",
                                          'update { gain = 5.0; print(gain, "\\n"); }', 3.0, 0.0),
    "update, printed before it": ("", "y += G(p); k += 1; if (k > 2) stabilize;",
                                  'update { print(gain, "\\n"); gain = 5.0; }', 11.0, 0.0),
    "update, read by an initializer: dropped": ("real h = gain + 1.0;", "y += G(p); k += 1; if (k > 2) stabilize;",
                                                "update { gain = 5.0; }", 3.0, 0.0),
    "update, read after an if whose ways both assign": ("", "y += G(p); k += 1; if (k > 2) stabilize;",
                                                        'update { if (1 > 0) { gain = 5.0; } else { gain = 2.0; } '
                                                        'print(gain, "\\n"); }', 11.0, 0.0),
    "update, read in the initialize block: dropped": ('initialize { print(gain, "\\n"); gain = 3.0; }',
                                                      "y += G(p); k += 1; if (k > 2) stabilize;", "", 3.0, 0.0),
    "update, += and a strand local of its name: dropped": (
        "", "real gain = 1.0; gain += 1.0; y += G(p) + 0.0 * gain; k += 1; if (k > 2) stabilize;",
        "update { gain = 5.0; }", 3.0, 0.0),
}


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=pytest.mark.slow)])
@pytest.mark.parametrize("case", CASES)
def test_a_global_field_sees_a_new_global_only_where_diderotc_keeps_the_assignment(case, backend, tmp_path):
    import nrrd

    nrrd.write(str(tmp_path / "img.nrrd"), np.random.default_rng(1).random((8, 8)),
               {"space dimension": 2, "space origin": [-1.0, -1.0], "space directions": [[0.3, 0.0], [0.0, 0.3]]})
    if backend == "c" and "dropped" in case and case != "update, printed after it: dropped":  # (a build each: the
        pytest.skip("one dropped case runs in C")  # first values' slots run in C in test_strand_c_fallbacks and here)
    before, update, after, scale, plus = CASES[case]
    p = tl.compile(GLOBAL_FIELD % (before, update, after), lang="diderot", backend=backend)
    f = tl.compile(GLOBAL_FIELD % ("", "y = F(p); stabilize;", ""), lang="diderot")
    img = str(tmp_path / "img.nrrd")
    np.testing.assert_allclose(p.run({"img": img}).y, scale * f.run({"img": img}).y + plus, rtol=1e-12)


def test_an_output_may_take_the_name_of_an_input_default_the_run_replaces(tmp_path, monkeypatch):
    """``-img other.nrrd -o img2.nrrd`` of ``input image(2)[] img = image("img2.nrrd")``: the default is not read,
    so diderotc's executable writes the output there; the sixth hostile round's check of the files a program names
    counted the default and refused the run (the inputs' own check sees the value given)."""
    import nrrd

    monkeypatch.chdir(tmp_path)
    nrrd.write("other.nrrd", np.ones((4, 4)), {"space dimension": 2, "space directions": [[1.0, 0.0], [0.0, 1.0]]})
    (tmp_path / "p.diderot").write_text('#version 2.0\ninput image(2)[] img = image("img2.nrrd");\nfield#0(2)[] F = tent ⊛ img;\n'
                                        "strand S (int i) { output real y = 0.0; update { y = F([1.5, 1.5]); stabilize; } }\n"
                                        "create_array { S(i) | i in 0..1 }\n")
    assert tl.compile("p.diderot", backend="interp").main(["-img", "other.nrrd", "-o", "img2.nrrd"]) == 0
    assert (tmp_path / "img2.nrrd").exists()


@pytest.mark.parametrize("default, shown", [("a\x19b\x1cc", "abc"), ("x\xe9y\x85z", "xyz"), ("p\tq  r ", "p q r"),
                                            (", ", ",")])
def test_a_string_default_is_made_one_line_with_cs_character_classes(default, shown):
    """Teem's airOneLinify (C's isspace and isprint, no locale): a control character or one past ASCII is dropped, a
    blank of C's is a space; the Unicode classes made U+0085 a space and kept é."""
    from types import SimpleNamespace

    from tensorlang.strands.options import executable_default

    assert executable_default(SimpleNamespace(kind="string", default=default, type="string")) == shown


@pytest.mark.slow
def test_a_string_input_that_is_not_utf8_prints_its_bytes_in_c(tmp_path):
    """``-a $'x\\xffy'``: the C executor stopped with error[internal] (UnicodeEncodeError); the interpreter and
    diderotc's executable print the byte."""
    import subprocess
    import sys

    (tmp_path / "s.diderot").write_text('#version 2.0\ninput string a = "q";\nstrand S (int i) { output real y = 0.0; '
                                        'update { print("[", a, "]\\n"); stabilize; } }\ncreate_array { S(i) | i in 0..0 }\n')
    for backend in ("interp", "c"):
        run = subprocess.run([sys.executable, "-m", "tensorlang", "run", "--backend", backend, "s.diderot", "-a", b"x\xffy"],
                             cwd=tmp_path, capture_output=True)
        assert (run.returncode, run.stdout) == (0, b"[x\xffy]\n"), run.stderr
