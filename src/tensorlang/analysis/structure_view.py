"""The structure section of ``tensorlang analyze`` in a user's terms (docs/structure.md,
"Reading the structure section")."""

from __future__ import annotations

import itertools

from ..ein import ir
from .structure import Block, Moments, TensorStructure, infer, structure_lines

#: Monomials listed per dimension before the list is cut (the count is always given).
MAX_LISTED = 24


def structure_view(program: ir.Program, isl: bool = False) -> list[str]:
    """``structure_lines`` with, under each tensor, the monomials and (``isl``) the isl sets."""
    found = {n: s for n, s in infer(program).items() if s.shape}
    return [text for line, s in zip(structure_lines(program), found.values())
            for text in (line, *(f"      {detail}" for detail in details(s, isl)))]


def details(s: TensorStructure, isl: bool = False) -> list[str]:
    """The lines under one tensor's summary."""
    lines = []
    for d, blocks in enumerate(s.blocks):
        terms = [t for b in blocks or () if b.monomial is not None for t in block_monomials(b)]
        if blocks and terms and all(b.monomial is not None for b in blocks):
            lines.append(f"dimension {d + 1} holds {_listed(terms)} ({len(terms)} distinct of {s.shape[d]}; "
                         "the other positions copy them)")
    if s.moments is not None:
        lines += moment_lines(s.moments, s)
    if isl and (s.groups or s.redundant_blocks or s.moments is not None or s.unique_size < s.dense_size):
        lines.append(f"unique set (isl): {s.unique}")
        try:
            lines.append(f"redundancy (isl): {s.redundancy()}")
        except ValueError as exc:  # too many pieces for isl (moments of high degree)
            lines.append(f"redundancy (isl): {exc}")
    return lines


def block_monomials(block: Block) -> list[str]:
    """The monomials a block's distinct positions hold, in the order of the positions."""
    assert block.monomial is not None
    tensor, dim, others = block.monomial
    return ["*".join(_factor(tensor, dim, others, a) for a in local)
            for local in itertools.product(*(range(n) for n in block.shape))
            if all(list(local[t] for t in g) == sorted(local[t] for t in g) for g in block.groups)]


def moment_lines(m: Moments, s: TensorStructure) -> list[str]:
    degrees = m.degrees
    shown = f"{degrees[0]}" if len(degrees) == 1 else f"{degrees[0]}..{degrees[-1]}"
    lines = [f"every entry is a moment of {m.base} (a sum over its other indices of a product of its entries): "
             f"{s.unique_size} distinct of {s.dense_size}, of degree {shown}"]
    for d, blocks in enumerate(m.dims):
        terms = [t for _, degree in blocks for t in _monomials(m.base, m.n, degree)]
        lines.append(f"dimension {d + 1} stands for {_listed(terms)}")
    return lines


def _monomials(base: str, n: int, degree: int) -> list[str]:
    return ["*".join(f"{base}[r,{a + 1}]" for a in combo)
            for combo in itertools.combinations_with_replacement(range(n), degree)]


def _factor(tensor: str, dim: int, others: tuple[str, ...], position: int) -> str:
    indices = list(others)
    indices.insert(dim, str(position + 1))
    return f"{tensor}[{','.join(indices)}]"


def _listed(terms: list[str]) -> str:
    if len(terms) <= MAX_LISTED:
        return ", ".join(terms)
    return ", ".join(terms[:MAX_LISTED - 2]) + f", ... ({len(terms) - MAX_LISTED + 1} more), " + terms[-1]
