"""The structure section of `tensorlang analyze` in a user's terms (docs/structure.md,
"Reading the structure section"): the monomials a direct sum of monomials holds, the
number of distinct moments, and the isl sets only with --isl."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.analysis.structure import structure_lines
from tensorlang.analysis.structure_view import structure_view
from tensorlang.cli import main

from corpus import EXAMPLES

QUADRATIC = EXAMPLES / "sizes" / "quadratic_features.tl"


def view(path, isl=False, **params):
    k = tl.compile(path, backend="interp", params=params or None)
    return k, structure_view(k.ein, isl)


def test_the_monomials_of_a_feature_column():
    _, lines = view(QUADRATIC, M=3, p=2)
    assert ("      dimension 2 holds F[i,1], F[i,2], F[i,1]*F[i,1], F[i,1]*F[i,2], F[i,2]*F[i,2] "
            "(5 distinct of 6; the other positions copy them)") in lines


def test_the_listed_monomials_are_the_distinct_values_of_each_row():
    k, lines = view(QUADRATIC, M=4, p=3)
    listed = next(line for line in lines if "dimension 2 holds" in line)
    terms = re.search(r"holds (.*) \(", listed)[1].split(", ")
    F = np.random.default_rng(8).uniform(0.5, 2, (4, 3))
    Z = tl.compile(QUADRATIC, backend="numpy")(F=F)["Z"]
    for m in range(4):
        values = [np.prod([F[m, int(a) - 1] for a in re.findall(r"F\[i,(\d+)\]", t)]) for t in terms]
        assert len(set(np.round(Z[m], 12))) == len(terms) == 9
        np.testing.assert_allclose(sorted(values), sorted(set(np.round(Z[m], 12))), rtol=1e-11)


def test_polynomial_regression_counts_its_moments():
    _, lines = view(EXAMPLES / "structure" / "polyreg2.tl")
    text = "\n".join(lines)
    assert "every entry is a moment of F" in text and "65 distinct of 400, of degree 2..4" in text
    assert "dimension 1 stands for F[r,1], F[r,2], F[r,3], F[r,4], F[r,1]*F[r,1]" in text
    assert "(14 distinct of 20; the other positions copy them)" in text


def test_the_summary_lines_are_kept_and_isl_comes_only_with_the_flag():
    k, lines = view(EXAMPLES / "structure" / "polyreg2.tl")
    assert [line for line in lines if not line.startswith("      ")] == structure_lines(k.ein)
    assert not any("isl" in line for line in lines)
    _, with_isl = view(EXAMPLES / "structure" / "polyreg2.tl", isl=True)
    assert any(line.startswith("      unique set (isl): {") for line in with_isl)
    assert any(line.startswith("      redundancy (isl):") for line in with_isl)


def test_a_long_list_is_cut_but_counted():
    _, lines = view(QUADRATIC, M=2, p=8)
    listed = next(line for line in lines if "dimension 2 holds" in line)
    assert "more), F[i,8]*F[i,8] (44 distinct of 72" in listed


@pytest.mark.parametrize("flag", [[], ["--isl"]])
def test_the_cli_prints_the_view(flag, capsys):
    assert main(["analyze", str(QUADRATIC), "--param", "M=3", "--param", "p=2", *flag]) == 0
    out = capsys.readouterr().out
    assert "dimension 2 holds F[i,1], F[i,2], F[i,1]*F[i,1]" in out
    assert ("unique set (isl)" in out) == bool(flag)


def test_the_documented_output_is_what_analyze_prints(capsys):
    page = (EXAMPLES.parent / "docs" / "structure.md").read_text()
    shown = page.split("### Reading the structure section", 1)[1].split("```\n", 2)[1]
    assert main(["analyze", str(QUADRATIC), "--param", "M=3", "--param", "p=2"]) == 0
    out = capsys.readouterr().out
    for line in shown.splitlines()[1:]:
        assert line in out
