"""``tl.einsum``, ``tl.contract_expression`` and ``tl.einsum_path``: numpy's and
opt_einsum's interface, compiled and cached (what is compiled, what numpy computes, the
cache and the symmetric routes: docs/einsum.md)."""

from __future__ import annotations

import dataclasses
import inspect
import math
from functools import partialmethod
from typing import Any, Callable

import numpy as np

from . import lang as languages
from . import limits
from .api import compile_checked, compile_options
from .ein import ir
from .errors import Source, TensorLangError, check_keywords, is_integer, pointing_into, signature_checked
from .kernel import Kernel
from .targets import resolve as resolve_backend
from .targets.c.callext import fits

EinsumError = languages.EINSUM.EinsumError
RESULT = languages.EINSUM.RESULT

#: numpy's functions as they were at import: a caller that replaces ``numpy.einsum`` by
#: ``tl.einsum`` (to run numpy's own tests) must not make the fallback call itself.
_NUMPY_EINSUM = np.einsum
_NUMPY_EINSUM_PATH = np.einsum_path

#: dtypes the targets compile; every other dtype goes to numpy.einsum.
_FLOAT64 = np.dtype(np.float64)
_COMPILED = (_FLOAT64, np.dtype(np.float32))

#: The most entries the cache keeps; beyond it the oldest half is dropped (docs/einsum.md).
CACHE_SIZE = 1024

#: key -> runner (a function of the operands giving the result)
_CACHE: dict[tuple, Callable[[tuple], Any]] = limits.kept({})


def cache_info() -> dict[str, int]:
    return {"entries": len(_CACHE), "limit": CACHE_SIZE}


def _key(subscripts: str, ops: tuple, backend: str) -> tuple | None:
    """The cache key of a call, or None when an operand is not an ndarray (converted on every call)."""
    key: list = [backend, subscripts]
    for o in ops:
        if o.__class__ is not np.ndarray:
            return None
        key += (o.shape, o.dtype, o.flags.c_contiguous)
    if ops:  # which operands are the first one: the symmetric routes depend on it
        key.append(tuple(o is ops[0] for o in ops[1:]))
    return tuple(key)


#: Runners by :func:`_hit_key`'s short keys (docs/einsum.md, "The cache"): the result, or
#: None where an operand is not what the key promised.
_HITS: dict[tuple | None, Callable[..., Any]] = limits.kept({})

_ndarray = np.ndarray


def einsum(*operands, **options):
    """numpy.einsum, compiled: ``tl.einsum("ij,jk->ik", a, b)``, with numpy's arguments,
    results and errors, and ``backend=`` (docs/einsum.md)."""
    if not options and len(operands) > 2 and operands[0].__class__ is str:
        if len(operands) == 3:  # two operands, the common case: _hit_key's key, inline
            _, a, b = operands
            hit = _HITS.get((operands[0], a.shape, b.shape, a.dtype, b.dtype, a is b)) \
                if a.__class__ is _ndarray and b.__class__ is _ndarray else None
            result = None if hit is None else hit(a, b)
        else:
            hit = _HITS.get(_hit_key(operands))
            result = None if hit is None else hit(*operands[1:])
        if result is not None:
            return result
    elif not options and len(operands) == 2 and operands[0].__class__ is str:
        return _numpy_einsum(*operands)  # one operand: numpy's (views for ii->i, ij->ji)
    if options and not _EINSUM_ACCEPTS.issuperset(options):
        check_keywords(einsum.__name__, options, _EINSUM_KEYWORDS)
    return _einsum(*operands, **options)


def _hit_key(operands: tuple) -> tuple | None:
    """The key of ``(subscripts, *ops)`` in :data:`_HITS` (None where an operand has no shape)."""
    if len(operands) == 3:  # two operands: the common case, computed first
        subscripts, a, b = operands
        if a.__class__ is _ndarray and b.__class__ is _ndarray:
            return (subscripts, a.shape, b.shape, a.dtype, b.dtype, a is b)
        return None
    first = operands[1]
    if first is operands[2] and first.__class__ is _ndarray and all(o is first for o in operands[3:]):
        return (operands[0], len(operands) - 1, first.shape, first.dtype)
    try:
        return (operands[0], *[(o.__class__, o.shape, o.dtype) for o in operands[1:]])
    except AttributeError:
        return None


#: The keywords tl.einsum takes, numpy.einsum's and ``backend``, with their defaults.
_EINSUM_KEYWORDS = {"out": None, "dtype": None, "order": "K", "casting": "safe", "optimize": False, "backend": "auto"}
_EINSUM_ACCEPTS = frozenset(_EINSUM_KEYWORDS)


