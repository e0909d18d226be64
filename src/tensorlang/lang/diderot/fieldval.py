"""Field values, probed one point at a time (docs/diderot-language.md, "Execution"): ``value(x, order)``, the
``order``-th derivative at world point x, of shape ``shape + (dim,)*order`` (none for 1-D); ⊥ outside. The one
copy of the derivative rules: the interpreter runs them on floats, :mod:`.lower` on ``lower.Sym`` arrays."""

from __future__ import annotations

import functools
import itertools
import math
import operator
from typing import Callable

import numpy as np

from ...errors import error
from ...sampling.image import Image, index_point
from ...sampling.kernels import Kernel, tap_weights


#: The kernel coefficients' significant digits, as Diderot writes them (docs/diderot-language.md, "Differences").
DIDEROT_DIGITS = 12


def _arr(v) -> np.ndarray:
    """``v`` as a float64 array, or as an object array where it holds symbolic scalars."""
    a = np.asarray(v)
    return a if a.dtype == object else np.asarray(a, dtype=np.float64)


def _symbol(v):
    """The first symbolic scalar in ``v`` (one that is no number), or None."""
    a = np.asarray(v)
    return next((s for s in a.flat if not isinstance(s, (int, float, np.number))), None) if a.dtype == object else None


def _dtype(*vs):
    return object if any(np.asarray(v).dtype == object for v in vs) else np.float64


def _item(v):
    """The one scalar of ``v``: a float, or the symbolic scalar."""
    s = np.asarray(v).reshape(-1)[0]
    return s if _symbol(s) is not None else float(s)


class BorderImage:
    """An image with Diderot's border control: samples outside read ``clamp``-ed, ``wrap``-ped or ``mirror``-ed."""

    def __init__(self, image: Image, mode: str):
        self.image, self.mode = image, mode


def _taps(n: np.ndarray, s: int, sizes, mode: str | None):
    """Per axis: the sample indices n+1-s .. n+s, mapped by the border mode."""
    out = []
    for a, size in enumerate(sizes):
        c = int(n[a] if mode is None else np.clip(n[a], -s - 1, size + s) if mode == "clamp" else np.mod(n[a], 2 * size))
        idx = np.arange(c + 1 - s, c + s + 1)  # (c: n, or the cell past which the border gives the same taps)
        if mode == "clamp":
            idx = np.clip(idx, 0, size - 1)
        elif mode == "wrap":
            idx = np.mod(idx, size)
        elif mode == "mirror":
            period = 2 * size
            idx = np.mod(idx, period)
            idx = np.where(idx >= size, period - 1 - idx, idx)
        out.append(idx)
    return out


