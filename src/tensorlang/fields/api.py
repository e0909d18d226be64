"""Tensor fields in Python (paper 004 §2-§3; docs/fields.md): a :class:`Field` is an EIN
expression (ein/fields.py) with free indices for its shape and Diderot's type
field#k(d)[σ], checked as Diderot does; nothing is computed until a probe (run.py).
Index variables come from one global counter, so two fields never share a name.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field as dataclass_field
from typing import Any, Mapping

import numpy as np

from ..ein import ir
from ..ein.fields import Conv, Diff, to_text
from ..ein.printer import to_text as program_text
from ..ein.names import substitute
from ..errors import MAX_DEPTH, error, guard
from ..semantics.values import FUNCTIONS, UFUNC_OPERATORS, ufunc_meaning
from . import run
from ..sampling.image import MAX_IMAGE_ELEMENTS, REAL_KINDS, Image, image as make_image, real_array
from ..sampling.kernels import Kernel, kernel as find_kernel

#: the continuity of a lifted tensor (a constant field is smooth)
SMOOTH = 1 << 20

_NAMES = itertools.count(1)
_CONSTS = itertools.count(1)


#: The most operations a field expression may hold, counted as a tree (the lowering copies
#: a subexpression per use: ``G = G + G`` n times is 2^n leaves; docs/performance.md).
MAX_FIELD_NODES = 4096


def _fresh(base: str = "i") -> str:
    return f"{base}{next(_NAMES)}"


def _operator(op: str, reflected: bool = False):
    """The Field method of Python's operator ``op`` (``reflected``: the Field is the right
    operand): a lifted sum or difference, a scaling, or an inner product."""

    def method(self, other):
        a, b = (other, self) if reflected else (self, other)
        if op == "@":
            return dot(a, b)
        return _binop(op, a, b) if op in "+-" else _scale(op, a, b)

    return method


@dataclass(frozen=True, eq=False)
class Field:
    """A tensor field: body (an EIN field expression over the free indices ``out``), its
    dimension, shape and continuity, and the images and lifted tensors it reads."""

    body: Any  # an ir.Expr that may hold the field forms of ein/fields.py
    out: tuple[str, ...]
    shape: tuple[int, ...]
    dim: int
    continuity: int
    images: Mapping[str, Image] = dataclass_field(default_factory=dict)
    constants: Mapping[str, np.ndarray] = dataclass_field(default_factory=dict)
    #: an upper bound on the body's nesting depth (bounded by MAX_DEPTH, as programs are)
    depth: int = 1
    #: the body's size as a tree (a subexpression used twice counts twice: the lowering
    #: copies it), bounded by MAX_FIELD_NODES
    size: int = 1
    _cache: dict = dataclass_field(default_factory=dict, repr=False)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # numpy meets a field here (array + F, np.float64(2) * F, np.sqrt(F)): the field's
        # own operator or function (not an object array of fields), or error[input]
        meaning = ufunc_meaning(ufunc, method, inputs, kwargs)  # (the table the builder shares)
        fn = getattr(Field, str(meaning)) if meaning in UFUNC_OPERATORS.values() else _FUNCTIONS.get(str(meaning))
        if fn is None:
            raise error("input", f"numpy's {ufunc.__name__}.{method} does not take fields (their operators: "
                        "+ - * / @ and ** n; functions: tl.fields.sqrt, exp, log, sin, cos, tanh)")
        return fn(*inputs)

    # -------------------------------------------------------------- Python operators
    __add__ = _operator("+")
    __radd__ = _operator("+", reflected=True)
    __sub__ = _operator("-")
    __rsub__ = _operator("-", reflected=True)
    __mul__ = _operator("*")
    __rmul__ = _operator("*", reflected=True)
    __truediv__ = _operator("/")
    __rtruediv__ = _operator("/", reflected=True)
    __matmul__ = _operator("@")
    __rmatmul__ = _operator("@", reflected=True)

    def __neg__(self):
        return _with(self, ir.Neg(self.body))

    def __pow__(self, n):
        """``F ** n``: F * F * ... * F (n factors, 1 ≤ n ≤ 64; a scalar field)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= 64:
            raise error("input", f"'**' takes an integer exponent from 1 to 64 (F * F * ... * F), got {n!r:.60}")
        return functools.reduce(lambda a, _: a * self, range(int(n) - 1), self)

    def __pos__(self):
        return self

    def __getitem__(self, key):
        return component(self, key)

    def __repr__(self) -> str:
        return f"Field(dim={self.dim}, shape={self.shape}, continuity={self.continuity})"

    @property
    def type(self) -> str:
        """Diderot's spelling of the type: ``field#k(d)[σ]``."""
        k = "∞" if self.continuity >= SMOOTH // 2 else str(self.continuity)
        return f"field#{k}({self.dim})[{','.join(map(str, self.shape))}]"

    # -------------------------------------------------------------- computing
    @guard
    def probe(self, points, threads: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """The field at ``points`` (N, dim) (or one point (dim,); a 1-D field also (N,)):
        shape (N,) + σ, ⊥ outside the domain; ``threads`` (1..256, None: OpenMP's
        default); ``out``: the array that receives it (docs/fields.md)."""
        return run.probe(self, _real_points(points), threads, out)
    def __call__(self, points) -> np.ndarray:
        """F(points): the same as :meth:`probe`."""
        return self.probe(points)

    @guard
    def stages(self) -> list[tuple[str, int]]:
        """IR node counts after each stage of the probe's compilation (004 Fig. 4)."""
        return list(run.probe_plan(self).stages)

    @guard
    def rules(self) -> dict[str, int]:
        """How often each field-normalization rule fired for the probe."""
        return dict(run.probe_plan(self).rules)

    @guard
    def program(self) -> ir.Program:
        """The optimized EIN program a probe block runs (points as the first axis)."""
        return run.probe_plan(self).program

    @guard
    def ir(self, stage: str = "opt") -> str:
        """The probe's IR as text after ``stage``: field, normalize, slice, opt, or the C
        target's schedule, loops, c (docs/fields.md, "How a probe is compiled")."""
        plan = run.probe_plan(self)
        shown = {"field": lambda: to_text(plan.probe), "normalize": lambda: to_text(plan.normal),
                 "slice": lambda: program_text(plan.lowered), "opt": lambda: program_text(plan.program)}
        if stage in ("schedule", "loops", "c"):
            return run.stage_text(plan, stage)
        if stage not in shown:
            raise error("input", f"unknown stage {stage!r} (field, normalize, slice, opt, schedule, loops, c)")
        return shown[stage]()


# ------------------------------------------------------------------ building fields
def field(img, kernel: str | Kernel = "bspln3", world=None, dim: int | None = None) -> Field:
    """The field V ⊛ h of image ``img`` (an :class:`Image`, an array or a path) with
    ``kernel``; ``world``/``dim`` as for :func:`tensorlang.fields.image`."""
    img = make_image(img, dim, world)  # (a path: read as load reads it)
    kern = find_kernel(kernel)
    out = tuple(_fresh() for _ in img.voxel_shape)
    body = Conv(img.name, kern.name, out)
    return Field(body, out, img.voxel_shape, img.dim, kern.continuity, {img.name: img}, {})


def _lift(value, dim: int) -> Field:
    """A tensor (a number or an array) as a constant field of dimension ``dim``."""
    if isinstance(value, Field):
        return value
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        array = np.asarray(None)
    if array.dtype.kind == "O" and type(value) is int:  # past int64: the real number it is, as a kernel's input reads it
        try:
            array = np.asarray(float(value))
        except OverflowError:
            raise error("input", "an integer beyond the float range cannot be a field or tensor") from None
    if array.dtype.kind not in REAL_KINDS or array.size > MAX_IMAGE_ELEMENTS:  # None, strings, complex, objects
        raise error("shape", f"cannot use a {type(value).__name__} as a field or tensor (a number or an array "
                             f"of real numbers)", rule="field-lift")
    array = np.array(real_array(array, "a tensor"))  # (a long double past float64's range: ±inf, no warning)
    if array.ndim == 0:
        return Field(ir.Const(float(array)), (), (), dim, SMOOTH)
    name = f"C{next(_CONSTS)}"
    out = tuple(_fresh() for _ in array.shape)
    return Field(ir.Tensor(name, out), out, array.shape, dim, SMOOTH, {}, {name: array})


def _pair(a, b) -> tuple[Field, Field]:
    dim = a.dim if isinstance(a, Field) else b.dim
    fa, fb = _lift(a, dim), _lift(b, dim)
    if bool(fa.images) != bool(fb.images):  # a constant field (no image) takes the dimension of the field it meets
        dim = (fa if fa.images else fb).dim
        fa, fb = (f if f.images else Field(f.body, f.out, f.shape, dim, f.continuity, {}, f.constants, f.depth, f.size)
                  for f in (fa, fb))
    if fa.dim != fb.dim:
        raise error("shape", f"fields of dimension {fa.dim} and {fb.dim} cannot be combined", rule="field-dim")
    return fa, fb


def _renamed(f: Field, out: tuple[str, ...]) -> ir.Expr:
    return substitute(f.body, dict(zip(f.out, out))) if f.out != out else f.body


def _fresh_out(f: Field) -> tuple[ir.Expr, tuple[str, ...]]:
    out = tuple(_fresh() for _ in f.out)
    return _renamed(f, out), out


def _make(parts: tuple[Field, ...], body: ir.Expr, out: tuple[str, ...], shape: tuple[int, ...],
          continuity: int | None = None) -> Field:
    images = {name: img for p in parts for name, img in p.images.items()}
    constants = {name: array for p in parts for name, array in p.constants.items()}
    k = min(p.continuity for p in parts) if continuity is None else continuity
    depth = max(p.depth for p in parts) + 4  # an operator adds at most 4 levels (Σ, *, ∂, a selector)
    if depth > MAX_DEPTH:
        raise error("too-large", f"the field expression is nested too deeply (more than {MAX_DEPTH} levels)")
    size = sum(p.size for p in parts) + 1
    if size > MAX_FIELD_NODES:
        raise error("too-large", f"the field expression has more than {MAX_FIELD_NODES} operations once each "
                                 f"use of a shared subexpression is counted (F = F + F doubles it)")
    return Field(body, out, shape, parts[0].dim, k, images, constants, depth, size)


def _with(f: Field, body: ir.Expr) -> Field:
    return _make((f,), body, f.out, f.shape)


def _binop(op: str, a, b) -> Field:
    fa, fb = _pair(a, b)
    if fa.shape != fb.shape:
        raise error("shape", f"cannot {'add' if op == '+' else 'subtract'} fields of shapes {list(fa.shape)} "
                             f"and {list(fb.shape)}", rule="field-shape")
    return _make((fa, fb), ir.BinOp(op, fa.body, _renamed(fb, fa.out)), fa.out, fa.shape)


def _scale(op: str, a, b) -> Field:
    """a * b or a / b where one side is a scalar (field or number): scaling."""
    fa, fb = _pair(a, b)
    if op == "/" and fb.shape != ():
        raise error("shape", f"can only divide by a scalar field, not one of shape {list(fb.shape)}",
                    rule="field-shape")
    if fa.shape and fb.shape:
        raise error("shape", f"* scales by a scalar; for fields of shapes {list(fa.shape)} and {list(fb.shape)} "
                             f"use @ (inner product) or outer()", rule="field-shape")
    big = fa if fa.shape else fb
    return _make((fa, fb), ir.BinOp(op, fa.body, fb.body), big.out, big.shape)


def dot(a, b) -> Field:
    """The inner product a • b: the last index of ``a`` contracted with the first of
    ``b`` (dot product of vectors, matrix-vector and matrix-matrix product)."""
    fa, fb = _pair(a, b)
    if not fa.shape or not fb.shape:
        raise error("shape", "the inner product needs two fields of rank 1 or more (use * to scale)",
                    rule="field-shape")
    if fa.shape[-1] != fb.shape[0]:
        raise error("shape", f"inner product of shapes {list(fa.shape)} and {list(fb.shape)}: "
                             f"{fa.shape[-1]} and {fb.shape[0]} differ", rule="field-shape")
    k = _fresh("k")
    body_b, out_b = _fresh_out(fb)
    left = substitute(fa.body, {fa.out[-1]: k})
    right = substitute(body_b, {out_b[0]: k})
    body = ir.Sum(((k, fa.shape[-1]),), ir.BinOp("*", left, right))
    return _make((fa, fb), body, fa.out[:-1] + out_b[1:], fa.shape[:-1] + fb.shape[1:])


def outer(a, b) -> Field:
    """The outer product a ⊗ b."""
    fa, fb = _pair(a, b)
    body_b, out_b = _fresh_out(fb)
    return _make((fa, fb), ir.BinOp("*", fa.body, body_b), fa.out + out_b, fa.shape + fb.shape)


def component(f: Field, key) -> Field:
    """F[i], F[i, j]: a component field (0-based positions, leading axes)."""
    keys = key if isinstance(key, tuple) else (key,)
    if len(keys) > len(f.shape):
        raise error("shape", f"{len(keys)} indices for a field of shape {list(f.shape)}", rule="field-shape")
    mapping: dict[str, ir.Index] = {}
    for axis, k in enumerate(keys):
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not -f.shape[axis] <= k < f.shape[axis]:
            raise error("shape", f"index {k!r} out of range for axis {axis} of a field of shape {list(f.shape)}",
                        rule="field-shape")
        mapping[f.out[axis]] = int(k) % f.shape[axis] + 1
    return _make((f,), substitute(f.body, mapping), f.out[len(keys):], f.shape[len(keys):])


def transpose(f: Field) -> Field:
    """Fᵀ of a matrix field."""
    _need_rank(f, 2, "transpose")
    return _make((f,), f.body, (f.out[1], f.out[0]), (f.shape[1], f.shape[0]))


def _need_rank(f: Field, rank: int, what: str) -> None:
    if len(f.shape) != rank:
        raise error("shape", f"{what} needs a field of rank {rank}, got shape {list(f.shape)}", rule="field-shape")


def _differentiate(f: Field, what: str) -> tuple[Any, str]:
    if f.continuity < 1:
        raise error("shape", f"{what} of a field#{f.continuity}({f.dim})[{','.join(map(str, f.shape))}]: "
                             f"the field is not differentiable (its kernel is C{f.continuity}; "
                             f"use ctmr, bspln3 or c4hexic)", rule="field-continuity")
    v = _fresh("d")
    return Diff(v, f.body), v


def jacobian(f) -> Field:
    """∇⊗F: the derivative of a field of shape σ, of shape σ + (dim,) (the gradient of a
    scalar field, the Jacobian of a vector field, the Hessian of a gradient)."""
    f = _lift(f, 1)
    body, v = _differentiate(f, "∇")
    return _make((f,), body, f.out + (v,), f.shape + (f.dim,), f.continuity - 1)


def grad(f: Field) -> Field:
    """∇F of a scalar field (for tensor fields use :func:`jacobian`, ∇⊗)."""
    if f.shape:
        raise error("shape", f"∇ takes a scalar field; for shape {list(f.shape)} use jacobian (∇⊗)",
                    rule="field-shape")
    return jacobian(f)


def hessian(f: Field) -> Field:
    """∇⊗∇F of a scalar field: its Hessian (dim × dim)."""
    return jacobian(grad(f))


def div(f: Field) -> Field:
    """∇•F of a vector field: Σ_i ∂F_i/∂x_i."""
    if f.shape != (f.dim,):
        raise error("shape", f"∇• takes a vector field of shape [{f.dim}], got {list(f.shape)}", rule="field-shape")
    body, v = _differentiate(f, "∇•")
    body = ir.Sum(((v, f.dim),), substitute(body, {f.out[0]: v}))
    return _make((f,), body, (), (), f.continuity - 1)


def curl(f: Field) -> Field:
    """∇×F: Σ_jk ε_ijk ∂F_k/∂x_j for a 3-D vector field, Σ_jk ε_jk ∂F_k/∂x_j (a scalar)
    for a 2-D one (004 Fig. 3)."""
    if f.dim not in (2, 3) or f.shape != (f.dim,):
        raise error("shape", f"∇× takes a 2-D or 3-D vector field, got a {f.dim}-D field of shape "
                             f"{list(f.shape)}", rule="field-shape")
    body, j = _differentiate(f, "∇×")
    k, n = f.out[0], f.dim
    out = (_fresh(),) if n == 3 else ()  # the curl of a 2-D field is a scalar
    eps = ir.Epsilon(out + (j, k))
    return _make((f,), ir.Sum(((j, n), (k, n)), ir.BinOp("*", eps, body)), out, (3,) * len(out), f.continuity - 1)


def norm(f) -> Field:
    """|F|: the absolute value of a scalar field, the Euclidean (Frobenius) norm of a
    tensor field."""
    f = _lift(f, 1)
    if not f.shape:
        return _with(f, ir.Apply("abs", f.body))
    body, out = _fresh_out(f)
    square = ir.BinOp("*", body, body)
    return _make((f,), ir.Apply("sqrt", ir.Sum(tuple(zip(out, f.shape)), square)), (), ())


def normalize(f: Field) -> Field:
    """F / |F| (0 where |F| is 0: controlled division, SPEC §1)."""
    return f / norm(f)


def trace(f: Field) -> Field:
    """tr F of a square matrix field."""
    _need_rank(f, 2, "trace")
    if f.shape[0] != f.shape[1]:
        raise error("shape", f"trace needs a square matrix field, got shape {list(f.shape)}", rule="field-shape")
    i = _fresh()
    return _make((f,), ir.Sum(((i, f.shape[0]),), substitute(f.body, {f.out[0]: i, f.out[1]: i})), (), ())


def det(f: Field) -> Field:
    """det F of a 2×2 or 3×3 matrix field: Σ ε_ij.. F[1,i] F[2,j] ..."""
    _need_rank(f, 2, "det")
    n = f.shape[0]
    if f.shape not in ((2, 2), (3, 3)):
        raise error("shape", f"det takes a 2x2 or 3x3 matrix field, got shape {list(f.shape)}", rule="field-shape")
    cols = tuple(_fresh("k") for _ in range(n))
    body: ir.Expr = ir.Epsilon(cols)
    for row, col in enumerate(cols):
        body = ir.BinOp("*", body, substitute(f.body, {f.out[0]: row + 1, f.out[1]: col}))
    return _make((f,), ir.Sum(tuple((c, n) for c in cols), body), (), ())


#: The largest identity(n) (a tensor shape of a field stays small: its probes hold
#: n² values per point).
MAX_IDENTITY = 1 << 12


def identity(n: int, dim: int = 3) -> Field:
    """The identity matrix as a constant field (δ_ij): n×n (n ≥ 1) of dimension ``dim`` (1..3)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or not 1 <= n <= MAX_IDENTITY:
        raise error("input", f"identity(n): n is an integer from 1 to {MAX_IDENTITY}, got {n!r}")
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool) or not 1 <= dim <= 3:
        raise error("input", f"identity(n, dim): a field has 1, 2 or 3 dimensions, got {dim!r}")
    n, dim = int(n), int(dim)
    i, j = _fresh(), _fresh()
    return Field(ir.Delta(i, j), (i, j), (n, n), dim, SMOOTH)


def _function(name: str):
    def fn(f) -> Field:
        f = _lift(f, 1)
        return _with(f, ir.Apply(name, f.body))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name} of a field, componentwise (lifted; differentiable by the chain rule)."
    return fn


sqrt, exp, log, sin, cos, tanh = (_function(n) for n in ("sqrt", "exp", "log", "sin", "cos", "tanh"))
#: the functions a field takes (Field.__array_ufunc__: numpy's ufunc of each; its operators too)
_FUNCTIONS = {f.__name__: f for f in (sqrt, exp, log, sin, cos, tanh)}


def _lacking(what: str):
    def method(self, *args):
        raise error("input", f"a field has no {what} (its operators: + - * / @ and ** n; |F| is tl.norm(F))")
    return method


for _name, _what in {"__abs__": "abs()", "__rpow__": "'**' as the exponent", "__lt__": "<", "__le__": "<=",
                     "__gt__": ">", "__ge__": ">=", "__floordiv__": "//", "__mod__": "%", "__iter__": "iteration",
                     "__float__": "float()", "__array__": "conversion to a numpy array (probe it)"}.items():
    setattr(Field, _name, _lacking(_what))
assert {"sqrt", "exp", "log", "sin", "cos", "tanh", "abs"} <= set(FUNCTIONS)


@guard
def inside(f: Field, points) -> np.ndarray:
    """Whether each point is in the field's domain: every image it reads has the whole
    kernel support around the point (Diderot's inside)."""
    if not isinstance(f, Field):
        raise error("input", f"inside() takes a field, got {type(f).__name__}")
    return run.inside(f, _real_points(points))


def _real_points(points):
    """``points`` unchanged when they are float64 numbers; others as float64 (real_array); error[input] for
    complex, object, string or datetime points (numpy would drop an imaginary part with a warning)."""
    if isinstance(points, np.ndarray) and points.dtype == np.float64 and not np.ma.is_masked(points):
        return points
    return real_array(points, "probe points")