def _signature(names: tuple, variadic: str, defaults: dict) -> inspect.Signature:
    """The signature ``help()`` shows for a function written with ``*args, **options`` (docs/api.md, "Signatures")."""
    P = inspect.Parameter
    return inspect.Signature([*(P(n, P.POSITIONAL_ONLY) for n in names), P(variadic, P.VAR_POSITIONAL),
                              *(P(k, P.KEYWORD_ONLY, default=v) for k, v in defaults.items())])


einsum.__signature__ = _signature(("subscripts",), "operands", _EINSUM_KEYWORDS)  # type: ignore[attr-defined]


def _einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False, backend: str = "auto"):
    key = None
    if out is None and dtype is None and order == "K" and casting == "safe" and operands \
            and operands[0].__class__ is str and _plain(optimize):
        key = _key(operands[0], operands[1:], backend)
        if key is not None:
            key += (optimize,)
            runner = _CACHE.get(key)
            if runner is not None:
                return runner(operands[1:])
    return _slow(operands, out, dtype, order, casting, optimize, backend, key)


#: numpy's ``optimize`` values that need no checking (numpy checks a path given as a list)
_OPTIMIZE = (False, True, "greedy", "optimal")


def _plain(optimize) -> bool:
    """Whether ``optimize`` is one of _OPTIMIZE itself: numpy refuses 0, 1 and ``np.False_``,
    which ``in`` (equality) would accept."""
    return optimize is False or optimize is True or (optimize.__class__ is str and optimize in _OPTIMIZE)


#: The most operands numpy's exhaustive 'optimal' path search is asked to order (docs/einsum.md).
NUMPY_OPTIMAL_UP_TO = 8


def _bounded(optimize, operands: tuple):
    """numpy's ``optimize``, 'greedy' for 'optimal' beyond NUMPY_OPTIMAL_UP_TO operands."""
    return "greedy" if isinstance(optimize, str) and optimize == "optimal" and _count(operands) > NUMPY_OPTIMAL_UP_TO \
        else optimize


def _count(operands) -> int:
    """How many operands a call of ``(subscripts, *ops)`` or of sublists has."""
    return len(operands) - 1 if operands and isinstance(operands[0], (str, bytes)) else len(operands) // 2


class EinsumMemoryError(TensorLangError, MemoryError):
    """error[too-large] for a result numpy cannot allocate, and the MemoryError numpy raises."""

    __init__ = partialmethod(TensorLangError.__init__, "too-large")  # (message)


def _numpy_einsum(*operands, via=_NUMPY_EINSUM, **options):
    """numpy.einsum (or ``via``), a 0-d result a scalar for any ``optimize`` (as a compiled call's); its refusals
    as tensorlang's errors of numpy's types (docs/einsum.md, "Errors")."""
    try:
        result = via(*operands, **options)
        return result[()] if result.__class__ is _ndarray and not result.shape and options.get("out") is None else result
    except MemoryError as exc:
        raise EinsumMemoryError(f"einsum: {exc}; the result does not fit in memory") from None
    except Exception as exc:  # noqa: BLE001 - numpy_refusal returns what numpy did not raise as it is
        raise languages.EINSUM.numpy_refusal(exc, operands) from None


def _numpy_runner(subscripts: str, optimize) -> Callable[[tuple], Any]:
    return lambda ops: _numpy_einsum(subscripts, *ops, optimize=_bounded(optimize, (subscripts, *ops)))