class Field:
    dim: int

    def value(self, x: np.ndarray, order: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def inside(self, x: np.ndarray) -> bool:
        """Diderot's ``inside(x, F)``: everywhere for a field sampling no image (a formula of x, a constant)."""
        return True


class Of(Field):
    """A field made of one field ``f`` by ``name`` (a function, an operator)."""

    def __init__(self, name, f: Field):
        self.name, self.f, self.dim = name, f, f.dim

    def inside(self, x) -> bool:
        return self.f.inside(x)


_EYE = {d: np.eye(d).tolist() for d in (1, 2, 3)}


class Conv(Field):
    """``image ⊛ kernel`` (docs/diderot-language.md, "Execution"; weights at :data:`DIDEROT_DIGITS`)."""

    def __init__(self, img, kern: Kernel):
        self.mode = img.mode if isinstance(img, BorderImage) else None
        self.img: Image = img.image if isinstance(img, BorderImage) else img
        self.kern, self.dim, self.shape, self._sizes = kern, self.img.dim, self.img.voxel_shape, self.img.sizes
        d, inv = self.dim, self.img.to_index  # (kept with the image; a list's == costs 1/60 of np.array_equal's)
        self._m, self._identity = inv[:d, :d], inv[:d, :d].tolist() == _EYE[d]

    def index(self, x: np.ndarray) -> np.ndarray:
        return index_point(self.img.to_index, x)  # (in the order of Diderot's executables)

    def inside(self, x) -> bool:
        """Diderot's ``inside(x, F)``, strictly on the index position (docs/diderot-compiled.md)."""
        xi = self.index(x)
        s = self.kern.radius
        return bool(np.all(np.isfinite(xi))) and all(s - 1 < xi[a] < size - s for a, size in enumerate(self._sizes))

    def value(self, x, order: int) -> np.ndarray:
        d, s = self.dim, self.kern.radius
        xi = self.index(x)
        n = np.floor(xi)  # ⊥ where x is not finite or (without a border) its taps leave the image
        if not np.all(np.isfinite(xi)) or self.mode is None and any(
                n[a] + 1 - s < 0 or n[a] + s > size - 1 for a, size in enumerate(self._sizes)):
            return np.full(self.shape + ((d,) * order if d > 1 else ()), np.nan)
        f = xi - n
        taps = _taps(n, s, self._sizes, self.mode)
        hood = self.img.data[np.ix_(*taps)] if d > 1 else self.img.data[taps[0]]
        # w[a][m]: the weights of the m-th derivative along axis a, one per tap
        w = [[tap_weights(self.kern, m, float(f[a]), DIDEROT_DIGITS) for m in range(order + 1)] for a in range(d)]
        out = np.empty(self.shape + (d,) * order)
        with np.errstate(all="ignore"):  # ∞ and ⊥ samples follow IEEE arithmetic
            for axes in itertools.product(range(d), repeat=order):
                v = hood
                for a in range(d):  # contract the leading (space) axis with its weights
                    v = np.tensordot(w[a][axes.count(a)], v, axes=([0], [0]))
                out[(Ellipsis,) + axes] = v
            for k in reversed(range(order if not self._identity else 0)):  # ∂/∂p_j = Σ_a M[a, j] ∂/∂x_a, the last
                v = np.moveaxis(out, out.ndim - order + k, -1)  # axis first, each sum left to right, as Diderot's
                r = sum((v[..., a:a + 1] * self._m[a] for a in range(1, d)), v[..., :1] * self._m[0])  # (a 0's sign)
                out = np.moveaxis(r, -1, out.ndim - order + k)
        if d == 1 and order:
            out = out.reshape(self.shape)
        return out


class Lifted(Field):
    """Arithmetic of fields and constants, lifted pointwise, with its derivative rules
    (products by Leibniz's rule, quotients as a * (1/b) past the first derivative)."""

    def __init__(self, op: str, a, b, dim: int | None):  # dim None: a field over image("file"), as its operand's
        self.op, self.a, self.b, self.dim = op, a, b, dim if dim is not None else getattr(a, "dim", None) or b.dim

    def inside(self, x) -> bool:  # (a constant operand is defined everywhere)
        return all(f.inside(x) for f in (self.a, self.b) if isinstance(f, Field))

    def _v(self, f, x, order):  # (a constant's derivatives: None)
        if isinstance(f, Field):
            return f.value(x, order)
        return f if order == 0 else None

    def value(self, x, order: int):
        op, a, b = self.op, self.a, self.b
        if op in BILINEAR:
            return self._bilinear(x, order)
        if op in ("+", "-"):
            va, vb = self._v(a, x, order), self._v(b, x, order)
            if va is None:
                return -vb if op == "-" else vb
            if vb is None:
                return va
            return va + vb if op == "+" else va - vb
        if op == "neg":
            return -a.value(x, order)
        if op == "norm":
            va = a.value(x, 0)
            if order and np.ndim(va) == 0:  # |F| of a scalar field: ∂ᵏ|F| = sgn(F) ∂ᵏF (sgn 0 = 0), as Diderot
                return (np.sign(va) if _symbol(va) is None else _symbol(va).sign()) * a.value(x, order)
            if order > 1:  # |F| = sqrt(F:F), by the chain and product rules
                return Lifted1("sqrt", Lifted("•" if np.ndim(va) == 1 else ":", a, a, self.dim)).value(x, order)
            return np.sqrt(np.sum(va * va)) if order == 0 else _norm_grad(va, a.value(x, 1))
        if op == "/" and isinstance(b, Field) and (order > 1 or order and not isinstance(a, Field)):  # a * (1/b)
            return Lifted("*", a, Lifted1("recip", b), self.dim).value(x, order)
        if op == "/" and not isinstance(a, Field):  # c / F
            return _arr(a) / b.value(x, 0)
        if op in ("*", "/") and not isinstance(b, Field):
            return _scale(a.value(x, order), b, op)
        if op == "*" and not isinstance(a, Field):
            return _scale(b.value(x, order), a, "*")
        if op == "*":  # a scalar field times a tensor field: ∇(sV) = V ⊗ ∇s + s ∇V, axis by axis
            return self._bilinear(x, order, _mul)
        va, vb = a.value(x, 0), b.value(x, 0)
        if order == 0:
            return va / vb
        ga, gb = a.value(x, 1), b.value(x, 1)
        # (a/b)' = a'/b - a b'/b²
        return ga * (1.0 / vb) - _mul(va / (vb * vb), gb)

    def _bilinear(self, x, order: int, fn: Callable | None = None):
        """a•b, a⊗b, a×b, a:b (and a*b) of fields (or one and a tensor) by the product rule, axis by axis."""
        fn, dim = fn or BILINEAR[self.op], self.dim

        def part(f, k):  # the k-th derivative (None: 0) of operand f
            if isinstance(f, Field):
                return _arr(f.value(x, k))
            return _arr(f) if k == 0 else None

        def axis(v, *idx):  # one component of the derivative axes (none for a 1-D field)
            return v if dim == 1 else v[(Ellipsis,) + idx]

        if order == 0:
            return fn(part(self.a, 0), part(self.b, 0))
        if order != 2:  # (the second order's terms are added in the order below)
            return self._leibniz(part, order, fn)
        terms, n = [], 1 if dim == 1 else dim
        (va, vb), (da, db), (ha, hb) = [(part(self.a, k), part(self.b, k)) for k in range(3)]
        for k in range(n):
            row = []
            for m in range(n):
                t = 0.0
                if ha is not None:
                    t = t + fn(axis(ha, k, m), vb)
                if hb is not None:
                    t = t + fn(va, axis(hb, k, m))
                if da is not None and db is not None:
                    t = t + fn(axis(da, k), axis(db, m)) + fn(axis(da, m), axis(db, k))
                row.append(_arr(t))
            terms.append(row)
        if dim == 1:
            return terms[0][0]
        return np.stack([np.stack(r, axis=-1) for r in terms], axis=-2)

    def _leibniz(self, part, order: int, fn: Callable):
        """The ``order``-th derivative of bilinear fn(a, b): per component, a sum over giving each axis to a or b."""
        dim = self.dim
        parts = [(part(self.a, k), part(self.b, k)) for k in range(order + 1)]
        n = 1 if dim == 1 else dim
        out = {}
        for idx in itertools.product(range(n), repeat=order):
            total = None  # (the first term, not +0 + it: a -0 kept, as Diderot's sums)
            for mask in itertools.product((0, 1), repeat=order):
                ia = tuple(i for i, m in zip(idx, mask) if m == 0)
                ib = tuple(i for i, m in zip(idx, mask) if m == 1)
                da, db = parts[len(ia)][0], parts[len(ib)][1]
                if da is None or db is None:
                    continue
                if dim > 1:
                    da, db = da[(Ellipsis,) + ia] if ia else da, db[(Ellipsis,) + ib] if ib else db
                total = fn(da, db) if total is None else total + fn(da, db)
            out[idx] = _arr(0.0 if total is None else total)
        if dim == 1:
            return out[(0,) * order]
        first = out[(0,) * order]
        res = np.zeros(first.shape + (n,) * order, _dtype(*out.values()))
        for idx, v in out.items():
            res[(Ellipsis,) + idx] = v
        return res


def cross(a, b):
    """a × b: a scalar for 2-vectors, a 3-vector for 3-vectors."""
    if np.shape(a) == (2,):
        return a[0] * b[1] - a[1] * b[0]
    return np.cross(a, b)


def ordered_sum(terms):
    """The terms added left to right from the first, as Diderot's C adds them (``sum`` starts from 0: -0 would be +0)."""
    return functools.reduce(operator.add, terms)


def contract(a, b, n: int):
    """The last ``n`` axes of ``a`` against the first ``n`` of ``b``, each product rounded and the sums nested
    (Σ_i Σ_j: each row's sum, then the rows'), left to right, as Diderot's and the C executor do (not ``np.tensordot``)."""
    a, b = _arr(a), _arr(b)
    def part(idx: tuple):  # the nested sums over the contracted axes from len(idx) on
        return np.multiply.outer(a[(Ellipsis,) + idx], b[idx]) if len(idx) == n else \
            ordered_sum(part(idx + (c,)) for c in range(b.shape[len(idx)]))
    return np.asarray(part(()))


#: products of tensors lifted to fields (Lifted._bilinear differentiates them)
BILINEAR: dict[str, Callable] = {
    "•": lambda a, b: contract(a, b, 1), "⊗": np.multiply.outer, "×": cross,
    ":": lambda a, b: contract(a, b, 2), "modulate": np.multiply,
}


def _scale(v, c, op):
    """A field's value (or derivative) ``v`` times (or over) a constant ``c``."""
    c = _arr(c)
    return v / c if op == "/" else v * c if c.ndim == 0 else np.multiply.outer(c, v)


def _mul(va, vb):
    va, vb = np.asarray(va), np.asarray(vb)
    return va * vb if va.ndim == 0 or vb.ndim == 0 else np.multiply.outer(va, vb)


def _norm_grad(v, g):
    v, g = _arr(v), _arr(g)
    n = np.sqrt(np.sum(v * v))
    if g.ndim == v.ndim:  # 1-D
        return np.sum(v * g) / n
    return np.tensordot(v, g, axes=(list(range(v.ndim)), list(range(v.ndim)))) / n


#: functions lifted to scalar fields: the function and its first three derivatives
LIFTED: dict[str, tuple[Callable, Callable, Callable, Callable]] = {
    "sin": (np.sin, np.cos, lambda v: -np.sin(v), lambda v: -np.cos(v)),
    "cos": (np.cos, lambda v: -np.sin(v), lambda v: -np.cos(v), np.sin),
    "exp": (np.exp, np.exp, np.exp, np.exp),
    "sqrt": (np.sqrt, lambda v: 0.5 / np.sqrt(v), lambda v: -0.25 / (v * np.sqrt(v)),
             lambda v: 0.375 / (v * v * np.sqrt(v))),
    "tan": (np.tan, lambda v: 1 + np.tan(v) ** 2, lambda v: 2 * np.tan(v) * (1 + np.tan(v) ** 2),
            lambda v: 2 * (1 + np.tan(v) ** 2) * (1 + 3 * np.tan(v) ** 2)),
    "atan": (np.arctan, lambda v: 1 / (1 + v * v), lambda v: -2 * v / (1 + v * v) ** 2,
             lambda v: (6 * v * v - 2) / (1 + v * v) ** 3),
    "asin": (np.arcsin, lambda v: (1 - v * v) ** -0.5, lambda v: v * (1 - v * v) ** -1.5,
             lambda v: (1 + 2 * v * v) * (1 - v * v) ** -2.5),
    "recip": (lambda v: 1 / v, lambda v: -1 / (v * v), lambda v: 2 / (v * v * v), lambda v: -6 / (v * v * v * v)),
    "acos": (np.arccos, lambda v: -(1 - v * v) ** -0.5, lambda v: -v * (1 - v * v) ** -1.5,
             lambda v: -(1 + 2 * v * v) * (1 - v * v) ** -2.5),
}


def ipow(v, m: int):
    """v^m (an int m >= 0; v a real or an array) squared by m's bits from the highest, as Diderot's executables'
    intPow (tl_ipow): 0.3^3 is 0.3*0.3*0.3 = 0.027, where pow gives 0.026999999999999996."""
    return functools.reduce(lambda r, bit: r * r * v if bit == "1" else r * r, bin(m)[2:], 1.0)


def power(n: int) -> tuple[Callable, Callable, Callable, Callable]:
    """x^n (n an int) and its first three derivatives, for ``F^n`` of a scalar field: each power squared as ``x^n``
    of a real is (``(F^3)(p)`` is ``F(p)^3`` to the bit, as in Diderot's executables, where ``pow`` can be an ulp off)."""
    def term(k: int) -> Callable:
        c, m = math.prod(range(n - k + 1, n + 1)), n - k  # n (n-1) ... (n-k+1), and x^m
        return lambda v: (c * ipow(v, m) if m >= 0 else c * np.divide(1.0, ipow(v, -m))) if c else np.zeros_like(v)
    return term(0), term(1), term(2), term(3)


class Lifted1(Of):
    """``fn(F)`` of a scalar field F by the chain rule; ``name``: a key of LIFTED or :func:`power`'s tuple."""

    def value(self, x, order: int):
        fn, d1, d2, d3 = LIFTED[self.name] if isinstance(self.name, str) else self.name
        v = self.f.value(x, 0)
        if order == 0:
            return fn(v)
        g = self.f.value(x, 1)
        if order == 1:
            return d1(v) * g
        if order == 2:
            return d2(v) * np.multiply.outer(g, g) + d1(v) * self.f.value(x, 2)
        if order == 3 and self.dim == 1:
            return d3(v) * g ** 3 + 3 * d2(v) * g * self.f.value(x, 2) + d1(v) * self.f.value(x, 3)
        if order == 3:  # fn‴ g⊗g⊗g + fn'' (H⊗g + the two other placements of g) + fn' ∂³F
            h = self.f.value(x, 2)
            gg = np.einsum("ij,k->ijk", h, g)
            return (d3(v) * np.einsum("i,j,k->ijk", g, g, g)
                    + d2(v) * (gg + np.transpose(gg, (0, 2, 1)) + np.transpose(gg, (2, 1, 0)))
                    + d1(v) * self.f.value(x, 3))
        raise error("backend", f"derivatives of {self.name if isinstance(self.name, str) else 'F^n'}(F) past the third")


#: functions of a matrix lifted to fields of square matrices
MATRIX = ("det", "trace", "inv", "transpose")


def det_terms(n: int, order: int):
    """The terms of the ``order``-th derivative of det A (n×n): per permutation σ and giving of the derivative
    axes to the rows, (sign of σ, ((i, σ(i), row i's axes), ...)) for the product of the A[i, σ(i)]."""
    for perm in itertools.permutations(range(n)):
        sign = 1 - 2 * (sum(perm[i] > perm[j] for i in range(n) for j in range(i + 1, n)) % 2)
        for rows in itertools.product(range(n), repeat=order):
            yield sign, tuple((i, perm[i], tuple(k for k in range(order) if rows[k] == i)) for i in range(n))


def set_partitions(items: list) -> list[list[list]]:
    """Every partition of ``items`` into blocks (the sums of Faà di Bruno's formula)."""
    if not items:
        return [[]]
    first, rest = items[0], items[1:]
    out = []
    for p in set_partitions(rest):
        out.append([[first]] + p)
        for i in range(len(p)):
            out.append(p[:i] + [[first] + p[i]] + p[i + 1:])
    return out


def inv_det(m) -> tuple[np.ndarray, float]:
    """inv and det of a 2x2 or 3x3 matrix as Diderot's executables compute them: (trace·I - M)/det and
    ((tr² - tr M²)/2·I - tr·M + M²)/det, det by its six products, their operation order; ±∞ and ⊥ of 1/0, 0/0."""
    m = np.asarray(m, dtype=np.float64)  # (called under np.errstate(all="ignore"))
    if len(m) == 2:
        t, det = m[0, 0] + m[1, 1], m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]
        return (np.array([[t * 1.0, t * 0.0], [t * 0.0, t * 1.0]]) - m) / det, float(det)
    p = m[:, :, None] * m[None, :, :]  # p[i, k, j] = m[i, k]·m[k, j]; M² and the trace, summed left to right
    t, mm = m[0, 0] + m[1, 1] + m[2, 2], p[:, 0] + p[:, 1] + p[:, 2]
    h = t * t - (mm[0, 0] + p[1, 0, 1] + p[1, 1, 1] + p[1, 2, 1] + p[2, 0, 2] + p[2, 1, 2] + p[2, 2, 2])
    det = (m[0, 0] * m[1, 1] * m[2, 2] + m[0, 1] * m[1, 2] * m[2, 0] + m[0, 2] * m[1, 0] * m[2, 1]
           - (m[0, 2] * m[1, 1] * m[2, 0] + m[0, 1] * m[1, 0] * m[2, 2] + m[0, 0] * m[1, 2] * m[2, 1]))
    return (np.where(np.eye(3, dtype=bool), 1.0 * h / 2.0, 0.0 * h / 2.0) - t * m + mm) / det, float(det)


