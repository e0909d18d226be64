"""EIN, the one intermediate representation (paper 004 section 4).

Every front end lowers into it (:mod:`.lower`), every pass and back end reads it, and it
prints as index notation that parses back (:mod:`.printer`).
"""

from .ir import (  # noqa: F401
    BinOp,
    Concat,
    Const,
    Decl,
    Delta,
    Epsilon,
    Apply,
    Neg,
    Program,
    Reduce,
    Stack,
    Statement,
    Sum,
    Tensor,
)
