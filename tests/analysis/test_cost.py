"""The cost model (analysis/cost.py): flops and bytes per statement."""

from tensorlang.analysis.cost import body_flops, program_cost, statement_cost
from tensorlang.analysis.polynomial import Poly
from tensorlang.ein import ir


def _concat_of_copies() -> ir.Program:
    """``Z = concat(F, vec(Q))`` at M = 5, p = 3: a 5×12 copy (examples/sizes/quadratic_features.tl)."""
    rows = ir.Concat("a", (("b", 3), ("c", 3), ("d", 3)),
                     tuple(ir.Tensor("Q", ("i", p, v)) for p, v in ((1, "b"), (2, "c"), (3, "d"))))
    body = ir.Concat("j", (("k", 3), ("a", 9)), (ir.Tensor("F", ("i", "k")), rows))
    decls = (ir.Decl("F", (5, 3), "in"), ir.Decl("Q", (5, 3, 3), "in"), ir.Decl("Z", (5, 12), "out"))
    return ir.Program(decls, (ir.Statement("Z", (("i", 5), ("j", 12)), body),))


def test_a_direct_sum_of_copies_costs_bytes_and_no_flops():
    program = _concat_of_copies()
    cost = statement_cost(program.statements[0], program.shapes)
    assert cost.flops == 0  # it was 45,360: each part's extents multiplied as if Σ looped over them
    assert cost.bytes == (15 + 45 + 60) * 8  # F and Q read once, Z written once


def test_a_direct_sum_counts_each_items_work_once_per_point():
    product = ir.Sum((("b", 4),), ir.BinOp("*", ir.Tensor("F", ("i", "b")), ir.Tensor("A", ("b", "k"))))
    body = ir.Concat("j", (("k", 3), ("a", 2)), (product, ir.Tensor("G", ("i", "a"))))
    assert body_flops(body) == body_flops(product) == 4 * 2
    symbolic = body_flops(body, lambda n: Poly.symbol("p") if n == 4 else n)
    assert symbolic == Poly.symbol("p") * 2


def test_a_sum_costs_its_body_and_accumulation_per_point_of_its_map():
    body = ir.Sum((("k", 7),), ir.BinOp("*", ir.Tensor("A", ("i", "k")), ir.Tensor("x", ("k",))))
    program = ir.Program((ir.Decl("A", (3, 7)), ir.Decl("x", (7,)), ir.Decl("y", (3,))),
                         (ir.Statement("y", (("i", 3),), body),))
    assert program_cost(program).flops == 3 * 7 * 2


def test_analyze_reports_the_examples_concat_as_a_copy(capsys):
    """The case that was reported: ``Z = concat(F, vec(Q))`` at M = 5, p = 3 said 45.4k flops."""
    from pathlib import Path

    from tensorlang.cli import main

    example = Path(__file__).resolve().parents[2] / "examples" / "sizes" / "quadratic_features.tl"
    assert main(["analyze", str(example), "--param", "M=5", "--param", "p=3"]) == 0
    out = capsys.readouterr().out
    assert "Z : [5 12]   flops 0   bytes 960" in out
    assert "total: 2 statements, flops 45, bytes 1.44k" in out  # Q's 45 products only


def test_the_kept_count_and_the_walk_with_sizes_agree_on_the_examples():
    """``body_flops`` keeps numeric counts on the nodes and walks afresh for symbolic
    sizes: both read one rule (``_node_flops``), so an identity ``size`` gives the same."""
    from pathlib import Path

    import tensorlang as tl

    examples = Path(__file__).resolve().parents[2] / "examples"
    programs = [tl.compile(path, backend="numpy").ein for path in sorted(examples.glob("structure/*.tl"))]
    programs += [tl.compile(path, backend="numpy").ein for path in sorted(examples.glob("fig*.tl"))]
    bodies = [s.body for p in programs for s in p.statements]
    assert any(isinstance(node, ir.Concat) for body in bodies for node in ir.nodes(body))
    for body in bodies:
        assert body_flops(body, lambda n: n) == body_flops(body)
