"""The differential-testing harness: random programs in both statement forms, a bounded
oracle for each, and one check that any back end agrees with it and with the interpreter.

* Operator-form programs come from :func:`generators.programs` and their oracle is the
  einsum translation in generators.py.
* Index-form programs are generated here directly as EIN (random accesses with index
  variables, fixed positions and affine indices such as ``x[2*i0-k1+3]``, sums, the
  reductions prod/max/min (EIN ``Reduce``),
  stacks (EIN ``Stack``), delta, eps, numbers, functions, + - * /), printed
  with the EIN printer, and evaluated by :func:`ein_oracle`: the library's EIN evaluator
  (tensorlang.ein.interp) with an arithmetic that also tracks a first-order
  rounding-error bound (:class:`Bounded`).

A back end plugs in by name: ``check_backend("numpy", case)``.  Later back ends (C) and
passes (the optimizer) reuse :func:`cases` and :func:`check_backend` unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

import tensorlang as tl
from tensorlang.ein import interp, ir
from tensorlang.ein.index import Affine, index_range
from tensorlang.ein.printer import to_text

from .generators import bounded_apply, bounded_binop, oracle, program_text, programs, qualify, random_inputs

EPS = {"float64": float(np.finfo(np.float64).eps), "float32": float(np.finfo(np.float32).eps)}
#: Slack on the first-order bound: summation orders, BLAS blocking, float32 inputs.
SLACK = 32


@dataclass
class Case:
    """A program text, its inputs, and the oracle's (value, bound) for every result."""

    form: str
    text: str
    inputs: dict[str, np.ndarray]
    expected: dict[str, tuple[np.ndarray, np.ndarray]]
    results: tuple[str, ...]


# ---------------------------------------------------------------- index-form programs
class _IndexDraft:
    def __init__(self, qualified: bool, max_extent: int, wild: bool = False):
        self.qualified = qualified
        self.max_extent = max_extent
        self.wild = wild  # functions and divisors of any value, reductions of a body without their index
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.inputs: list[str] = []
        self.assigned: list[str] = []

    def fresh(self, shape) -> str:
        name = f"w{len(self.shapes)}"
        self.shapes[name] = tuple(shape)
        self.inputs.append(name)
        return name

    def readable(self) -> list[str]:
        names = list(self.shapes)
        if self.qualified:
            names = [n for n in names if n in self.inputs or n in self.assigned]
        return names


def _access(draw, scope: dict[str, int], draft: _IndexDraft, must_use: str | None = None) -> ir.Expr:
    """An access to a variable; every dimension gets a scope index of its extent or a position."""
    candidates = [n for n in draft.readable() if draft.shapes[n]]
    if candidates and must_use is None and draw(st.integers(0, 2)) > 0:
        name = draw(st.sampled_from(candidates))
        indices = []
        for extent in draft.shapes[name]:
            fitting = [i for i, n in scope.items() if n == extent]
            shifted = _affine(draw, scope, extent) if draw(st.integers(0, 5)) == 0 else None
            if shifted is not None:
                indices.append(shifted[0])
            elif fitting and draw(st.integers(0, 3)) > 0:
                indices.append(draw(st.sampled_from(fitting)))
            else:
                indices.append(draw(st.integers(1, extent)))
        return ir.Tensor(name, tuple(indices))
    rank = draw(st.integers(1, 6 if draft.wild else 4))
    indices, shape = [], []
    for _ in range(rank):
        shifted = _affine(draw, scope) if draw(st.integers(0, 6)) == 0 else None
        if shifted is not None:
            indices.append(shifted[0])
            shape.append(shifted[1])
        elif scope and draw(st.integers(0, 4)) > 0:
            index = draw(st.sampled_from(sorted(scope)))
            indices.append(index)
            shape.append(scope[index])
        else:
            extent = draw(st.integers(1, draft.max_extent if len(shape) < 4 else 2))
            indices.append(draw(st.integers(1, extent)))
            shape.append(extent)
    if must_use is not None and must_use not in indices:
        position = draw(st.integers(0, rank - 1))
        indices[position], shape[position] = must_use, scope[must_use]
    return ir.Tensor(draft.fresh(shape), tuple(indices))


