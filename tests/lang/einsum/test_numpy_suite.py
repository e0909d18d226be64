"""numpy's own einsum tests (the installed ``numpy/_core/tests/test_einsum.py``), run
with ``tl.einsum`` and ``tl.einsum_path`` in place of numpy's.

The module is imported from numpy's installation (not copied) and its ``np`` is
replaced by a view of numpy whose ``einsum`` and ``einsum_path`` are tensorlang's; every
other name is numpy's.  The back end is numpy's target (``TENSORLANG_EINSUM_SUITE_BACKEND``
picks another, e.g. ``auto`` for C), so that the few hundred shapes the suite uses do not
each wait for a C compiler.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import types
from pathlib import Path

import numpy
import pytest

import tensorlang as tl

BACKEND = os.environ.get("TENSORLANG_EINSUM_SUITE_BACKEND", "numpy")


def _numpy_suite():
    path = Path(numpy.__file__).parent / "_core" / "tests" / "test_einsum.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("numpy_test_einsum_with_tl", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    view = types.ModuleType("numpy_with_tl_einsum")
    view.__dict__.update(numpy.__dict__)
    view.einsum = functools.partial(tl.einsum, backend=BACKEND)
    view.einsum_path = tl.einsum_path
    module.np = view
    return module


_SUITE = _numpy_suite()
if _SUITE is None:
    pytest.skip("numpy's test_einsum.py is not installed", allow_module_level=True)

for _name, _value in vars(_SUITE).items():
    if _name.startswith("Test") and isinstance(_value, type):
        globals()[_name] = _value
    elif _name.startswith("test_") and callable(_value):
        globals()[_name] = _value
