"""``tensorlang explain CODE``: what each error code means, an example that produces it
and the same example fixed: one :class:`Explanation` per code of :data:`errors.CODES`,
the table docs/errors.md is checked against (tests run every example and its fix)."""

from __future__ import annotations

from dataclasses import dataclass

from .ein.printer import html_text
from .errors import CODES


_D = ("from tensorlang.lang import diderot as d\nd.typecheck(d.parse_program('input image(2)[] i;\\nfield#%s(2)[] F"
      " = %s (*) i;\\nstrand s () { output vec2 g = \\\\nabla F([1,1]); update {} }\\ninitially [ s() | j in 0..0 ];'))\n")


@dataclass(frozen=True)
class Explanation:
    code: str
    summary: str
    #: why the rule exists and what to do about it
    detail: str
    #: a model-language program (kind "program") or Python lines (kind "python") that fail with ``code``;
    #: empty for a code no example can produce on purpose
    example: str = ""
    #: the example corrected: accepted (kind "program") or run without error (kind "python")
    fix: str = ""
    kind: str = "program"

    def _repr_html_(self) -> str:  # a notebook shows what `tensorlang explain CODE` prints
        return html_text(render(self.code) if EXPLANATIONS.get(self.code) is self else
                         f"error[{self.code}]: {self.summary}\n\n{self.detail}", f"error[{self.code}]")