def _affine(draw, scope: dict[str, int], extent: int | None = None):
    """(an affine index of one or two scope variables, the extent of a dimension it stays
    inside): inside ``extent`` when given (None when it cannot fit), else a fitting one."""
    if not scope:
        return None
    names = draw(st.lists(st.sampled_from(sorted(scope)), min_size=1, max_size=2, unique=True))
    terms = tuple((name, draw(st.sampled_from([1, 1, 2, -1]))) for name in names)
    lo, hi = index_range(Affine(terms, 0), scope)
    if extent is None:
        extent = hi - lo + 1 + draw(st.integers(0, 2))
    if hi - lo + 1 > extent:
        return None
    return Affine(terms, draw(st.integers(1 - lo, extent - hi))), extent


def _positive(draw, scope, depth, draft) -> ir.Expr:
    return ir.Apply("exp", ir.Apply("tanh", index_expr(draw, scope, depth, draft)))


def index_expr(draw, scope: dict[str, int], depth: int, draft: _IndexDraft) -> ir.Expr:
    """A random EIN expression over the index variables in ``scope``."""
    kinds = ["access", "access", "number"]
    if depth > 0:
        kinds += ["add", "sub", "mul", "mul", "div", "neg", "fn", "sum", "sum", "reduce", "reduce"]
    if scope:
        kinds += ["delta"]
    if any(n in (2, 3) for n in scope.values()):
        kinds += ["eps"]
    if depth > 0 and any(n <= 4 for n in scope.values()):
        kinds += ["stack"]
    if depth > 0 and any(n >= 2 for n in scope.values()):
        kinds += ["concat"]
    if [n for n in draft.readable() if draft.shapes[n] == ()]:
        kinds += ["scalar"]
    kind = draw(st.sampled_from(kinds))
    sub = lambda: index_expr(draw, scope, depth - 1, draft)  # noqa: E731
    if kind == "access":
        return _access(draw, scope, draft)
    if kind == "number":
        return ir.Const(draw(st.sampled_from([0.5, 1.0, 2.0, 3.0, 0.25] + ([0.0, -0.0, -2.0] if draft.wild else []))))
    if kind == "scalar":
        return ir.Tensor(draw(st.sampled_from([n for n in draft.readable() if draft.shapes[n] == ()])), ())
    if kind == "delta":
        def pick():
            choice = draw(st.integers(0, 4))
            if choice == 4:  # an affine index compares its position (at least 1)
                return _affine(draw, scope)[0]
            return draw(st.sampled_from(sorted(scope))) if choice else draw(st.integers(1, 3))
        return ir.Delta(pick(), pick())
    if kind == "eps":
        n = draw(st.sampled_from(sorted({v for v in scope.values() if v in (2, 3)})))
        fitting = sorted(i for i, v in scope.items() if v == n)
        return ir.Epsilon(tuple(draw(st.sampled_from(fitting)) if draw(st.integers(0, 3)) else draw(st.integers(1, n))
                                for _ in range(n)))
    if kind in ("add", "sub", "mul"):
        return ir.BinOp({"add": "+", "sub": "-", "mul": "*"}[kind], sub(), sub())
    if kind == "div":
        if draft.wild and draw(st.booleans()):  # controlled division by any value: 0, ±0, ±inf, ⊥
            return ir.BinOp("/", sub(), sub())
        if draw(st.booleans()):
            return ir.BinOp("/", sub(), ir.Const(draw(st.sampled_from([2.0, 0.5, 4.0]))))
        return ir.BinOp("/", sub(), _positive(draw, scope, depth - 1, draft))
    if kind == "neg":
        return ir.Neg(sub())
    if kind == "fn":
        fn = draw(st.sampled_from(["sin", "cos", "tanh", "abs", "exp", "sqrt", "log"]))
        if draft.wild and draw(st.booleans()):  # of negative numbers, ±0, ±inf and ⊥ too
            return ir.Apply(fn, sub())
        if fn == "exp":
            return _positive(draw, scope, depth - 1, draft)
        if fn in ("sqrt", "log"):
            return ir.Apply(fn, _positive(draw, scope, depth - 1, draft))
        return ir.Apply(fn, sub())
    if kind == "stack":  # [e1, ..., en][i]: item i (EIN Stack, CFDlang's stacking)
        index = draw(st.sampled_from(sorted(i for i, n in scope.items() if n <= 4)))
        return ir.Stack(index, tuple(sub() for _ in range(scope[index])))
    if kind == "concat":  # concat(a:2 => e1, b:3 => e2)[i]: the direct sum (003 §3)
        index = draw(st.sampled_from(sorted(i for i, n in scope.items() if n >= 2)))
        cuts = sorted(set(draw(st.lists(st.integers(1, scope[index] - 1), min_size=1, max_size=2))))
        ends = [0, *cuts, scope[index]]
        parts = tuple((f"c{len(scope)}_{k}", b - a) for k, (a, b) in enumerate(zip(ends, ends[1:])))
        return ir.Concat(index, parts, tuple(index_expr(draw, scope | {name: n}, depth - 1, draft)
                                             for name, n in parts))
    if kind in ("sum", "reduce"):
        op = "+" if kind == "sum" else draw(st.sampled_from(["*", "max", "min"]))
        taken = set(scope)
        count = draw(st.integers(1, 1 if op == "*" else 2))  # a product of <= 7 factors stays tame
        names = [f"k{len(taken) + n}" for n in range(count)]
        inner = dict(scope)
        index = []
        for name in names:
            inner[name] = draw(st.integers(1, draft.max_extent))
            index.append((name, inner[name]))
        body = index_expr(draw, inner, depth - 1, draft)
        if draft.wild and draw(st.integers(0, 3)) == 0:  # `prod(k:3) x[i]`: N equal terms, the extent written
            return ir.Sum(tuple(index), body) if op == "+" else ir.Reduce(op, tuple(index), body)
        for name in names:  # every summed index must index a tensor (its extent is inferred)
            if not _uses(body, name):
                body = ir.BinOp("*", _access(draw, inner, draft, must_use=name), body)
        return ir.Sum(tuple(index), body) if op == "+" else ir.Reduce(op, tuple(index), body)
    raise AssertionError(kind)


