"""The builder's expressions: 001 §5's operator language as Python values, and which of
Python's and numpy's operators write it (docs/einsum.md, "The builder").  Every node is
immutable and knows its shape, computed once when it is made, so that a shape error
surfaces where the expression is built (error[shape], with the operator's rule).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ...ein.printer import RESERVED
from ...errors import error, signature_checked
from ...semantics.sizes import Sym
from ...semantics.values import FUNCTIONS, ufunc_meaning
from ...semantics.types import MAX_ELEMENTS, MAX_RANK


def _operator(build, reflected: bool = False):
    """The operator method ``build(self, *other)`` (``build(other, self)`` where ``reflected``)."""
    def method(self, *other):
        return build(*other, self) if reflected else build(self, *other)

    return method


def _binary(op: str):
    """``a op b`` for the arithmetic of t-elem, t-smul and t-sdiv."""
    return lambda a, b: Binary(op, _expr(a), _expr(b))


#: The most factors ``e ** n`` writes out (``e * e * ... * e``, left to right).
MAX_POWER = 64

#: Python's and numpy's operators with no counterpart in the operator language: each is
#: error[input] naming it (not Python's TypeError, nor numpy's object arrays).
_LACKING = {"__getitem__": "indexing", "__iter__": "iteration", "__lt__": "<", "__le__": "<=", "__gt__": ">",
            "__ge__": ">=", "__floordiv__": "//", "__rfloordiv__": "//", "__mod__": "%", "__rmod__": "%",
            "__divmod__": "divmod", "__rdivmod__": "divmod", "__and__": "&", "__rand__": "&", "__or__": "|",
            "__ror__": "|", "__xor__": "^", "__rxor__": "^", "__invert__": "~", "__lshift__": "<<",
            "__rlshift__": "<<", "__rshift__": ">>", "__rrshift__": ">>", "__round__": "round",
            "__trunc__": "math.trunc", "__floor__": "math.floor", "__ceil__": "math.ceil", "__float__": "float()",
            "__int__": "int()", "__complex__": "complex()", "__array__": "conversion to a numpy array"}


def _lacking(what: str):
    def method(self, *args, **kwargs):
        raise error("input", f"the operator language has no {what}: a builder expression is a whole tensor whose "
                    "value exists only when its kernel runs (tl.build(e)(...)); index form is written as text "
                    "(tl.compile), and tl.einsum takes arrays")

    return method


def matmul(a, b) -> "Expr":
    """``a @ b`` as numpy's matmul for ranks 1 and 2: ``(a # b) . [r r+1]`` with r
    the rank of a (vector·vector is a scalar).  Higher ranks are error[shape]: numpy
    batches them, the language's contraction would not (write ``tl.contract``)."""
    a, b = _expr(a), _expr(b)
    ra, rb = len(a.shape), len(b.shape)
    if not (1 <= ra <= 2 and 1 <= rb <= 2):
        raise error("shape", f"'@' takes operands of rank 1 or 2 (numpy's matmul; higher ranks batch there and "
                    f"would not here: write tl.contract(tl.outer(a, b), (m, n))), got ranks {ra} and {rb}",
                    rule="t-contr")
    if a.shape[-1] != b.shape[0]:
        raise error("shape", f"'@': the last extent of {list(a.shape)} and the first of {list(b.shape)} differ",
                    rule="t-contr")
    return Contract(Outer(a, b), ((ra, ra + 1),))


def _power(base, exponent) -> "Expr":
    base = _expr(base)
    if isinstance(exponent, bool) or not isinstance(exponent, numbers.Integral) \
            or not 1 <= int(exponent) <= MAX_POWER:
        raise error("input", f"'**' takes an integer exponent from 1 to {MAX_POWER} (written e * e * ... * e: "
                    f"the operator language has no power), got {_short(exponent)}")
    result = base
    for _ in range(int(exponent) - 1):
        result = Binary("*", result, base)
    return result


def _operand(value):
    """A ufunc's operand: a 0-d numpy array of a real dtype is its number."""
    if getattr(value, "shape", None) == () and getattr(getattr(value, "dtype", None), "kind", "") in "fiu" \
            and hasattr(value, "item"):
        return value.item()
    return value


