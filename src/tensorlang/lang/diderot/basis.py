"""The types of Diderot's operators and basis library (the overloads the checker
resolves); the values are computed in :mod:`.interp`."""

from __future__ import annotations

from typing import Callable

from .types import BOOL, INT, REAL, STRING, VOID, Ty, is_num, is_real, tensor


def _num(a: Ty, b: Ty) -> Ty | None:
    """int op int: int; otherwise numbers coerce to real."""
    if a.kind == "int" and b.kind == "int":
        return INT
    if is_num(a) and is_num(b):
        return REAL
    return None


def _as_tensor(t: Ty) -> Ty:
    return REAL if t.kind == "int" else t


def binary(op: str, a: Ty, b: Ty) -> Ty | None:
    """The result type of ``a op b``, None where no overload applies."""
    if op in ("&&", "||"):
        return BOOL if a == BOOL and b == BOOL else None
    if op in ("==", "!=", "<", "<=", ">", ">="):  # numbers; ints, bools and strings of one type for == !=
        equal = op in ("==", "!=") and a == b and a.kind in ("int", "bool", "string")
        return BOOL if equal or (is_num(a) and is_num(b)) else None
    if op == "%":
        return _num(a, b)
    if op == "^":
        if a.kind == "field" and a.shape == () and b.kind == "int":
            return a  # a scalar field to an integer power (Diderot's pow_si)
        return REAL if is_num(a) and is_num(b) else None
    if op == "@":
        return _append(a, b)
    if op == "⊛":
        img, ker = (a, b) if a.kind == "image" else (b, a)
        return Ty("field", img.shape, img.dim, ker.k) if img.kind == "image" and ker.kind == "kernel" else None
    if op == "∘":  # F ∘ G: G's values are F's positions
        fits = a.kind == "field" and b.kind == "field" and a.dim is not None and b.shape == ((a.dim,) if a.dim > 1 else ())
        return Ty("field", a.shape, b.dim, min(a.k or 0, b.k or 0)) if fits else None
    if a.kind == "field" or b.kind == "field":
        return _field_binary(op, a, b)
    if a.kind not in ("int", "tensor") or b.kind not in ("int", "tensor"):
        return None
    if op in ("+", "-", "*", "/") and a.kind == "int" and b.kind == "int":
        return INT
    a, b = _as_tensor(a), _as_tensor(b)
    if op in ("+", "-"):
        return a if a.shape == b.shape else None
    if op == "*" and a.shape == ():
        return b
    if op in ("*", "/"):  # a tensor times or over a scalar
        return a if b.shape == () else None
    if op in ("•", ":"):  # the last n axes of a against the first n of b
        n, m = (1 if op == "•" else 2), len(a.shape)
        fits = m >= n and len(b.shape) >= n and a.shape[m - n:] == b.shape[:n]
        return tensor(*(a.shape[:m - n] + b.shape[n:])) if fits else None
    if op == "⊗":
        return tensor(*(a.shape + b.shape)) if a.shape and b.shape else None
    if op == "×":  # of two 3-vectors a 3-vector, of two 2-vectors a real
        return None if a.shape != b.shape else tensor(3) if a.shape == (3,) else REAL if a.shape == (2,) else None
    return None


def _append(a: Ty, b: Ty) -> Ty | None:
    """``s @ x``, ``x @ s`` and ``s @ t``: a sequence of any length (Diderot's ``@``)."""
    ea, eb = (t.elem if t.kind == "seq" else None for t in (a, b))
    e: Ty | None
    if (ea == VOID) != (eb == VOID):  # {} @ x and x @ {} are {x}, x a sequence too (diderotc tries T@T[] first)
        return Ty("seq", elem=b if ea == VOID else a)
    if ea is not None and eb is not None:
        if ea == VOID:
            e = VOID
        elif ea == eb or (is_num(ea) and is_num(eb)):
            e = ea if ea == eb else REAL
        else:
            return None
    elif ea is not None:
        e = ea if b == ea or (is_real(ea) and b.kind == "int") else None
    elif eb is not None:
        e = eb if a == eb or (is_real(eb) and a.kind == "int") else None
    else:
        return None
    return None if e is None else Ty("seq", elem=e)


def rougher(first: Ty, then: Ty) -> bool:
    """diderotc gives ``F + G``, ``F - G``, ``F * G``, ``F × G`` and ``[F, G]`` the continuity of F: G's may be higher,
    not lower (the identity field of ``F(x) = ...``, smooth, is left out); ``F / G``, ``F • G`` and ``F ⊗ G`` take F's
    whatever G's, and ``F : G`` asks for one continuity (its overloads)."""
    return first.k is not None and then.k is not None and then.k < first.k < 8


