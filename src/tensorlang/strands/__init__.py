"""Running strand programs (Diderot's) from Python and the command line: ``options`` (the
command line), ``nrrd_out`` (outputs and snapshots), ``runner`` (:class:`~.runner.StrandRun`,
what ``tl.compile`` returns for one; the front end hands it a ``StrandProgram``).  docs/diderot.md.
"""

from .runner import InterpreterFallbackWarning, Result, StrandRun

__all__ = ["InterpreterFallbackWarning", "Result", "StrandRun"]
