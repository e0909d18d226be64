"""Hypothesis strategies for random well-typed model-language programs, and an oracle.

The generator works top-down: asked for an expression of a given type, it picks an
operator whose typing rule can produce that type and asks for operands of the types the
rule needs (t-prod splits the type, t-contr inserts a pair of equal extents, t-trans
swaps two extents, ...).  Every program it draws is therefore well-typed by
construction, covers every operator, nests up to ``max_depth`` and reuses the results
of earlier statements.

The oracle evaluates the generated AST with ``numpy.einsum`` written here, independently
of the interpreter, and tracks a first-order bound on the rounding error of every value
so that results can be compared tightly even where sums cancel.

To keep values well conditioned, ``exp`` is only ever applied to ``tanh(...)`` and
``sqrt`` / ``log`` to such an exponential, and every divisor is one of those or a
nonzero literal: the interesting part of division, controlled division by zero, is
tested by hand in tests/test_api.py.
"""

from __future__ import annotations

import string
import dataclasses
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from tensorlang.lang.tl import ast

MAX_RANK = 6  # of any intermediate; variables have rank <= 4


@dataclass
class Draft:
    """A program under construction: variable types and the statements so far."""

    qualified: bool
    max_extent: int = 3
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    assigned: list[str] = field(default_factory=list)  # in statement order
    stmts: list[ast.Assign] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    direct_sums: bool = True  # concat and vec (003 §3): CFDlang and TeIL have neither

    def fresh(self, shape) -> str:
        name = f"v{len(self.shapes)}"
        self.shapes[name] = tuple(shape)
        self.inputs.append(name)
        return name

    def readable(self, shape) -> list[str]:
        """Variables of this type that a statement may read now."""
        names = [n for n, s in self.shapes.items() if s == tuple(shape)]
        if self.qualified:  # only inputs and what is already assigned
            names = [n for n in names if n in self.inputs or n in self.assigned]
        return names


_EXPR_TYPES = ast.Expr.__args__  # type: ignore[attr-defined]


def map_children(e: ast.Expr, f) -> ast.Expr:
    """``e`` with ``f`` applied to each direct subexpression (fields holding an expression
    or a tuple of expressions); every other field, spans included, is kept."""
    changes = {}
    for fld in dataclasses.fields(e):
        value = getattr(e, fld.name)
        if isinstance(value, _EXPR_TYPES):
            changes[fld.name] = f(value)
        elif isinstance(value, tuple) and value and all(isinstance(v, _EXPR_TYPES) for v in value):
            changes[fld.name] = tuple(f(v) for v in value)
    return dataclasses.replace(e, **changes) if changes else e


def _leaf(draw, shape, draft: Draft) -> ast.Expr:
    if shape == () and draw(st.integers(0, 3)) == 0:
        return ast.Number(draw(st.sampled_from([0.5, 1.0, 2.0, 0.25, 3.0, 1.5])))
    existing = draft.readable(shape)
    if existing and draw(st.integers(0, 2)) > 0:
        return ast.Var(draw(st.sampled_from(existing)))
    return ast.Var(draft.fresh(shape))


def _positive(draw, shape, depth, draft) -> ast.Expr:
    """An expression of this type whose values lie in [1/e, e]: exp(tanh(e))."""
    inner = ast.Call("exp", ast.Call("tanh", expr_of_shape(draw, shape, depth, draft)))
    wrap = draw(st.sampled_from(["none", "sqrt", "log-exp"]))
    if wrap == "sqrt":
        return ast.Call("sqrt", inner)
    if wrap == "log-exp":  # log of a positive value, then back to a positive one
        return ast.Call("exp", ast.Call("log", inner))
    return inner


