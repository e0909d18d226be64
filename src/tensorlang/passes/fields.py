"""Field normalization (:func:`normalize`: :data:`DIFF_RULES`, :data:`PROBE_RULES`, then
004 §5.4's ε·∂² reduction) and lowering (:func:`lower`, Slice, 004 §5.7.2): docs/fields.md,
"How a probe is compiled".
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..ein import ir
from ..ein.fields import Conv, Diff, Probe, is_field_free
from ..ein.names import free_indices
from ..ein.rewrite import Rule, Tally, active
from ..errors import error

#: an EIN expression that may hold field forms (ein/fields.py): the ir.Expr union does not
#: name them, so field code types its expressions loosely
Expr = Any
ZERO = ir.Const(0.0)
ONE = ir.Const(1.0)


# ------------------------------------------------------------------ smart constructors
# Exact symbolic zeros and ones of differentiation (the derivative of a lifted tensor is
# the zero field, not "0·x"): dropping them changes no value.
def _is(e: Expr, value: float) -> bool:
    return isinstance(e, ir.Const) and e == ir.Const(value)


def add(a: Expr, b: Expr) -> Expr:
    return b if _is(a, 0.0) else a if _is(b, 0.0) else ir.BinOp("+", a, b)


def sub(a: Expr, b: Expr) -> Expr:
    return a if _is(b, 0.0) else neg(b) if _is(a, 0.0) else ir.BinOp("-", a, b)


def mul(a: Expr, b: Expr) -> Expr:
    return ZERO if _is(a, 0.0) or _is(b, 0.0) else b if _is(a, 1.0) else a if _is(b, 1.0) else ir.BinOp("*", a, b)


def div(a: Expr, b: Expr) -> Expr:
    return ZERO if _is(a, 0.0) else ir.BinOp("/", a, b)


def neg(a: Expr) -> Expr:
    return ZERO if _is(a, 0.0) else ir.Neg(a)


# ------------------------------------------------------------------ derivatives down
#: a rule's function: (node, derivative index or position, the recursion) -> expression
RuleFn = Callable[..., Expr]


def _table(*entries: tuple[type, str, str, RuleFn]) -> dict[type, tuple[Rule, RuleFn]]:
    """A table of 004 §5.3's rules by node kind from (kind, rule name, summary, function)."""
    return {kind: (Rule(name, "004 §5.3", summary, (kind,)), fn) for kind, name, summary, fn in entries}


def _d_binop(e: ir.BinOp, v, d) -> Expr:
    a, b = e.left, e.right
    if e.op in "+-":
        return (add if e.op == "+" else sub)(d(v, a), d(v, b))
    if e.op == "*":
        return add(mul(d(v, a), b), mul(a, d(v, b)))
    # quotient rule: ∂(a/b) = (∂a·b − a·∂b) / b²
    da, db = d(v, a), d(v, b)
    if _is(db, 0.0):
        return div(da, b)
    return div(sub(mul(da, b), mul(a, db)), mul(b, b))


#: The chain rule per function: f'(a) as an expression of a.
CHAIN: dict[str, Callable[[Expr], Expr]] = {
    "sqrt": lambda a: div(ONE, mul(ir.Const(2.0), ir.Apply("sqrt", a))),
    "exp": lambda a: ir.Apply("exp", a),
    "log": lambda a: div(ONE, a),
    "sin": lambda a: ir.Apply("cos", a),
    "cos": lambda a: neg(ir.Apply("sin", a)),
    "tanh": lambda a: sub(ONE, mul(ir.Apply("tanh", a), ir.Apply("tanh", a))),
    "abs": lambda a: div(ir.Apply("abs", a), a),  # sign(a), and 0 at 0 (controlled division)
}


def _d_apply(e: ir.Apply, v, d) -> Expr:
    inner = d(v, e.arg)
    if _is(inner, 0.0):
        return ZERO
    if e.fn not in CHAIN:
        raise error("shape", f"no derivative rule for the function {e.fn}", rule="field-derivative")
    return mul(CHAIN[e.fn](e.arg), inner)


def _d_constant(e, v, d) -> Expr:
    return ZERO


