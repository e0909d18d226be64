"""What the strand-level generated programs (``fuzz_diderotc.py --mode strands``, docs/diderot.md, "Generated
programs against diderotc") found where tensorlang's executors differed from ``diderotc --double --exec``; and the
mode's smoke test (no diderotc here: its programs are only generated and typechecked)."""

from __future__ import annotations

from fuzz_diderotc import generate_strands

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check


def test_the_strand_generator_makes_programs_tensorlang_typechecks():
    """A few programs of the strand mode parse and typecheck, grids and collections both."""
    kinds = set()
    for seed in range(2):
        case = generate_strands(seed)
        strands(check(parse_program(case.text)))
        kinds.add("create_array" in case.text)
        assert case.argv.count("-r0") == 1
    assert kinds == {True, False}


BACKWARDS = """#version 2.0
strand S (int i, int j) {
  output real o = real(10 * i + j);
  update { print(i, " ", j, "\\n"); stabilize; }
}
create_collection { S(i, j) | i in 3..1, j in 2..0 }
"""


def test_ranges_that_run_backwards_make_no_strands(tmp_path, monkeypatch, capsys):
    """``i in 3..1, j in 2..0`` is empty: no strand, nothing written, exit 1. diderotc's executable multiplies the
    ranges' signed lengths (-1 · -1) and makes one strand with i = j = 0, which prints "0 0" and writes o.nrrd (a
    diderotc bug the generator found; ``i in -1..1, j in 2..-1`` fails to allocate there, or crashes in a global
    start block that reduces over the strands)."""
    import tensorlang as tl

    prog = tmp_path / "p.diderot"
    prog.write_text(BACKWARDS)
    monkeypatch.chdir(tmp_path)
    assert tl.compile(str(prog), backend="interp").main([]) == 1
    assert capsys.readouterr().out == "" and not (tmp_path / "o.nrrd").exists()