class MatrixFn(Of):
    """``det``, ``trace``, ``inv``, ``transpose`` of a field of square matrices; derivatives: linear ones to any
    order, det, inv by ∂det A = det A tr(A⁻¹ ∂A), ∂A⁻¹ = -A⁻¹ ∂A A⁻¹, then :func:`det_terms` and the ordered partitions of the axes."""

    def value(self, x, order: int):
        v = _arr(self.f.value(x, order))
        if self.name == "trace":  # the matrix axes come first, the derivative axes after
            return np.trace(v, axis1=0, axis2=1)
        if self.name == "transpose":
            return np.swapaxes(v, 0, 1)
        a = _arr(self.f.value(x, 0)) if order else v
        s = _symbol(a)  # symbolic: lowering's det and inverse (a library call), both Diderot's closed form
        with np.errstate(all="ignore"):
            ai, det = inv_det(a) if s is None else (  # (a symbolic ai unused by det)
                s.inv(a) if self.name == "inv" or order == 1 else np.full(a.shape, np.nan), s.det(a))
            if order == 0:
                return det if self.name == "det" else ai
            if order > 1:
                return self._higher(x, a, ai, order)
            dv = v if v.ndim == 3 else v[:, :, None]  # a 1-D field's derivative has no axis
            if self.name == "det":
                r = det * np.einsum("ij,jik->k", ai, dv)
            else:
                r = -np.einsum("ij,jlk,lm->imk", ai, dv, ai)
        return r if v.ndim == 3 else r[..., 0]

    def _higher(self, x, a, ai, order: int):
        d, n = self.dim, a.shape[0]
        parts = [a] + [_arr(self.f.value(x, m)) for m in range(1, order + 1)]
        nd = d if d > 1 else 1
        out = np.zeros(((n, n) if self.name == "inv" else ()) + ((nd,) * order if d > 1 else ()), _dtype(*parts))
        for idx in itertools.product(range(nd), repeat=order):
            def part(axes, idx=idx):  # ∂A along the derivative axes at these positions
                v = parts[len(axes)]
                return v[(Ellipsis,) + tuple(idx[k] for k in axes)] if d > 1 and axes else v
            total = 0.0
            if self.name == "det":
                for sign, factors in det_terms(n, order):
                    t = float(sign)
                    for i, j, axes in factors:
                        t = t * part(axes)[i, j]
                    total = total + t
            else:  # over the ordered partitions B1..Bm of the axes: (-1)^m A⁻¹ ∂_B1 A A⁻¹ ... ∂_Bm A A⁻¹
                for blocks in (b for p in set_partitions(list(range(order))) for b in itertools.permutations(p)):
                    t = ai
                    for blk in blocks:
                        t = t @ part(tuple(blk)) @ ai
                    total = total + (-1) ** len(blocks) * t
            out[(Ellipsis,) + (idx if d > 1 else ())] = total
        return out