_ENTRIES = (
    Explanation("syntax", "the text is not a program of the language",
        "The parser stopped at the first token it cannot accept and says what it expected. "
        "Forms borrowed from numpy (einsum strings, np.dot, `A @ B`, commas in shapes) "
        "get a hint with the tensorlang form.",
        "var A : [2, 3]\nvar B : [3 2]\nvar C : [2 2]\nC = A @ B\n",
        "var A : [2 3]\nvar B : [3 2]\nvar C : [2 2]\nC = A # B . [2 3]\n"),
    Explanation("redeclared", "a variable is declared twice",
        "Each name is declared once (rule s-var); pick another name for the second.",
        "var x : [2]\nvar x : [3]\nx = x\n", "var x : [2]\nvar y : [3]\nx = x\n"),
    Explanation("undeclared-assign", "an assignment to a variable that was never declared",
        "Every variable is declared with its shape before the statements (rule ok-stmt).",
        "var x : [2]\ny = x + x\n", "var x : [2]\nvar y : [2]\ny = x + x\n"),
    Explanation("undeclared", "a use of a variable that was never declared",
        "The right side names a variable that has no declaration (rule t-var).",
        "var x : [2]\nx = x + y\n", "var x : [2]\nvar y : [2]\nx = x + y\n"),
    Explanation("assign-shape", "the right side's shape differs from the assigned variable's",
        "An assignment keeps the variable's declared type (rule ok-stmt): there is no broadcasting and no reshaping. "
        "The message shows both shapes.",
        "var x : [2]\nx = x # x\n", "var x : [2]\nvar y : [2 2]\ny = x # x\n"),
    Explanation("shape", "operands whose shapes do not fit the operator",
        "Elementwise + - * / need operands of one shape (t-elem); "
        "a contraction pairs dimensions of equal extent (t-contr); a scalar factor must have shape [] (t-smul).",
        "var a : [2]\nvar b : [3]\na = a + b\n", "var a : [2]\nvar b : [2]\na = a + b\n"),
    Explanation("dim-range", "a dimension number outside the operand's rank",
        "Dimensions are numbered from 1 in .tl and TeIL (from 0 in CFDlang); "
        "a contraction or transposition names two different dimensions that exist (t-contr, t-trans).",
        "var A : [3 3]\nvar s : []\ns = A . [0 1]\n", "var A : [3 3]\nvar s : []\ns = A . [1 2]\n"),
    Explanation("uninit", "a variable is read before anything was assigned to it",
        "In a program with qualifiers, temporaries and `out` variables start undefined; "
        "assign them before reading them, and assign every `out` (000 section 5).",
        "in var a : [2]\nout var b : [2]\nvar t : [2]\nb = a + t\n",
        "in var a : [2]\nout var b : [2]\nvar t : [2]\nt = a * a\nb = a + t\n"),
    Explanation("read-only", "an assignment to an `in` variable",
        "`in` variables are read-only (rule d-in-var); "
        "declare it `inout` to update it in place, or assign to another variable.",
        "in var a : [2]\nout var b : [2]\na = a + a\nb = a\n",
        "inout var a : [2]\nout var b : [2]\na = a + a\nb = a\n"),
    Explanation("continuity", "(Diderot) a derivative of a field that is not differentiable",
                "A field#k (its kernel's continuity) can be differentiated k times; reconstruct with a "
                "smoother kernel (ctmr, bspln3, c4hexic).", _D % ("0", "tent"), _D % ("1", "ctmr"), "python"),
    Explanation("index-extent", "one index variable ranges over dimensions of different extents",
        "In index form an index such as i takes one extent everywhere it is used: "
        "i over A's 2 rows cannot also range over C's 3 rows.",
        "var A : [2 3]\nvar C : [3 2]\nC[i,j] = A[i,j]\n", "var A : [2 3]\nvar C : [3 2]\nC[i,j] = A[j,i]\n"),
    Explanation("free-index", "an index on the right side that is neither on the left nor summed",
        "Every index of the right side is an index of the target or bound by a reduction such as sum(j); "
        "there are no implicit sums (unlike einsum).",
        "var A : [2 3]\nvar v : [2]\nv[i] = A[i,j]\n", "var A : [2 3]\nvar v : [2]\nv[i] = sum(j) A[i,j]\n"),
    Explanation("repeated-index", "an index written twice where it must be unique",
        "An index names each target dimension once "
        "(a diagonal is read with a repeated index on the right, A[i,i], never written on the left).",
        "var A : [2 2]\nvar C : [2 2]\nC[i,i] = A[i,i]\n", "var A : [2 2]\nvar d : [2]\nd[i] = A[i,i]\n"),
    Explanation("too-large", "a size, a number or a nesting beyond what can run",
        "Declarations of 2^62 elements or more, integers of more than 100 digits, more than 64 dimensions, "
        "expressions nested too deeply, and runs whose tensors exceed the memory budget "
        "($TENSORLANG_MAX_BYTES, default half the physical memory) are refused before anything is allocated. "
        "The message names the back end that would have run it.",
        "var x : [4294967296 4294967296]\nx = x\n", "var x : [4096 4096]\nx = x\n"),
    Explanation("input", "a bad call or a bad input file",
        "At run time: a missing, unknown or misshapen input, "
        "an input given positionally (kernels take inputs by name), a bad out= buffer, "
        "a file that cannot be read or written, a --param that is not a positive integer.",
        "import numpy as np, tensorlang as tl\n"
        "k = tl.compile('in var A : [2]\\nout var B : [2]\\nB = A + A\\n')\n"
        "k(A=np.ones(3))\n",
        "import numpy as np, tensorlang as tl\n"
        "k = tl.compile('in var A : [2]\\nout var B : [2]\\nB = A + A\\n')\n"
        "k(A=np.ones(2))\n", "python"),
    Explanation("backend", "a back end, stage or option this version does not provide",
        "The back ends are c, numpy and interp (auto picks c where a C compiler works); "
        "`tensorlang compile --help` lists the stages.",
        "import tensorlang as tl\ntl.compile('var x : [2]\\nx = x + x\\n', backend='fortran')\n",
        "import tensorlang as tl\ntl.compile('var x : [2]\\nx = x + x\\n', backend='numpy')\n", "python"),
    Explanation("structure", "a structure annotation that does not fit, or a broken promise",
        "A structure annotation (symmetric, diagonal, upper, lower, ...) must fit its declaration's shape "
        "(symmetric needs equal extents); "
        "at run time, with --check-structure, an input that breaks the structure it promises is refused.",
        "var A : [2 3] symmetric\nvar B : [2 3]\nB = A\n", "var A : [3 3] symmetric\nvar B : [3 3]\nB = A\n"),
    Explanation("internal", "a bug in tensorlang",
        "Nothing a program can do should produce this. The command line prints one line and "
        "exits 3; run again with TENSORLANG_DEBUG=1 for the traceback and report it."),
)

#: code -> its explanation, for every code of errors.CODES
EXPLANATIONS: dict[str, Explanation] = {e.code: e for e in _ENTRIES}
assert set(EXPLANATIONS) == set(CODES), "every error code needs an explanation"


def render(code: str) -> str:
    """The text ``tensorlang explain CODE`` prints."""
    entry = EXPLANATIONS[code]
    lines = [f"error[{entry.code}]: {entry.summary}", "", entry.detail]
    what = "program" if entry.kind == "program" else "Python"
    for text, head in ((entry.example, f"Example ({what} that fails with error[{code}]):"), (entry.fix, "Fixed:")):
        lines += ["", head, "", *("    " + line for line in text.rstrip("\n").split("\n"))] if text else []
    return "\n".join(lines) + "\n"
