"""One-line hints for a line written in another notation, numpy or einsum (docs/errors.md, "syntax"),
read from the line where the parser stops (not lark's state), so only for forms unambiguous in text."""

from __future__ import annotations

import re
from collections import Counter

_EINSUM = re.compile(r"""(?:(\w+)\s*=\s*)?(?:\w+\s*\.\s*)*einsum\s*\(\s*(['"])([^'"]*)\2\s*((?:,\s*\w+\s*)*)\)""")
_CALL = re.compile(r"""(?:(\w+)\s*=\s*)?\b(np|numpy|jnp|jax\.numpy|torch|tf|scipy)\s*\.\s*(\w+)\s*\(([^)]*)\)?""")
_BARE_CALL = re.compile(r"""(?:(\w+)\s*=\s*)?\b(dot|matmul|tensordot|transpose|trace|outer|einsum_path)\s*\(([^)]*)\)?""")
_MATMUL = re.compile(r"""(?:(\w+)\s*=\s*)?(\w+)\s*@\s*(\w+)""")
_DOT_T = re.compile(r"""(?:(\w+)\s*=\s*)?(\w+)\s*\.\s*T\b""")
_SHAPE_COMMAS = re.compile(r""":\s*\[\s*(\d+(?:\s*,\s*\d+)+)\s*\]""")
_SHAPE_TUPLE = re.compile(r""":\s*\(\s*(\d+(?:\s*,\s*\d*)*)\s*\)""")
_PAIR_COMMAS = re.compile(r"""[.^]\s*\[\s*\[?\s*(\d+)\s*,\s*(\d+)\s*\]""")
_CFDLANG = re.compile(r"""^\s*(?:var\s+(?:input|output)\s+[A-Za-z_]|(?:input|output)\s+var\b|type\s+\w+\s*:)""")
_COMPOUND = re.compile(r"""^\s*(\w+(?:\s*\[[^\]]*\])?)\s*([-+*/])=""")
_SPLIT_INDICES = re.compile(r"""\b(\w+)\s*\[\s*(\w+)\s*\]\s*\[\s*(\w+)\s*\]""")
_JUXTAPOSED = re.compile(r"""=.*?(?<![\w.])(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*([A-Za-z_]\w*|\()""")
_HASH_COMMENT = re.compile(r"""#\s*[A-Za-z_]\w*[ \t]+[A-Za-z_]""")  # '# add them': words no product has
_INDEXED_RIGHT = re.compile(r"""^\s*(\w+)\s*=[^\[]*?\b[A-Za-z_]\w*\s*\[""")  # B = A[1]: no target indices
_BARE_SUM = re.compile(r"""(?:(\w+)\s*=\s*)?\bsum\s*\(\s*([A-Za-z_]\w*)\s*(?:,[^)]*)?\)\s*$""")
#: characters pasted from typeset text, each with what tensorlang writes for it
_LOOKALIKES = {"\u2212": "write '-'", "\u2013": "write '-'", "\u00d7": "write '*'", "\u00b7": "write '*'",
               "\u22c5": "write '*'", "\u2297": "write '#'", "\u00a0": "write a plain space", "\u200b": "delete it",
               "\ufeff": "delete it", "\uff0b": "write '+'", "\uff1d": "write '='", "\u03a3": "write sum(k)",
               "\u2211": "write sum(k)"}
_PYTHON = re.compile(r"""^\s*(import\s+\w|from\s+\w+\s+import\b|def\s+\w+\s*\(|for\s+\w+\s+in\b|return\b|print\s*\(|class\s+\w+)""")

#: The most characters of a line the hint reads: its patterns backtrack, at a cost up to
#: the square of their text (the parser hands over at most ``lark_support.HINT_WINDOW``
#: characters either side of where it stopped, so this is only a bound for other callers).
LONGEST = 1000

_MATRIX_PRODUCT = "{c}[i,j] = sum(k) {a}[i,k] * {b}[k,j]  (or {c} = {a} # {b} . [2 3])"


