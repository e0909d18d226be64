"""Running strand programs (Diderot's): the Python callable, the command line of a
compiled Diderot executable, and the NRRD files it writes.  See docs/diderot.md.

The front end (``lang/``) parses, checks and executes a program's strands and hands the
surface a ``StrandProgram`` through its Language's ``strands`` hook; this package is the
surface around it, so that images can be read with :mod:`tensorlang.fields` (a layer
above ``lang/``): ``options`` (the command line), ``nrrd_out`` (outputs and snapshots),
``runner`` (:class:`~.runner.StrandRun`, what ``tl.compile`` returns for such a program).
"""

from .runner import InterpreterFallbackWarning, Result, StrandRun

__all__ = ["InterpreterFallbackWarning", "Result", "StrandRun"]
