"""Every stage of the compiler that prints, in one table (``tensorlang compile --emit``,
``Kernel.ir``, ``Kernel.code``).

A stage is a name and a function from a compiled :class:`~tensorlang.kernel.Kernel` to
text.  The front end's own stages come from its :class:`~tensorlang.lang.Language`
(``ast``) and the registry's conversions (``tl``, ``teil``, ``core``); the EIN stages
print the IR before and after the optimizer; ``schedule`` and ``loops`` the layers below
it that every target shares (computed, not run: they print for the interpreter too); the
code stages print what a target runs.
"""

from __future__ import annotations

from typing import Any, Callable

from . import lang
from .ein.printer import to_lambda_text, to_text
from .loops.printer import to_text as loops_text
from .schedule.printer import to_text as schedule_text
from .targets.c.codegen import print_c
from .targets.c.runtime import blas_int_max
from .targets.numpy.codegen import compile_numpy


def _view(stage: str) -> Callable[[Any], str]:
    return lambda kernel: lang.VIEWS[stage](kernel.checked)


#: The stages ``Kernel.ir`` shows: the program as parsed, in the other languages, in EIN.
IR_STAGES: dict[str, Callable[[Any], str]] = {
    "ast": lambda kernel: kernel.language.print(kernel.program),
    **{stage: _view(stage) for stage in lang.VIEWS},
    "ein": lambda kernel: to_text(kernel.ein),
    "lambda": lambda kernel: to_lambda_text(kernel.ein),
    "opt": lambda kernel: to_text(kernel.optimized.program),
    "schedule": lambda kernel: schedule_text(kernel.schedule),
    "loops": lambda kernel: loops_text(kernel.loop_program, kernel.schedule),
}


def _numpy_source(kernel) -> str:
    if kernel.backend == "numpy":
        return kernel.target.source
    return compile_numpy(kernel.executed, kernel.dtype, kernel.schedule).source


def _c_source(kernel) -> str:
    """The C a C kernel compiled (BLAS calls only where it found a BLAS), else the C its
    schedule would give."""
    if kernel.backend == "c" and getattr(kernel.target, "source", None):
        return kernel.target.source
    return print_c(kernel.schedule, kernel.loop_program, blas_int_max(kernel.schedule.dtype, getattr(kernel, "pad", 1))).source


#: The stages ``Kernel.code`` shows: what a target generates and runs.
CODE_STAGES: dict[str, Callable[[Any], str]] = {
    "c": _c_source,
    "numpy": _numpy_source,
}

#: Every stage ``tensorlang compile --emit`` accepts, in pipeline order.
EMIT_STAGES: tuple[str, ...] = (*IR_STAGES, *CODE_STAGES)