def hint(line: str) -> str | None:
    """The hint for the source line the parser stopped on, or None if it holds no
    foreign form this module knows."""
    line = line[:LONGEST].split("//", 1)[0]  # a comment may say anything
    m = _EINSUM.search(line)
    if m:
        return _einsum_hint(m[1] or "C", m[3], [o.strip() for o in m[4].split(",") if o.strip()])
    m = _CALL.search(line)
    if m:
        return _call_hint(m[1] or "C", f"{m[2]}.{m[3]}", m[3], m[4] or "")
    m = _BARE_CALL.search(line)
    if m:
        return _call_hint(m[1] or "C", m[2], m[2], m[3] or "")
    m = _MATMUL.search(line)
    if m:
        return "tensorlang has no '@'; a matrix product is " + _MATRIX_PRODUCT.format(c=m[1] or "C", a=m[2], b=m[3])
    m = _DOT_T.search(line)
    if m:
        target = m[1] or "B"
        return f"tensorlang has no '.T'; a transposition is {target} = {m[2]} ^ [1 2]  (or {target}[j,i] = {m[2]}[i,j])"
    if "**" in line:
        return "tensorlang has no '**'; write a square as x * x, or use a function such as exp, log, sqrt"
    m = _SHAPE_COMMAS.search(line) or _SHAPE_TUPLE.search(line)
    if m:
        extents = " ".join(x.strip() for x in m[1].split(",") if x.strip())
        return f"a shape lists its extents without commas, in brackets: [{extents}]"
    m = _PAIR_COMMAS.search(line)
    if m:
        return f"a dimension pair is written without a comma: [{m[1]} {m[2]}]"
    if line.lstrip().startswith("#") or "/*" in line or _HASH_COMMENT.search(line):
        return "comments start with // and run to the end of the line ('#' is the outer product)"
    if _CFDLANG.search(line):
        return ("this is CFDlang's dialect; the model language declares 'in var A : [3 3]' (out, inout): "
                "name the file .cfd (or --lang cfd, lang='cfd') to read it as CFDlang")
    m = _COMPOUND.search(line)
    if m:
        return f"tensorlang has no '{m[2]}='; write {m[1]} = {m[1]} {m[2]} ..."
    m = _SPLIT_INDICES.search(line)
    if m:
        return f"indices go in one pair of brackets, separated by commas: {m[1]}[{m[2]},{m[3]}]"
    m = _INDEXED_RIGHT.search(line)
    if m:
        return (f"indices on the right need them on the left too (index form): {m[1]}[] = A[1] reads an element, "
                f"{m[1]}[j] = A[1,j] a row (there are no ':' slices)")
    m = _BARE_SUM.search(line)
    if m:
        return f"a sum is written with its index: {m[1] or 's'} = sum(i) {m[2]}[i]  (sum(i,j) {m[2]}[i,j] for a matrix)"
    pasted = next((c for c in line if c in _LOOKALIKES), None)
    if pasted is not None:
        return f"U+{ord(pasted):04X} is a character of typeset text: {_LOOKALIKES[pasted]}"
    m = _JUXTAPOSED.search(line)
    if m:
        return f"a product is written with '*': {m[1]} * {m[2]}{'...)' if m[2] == '(' else ''}"
    if _PYTHON.search(line):
        return ("this looks like Python; a tensorlang program is declarations (var A : [2 3]) "
                "followed by statements (C[i,j] = sum(k) A[i,k] * B[k,j])")
    if "'" in line or '"' in line:
        return "tensorlang has no strings; an einsum subscript string is written as an index-form statement " \
               "such as C[i,k] = sum(j) A[i,j] * B[j,k]"
    return None


def _call_hint(target: str, shown: str, function: str, args: str) -> str:
    operands = [a.strip() for a in args.split(",") if re.fullmatch(r"\s*\w+\s*", a)]
    a, b = (operands + ["A", "B"])[:2] if len(operands) < 2 else operands[:2]
    if function in ("dot", "matmul", "tensordot", "inner", "mm", "bmm"):
        return f"tensorlang has no {shown}(...); a matrix product is " + _MATRIX_PRODUCT.format(c=target, a=a, b=b)
    if function in ("transpose", "swapaxes", "moveaxis", "permute"):
        return f"tensorlang has no {shown}(...); a transposition is {target} = {a} ^ [1 2]  (or {target}[j,i] = {a}[i,j])"
    if function == "trace":
        return f"tensorlang has no {shown}(...); a trace is {target} = sum(i) {a}[i,i]"
    if function == "outer":
        return f"tensorlang has no {shown}(...); an outer product is {target} = {a} # {b}  (or {target}[i,j] = {a}[i] * {b}[j])"
    if function == "sum":
        return f"tensorlang has no {shown}(...); a sum is written with its index: {target} = sum(i) {a}[i]"
    if function in ("exp", "log", "sqrt", "sin", "cos", "tanh", "abs"):
        return f"tensorlang has no {shown}(...); its functions are called without a prefix: {function}({a})"
    return (f"tensorlang has no numpy calls such as {shown}(...); write the computation as a statement, "
            "e.g. C[i,j] = sum(k) A[i,k] * B[k,j]")


def _einsum_hint(target: str, spec: str, operands: list[str]) -> str:
    """``C = einsum('ij,jk->ik', A, B)`` as ``C[i,k] = sum(j) A[i,j] * B[j,k]``."""
    spec = spec.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    generic = "tensorlang has no einsum strings; write an index-form statement such as C[i,k] = sum(j) A[i,j] * B[j,k]"
    if "." in spec or not all(t.isalpha() or t == "" for t in terms) or not (output.isalpha() or output == ""):
        return generic
    if len(operands) != len(terms):
        operands = [chr(ord("A") + n) for n in range(len(terms))]
    counts = Counter("".join(terms))
    if not arrow:  # numpy's implicit output: the letters used once, in alphabetical order
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    summed = sorted(set("".join(terms)) - set(output))

    def access(name: str, letters: str) -> str:
        return f"{name}[{','.join(letters)}]" if letters else name

    right = " * ".join(access(name, letters) for name, letters in zip(operands, terms))
    sums = f"sum({','.join(summed)}) " if summed else ""
    left = f"{target}[{','.join(output)}]"
    return f"tensorlang has no einsum strings; this one is {left} = {sums}{right}"
