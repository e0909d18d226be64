"""Diderot program text -> :mod:`.ast` (versions 1.0 and 2.0), error[syntax] at positions."""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from pathlib import Path

from lark import Lark, Token, Transformer, v_args

from ...errors import Span, error
from .. import lark_support
from . import ast as A

#: Unicode spelling of every operator, from whichever spelling the program used.
_CANON = {
    "⋅": "•", "(*)": "⊛", "\\conv": "⊛", "\\dot": "•", "\\times": "×", "\\otimes": "⊗", "\\circ": "∘",
    "∇⋅": "∇•",
}

WORDS = {
    "NAME": "a name", "REAL": "a real number", "STRING": "a string", "SEMICOLON": "';'",
    "LBRACE": "'{'", "RBRACE": "'}'", "VBAR": "'|'", "MULOP": "an operator", "ADDOP": "'+'",
    "MINUS": "'-'", "CMP": "a comparison", "OPASSIGN": "an assignment", "DIFF": "'∇'",
}


def _span(meta) -> Span:
    if getattr(meta, "empty", True):
        return A.NOWHERE
    return Span(meta.line, meta.column, meta.end_line, meta.end_column)


_tok = lark_support.tok_span


def _diff_op(text: str) -> str:
    if text.startswith("\\nabla"):
        rest = text[len("\\nabla"):].strip()
        return {"": "∇", "\\otimes": "∇⊗", "\\dot": "∇•", "\\times": "∇×"}[rest]
    return _CANON.get(text, text)


_ESCAPES = {"n": "\n", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "r": "\r", "v": "\v", "\\": "\\", '"': '"'}


def _unquote(tok: Token) -> str:
    """A string literal's text as diderotc's lexer reads it: the escapes of _ESCAPES and ``\\ddd`` a byte's
    decimal code (0..255: one past 255, or any other backslash, is error[syntax], where diderotc refused it or
    crashed); up to a NUL, as in C.  A byte past 127 is the executable's byte: a character where the bytes make
    UTF-8 (``"\\195\\169"`` is é), else surrogateescape's, which the printed text writes back as that byte."""
    def one(m: re.Match) -> str:
        if m[1] in _ESCAPES or m[1].isdigit() and len(m[1]) == 3 and int(m[1]) < 256:
            return _ESCAPES.get(m[1]) or chr(int(m[1]) if int(m[1]) < 128 else 0xDC00 + int(m[1]))
        raise error("syntax", f"string literal {str(tok)[:40]}: the escape \\{m[1]} is none of Diderot's (\\n, \\t, "
                              "\\a, \\b, \\f, \\r, \\v, \\\\, \\\", or \\ddd: a byte's decimal code, 000 to 255)", _tok(tok))
    text = re.sub(r"\\(\d{1,3}|.)", one, str(tok)[1:-1], flags=re.S).split("\0", 1)[0]
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")


_int = lark_support.integer


#: Rules whose node is the class applied to the rule's children in order (names as str), then its span.
_DIRECT = {"if_stmt": A.If, "die": A.Die, "continue_": A.Continue, "return_": A.Return, "print_": A.Print,
           "cond": A.Cond, "range": A.Range, "apply": A.Apply, "index": A.Index, "seq_index": A.SeqIndex,
           "comprehension": A.Comprehension, "norm": A.Norm, "identity": A.Identity, "zeros": A.Zeros,
           "var": A.Var, "select": A.Select, "unary": A.Unary, "new": A.New, "iter": A.Iter, "decl": A.Decl,
           "param": A.Param, "function_decl": A.FunctionDecl}