def _uses(e: ir.Expr, name: str) -> bool:
    return any(name in t.indices for t in ir.tensors(e)) or any(
        isinstance(n, ir.Epsilon) and name in n.indices for n in _nodes(e)
    )


def _nodes(e):
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(ir.children(node))


@st.composite
def index_programs(draw, max_depth: int = 3, max_stmts: int = 3, max_extent: int = 7, inout: bool | None = None,
                   wild: bool = False):
    """A random well-typed index-form program, as an EIN program (``inout``: whether a
    statement may assign an input, making it ``inout``; drawn when None).  ``wild``: for
    comparisons with the reference on special values, not with the rounding-bound oracle:
    ``sqrt``, ``log``, ``exp`` and divisions of any value (numbers ±0 and -2 too), reductions (``prod(k:3) x[i]``)
    over an index their body does not read, and ranks up to 6 (the dimensions past the
    fourth of extent 1 or 2)."""
    qualified = inout or draw(st.booleans())
    inout = qualified and (draw(st.integers(0, 2)) == 0 if inout is None else inout)
    draft = _IndexDraft(qualified, max_extent, wild)
    statements = []
    for _ in range(draw(st.integers(1, max_stmts))):
        shape = tuple(draw(st.lists(st.integers(1, max_extent), min_size=0, max_size=4)))
        if wild and draw(st.integers(0, 3)) == 0:
            shape += tuple(draw(st.lists(st.integers(1, 2), min_size=1, max_size=2)))
        same = [n for n, s in draft.shapes.items() if s == shape and not (qualified and n in draft.inputs)]
        if inout and draft.inputs and draw(st.booleans()):  # an input assigned: inout
            target = draw(st.sampled_from(draft.inputs))
            shape = draft.shapes[target]
        elif same and draw(st.booleans()):
            target = draw(st.sampled_from(same))
        else:
            target = f"w{len(draft.shapes)}"
            draft.shapes[target] = shape
        names = [f"i{n}" for n in range(len(shape))]
        body = index_expr(draw, dict(zip(names, shape)), draw(st.integers(0, max_depth)), draft)
        statements.append(ir.Statement(target, tuple(zip(names, shape)), body))
        if target not in draft.assigned:
            draft.assigned.append(target)
    quals = qualify(draw, draft.shapes, draft.inputs, [s.target for s in statements]) if qualified else {}
    decls = tuple(ir.Decl(name, shape, quals.get(name)) for name, shape in draft.shapes.items())
    return ir.Program(decls, tuple(statements))