class Deriv(Of):
    """∇F, ∇⊗F, ∇•F, ∇×F of a field F."""

    def value(self, x, order: int):
        g = self.f.value(x, order + 1)
        if self.name in ("∇", "∇⊗") or self.dim == 1:
            return g
        if self.name == "∇•":  # the last component axis against the first derivative axis
            return np.trace(g, axis1=np.ndim(g) - order - 2, axis2=np.ndim(g) - order - 1)
        if self.dim == 2:  # ∂F1/∂x - ∂F0/∂y
            return g[1, 0] - g[0, 1]
        return np.stack([g[2, 1] - g[1, 2], g[0, 2] - g[2, 0], g[1, 0] - g[0, 1]])


class Slice(Of):
    """``F[i]``, ``F[i,:]``: components of a tensor field (``name``: the index key)."""

    def value(self, x, order: int):
        return _arr(self.f.value(x, order))[self.name]


class Compose(Field):
    """``F ∘ G``: F probed at G's value, differentiated by the chain rule (Faà di Bruno's formula)."""

    def __init__(self, f: Field, g: Field):
        self.f, self.g, self.dim = f, g, g.dim

    def inside(self, x) -> bool:
        return self.g.inside(x) and self.f.inside(self.g.value(x, 0))

    def value(self, x, order: int):
        y = self.g.value(x, 0)
        if not order:
            return self.f.value(y, 0)
        e, d = self.f.dim, self.dim
        fs = [_arr(self.f.value(y, m)) for m in range(order + 1)]
        gs = [_arr(self.g.value(x, m)) for m in range(order + 1)]
        shape = fs[0].shape
        out = np.zeros(shape + ((d,) * order if d > 1 else ()), _dtype(*fs, *gs))
        with np.errstate(all="ignore"):
            for idx in itertools.product(range(d), repeat=order):
                total = np.zeros(shape)
                # Faà di Bruno: per partition B1..Bm of the axes and F's axes a, ∂^m F/∂a1..∂am at G(x) times each ∂_Bi G_ai
                for blocks, a in ((b, a) for b in set_partitions(list(range(order))) for a in itertools.product(range(e), repeat=len(b))):
                    t = fs[len(blocks)][(Ellipsis,) + a] if e > 1 else fs[len(blocks)]
                    for blk, ab in zip(blocks, a):
                        gv = gs[len(blk)][ab] if e > 1 else gs[len(blk)]
                        t = t * (gv[tuple(idx[k] for k in blk)] if d > 1 else gv)
                    total = total + t
                out[(Ellipsis,) + (idx if d > 1 else ())] = total
        return out