DIFF_RULES = _table(
    (Conv, "derivative-onto-kernel", "∂/∂x_μ ◇ (V_α ⊛ H^β) ⇒ V_α ⊛ H^βμ",
     lambda e, v, d: Conv(e.image, e.kernel, e.comps, e.derivs + (v,))),
    (ir.Const, "derivative-of-constant", "∂ of a lifted tensor is 0", _d_constant),
    (ir.Tensor, "derivative-of-lifted-tensor", "∂ lift(T) ⇒ 0", _d_constant),
    (ir.Delta, "derivative-of-delta", "∂ δ ⇒ 0", _d_constant),
    (ir.Epsilon, "derivative-of-epsilon", "∂ ε ⇒ 0", _d_constant),
    (ir.Neg, "derivative-through-neg", "∂(−e) ⇒ −∂e", lambda e, v, d: neg(d(v, e.arg))),
    (ir.BinOp, "sum-product-quotient-rule",
     "∂(a±b) ⇒ ∂a±∂b, ∂(ab) ⇒ ∂a·b + a·∂b, ∂(a/b) ⇒ (∂a·b − a·∂b)/b²", _d_binop),
    (ir.Apply, "chain-rule", "∂f(e) ⇒ f'(e)·∂e (exp, sqrt, log, sin, cos, tanh, abs)", _d_apply),
    (ir.Sum, "derivative-through-sum", "∂ Σ e ⇒ Σ ∂e",
     lambda e, v, d: ZERO if _is(body := d(v, e.body), 0.0) else ir.Sum(e.index, body)),
)


# ------------------------------------------------------------------ probes down
def _p_lifted(e, x, p) -> Expr:
    return e


def _p_through(e, x, p) -> Expr:
    return ir.map_children(e, lambda child: p(x, child))


PROBE_RULES = _table(
    (Conv, "probe-convolution", "(V ⊛ H)@x stays: a leaf of the normal form", lambda e, x, p: Probe(e, x)),
    (ir.Const, "probe-of-lifted", "lift(T)@x ⇒ T", _p_lifted),
    (ir.Tensor, "probe-of-lifted-tensor", "lift(T)@x ⇒ T", _p_lifted),
    (ir.Delta, "probe-of-delta", "δ@x ⇒ δ", _p_lifted),
    (ir.Epsilon, "probe-of-epsilon", "ε@x ⇒ ε", _p_lifted),
    (ir.Neg, "probe-through-neg", "(−F)@x ⇒ −(F@x)", _p_through),
    (ir.Apply, "probe-through-function", "f(F)@x ⇒ f(F@x)", _p_through),
    (ir.BinOp, "probe-through-binop", "(e₁ ⊙ e₂)@x ⇒ (e₁@x) ⊙ (e₂@x)", _p_through),
    (ir.Sum, "probe-through-sum", "(Σ e)@x ⇒ Σ (e@x)", _p_through),
)

EPSILON_DERIVATIVE = Rule("epsilon-symmetric-derivative", "004 §5.4",
                          "Σ_jk ε_ijk (∂²/∂x_j∂x_k ◇ e) ⇒ 0: removes ∇•∇× and ∇×∇", (ir.Sum,))

#: Every rule of field normalization, for listings (docs/fields.md).
RULES: tuple[Rule, ...] = tuple(r for r, _ in DIFF_RULES.values()) + tuple(r for r, _ in PROBE_RULES.values()) \
    + (EPSILON_DERIVATIVE,)


#: rule applications one derivative may take: the product and quotient rules can grow an
#: expression exponentially in its depth (004 §5.7); past this it is error[too-large]
MAX_STEPS = 200_000


def _fired(rules: Mapping[type, tuple[Rule, RuleFn]], e: Expr, t: Tally, what: str, rule: str) -> RuleFn:
    """The function of the rule for ``e``'s node kind, counted as fired in ``t``;
    error[shape] (rule ``rule``) for a kind the table lacks: a field cannot ``what`` it."""
    found = rules.get(type(e))
    if found is None:
        raise error("shape", f"cannot {what} a {type(e).__name__} node of a field expression", rule=rule)
    t.fire(found[0])
    return found[1]


def push_derivative(v: str, e: Expr, t: Tally) -> Expr:
    """∂/∂x_v ◇ e with the derivative pushed onto the kernels (``e`` holds no Diff)."""
    steps = [0]

    def d(v: str, e: Expr) -> Expr:
        steps[0] += 1
        if steps[0] > MAX_STEPS:
            raise error("too-large", f"differentiating the field takes more than {MAX_STEPS:,} rule applications")
        return _fired(DIFF_RULES, e, t, "differentiate", "field-derivative")(e, v, d)

    return d(v, e)


def push_probe(x: str, e: Expr, t: Tally) -> Expr:
    """e@x with the probe pushed below every lifted operation (``e`` holds no Diff)."""

    def p(x: str, e: Expr) -> Expr:
        if is_field_free(e):  # a lifted tensor expression: probing it gives itself
            return e
        return _fired(PROBE_RULES, e, t, "probe", "field-probe")(e, x, p)

    return p(x, e)


