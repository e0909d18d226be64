"""Every stage of the compiler that prints, in one table (``--emit``, ``Kernel.ir``,
``Kernel.code``): the front end's views from the checked program (:func:`front_text`),
every other stage from a :class:`~tensorlang.pipeline.Compiled` (:func:`compiled_text`)."""

from __future__ import annotations

from . import lang
from .lang import Language
from .pipeline import Compiled
from .semantics.types import CheckedProgram

#: The front end's views, printed from the checked program.
FRONT_STAGES: tuple[str, ...] = ("ast", *lang.VIEWS)

#: The stages ``Kernel.ir`` shows, each with the pipeline stage a ``Compiled`` must have run
#: to print it (None: a front-end view; ``schedule``: the one that goes with the loop IR).
IR_STAGES: dict[str, str | None] = {
    **dict.fromkeys(FRONT_STAGES),
    "ein": "ein", "lambda": "ein", "opt": "opt", "facts": "facts", "schedule": "loops", "loops": "loops",
}

#: The stages ``Kernel.code`` shows: a ``Compiled``'s ``code`` for that target.
CODE_STAGES: tuple[str, ...] = ("c", "numpy")

#: Every stage ``tensorlang compile --emit`` accepts, in pipeline order.
EMIT_STAGES: tuple[str, ...] = (*IR_STAGES, *CODE_STAGES)

#: The stages that print a program a front end reads back (:func:`tensorlang.lang.reads_back`).
_READ_BACK = (*FRONT_STAGES, "ein", "opt")


def front_text(stage: str, language: Language, checked: CheckedProgram) -> str:
    """A front-end view (:data:`FRONT_STAGES`) of ``checked``, a program in ``language``."""
    text = language.print(checked.program) if stage == "ast" else lang.VIEWS[stage](checked)
    return lang.reads_back(text, stage, language.name)


def compiled_text(stage: str, compiled: Compiled, language: str) -> str:
    """``--emit stage`` from ``compiled``, which ran it; a printed program is error[too-large]
    where ``language``'s reader would refuse it."""
    text = compiled.show("code" if stage in CODE_STAGES else stage)
    assert text is not None, f"the pipeline ran {stage}"
    return lang.reads_back(text, stage, language) if stage in _READ_BACK else text