# ---------------------------------------------------------------- the EIN oracle
class Bounded(interp.Values):
    """The EIN evaluator's arithmetic on (value, first-order rounding-error bound) pairs,
    bounds in units of eps: exact data has bound 0, each operation adds its own rounding."""

    def exact(self, array):
        return array, np.zeros(np.shape(array))

    def each(self, pair, f):
        return f(pair[0]), f(pair[1])

    def choose(self, mask, a, b):  # a selection: each point is exactly one item's value
        return np.where(mask, a[0], b[0]), np.where(mask, a[1], b[1])

    def neg(self, a):
        return -a[0], a[1]

    def apply(self, fn, a):
        return bounded_apply(fn, *a)

    def binop(self, op, a, b):
        return bounded_binop(op, *a, *b)

    def reduce(self, op, a):
        v, b = a
        if op == "+":
            terms = v.shape[-1]
            return v.sum(axis=-1), b.sum(axis=-1) + terms * np.abs(v).sum(axis=-1)
        if op in ("max", "min"):
            # exact operations: the result is off by at most the largest input error
            pick = np.maximum if op == "max" else np.minimum
            return pick.reduce(v, axis=-1), b.max(axis=-1)
        # a product: folded with the first-order bound of '*', which is the same for
        # every order of the factors (Σ_i e_i Π_{j≠i}|v_j| + (n-1)|Π v|)
        value, bound = v[..., 0], b[..., 0]
        for t in range(1, v.shape[-1]):
            value, bound = bounded_binop("*", value, bound, v[..., t], b[..., t])
        return value, bound


def ein_oracle(program: ir.Program, inputs: dict[str, np.ndarray]):
    """The EIN evaluator (tensorlang.ein.interp) on an EIN program, with error bounds:
    every variable as (value, bound)."""
    return interp.run(program, inputs, Bounded())


# ---------------------------------------------------------------- cases and the check
@st.composite
def cases(draw, max_extent: int = 7):
    """A random program in either form, with inputs and the oracle's expectation."""
    seed = draw(st.integers(0, 2**32 - 1))
    if draw(st.booleans()):
        program = draw(programs(max_depth=3, max_stmts=3, max_extent=max_extent))
        text = program_text(program, full_parens=draw(st.booleans()))
        inputs = random_inputs(program, seed)
        expected = oracle(program, inputs)
        decls = program.decls
        form = "operator"
    else:
        program = draw(index_programs(max_extent=max_extent))
        text = to_text(program)
        rng = np.random.default_rng(seed)
        qualified = any(d.qual for d in program.decls)
        inputs = {d.name: rng.uniform(-1, 1, size=d.shape) for d in program.decls
                  if not qualified or d.qual in ("in", "inout")}
        expected = ein_oracle(program, inputs)
        decls = program.decls
        form = "index"
    qualified = any(d.qual for d in decls)
    results = tuple(d.name for d in decls if not qualified or d.qual in ("out", "inout"))
    return Case(form, text, inputs, expected, results)


def assert_close_to_oracle(case: Case, results: dict, dtype: str = "float64", who: str = "") -> None:
    assert set(results) == set(case.results), f"{who}: results {sorted(results)} != {sorted(case.results)}"
    eps = EPS[dtype]
    for name in case.results:
        got = np.asarray(results[name], dtype=np.float64)
        value, bound = case.expected[name]
        assert got.shape == np.shape(value), f"{who} {name}: shape {got.shape} != {np.shape(value)}"
        nan = np.isnan(value)
        assert np.array_equal(np.isnan(got), nan), f"{who} {name}: undefined (NaN) entries differ"
        err = np.abs(got[~nan] - value[~nan])
        allowed = SLACK * eps * (np.asarray(bound)[~nan] + (np.abs(value[~nan]) if dtype == "float32" else 0)) + 1e-300
        bad = err > allowed
        assert not bad.any(), f"{who} {name}: error {err[bad].max():.3g} exceeds the rounding bound {allowed[bad].min():.3g}"