def _remember(key, runner, arrays: tuple, subscripts: str, optimize, backend: str) -> None:
    if len(_CACHE) >= CACHE_SIZE:
        for old in list(_CACHE)[: CACHE_SIZE // 2]:
            _CACHE.pop(old, None)  # (another thread may be dropping it too)
        _HITS.clear()
    _CACHE[key] = runner
    if backend == "auto" and optimize is False and all(a.flags.c_contiguous for a in arrays) and len(arrays) > 1:
        # (the key of three or more operands has no identity: never a one-array runner there)
        _HITS[_hit_key((subscripts, *arrays))] = getattr(runner, "ordered", None) or (lambda *ops: runner(ops))


def check_operands(operands, count: int | None = None) -> None:
    """error[too-large] past an ``.einsum`` file's bound of operands, before any work per operand."""
    limits.check_statements(_count(operands) if count is None else count, what="operands (declarations)")


def _slow(operands, out, dtype, order, casting, optimize, backend, key):
    """The first call of a key (``key``: None for an unusual call): read, decide, compile, cache, run."""
    def by_numpy():
        return _numpy_einsum(*operands, out=out, dtype=dtype, order=order, casting=casting,
                             optimize=_bounded(optimize, operands))

    check_operands(operands)
    if not operands or not _plain(optimize):
        return by_numpy()  # numpy's errors, numpy's check of a given path
    if backend != "auto":
        resolve_backend(backend)  # an unknown or unavailable back end is error[backend], not numpy
    if isinstance(operands[0], bytes):  # numpy reads ASCII bytes as the subscripts (not a bytearray)
        try:
            operands = (operands[0].decode("ascii"), *operands[1:])
        except UnicodeDecodeError:
            return by_numpy()
    try:
        subscripts, ops = (operands[0], tuple(operands[1:])) if isinstance(operands[0], str) else \
            languages.EINSUM.from_sublists(tuple(operands))
    except EinsumError as exc:
        return _numpy_agrees(exc, by_numpy)
    if any(not isinstance(o, np.ndarray) and hasattr(type(o), "__array_function__") for o in ops):
        return by_numpy()  # dask, cupy...: numpy hands the call to their einsum (a lazy dask array stays lazy)
    try:
        arrays = tuple(np.asarray(o) for o in ops)
    except Exception:  # noqa: BLE001 - numpy says what is wrong with an operand
        return by_numpy()

    def numpy_decides():  # numpy computes this call; a plain call remembers that
        if key is not None:
            _remember(key, _numpy_runner(subscripts, optimize), arrays, subscripts, optimize, backend)
        return by_numpy()

    if len(arrays) < 2 or any(a.dtype not in _COMPILED or a.size == 0 for a in arrays):
        return numpy_decides()  # numpy's dtypes, numpy's views of one operand, empty operands
    if order not in ("K", "C", "A", "k", "c", "a") or casting != "safe":
        return by_numpy()
    if order in "KkAa" and any(not a.flags.c_contiguous for a in arrays) or order in "Aa" and all(a.flags.f_contiguous for a in arrays):
        return numpy_decides()  # numpy's output layout follows non-C inputs' layouts ('A': F where all are F, 1-d too)
    try:
        spec = languages.EINSUM.parse(subscripts, tuple(a.shape for a in arrays))
    except EinsumError as exc:
        return _numpy_agrees(exc, by_numpy)
    result_dtype = np.result_type(*arrays)
    try:
        if dtype is not None and np.dtype(dtype) != result_dtype:
            return by_numpy()
    except TypeError:
        return by_numpy()
    if out is not None and not (isinstance(out, np.ndarray) and out.shape == spec.result_shape
                                and out.dtype == result_dtype and out.flags.writeable):
        return by_numpy()
    own_key = key
    if own_key is None:  # out=, dtype= or order='C': its own entry (its layout rule is not 'K''s)
        own_key = _key(subscripts, arrays, backend)
        if own_key is not None:
            own_key += (optimize, order.upper())
    runner = _CACHE.get(own_key) if own_key is not None else None
    if runner is None:
        try:
            runner = _make_runner(spec, arrays, result_dtype, backend, subscripts, optimize, _one_array(arrays))
        except RecursionError:  # hundreds of operands nest too deeply for a stage's recursion
            raise TensorLangError("too-large", f"{len(arrays)} operands nest too deeply to compile "
                                  "(the same einsum in fewer calls, or backend='interp')") from None
        if own_key is not None and all(o is a for o, a in zip(ops, arrays)):
            _remember(own_key, runner, arrays, subscripts, optimize, backend)
    result = runner(arrays)
    if out is not None:
        np.copyto(out, result)
    return result if out is None else out


def _numpy_agrees(exc: TensorLangError, by_numpy):
    """Our reading rejected the call: numpy's verdict decides (its ValueError raises ours;
    its TypeError stays; should numpy accept the call, its result stands)."""
    try:
        return by_numpy()
    except ValueError:
        raise exc from None


def _make_runner(spec, arrays: tuple, dtype: np.dtype, backend: str, subscripts: str, optimize, same: bool = False):
    """The runner for one key: a compiled kernel's call, or numpy.einsum where compiling
    fails.  ``same``: every operand is one array, the kernel's one input (a Gram step)."""
    layouts = tuple("C" if a.flags.c_contiguous else "F" for a in arrays)
    try:
        kernel = compile_spec(_transposed(spec, layouts), dtype, backend, same)
    except TensorLangError:
        return _numpy_runner(subscripts, optimize)
    runner = _kernel_runner(kernel, layouts, tuple(a.dtype for a in arrays), dtype, scalar=not spec.output, same=same)
    runner.kernel = kernel  # type: ignore[attr-defined]  # (what it runs: its schedule, for --emit and the tests)
    return runner


def _one_array(arrays: tuple | list) -> bool:
    return len(arrays) > 1 and all(a is arrays[0] for a in arrays)


def _transposed(spec, layouts):
    """``spec`` with every F-ordered operand read as its (C-ordered) transpose."""
    if all(layout == "C" for layout in layouts):
        return spec
    terms = tuple(t[::-1] if layout == "F" else t for t, layout in zip(spec.terms, layouts))
    shapes = tuple(s[::-1] if layout == "F" else s for s, layout in zip(spec.shapes, layouts))
    return type(spec)(terms, spec.output, spec.sizes, shapes)


def compile_spec(spec, dtype, backend: str = "auto", same: bool = False) -> Kernel:
    """The kernel of an einsum Spec, lowered to EIN directly (lang/einsum/lower.py).
    ``same``: the operands are one array, the input ``T0``."""
    language = languages.EINSUM.LANGUAGE
    source = Source(languages.EINSUM.to_text(spec), "<einsum>")
    with pointing_into(source):
        checked = language.check(spec)
    if same:
        language, checked = languages.EIN, languages.EIN.check(_one_input(checked.program))
    kernel = compile_checked(language, checked, source, compile_options(backend, dtype))
    assert isinstance(kernel, Kernel)  # an einsum call's shapes are numbers: never symbolic
    return kernel


def _one_input(program: ir.Program) -> ir.Program:
    """The einsum program with every operand read as ``T0`` (the others' declarations gone)."""
    rename = {d.name: "T0" for d in program.decls if d.name != RESULT and d.name != "T0"}
    statements = tuple(dataclasses.replace(s, body=ir.rename_tensors(s.body, rename)) for s in program.statements)
    return dataclasses.replace(program, decls=tuple(d for d in program.decls if d.name not in rename),
                               statements=statements)


def _kernel_runner(kernel: Kernel, layouts: tuple, dtypes: tuple, dtype: np.dtype, scalar: bool, same: bool = False):
    """The runner of a compiled kernel: ``kernel.runner``'s call, behind the target's ``ordered``
    call where it has one (the key fixed every operand's shape, dtype and layout; where it
    declines, None, the runner's call).  ``same``: as :func:`_make_runner`."""
    names = ("T0",) if same else tuple(f"T{k}" for k in range(len(layouts)))  # (zip reads one operand for same)
    plain = all(layout == "C" for layout in layouts) and all(d == dtype for d in dtypes)
    through = kernel.runner.call

    def prepare(ops):  # np.asarray(order="C"), not ascontiguousarray: a 0-d operand stays 0-d
        return {name: (np.asarray(o, dtype, order="C") if layout == "C" else np.asfortranarray(o, dtype).T)
                for name, o, layout in zip(names, ops, layouts)}

    def run(ops):
        arrays = dict(zip(names, ops)) if plain else prepare(ops)
        value = through(arrays, None)[RESULT]
        return value[()] if scalar else value

    ordered = getattr(kernel.target, "ordered_call", None)
    caller = ordered(names * len(layouts) if same else names, kernel.threads) if (plain and ordered is not None) else None
    if caller is None:
        return run

    def first(ops):
        result = caller(*ops)
        return run(ops) if result is None else result
    first.ordered = caller  # type: ignore[attr-defined]  # the hit, and contract_expression's calls
    return first


# ------------------------------------------------------------------ opt_einsum's interface
class ContractExpression:
    """opt_einsum's ContractExpression: a contraction compiled for fixed shapes (docs/einsum.md, "The cache")."""

    def __init__(self, subscripts: str, shapes: tuple, constants: dict[int, np.ndarray], backend: str):
        self.subscripts, self.shapes, self.constants, self.backend = subscripts, shapes, constants, backend
        self.num_args = len(shapes) - len(constants)
        if backend != "auto":  # error[backend] here, not a numpy run
            resolve_backend(backend)
        self._free = tuple(k for k in range(len(shapes)) if k not in constants)
        self.spec = spec = languages.EINSUM.parse(subscripts, tuple(_shape_of(s) for s in shapes))
        self._runner = self._same = None
        # runners built from unfilled arrays of the shapes; none beyond the memory budget
        within = sum(math.prod(shape) for shape in spec.shapes) * 8 <= limits.memory_budget_bytes()
        if len(spec.shapes) >= 2 and all(n > 0 for shape in spec.shapes for n in shape) and within:
            dummies = tuple(np.empty(shape) for shape in spec.shapes)
            self._runner = _shared_runner(spec, dummies, backend, subscripts)
            if not constants and len(set(spec.shapes)) == 1:  # called with one array k times: its own kernel
                self._same = _shared_runner(spec, (dummies[0],) * len(dummies), backend, subscripts)
        #: the runners' C callers (None where an array does not fit them): a call tries them first
        self._fast = getattr(self._runner, "ordered", None) if not constants else None
        self._fast_same = getattr(self._same, "ordered", None)

    def __reduce__(self):
        # pickled as what made it (a Dask worker, a multiprocessing child): the receiving
        # process rebuilds its runners from its own call cache (the C from the disk cache)
        return ContractExpression, (self.subscripts, self.shapes, self.constants, self.backend)

    def __call__(self, *arrays, **options):
        if not options:
            if self._fast_same is not None and len(arrays) > 1 and arrays[0] is arrays[1]:
                result = self._fast_same(*arrays)  # declines (None) unless every array is that one
                if result is not None:
                    return result
            fast = self._fast
            if fast is not None:
                result = fast(*arrays)
                if result is not None:
                    return result
            return self._general(arrays, None, None)
        check_keywords("ContractExpression.__call__", options, _CALL_KEYWORDS)  # (an unknown back end: einsum's error)
        return self._general(arrays, options.get("out"), options.get("backend"))

    def _general(self, arrays: tuple, out, backend: str | None):
        """A call the C callers declined, or one with constants, ``out=`` or ``backend=``."""
        if len(arrays) != self.num_args:
            raise EinsumError(f"this contraction takes {self.num_args} array(s) (besides its constants), "
                              f"got {len(arrays)}")
        given = {**dict(zip(self._free, arrays)), **self.constants}
        ops = [given[k] for k in range(len(self.shapes))]
        runner = self._same if self._same is not None and _one_array(ops) else self._runner
        if runner is not None and out is None and backend is None and all(
                map(fits, ops, self.spec.shapes, [_FLOAT64] * len(ops))):
            return runner(tuple(ops))  # what the runner was built for
        for o, s in zip(ops, self.spec.shapes):
            if np.shape(o) != s:
                raise EinsumError(f"this contraction was built for shapes {list(self.spec.shapes)}, "
                                  f"got an operand of shape {np.shape(o)}")
        return einsum(self.subscripts, *ops, out=out, backend=backend or self.backend)

    def __repr__(self) -> str:
        return f"<tl.ContractExpression('{self.spec.subscripts()}')>"


#: An expression call's keywords (opt_einsum's; ``evaluate_constants`` ignored), checked only when given
_CALL_KEYWORDS = {"out": None, "backend": None, "evaluate_constants": False}
ContractExpression.__call__.__signature__ = _signature(("self",), "arrays", _CALL_KEYWORDS)  # type: ignore[attr-defined]


def _shared_runner(spec, arrays: tuple, backend: str, subscripts: str):
    """The einsum cache's runner of a plain float64 call (made and put there if missing): an
    expression and ``tl.einsum`` share one kernel; where numpy computes, one of its own."""
    key = _key(subscripts, arrays, backend)
    assert key is not None  # (ndarrays)
    key += (False,)  # tl.einsum's default optimize=False: the key of a plain call
    runner = _CACHE.get(key)
    if getattr(runner, "kernel", None) is None:
        runner = _make_runner(spec, arrays, np.dtype(np.float64), backend, subscripts, True, _one_array(arrays))
        if getattr(runner, "kernel", None) is not None:  # compiled: the same for any optimize
            _remember(key, runner, arrays, subscripts, False, backend)
    return runner


def _shape_of(shape) -> tuple[int, ...]:
    if isinstance(shape, np.ndarray):
        return shape.shape
    try:
        dims = tuple(shape)
    except TypeError:
        raise EinsumError(f"contract_expression takes shapes (tuples of integers), got {shape!r}") from None
    if not all(is_integer(n, 0) for n in dims):
        raise EinsumError(f"a shape is a tuple of non-negative integers, got {shape!r}")
    return tuple(int(n) for n in dims)


@signature_checked
def contract_expression(subscripts: str, *shapes, constants=None, backend: str = "auto", use_blas: bool = True,
                        optimize=True, memory_limit=None):
    """``expr = tl.contract_expression("ij,jk->ik", (2, 3), (3, 4)); expr(a, b)``, opt_einsum's
    (docs/einsum.md): ``constants`` lists positions whose ``shapes`` entry is the array itself;
    ``use_blas``, ``optimize`` and ``memory_limit`` are ignored."""
    if not isinstance(subscripts, str):
        raise EinsumError("contract_expression takes the subscripts as a string")
    check_operands(shapes, len(shapes))
    fixed: dict[int, np.ndarray] = {}
    if isinstance(constants, np.ndarray) and constants.ndim == 1 and constants.dtype.kind in "iu":
        constants = constants.tolist()  # (positions as an integer array, as opt_einsum takes them)
    if not isinstance(constants, (list, tuple, set, frozenset, range, type(None))):
        raise EinsumError(f"constants is a list of operand positions, got {constants!r:.60}")
    for k in constants or ():
        if not is_integer(k, 0, len(shapes) - 1):
            raise EinsumError(f"constants lists operand positions 0..{len(shapes) - 1}, got {k!r}")
        if isinstance(shapes[k], np.generic) and shapes[k].dtype.kind in "biufc":  # (a numpy scalar: a 0-d array)
            shapes = (*shapes[:k], np.asarray(shapes[k]), *shapes[k + 1:])
        if not isinstance(shapes[k], np.ndarray) or shapes[k].dtype.kind not in "biufc":
            raise EinsumError(f"constants=[{k}]: operand {k} is {repr(shapes[k])[:60]}; a constant's entry is the "
                              "array itself (a numpy array of numbers), not its shape")
        limits.refuse_masked(shapes[k], f"constant {k}")
        fixed[int(k)] = shapes[k]
    return ContractExpression(subscripts, shapes, fixed, backend)


# ------------------------------------------------------------------ path
@signature_checked
def einsum_path(*operands, optimize=None, einsum_call=False):
    """The contraction order tensorlang runs as numpy.einsum_path's ``(path, report)``; with
    ``optimize`` or for a call numpy computes, numpy's own (docs/einsum.md)."""
    check_operands(operands)
    if optimize is None and not einsum_call and operands:  # (none: numpy's "No input operands")
        try:
            path = _our_path(operands)
        except (TensorLangError, ValueError, TypeError):  # numpy then says what is wrong
            path = None
        if path is not None:
            return _numpy_einsum(*operands, via=_NUMPY_EINSUM_PATH, optimize=path)
    optimize = "greedy" if optimize is None else _bounded(optimize, operands)
    return _numpy_einsum(*operands, via=_NUMPY_EINSUM_PATH, optimize=optimize, einsum_call=einsum_call)


def _our_path(operands) -> list | None:
    """The optimized program's statements as a numpy path (each contracts what it reads into a new operand)."""
    subscripts, ops = (operands[0], operands[1:]) if isinstance(operands[0], str) else \
        languages.EINSUM.from_sublists(tuple(operands))
    arrays = tuple(np.asarray(o) for o in ops)
    if len(arrays) < 2 or any(a.dtype not in _COMPILED or a.size == 0 for a in arrays):
        return None
    spec = languages.EINSUM.parse(subscripts, tuple(a.shape for a in arrays))
    program = compile_spec(spec, np.result_type(*arrays), "numpy").executed
    current = [f"T{k}" for k in range(len(arrays))]
    path: list = ["einsum_path"]
    for statement in program.statements:
        reads = [name for name in statement.reads if name in current]
        if len(reads) != len(statement.reads) or not reads:
            return None  # a statement that reads something else: not a contraction order
        positions = tuple(sorted(current.index(name) for name in reads))
        path.append(positions)
        current = [name for name in current if name not in reads] + [statement.target]
    return path if len(current) == 1 else None


def einsum_program(subscripts: str, *operands, stage: str = "opt") -> str:
    """The program tensorlang runs for ``einsum(subscripts, *operands)`` at a stage (``ein``, ``opt``, ...)."""
    check_operands(operands, len(operands))
    arrays = tuple(np.asarray(o) for o in operands)
    spec = languages.EINSUM.parse(subscripts, tuple(a.shape for a in arrays))
    dtype = np.result_type(*arrays) if arrays and all(a.dtype in _COMPILED for a in arrays) else np.float64
    return compile_spec(spec, dtype, "numpy").ir(stage)