class Expr:
    """An expression of the operator language; ``shape`` is its type."""

    shape: tuple[int, ...]

    def __post_init__(self) -> None:
        # the type, computed once when the node is made: an expression may share its
        # operands (``e + e`` doubled twenty times), and a property would walk every path
        if "shape" not in self.__dict__:
            object.__setattr__(self, "shape", self._shape())
        if len(self.shape) > MAX_RANK:  # (as it is made: `outer` of 10^5 operands held ranks of all sizes)
            raise error("too-large", f"{len(self.shape)} dimensions; an expression has at most {MAX_RANK}")

    def _shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    def _pieces(self) -> tuple:  # the text: strings and operands (expressions), in order
        raise NotImplementedError

    @signature_checked
    def text(self, limit: int | None = None) -> str:
        """The model language's text, fully parenthesized; at most ``limit`` characters
        (then ending in ``...``).  Iterative: an expression 10^5 levels deep prints, and
        a shared one (``e + e`` doubled) stops at the limit instead of at 2^20 leaves."""
        out: list[str] = []
        size = 0
        stack: list = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, Expr):
                stack.extend(reversed(item._pieces()))
                continue
            out.append(item)
            size += len(item)
            if limit is not None and size > limit:
                return "".join(out)[:limit] + "..."
        return "".join(out)

    __add__, __radd__ = _operator(_binary("+")), _operator(_binary("+"), reflected=True)
    __sub__, __rsub__ = _operator(_binary("-")), _operator(_binary("-"), reflected=True)
    __mul__, __rmul__ = _operator(_binary("*")), _operator(_binary("*"), reflected=True)
    __truediv__, __rtruediv__ = _operator(_binary("/")), _operator(_binary("/"), reflected=True)
    __matmul__, __rmatmul__ = _operator(matmul), _operator(matmul, reflected=True)
    __pow__, __neg__, __pos__ = _operator(_power), _operator(lambda e: Neg(e)), _operator(lambda e: e)
    __abs__ = _operator(lambda e: Apply("abs", e))

    def __rpow__(self, base):
        raise error("input", f"'**' with a builder expression as the exponent ({_short(base)} ** e): the operator "
                    "language has no power")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # numpy's scalars and 0-d arrays meet an expression here (np.float64(2) * e),
        # and so do np.sqrt(e), np.abs(e): the language's own, or error[input]
        name = getattr(ufunc, "__name__", "?")
        if method != "__call__" or kwargs:
            raise error("input", f"numpy's {name}.{method} with {sorted(kwargs)} has no counterpart in the operator "
                        "language")
        args = [_operand(value) for value in inputs]
        meaning = ufunc_meaning(ufunc, method, args, kwargs)  # (the table the fields share)
        if meaning in FUNCTIONS:
            return Apply(meaning, _expr(args[0]))
        if meaning is not None and (meaning != "__pow__" or isinstance(args[0], Expr)):
            return getattr(Expr, meaning)(_expr(args[0]), *args[1:])
        raise error("input", f"numpy's {name} has no counterpart in the operator language (its functions: "
                    f"{', '.join(FUNCTIONS)}; operators + - * / @ and ** n)")

    def __repr__(self) -> str:
        return f"<tl expression {self.text(limit=200)} : {list(self.shape)}>"


for _method, _what in _LACKING.items():
    setattr(Expr, _method, _lacking(_what))


def _expr(value) -> Expr:
    if isinstance(value, Expr):
        return value
    value = _operand(value)  # a 0-d array is its number on either side (e * np.array(2.0), as np.array(2.0) * e)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            number = float(value)
        except (OverflowError, ValueError):
            raise error("too-large", f"a builder number must be finite; {_short(value)} is beyond the float range") from None
        if not math.isfinite(number):
            raise error("input", f"a builder number must be finite (the language has no literal for {_short(value)})")
        return Number(number)
    raise error("input", f"a builder expression combines expressions and numbers, not {type(value).__name__}" + (" (name an array tl.var(name, shape) and pass it to the built kernel's call; tl.einsum takes arrays)" if hasattr(value, "shape") and hasattr(value, "dtype") else ""))


def _short(value) -> str:
    """``value`` as text for a message, at most 60 characters (an int of 5000 digits is
    not printed: Python refuses to, and no reader wants it)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 180:
        return f"<an integer of about {int(value.bit_length() * 0.30103)} digits>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _integer(value, what: str) -> int:
    """``value`` as an int when it is an integer (Python's or numpy's), not a bool, a
    float, a string or another number that happens to equal one: error[input] otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise error("input", f"{what} must be an integer, got {_short(value)} ({type(value).__name__})")
    return int(value)


