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