def expr_of_shape(draw, shape, depth, draft: Draft) -> ast.Expr:
    """A random expression of type ``shape`` (a tuple of extents)."""
    shape = tuple(shape)
    if depth <= 0:
        return _leaf(draw, shape, draft)
    kinds = ["leaf", "neg", "fn", "add", "sub", "emul", "ediv", "smul", "smul_right", "sdiv", "trans"]
    if len(shape) + 2 <= MAX_RANK:
        kinds += ["contr", "contr", "contr"]
    if len(shape) + 4 <= MAX_RANK:
        kinds += ["group"]
    kinds += ["outer", "outer"]
    if shape and shape[0] <= 4:
        kinds += ["stack"]
    if draft.direct_sums and shape and shape[-1] >= 2:
        kinds += ["concat"]  # t-concat: the last extent split between the operands
    if draft.direct_sums and shape and len(shape) < MAX_RANK and any(shape[-1] % m == 0 for m in range(2, shape[-1] + 1)):
        kinds += ["vec"]  # t-vec: the last extent as m rows of shape[-1] / m
    kind = draw(st.sampled_from(kinds))
    sub = lambda s: expr_of_shape(draw, s, depth - 1, draft)  # noqa: E731

    if kind == "leaf":
        return _leaf(draw, shape, draft)
    if kind == "neg":
        return ast.Neg(sub(shape))
    if kind == "fn":
        fn = draw(st.sampled_from(["sin", "cos", "tanh", "abs", "exp"]))
        if fn == "exp":
            return _positive(draw, shape, depth - 1, draft)
        return ast.Call(fn, sub(shape))
    if kind in ("add", "sub", "emul"):
        op = {"add": "+", "sub": "-", "emul": "*"}[kind]
        return ast.Binary(op, sub(shape), sub(shape))
    if kind == "ediv":
        return ast.Binary("/", sub(shape), _positive(draw, shape, depth - 1, draft))
    if kind == "smul":
        return ast.Binary("*", sub(()), sub(shape))
    if kind == "smul_right":
        return ast.Binary("*", sub(shape), sub(()))
    if kind == "sdiv":
        if draw(st.booleans()):
            return ast.Binary("/", sub(shape), ast.Number(draw(st.sampled_from([2.0, 0.5, 4.0, 1.25]))))
        return ast.Binary("/", sub(shape), _positive(draw, (), depth - 1, draft))
    if kind == "trans":
        if len(shape) == 0:
            return sub(shape)
        m = draw(st.integers(1, len(shape)))
        n = draw(st.integers(1, len(shape)))
        inner = list(shape)
        inner[m - 1], inner[n - 1] = inner[n - 1], inner[m - 1]
        return ast.Transpose(sub(tuple(inner)), ast.Pair(m, n))
    if kind == "outer":
        k = draw(st.integers(0, len(shape)))
        return ast.Outer(sub(shape[:k]), sub(shape[k:]))
    if kind == "stack":  # t-stack: shape[0] operands of the remaining type
        return ast.Stack(tuple(sub(shape[1:]) for _ in range(shape[0])))
    if kind == "concat":
        cuts = sorted(set(draw(st.lists(st.integers(1, shape[-1] - 1), min_size=1, max_size=2))))
        ends = [0, *cuts, shape[-1]]
        return ast.Concat(tuple(sub(shape[:-1] + (b - a,)) for a, b in zip(ends, ends[1:])))
    if kind == "vec":
        m = draw(st.sampled_from([m for m in range(2, shape[-1] + 1) if shape[-1] % m == 0]))
        return ast.Vec(sub(shape[:-1] + (m, shape[-1] // m)))
    if kind in ("contr", "group"):
        npairs = 1 if kind == "contr" else draw(st.integers(1, 2))
        inner, pairs = _insert_pairs(draw, shape, npairs, draft.max_extent)
        grouped = kind == "group"
        if not grouped:
            return ast.Contract(sub(inner), (pairs[0],), False)
        return ast.Contract(sub(inner), tuple(pairs), True)
    raise AssertionError(kind)


def _insert_pairs(draw, shape, npairs, max_extent):
    """A type with ``npairs`` pairs of equal-extent dimensions inserted into ``shape``,
    and the pairs (1-based, in random order within each pair) that remove them again."""
    slots: list[object] = list(shape)  # an int is a kept extent, ("p", k) a pair member
    extents = []
    for k in range(npairs):
        extents.append(draw(st.integers(1, max_extent)))
        for _ in range(2):
            pos = draw(st.integers(0, len(slots)))
            slots.insert(pos, ("p", k))
    inner = tuple(extents[s[1]] if isinstance(s, tuple) else s for s in slots)
    positions = {k: [i + 1 for i, s in enumerate(slots) if s == ("p", k)] for k in range(npairs)}
    pairs = []
    for k in range(npairs):
        m, n = positions[k]
        if draw(st.booleans()):
            m, n = n, m
        pairs.append(ast.Pair(m, n))
    return inner, pairs


@st.composite
def programs(draw, qualified: bool | None = None, max_depth: int = 4, max_stmts: int = 4, max_extent: int = 3,
             direct_sums: bool = True):
    """A random well-typed operator-form program (an ast.Program); ``direct_sums=False``:
    without concat and vec (for the front ends that lack them)."""
    if qualified is None:
        qualified = draw(st.booleans())
    draft = Draft(qualified, max_extent, direct_sums=direct_sums)
    for _ in range(draw(st.integers(1, max_stmts))):
        shape = tuple(draw(st.lists(st.integers(1, max_extent), min_size=0, max_size=4)))
        # the target: a new variable, or (reusing) one of the same type
        same = [n for n in draft.shapes if draft.shapes[n] == shape and not (qualified and n in draft.inputs)]
        if same and draw(st.booleans()):
            target = draw(st.sampled_from(same))
        else:
            target = f"v{len(draft.shapes)}"
            draft.shapes[target] = shape
        expr = expr_of_shape(draw, shape, draw(st.integers(1, max_depth)), draft)
        draft.stmts.append(ast.Assign(target, expr))
        if target not in draft.assigned:
            draft.assigned.append(target)
    quals = qualify(draw, draft.shapes, draft.inputs, [s.target for s in draft.stmts]) if qualified else {}
    decls = tuple(ast.Decl(name, shape, quals.get(name)) for name, shape in draft.shapes.items())
    return ast.Program(decls, tuple(draft.stmts))


def random_inputs(program: ast.Program, seed: int) -> dict[str, np.ndarray]:
    """Values for every variable the caller may supply (all of them without qualifiers)."""
    rng = np.random.default_rng(seed)
    qualified = program.qualified
    return {
        d.name: rng.uniform(-1, 1, size=d.shape)
        for d in program.decls
        if (not qualified) or d.qual in ("in", "inout")
    }


# ---------------------------------------------------------------- the oracle
def parenthesize_fully(e: ast.Expr) -> str:
    """Text with every compound operand in parentheses: means the same under any precedence."""
    if isinstance(e, ast.Var):
        return e.name
    if isinstance(e, ast.Number):
        return repr(e.value)
    if isinstance(e, ast.Paren):
        return f"({parenthesize_fully(e.expr)})"
    if isinstance(e, ast.Neg):
        return f"-({parenthesize_fully(e.expr)})"
    if isinstance(e, ast.Call):
        return f"{e.fn}({parenthesize_fully(e.arg)})"
    if isinstance(e, ast.Outer):
        return f"({parenthesize_fully(e.left)}) # ({parenthesize_fully(e.right)})"
    if isinstance(e, ast.Transpose):
        return f"({parenthesize_fully(e.expr)}) ^ [{e.pair.first} {e.pair.second}]"
    if isinstance(e, ast.Contract):
        pairs = " ".join(f"[{p.first} {p.second}]" for p in e.pairs)
        return f"({parenthesize_fully(e.expr)}) . " + (f"[{pairs}]" if e.grouped else pairs)
    if isinstance(e, ast.Binary):
        return f"({parenthesize_fully(e.left)}) {e.op} ({parenthesize_fully(e.right)})"
    if isinstance(e, ast.Stack):
        return "[" + ", ".join(parenthesize_fully(item) for item in e.items) + "]"
    if isinstance(e, ast.Concat):
        return "concat(" + ", ".join(parenthesize_fully(item) for item in e.items) + ")"
    if isinstance(e, ast.Vec):
        return f"vec({parenthesize_fully(e.expr)})"
    raise AssertionError(e)


def program_text(program: ast.Program, full_parens: bool) -> str:
    from tensorlang.lang.tl.printer import expr_to_source

    lines = []
    for d in program.decls:
        lines.append(f"{d.qual + ' ' if d.qual else ''}var {d.name} : [{' '.join(map(str, d.shape))}]")
    for s in program.stmts:
        text = parenthesize_fully(s.expr) if full_parens else expr_to_source(s.expr)
        lines.append(f"{s.target} = {text}")
    return "\n".join(lines) + "\n"


_LETTERS = string.ascii_letters


def oracle(program: ast.Program, inputs: dict[str, np.ndarray]):
    """Run the program with einsum; return (values, error bounds in units of eps).

    Each value comes with E such that |computed - exact| <= eps * E to first order,
    for any summation order, which is what the comparison allows.
    """
    store = {}
    for d in program.decls:
        if d.name in inputs:
            store[d.name] = (np.asarray(inputs[d.name], dtype=np.float64), np.zeros(d.shape))
        else:
            store[d.name] = (np.full(d.shape, np.nan), np.zeros(d.shape))
    for s in program.stmts:
        store = {**store, s.target: _ev(s.expr, store)}  # ev-stmt: evaluate, then store
    return store


def _ev(e, store):
    if isinstance(e, ast.Var):
        return store[e.name]
    if isinstance(e, ast.Number):
        return np.float64(e.value), np.float64(0.0)
    if isinstance(e, ast.Paren):
        return _ev(e.expr, store)
    if isinstance(e, ast.Neg):
        v, err = _ev(e.expr, store)
        return -v, err
    if isinstance(e, ast.Call):
        return bounded_apply(e.fn, *_ev(e.arg, store))
    if isinstance(e, ast.Outer):
        (a, ea), (b, eb) = _ev(e.left, store), _ev(e.right, store)
        la, lb = _LETTERS[: np.ndim(a)], _LETTERS[np.ndim(a) : np.ndim(a) + np.ndim(b)]
        sub = f"{la},{lb}->{la}{lb}"
        v = np.einsum(sub, a, b)
        return v, np.einsum(sub, np.abs(a), eb) + np.einsum(sub, ea, np.abs(b)) + np.abs(v)
    if isinstance(e, ast.Transpose):
        a, ea = _ev(e.expr, store)
        letters = list(_LETTERS[: np.ndim(a)])
        out = letters.copy()
        m, n = e.pair.first - 1, e.pair.second - 1
        out[m], out[n] = out[n], out[m]
        sub = "".join(letters) + "->" + "".join(out)
        return np.einsum(sub, a), np.einsum(sub, ea)
    if isinstance(e, ast.Contract):
        a, ea = _ev(e.expr, store)
        letters = list(_LETTERS[: np.ndim(a)])
        removed = set()
        terms = 1
        for p in e.pairs:
            letters[p.second - 1] = letters[p.first - 1]
            removed |= {p.first - 1, p.second - 1}
            terms *= np.shape(a)[p.first - 1]
        out = "".join(l for i, l in enumerate(letters) if i not in removed)
        sub = "".join(letters) + "->" + out
        v = np.einsum(sub, a)
        return v, np.einsum(sub, ea) + terms * np.einsum(sub, np.abs(a))
    if isinstance(e, ast.Binary):
        return bounded_binop(e.op, *_ev(e.left, store), *_ev(e.right, store))
    if isinstance(e, ast.Stack):  # numpy.stack: each item in its own slice, exactly
        parts = [_ev(item, store) for item in e.items]
        return np.stack([v for v, _ in parts]), np.stack([np.broadcast_to(b, np.shape(v)) for v, b in parts])
    if isinstance(e, ast.Concat):  # numpy.concatenate: each operand in its own piece, exactly
        parts = [_ev(item, store) for item in e.items]
        return (np.concatenate([v for v, _ in parts], axis=-1),
                np.concatenate([np.broadcast_to(b, np.shape(v)) for v, b in parts], axis=-1))
    if isinstance(e, ast.Vec):  # a row-major reshape, exactly
        a, ea = _ev(e.expr, store)
        shape = np.shape(a)[:-2] + (np.shape(a)[-2] * np.shape(a)[-1],)
        return np.reshape(a, shape), np.reshape(np.broadcast_to(ea, np.shape(a)), shape)
    raise AssertionError(e)


def bounded_apply(fn: str, v, err):
    """f(v) and its first-order error bound, given v's bound ``err`` (units of eps)."""
    if fn in ("sin", "cos", "tanh"):  # |f'| <= 1
        return getattr(np, fn)(v), err + 1.0
    if fn == "abs":
        return np.abs(v), err
    if fn == "exp":
        r = np.exp(v)
        return r, r * (err + 1.0)
    if fn == "sqrt":
        r = np.sqrt(v)
        return r, err / (2 * r) + r
    if fn == "log":
        r = np.log(v)
        return r, err / v + np.abs(r) + 1.0
    raise AssertionError(fn)


def bounded_binop(op: str, a, ea, b, eb):
    """a op b and its first-order error bound; divisors are bounded away from zero."""
    if op in "+-":
        v = a + b if op == "+" else a - b
        return v, ea + eb + np.abs(a) + np.abs(b)
    if op == "*":
        v = a * b
        return v, np.abs(a) * eb + ea * np.abs(b) + np.abs(v)
    v = a / b
    return v, ea / np.abs(b) + np.abs(a) * eb / (b * b) + np.abs(v)


def qualify(draw, names, inputs, statements_targets):
    """Qualifiers for a generated qualified program: inputs are ``in`` (``inout`` where a
    statement assigns them), assigned variables ``out`` or temporaries, and at least the
    last target is ``out`` (or ``inout``)."""
    quals = {n: (("inout" if n in statements_targets else "in") if n in inputs
                 else draw(st.sampled_from(["out", "out", None]))) for n in names}
    if "out" not in quals.values() and "inout" not in quals.values():
        quals[statements_targets[-1]] = "out"
    return quals


def edit_tokens(draw, toks: list[str], vocabulary: list[str]) -> str:
    """One to three random edits of a token list (delete, duplicate, swap, or insert a word
    of ``vocabulary``), joined back into text: what the robustness tests feed a parser."""
    toks = list(toks)
    for _ in range(draw(st.integers(1, 3))):
        solid = [i for i, t in enumerate(toks) if not t.isspace()]
        if not solid:
            break
        i = draw(st.sampled_from(solid))
        edit = draw(st.sampled_from(["delete", "duplicate", "swap", "insert"]))
        if edit == "delete":
            del toks[i]
        elif edit == "duplicate":
            toks.insert(i, toks[i])
        elif edit == "swap":
            j = draw(st.sampled_from(solid))
            toks[i], toks[j] = toks[j], toks[i]
        else:
            toks.insert(i, " " + draw(st.sampled_from(vocabulary)) + " ")
    return "".join(toks)
