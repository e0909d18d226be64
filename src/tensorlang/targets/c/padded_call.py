"""The fast call of a padded kernel (000 §4, ``pad=M``): the plain call checked inline,
then :meth:`CKernel.run_padded`, skipping the general path's validation.

The unpadded kernels' fast call (:mod:`.fastcall`) hands C-contiguous arrays straight to
C; a padded kernel cannot, since its buffers are padded (:mod:`.padded`), so what it
saves is the validation: ``Kernel.__call__`` → ``_validate_inputs`` → ``_validate_out``
is several microseconds of Python, more than a small padded kernel runs.  Like
:mod:`.fastcall` it only takes the plain case and *declines* (returns None) anything
else, so the general path, which reports errors, stays the one source of truth:

* every required input given as an ndarray of exactly the declared shape and the
  kernel's dtype (any layout: :meth:`~.runtime.CKernel.run_padded` copies it into a
  padded buffer unless it is a :func:`.padded.padded_empty` array, read in place), a
  scalar input also as a Python or numpy number, no other keyword;
* ``out=`` absent, or a dict of result names to writeable ndarrays of the right shape and
  dtype, no two of them the same array (``run_padded`` decides per target whether it is
  written in place, as a padded buffer sharing no memory with an input, or gets a copy).
"""

from __future__ import annotations

import numpy as np

from .fastcall import NUMBERS


def padded_fast_call(kernel, roles: dict[str, str]):
    """The fast call function of padded ``kernel`` (a CKernel with ``pad`` > 1), or None
    when it has optional inputs (unqualified programs: the general path fills them)."""
    if any(role == "optional" for role in roles.values()):
        return None
    names, shapes, dtype = kernel.names, kernel.shapes, kernel.dtype
    required = tuple((names[n], tuple(shapes[n])) for n in range(len(names)) if roles.get(names[n]) in ("in", "inout"))
    results = {names[n]: tuple(shapes[n]) for n in range(len(names)) if roles.get(names[n]) in ("out", "inout")}
    count = len(required)
    ndarray, run = np.ndarray, kernel.run_padded

    def call(arrays, out, threads):
        if len(arrays) != count:
            return None
        for name, shape in required:
            a = arrays.get(name)
            if a.__class__ in NUMBERS and shape == ():
                a = arrays[name] = np.array(a, dtype)
            if a.__class__ is not ndarray or a.shape != shape or a.dtype is not dtype:
                return None
        if out:
            if out.__class__ is not dict:
                return None
            seen: list[np.ndarray] = []
            for name, target in out.items():
                wanted = results.get(name)
                if (wanted is None or target.__class__ is not ndarray or target.shape != wanted
                        or target.dtype is not dtype or not target.flags.writeable):
                    return None
                if any(target is other for other in seen):
                    return None
                seen.append(target)
            if len(seen) > 1 and any(a.base is not None or b.base is not None for a in seen for b in seen if a is not b):
                for i, a in enumerate(seen):  # views: two targets could still share memory
                    if any(np.may_share_memory(a, b) for b in seen[i + 1:]):
                        return None
        return run(arrays, out or {}, threads)

    return call
