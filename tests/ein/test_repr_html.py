"""Notebook views (_repr_html_): EIN programs, the pipeline's stages (Compiled), error
explanations and compressed results show as small escaped HTML tables and <pre> blocks."""

from __future__ import annotations

import html.parser

import numpy as np

import tensorlang as tl
from tensorlang.ein import ir
from tensorlang.ein.printer import html_table, html_text
from tensorlang.explain import EXPLANATIONS, Explanation

from corpus import EXAMPLES

HOSTILE = '<script>alert("x")</script>&amp;'


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def parse(markup: str) -> _Tags:
    found = _Tags()
    found.feed(markup)
    found.close()
    return found


def test_hostile_text_is_escaped_in_tables_and_blocks():
    for markup in (html_table(("a", HOSTILE), [(HOSTILE, 1)], HOSTILE), html_text(HOSTILE, HOSTILE)):
        assert "<script>" not in markup and "&lt;script&gt;" in markup and "&amp;amp;" in markup
        found = parse(markup)
        assert "script" not in found.tags
        assert HOSTILE in "".join(found.text)  # the browser shows the text as it is


def test_an_ein_program_shows_its_declarations_and_statements():
    k = tl.compile("in var A : [2 3]\nin var x : [3]\nout var y : [2]\ny = A # x . [2 3]\n", backend="interp")
    markup = k.ein._repr_html_()
    found = parse(markup)
    assert {"table", "pre", "th", "td"} <= set(found.tags)
    assert [t for t in found.text if t.strip()] == ["EIN program", "variable", "shape", "role", "A", "[2 3]", "in",
                                                    "x", "[3]", "in", "y", "[2]", "out", "y[i] = sum(k) A[i,k] * x[k]"]
    hostile = ir.Program((ir.Decl(HOSTILE, (2,), "in"),), ())
    assert "<script>" not in hostile._repr_html_() and "&lt;script&gt;" in hostile._repr_html_()


def test_the_compiled_stages_show_each_stage_that_ran():
    k = tl.compile("in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nC = A # B . [2 3]\n", backend="numpy")
    markup = k.compiled._repr_html_()
    summaries = [part.split("</summary>")[0] for part in markup.split("<summary>")[1:]]
    assert summaries == ["ein", "opt", "facts", "schedule", "code"]  # the numpy target runs no loops
    code = k.compiled.show("code")
    assert code is not None and "< BLAS_WORK" in code and "&lt; BLAS_WORK" in markup  # escaped...
    assert code in "".join(parse(markup).text)  # ...and shown as it is


def test_an_explanation_shows_what_explain_prints_escaped():
    markup = EXPLANATIONS["syntax"]._repr_html_()
    assert "error[syntax]" in markup and "C = A @ B" in markup
    made = Explanation("x", HOSTILE, HOSTILE)
    assert "<script>" not in made._repr_html_()


def test_a_compressed_result_shows_its_counts_and_values():
    k = tl.compile(EXAMPLES / "structure" / "polyreg2.tl", backend="numpy")
    F = np.random.default_rng(0).uniform(-1, 1, (64, 4))
    C = k.run({"F": F}, compressed=True)["C"]
    found = parse(C._repr_html_())
    cells = [t.strip() for t in found.text if t.strip()]
    assert "table" in found.tags and "pre" in found.tags
    assert cells[:5] == ["result", "shape", "unique", "dense", "structure"]
    assert cells[5:9] == ["C", "[20, 20]", "65", "400"]


MATMUL = "in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nvar t : [2 4]\nt = A # B . [2 3]\nC = t * 2\n"


def _cells(markup: str) -> list[str]:
    return [t.strip() for t in parse(markup).text if t.strip()]


def test_a_kernel_shows_its_signature_target_and_stages():
    k = tl.compile(MATMUL, backend="numpy", threads=2)
    markup = k._repr_html_()
    cells = _cells(markup)
    assert cells[:5] == ["tensorlang.Kernel <string>", "variable", "role", "shape", "dtype"]
    assert cells[5:17] == ["A", "in", "[2 3]", "float64", "B", "in", "[3 4]", "float64", "C", "out", "[2 4]",
                           "float64"]
    assert cells[17:19] == ["1 temporary", "temp"]
    text = "".join(parse(markup).text)
    assert "k(A=..., B=...) -> {'C': ...}" in text
    assert "target numpy; float64; threads 2" in text
    assert "k.ir(stage): ast, tl, teil, core, ein, lambda, opt, facts, schedule, loops" in text
    assert "k.code(target): c, numpy" in text
    summaries = [part.split("</summary>")[0] for part in markup.split("<summary>")[1:]]
    assert summaries == ["stages run (numpy)", "ein", "opt", "facts", "schedule", "code"]
    assert k.compiled._repr_html_() in markup


def test_a_kernels_options_and_bound_sizes_show():
    k = tl.compile("in var A : [n 3]\nout var C : [n 3]\nC = A * 2\n", backend="numpy", params={"n": 5},
                   dtype="float32", opt=False)
    text = "".join(parse(k._repr_html_()).text)
    assert "target numpy; float32; threads" in text and "opt=False" in text
    assert ["A", "in", "[5 3]", "float32"] == _cells(k._repr_html_())[5:9]


def test_a_symbolic_kernel_shows_its_sizes_and_where_the_later_stages_are():
    s = tl.compile("in var A : [n m]\nin var x : [m]\nout var y : [n]\ny = A # x . [2 3]\n", backend="numpy")
    text = "".join(parse(s._repr_html_()).text)
    assert "tensorlang.SymbolicKernel" in text and "[n m]" in text
    assert "sizes n, m bound from the inputs' shapes at each call (compiled so far: none)" in text
    assert "k.specialize(n=8, m=8)" in text and "k.code(target): c" not in text
    s(A=np.ones((2, 3)), x=np.ones(3))
    assert "(compiled so far: n=2, m=3)" in "".join(parse(s._repr_html_()).text)
    kernel = s.for_inputs({"A": np.ones((2, 3)), "x": np.ones(3)})
    assert "sizes n=2, m=3" in "".join(parse(kernel._repr_html_()).text)


def test_a_kernel_view_escapes_its_file_name_and_caps_its_rows(tmp_path):
    path = tmp_path / "<script>x.tl"
    path.write_text(MATMUL)
    markup = tl.compile(path, backend="interp")._repr_html_()
    assert "<script>" not in markup and "&lt;script&gt;x.tl" in markup
    names = [f"v{n}" for n in range(60)]
    text = "".join(f"in var {n} : [2]\n" for n in names) + "out var r : [2]\nr = " + " + ".join(names) + "\n"
    cells = _cells(tl.compile(text, backend="numpy")._repr_html_())
    assert "v39" in cells and "v40" not in cells and "... 21 more" in cells


def test_an_unqualified_programs_read_first_variables_show_as_required():
    k = tl.compile(EXAMPLES / "fig4_matrix_product.tl", backend="numpy")
    cells = _cells(k._repr_html_())
    assert cells[5:17] == ["A", "required", "[30 40]", "float64", "B", "required", "[40 50]", "float64",
                           "C", "optional", "[30 50]", "float64"]
    assert "k(A=..., B=..., C=... (optional))" in "".join(parse(k._repr_html_()).text)
    missing = tl.compile(EXAMPLES / "fig4_matrix_product.tl", backend="numpy", allow_missing=True)
    assert _cells(missing._repr_html_())[5:7] == ["A", "optional"]  # the opt-in to ⊥
