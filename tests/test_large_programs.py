"""Programs of many statements compile in work linear in their length (issue 41): a
chain (each statement reads the one before, so fusion grows one definition up to
MAX_FUSED_NODES) and a wide program (independent statements).  Work is counted as calls
of the IR's child accessor (every walk of every pass and of the scheduler goes through
it), not timed."""

from __future__ import annotations

import pytest

import tensorlang as tl
from tensorlang.ein import ir


def chain(statements: int) -> str:
    lines = ["in var x : [4 4] symmetric", "out var y : [4 4]"]
    lines += [f"var t{k} : [4 4]" for k in range(statements)]
    lines.append("t0 = x")
    lines += [f"t{k}[i,j] = t{k - 1}[j,i] + x[i,j]" for k in range(1, statements)]
    lines.append(f"y = t{statements - 1}")
    return "\n".join(lines) + "\n"


def wide(statements: int) -> str:
    lines = ["in var x : [4 4]"]
    lines += [f"out var t{k} : [4 4]" for k in range(statements)]
    lines += [f"t{k}[i,j] = x[j,i] * {k}.0 + x[i,j]" for k in range(statements)]
    return "\n".join(lines) + "\n"


def _walk_work(source: str, monkeypatch) -> int:
    calls = [0]
    children = ir.children

    def counted(e):
        calls[0] += 1
        return children(e)

    monkeypatch.setattr(ir, "children", counted)
    kernel = tl.compile(source, backend="numpy")
    assert kernel.ir("opt") and kernel.code("c")
    monkeypatch.setattr(ir, "children", children)
    return calls[0]


@pytest.mark.slow
@pytest.mark.parametrize("program", [chain, wide])
def test_the_work_of_compiling_grows_linearly_with_the_statements(program, monkeypatch):
    small = _walk_work(program(500), monkeypatch)
    large = _walk_work(program(1000), monkeypatch)
    assert small > 500
    assert large <= 2.3 * small, (small, large)  # quadratic would be about 4x


@pytest.mark.slow
@pytest.mark.parametrize("program", [chain, wide])
def test_ten_thousand_statements_compile_to_c(program):
    kernel = tl.compile(program(10**4), backend="numpy")
    code = kernel.code("c")
    assert "t9999" in code or "y" in code
    assert kernel.ir("opt")


def test_lowering_types_each_subexpression_once(monkeypatch):
    """A deep expression (``x + x + ... + x``, left-nested) is lowered with each
    subexpression's type checked once, not once per enclosing expression."""
    from tensorlang.lang.tl import LANGUAGE, typecheck

    def binary_checks(depth: int) -> int:
        checked = tl.check(f"in var x : [3]\nout var y : [3]\ny = {' + '.join(['x'] * depth)}\n")
        calls = [0]
        rule = typecheck._t_binary

        def counted(*args):
            calls[0] += 1
            return rule(*args)

        monkeypatch.setattr(typecheck, "_t_binary", counted)
        LANGUAGE.lower(checked)
        monkeypatch.setattr(typecheck, "_t_binary", rule)
        return calls[0]

    assert binary_checks(200) <= 200 and binary_checks(400) <= 400