def _dims(pair, rank: int, what: str) -> tuple[int, int]:
    if isinstance(pair, (str, bytes)) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise error("input", f"{what} takes pairs of dimensions (m, n), got {_short(pair)}")
    m, n = (_integer(d, f"{what}: a dimension") for d in pair)
    for d in (m, n):
        if not 1 <= d <= rank:
            raise error("dim-range", f"{what}: dimension {_short(d)} is outside 1..{rank} (dimensions count from 1)",
                        rule="t-contr" if what == "contract" else "t-trans")
    return m, n


def _extent(value, name: str):
    """One extent of ``tl.var(name, shape)``: a positive integer below MAX_ELEMENTS, or
    a size name (an identifier that is no keyword of the model language)."""
    if isinstance(value, str):
        if value.isidentifier() and value.isascii() and value not in RESERVED:
            return Sym(value)
        why = "a keyword of the model language" if value in RESERVED else "not an ASCII identifier"
        raise error("input", f"variable {name!r}: a size name must be an identifier, got {_short(value)} ({why}); "
                    "a number of elements is an int")
    n = _integer(value, f"variable {name!r}: an extent")
    if n < 1:
        raise error("shape", f"variable {name!r}: extents must be positive, got {_short(n)}", rule="s-var")
    if n >= MAX_ELEMENTS:
        raise error("too-large", f"variable {name!r}: the extent {_short(n)} is not below 2^62, the most any "
                    "target indexes")
    return n


@dataclass(frozen=True, repr=False, eq=False)
class Var(Expr):
    name: str
    shape: tuple[int, ...]

    def _pieces(self) -> tuple:
        return (self.name,)


@dataclass(frozen=True, repr=False, eq=False)
class Number(Expr):
    value: float
    shape: tuple[int, ...] = ()

    def _pieces(self) -> tuple:
        return (repr(self.value) if self.value >= 0 else f"({self.value!r})",)


@dataclass(frozen=True, repr=False, eq=False)
class Outer(Expr):
    left: Expr
    right: Expr

    def _shape(self) -> tuple[int, ...]:
        return self.left.shape + self.right.shape

    def _pieces(self) -> tuple:
        return ("(", self.left, " # ", self.right, ")")


@dataclass(frozen=True, repr=False, eq=False)
class Contract(Expr):
    operand: Expr
    pairs: tuple[tuple[int, int], ...]

    def _shape(self) -> tuple[int, ...]:
        gone = {d for pair in self.pairs for d in pair}
        return tuple(n for d, n in enumerate(self.operand.shape, 1) if d not in gone)

    def _pieces(self) -> tuple:
        pairs = " ".join(f"[{m} {n}]" for m, n in self.pairs)
        return ("(", self.operand, f" . [{pairs}])")


@dataclass(frozen=True, repr=False, eq=False)
class Transpose(Expr):
    operand: Expr
    pair: tuple[int, int]

    def _shape(self) -> tuple[int, ...]:
        shape = list(self.operand.shape)
        m, n = self.pair
        shape[m - 1], shape[n - 1] = shape[n - 1], shape[m - 1]
        return tuple(shape)

    def _pieces(self) -> tuple:
        return ("(", self.operand, f" ^ [{self.pair[0]} {self.pair[1]}])")


@dataclass(frozen=True, repr=False, eq=False)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr

    def __post_init__(self):
        a, b = self.left.shape, self.right.shape
        if not (a == b or (self.op == "*" and (a == () or b == ())) or (self.op == "/" and b == ())):
            rule = {"+": "t-elem", "-": "t-elem", "*": "t-elem, t-smul", "/": "t-elem, t-sdiv"}[self.op]
            raise error("shape", f"{self.op!r} needs operands of one type (or a scalar where {rule} allows it), "
                        f"got {list(a)} and {list(b)}", rule=rule.split(",")[0])
        super().__post_init__()

    def _shape(self) -> tuple[int, ...]:
        return self.left.shape or self.right.shape

    def _pieces(self) -> tuple:
        return ("(", self.left, f" {self.op} ", self.right, ")")


@dataclass(frozen=True, repr=False, eq=False)
class Apply(Expr):
    """``f(e)``, an elementwise function of SPEC section 1 (``abs(e)``, ``np.sqrt(e)``)."""

    fn: str
    operand: Expr

    def _shape(self) -> tuple[int, ...]:
        return self.operand.shape

    def _pieces(self) -> tuple:
        return (f"{self.fn}(", self.operand, ")")