def _field_binary(op: str, a: Ty, b: Ty) -> Ty | None:
    f = a if a.kind == "field" else b
    k = min(t.k or 0 for t in (a, b) if t.kind == "field")
    if a.kind == "field" and b.kind == "field":
        if a.dim != b.dim or (op in ("+", "-", "*", "×") and rougher(a, b)) or (op == ":" and a.k != b.k):
            return None
        if op in ("/", "•", "⊗", ":") and a.k is not None and a.k < 8:  # diderotc: the first field's continuity
            k = a.k
        if op in ("+", "-"):
            return Ty("field", a.shape, a.dim, k) if a.shape == b.shape else None
        if op == "*" and (a.shape == () or b.shape == ()):
            return Ty("field", a.shape or b.shape, a.dim, k)
        if op == "/" and b.shape == ():
            return Ty("field", a.shape, a.dim, k)
        if op in ("•", "⊗", "×", ":"):
            t = binary(op, tensor(*a.shape), tensor(*b.shape)) if a.shape and b.shape else None
            return Ty("field", t.shape, a.dim, k) if t is not None else None
        return None
    other = b if f is a else a
    if other.kind not in ("int", "tensor"):
        return None
    other = _as_tensor(other)
    if op in ("+", "-"):
        return f if other.shape == f.shape else None
    if op == "*" and (other.shape == () or f.shape == ()):
        return Ty("field", f.shape or other.shape, f.dim, f.k)
    if op == "/" and f is a and other.shape == ():
        return f
    if op == "/" and f is b and f.shape == ():  # c / F: the reciprocal field, scaled
        return Ty("field", other.shape, f.dim, f.k)
    if op in ("•", "⊗", "×", ":"):
        t = binary(op, tensor(*a.shape) if a is f else other, tensor(*b.shape) if b is f else other)
        return Ty("field", t.shape, f.dim, f.k) if t is not None else None
    return None


# ---------------------------------------------------------------- basis functions
def _real_fn(n: int) -> Callable[[list[Ty]], Ty | None]:
    return lambda args: REAL if len(args) == n and all(is_num(t) for t in args) else None


#: functions of reals lifted to scalar fields (fieldval.LIFTED gives their derivatives)
LIFTED_FUNCTIONS = ("sin", "cos", "tan", "asin", "acos", "atan", "exp", "sqrt")


def _real_or_field_fn(args: list[Ty]) -> Ty | None:
    """A function of one real, or of a scalar field (then a scalar field, as smooth): also inv, 1/x and 1/F."""
    if len(args) == 1 and args[0].kind == "field" and args[0].shape == ():
        return args[0]
    return REAL if len(args) == 1 and is_num(args[0]) else None


def _lerp(args: list[Ty]) -> Ty | None:
    """lerp(a, b, t) and lerp(a, b, x0, x, x1): a and b of one type, the others numbers."""
    if len(args) not in (3, 5):
        return None
    a, b = (_as_tensor(x) for x in args[:2])
    return a if a.kind == "tensor" and a == b and all(is_num(t) for t in args[2:]) else None


def _clamp(args: list[Ty]) -> Ty | None:
    if len(args) == 1 and args[0].kind == "image":
        return args[0]
    if len(args) == 3:
        lo, hi, x = args
        x = _as_tensor(x)  # of ints too: diderotc has clamp of reals and tensors only, so clamp(1, 4, i) is a real
        if x.kind == "tensor" and all(is_num(t) or t == x for t in (lo, hi)):
            return x
    return None


def _square(args: list[Ty], result, fields: bool = False, sizes: tuple[int, ...] = ()) -> Ty | None:
    """A function of a square matrix (of a size in ``sizes`` where given: diderotc's det and inv are of 2×2 and 3×3
    ones); with ``fields``, also of a field of square matrices (then a field of the result, as smooth)."""
    if len(args) != 1 or len(args[0].shape) != 2 or args[0].shape[0] != args[0].shape[1] or sizes and args[0].shape[0] not in sizes:
        return None
    t = args[0]
    if t.kind == "tensor":
        return result(t.shape[0])
    if t.kind == "field" and fields:
        r = result(t.shape[0])
        return Ty("field", r.shape, t.dim, t.k)
    return None


