"""Every stage of the compiler that prints, in one table (``tensorlang compile --emit``,
``Kernel.ir``, ``Kernel.code``): a name and a function from a compiled
:class:`~tensorlang.kernel.Kernel` to text, the front end's views (``ast``, ``tl``,
``teil``, ``core``) and the pipeline's values printed by ``Compiled.show``.
"""

from __future__ import annotations

from typing import Any, Callable

from . import lang
from .ein.printer import to_lambda_text, to_text


def _view(stage: str) -> Callable[[Any], str]:
    return lambda kernel: lang.VIEWS[stage](kernel.checked)


def _compiled(stage: str, backend: str | None = None) -> Callable[[Any], str]:
    def show(kernel) -> str:
        text = kernel._compiled_for(stage, backend).show(stage)
        assert text is not None, f"the pipeline ran {stage}"
        return text
    return show


def _source(stage: str, show: Callable[[Any], str]) -> Callable[[Any], str]:
    """A stage that prints a program: its text when the front end reads it back, else
    error[too-large] naming the bound (:func:`tensorlang.lang.reads_back`)."""
    return lambda kernel: lang.reads_back(show(kernel), stage, kernel.language.name)


#: The stages ``Kernel.ir`` shows: the program as parsed, in the other languages, in EIN,
#: and the pipeline's stages below the optimizer.
IR_STAGES: dict[str, Callable[[Any], str]] = {
    "ast": _source("ast", lambda kernel: kernel.language.print(kernel.program)),
    **{stage: _source(stage, _view(stage)) for stage in lang.VIEWS},
    "ein": _source("ein", lambda kernel: to_text(kernel.ein)),
    "lambda": lambda kernel: to_lambda_text(kernel.ein),
    "opt": _source("opt", lambda kernel: to_text(kernel.optimized.program)),
    "facts": _compiled("facts"),
    # the schedule that goes with the loops (Kernel.schedule): the C target's where the
    # kernel's own target runs no loop IR (a numpy kernel's own is its compiled.schedule)
    "schedule": lambda kernel: kernel._compiled_for("loops").show("schedule"),
    "loops": _compiled("loops"),
}


#: The stages ``Kernel.code`` shows: what a target renders and runs.
CODE_STAGES: dict[str, Callable[[Any], str]] = {
    "c": _compiled("code", "c"),
    "numpy": _compiled("code", "numpy"),
}

#: Every stage ``tensorlang compile --emit`` accepts, in pipeline order.
EMIT_STAGES: tuple[str, ...] = (*IR_STAGES, *CODE_STAGES)