class Stack(Field):
    """``[F, G, ...]``: fields of one shape stacked along a new first axis."""

    def __init__(self, fields: list):
        self.fields, self.dim = fields, fields[0].dim

    def inside(self, x) -> bool:
        return all(f.inside(x) for f in self.fields)

    def value(self, x, order: int):
        return np.stack([_arr(f.value(x, order)) for f in self.fields])


class Identity(Field):
    """x -> x: the variable of a field defined by a formula (``F(x) = ...``), differentiated as lifted."""

    def __init__(self, dim: int):
        self.dim = dim

    def value(self, x, order: int):
        d = self.dim
        if order == 0:
            return _arr(x).copy() if d > 1 else _item(x)
        if order == 1:
            return np.eye(d) if d > 1 else 1.0
        return np.zeros((d,) * (order + 1)) if d > 1 else 0.0


class Constant(Field):
    """A field whose formula does not depend on the position: everywhere the value."""

    def __init__(self, v, dim: int):
        self.v, self.dim = _arr(v), dim

    def value(self, x, order: int):
        if order == 0:
            return self.v.copy() if self.v.ndim else _item(self.v)
        return np.zeros(self.v.shape + ((self.dim,) * order if self.dim > 1 else ()))


class Pointwise(Field):
    """A formula's field the interpreter only probes (it calls functions or compares): no derivatives."""

    def __init__(self, fn: Callable, dim: int, name: str):
        self.fn, self.dim, self.name = fn, dim, name

    def value(self, x, order: int):
        if order:
            raise error("backend", f"derivatives of {self.name}, whose formula calls functions or compares values "
                                   f"(the interpreter does not differentiate {self.name})")
        return self.fn(x)


def applied(name: str, f: Field, dim: int | None, scalar: bool) -> Field:
    """``name(F)``, one of :data:`APPLIED`, of a field F (``scalar``: a scalar field)."""
    if name == "inv" and scalar:  # 1/F
        return Lifted("/", 1.0, f, dim)
    if name == "normalize":
        return Lifted("/", f, Lifted("norm", f, None, dim), dim)
    return Lifted1(name, f) if name in LIFTED else MatrixFn(name, f)


APPLIED = (*LIFTED, *MATRIX, "normalize")