FUNCTIONS: dict[str, Callable[[list[Ty]], Ty | None]] = {
    **{name: _real_fn(1) for name in ("sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
                                     "atan", "sinh", "cosh", "tanh", "erf", "erfc", "ceil", "floor", "round",
                                     "trunc", "sgn")},
    **{name: _real_or_field_fn for name in LIFTED_FUNCTIONS},
    "abs": lambda a: (INT if a[0].kind == "int" else REAL if is_real(a[0]) else None) if len(a) == 1 else None,
    "atan2": _real_fn(2), "fmod": _real_fn(2), "pow": _real_fn(2),
    **dict.fromkeys(("min", "max"), lambda a: _num(*a) if len(a) == 2 else None), "lerp": _lerp, "clerp": _lerp,
    "clamp": _clamp, **dict.fromkeys(("wrap", "mirror"), lambda a: a[0] if len(a) == 1 and a[0].kind == "image" else None),
    "size": lambda a: Ty("seq", elem=INT, n=a[0].dim) if len(a) == 1 and a[0].kind == "image" else None,
    "inside": lambda a: BOOL if len(a) == 2 and a[1].kind == "field" and a[1].dim is not None and (  # inside(x, F)
        a[0] == (REAL if a[1].dim == 1 else tensor(a[1].dim)) or a[1].dim == 1 and is_num(a[0])) else None,
    "evals": lambda a: _square(a, lambda n: Ty("seq", elem=REAL, n=n)) if a[-1:] and a[0].shape in ((2, 2), (3, 3)) else None,
    "normalize": lambda a: a[0] if len(a) == 1 and (a[0].kind == "tensor" and a[0].shape or a[0].kind == "field") else None,
    "evecs": lambda a: _square(a, lambda n: Ty("seq", elem=tensor(n), n=n)) if a[-1:] and a[0].shape in ((2, 2), (3, 3)) else None,
    "inv": lambda a: _real_or_field_fn(a) or _square(a, lambda n: tensor(n, n), fields=True, sizes=(2, 3)),
    "det": lambda a: _square(a, lambda n: REAL, fields=True, sizes=(2, 3)), "trace": lambda a: _square(a, lambda n: REAL, fields=True),
    "transpose": lambda a: Ty(a[0].kind, a[0].shape[::-1], a[0].dim, a[0].k)
    if len(a) == 1 and a[0].kind in ("tensor", "field") and len(a[0].shape) == 2 else None,
    "modulate": lambda a: (binary("+", *a) if "field" in (a[0].kind, a[1].kind) else a[0] if a[0] == a[1] and a[0].kind == "tensor" else None) if len(a) == 2 and a[0].shape and a[0].shape == a[1].shape else None,  # (of fields: a field, as a + b)
    "length": lambda a: INT if len(a) == 1 and a[0].kind == "seq" else None,
    "load": lambda a: Ty("seq", elem=Ty("void")) if a == [STRING] else None,
    **dict.fromkeys(("numStrands", "numActive", "numStable"), lambda a: INT if not a else None),
}


#: Names only research branches of Diderot's compiler know, refused with error[undeclared] (a function) or
#: error[syntax] (a type) that says so, at the name (docs/diderot.md, "Programs from other corpora").
EXTENSION_FUNCTIONS = {
    "cfexp": "fields given by closed-form expressions", "cfexpOne": "fields given by closed-form expressions",
    "expression": "fields given by closed-form expressions", "poly": "polynomial fields",
    "inst": "polynomial fields (probe a field with F(x))",
    "maxF": "the maximum of two fields", "minF": "the minimum of two fields",
    "swap": "selecting one of several fields by an int", "compose": "field composition",
    "concat": "field concatenation (stack fields with [F, G])", "KRNS": "several kernels on one image",
    "SUM": "reductions of fields", "printIR": "printing the compiler's intermediate form",
}
#: Names Diderot's basis declares but its compiler does not carry through, so no standard
#: program can use them: refused like the research names, with this reason.
UNCOMPILED_FUNCTIONS = {"border": "Diderot's basis declares border(img, v) (samples outside the image read v), "
                        "but its compiler stops with an internal error on a field made from one",
                        "variance": "Diderot's basis names the variance reduction, but its compiler leaves it "
                        "disabled (mean is the reduction it offers)"}
EXTENSION_TYPES = {
    "ofield": "fields given by closed-form expressions", "poly": "polynomial fields",
    "fem": "finite-element fields", "mesh": "finite-element meshes", "fnspace": "finite-element function spaces",
    "cell": "finite-element cells",
}


def extension_note(name: str, types: bool = False) -> str | None:
    """Why ``name`` is refused when a research branch of Diderot's compiler defines it."""
    what = (EXTENSION_TYPES if types else EXTENSION_FUNCTIONS).get(name)
    if what is None:
        return None
    return (f"{name} belongs to a research branch of Diderot's compiler ({what}), not to the standard "
            "language (versions 1.0 and 2.0) that this front end reads")
