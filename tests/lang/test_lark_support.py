"""The depth bound every lark front end shares (lang/lark_support.py): one iterative walk
for a statement's expression tree (``shallow``) and for whole parse trees
(``check_tree_depth``), each refusal with its own message and span."""

from __future__ import annotations

from dataclasses import dataclass

import lark
import pytest

from tensorlang.errors import MAX_DEPTH, Span, TensorLangError
from tensorlang.lang import lark_support
from tensorlang.lang.diderot.parse import parse_program


@dataclass
class _Stmt:
    expr: tuple
    span: Span


def _chain(depth: int) -> tuple:
    """A tuple tree ``depth`` nodes deep (each node: its children)."""
    node: tuple = ()
    for _ in range(depth - 1):
        node = (node,)
    return node


def test_shallow_refuses_one_level_past_the_bound_at_the_statement():
    ok, deep = _Stmt(_chain(MAX_DEPTH), Span(1, 1, 1, 9)), _Stmt(_chain(MAX_DEPTH + 1), Span(2, 1, 2, 9))
    assert lark_support.shallow(ok, lambda node: node) is ok
    with pytest.raises(TensorLangError) as info:
        lark_support.shallow(deep, lambda node: node)
    assert info.value.code == "too-large" and info.value.diagnostics[0].span == deep.span
    assert f"nested more than {MAX_DEPTH} operators deep" in info.value.message


def _tree(depth: int) -> lark.Tree:
    """A parse tree ``depth`` subtrees deep whose every node also holds a token and a
    left-out optional (None): neither counts as a level."""
    node = lark.Tree("leaf", [lark.Token("NAME", "x"), None], meta=None)
    for _ in range(depth - 1):
        node = lark.Tree("op", [lark.Token("NAME", "y"), node, None])
    return node


def test_check_tree_depth_counts_subtrees_only_and_calls_children_on_each():
    seen = []
    tree = _tree(MAX_DEPTH)
    assert lark_support.check_tree_depth(tree) is tree
    assert lark_support.check_tree_depth(tree, lambda node: seen.append(node) or node.children) is tree
    assert len(seen) == MAX_DEPTH
    with pytest.raises(TensorLangError) as info:
        lark_support.check_tree_depth(_tree(MAX_DEPTH + 1))
    assert info.value.code == "too-large" and f"more than {MAX_DEPTH} levels deep" in info.value.message


def test_a_diderot_reserved_word_as_a_name_is_refused_by_the_same_walk():
    text = "#version 2.0\nreal nan = 1.0;\nstrand s () { output real x = 1.0; update { stabilize; } }\n" \
           "initially [ s() | i in 0..0 ];\n"
    with pytest.raises(TensorLangError) as info:
        parse_program(text)
    assert info.value.code == "syntax" and "'nan' is a reserved word" in info.value.message
    assert info.value.diagnostics[0].span.line == 2
