"""The builder: programs of the operator language built from Python values.

``expressions`` holds the nodes and constructors (``var``, ``outer``, ``contract``,
``transpose``, ``kron``, ``+ - * /``); a built program is printed as the model language
(:func:`~.expressions.to_model_source`) and from there it is the model language's
program: its text is this front end's text, so that parsing, checking, lowering and the
reference interpreter are the model language's own and the EIN is the same as the text's.
``tl.build`` (``tensorlang.builder``, above the compiler) compiles it.
"""

from __future__ import annotations

from ..language import Language, Params
from ..tl import LANGUAGE as MODEL
from ..tl.parser import parse_model
from .expressions import Expr, Kron, Var, contract, kron, outer, to_model_source, transpose, var


def _parse(text: str, params: Params):
    return parse_model(text)


LANGUAGE = Language(
    name="builder",
    suffixes=(),
    parse=_parse,
    check=MODEL.check,
    lower=MODEL.lower,
    interpret=MODEL.interpret,
    print=MODEL.print,
    description="programs built in Python (tl.var, tl.outer, tl.contract, ...), printed as the model language",
)

__all__ = ["Expr", "Kron", "LANGUAGE", "Var", "contract", "kron", "outer", "to_model_source", "transpose", "var"]