#: Rules whose node is made from the rule's children and its span by a function.
_MADE = {
    "int_lit": lambda c, s: A.Num(_int(c[0]), True, span=s), "real_lit": lambda c, s: A.Num(float(str(c[0])), False, span=s),
    "pi": lambda c, s: A.Num(math.pi, False, span=s), "inf": lambda c, s: A.Num(float("inf"), False, span=s),
    "str_lit": lambda c, s: A.Str(_unquote(c[0]), span=s), "true": lambda c, s: A.Bool(True, span=s),
    "false": lambda c, s: A.Bool(False, span=s), "nan": lambda c, s: A.Nan(c[0] if c and c[0] is not None else (), span=s),
    "real_cast": lambda c, s: A.RealCast(c[-1], span=s), "load_image": lambda c, s: A.Load("image", c[0], span=s),
    "load_sequence": lambda c, s: A.Load("sequence", c[0], span=s), "stabilize": lambda c, s: A.Stabilize(span=s),
    "kernel_ref": lambda c, s: A.KernelRef(str(c[0]), _int(c[1]), span=s),
    "binop": lambda c, s: A.BinOp(_CANON.get(str(c[1]), str(c[1])), c[0], c[2], span=s),
    "diff": lambda c, s: A.Diff(_diff_op(str(c[0])), c[1], span=s),
    "comprehension_arg": lambda c, s: A.Apply(c[0], (A.Comprehension(c[1], c[2], span=s),), span=s),
    "field_fn_decl": lambda c, s: A.GlobalDecl(c[0], str(c[1]), c[3], False, str(c[2]), span=s),
    "state_decl": lambda c, s: A.StateDecl(c[1], str(c[2]), c[3], c[0] is not None, span=s),
    "image_type": lambda c, s: A.TypeSyn("image", c[1], dim=_space(c[0], s), span=s),
    "field_type": lambda c, s: A.TypeSyn("field", c[2], dim=_space(c[1], s), k=_int(c[0]) if c[0] is not None else None,
                                         span=s),
    "kernel_type": lambda c, s: A.TypeSyn("kernel", k=_int(c[0]), span=s),
    "value_type": lambda c, s: A.TypeSyn(c[0][0], c[0][1], seq=tuple(c[1:]), span=s),
    "seq_dim": lambda c, s: c[0] if c and c[0] is not None else None,
    "input_decl": lambda c, s: A.InputDecl(c[0], str(c[1]), _unquote(c[2]) if c[2] is not None else None, c[3], span=s),
    "method": lambda c, s: ("start", c[0]) if len(c) == 1 else (str(c[0]), c[1]),  # (start, initialize: anonymous)
    "create_array": lambda c, s: A.Create(True, c[0][0], c[0][1], c[1], span=s),
    "create_collection": lambda c, s: A.Create(False, c[0][0], c[0][1], c[1], span=s), "call": lambda c, s: (str(c[0]), c[1]),
    "assign": lambda c, s: A.Assign(str(c[0]), "=" if len(c) == 2 else str(c[1]), c[-1], span=s),
    **dict.fromkeys(("iters", "indices"), lambda c, s: tuple(c)),  # (``:`` in an index: None)
    **dict.fromkeys(("params", "shape", "args"), lambda c, s: tuple(x for x in c if x is not None)),
    "fun_expr": lambda c, s: c[0], "fun_block": lambda c, s: c[0], "slice_all": lambda c, s: None,
    # the global blocks: (their kind, the block)
    "global_block": lambda c, s: ("update", c[1]), "start_block": lambda c, s: ("start", c[0]),
    "init_block": lambda c, s: ("initialize", c[0]),
}
def _space(tok, span) -> int:
    if (d := _int(tok)) not in (1, 2, 3):  # diderotc: "invalid dimension; must be 1, 2, or 3"
        raise error("shape", f"a {d}-D image or field: Diderot's are 1-, 2- or 3-D", span)
    return d


#: Rules whose node holds the rule's children as one tuple (then its span).
_TUPLE = {"block": A.Block, "seq_lit": A.SeqLit, "tensor_lit": A.TensorLit}