def assert_same_values(value, expected, rtol: float = 1e-12, atol: float = 1e-12, fused: bool = False) -> None:
    """⊥ (NaN) at the same places, the same infinities, finite entries within rtol/atol:
    what a rewrite that only reorders or skips work must keep.

    ``fused``: ``value`` may come from a BLAS step on inputs where a product of finite
    numbers overflows, and a ⊥ of ``expected`` may then be ±inf in ``value``
    (docs/optimizer.md, "Fused multiply-add", point 3: OpenBLAS fuses its multiply-adds,
    so Σ_k a_k b_k with a = [1, 1e200] and b = [-inf, 1e200] is -inf, where the sum as
    written is -inf + inf = ⊥; which of the two a run gives depends on the BLAS kernel
    and its blocking, so on the machine)."""
    value, expected = np.asarray(value), np.asarray(expected)
    assert value.shape == expected.shape, (value.shape, expected.shape)
    if fused:
        value = np.where(np.isnan(expected) & np.isinf(value), np.nan, value)
    assert np.array_equal(np.isnan(value), np.isnan(expected)), "undefined (NaN) entries differ"
    infinite = np.isinf(expected)
    assert np.array_equal(value[infinite], expected[infinite]), "infinite entries differ"
    finite = np.isfinite(expected)
    np.testing.assert_allclose(value[finite], expected[finite], rtol=rtol, atol=atol)


def check_backend(backend: str, case: Case, dtype: str = "float64") -> None:
    """Run ``case`` on ``backend`` and on the interpreter; both must meet the oracle's bound."""
    inputs = case.inputs if dtype == "float64" else {k: v.astype(np.float32) for k, v in case.inputs.items()}
    for who in ("interp", backend):
        results = tl.compile(case.text, backend=who, dtype=dtype)(**inputs)
        for value in results.values():
            assert value.dtype == np.dtype(dtype), f"{who}: dtype {value.dtype}"
        assert_close_to_oracle(case, results, dtype, who)


# ---------------------------------------------------------------- C kernels with special values
#: the special values :func:`special_inputs` mixes in: ±0, ±inf and NaN (⊥)
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])


def special_inputs(text: str, seed: int, special: float) -> dict[str, np.ndarray]:
    """Inputs for the ``in`` variables of program ``text``: uniform in [-2, 2], about a
    fraction ``special`` of the entries replaced by one of :data:`SPECIALS`."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for decl in tl.compile(text, backend="interp").executed.decls:
        if decl.qual == "in":
            a = rng.uniform(-2, 2, size=decl.shape)
            mask = rng.random(decl.shape) < special
            a[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
            arrays[decl.name] = a
    return arrays


def assert_meets_ein_oracle(got: np.ndarray, program: ir.Program, inputs: dict[str, np.ndarray],
                            name: str = "v") -> None:
    """``got``, a back end's result ``name`` of EIN ``program``, agrees with the EIN
    evaluator's own arithmetic (controlled division, ⊥) on NaN and the infinities, and
    with :func:`ein_oracle` on the finite values within the first-order rounding bound."""
    with np.errstate(all="ignore"):
        expected = np.asarray(interp.run(program, inputs)[name])
        _, bound = ein_oracle(program, inputs)[name]
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    inf = np.isinf(expected)
    assert np.array_equal(got[inf], expected[inf])
    finite = ~nan & ~inf & np.isfinite(bound)
    err = np.abs(got[finite] - expected[finite])
    assert (err <= SLACK * EPS["float64"] * np.asarray(bound)[finite] + 1e-300).all()


# ---------------------------------------------------------------- ⊥ compared strictly
#: the values :func:`undefined_and_zeros` mixes in: ⊥, +0 and -0 (no infinities: with
#: them, reassociation may legitimately turn inf + -inf = ⊥ into ±inf, docs/optimizer.md)
NAN_AND_ZEROS = np.array([np.nan, 0.0, -0.0])


def undefined_and_zeros(inputs: dict[str, np.ndarray], seed: int, fraction: float = 0.15) -> dict[str, np.ndarray]:
    """``inputs`` with about ``fraction`` of their entries replaced by ⊥, +0 or -0."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, value in inputs.items():
        a = np.array(value, dtype=np.float64, copy=True)
        mask = rng.random(a.shape) < fraction
        a[mask] = rng.choice(NAN_AND_ZEROS, size=int(mask.sum()))
        out[name] = a
    return out


def selects(text: str) -> bool:
    """Whether a program uses δ or ε, which the optimizer (so every compiled target) may
    treat as selectors: a ⊥ term that a zero of δ or ε multiplies may be dropped
    (docs/optimizer.md, docs/language.md "Where a compiled target may drop a ⊥")."""
    return re.search(r"\b(delta|eps)\b", text) is not None


