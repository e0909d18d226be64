"""A generated Python function per kernel for the common call: the whole call in one frame.

A 2×2 matrix product is 16 flops; what a user waits for is Python.  The general call path
(``Kernel.__call__`` → validation → ``CKernel.run`` → ``execute``) is a dozen function
calls and dictionary walks.  This module writes a single function specialised to the
program — its variables, shapes, roles and, when the schedule is one C function, that
function's parameters — that checks the inputs inline, makes the buffers, calls C (or runs
the schedule) and returns the results.

It only ever takes the plain case and *declines* (returns None) on anything else, so the
general path, which reports errors precisely, stays the one source of truth:
* every required input given as a C-contiguous ndarray of exactly the declared shape and
  the kernel's dtype, no other keyword;
* ``out=`` absent, or a dict whose targets are C-contiguous, writeable ndarrays of the
  right shape and dtype that own their memory and are not an input (except the in-place
  idiom, a variable's own input passed as its target).
Variable names appear in the generated source only as string literals (``repr``), never as
identifiers, so no name can change what the code does.
"""

from __future__ import annotations

import numpy as np

from ...schedule.plan import SCRATCH
from .codegen import check_status


#: Number types a scalar input may be given as (bool is not a number here: the general
#: path decides what to say about it).
NUMBERS = frozenset({float, int, np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
                      np.uint64, np.uint32, np.uint16, np.uint8})


def fast_call(kernel, roles: dict[str, str]):
    """The specialised call function of ``kernel`` (a CKernel), or None when its schedule
    is not a single C function or it has optional inputs (unqualified programs)."""
    if any(role == "optional" for role in roles.values()):
        return None
    names, shapes = kernel.names, kernel.shapes
    if kernel._only is not None:  # one C function: call it directly with its buffers
        function, slots, inputs = kernel._only
    else:  # a schedule with BLAS steps: every buffer, through CKernel.execute
        function, slots, inputs = None, tuple(range(len(names))), ()
    required = [n for n in slots if roles.get(names[n]) in ("in", "inout")]
    lines = ["def call(arrays, out, threads):"]
    lines.append(f"    if len(arrays) != {len(required)}:")
    lines.append("        return None")
    for n in required:
        lines.append(f"    a{n} = arrays.get({names[n]!r})")
        if shapes[n] == ():  # a scalar may come as a Python or numpy number
            lines.append(f"    if a{n}.__class__ in numbers:")
            lines.append(f"        a{n} = array(a{n}, dtype)")
        lines.append(f"    if a{n}.__class__ is not ndarray or a{n}.shape != {tuple(shapes[n])!r} "
                     f"or a{n}.dtype is not dtype or not a{n}.flags.c_contiguous:")
        lines.append("        return None")
    targets = [n for n in slots if roles.get(names[n]) in ("out", "inout")]
    lines.append("    if out:")
    lines.append(f"        if out.__class__ is not dict or not out.keys() <= {set(names[n] for n in targets)!r}:")
    lines.append("            return None")
    # with targets, memory may only be shared by identity, which is checked below: every
    # input must own its memory (a view could alias a target without being it)
    for n in required:
        lines.append(f"        if a{n}.base is not None:")
        lines.append("            return None")
    for n in targets:
        lines.append(f"        t{n} = out.get({names[n]!r})")
        lines.append(f"        if t{n} is not None and (t{n}.__class__ is not ndarray or t{n}.shape != {tuple(shapes[n])!r} "
                     f"or t{n}.dtype is not dtype or t{n}.base is not None or not t{n}.flags.c_contiguous "
                     f"or not t{n}.flags.writeable):")
        lines.append("            return None")
        others = [m for m in required if m != n]
        if others:
            alias = " or ".join(f"t{n} is a{m}" for m in others)
            lines.append(f"        if t{n} is not None and ({alias}):")
            lines.append("            return None")
    for i, n in enumerate(targets):  # one array given for two results
        for m in targets[i + 1:]:
            lines.append(f"        if t{n} is not None and t{n} is t{m}:")
            lines.append("            return None")
    lines.append("    else:")
    lines.append("        pass")
    for n in targets:
        lines.append(f"        t{n} = None")
    pooled = [n for n in slots if n in kernel.temporary_slots]
    if pooled:  # temporaries: buffers kept between calls (CKernel.take_temporaries)
        lines.append("    pool = take()")
        for n in pooled:
            lines.append(f"    b{n} = pool[{kernel.temporary_slots.index(n)}]")
    for n in slots:
        role = roles.get(names[n], "temp")
        if role == "in" or n in pooled:
            continue
        if role == "out":
            lines.append(f"    b{n} = empty({tuple(shapes[n])!r}, dtype) if t{n} is None else t{n}")
        elif role == "inout" and n in inputs:  # the C function reads the caller's input itself
            lines.append(f"    b{n} = empty({tuple(shapes[n])!r}, dtype) if t{n} is None else t{n}")
        elif role == "inout":  # the caller's input is copied, unless it is its own target
            lines.append(f"    if t{n} is None:")
            lines.append(f"        b{n} = a{n}.copy()")
            lines.append(f"    elif t{n} is a{n}:")
            lines.append(f"        b{n} = t{n}")
            lines.append("    else:")
            lines.append(f"        b{n} = t{n}")
            lines.append(f"        copyto(b{n}, a{n})")
        else:  # temporaries and the scratch buffer
            lines.append(f"    b{n} = empty({tuple(shapes[n])!r}, dtype)")
    buffer = {n: f"{'a' if roles.get(names[n]) == 'in' else 'b'}{n}" for n in slots}
    if function is not None:
        # then each inout input: the caller's array (the in-place idiom passes it twice;
        # any other target owns its memory, checked above: the two are disjoint)
        args = ", ".join([f"fb(char, {buffer[n]}, False)" for n in slots] + [f"fb(char, a{n}, False)" for n in inputs])
        lines.append(f"    status = function({args}{', ' if args else ''}threads)")
        lines.append("    if status:")
        if pooled:
            lines.append("        give_back(pool)")
        lines.append("        check_status(status)")
    else:
        lines.append(f"    execute([{', '.join(buffer[n] for n in slots)}], threads)")
    if pooled:
        lines.append("    give_back(pool)")
    results = ", ".join(f"{names[n]!r}: b{n}" for n in targets)
    lines.append(f"    return {{{results}}}")
    source = "\n".join(lines) + "\n"
    ffi = kernel.ffi
    namespace = {
        "ndarray": np.ndarray, "dtype": kernel.dtype, "empty": np.empty, "copyto": np.copyto, "array": np.array,
        "numbers": NUMBERS,
        "function": function, "execute": kernel.execute,
        "take": kernel.take_temporaries, "give_back": kernel.give_back_temporaries, "check_status": check_status,
    }
    if ffi is not None:
        namespace.update(fb=ffi._backend.from_buffer, char=ffi.typeof("char[]"))
    exec(compile(source, "<tensorlang fast call>", "exec"), namespace)  # noqa: S102 - our own generated code
    call = namespace["call"]
    call.source = source
    assert SCRATCH not in (names[n] for n in required)
    return call
