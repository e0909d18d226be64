"""Which BLAS this machine has (the GEMM, GEMV and SYRK generated C calls), found once per
process in the library numpy already loaded: threadpoolctl's OpenBLAS, else scipy's
capsules, else none (``$TENSORLANG_NO_C_BLAS=1``); docs/c-backend.md, "BLAS called from C"."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..limits import env_flag
from . import BLAS_INT_MAX

#: How generated C calls the functions (the kernel's ``tl_blas_kind``, targets/c/blascall.py).
CBLAS64, CBLAS32, FORTRAN32 = 1, 2, 3

#: The affixes of OpenBLAS's symbols, as threadpoolctl's OpenBLAS controller knows them.
_PREFIXES = ("scipy_", "")
_SUFFIXES = ("64_", "_64", "")

#: The letter of each dtype's BLAS routines.
_LETTER = {"float64": "d", "float32": "s"}


@dataclass(frozen=True)
class BlasFunctions:
    """One dtype's GEMM, GEMV and SYRK: their addresses, how to call them, and where from."""

    gemm: int
    gemv: int
    kind: int  # CBLAS64, CBLAS32 or FORTRAN32
    origin: str  # for the record: the library's path, or scipy.linalg.cython_blas
    #: SYRK (a packed structured statement's Gram product, loops/structure.py
    #: ``packed_product``); the discovery finds all three or none
    syrk: int = 0

    @property
    def int_max(self) -> int:
        """The largest extent or leading dimension the functions take."""
        return BLAS_INT_MAX[64 if self.kind == CBLAS64 else 32]


_why: list[str] = []


def find(dtype) -> BlasFunctions | None:
    """The BLAS functions for ``dtype`` (float64, float32), or None (:func:`why_not`), looked up once."""
    return _find(np.dtype(dtype).name)


@lru_cache(maxsize=None)
def _find(dtype: str) -> BlasFunctions | None:
    letter = _LETTER.get(dtype)
    if letter is None:
        _why.append(f"no BLAS routines for {dtype}")
        return None
    if env_flag("TENSORLANG_NO_C_BLAS"):
        _why.append("switched off by $TENSORLANG_NO_C_BLAS")
        return None
    found = _from_threadpoolctl(letter) or from_scipy(letter)
    if found is None:
        _why.append("no OpenBLAS found by threadpoolctl and no scipy.linalg.cython_blas")
    return found


def why_not(dtype="float64") -> str | None:
    """Why :func:`find` is None for ``dtype`` (None when it is not)."""
    return None if find(dtype) is not None else (_why[-1] if _why else "unknown")


def clear() -> None:
    """Forget what was found (tests: after changing the environment)."""
    _find.cache_clear()


def _numpy_first(filepath: str) -> int:
    """0 for a library inside numpy's installation (the one numpy calls), else 1."""
    root = Path(np.__file__).resolve().parent
    try:
        path = Path(filepath).resolve()
    except OSError:
        return 1
    return 0 if path.is_relative_to(root) or path.parent.name.startswith("numpy") else 1


def _from_threadpoolctl(letter: str) -> BlasFunctions | None:
    try:
        from threadpoolctl import threadpool_info
        libraries = [lib for lib in threadpool_info()
                     if lib.get("user_api") == "blas" and lib.get("internal_api") == "openblas" and lib.get("filepath")]
    except Exception:  # noqa: BLE001 - no threadpoolctl, or a discovery that fails: nothing found
        return None
    for lib in sorted(libraries, key=lambda lib: _numpy_first(lib["filepath"])):
        found = from_openblas(lib["filepath"], letter)
        if found is not None:
            return found
    return None


def from_openblas(filepath: str, letter: str) -> BlasFunctions | None:
    """The CBLAS GEMM, GEMV and SYRK (letter ``letter``) of the loaded OpenBLAS at ``filepath``, or None."""
    try:
        dll = ctypes.CDLL(filepath)
    except OSError:
        return None
    for prefix in _PREFIXES:
        for suffix in _SUFFIXES:
            gemm, gemv, syrk = (getattr(dll, f"{prefix}cblas_{letter}{name}{suffix}", None) for name in ("gemm", "gemv", "syrk"))
            if gemm is None or gemv is None or syrk is None:
                continue
            wide = "64" in suffix or _uses_64bit_integers(dll, prefix, suffix)
            return BlasFunctions(_address(gemm), _address(gemv), CBLAS64 if wide else CBLAS32, filepath,
                                 _address(syrk))
    return None


def _uses_64bit_integers(dll, prefix: str, suffix: str) -> bool:
    """Whether an OpenBLAS without a ``64`` suffix was built with 64-bit integers."""
    config = getattr(dll, f"{prefix}openblas_get_config{suffix}", None)
    if config is None:
        return False
    config.restype = ctypes.c_char_p
    return b"USE64BITINT" in (config() or b"")


def _address(function) -> int:
    return ctypes.cast(function, ctypes.c_void_p).value or 0


def from_scipy(letter: str) -> BlasFunctions | None:
    try:
        from scipy.linalg import cython_blas
    except ImportError:
        return None
    capsules = getattr(cython_blas, "__pyx_capi__", {})
    gemm, gemv, syrk = (capsules.get(f"{letter}{name}") for name in ("gemm", "gemv", "syrk"))
    if gemm is None or gemv is None or syrk is None:
        return None
    return BlasFunctions(_capsule_address(gemm), _capsule_address(gemv), FORTRAN32, "scipy.linalg.cython_blas",
                         _capsule_address(syrk))


def _capsule_address(capsule) -> int:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get_pointer(capsule, get_name(capsule)) or 0