def normalize(e: Expr, tally: Tally | None = None) -> Expr:
    """004 §5.3's normal form of ``e``: no Diff, every Conv directly under a Probe; then
    the ε·∂² reduction of §5.4."""
    t = active() if tally is None else tally

    def go(node: Expr) -> Expr:
        if isinstance(node, Diff):
            return push_derivative(node.index, node.body, t)  # type: ignore[arg-type]
        if isinstance(node, Probe):
            return push_probe(node.at, node.body, t)
        return node

    return _epsilon_derivative(ir.bottom_up(e, go), t)


# ------------------------------------------------------------------ 004 §5.4
def _factors(e: Expr) -> list[Expr] | None:
    """The factors of a product (through negation), or None for anything else."""
    if isinstance(e, ir.Neg):
        return _factors(e.arg)
    if isinstance(e, ir.BinOp) and e.op == "*":
        left, right = _factors(e.left), _factors(e.right)
        return None if left is None or right is None else left + right
    return [e]


def _epsilon_derivative(e: Expr, t: Tally) -> Expr:
    """Σ ... ε_{..a..b..} · ∂_a∂_b(...) · R ⇒ 0 when the sums bind a and b and no other
    factor R reads a or b: the sum pairs (a, b) with (b, a), which cancel."""
    if not t.enabled(EPSILON_DERIVATIVE):
        return e

    def go(node: Expr) -> Expr:
        if not isinstance(node, ir.Sum):
            return node
        bound: set[str] = set()
        body: Expr = node
        while isinstance(body, ir.Sum):
            bound |= {name for name, _ in body.index}
            body = body.body
        factors = _factors(body)
        if factors is None:
            return node
        for eps in (f for f in factors if isinstance(f, ir.Epsilon)):
            for leaf in factors:
                conv = leaf.body if isinstance(leaf, Probe) else leaf
                if not isinstance(conv, Conv):
                    continue
                for a, b in itertools.permutations(eps.indices, 2):
                    if a == b or not isinstance(a, str) or not isinstance(b, str) or {a, b} - bound:
                        continue
                    # swapping a and b must map the derivative indices to themselves
                    if a not in conv.derivs or conv.derivs.count(a) != conv.derivs.count(b):
                        continue
                    others = [f for f in factors if f is not eps and f is not leaf]
                    if any({a, b} & free_indices(f) for f in others) or {a, b} & set(conv.comps):
                        continue
                    t.fire(EPSILON_DERIVATIVE)
                    return ZERO
        return node

    return ir.bottom_up(e, go)


# ------------------------------------------------------------------ lowering: Slice
@dataclass(frozen=True)
class ProbeTensor:
    """One probe the run must compute: image, kernel, derivative order, and the tensor
    variable of shape (points,) + voxel shape + (dim,)*order that holds it."""

    name: str
    image: str
    kernel: str
    order: int


@dataclass(frozen=True)
class Lowered:
    """The EIN program of a probe and what feeds it."""

    program: ir.Program
    probes: tuple[ProbeTensor, ...]


def lower(e: Expr, out: tuple[tuple[str, int], ...], points: int,
          images: Mapping[str, tuple[tuple[int, ...], int]],
          constants: Mapping[str, tuple[int, ...]], point_index: str = "p") -> Lowered:
    """The normalized probe expression ``e`` (free indices ``out`` with their extents) as
    ``E[p, out] = e'`` over ``points`` points, each probed convolution read from its
    probe tensor (Slice, 004 §5.7.2).  ``images``: name -> (voxel shape, dim);
    ``constants``: the lifted tensors' names and shapes."""
    probes: dict[tuple[str, str, int], ProbeTensor] = {}

    def slice_(node: Expr) -> Expr:
        if isinstance(node, Probe) and isinstance(node.body, Conv):
            c = node.body
            key = (c.image, c.kernel, len(c.derivs))
            if key not in probes:
                probes[key] = ProbeTensor(f"P{len(probes)}", *key)
            return ir.Tensor(probes[key].name, (point_index,) + c.comps + c.derivs)
        return node

    body = ir.bottom_up(e, slice_)
    if not is_field_free(body):
        raise error("internal", "field lowering met a field form outside the normal form")
    decls = [ir.Decl(p.name, (points,) + images[p.image][0] + (images[p.image][1],) * p.order, "in")
             for p in probes.values()]
    decls += [ir.Decl(name, shape, "in") for name, shape in constants.items()
              if any(t.name == name for t in ir.tensors(body))]
    decls.append(ir.Decl("E", (points,) + tuple(n for _, n in out), "out"))
    statement = ir.Statement("E", ((point_index, points),) + tuple(out), body)
    return Lowered(ir.Program(tuple(decls), (statement,)), tuple(probes.values()))
