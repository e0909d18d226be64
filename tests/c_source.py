"""The C the C target renders for an EIN program as given (no optimizer), through the one
driver (tensorlang.pipeline): what tests that read generated C need."""

from __future__ import annotations

import numpy as np

from tensorlang import pipeline


def generate(program, dtype, roles=None, blas: bool = True, parallel_work=None, pad: int = 1, fma: bool = False):
    """The rendered C (``.source``, ``.schedule``, ``.loop_program``) of ``program``."""
    options = pipeline.Options("c", np.dtype(dtype), opt=False, pad=pad, fma=fma, blas=blas,
                               parallel_work=parallel_work)
    return pipeline.compile(program, options, roles=roles, until="code").code


def c_kernel(program, dtype, roles=None, blas: bool = True, pad: int = 1):
    """The pipeline's values for ``program`` on the C target, built (``.build`` runs it)."""
    options = pipeline.Options("c", np.dtype(dtype), opt=False, pad=pad, blas=blas)
    return pipeline.compile(program, options, roles=roles)