def check_backend_strict(backend: str, case: Case, seed: int, dtype: str = "float64") -> None:
    """``case`` with ⊥ and ±0 among its inputs on ``backend`` against the reference
    interpreter: ⊥ at exactly the interpreter's positions (a program with δ or ε may be
    defined where the interpreter is ⊥, never the reverse), finite entries within the
    first-order rounding bound (computed by the EIN oracle with each ⊥ input read as 0)."""
    inputs = undefined_and_zeros(case.inputs, seed)
    if dtype != "float64":
        inputs = {k: v.astype(dtype) for k, v in inputs.items()}
    reference = tl.compile(case.text, backend="interp", dtype=dtype)
    want = reference(**inputs)
    kernel = tl.compile(case.text, backend=backend, dtype=dtype)
    got = kernel(**inputs)
    with np.errstate(all="ignore"):  # the program the target ran, for the signs of its zeros
        ran = interp.run(kernel.executed, {k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()})
    zeroed = {k: np.where(np.isnan(v), 0.0, v).astype(np.float64) for k, v in inputs.items()}
    with np.errstate(all="ignore"):
        bounds = ein_oracle(reference.ein, zeroed)
    eps = EPS[dtype]
    for name in case.results:
        value, ours = np.asarray(want[name], dtype=np.float64), np.asarray(got[name], dtype=np.float64)
        assert ours.shape == value.shape
        nan = np.isnan(value)
        if selects(case.text):
            assert not np.isnan(ours[~nan]).any(), f"{backend} {name}: ⊥ where the interpreter is defined"
        else:
            assert np.array_equal(np.isnan(ours), nan), f"{backend} {name}: undefined (NaN) entries differ"
        keep = ~nan & ~np.isnan(ours)
        zeros = (ours == 0) & (np.asarray(ran[name]) == 0)  # ±0 as the program ran says (docs/optimizer.md)
        if not re.search(r"\b(max|min)\(", case.text):  # max(+0, -0): either zero
            assert np.array_equal(np.signbit(ours[zeros]), np.signbit(np.asarray(ran[name])[zeros])), \
                f"{backend} {name}: a zero of the other sign"
        bound = np.asarray(bounds[name][1], dtype=np.float64)
        bound = np.broadcast_to(np.where(np.isfinite(bound), bound, np.inf), value.shape)
        err = np.abs(ours[keep] - value[keep])
        allowed = SLACK * eps * (bound[keep] + np.abs(value[keep])) + 1e-300
        bad = ~(err <= allowed) & ~(ours[keep] == value[keep])
        assert not bad.any(), f"{backend} {name}: error {err[bad].max():.3g} beyond the rounding bound"


def assert_within_rounding(text: str, inputs: dict[str, np.ndarray], got: dict, expected: dict,
                           dtype: str = "float64", who: str = "") -> None:
    """Two runs of program ``text`` that may order its sums differently (padded and
    unpadded C, BLAS blocking) agree within the program's rounding bound: ⊥ at the same
    entries, the same infinities, finite entries within SLACK · eps · (the first-order
    bound of :func:`ein_oracle`, which grows with the number of terms summed and the sum
    of their magnitudes, + |value|).  The bound is computed on the inputs with each
    non-finite entry read as 0 (an entry a ⊥ or an infinity reaches is not finite)."""
    program = tl.compile(text, backend="interp").ein
    finite_inputs = {k: np.where(np.isfinite(v), v, 0.0).astype(np.float64) for k, v in inputs.items()}
    with np.errstate(all="ignore"):
        bounds = ein_oracle(program, finite_inputs)
    eps = EPS[dtype]
    for name, want in expected.items():
        value, ours = np.asarray(want, dtype=np.float64), np.asarray(got[name], dtype=np.float64)
        assert ours.shape == value.shape, (who, name)
        assert np.array_equal(np.isnan(ours), np.isnan(value)), f"{who} {name}: undefined (NaN) entries differ"
        infinite = np.isinf(value)
        assert np.array_equal(ours[infinite], value[infinite]), f"{who} {name}: infinite entries differ"
        finite = np.isfinite(value)
        bound = np.broadcast_to(np.asarray(bounds[name][1], dtype=np.float64), value.shape)
        bound = np.where(np.isfinite(bound), bound, np.inf)
        err = np.abs(ours[finite] - value[finite])
        allowed = SLACK * eps * (bound[finite] + np.abs(value[finite])) + 1e-300
        bad = ~(err <= allowed)
        assert not bad.any(), f"{who} {name}: error {err[bad].max():.3g} beyond the rounding bound {allowed[bad].min():.3g}"
