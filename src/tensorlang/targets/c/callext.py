"""The C-level call path: a CPython extension (csrc/callext.c, compiled once per machine,
Python and numpy) whose ``Caller``, configured per kernel, takes the *plain call* and
declines (None) anything else (docs/c-backend.md, "Calls" and "Padding"); the rule for
one array of it (:func:`fits`); ``ordered`` in Python is ``CKernel.ordered_in_python``."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

import numpy as np

from ...errors import TensorLangError
from ...limits import env_flag
from ...schedule.plan import SCRATCH
from . import build as c_build
from . import csrc
from .padded import alignment as padded_alignment
from .codegen import check_status

#: The most slots (C function parameters) the caller passes (``call_function``'s cases); more: the general path.
MAX_SLOTS = 24
#: The most dimensions a slot's shape may have here (numpy allows 64).
MAX_RANK = 16
#: Kernels whose buffers hold at least this many elements release the GIL while they run
#: (below, releasing and re-taking it costs more than the kernel).
RELEASE_GIL_ELEMENTS = 1 << 14

#: Slot roles as the extension numbers them.
IN, OUT, INOUT, WORK = 0, 1, 2, 3
_ROLES = {"in": IN, "out": OUT, "inout": INOUT}

_MODULE = "tensorlang_callext"


def fits(array, shape: tuple[int, ...], dtype: np.dtype) -> bool:
    """The plain-call rule for one array, the contract of every call that checks nothing
    more: exactly an ndarray (no subclass: no masked array), of ``shape`` and ``dtype``
    (byte order included), C-contiguous and aligned.  csrc/callext.c's ``fits`` is this
    rule in C (tests/targets/test_c_callext.py holds them to agreement)."""
    if array.__class__ is not np.ndarray:
        return False
    flags = array.flags
    return array.shape == shape and array.dtype == dtype and flags.c_contiguous and flags.aligned


def source() -> str:
    """The extension's C source, headed by the Python and numpy versions (the cache key)."""
    header = (f"/* python {sys.version.split()[0]} {sysconfig.get_config_var('SOABI')}; "
              f"numpy {np.__version__} */")
    cases = "\n".join(f"    case {n}: return ((int (*)({'void *, ' * n}int))fn)({''.join(f'p[{k}], ' for k in range(n))}threads);"
                      for n in range(MAX_SLOTS + 1))
    return header + csrc.text("callext.c", maxslots=MAX_SLOTS, maxrank=MAX_RANK, cases=cases)


def include_dirs() -> tuple[str, ...] | None:
    """The directories of ``Python.h`` and ``numpy/arrayobject.h``, or None where one is missing."""
    python = sysconfig.get_paths().get("include") or ""
    numpy_include = np.get_include()
    found = Path(python, "Python.h").is_file() and Path(numpy_include, "numpy", "arrayobject.h").is_file()
    return (python, numpy_include) if found else None


_why: list[str] = []


@lru_cache(maxsize=None)
def extension():
    """The extension module, compiled and cached on first use; None where it cannot be had (:func:`why_unavailable`)."""
    if env_flag("TENSORLANG_NO_CALLEXT"):
        _why.append("switched off by $TENSORLANG_NO_CALLEXT")
        return None
    includes = include_dirs()
    if includes is None:
        _why.append("no Python.h or numpy/arrayobject.h (install the Python development headers)")
        return None
    compiler = c_build.find_compiler()
    if compiler is None:
        _why.append("no C compiler")
        return None
    try:
        path = c_build.build(source(), compiler, extra_flags=tuple(f"-I{d}" for d in includes))
        spec = importlib.util.spec_from_file_location(
            _MODULE, path, loader=importlib.machinery.ExtensionFileLoader(_MODULE, str(path)))
        assert spec is not None and spec.loader is not None
        c_build.prepare_openmp()  # the extension links OpenMP too (the compiler's flags)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.set_status_handler(check_status)
    except (TensorLangError, OSError, ImportError) as exc:
        _why.append(f"the extension did not build or load: {exc}")
        return None
    return module


def why_unavailable() -> str | None:
    """Why :func:`extension` is None (None when it is not)."""
    return None if extension() is not None else (_why[-1] if _why else "unknown")


def install_entry(cls, fallback) -> bool:
    """Let ``cls``'s instances be called by the extension from the class's ``tp_call``
    (``_c_call`` first, then ``fallback``); False where the extension is missing."""
    module = extension()
    return module is not None and bool(module.install_entry(cls, fallback))


def caller(kernel, roles: dict[str, str], order: tuple[str, ...] = ()):
    """The C caller of a :class:`.runtime.CKernel` whose schedule is one C function, or None;
    ``order``: the inputs :meth:`ordered` takes, in order."""
    if kernel._only is None or kernel.ffi is None or any(role == "optional" for role in roles.values()):
        return None
    function, slots, inputs = kernel._only
    names = tuple(kernel.names[s] for s in slots)
    # the function takes each inout slot's input after the slots (codegen.CFunction): the
    # extension passes one for each slot whose role is inout, in slot order
    if inputs != tuple(s for s, name in zip(slots, names) if roles.get(name) == "inout"):
        return None
    shapes = tuple(tuple(int(k) for k in kernel.shapes[s]) for s in slots)
    padded: tuple = ()
    if kernel.pad > 1:  # 000 §4: the storage shapes; a 0-d result is a numpy scalar there (CKernel.run's)
        if order or any(shape == () and roles.get(name) in ("out", "inout") for name, shape in zip(names, shapes)):
            return None
        storage = kernel.schedule.buffers.storage_shapes
        padded = (tuple(tuple(int(k) for k in storage[s]) for s in slots),
                  padded_alignment(kernel.pad, kernel.dtype.itemsize))
    if len(slots) + len(inputs) > MAX_SLOTS or len(order) > MAX_SLOTS or any(len(shape) > MAX_RANK for shape in shapes) \
            or not set(order) <= set(names) or (module := extension()) is None:
        return None
    codes = tuple(WORK if name == SCRATCH else _ROLES.get(roles.get(name, "temp"), WORK) for name in names)
    address = int(kernel.ffi.cast("uintptr_t", function))
    elements = sum(int(np.prod(shape)) for shape in shapes)
    positions = tuple(names.index(name) for name in order)
    return module.Caller(address, codes, names, shapes, kernel.dtype, positions, 0, elements >= RELEASE_GIL_ELEMENTS,
                         *padded)