@dataclass(frozen=True, repr=False, eq=False)
class Neg(Expr):
    operand: Expr

    def _shape(self) -> tuple[int, ...]:
        return self.operand.shape

    def _pieces(self) -> tuple:
        return ("(-", self.operand, ")")


# ------------------------------------------------------------------ the constructors
def var(name: str, shape) -> Var:
    """A variable (an input of the built program) of the given extents: positive ints,
    or names for symbolic sizes (``tl.var("A", ("n", "n"))``).  Anything else (a float, a
    bool, a string of digits, a Decimal) is error[input], however near an integer."""
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii() or name in RESERVED:
        raise error("input", f"a variable's name must be an ASCII identifier that is no keyword, got {_short(name)}")
    if isinstance(shape, (str, bytes)) or not isinstance(shape, (tuple, list)):
        raise error("input", f"variable {name!r}: a shape is a tuple of extents, got {_short(shape)} "
                    f"({type(shape).__name__})")
    if len(shape) > MAX_RANK:
        raise error("too-large", f"variable {name!r} has {len(shape)} dimensions; at most {MAX_RANK} "
                    "(numpy's limit, which every target relies on)")
    extents = tuple(_extent(n, name) for n in shape)
    return Var(name, extents)  # type: ignore[arg-type]  # symbols until bound


def outer(*operands) -> Expr:
    """The outer product ``a # b # ...`` (t-prod), left to right."""
    if not operands:
        raise error("input", "outer takes at least one operand")
    result = _expr(operands[0])
    for other in operands[1:]:
        result = Outer(result, _expr(other))
    return result


def contract(operand, *pairs) -> Expr:
    """``e . [[m1 n1] [m2 n2] ...]`` (t-contr, t-contr-group): each pair of dimensions
    (numbered from 1, before any is removed) summed together; ``contract(e, (2, 3))`` or
    ``contract(e, [(2, 7), (4, 8)])``."""
    e = _expr(operand)
    if len(pairs) == 1 and isinstance(pairs[0], (tuple, list)) and pairs[0] \
            and all(isinstance(p, (tuple, list)) for p in pairs[0]):
        pairs = tuple(pairs[0])
    if not pairs:
        raise error("input", "contract takes at least one pair of dimensions")
    checked = tuple(_dims(pair, len(e.shape), "contract") for pair in pairs)
    used: set[int] = set()
    for m, n in checked:
        if m == n or m in used or n in used:
            raise error("dim-range", f"contract: the pairs {list(checked)} must name distinct dimensions",
                        rule="t-contr-group")
        if e.shape[m - 1] != e.shape[n - 1]:
            raise error("shape", f"contract: dimensions {m} and {n} have extents {e.shape[m - 1]} and "
                        f"{e.shape[n - 1]}", rule="t-contr")
        used.update((m, n))
    return Contract(e, checked)


def transpose(operand, pair=(1, 2)) -> Expr:
    """``e ^ [m n]`` (t-trans): dimensions m and n swapped (a matrix's transpose by default)."""
    e = _expr(operand)
    return Transpose(e, _dims(pair, len(e.shape), "transpose"))


class Kron:
    """The tensor-product operator A1 ⊗ ... ⊗ Ad of matrices, applied to the last d axes
    of a tensor u (leading axes are a batch: docs/api.md, "tl.kron with a batch")."""

    def __init__(self, *factors):
        self.factors = tuple(_expr(f) for f in factors)
        if not self.factors or any(len(f.shape) != 2 for f in self.factors):
            raise error("shape", "kron takes one or more matrices (rank 2); a batch axis goes on the tensor it "
                        "is applied to")

    def __call__(self, u) -> Expr:
        u = _expr(u)
        d = len(self.factors)
        k = len(u.shape) - d  # leading batch axes
        if k < 0:
            raise error("shape", f"kron of {d} matrices applies to a tensor of rank {d} or more (leading axes "
                        f"are a batch), got rank {len(u.shape)}")
        if k == 0:
            return contract(outer(*self.factors, u), [(2 * m + 2, 2 * d + 1 + m) for m in range(d)])
        return contract(outer(u, *self.factors), [(k + 1 + m, k + d + 2 * m + 2) for m in range(d)])


def kron(*factors) -> Kron:
    return Kron(*factors)
