"""A hostile corpus of the Diderot surface, by class (issue 41): program texts, command
lines and input files of ``tensorlang run PROG.diderot ...``, each run in a forked child
of one Python (so that a case costs its own work, not an interpreter start) with a time
limit, and judged by what a user may see:

* ``ok`` (exit 0) or ``refused`` (exit 1 with one ``error[CODE]`` other than internal,
  exit 2 from argument parsing) are fine;
* ``internal`` (exit 3 or ``error[internal]``), ``traceback`` (a Python traceback on
  either stream), ``hang`` (past the limit), ``crash`` (killed by a signal) are bugs.

``python tests/hostile/diderot_corpus.py [CLASS ...]`` runs the corpus and prints a table;
``tests/hostile/test_diderot_hostile.py`` runs it under pytest.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import sys
import tempfile
import time
from dataclasses import dataclass, field

#: A case that uses more CPU seconds than this is a hang (the acceptance bar is 2 s for
#: 1 KB on an idle machine; CPU time, not wall time, so that a loaded machine does not
#: turn slow cases into hangs; the C compiler's time is counted too).
LIMIT_SECONDS = float(os.environ.get("TENSORLANG_HOSTILE_LIMIT", "5"))
#: ... and a case that blocks (waits on a FIFO, sleeps) longer than this wall time.
WALL_SECONDS = float(os.environ.get("TENSORLANG_HOSTILE_WALL", "120"))

HEAD = "#version 2.0\n"


def prog(strand: str = "S", var: str = "x", glob: str = "g", fn: str = "f", param: str = "i",
         inp: str = "n", out_type: str = "real", body: str = "x += 1.0; if (x > 3.0) stabilize;",
         init: str = "0.0", extra: str = "", create: str | None = None) -> str:
    """A small valid program whose names and pieces can be replaced one at a time."""
    create = create or f"initially [ {strand}({param}) | {param} in 0..{inp} ];"
    return (f"{HEAD}input int {inp} = 2;\nreal {glob} = 1.0;\n"
            f"function real {fn}(real a) = a * {glob};\n{extra}"
            f"strand {strand} (int {param}) {{\n  output {out_type} {var} = {init};\n"
            f"  update {{ {body} }}\n}}\n{create}\n")


VALID = prog()


@dataclass
class Case:
    cls: str
    name: str
    src: str | bytes | None = VALID      # the program text (None: the path is made by `files`)
    argv: list[str] = field(default_factory=list)
    files: dict[str, object] = field(default_factory=dict)   # name -> bytes | "fifo" | "dir" | "ro-dir"
    env: dict[str, str] = field(default_factory=dict)
    expect: str | None = None             # "ok", or an error code the case must give
    #: the program asks for more work than the limit allows (docs/security.md §2b, "not
    #: bounded, by design"): running past the limit is its verdict "work", not a hang
    work: bool = False

    @property
    def id(self) -> str:
        return f"{self.cls}:{self.name}"


# ------------------------------------------------------------------ NRRD helpers
def nrrd(header: str, data: bytes = b"") -> bytes:
    return header.rstrip("\n").encode() + b"\n\n" + data


def nrrd2d(sx: int = 4, sy: int = 4, typ: str = "double", extra: str = "", data: bytes | None = None) -> bytes:
    import numpy as np
    if data is None:
        data = np.arange(sx * sy, dtype="<f8").tobytes() if typ == "double" else b""
    return nrrd(f"NRRD0004\ntype: {typ}\ndimension: 2\nsizes: {sx} {sy}\nendian: little\nencoding: raw{extra}\n", data)


IMG_PROG = (HEAD + "input image(2)[] img;\nfield#1(2)[] F = img ⊛ ctmr;\n"
            "strand S (int i) {\n  output real v = 0.0;\n  update { vec2 p = [1.5 + 0.1*real(i), 1.5];"
            " if (inside(p, F)) v = F(p); stabilize; }\n}\ninitially [ S(i) | i in 0..2 ];\n")
VIMG_PROG = IMG_PROG.replace("image(2)[]", "image(2)[2]").replace("field#1(2)[]", "field#1(2)[2]") \
    .replace("output real v = 0.0", "output vec2 v = [0.0, 0.0]")


C_NAMES = ["main", "NULL", "errno", "stdin", "stdout", "printf", "malloc", "free", "exit", "abort",
           "memcpy", "sqrt", "sin", "pow", "fabs", "isnan", "INFINITY", "NAN", "EOF", "assert",
           "double", "float", "char", "auto", "register", "volatile", "struct", "union", "switch",
           "case", "default", "goto", "signed", "unsigned", "long", "short", "typedef", "extern",
           "static", "sizeof", "inline", "restrict", "_Bool", "__LINE__", "__FILE__", "M_PI",
           "tl_state", "tl_main", "tl_run", "tl_strand", "tl_n", "tl_g", "tl_i", "PyObject",
           "Py_None", "Py_RETURN_NONE", "PyInit_x", "omp_get_thread_num", "pthread_t", "size_t",
           "int64_t", "uint8_t", "NDEBUG", "_", "__", "s", "g", "o", "l", "i", "n", "x", "S",
           "world", "step", "state", "self", "argc", "argv", "out", "nout", "strands", "alive",
           "st", "gl", "tmp", "t0", "result", "True", "None", "lambda", "def", "class", "import"]
POSITIONS = ["strand", "var", "glob", "fn", "param", "inp"]


def _classes() -> dict[str, list[Case]]:
    C: dict[str, list[Case]] = {}

    def add(case: Case) -> None:
        C.setdefault(case.cls, []).append(case)

    # 1. deep nesting
    for depth in (200, 1000, 1900, 10_000):
        add(Case("deep", f"parens-{depth}", prog(body="x = " + "(" * depth + "1.0" + ")" * depth + "; stabilize;")))
        add(Case("deep", f"blocks-{depth}", prog(body="{" * depth + "stabilize;" + "}" * depth)))
        add(Case("deep", f"ifs-{depth}", prog(body="if (x > 0.0) " * depth + "stabilize; stabilize;")))
        add(Case("deep", f"neg-{depth}", prog(body="x = " + "-" * depth + "1.0; stabilize;")))
        add(Case("deep", f"plus-{depth}", prog(body="x = " + " + ".join(["1.0"] * depth) + "; stabilize;")))
        add(Case("deep", f"cond-{depth}", prog(body="x = " + "1.0 if x > 0.0 else " * depth + "2.0; stabilize;")))
        add(Case("deep", f"tensor-{depth}", prog(body="x = " + "[" * depth + "1.0" + "]" * depth + "; stabilize;")))
        add(Case("deep", f"power-{depth}", prog(body="x = " + "^".join(["1.0"] * depth) + "; stabilize;")))
        add(Case("deep", f"calls-{depth}", prog(body="x = " + "f(" * depth + "1.0" + ")" * depth + "; stabilize;")))
    add(Case("deep", "parens-100000", prog(body="x = " + "(" * 100_000 + "1.0" + ")" * 100_000 + "; stabilize;")))
    add(Case("deep", "fn-chain-2000", HEAD + "".join(
        f"function real f{k}(real a) = {'a' if k == 0 else f'f{k-1}(a) + 1.0'};\n" for k in range(2000))
        + "strand S (int i) { output real x = f1999(1.0); update { stabilize; } }\ninitially [ S(i) | i in 0..0 ];\n"))
    add(Case("deep", "fn-doubling-40", HEAD + "".join(
        f"function real f{k}(real a) = {'a' if k == 0 else f'f{k-1}(a) + f{k-1}(a)'};\n" for k in range(40))
        + "strand S (int i) { output real x = f39(1.0); update { stabilize; } }\ninitially [ S(i) | i in 0..0 ];\n"))
    add(Case("deep", "global-doubling-40", HEAD + "real g0 = 1.0;\n" + "".join(
        f"real g{k} = g{k-1} + g{k-1};\n" for k in range(1, 40))
        + "strand S (int i) { output real x = g39; update { stabilize; } }\ninitially [ S(i) | i in 0..0 ];\n"))
    add(Case("deep", "local-doubling-40", prog(body="real e = 1.0; " + "e = e + e; " * 40 + "x = e; stabilize;")))
    add(Case("deep", "field-doubling-30", IMG_PROG.replace("field#1(2)[] F = img ⊛ ctmr;\n", "field#1(2)[] F0 = img ⊛ ctmr;\n" + "".join(
        f"field#1(2)[] F{k} = F{k-1} + F{k-1};\n" for k in range(1, 30)) + "field#1(2)[] F = F29;\n"), ["-img", "i.nrrd"],
        files={"i.nrrd": nrrd2d()}))
    add(Case("deep", "statements-10000", prog(body="x += 1.0; " * 10_000 + "stabilize;")))
    add(Case("deep", "globals-10000", HEAD + "".join(f"real g{k} = {k}.0;\n" for k in range(10_000))
             + "strand S (int i) { output real x = g9999; update { stabilize; } }\ninitially [ S(i) | i in 0..0 ];\n"))
    add(Case("deep", "state-2000", HEAD + "strand S (int i) {\n" + "".join(f"real s{k} = {k}.0;\n" for k in range(2000))
             + "output real x = 0.0; update { " + "".join(f"s{k} += 1.0; " for k in range(2000)) + "stabilize; } }\n"
             "initially [ S(i) | i in 0..0 ];\n"))
    # 200 deep, two iterations in all: the nest's depth through every stage and the C compiler, run to
    # its end (its 2^200 iterations ran to the CPU limit, 5 s a run; foreach-30-wide is the endless nest)
    add(Case("deep", "foreach-200", prog(body="".join(f"foreach (int k{d} in 0..{1 if d == 0 else 0}) " for d in range(200))
                                         + "x += 1.0; stabilize;"), expect="ok"))
    add(Case("deep", "foreach-30-wide", prog(body="".join(f"foreach (int k{d} in 0..3) " for d in range(30)) + "x += 1.0; stabilize;"),
             work=True))  # 4^30 iterations

    # 2. long identifiers
    for n in (1000, 100_000, 1_000_000):
        name = "a" * n
        for pos in POSITIONS:
            add(Case("long-names", f"{pos}-{n}", prog(**{pos: name}), expect=None))
    add(Case("long-names", "string-1e6", prog(body='print("' + "z" * 1_000_000 + '"); stabilize;')))
    add(Case("long-names", "comment-1e6", "// " + "c" * 1_000_000 + "\n" + VALID))
    add(Case("long-names", "int-literal-1e5", prog(body="int k = " + "9" * 100_000 + "; stabilize;")))
    add(Case("long-names", "real-literal-1e5", prog(body="x = 1." + "9" * 100_000 + "; stabilize;")))
    add(Case("long-names", "exp-literal-huge", prog(body="x = 1.0e99999999999999999999; stabilize;")))
    add(Case("long-names", "exp-literal-tiny", prog(body="x = 1.0e-99999999999999999999; stabilize;")))

    # 3. names from C, CPython and our own generated code
    for k, name in enumerate(C_NAMES):
        every = name in ("main", "NULL", "errno", "tl_state", "Py_None", "double", "int64_t", "l", "s", "g")
        for pos in POSITIONS if every else [POSITIONS[k % len(POSITIONS)]]:
            add(Case("c-names", f"{pos}={name}", prog(**{pos: name})))

    # 4. unicode and odd text
    for name, text in [("greek", prog(var="αβγ", strand="σ")), ("cjk", prog(var="变量")),
                       ("combining", prog(var="e\u0301")), ("zero-width", prog(var="a\u200bb")),
                       ("rtl", prog(var="\u202ex")), ("nul", VALID.replace("x += 1.0", "x += 1.0\0")),
                       ("bom", "\ufeff" + VALID), ("crlf", VALID.replace("\n", "\r\n")),
                       ("cr-only", VALID.replace("\n", "\r")), ("latin1", VALID.encode() + b"\xff\xfe"),
                       ("surrogate-bytes", b"#version 2.0\n\xed\xa0\x80"), ("empty", ""), ("only-version", HEAD),
                       ("version-99", VALID.replace("2.0", "99.0")), ("version-huge", VALID.replace("2.0", "9" * 5000)),
                       ("version-1", VALID.replace("2.0", "1.0")), ("no-version", VALID[len(HEAD):]),
                       ("prime-names", prog(var="x'", glob="g''")),
                       ("prime-names-all", HEAD + "input int k' = 2;\nreal g'' = 1.0;\nfunction real f'(real a') = a' * g'';\n"
                        "strand S' (int i') {\n  output real x'' = 0.0;\n  update { real t' = f'(real(i')); "
                        "foreach (int j' in 0..i') { t' += real(j'); }\n    x'' += t' + 1.0; if (x'' > 3.0) stabilize; }\n}\n"
                        "initially [ S'(i') | i' in 0..k' ];\n"),
                       ("tab-vt-ff", VALID.replace(" ", "\t\v\f")),
                       ("string-escapes", prog(body='print("\\u0000\\x00\\n\\q\\\\"); stabilize;')),
                       ("string-nul", prog(body='print("a\0b"); stabilize;')),
                       ("percent-s", prog(body='print("%s%n%d%%\\n"); stabilize;')),
                       ("unterminated-string", prog(body='print("abc); stabilize;')),
                       ("unterminated-comment", VALID + "/* never ends"),
                       ("nested-comment", "/* /* */ */\n" + VALID),
                       ("binary", bytes(range(256)) * 4)]:
        add(Case("text", name, text))

    # 5. absurd sizes and types
    for name, decl in [("tensor-1e8x1e8", "tensor[100000000,100000000] t;"), ("tensor-0", "tensor[0] t;"),
                       ("tensor-1e18", "tensor[1000000000000000000] t;"), ("tensor-2^64", f"tensor[{2**64}] t;"),
                       ("tensor-rank-70", "tensor[" + ",".join(["2"] * 70) + "] t;"),
                       ("tensor-rank-20", "tensor[" + ",".join(["2"] * 20) + "] t;"),
                       ("tensor-3^18", "tensor[" + ",".join(["3"] * 18) + "] t;"),
                       ("seq-1e9", "real{1000000000} t;"), ("seq-0", "real{0} t;"), ("seq-2^70", f"real{{{2**70}}} t;"),
                       ("identity-1e9", "tensor[2,2] t = identity[1000000000];"),
                       ("zeros-1e6", "tensor[1000000] t = zeros[1000000];"),
                       ("zeros-1e12", "tensor[1000000,1000000] t = zeros[1000000,1000000];"),
                       ("image-dim-0", "image(0)[] t;"), ("image-dim-99", "image(99)[] t;"),
                       ("field-dim-1e9", "field#2(1000000000)[] t;"), ("kernel-1e9", "kernel#1000000000 t;"),
                       ("field-cont-1e9", "field#1000000000(2)[] t;"),
                       ("seq-of-seq", "real{3}{3}{3}{3}{3}{3}{3}{3}{3}{3}{3}{3}{3}{3}{3} t;"),
                       ("const-size", "tensor[n] t;")]:
        add(Case("sizes", name, prog(extra=decl + "\n")))
    add(Case("sizes", "tensor-output-1e4", prog(out_type="tensor[10000]", init="zeros[10000]", body="stabilize;")))
    add(Case("sizes", "tensor-output-1e8", prog(out_type="tensor[10000,10000]", init="zeros[10000,10000]", body="stabilize;")))
    add(Case("sizes", "const-int-huge-tensor", HEAD + "const int N = 100000000;\nstrand S (int i) { output tensor[N,N] x = zeros[N,N]; update { stabilize; } }\ninitially [ S(i) | i in 0..0 ];\n"))
    add(Case("sizes", "const-int-neg", HEAD + "const int N = -5;\nstrand S (int i) { output tensor[N] x = zeros[N]; update { stabilize; } }\ninitially [ S(i) | i in 0..0 ];\n"))
    add(Case("sizes", "index-huge", prog(body="vec3 v = [1.0,2.0,3.0]; x = v[1000000000000]; stabilize;")))
    add(Case("sizes", "index-negative", prog(body="vec3 v = [1.0,2.0,3.0]; x = v[-1]; stabilize;")))
    add(Case("sizes", "index-dynamic-oob", prog(body="vec3 v = [1.0,2.0,3.0]; x = v[i + 100]; stabilize;")))
    add(Case("sizes", "seq-index-oob", prog(body="real{3} s = {1.0,2.0,3.0}; x = s{i + 100}; stabilize;")))
    add(Case("sizes", "seq-index-neg", prog(body="real{3} s = {1.0,2.0,3.0}; x = s{i - 100}; stabilize;")))
    add(Case("sizes", "seq-literal-2000", prog(body="real{2000} s = {" + ",".join(["1.0"] * 2000) + "}; x = s{0}; stabilize;")))
    add(Case("sizes", "tensor-literal-2000", prog(body="tensor[2000] s = [" + ",".join(["1.0"] * 2000) + "]; x = s[0]; stabilize;")))
    add(Case("sizes", "comprehension-1e9", prog(body="real{} s = { real(k) | k in 0..1000000000 }; stabilize;")))
    # (in the interpreter: a local sequence forced it once, but those run in C now; in C it is "work", docs/security.md)
    add(Case("sizes", "seq-literal-1e6", prog(body="real{} s = {" + ",".join(["1.0"] * 1_000_000) + "}; x = s{0}; stabilize;"),
             expect="too-large"))
    add(Case("sizes", "source-10MB", prog(body="x += 1.0; " * 1_000_000 + "stabilize;"), expect="too-large"))
    add(Case("sizes", "foreach-1e12-interp", prog(body="foreach (int k in 0..1000000000000) x += 1.0; stabilize;"),
             env={"TENSORLANG_STRAND_BACKEND": "interp"}, expect="too-large"))

    # 6. strand creation: huge grids and collections, new storms
    for name, create in [("grid-1e18", "initially [ S(i) | i in 0..1000000000000000000 ];"),
                         ("grid-2^63", f"initially [ S(i) | i in 0..{2**63} ];"),
                         ("grid-2^64", f"initially [ S(i) | i in 0..{2**64} ];"),
                         ("grid-1e100", "initially [ S(i) | i in 0.." + "1" + "0" * 100 + " ];"),
                         ("grid-pow", "initially [ S(i) | i in 0..10^18 ];"),
                         ("grid-neg", "initially [ S(i) | i in 0..-5 ];"),
                         ("grid-empty", "initially [ S(i) | i in 5..0 ];"),
                         ("grid-neg-huge", f"initially [ S(i) | i in -{2**63}..{2**63 - 1} ];"),
                         ("grid-1e9", "initially [ S(i) | i in 0..1000000000 ];"),
                         ("grid-1e7", "initially [ S(i) | i in 0..9999999 ];"),
                         ("coll-1e18", "initially { S(i) | i in 0..1000000000000000000 };"),
                         ("coll-1e9", "initially { S(i) | i in 0..1000000000 };"),
                         ("grid-real-bounds", "initially [ S(i) | i in 0.0..3.5 ];"),
                         ("grid-bool-bounds", "initially [ S(i) | i in true..false ];"),
                         ("grid-input-bound", "initially [ S(i) | i in 0..n ];")]:
        add(Case("strands", name, prog(create=create)))
    add(Case("strands", "grid-2d-overflow", prog(param="i, int j", create=f"initially [ S(i, j) | i in 0..{2**40}, j in 0..{2**40} ];")))
    add(Case("strands", "grid-10d", prog(param="i, int j0, int j1, int j2, int j3, int j4, int j5, int j6, int j7, int j8",
                                         create="initially [ S(i, j0, j1, j2, j3, j4, j5, j6, j7, j8) | i in 0..9, j0 in 0..9, j1 in 0..9, j2 in 0..9, j3 in 0..9, j4 in 0..9, j5 in 0..9, j6 in 0..9, j7 in 0..9, j8 in 0..9 ];")))
    add(Case("strands", "grid-input-n-1e18", prog(), ["-n", "1"]))
    add(Case("strands", "input-bound-1e18", prog(), ["--n", "1000000000000000000"]))
    add(Case("strands", "input-bound-neg", prog(), ["--n", "-1000000000000000000"]))
    storm = HEAD + "strand S (int i) {\n  output real x = 0.0;\n  update { new S(i); new S(i); x += 1.0; }\n}\ninitially { S(i) | i in 0..0 };\n"
    # a storm of new strands ends at the memory budget (error[too-large]), here 64 MB
    small = {"TENSORLANG_MAX_BYTES": "64000000"}
    add(Case("strands", "new-storm-2x", storm, env=small, expect="too-large"))
    add(Case("strands", "new-storm-2x-l30", storm, ["-l", "30"], env=small, expect="too-large"))
    add(Case("strands", "new-storm-2x-l70", storm, ["-l", "70"], env=small, expect="too-large"))
    add(Case("strands", "new-storm-100x", storm.replace("new S(i); new S(i);", "foreach (int k in 0..99) new S(i);"),
             env=small, expect="too-large"))
    add(Case("strands", "new-storm-grid", storm.replace("initially { S(i) | i in 0..0 }", "initially [ S(i) | i in 0..0 ]"),
             env=small))
    add(Case("strands", "new-storm-interp", storm.replace("x += 1.0;", "x += 1.0; real{} q = {};"), env=small,
             expect="too-large"))
    add(Case("strands", "new-in-loop-1e9", storm.replace("new S(i); new S(i);", "foreach (int k in 0..1000000000) new S(i);"),
             ["-l", "1"], env=small, work=True))  # 10^9 births in one super-step (the C executor checks after it)
    add(Case("strands", "die-all", prog(body="die;", create="initially { S(i) | i in 0..3 };")))
    add(Case("strands", "die-all-grid", prog(body="die;")))
    add(Case("strands", "never-stable-default-cap", HEAD + "strand S (int i) { output int n = 0; update { n += 1; } }\ninitially [ S(i) | i in 0..2 ];\n"))
    add(Case("strands", "never-stable-coll-default-cap", HEAD + "strand S (int i) { output int n = 0; update { n += 1; } }\ninitially { S(i) | i in 0..2 };\n"))
    add(Case("strands", "never-stable-1000", HEAD + "strand S (int i) { output int n = 0; update { n += 1; } }\ninitially [ S(i) | i in 0..999 ];\n"))
    add(Case("strands", "global-update-loop", HEAD + "int c = 0;\nstrand S (int i) { output int n = 0; update { n += c; } }\nupdate { c += 1; }\ninitially [ S(i) | i in 0..2 ];\n"))

    # 7. arithmetic hazards
    for name, body in [("idiv-zero", "int z = i - i; int k = 7 / z; x = real(k); stabilize;"),
                       ("imod-zero", "int z = i - i; int k = 7 % z; x = real(k); stabilize;"),
                       ("idiv-zero-const", "int k = 7 / 0; x = real(k); stabilize;"),
                       ("imod-zero-const", "int k = 7 % 0; x = real(k); stabilize;"),
                       ("imod-zero-assign", "int k = 7; k %= 0; x = real(k); stabilize;"),
                       ("idiv-zero-assign", "int k = 7; k /= (i - i); x = real(k); stabilize;"),
                       ("int-overflow-add", "int k = 9223372036854775807; k += 1 + i; x = real(k); stabilize;"),
                       ("int-overflow-mul", "int k = 3037000500; k = k * k * (i + 1); x = real(k); stabilize;"),
                       ("int-min-div-neg1", "int k = -9223372036854775807 - 1; k = k / (-1 - i + i); x = real(k); stabilize;"),
                       ("int-min-mod-neg1", "int k = -9223372036854775807 - 1; k = k % (-1 - i + i); x = real(k); stabilize;"),
                       ("int-literal-2^63", f"int k = {2**63}; x = real(k); stabilize;"),
                       ("int-literal-2^64", f"int k = {2**64}; x = real(k); stabilize;"),
                       ("int-neg-literal-2^63", f"int k = -{2**63}; x = real(k); stabilize;"),
                       ("int-pow-huge", "int k = 10; x = real(k ^ 100); stabilize;"),
                       ("int-pow-neg", "int k = 2; x = real(k ^ (-3)); stabilize;"),
                       ("int-pow-1e18", "int k = 2; x = real(k ^ 1000000000000000000); stabilize;"),
                       ("real-pow-1e18", "x = 1.0000001 ^ 1000000000000000000; stabilize;"),
                       ("real-div-zero", "x = 1.0 / (x - x); stabilize;"),
                       ("real-mod-zero", "x = fmod(1.0, 0.0); stabilize;"),
                       ("real-to-int-huge", "x = 1e300; int k = int(x); stabilize;"),
                       ("sqrt-neg", "x = sqrt(-1.0 - real(i)); stabilize;"),
                       ("log-zero", "x = log(0.0 * real(i)); stabilize;"),
                       ("inv-singular", "mat2 m = [[1.0,1.0],[1.0,1.0]]; mat2 q = inv(m); x = q[0,0]; stabilize;"),
                       ("evals-nan", "mat2 m = [[nan,1.0],[1.0,nan]]; vec2 e = evals(m); x = e[0]; stabilize;"),
                       ("evecs-inf", "mat3 m = identity[3] * ∞; tensor[3,3] e = evecs(m); x = e[0,0]; stabilize;"),
                       ("normalize-zero", "vec3 v = normalize([0.0,0.0,0.0]); x = v[0]; stabilize;"),
                       ("clamp-inverted", "x = clamp(5.0, 1.0, x); stabilize;"),
                       ("lerp-nan", "x = lerp(nan, ∞, -∞, 0.5); stabilize;"),
                       ("real-int-mix", "int k = 3; x = k; stabilize;"),
                       ("pi-inf", "x = π * ∞ - ∞; stabilize;")]:
        add(Case("arith", name, prog(body=body), expect="too-large" if name.startswith("int-literal-2^6") else None))

    # 8. functions: recursion and odd definitions
    for name, extra, body in [
            ("direct-recursion", "function real r(real a) = r(a);\n", "x = r(1.0); stabilize;"),
            ("direct-recursion-block", "function real r(real a) { return r(a - 1.0); }\n", "x = r(1.0); stabilize;"),
            ("guarded-recursion", "function real r(real a) = 1.0 if a < 0.0 else r(a - 1.0);\n", "x = r(10.0); stabilize;"),
            ("mutual-recursion", "function real p(real a) = q(a);\nfunction real q(real a) = p(a);\n", "x = p(1.0); stabilize;"),
            ("unused-recursion", "function real r(real a) = r(a);\n", "stabilize;"),
            ("no-return", "function real r(real a) { real b = a; }\n", "x = r(1.0); stabilize;"),
            ("return-in-loop", "function real r(real a) { foreach (int k in 0..3) { if (k == 2) return a; } return 0.0; }\n", "x = r(1.0); stabilize;"),
            ("redefine-fn", "function real f(real a) = a;\n", "stabilize;"),
            ("fn-shadows-basis", "function real sqrt(real a) = a;\n", "x = sqrt(4.0); stabilize;"),
            ("fn-shadows-strand", "function real S(real a) = a;\n", "stabilize;"),
            ("fn-100-params", "function real w(" + ", ".join(f"real p{k}" for k in range(100)) + ") = p99;\n",
             "x = w(" + ", ".join(["1.0"] * 100) + "); stabilize;"),
            ("fn-1000-params", "function real w(" + ", ".join(f"real p{k}" for k in range(1000)) + ") = p999;\n",
             "x = w(" + ", ".join(["1.0"] * 1000) + "); stabilize;"),
            ("fn-wrong-arity", "", "x = f(1.0, 2.0); stabilize;"),
            ("call-non-fn", "", "x = g(1.0); stabilize;"),
            ("stabilize-in-fn", "function real r(real a) { stabilize; return a; }\n", "x = r(1.0); stabilize;"),
            ("new-in-fn", "function real r(real a) { new S(1); return a; }\n", "x = r(1.0); stabilize;")]:
        add(Case("functions", name, prog(extra=extra, body=body)))

    # 9. program structure: duplicates, missing pieces, bad statements
    for name, text in [
            ("two-strands", VALID.replace("initially", "strand T (int i) { output real y = 0.0; update { stabilize; } }\ninitially")),
            ("no-strand", HEAD + "real g = 1.0;\ninitially [ S(i) | i in 0..2 ];\n"),
            ("no-initially", VALID.split("initially")[0]),
            ("two-initially", VALID + "initially [ S(i) | i in 0..2 ];\n"),
            ("no-output", prog().replace("output real", "real")),
            ("no-update", HEAD + "strand S (int i) { output real x = 0.0; }\ninitially [ S(i) | i in 0..2 ];\n"),
            ("dup-state", prog(extra="", body="stabilize;").replace("output real x = 0.0;", "output real x = 0.0; real x = 1.0;")),
            ("dup-input", prog(extra="input int n = 3;\n")),
            ("dup-global-input", prog(extra="real n = 3.0;\n")),
            ("dup-param", prog(param="i, int i", create="initially [ S(i, i) | i in 0..2 ];")),
            ("wrong-create-arity", prog(create="initially [ S(i, i) | i in 0..2 ];")),
            ("create-unknown-strand", prog(create="initially [ T(i) | i in 0..2 ];")),
            ("create-fn", prog(create="initially [ f(i) | i in 0..2 ];")),
            ("iter-shadow", prog(create="initially [ S(n) | n in 0..n ];")),
            ("iter-dup", prog(param="i, int j", create="initially [ S(i, i) | i in 0..2, i in 0..2 ];")),
            ("assign-input", prog(body="n = 3; stabilize;")),
            ("assign-param", prog(body="i = 3; stabilize;")),
            ("assign-global-in-strand", prog(body="g = 3.0; stabilize;")),
            ("output-string", prog(out_type="string", init='"a"', body="stabilize;")),
            ("output-image", prog(out_type="image(2)[]", init="image(\"x.nrrd\")", body="stabilize;")),
            ("output-field", prog(out_type="field#1(2)[]", init="0.0", body="stabilize;")),
            ("output-bool", prog(out_type="bool", init="true", body="stabilize;")),
            ("output-int-seq", prog(out_type="int{3}", init="{1,2,3}", body="stabilize;")),
            ("output-dyn-seq", prog(out_type="real{}", init="{}", body="x = x @ 1.0; if (length(x) > 3) stabilize;")),
            ("stabilize-outside", VALID.replace("input int n = 2;", "input int n = 2;\nupdate { stabilize; }")),
            ("die-in-global", VALID.replace("input int n = 2;", "input int n = 2;\nupdate { die; }")),
            ("new-in-global", VALID.replace("input int n = 2;", "input int n = 2;\nupdate { new S(1); }")),
            ("continue-outside-loop", prog(body="continue; stabilize;")),
            ("return-in-update", prog(body="return 1.0;")),
            ("print-nothing", prog(body="print(); stabilize;")),
            ("print-field", IMG_PROG.replace("stabilize;", "print(F); stabilize;")),
            ("print-2000-args", prog(body="print(" + ",".join(["x"] * 2000) + "); stabilize;")),
            ("print-every-step-huge", (prog(body='print("' + "p" * 10000 + '\\n");'), ["-l", "1000"])),
            ("type-as-name", prog(var="real")),
            ("keyword-as-name", prog(var="strand")),
            ("field-as-name", prog(var="field")),
            ("kernel-unknown", (IMG_PROG.replace("ctmr", "nosuchkernel"), ["-img", "i.nrrd"], {"i.nrrd": nrrd2d()})),
            ("kernel-as-var", prog(var="ctmr")),
            ("basis-as-name", prog(var="sqrt")),
            ("pi-as-name", prog(var="π")),
            ("only-comments", "// nothing\n/* more */\n"),
            ("trailing-garbage", VALID + "}}}}"),
            ("missing-semis", VALID.replace(";", "")),
            ("version-mid-file", VALID + "#version 2.0\n")]:
        if isinstance(text, tuple):
            add(Case("structure", name, *text))
        else:
            add(Case("structure", name, text))

    # 10. image inputs
    import numpy as np
    good = nrrd2d()
    imgs: list[tuple[str, object, list[str]]] = [
        ("missing", None, ["-img", "nope.nrrd"]),
        ("empty-file", b"", ["-img", "i.nrrd"]),
        ("magic-only", b"NRRD0004\n", ["-img", "i.nrrd"]),
        ("garbage", os.urandom(2000), ["-img", "i.nrrd"]),
        ("fifo", "fifo", ["-img", "i.nrrd"]),
        ("directory", "dir", ["-img", "i.nrrd"]),
        ("dev-zero", None, ["-img", "/dev/zero"]),
        ("dev-null", None, ["-img", "/dev/null"]),
        ("dev-stdin", None, ["-img", "/dev/stdin"]),
        ("proc-self-mem", None, ["-img", "/proc/self/mem"]),
        ("header-10MB", b"NRRD0004\n# " + b"c" * 10_000_000 + b"\n", ["-img", "i.nrrd"]),
        ("header-line-1MB", b"NRRD0004\ntype: double\n" + b"x" * 2_000_000, ["-img", "i.nrrd"]),
        ("sizes-1e18", nrrd2d(1_000_000_000, 1_000_000_000, data=b""), ["-img", "i.nrrd"]),
        ("sizes-0", nrrd2d(0, 4, data=b""), ["-img", "i.nrrd"]),
        ("sizes-neg", nrrd2d(-4, 4, data=b""), ["-img", "i.nrrd"]),
        ("sizes-2^64", nrrd2d(2**64, 1, data=b""), ["-img", "i.nrrd"]),
        ("sizes-text", nrrd(b"NRRD0004\ntype: double\ndimension: 2\nsizes: a b\nencoding: raw\n".decode()), ["-img", "i.nrrd"]),
        ("short-data", nrrd2d(data=b"\0" * 17), ["-img", "i.nrrd"]),
        ("extra-data", nrrd2d(data=b"\0" * 10_000), ["-img", "i.nrrd"]),
        ("dim-1", nrrd("NRRD0004\ntype: double\ndimension: 1\nsizes: 4\nendian: little\nencoding: raw", b"\0" * 32), ["-img", "i.nrrd"]),
        ("dim-3", nrrd("NRRD0004\ntype: double\ndimension: 3\nsizes: 2 2 2\nendian: little\nencoding: raw", b"\0" * 64), ["-img", "i.nrrd"]),
        ("dim-70", nrrd("NRRD0004\ntype: double\ndimension: 70\nsizes: " + " ".join(["1"] * 70) + "\nendian: little\nencoding: raw", b"\0" * 8), ["-img", "i.nrrd"]),
        ("dim-huge", nrrd("NRRD0004\ntype: double\ndimension: 1000000000\nsizes: 4\nencoding: raw", b""), ["-img", "i.nrrd"]),
        ("1x1", nrrd2d(1, 1, data=b"\0" * 8), ["-img", "i.nrrd"]),
        ("type-complex", nrrd("NRRD0004\ntype: complex\ndimension: 2\nsizes: 2 2\nencoding: raw", b"\0" * 64), ["-img", "i.nrrd"]),
        ("type-block", nrrd("NRRD0004\ntype: block\nblock size: 4\ndimension: 2\nsizes: 2 2\nencoding: raw", b"\0" * 16), ["-img", "i.nrrd"]),
        ("type-uchar", nrrd("NRRD0004\ntype: uchar\ndimension: 2\nsizes: 4 4\nencoding: raw", b"\1" * 16), ["-img", "i.nrrd"]),
        ("type-unknown", nrrd("NRRD0004\ntype: quaternion\ndimension: 2\nsizes: 4 4\nencoding: raw", b"\1" * 16), ["-img", "i.nrrd"]),
        ("nan-data", nrrd2d(data=np.full(16, np.nan).tobytes()), ["-img", "i.nrrd"]),
        ("inf-data", nrrd2d(data=np.full(16, np.inf).tobytes()), ["-img", "i.nrrd"]),
        ("encoding-gzip-bad", nrrd2d(extra="", data=b"").replace(b"encoding: raw", b"encoding: gzip") + b"\x1f\x8bjunk", ["-img", "i.nrrd"]),
        ("encoding-unknown", nrrd2d().replace(b"encoding: raw", b"encoding: zstd"), ["-img", "i.nrrd"]),
        ("encoding-ascii-bad", nrrd2d(data=b"1 2 x 4").replace(b"encoding: raw", b"encoding: ascii"), ["-img", "i.nrrd"]),
        ("encoding-hex", nrrd2d(data=b"zz" * 128).replace(b"encoding: raw", b"encoding: hex"), ["-img", "i.nrrd"]),
        ("line-skip-1e18", nrrd2d(extra="\nline skip: 1000000000000000000"), ["-img", "i.nrrd"]),
        ("byte-skip-1e18", nrrd2d(extra="\nbyte skip: 1000000000000000000"), ["-img", "i.nrrd"]),
        ("byte-skip--1", nrrd2d(extra="\nbyte skip: -1"), ["-img", "i.nrrd"]),
        ("data-file-missing", nrrd2d(extra="\ndata file: nothere.raw", data=b""), ["-img", "i.nrrd"]),
        ("data-file-self", nrrd2d(extra="\ndata file: i.nrrd", data=b""), ["-img", "i.nrrd"]),
        ("data-file-dev-zero", nrrd2d(extra="\ndata file: /dev/zero", data=b""), ["-img", "i.nrrd"]),
        ("data-file-list", nrrd2d(extra="\ndata file: LIST", data=b"") + b"a.raw\nb.raw\n", ["-img", "i.nrrd"]),
        ("data-file-format", nrrd2d(extra="\ndata file: x%03d.raw 0 1000000000 1", data=b""), ["-img", "i.nrrd"]),
        ("kinds-mismatch", nrrd2d(extra="\nkinds: space"), ["-img", "i.nrrd"]),
        ("kinds-bogus", nrrd2d(extra="\nkinds: space bogus"), ["-img", "i.nrrd"]),
        ("space-dirs-bad", nrrd2d(extra="\nspace dimension: 2\nspace directions: (1,0) (0,x)"), ["-img", "i.nrrd"]),
        ("space-dirs-singular", nrrd2d(extra="\nspace dimension: 2\nspace directions: (0,0) (0,0)"), ["-img", "i.nrrd"]),
        ("space-dirs-nan", nrrd2d(extra="\nspace dimension: 2\nspace directions: (nan,0) (0,1)"), ["-img", "i.nrrd"]),
        ("space-dirs-huge", nrrd2d(extra="\nspace dimension: 2\nspace directions: (1e308,0) (0,1e308)"), ["-img", "i.nrrd"]),
        ("space-dim-3-on-2", nrrd2d(extra="\nspace dimension: 3\nspace directions: (1,0,0) (0,1,0)"), ["-img", "i.nrrd"]),
        ("space-origin-bad", nrrd2d(extra="\nspace dimension: 2\nspace origin: (1,2,3)"), ["-img", "i.nrrd"]),
        ("space-dim-huge", nrrd2d(extra="\nspace dimension: 1000000000"), ["-img", "i.nrrd"]),
        ("wrong-shape-vector", nrrd("NRRD0004\ntype: double\ndimension: 3\nsizes: 3 4 4\nkinds: 3-vector space space\nendian: little\nencoding: raw", b"\0" * 384), ["-img", "i.nrrd"]),
        ("npy-good", None, ["-img", "a.npy"]),
        ("npy-1d", None, ["-img", "b.npy"]),
        ("npy-complex", None, ["-img", "c.npy"]),
        ("npy-object", None, ["-img", "o.npy"]),
        ("npy-huge-header", None, ["-img", "h.npy"]),
        ("npy-empty", None, ["-img", "e.npy"]),
        ("npy-0x0", None, ["-img", "z.npy"]),
        ("png", b"\x89PNG\r\n\x1a\n" + b"\0" * 100, ["-img", "i.png"]),
        ("no-suffix", good, ["-img", "i"]),
        ("nhdr-detached", None, ["-img", "d.nhdr"]),
        ("image-default-missing", None, []),
    ]
    npys = {}
    import io

    def npy(a):
        b = io.BytesIO()
        np.save(b, a, allow_pickle=True)
        return b.getvalue()
    npys["a.npy"] = npy(np.ones((4, 4)))
    npys["b.npy"] = npy(np.ones(4))
    npys["c.npy"] = npy(np.ones((4, 4), complex))
    npys["o.npy"] = npy(np.array([[None, 1], [2, 3]], dtype=object))
    hdr = npy(np.ones((1, 1)))
    npys["h.npy"] = hdr.replace(b"(1, 1)", b"(100000, 100000)")
    npys["e.npy"] = b""
    npys["z.npy"] = npy(np.ones((0, 0)))
    npys["d.nhdr"] = b"NRRD0004\ntype: double\ndimension: 2\nsizes: 4 4\nendian: little\nencoding: raw\ndata file: d.raw\n"
    for name, content, argv in imgs:
        files = dict(npys)
        if content is not None:
            fname = argv[1] if argv else "i.nrrd"
            files[fname] = content
        src = IMG_PROG
        if name == "image-default-missing":
            src = IMG_PROG.replace("input image(2)[] img;", 'input image(2)[] img = image("gone.nrrd");')
        add(Case("images", name, src, list(argv), files))
    for name, _typ, fn in [("vec-on-scalar", "i.nrrd", good), ("scalar-on-vec", "i.nrrd", good)]:
        add(Case("images", name, VIMG_PROG if name == "scalar-on-vec" else IMG_PROG, ["-img", "i.nrrd"], {"i.nrrd": fn}))
    add(Case("images", "image-3d-prog-2d-file", IMG_PROG.replace("image(2)", "image(3)").replace("(2)[]", "(3)[]")
             .replace("vec2 p = [1.5 + 0.1*real(i), 1.5]", "vec3 p = [1.5, 1.5, 1.5]"), ["-img", "i.nrrd"], {"i.nrrd": good}))
    add(Case("images", "literal-image-missing", HEAD + 'field#1(2)[] F = image("nofile.nrrd") ⊛ ctmr;\n'
             "strand S (int i) { output real v = 0.0; update { v = F([1.5,1.5]); stabilize; } }\ninitially [ S(i) | i in 0..0 ];\n"))
    add(Case("images", "literal-image-abs-path", HEAD + 'field#1(2)[] F = image("/etc/passwd") ⊛ ctmr;\n'
             "strand S (int i) { output real v = 0.0; update { v = F([1.5,1.5]); stabilize; } }\ninitially [ S(i) | i in 0..0 ];\n"))
    add(Case("images", "probe-outside", IMG_PROG.replace("if (inside(p, F)) v = F(p);", "v = F([100.0, 100.0]);"),
             ["-img", "i.nrrd"], {"i.nrrd": good}))
    add(Case("images", "probe-nan", IMG_PROG.replace("if (inside(p, F)) v = F(p);", "v = F([nan, nan]);"),
             ["-img", "i.nrrd"], {"i.nrrd": good}))
    add(Case("images", "probe-inf", IMG_PROG.replace("if (inside(p, F)) v = F(p);", "v = F([∞, -∞]);"),
             ["-img", "i.nrrd"], {"i.nrrd": good}))
    add(Case("images", "probe-1e300", IMG_PROG.replace("if (inside(p, F)) v = F(p);", "v = F([1e300, -1e300]);"),
             ["-img", "i.nrrd"], {"i.nrrd": good}))
    add(Case("images", "inside-nan", IMG_PROG.replace("if (inside(p, F))", "if (inside([nan, nan], F))"),
             ["-img", "i.nrrd"], {"i.nrrd": good}))

    # 11. command-line values
    INP = (HEAD + 'input int k ("an int") = 1;\ninput real r = 1.0;\ninput bool b = true;\ninput string s = "a";\n'
           "input vec3 v = [1.0,2.0,3.0];\ninput real{3} q = {1.0,2.0,3.0};\ninput real{} d;\ninput mat2 m = identity[2];\n"
           "strand S (int i) { output real x = real(k) + r + v[0] + q{0} + m[0,0]; update { stabilize; } }\n"
           "initially [ S(i) | i in 0..k ];\n")
    seq_ok = nrrd("NRRD0004\ntype: double\ndimension: 1\nsizes: 3\nendian: little\nencoding: raw", np.ones(3).tobytes())
    base = ["-d", "d.nrrd"]
    f = {"d.nrrd": seq_ok}
    for name, argv in [("ok", []), ("k-empty", ["-k", ""]), ("k-float", ["-k", "1.5"]), ("k-huge", ["-k", "1" + "0" * 30]),
                       ("k-5000-digits", ["-k", "9" * 5000]), ("k-hex", ["-k", "0x10"]), ("k-underscore", ["-k", "1_0"]),
                       ("k-neg-huge", ["-k", "-" + "9" * 30]), ("k-nan", ["-k", "nan"]), ("k-unicode-digit", ["-k", "٣"]),
                       ("k-1e18", ["-k", "1000000000000000000"]), ("k-spaces", ["-k", " 1 "]),
                       ("r-nan", ["-r", "nan"]), ("r-inf", ["-r", "inf"]), ("r-1e999", ["-r", "1e999"]), ("r-text", ["-r", "x"]),
                       ("r-5000-digits", ["-r", "9" * 5000]), ("r-hexfloat", ["-r", "0x1p3"]),
                       ("b-maybe", ["-b", "maybe"]), ("b-empty", ["-b", ""]),
                       ("s-nul", ["-s", "a\x01b"]), ("s-huge", ["-s", "s" * 100_000]), ("s-dash", ["-s", "-l"]),
                       ("v-short", ["-v", "1", "2"]), ("v-long", ["-v", "1", "2", "3", "4"]), ("v-text", ["-v", "1", "x", "3"]),
                       ("v-missing", ["-v"]), ("q-short", ["-q", "1"]), ("q-nan", ["-q", "nan", "nan", "nan"]),
                       ("m-short", ["-m", "1", "2", "3"]),
                       ("d-missing", ["-d", "nothere.nrrd"]), ("d-2d", ["-d", "img.nrrd"]), ("d-empty", ["-d", "e.nrrd"]),
                       ("d-fifo", ["-d", "fifo.nrrd"]), ("d-ints", ["-d", "di.nrrd"]),
                       ("k-twice", ["-k", "1", "-k", "2"]), ("unknown", ["-zzz", "1"]), ("dash-dash", ["--", "-k", "1"]),
                       ("k-eq", ["--k=3"]), ("k-eq-empty", ["--k="]), ("bare-word", ["hello"]), ("lone-dash", ["-"]),
                       ("l-neg", ["-l", "-1"]), ("l-1e30", ["-l", "1" + "0" * 30]), ("l-text", ["-l", "abc"]),
                       ("l-float", ["-l", "2.5"]), ("l-missing", ["-l"]), ("l-1e18", ["-l", "1000000000000000000"]),
                       ("s-0", ["--snapshot", "0"]), ("s-neg", ["--snapshot", "-1"]), ("s-text", ["--snapshot", "x"]),
                       ("s-1e30", ["--snapshot", "1" + "0" * 30]), ("s-1", ["--snapshot", "1"]),
                       ("n-0", ["-n", "0"]), ("n-neg", ["-n", "-3"]), ("n-1e30", ["-n", "1" + "0" * 30]), ("n-257", ["-n", "257"]),
                       ("n-text", ["-n", "many"]), ("o-unwritable", ["-o", "ro/out.nrrd"]), ("o-dir", ["-o", "."]),
                       ("o-missing-dir", ["-o", "no/such/dir/out.nrrd"]), ("o-dev-full", ["-o", "/dev/full"]),
                       ("o-empty", ["-o", ""]), ("o-nhdr-unwritable", ["-o", "ro/out.nhdr"]),
                       ("o-name-unknown", ["-o-zzz", "a.nrrd"]), ("o-missing-arg", ["-o"]),
                       ("sp-unwritable", ["--snapshot", "1", "-sp", "ro/snap"]), ("sp-empty", ["--snapshot", "1", "-sp", ""]),
                       ("print-unwritable", ["-print", "ro/p.txt"]), ("print-dir", ["-print", "."]),
                       ("print-dev-full", ["-print", "/dev/full"]), ("help", ["-h"]), ("help-long", ["--help"]),
                       ("verbose-timing", ["-v", "-t"]), ("many-args", ["-k", "1"] * 10_000)]:
        files = dict(f)
        files.update({"img.nrrd": good, "e.nrrd": b"", "fifo.nrrd": "fifo", "ro": "ro-dir",
                      "di.nrrd": nrrd("NRRD0004\ntype: int\ndimension: 1\nsizes: 3\nendian: little\nencoding: raw", b"\1\0\0\0" * 3)})
        add(Case("argv", name, INP, (base if name not in ("d-missing", "d-2d", "d-empty", "d-fifo", "d-ints") else []) + argv, files))
    add(Case("argv", "no-required", INP, []))
    add(Case("argv", "program-missing", None, []))
    add(Case("argv", "program-dir", None, [], {"prog.diderot": "dir"}))
    add(Case("argv", "program-fifo", None, [], {"prog.diderot": "fifo"}))

    # 12. environment
    for name, env in [("max-bytes-0", {"TENSORLANG_MAX_BYTES": "0"}), ("max-bytes-neg", {"TENSORLANG_MAX_BYTES": "-5"}),
                      ("max-bytes-text", {"TENSORLANG_MAX_BYTES": "lots"}), ("max-bytes-huge", {"TENSORLANG_MAX_BYTES": "9" * 5000}),
                      ("max-bytes-1", {"TENSORLANG_MAX_BYTES": "1"}), ("max-bytes-nan", {"TENSORLANG_MAX_BYTES": "nan"}),
                      ("max-src-0", {"TENSORLANG_MAX_SOURCE_BYTES": "0"}), ("max-src-text", {"TENSORLANG_MAX_SOURCE_BYTES": "x"}),
                      ("cache-file", {"TENSORLANG_CACHE": "afile"}), ("cache-ro", {"TENSORLANG_CACHE": "ro"}),
                      ("cache-dev-null", {"TENSORLANG_CACHE": "/dev/null"}), ("cache-empty", {"TENSORLANG_CACHE": ""}),
                      ("cache-proc", {"TENSORLANG_CACHE": "/proc/self"}), ("cache-relative-missing", {"TENSORLANG_CACHE": "a/b/c"}),
                      ("cc-false", {"CC": "false"}), ("cc-missing", {"CC": "/no/such/cc"}), ("cc-garbage", {"CC": "cc -DBOGUS=("}),
                      ("omp-0", {"OMP_NUM_THREADS": "0"}), ("omp-huge", {"OMP_NUM_THREADS": "100000"}),
                      ("omp-text", {"OMP_NUM_THREADS": "x"}), ("parallel-work-text", {"TENSORLANG_PARALLEL_WORK": "x"}),
                      ("cache-sizes-text", {"TENSORLANG_CACHE_SIZES": "x,y"}), ("no-callext", {"TENSORLANG_NO_CALLEXT": "1"}),
                      ("home-missing", {"HOME": "/no/such/home", "XDG_CACHE_HOME": ""}),
                      ("tmpdir-missing", {"TMPDIR": "/no/such/tmp", "TENSORLANG_CACHE": "ro"})]:
        add(Case("env", name, VALID, [], {"afile": b"x", "ro": "ro-dir"}, env))
    return C


def corpus(classes: list[str] | None = None) -> list[Case]:
    cs = _classes()
    return [c for k, v in cs.items() if not classes or k in classes for c in v]


# ------------------------------------------------------------------ running
def _materialize(case: Case, where: str) -> None:
    for name, content in case.files.items():
        path = os.path.join(where, name)
        if content == "fifo":
            os.mkfifo(path)
        elif content in ("dir", "ro-dir"):
            os.makedirs(path, exist_ok=True)
            if content == "ro-dir":
                os.chmod(path, 0o500)
        else:
            with open(path, "wb") as fh:
                fh.write(content if isinstance(content, bytes) else str(content).encode())
    if case.src is not None:
        with open(os.path.join(where, "prog.diderot"), "wb") as fh:
            fh.write(case.src.encode("utf-8", "surrogatepass") if isinstance(case.src, str) else case.src)


def _child(case: Case, where: str, limit: float) -> None:
    import resource
    cpu = max(1, int(limit + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    os.chdir(where)
    out = os.open(os.path.join(where, ".stdout"), os.O_WRONLY | os.O_CREAT, 0o600)
    err = os.open(os.path.join(where, ".stderr"), os.O_WRONLY | os.O_CREAT, 0o600)
    nul = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nul, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    # under pytest's capture sys.stdout/stderr are not the descriptors: bind them again
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    os.environ.update(case.env)
    for k, v in case.env.items():
        if v == "":
            os.environ.pop(k, None)
    rc = 99
    try:
        from tensorlang import cli
        rc = cli.main(["run", "prog.diderot", *case.argv])
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 2
    except BaseException:  # noqa: BLE001 - the child reports anything as a traceback
        import traceback
        traceback.print_exc()
        rc = 98
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(rc)


@dataclass
class Outcome:
    case: Case
    verdict: str      # ok | refused | internal | traceback | hang | crash | unexpected
    rc: int | None
    seconds: float
    stderr: str

    def line(self) -> str:
        lines = self.stderr.strip().splitlines()
        last = [ln for ln in lines if "error[" in ln or "Error" in ln][-1:] or lines[-1:] or [""]
        return f"{self.verdict:9s} rc={self.rc} {self.seconds:5.2f}s {self.case.id}  {last[0][:200]}"


BAD = ("internal", "traceback", "hang", "crash", "unexpected", "silent")


def run_case(case: Case, limit: float = LIMIT_SECONDS) -> Outcome:
    where = tempfile.mkdtemp(prefix="tl-hostile-")
    try:
        _materialize(case, where)
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                _child(case, where, limit)
            finally:
                os._exit(97)
        rc: int | None = None
        cpu = 0.0
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                rc = os.waitstatus_to_exitcode(status)
                cpu = usage.ru_utime + usage.ru_stime
                break
            if time.monotonic() - t0 > WALL_SECONDS:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.01)
        seconds = cpu
        if rc == -signal.SIGXCPU or (rc == -signal.SIGKILL and cpu >= int(limit)):
            rc = None  # out of CPU time: a hang
        err = _read(os.path.join(where, ".stderr"))
        out = _read(os.path.join(where, ".stdout"))
        both = err + out
        if rc is None:
            verdict = "work" if case.work else "hang"
        elif rc < 0:
            verdict = "crash"
        elif "Traceback (most recent call last)" in both:
            verdict = "traceback"
        elif rc == 3 or "error[internal]" in both or re.search(r"did not compile \(a bug in tensorlang.*<stdin>:\d+", both):
            verdict = "internal"  # (the last: generated C the compiler refused, the run left to the interpreter)
        elif rc == 0:
            verdict = "ok"
        elif rc == 1 and "error[" in err or rc == 2:
            verdict = "refused"
        elif rc == 1 and ("no stable strands" in err or "cannot write" in err):
            verdict = "refused"
        else:
            verdict = "unexpected"
        if case.expect and verdict in ("ok", "refused"):
            got = "ok" if verdict == "ok" else (err.split("error[", 1)[1].split("]", 1)[0] if "error[" in err else "?")
            if got != case.expect:
                verdict = "unexpected"
        return Outcome(case, verdict, rc, seconds, err[-2000:])
    finally:
        _cleanup(where)


def _read(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(200_000).decode("utf-8", "replace")
    except OSError:
        return ""


def _cleanup(where: str) -> None:
    for root, dirs, _files in os.walk(where):
        for d in dirs:
            try:
                os.chmod(os.path.join(root, d), stat.S_IRWXU)
            except OSError:
                pass
    import shutil
    shutil.rmtree(where, ignore_errors=True)


def fresh_cache() -> str:
    """A new cache directory for this run (so that no case finds its C object built by
    an earlier run), set in the environment the forked cases inherit."""
    path = tempfile.mkdtemp(prefix="tl-hostile-cache-")
    os.environ["TENSORLANG_CACHE"] = path
    return path


def main(argv: list[str]) -> int:
    fresh_cache()
    import tensorlang  # noqa: F401  (imported once, before the forks)
    from tensorlang import cli  # noqa: F401
    import numpy  # noqa: F401
    only = [a for a in argv if not a.startswith("-")]
    names = [a[1:] for a in argv if a.startswith("+")]
    cases = corpus([a for a in only if ":" not in a]) if not any(":" in a for a in only) else \
        [c for c in corpus() if c.id in only]
    if names:
        cases = [c for c in cases if any(n in c.id for n in names)]
    counts: dict[str, dict[str, int]] = {}
    bad = 0
    for case in cases:
        o = run_case(case)
        counts.setdefault(case.cls, {}).setdefault(o.verdict, 0)
        counts[case.cls][o.verdict] += 1
        if o.verdict in BAD or "-a" in argv:
            bad += o.verdict in BAD
            print(o.line(), flush=True)
    for cls, c in counts.items():
        print(f"{cls:12s} {sum(c.values()):4d}  " + " ".join(f"{k}={v}" for k, v in sorted(c.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