@v_args(meta=True)
class _ToAst(Transformer):
    def __init__(self) -> None:
        super().__init__()
        self.consts: dict[str, int] = {}  # int constants with a literal value, for shapes

    def __default__(self, data, children, meta):
        if data in _DIRECT:
            return _DIRECT[data](*(str(c) if isinstance(c, Token) else c for c in children), span=_span(meta))
        if data in _MADE:
            return _MADE[data](children, _span(meta))
        if data in _TUPLE:
            return _TUPLE[data](tuple(children), span=_span(meta))
        return super().__default__(data, children, meta)

    # ---- top level
    def start(self, meta, items):
        version, decls, blocks, strand, create = "1.0", [], {}, None, None
        for item in items:
            if item is None:  # no #version line: version 1.0
                continue
            if isinstance(item, Token) and item.type == "VERSION":
                version = str(item).split()[-1]
            elif isinstance(item, A.Strand):
                strand = item
            elif isinstance(item, A.Create):
                create = item
            elif isinstance(item, tuple):  # (its kind, a global block)
                if item[0] in blocks:
                    raise error("redeclared", f"a second global {item[0]} block", item[1].span)
                blocks[item[0]] = item[1]
            else:
                decls.append(item)
        if strand is None or create is None:  # the grammar requires both
            raise error("syntax", "a program needs a strand and an initially part", _span(meta))
        return A.Program(version, tuple(decls), strand, blocks.get("update"), blocks.get("start"), create,
                         blocks.get("initialize"), span=_span(meta))

    def global_decl(self, meta, c):
        const = c[0] is not None
        if const and c[1].kind == "int" and not c[1].seq:
            value = self._const_int(c[3])
            if value is not None:  # tensor[N], real[N], identity[N] may name it
                self.consts[str(c[2])] = value
        return A.GlobalDecl(c[1], str(c[2]), c[3], const, span=_span(meta))

    def _const_int(self, e, span: Span | None = None) -> int | None:
        """An int constant expression's value as diderotc folds it (ints, earlier int constants,
        ``-``, ``+ - * / %`` with / and % truncating toward zero); else None, or error at span."""
        value, why = None, "a size is an int constant expression (+ - * / % of ints and int constants)"
        if isinstance(e, A.Num) and e.is_int:
            value = int(e.value)
        elif isinstance(e, A.Var):
            value = self.consts.get(e.name)
            why = f"{e.name} in a shape is not an int constant declared before it (const int {e.name} = ...;)"
        elif isinstance(e, A.Unary) and e.op == "-":
            value = None if (v := self._const_int(e.operand, span)) is None else -v
        elif isinstance(e, A.BinOp) and e.op in ("+", "-", "*", "/", "%"):
            x, y = self._const_int(e.left, span), self._const_int(e.right, span)
            if x is not None and y is not None and (y != 0 or e.op in "+-*"):
                q = abs(x) // max(abs(y), 1) * (1 if (x < 0) == (y < 0) else -1)
                value = {"+": x + y, "-": x - y, "*": x * y, "/": q, "%": x - y * q}[e.op]
            why = f"a size divides by zero ({e.op} 0)"
        if value is None and span is not None:
            raise error("syntax", why, span)
        return value

    def dim(self, meta, c):
        if (value := self._const_int(c[0], _span(meta))) < 0:  # type: ignore[operator]
            raise error("syntax", f"a size in a type is {value}, below 0", _span(meta))
        return value

    def strand(self, meta, c):
        name, params = str(c[0]), c[1]
        state = tuple(x for x in c[2:] if isinstance(x, A.StateDecl))
        methods = tuple(x for x in c[2:] if isinstance(x, tuple))
        for i, (kind, block) in enumerate(methods):
            if kind in [m[0] for m in methods[:i]]:
                raise error("redeclared", f"strand {name} has a second {kind} method", block.span)
        return A.Strand(name, params, state, methods, span=_span(meta))

    # ---- types
    def prim(self, meta, c):
        tok = c[0]
        if tok.type == "TENSOR":
            return ("tensor" if c[1] else "real", c[1])
        if tok.type in ("VEC", "MAT"):  # vecN, matN
            return ("tensor", (int(str(tok)[3]),) * (1 if tok.type == "VEC" else 2))
        return ({"INT_T": "int", "REAL_T": "real", "BOOL": "bool", "STRING_T": "string"}[tok.type], ())

    # ---- statements
    def foreach(self, meta, c):
        ty = c[0]
        if isinstance(ty, Token):
            ty = A.TypeSyn("strand", name=str(ty), span=_tok(ty))
        return A.Foreach(ty, str(c[1]), c[2], c[3], span=_span(meta))


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
    return lark_support.lalr_parser(grammar, propagate_positions=True, maybe_placeholders=True)  # tables cached on disk


def _check_version(text: str) -> None:
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("#version"):
            version = stripped.split()[1] if len(stripped.split()) > 1 else ""
            if version not in ("1.0", "2.0", "1", "2"):
                raise error("syntax", f"#version {version}: this front end reads Diderot versions 1.0 and 2.0",
                            Span(number, 1, number, len(line) + 1))
            return
        if stripped and not stripped.startswith("//"):
            return


#: Keywords that are a whole expression by themselves, refused as names where one is declared (the lexer
#: reads a use as the keyword; docs/diderot-language.md, "Syntax"); other keywords may be names.
_EXPRESSION_WORDS = frozenset({"nan", "inf", "true", "false"})  # inf: a real literal in diderotc's lexers


def _children(node) -> list:
    for tok in node.children:
        if isinstance(tok, Token) and tok.type == "NAME" and str(tok) in _EXPRESSION_WORDS:
            raise error("syntax", f"{str(tok)!r} is a reserved word and cannot be a name", _tok(tok))
    return node.children


def _extension_hint(previous: Token | None, tok: Token) -> tuple[str, Span] | None:
    """A type word of a research branch of Diderot (``ofield#1(2)[]``, ``fem#1``): say so."""
    from .basis import extension_note
    starts = previous is None or str(previous) in (";", "}", "{", "input", "output") \
        or str(previous).startswith("#version")  # where a declaration starts
    note = extension_note(str(tok), types=True) if tok.type == "NAME" and starts else None
    return (f"unexpected {str(tok)!r}: {note}", lark_support.tok_span(tok)) if note else None


def parse_program(text: str) -> A.Program:
    """The program's tree (spans into ``text``), or error[syntax] at the first token the grammar cannot take."""
    _check_version(text)
    program = lark_support.parse(_parser(), text, WORDS, hint=_extension_hint, marks=";{}",  # depth: before any
                                 finish=lambda tree: _ToAst().transform(lark_support.check_tree_depth(tree, _children)))
    return dataclasses.replace(program, text=text, version=program.version + ".0" * (program.version in ("1", "2")))
