"""Differential fuzzing of the Diderot front end against ``diderotc --double --exec`` (docs/diderot.md, "Generated
programs against diderotc"): random well-typed Diderot 2.0 programs, each a grid of strands that print many typed
expressions (over int, bool, real, vectors, matrices, tensor[2,2,2], the basis functions, and probes of fields of
the synthetic images of ``unseen_inputs``), with special values (⊥, ±∞, ±0, tiny and huge) given on the command
line so that diderotc cannot fold them.  Each program is compiled once by diderotc (its C++ rebuilt with
``-ffp-contract=off``, as tensorlang computes without fused multiply-adds) and run by tensorlang's interpreter (and,
with ``--c``, its C executor); every printed line is compared (numbers within 1e-9 relative, NaN where NaN, the
sign of every zero).

``--mode strands`` writes programs of strand-level behaviour instead (:func:`generate_strands`: grids and
collections, stabilize, die and new at data-dependent steps, start and stabilize methods, global start and update
blocks with reductions, outputs of several types, -l and -s) and compares their printed lines and NRRD files.

``--mode fields`` writes programs of fields (:func:`generate_fields`: images it generates, of 1 to 3 dimensions,
scalar, vector and matrix voxels on rotated and sheared frames; fields of every kernel and border control, global
fields of fields, formulas, field locals; probes and derivatives in globals, a start block, prints and outputs)
and compares them so, within 1e-12; a line with a derivative past its field's continuity must be refused by both.

``python tests/diderot/fuzz_diderotc.py [--mode strands|fields] [--seeds A:B] [--c] [--out DIR]`` (diderotc on
PATH); a program that disagrees is kept in DIR with its command line and both outputs.  Not a test: the smoke tests
of ``test_diderotc_fuzz_10``, ``_11`` and ``_12`` import it and generate a few programs."""

from __future__ import annotations

import math
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

REALS, INTS = 10, 4  # the inputs r0.., k0..
STRANDS = 4
SPECIAL = ["nan", "inf", "-inf", "0", "-0", "1e-300", "-1e-300", "5e-324", "1e300", "-1e300", "1.7976931348623157e308",
           "2.2250738585072014e-308", "1", "-1", "0.5", "3", "1e-8", "-1e8"]
LITERALS = ["0.0", "(-0.0)", "1.0", "2.0", "0.5", "(-1.5)", "3.25", "1.0e-300", "1.0e300", "1.0e-8", "(-7.0)", "0.1",
            "4.0e-320"]
# the images of unseen_inputs.make: name -> (dimension, value shape, a box inside the domain, the sample spacing)
IMAGES = {"s1": (1, (), [(-1.0, 4.5)], [0.5]), "s2": (2, (), [(-2.0, 2.5), (-2.5, 2.5)], [0.5, 0.625]),
          "s3": (3, (), [(-2.0, 1.5), (-1.5, 1.5), (-2.0, 1.75)], [0.5, 0.5, 0.75]),
          "v2": (2, (2,), [(-2.0, 2.5), (-2.5, 2.5)], [0.5, 0.625]),
          "v3": (3, (3,), [(-2.0, 1.5)] * 3, [0.5] * 3), "m2": (2, (2, 2), [(-2.0, 2.5), (-2.5, 2.5)], [0.5, 0.625])}
KERNELS = {"tent": 0, "ctmr": 1, "c1tent": 1, "bspln3": 2, "c2tent": 2, "c2ctmr": 2, "bspln5": 4, "c4hexic": 4}
SHAPES = {"real": (), "vec2": (2,), "vec3": (3,), "mat2": (2, 2), "mat3": (3, 3), "t222": (2, 2, 2)}
TYPES = ["int", "bool", *SHAPES]
# the locals every expression may read, made from the reals x0..x5 and the ints n0..n2
TENSOR_LOCALS = ["    bool b0 = x0 < x1;", "    bool b1 = n0 > 0;", "    vec2 u2 = [x1, x2];", "    vec2 w2 = [x3, 0.5];",
                 "    vec3 u3 = [x0, x1, x2];", "    vec3 w3 = [x3, x4, x5];", "    mat2 m2 = [[x0, x1], [x2, x3]];",
                 "    mat3 m3 = [[x1, x2, x3], [x2, x4, x5], [x0, 1.0, x4]];",
                 "    mat2 q2 = [[x4, 0.5], [0.5, x5]];",
                 "    mat3 q3 = [[x3, 0.25, x0], [0.25, x1, 2.0], [x0, 2.0, x5]];",
                 "    tensor[2,2,2] t3 = [[[x0, x1], [x2, x3]], [[x4, x5], [1.0, x0]]];"]


@dataclass(frozen=True)
class Case:
    """One generated program: its text and the command line of its run."""

    seed: int
    text: str
    argv: tuple[str, ...]
    flags: tuple[str, ...] = ()  # diderotc's own (--snapshot)
    files: tuple = ()  # input images: (name, samples, kinds, space directions, origin) (generate_fields)


def _num(r: random.Random) -> str:
    """A command-line real: a special value a quarter of the time, else a modest one."""
    if r.random() < 0.25:
        return r.choice(SPECIAL)
    return repr(round(r.uniform(-3, 3), r.choice([1, 3, 17])))


class _Gen:
    """Random typed expressions over the strand's variables (see :func:`generate`)."""

    def __init__(self, r: random.Random, fields: list[tuple[str, str, int, int, tuple]], points: dict[int, str]):
        self.r, self.fields, self.points = r, fields, points

    def leaf(self, t: str) -> str:
        r = self.r
        if t == "int":
            return r.choice(["n0", "n1", "n2", "i", str(r.randint(0, 9)), "(-3)"])
        if t == "bool":
            return r.choice(["b0", "b1", "true", "false"])
        if t == "real":
            return r.choice(["x0", "x1", "x2", "x3", "x4", "x5", r.choice(LITERALS), "real(n0)"])
        if t in ("mat2", "mat3") and r.random() < 0.15:  # (rarely: diderotc rewrites its products, "identity")
            return f"(identity[{t[-1]}])"
        return {"vec2": ["u2", "w2"], "vec3": ["u3", "w3"], "mat2": ["m2", "q2"], "mat3": ["m3", "q3"],
                "t222": ["t3", "t3"]}[t][r.randrange(2)]

    def expr(self, t: str, d: int) -> str:
        if d <= 0 or self.r.random() < 0.2:
            return self.leaf(t)
        for _ in range(20):
            got = self.form(t, d - 1)
            if got is not None:
                return got
        return self.leaf(t)

    def _inside(self, d: int) -> str | None:
        if not self.fields:
            return None
        name, _, dim, _, _, _ = self.r.choice(self.fields)
        return f"inside({self.point(dim)}, {name})"

    def point(self, dim: int) -> str:
        p = self.points[dim]
        if self.r.random() < 0.3:
            off = [self.r.choice(["0.0", "0.25", "(-0.5)", "1.0e-12"]) for _ in range(dim)]
            return f"({p} + {off[0] if dim == 1 else '[' + ', '.join(off) + ']'})"
        return p

    def probe(self, t: str) -> str | None:
        """A probe of a field whose value at a point has type ``t``."""
        r = self.r
        want = SHAPES[t]
        opts = []
        for name, _, dim, k, shape, _ in self.fields:
            p = self.point(dim)
            if shape == want:
                opts.append(f"{name}({p})")
            if k >= 1 and shape == () and want == ((dim,) if dim > 1 else ()):
                opts.append(f"∇{name}({p})")
            if k >= 2 and shape == () and dim > 1 and want == (dim, dim):
                opts.append(f"∇⊗∇{name}({p})")
            if k >= 1 and shape == (dim,) and want == (dim, dim):
                opts.append(f"∇⊗{name}({p})")
            if k >= 1 and shape == (dim,) and want == ():
                opts.append(f"∇•{name}({p})")
            if k >= 1 and shape == (dim,) and ((dim == 2 and want == ()) or (dim == 3 and want == (3,))):
                opts.append(f"∇×{name}({p})")
            if k >= 2 and shape == (dim,) and want == (dim, dim, dim) and dim == 2:
                opts.append(f"∇⊗∇⊗{name}({p})")
            if shape == () and want == ():
                opts.append(f"({r.choice(['2.0 * ', '-', 'x0 * '])}{name})({p})")
                opts.append(f"({r.choice(['sin', 'cos', 'exp', 'atan'])}({name}))({p})")
                opts.append(f"({name}^{r.choice(['2', '3'])})({p})")
            if k >= 1 and shape == () and want == ((dim,) if dim > 1 else ()):
                opts.append(f"∇({r.choice(['2.0 * ', '-', 'x1 * ', 'x1 + '])}{name})({p})")
                opts.append(f"∇({name} * {name})({p})")
                opts.append(f"∇({r.choice(['sin', 'exp'])}({name}))({p})")
            if shape == (dim,) and want == () and dim > 1:
                opts.append(f"|{name}|({p})")
            if shape == (dim,) and want == (dim,) and dim > 1:
                opts.append(f"normalize({name})({p})")
                other = [f for f in self.fields if f[2] == dim and f[3] == k and f[4] == () and f[0] != name]
                if other:
                    opts.append(f"({name} {r.choice('+-*')} {other[0][0]})({p})")
            if shape == (2, 2) and want == ():
                opts.append(f"{r.choice(['det', 'trace'])}({name})({p})")
        if not opts:
            return None
        got = r.choice(opts)
        names = re.findall(r"F\w+", got)
        if all(f[5] for f in self.fields if f[0] in names):
            return got
        # diderotc's executables read past the image's edge where tensorlang gives NaN (docs/diderot.md)
        p = got[got.index("(", got.index(names[-1])) + 1:-1]
        fill = "(-7.0)" if not want else f"zeros[{','.join(map(str, want))}]"
        return f"({got} if {' && '.join(f'inside({p}, {n})' for n in names)} else {fill})"

    def form(self, t: str, d: int) -> str | None:
        """One of ``t``'s forms (:data:`FORMS`) at depth ``d``, or None where the form drawn does not apply."""
        count, forms = FORMS[t]
        got = forms.get(self.r.randrange(count))
        if isinstance(got, tuple):
            got = got[0] if self.r.random() < 0.5 else got[1]
        if got is None or callable(got):
            return got and got(self, d)
        out, bound = [], t
        for n, part in enumerate(re.split(r"\{([^{}]*)\}", got)):
            if n % 2 == 0:
                out.append(part)
            elif part.startswith("="):  # a type for the {t} that follow
                bound = self.r.choice(part[1:].split())
            elif part in ("t", "m", "v"):
                out.append(self.expr(bound if part == "t" else f"{'mat' if part == 'm' else 'vec'}{SHAPES[t][0]}", d))
            elif part in FORMS:
                out.append(self.expr(part, d))
            elif part == "#":  # an index of the bound type's first axis
                out.append(str(self.r.randrange(SHAPES[bound][0])))
            elif part == "%2":
                out.append(str(self.r.randrange(2)))
            elif part == "probe":
                got = self.probe(bound)
                if got is None:
                    return None
                out.append(got)
            else:  # one of the words
                out.append(self.r.choice(part.split()))
        return "".join(out)


def _tensor_forms(t: str) -> dict:
    """The forms of a tensor of type ``t`` (:data:`FORMS`): those of every shape, then of its rank and size."""
    shape = SHAPES[t]
    n = shape[0]
    forms: dict = {0: "({t} {+ -} {t})", 1: ("({real} * {t})", "({t} {* /} {real})"), 2: "(-{t})",
                   3: "({t} if {bool} else {t})", 5: "lerp({t}, {t}, {real})", 6: "clamp({real}, {real}, {t})",
                   7: "{probe}", 8: "{probe}"}
    if len(shape) == 1:  # (diderotc's modulate takes vectors only)
        forms |= {4: "modulate({t}, {t})", 9: ("({m} • {t})", "({t} • {m})"), 10: "normalize({t})",
                  11: "({t} × {t})" if n == 3 else None, 12: "evecs({m})[{#}]", 13: ("{m}[{#},:]", "{m}[:,{#}]"),
                  14: "[" + ", ".join(["{real}"] * n) + "]", 15: "t3[{%2},:,{%2}]" if n == 2 else None}
    elif len(shape) == 2:
        forms |= {9: "({t} • {t})", 10: "({v} ⊗ {v})", 11: "{transpose inv}({t})", 12: "transpose({t})",
                  13: ("(t3 • {vec2})", "t3[{%2},:,:]") if n == 2 else None,
                  14: "[" + ", ".join(["[" + ", ".join(["{real}"] * n) + "]"] * n) + "]",
                  15: "({vec2} • t3)" if n == 2 else None}
    else:
        forms |= {9: ("({mat2} ⊗ {vec2})", "({vec2} ⊗ {mat2})"), 10: "(t3 • {mat2})"}
    return forms


# Each type's expression forms: (how many to draw from, {number: form}); a number without a form draws again.  A
# form is a template ({TYPE}: an expression of TYPE; {t}: of the type bound by {=A B ..}, else the form's own;
# {m}, {v}: the matrix and vector of the form's size; {#}: an index of {t}'s first axis; {%2}: 0 or 1; {probe}: a
# probe of a field (:meth:`_Gen.probe`); {A B ..}: one of the words), a pair of them (either, even odds) or a
# function of the generator and the depth.
FORMS = {
    "int": (9, {0: "({int} {+ - *} {int})", 1: "({int} {/ %} {2 3 (-4) 7})", 2: "(-{int})",
                4: "{min max}({int}, {int})", 5: "|({int})|", 6: "({int} if {bool} else {int})"}),
    "bool": (8, {0: "{=real int}({t} {< <= > >= == !=} {t})", 1: "{=real int}({t} {< <= > >= == !=} {t})",
                 2: "({bool} {&& ||} {bool})", 3: "!{bool}", 4: _Gen._inside, 5: "({bool} == {bool})"}),
    "real": (23, {0: "({real} {+ - * /} {real})", 1: "(-{real})", 2: "({real}^{2 3 (-1) 0 5 (-2)})",
                  3: "({real}^{real})",
                  4: "{sqrt exp log sin cos tan asin acos atan erf erfc floor ceil round trunc log10 log2 inv}({real})",
                  5: "{atan2 pow fmod min max}({real}, {real})", 6: "{clamp lerp}({real}, {real}, {real})",
                  7: "{=vec2 vec3}({t} • {t})",
                  8: "{=vec2 vec3 mat2 mat3 real t222}|({t})|",  # (diderotc reads "||" as a syntax error)
                  9: "{=mat2 mat3}{trace det}({t})", 10: "{=mat2 mat3}({t} : {t})", 11: "{=vec2 vec3}{t}[{#}]",
                  12: "{=mat2 mat3}{t}[{#},{#}]", 13: "real({int})", 14: "({real} if {bool} else {real})",
                  15: "{=mat2 mat3}evals({t})[{#}]", 16: "{probe}", 17: "{probe}", 18: "({vec2} × {vec2})",
                  19: "t3[{%2},{%2},{%2}]", 20: "lerp({real}, {real}, {real}, {real}, {real})",
                  # (x^n with n an int variable crashes diderotc's translator: "Fail: impossible")
                  21: "pow({real}, real({int}))"}),
} | {t: (16, _tensor_forms(t)) for t in SHAPES if t != "real"}


def _pick(var: str, r: random.Random, n: int) -> str:
    """``r{a} if i == 0 else r{b} if i == 1 ...``: a strand's own input for ``var``."""
    names = [f"{var}{r.randrange(n)}" for _ in range(STRANDS)]
    text = names[-1]
    for s in range(STRANDS - 2, -1, -1):
        text = f"({names[s]} if i == {s} else {text})"
    return text


def _points(r: random.Random, box, spacing) -> list[float]:
    """One probe position per strand in each axis: inside, at a sample, near the border, just outside."""
    out = []
    for (lo, hi), h in zip(box, spacing):
        kind = r.randrange(5)
        if kind == 0:
            out.append(lo + h * r.randint(0, int((hi - lo) / h)))
        elif kind == 1:
            out.append(r.choice([lo, hi]) + r.choice([1, -1]) * r.uniform(0, 1.2 * h))
        elif kind == 2:
            out.append(r.choice([lo, hi]) + r.choice([-1e-9, 1e-9, 0.0, h, -h, 1.5 * h, -1.5 * h]))
        else:
            out.append(r.uniform(lo, hi))
    return [round(v, 6) for v in out]


def _lit(v: float) -> str:
    text = repr(float(v))
    if "e" in text and "." not in text:
        text = text.replace("e", ".0e")
    return f"({text})" if v < 0 or text.startswith("-") else text


def generate(seed: int, lines: int = 60, depth: int = 3) -> Case:
    """A random program of ``lines`` printed expressions per strand and its command line."""
    r = random.Random(seed)
    head = ["#version 2.0"]
    head += [f"input real r{j} = 1.0;" for j in range(REALS)] + [f"input int k{j} = 1;" for j in range(INTS)]
    fields = []
    imgs = r.sample(sorted(IMAGES), r.randint(2, 4))
    for img in imgs:
        dim, shape, box, _ = IMAGES[img]
        head.append(f"input image({dim}){list(shape)} I{img};".replace(", ", ","))
        for j in range(r.randint(1, 2)):
            kern = r.choice(sorted(KERNELS))
            k = KERNELS[kern]
            border = r.choice(["", "", "clamp", "mirror", "wrap"])
            src = f"{border}(I{img})" if border else f"I{img}"
            name = f"F{img}{j}"
            sh = "[" + ",".join(map(str, shape)) + "]"
            head.append(f"field#{k}({dim}){sh} {name} = {kern} ⊛ {src};")
            fields.append((name, kern, dim, k, shape, border))
    points = {}
    body = []
    for dim in sorted({f[2] for f in fields}):
        box = next(IMAGES[i][2] for i in imgs if IMAGES[i][0] == dim)
        spacing = next(IMAGES[i][3] for i in imgs if IMAGES[i][0] == dim)
        per = [_points(r, box, spacing) for _ in range(STRANDS)]
        vals = [(_lit(p[0]) if dim == 1 else "[" + ", ".join(_lit(v) for v in p) + "]") for p in per]
        text = vals[-1]
        for s in range(STRANDS - 2, -1, -1):
            text = f"({vals[s]} if i == {s} else {text})"
        t = "real" if dim == 1 else f"vec{dim}"
        body.append(f"    {t} p{dim} = {text};")
        points[dim] = f"p{dim}"
    gen = _Gen(r, fields, points)
    pre = [f"    real x{j} = {_pick('r', r, REALS)};" for j in range(6)]
    pre += [f"    int n{j} = {_pick('k', r, INTS)};" for j in range(3)] + TENSOR_LOCALS
    prints = []
    for j in range(lines):
        t = r.choice(TYPES + ["real", "real"])
        prints.append(f'    print("e{j} ", {gen.expr(t, r.randint(1, depth))}, "\\n");')
    text = "\n".join(head + ["strand S (int i) {", "  output real o = 0.0;", "  update {"] + pre + body + prints
                     + ["    o = x0;", "    stabilize;", "  }", "}", f"create_array {{ S(i) | i in 0..{STRANDS - 1} }}", ""])
    argv = []
    for j in range(REALS):
        argv += [f"-r{j}", _num(r)]
    for j in range(INTS):
        argv += [f"-k{j}", str(r.choice([0, 1, -1, 2, 3, -7, 5, 10]))]
    for img in imgs:
        argv += [f"-I{img}", f"{img}.nrrd"]
    return Case(seed, text, tuple(argv))


# ------------------------------------------------------------------ strand-level programs (--mode strands)
# functions the strands' expressions may call: (name, parameter types, result type, the definitions to choose from)
FUNCTIONS = [
    ("fa", ("real",), "real", ["function real fa(real a) = a * {c} + {d};",
                               "function real fa(real a) = a if a > {c} else {d} - a;",
                               "function real fa(real a) {{\n  if (a > {c}) {{ return sqrt(a); }}\n  return a * a - {d};\n}}",
                               "function real fa(real a) = sin(a) * {c} + gs;"]),
    ("fb", ("vec2", "real"), "vec2", ["function vec2 fb(vec2 a, real s) = [a[1], -a[0]] * s + gv;",
                                      "function vec2 fb(vec2 a, real s) {{\n  if (s > {c}) {{ return a * s; }}\n"
                                      "  else {{ return [a[1] * {d}, a[0]]; }}\n}}",
                                      "function vec2 fb(vec2 a, real s) = normalize(a) * s if |a| > 0.0 else 1.0 * a;"]),
    ("fc", ("int",), "int", ["function int fc(int n) = n % 3 + 1;", "function int fc(int n) = max(n, 0) / 2;",
                             "function int fc(int n) {{\n  if (n > 2) {{ return n - 2; }}\n  return n * 2;\n}}"]),
    ("fd", ("vec3",), "real", ["function real fd(vec3 p) = p • [{c}, 1.0, {d}];",
                               "function real fd(vec3 p) = |p| - {c};"]),
    ("fe", ("vec2", "vec2"), "mat2", ["function mat2 fe(vec2 a, vec2 b) = a ⊗ b;",
                                      "function mat2 fe(vec2 a, vec2 b) = a ⊗ b + {c} * identity[2];"]),
]
# a strand's outputs: name -> (type, initial value)
OUTPUTS = {"o": ("real", "real(i) * 0.5"), "v": ("vec2", "[real(i), r0]"), "c": ("int", "i"), "b": ("bool", "i > 0"),
           "w": ("vec3", "[0.0, real(i), 1.0]")}
# the locals an update starts with, from the strand's state, inputs and globals (the names _Gen reads)
STRAND_LOCALS = ["    real x0 = x;", "    real x1 = y;", "    real x2 = r0;", "    real x3 = gs;", "    real x4 = real(age);",
                 "    real x5 = r1;", "    int n0 = age;", "    int n1 = k1;", "    int n2 = gstep;", *TENSOR_LOCALS]


class _StrandGen(_Gen):
    """:class:`_Gen`'s expressions (no fields), calling the program's functions now and then."""

    def __init__(self, r: random.Random, funcs: list[tuple[str, tuple[str, ...], str]]):
        super().__init__(r, [], {})
        self.funcs = funcs

    def expr(self, t: str, d: int) -> str:
        calls = [f for f in self.funcs if f[2] == t]
        if d > 0 and calls and self.r.random() < 0.12:
            name, params, _ = self.r.choice(calls)
            return f"{name}(" + ", ".join(self.expr(p, d - 1) for p in params) + ")"
        return super().expr(t, d)


def _reduction(r: random.Random, t: str, outs: list[str]) -> str:
    """A reduction over the strands of type ``t`` (real, int or bool)."""
    each = r.choice(["all", "all", "active", "stable"])
    if t == "bool":
        body = r.choice(["s.x > gs", "s.age > 2"] + (["s.b"] if "b" in outs else []))
        return f"{r.choice(['all', 'exists'])} {{ {body} | s in S.{each} }}"
    if t == "int":
        body = r.choice(["s.age", "s.age * 2 - 3"] + (["s.c"] if "c" in outs else []))
        return f"{r.choice(['sum', 'max', 'min'])} {{ {body} | s in S.{each} }}"
    body = r.choice(["s.x", "s.y", "real(s.age)", "s.x * s.y"] + (["s.o"] if "o" in outs else [])
                    + (["|s.v|", "s.v[1]"] if "v" in outs else []))
    return f"{r.choice(['sum', 'mean', 'product', 'max', 'min'])} {{ {body} | s in S.{each} }}"


def _range(r: random.Random, inner: bool) -> str:
    """An iteration range: literal (negative or empty at times) or from the input k0 (an inner range may not read
    the outer iterator: "undeclared variable" in both diderotc and tensorlang)."""
    kind = r.randrange(6)
    if kind == 0:
        return "0..k0"
    if kind == 1:
        return "-1..k0"
    if kind == 2 and inner:
        return r.choice(["2..-1", "-2..-2"])
    a = r.randint(-3, 2)
    return f"{a}..{a + r.choice([-1, 0, 1, 2, 2, 3, 3, 3])}"


class _Body:
    """The statements of a strand's update (see :func:`generate_strands`)."""

    def __init__(self, r: random.Random, g: _StrandGen, outs: list[str], collection: bool, params: str):
        self.r, self.g, self.outs, self.collection, self.params = r, g, outs, collection, params
        self.shown = params.replace(", ", ', " ", ')
        self.made = params.replace("i", "i + 100", 1)  # a strand's child
        self.targets = [("x", "real", ["=", "+=", "*=", "-="]), ("y", "real", ["=", "+="])]
        self.targets += [(o, OUTPUTS[o][0], {"real": ["=", "+="], "vec2": ["=", "+="], "vec3": ["=", "-="],
                                             "int": ["+=", "="], "bool": ["="]}[OUTPUTS[o][0]]) for o in outs]

    def assign(self, pad: str) -> str:
        name, t, ops = self.r.choice(self.targets)
        return f"{pad}{name} {self.r.choice(ops)} {self.g.expr(t, self.r.randint(1, 2))};"

    def stmts(self, pad: str, depth: int, n: int) -> list[str]:
        r, out = self.r, []
        for _ in range(n):
            k = r.randrange(10)
            if k == 0 and depth > 0:
                out.append(f"{pad}if ({self.g.expr('bool', 2)}) {{")
                out += self.stmts(pad + "  ", depth - 1, r.randint(1, 3))
                if r.random() < 0.6:
                    out.append(f"{pad}}} else {{")
                    out += self.stmts(pad + "  ", depth - 1, r.randint(1, 3))
                out.append(f"{pad}}}")
            elif k == 1:
                cond = r.choice([f"age == {r.randint(1, 5)}", self.g.expr("bool", 1), f"gstep >= {r.randint(1, 4)}",
                                 f"numStable() > {r.randint(0, 3)}"])
                out.append(f"{pad}if ({cond}) stabilize;")
            elif k == 2 and self.collection:
                cond = r.choice([f"age == {r.randint(1, 4)} && i % 2 == 0", self.g.expr("bool", 1)])
                out.append(f"{pad}if ({cond}) die;")
            elif k == 3 and self.collection:
                out.append(f"{pad}if (age == {r.randint(1, 4)} && i < 50) new S({self.made});")
            elif k == 4:
                out.append(f'{pad}print("p ", {self.shown}, " ", age, " ", {self.g.expr(r.choice(TYPES[:4]), 2)}, "\\n");')
            else:
                out.append(self.assign(pad))
        return out


def generate_strands(seed: int) -> Case:
    """A random program of strand-level behaviour and its command line: a grid or a collection (one or two
    iterators over literal, negative, empty, input-bound or nested ranges) whose update runs nested conditionals
    and stabilizes, dies or makes new strands at iterations that depend on its data; a stabilize method, a global
    start and update block with reductions over S.all, S.active and S.stable, globals the strands read, functions
    of reals, ints and tensors, outputs of several types, step limits and strands that never stabilize."""
    r = random.Random(seed)
    collection = r.random() < 0.6
    two = r.random() < 0.4
    outs = sorted(r.sample(sorted(OUTPUTS), r.randint(1, 3)))
    head = ["#version 2.0"] + [f"input real r{j} = 1.0;" for j in range(3)] + [f"input int k{j} = 1;" for j in range(2)]
    head += ["real g0 = r0 * r1 + 1.0;", "real gs = g0;", "int gstep = 0;", "vec2 gv = [r0, 0.25];"]
    funcs = []
    for name, params, res, defs in FUNCTIONS:
        if r.random() < 0.5:
            head.append(r.choice(defs).format(c=_lit(round(r.uniform(-2, 2), 2)), d=_lit(round(r.uniform(-2, 2), 2))))
            funcs.append((name, params, res))
    g = _StrandGen(r, funcs)
    params = "i, j" if two else "i"
    real = r.random() < 0.4  # a real parameter too: the initial x (the parent's x in a strand made by new)
    body = _Body(r, g, outs, collection, params + (", x" if real else ""))
    text = head + [f"strand S (int i{', int j' if two else ''}{', real p' if real else ''}) {{"]
    text += [f"  output {OUTPUTS[o][0]} {o} = {OUTPUTS[o][1]};" for o in outs]
    text += [f"  real x = {'p' if real else 'real(i) * r0 + r1'};", f"  real y = r2{' + gs' if r.random() < 0.3 else ''};",
             "  int age = 0;"]
    if r.random() < 0.3:
        text += ["  start {", "    x = x * 0.5 + gs;", f'    print("sm ", {body.shown}, " ", x, " ", numStrands(), "\\n");']
        if r.random() < 0.5:  # (not die: diderotc's runtime then runs other start methods twice, a known difference)
            text.append(f"    if ({r.choice(['x > gs', 'i % 2 == 0', 'x < 0.0', 'numStable() > 1'])}) stabilize;")
        text += ["  }"]
    text += ["  update {", "    age += 1;"] + STRAND_LOCALS + body.stmts("    ", 2, r.randint(4, 9))
    if r.random() < 0.6:  # the strand's state, step by step
        shown = ", \" \", ".join(["age", "x", "y", *outs])
        text.append(f'    print("q ", {body.shown}, " ", {shown}, "\\n");')
    never = r.random() < 0.25
    lim = r.choice(["3 + |i| % 4", "k1 + 2", f"{r.randint(2, 6)}"])
    if not never or r.random() < 0.5:
        text.append(f"    if (age >= {lim}{' && i != 1' if never else ''}) stabilize;")
    text += ["  }"]
    if r.random() < 0.4:
        text += ["  stabilize {"] + STRAND_LOCALS + [body.assign("    ") for _ in range(r.randint(1, 2))]
        if r.random() < 0.5:
            text.append(f'    print("sb ", {body.shown}, " ", age, " ", x, "\\n");')
        text += ["  }"]
    text += ["}"]
    if r.random() < 0.4:
        text += ["start {", f"  gs = {_reduction(r, 'real', outs)};",
                 f'  print("st ", {_reduction(r, "int", outs)}, " ", {_reduction(r, "bool", outs)}, "\\n");', "}"]
    if r.random() < 0.7:
        text += ["update {", "  gstep += 1;", f"  gs = {_reduction(r, 'real', outs)};"]
        if r.random() < 0.5:
            text.append(f"  gv = [{_reduction(r, 'real', outs)}, gs];")
        text += [f'  print("g ", gstep, " ", {_reduction(r, "real", outs)}, " ", {_reduction(r, "int", outs)}, " ", '
                 f'{_reduction(r, "bool", outs)}, " ", numActive(), " ", numStable(), "\\n");', "}"]
    its = [f"i in {_range(r, False)}"] + ([f"j in {_range(r, True)}"] if two else [])
    made = params + (f", {r.choice(['real(i) * r0', 'r1 - real(i)', 'gs'])}" if real else "")
    text.append(f"create_{'collection' if collection else 'array'} {{ S({made}) | {', '.join(its)} }}")
    argv = []
    for j in range(3):
        argv += [f"-r{j}", _num(r) if r.random() < 0.5 else repr(round(r.uniform(-2, 2), 2))]
    argv += ["-k0", str(r.choice([-1, 0, 1, 2, 3])), "-k1", str(r.choice([0, 1, 2, 4]))]
    if never or r.random() < 0.4:
        argv += ["-l", str(r.randint(2, 12))]
    name = r.choice(outs)
    if len(outs) == 1:
        argv += ["-o", "out.nrrd"] if r.random() < 0.5 else []
    elif r.random() < 0.5:
        argv += [f"-o-{name}", f"{name}2.nrrd"]
    snap = r.random() < 0.2
    if snap:
        argv += ["-s", str(r.randint(1, 3))]
    return Case(seed, "\n".join(text) + "\n", tuple(argv), ("--snapshot",) if snap else ())


# ------------------------------------------------------------------ fields over generated images (--mode fields)
# a voxel's shape -> the kind of its NRRD axis (None: a scalar image has no such axis)
VOXELS = {(): None, (2,): "2-vector", (3,): "3-vector", (2, 2): "2D-matrix", (3, 3): "3D-matrix"}
# formula fields of each dimension (not x[0]: diderotc's executables read an index of the position wrongly, so
# P(x) = x[0] printed 120 at [2, 3], its gradient [0, 0]; nor sin or cos of x • a in 2-D and 3-D: derivatives of
# their products and norms crash diderotc's compiler; docs/diderot.md)
FORMULAS = {1: ["x * x * 0.25 - x", "sin(x) + 0.5 * x", "x^3 * 0.125"],
            2: ["x • x * 0.25 + x • [1.0, -0.5]", "(x • [0.5, 0.25])^2 - x • x * 0.125", "(x • [0.5, -0.25])^3 * 0.25"],
            3: ["x • x * 0.25 - x • [0.0, 0.5, 1.0]", "(x • [1.0, 0.5, -0.25])^3 * 0.5", "(x • x)^2 * 0.0625 - x • [1.0, 0.5, 0.0]"]}
# the kernels whose pieces meet exactly at a knot, to every derivative their continuity allows (c1tent, c2tent and
# c2ctmr claim more continuity than tent's and ctmr's pieces have; bspln3, bspln5 and c4hexic are written with
# coefficients of 12 significant digits, as diderotc's code generator writes them, so their pieces differ there by
# up to ~1e-10 of a derivative): where the frame lands a knot an ulp to either side, only these agree within 1e-12
EXACT = ("tent", "ctmr")


@dataclass(frozen=True)
class _Field:
    """A field expression: its text, dimension, value shape and continuity; ``bare``: the image fields without
    border control it reads (a probe of it is guarded by ``inside`` of each: diderotc's executables read past an
    image's edge there); ``img``: the image whose points probe it (None: a formula, probed at any image's);
    ``formula``: whether it reads a formula field (whose derivatives past the first, and those of products and norms
    of it, crash diderotc's compiler: such a field is only added, scaled and probed, to ∇⊗∇)."""

    text: str
    dim: int
    shape: tuple
    k: int
    bare: tuple[str, ...]
    img: str | None
    formula: bool = False


def _tname(shape: tuple) -> str:
    return {(): "real", (2,): "vec2", (3,): "vec3"}.get(shape) or f"tensor[{','.join(map(str, shape))}]"


def _ftype(f: _Field) -> str:
    return f"field#{f.k}({f.dim})[{','.join(map(str, f.shape))}]"


def _image(r: random.Random, dim: int, shape: tuple) -> tuple:
    """A random image: (sizes, space directions, origin, samples in C order with components last); samples are
    multiples of 1/8 (exact in single precision), with -0 at times and, in a scalar image, one NaN or ∞ at times."""
    import numpy as np

    sizes = [r.randint(8, 12)] if dim == 1 else [r.randint(6, 9 if dim == 2 else 7) for _ in range(dim)]
    while True:  # a rotated, sheared, scaled frame that is not too flat
        a = r.uniform(0, 2 * math.pi)
        rot = np.eye(dim)
        if dim > 1:
            i, j = r.sample(range(dim), 2)
            rot[i, i], rot[i, j], rot[j, i], rot[j, j] = math.cos(a), -math.sin(a), math.sin(a), math.cos(a)
        cols = [[float(round(v, 4)) for v in rot[:, j] * r.choice([1, 1, -1]) * r.uniform(0.3, 0.8)
                 + np.array([r.choice([0.0, 0.0, round(r.uniform(-0.1, 0.1), 3)]) for _ in range(dim)])]
                for j in range(dim)]
        if abs(np.linalg.det(np.array(cols))) > 0.05 ** dim:
            break
    origin = [round(r.uniform(-2, 2), 2) for _ in range(dim)]
    comps = int(np.prod(shape)) if shape else 0
    data = np.array([r.randint(-16, 16) / 8 for _ in range(int(np.prod(sizes)) * max(comps, 1))])
    if r.random() < 0.4:
        data[data == 0] = [r.choice([0.0, -0.0]) for _ in range(int((data == 0).sum()))]
    if r.random() < 0.2 and not shape:  # (of a scalar: diderotc's ∇× of a vector image makes a ⊥ in one
        # component of a sample ⊥ in every component of the curl, where tensorlang's other components are finite)
        data[r.randrange(len(data))] = r.choice([math.nan, math.nan, math.inf, -math.inf])
    return sizes, cols, origin, data.reshape(tuple(sizes[::-1]) + ((comps,) if comps else ()))


def _world(geo: tuple, u: list[float]) -> list[float]:
    """The world position of index-space position ``u`` in an image of geometry ``geo`` (:func:`_image`)."""
    _, cols, origin, _ = geo
    return [o + sum(u[j] * cols[j][a] for j in range(len(u))) for a, o in enumerate(origin)]


def _index_point(r: random.Random, sizes: list[int], knots: bool) -> list[float]:
    """An index-space position: inside for every kernel, at a knot (where ``knots``: only for an image of
    :data:`EXACT` kernels; past them, a probe there depends on the position's last bit), near the border, at the
    edge of a kernel's `inside` region (support s: [s - 1, n - s]) within 1e-7, or outside."""
    out = []
    for n in sizes:
        kind = r.randrange(6)
        if kind == 0:
            out.append(r.randint(2, n - 3) + (0.0 if knots else 0.5))
        elif kind == 1:
            out.append(r.choice([0, n - 1]) + r.uniform(-1.2, 1.2))
        elif kind == 2:
            s = r.randint(1, 3)
            out.append(r.choice([s - 1, n - s]) + r.choice([-1e-7, 1e-7, 0.25, -0.25]))
        elif kind == 3:
            out.append(r.choice([-2.5, n + 1.5, -0.5, n - 0.5]))
        else:
            out.append(r.uniform(2, n - 3))
    return out


class _FieldGen:
    """Random field expressions over a pool of fields (see :func:`generate_fields`)."""

    def __init__(self, r: random.Random, pool: list[_Field], reals: list[str]):
        self.r, self.pool, self.reals = r, pool, reals

    def combine(self, f: _Field) -> _Field | None:
        """One operation on ``f`` (with another field of the pool at times), or None where the one drawn does not
        apply: continuity as diderotc types it (+ - * take the first's and refuse a rougher second; ∇ one less)."""
        r = self.r
        kind = r.randrange(8)
        same = [g for g in self.pool if g.dim == f.dim and g.shape == f.shape and g.k >= f.k and g is not f]
        scal = [g for g in self.pool if g.dim == f.dim and g.shape == () and g.k <= f.k and not g.formula]
        if f.formula and kind >= 3:
            return None

        def both(g: _Field, text: str, shape: tuple, k: int) -> _Field:
            return _Field(text, f.dim, shape, k, tuple(sorted(set(f.bare) | set(g.bare))), f.img or g.img,
                          f.formula or g.formula)
        if kind == 0 and same:
            g = r.choice(same)
            return both(g, f"({f.text} {r.choice('+-')} {g.text})", f.shape, f.k)
        if kind == 1:
            return replace(f, text=f"({r.choice(self.reals + ['2.5', '(-0.75)'])} * {f.text})")
        if kind == 2:
            return replace(f, text=f"({f.text} / {r.choice(self.reals + ['4.0'])})" if r.random() < 0.5 else f"(-{f.text})")
        if kind == 3 and scal:
            g = r.choice(scal)
            return both(g, f"({g.text} * {f.text})", f.shape, g.k)
        if kind == 4 and f.k >= 1 and f.shape == ():
            return replace(f, text=f"(∇{f.text})", shape=(f.dim,) if f.dim > 1 else (), k=f.k - 1)
        if kind == 5 and f.k >= 1 and f.shape and f.dim > 1 and len(f.shape) < 2:
            return replace(f, text=f"(∇⊗{f.text})", shape=f.shape + (f.dim,), k=f.k - 1)
        if kind == 6 and f.shape == () and f.k >= 1:  # (not sqrt: diderotc's executables make sqrt(F) * sqrt(F) F)
            return replace(f, text=f"({r.choice(['sin', 'exp', 'cos'])}({f.text}))" if r.random() < 0.3
                           else f"({f.text} * {f.text})")
        if kind == 7 and f.shape == (f.dim,) and f.dim > 1:
            return replace(f, text=f"|{f.text}|", shape=())
        return None

    def field(self, depth: int, dim: int | None = None) -> _Field:
        f = self.r.choice([g for g in self.pool if dim is None or g.dim == dim])
        for _ in range(depth):
            got = None
            for _ in range(10):
                got = got or self.combine(f)
            f = got or f
        return f

    def probe(self, f: _Field, point: str, over: bool = False) -> tuple[str, tuple]:
        """A probe of ``f`` or of a derivative of it at ``point`` (guarded by ``inside``): (text, its shape); where
        ``over``, a derivative one level past ``f``'s continuity, which diderotc refuses (and tensorlang must:
        not ∇•, which diderotc takes of a field#0 where tensorlang refuses it, docs/diderot.md; "" where there is
        none)."""
        r, d, k = self.r, f.dim, f.k + over
        opts = [("", f.shape)]
        if k >= 1 and f.shape == ():
            opts.append(("∇", (d,) if d > 1 else ()))
        if k >= 2 and f.shape == ():
            opts.append(("∇⊗∇" if d > 1 else "∇∇", (d, d) if d > 1 else ()))
        if k >= 3 and f.shape == () and d > 1 and r.random() < 0.3:
            opts.append(("∇⊗∇⊗∇", (d, d, d)))
        if k >= 1 and f.shape and d > 1 and len(f.shape) < 3:
            opts.append(("∇⊗", f.shape + (d,)))
        if k >= 1 and f.shape == (d,) and d > 1:
            opts += [("∇•", ()), ("∇×", () if d == 2 else (3,))]
        if k >= 2 and f.shape == (d,) and d > 1:
            opts.append(("∇⊗∇⊗", (d, d, d)))
        if f.shape in ((2, 2), (3, 3)):
            opts += [("trace", ()), ("det", ())]
        if f.formula:
            opts = [o for o in opts if o[0] in ("", "∇", "∇⊗∇", "∇∇", "trace", "det")]
        if over:
            opts = [o for o in opts if o[0].count("∇") > f.k and o[0] != "∇•"]
            if not opts:
                return "", ()
        op, shape = r.choice(opts)
        text = f"{op}({f.text})({point})" if op in ("trace", "det") else f"{op}{f.text}({point})"
        if f.bare:
            fill = "(-7.0)" if not shape else f"zeros[{','.join(map(str, shape))}]"
            text = f"({text} if {' && '.join(f'inside({point}, {b})' for b in f.bare)} else {fill})"
        return text, shape


def generate_fields(seed: int, lines: int = 40) -> Case:
    """A random program of fields over generated images and its command line: 1-D, 2-D and 3-D images of scalars,
    vectors and matrices on rotated, sheared frames, fields of every kernel with and without border control,
    global fields built from others, formula fields, field locals, and probes of them and of their derivatives
    (as far as each one's continuity allows) at points inside, near and past the border, in global
    initializers, a global start block, the strands' prints and their outputs."""
    r = random.Random(seed)
    reals = [f"r{j}" for j in range(4)]
    head = ["#version 2.0"] + [f"input real r{j} = {1.25 + 0.5 * j};" for j in range(4)]
    files, geos, pool, rough = [], {}, [], set()
    for m in range(r.randint(2, 3)):
        dim = r.choice([1, 2, 2, 3, 3])
        shape = r.choice([(), (), (2,), (3,), (dim, dim)] if dim > 1 else [(), (), (2,), (3,)])
        geo = _image(r, dim, shape)
        name = f"I{m}"
        geos[name] = geo
        kinds = ([VOXELS[shape]] if shape else []) + ["space"] * dim
        files.append((name, geo[3], kinds, (["none"] if shape else []) + [f"({','.join(map(repr, c))})" for c in geo[1]],
                      geo[2]))
        head.append(f"input image({dim})[{','.join(map(str, shape))}] {name};")
        for _ in range(r.randint(1, 2)):
            kern, border = r.choice(sorted(KERNELS)), r.choice(["", "", "clamp", "mirror", "wrap"])
            f = _Field(f"F{len(pool)}", dim, shape, KERNELS[kern], () if border else (f"F{len(pool)}",), name)
            head.append(f"{_ftype(f)} {f.text} = {kern} ⊛ {f'{border}({name})' if border else name};")
            rough |= set() if kern in EXACT else {name}
            pool.append(f)
    gen = _FieldGen(r, pool, reals)
    for n in range(r.randint(2, 4)):  # global fields of global fields, and formulas
        dims = sorted({f.dim for f in pool})
        if r.random() < 0.25:
            d = r.choice(dims)
            f = _Field(f"P{n}", d, (), r.choice([1, 2, 3]), (), None, True)
            head.append(f"{_ftype(f)} {f.text}(x) = {r.choice(FORMULAS[d])};")
        else:
            g = gen.field(r.randint(1, 2))
            f = replace(g, text=f"G{n}")
            head.append(f"{_ftype(f)} G{n} = {g.text};")
        pool.append(f)
    imgs = {d: sorted(n for n, g in geos.items() if len(g[0]) == d) for d in (1, 2, 3)}

    def where(f: _Field) -> str:
        return f.img or r.choice(imgs[f.dim])

    def literal(img: str) -> str:
        p = [_lit(v) for v in _world(geos[img], _index_point(r, geos[img][0], img not in rough))]
        return p[0] if len(p) == 1 else f"[{', '.join(p)}]"
    prints = []
    for n in range(r.randint(1, 3)):  # probes in globals' initializers
        f = gen.field(r.randint(0, 1))
        text, shape = gen.probe(f, literal(where(f)))
        head.append(f"{_tname(shape)} gp{n} = {text};")
        prints.append(f'    print("e{n} ", gp{n}, "\\n");')
    locs, body = [], []
    for n in range(r.randint(0, 2)):  # field locals
        g = gen.field(r.randint(1, 2))
        locs.append(replace(g, text=f"L{n}"))
        body.append(f"    {_ftype(g)} L{n} = {g.text};")
    for img, geo in geos.items():  # each strand's point in each image
        pts = [_world(geo, _index_point(r, geo[0], img not in rough)) for _ in range(STRANDS)]
        vals = [_lit(p[0]) if len(p) == 1 else "[" + ", ".join(_lit(v) for v in p) + "]" for p in pts]
        text = vals[-1]
        for s in range(STRANDS - 2, -1, -1):
            text = f"({vals[s]} if i == {s} else {text})"
        body.append(f"    {_tname((len(geo[0]),) if len(geo[0]) > 1 else ())} p{img} = {text};")
    start = []
    for j in range(r.randint(0, 2)):  # probes in a global start block
        f = gen.field(1)
        start.append(f'  print("e{90 + j} ", {gen.probe(f, literal(where(f)))[0]}, "\\n");')
    start = ["start {", *start, "}"] if start else []
    gen.pool = pool + locs
    for j in range(len(prints), lines):
        f = gen.field(r.randint(0, 2))
        over = gen.probe(f, "p" + where(f), over=True)[0] if r.random() < 0.08 else ""
        prints.append(f'    print("e{j} ", {over or gen.probe(f, "p" + where(f))[0]}, "\\n");' + (" // over" if over else ""))
    outs, sets = [], []
    for n in range(r.randint(1, 2)):
        f = gen.field(r.randint(0, 1))
        text, shape = gen.probe(f, "p" + where(f))
        outs.append(f"  output {_tname(shape)} o{n} = {'0.0' if not shape else f'zeros[{chr(44).join(map(str, shape))}]'};")
        sets.append(f"    o{n} = {text};")
    text = "\n".join(head + ["strand S (int i) {"] + outs + ["  update {"] + body + prints + sets + ["    stabilize;", "  }", "}"]
                     + start + [f"create_array {{ S(i) | i in 0..{STRANDS - 1} }}", ""])
    argv = [a for j in range(4) for a in (f"-r{j}", r.choice(["0", "-0"]) if r.random() < 0.15 else repr(round(r.uniform(-2, 2), 3)))]
    argv += [a for name in geos for a in (f"-{name}", f"../{name}.nrrd")]
    return Case(seed, text, tuple(argv), files=tuple(files))


# ------------------------------------------------------------------ running and comparing
_NUM = re.compile(r"-?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?)")


def lines_of(text: str) -> dict[str, str]:
    """Printed lines by strand and label: ``{"s0 e3": "1.5"}``."""
    out, seen = {}, {}
    for line in text.splitlines():
        label, _, rest = line.partition(" ")
        s = seen.get(label, 0)
        seen[label] = s + 1
        out[f"s{s} {label}"] = rest
    return out


def same_line(a: str, b: str, rtol: float = 1e-9) -> bool:
    """Two printed values agree: the same text between numbers, numbers within ``rtol`` of the line's largest (NaN
    where NaN, ±∞ where ±∞, the sign of every zero that is zero in both)."""
    if _NUM.split(a) != _NUM.split(b):
        return False
    xs, ys = [float(t) for t in _NUM.findall(a)], [float(t) for t in _NUM.findall(b)]
    scale = max((abs(x) for x in xs if math.isfinite(x)), default=0.0)
    for x, y in zip(xs, ys):
        if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
            if not (x == y or math.isnan(x) and math.isnan(y)):
                return False
        elif x == 0 and y == 0:
            if math.copysign(1, x) != math.copysign(1, y):
                return False
        elif abs(x - y) > rtol * scale:
            return False
    return True


def without_refused(case: Case, folder: Path, tries: int = 12) -> tuple[Case, list[tuple[str, str]]]:
    """``case`` less the printed lines diderotc refuses (each with its first error), as diderotc builds it in
    ``folder`` (:func:`diderotc_build`); a refusal outside the printed lines stops with error[internal]."""
    refused = []
    for _ in range(tries):
        (folder / "p.diderot").write_text(case.text)
        got = subprocess.run(["diderotc", "--double", "--exec", *case.flags, "p.diderot"], cwd=folder, capture_output=True,
                             text=True, timeout=600)
        if got.returncode == 0:
            diderotc_build(folder)
            return case, refused
        err = got.stdout + got.stderr
        rows = case.text.split("\n")
        bad = {}
        for m in re.finditer(r"\[p\.diderot:(\d+)\.[^\]]*\] Error: (.*)", err):
            bad.setdefault(int(m.group(1)) - 1, m.group(2))
        if not bad:  # a crash of diderotc's own (no line named): the first printed line that alone makes it
            n = _culprit(case, folder, [n for n, row in enumerate(rows) if 'print("e' in row])
            if n is None:
                raise RuntimeError(f"diderotc refused seed {case.seed}:\n{err}")
            bad = {n: "diderotc crashed: " + next((ln for ln in err.splitlines() if "uncaught" in ln or "rror" in ln),
                                                  err.strip().splitlines()[-1])}
        if any('print("e' not in rows[n] for n in bad):
            raise RuntimeError(f"diderotc refused seed {case.seed} outside its printed lines:\n{err}")
        refused += [(rows[n].strip(), why) for n, why in sorted(bad.items())]
        case = replace(case, text="\n".join(r for n, r in enumerate(rows) if n not in bad))
    raise RuntimeError(f"diderotc kept refusing seed {case.seed}")


def _culprit(case: Case, folder: Path, lines: list[int]) -> int | None:
    """The printed line among ``lines`` that alone keeps diderotc from building ``case`` (halving ``lines``), or
    None where no single line does."""
    rows = case.text.split("\n")
    keep = set(range(len(rows))) - set(lines)

    def fails(some: list[int]) -> bool:
        (folder / "q.diderot").write_text("\n".join(r for n, r in enumerate(rows) if n in keep or n in some))
        return subprocess.run(["diderotc", "--double", "--exec", "q.diderot"], cwd=folder, capture_output=True,
                              timeout=600).returncode != 0

    while len(lines) > 1:
        half = lines[:len(lines) // 2]
        lines = half if fails(half) else lines[len(lines) // 2:]
    return lines[0] if lines and fails(lines) else None


def diderotc_build(folder: Path) -> None:
    """Rebuild the C++ diderotc wrote in ``folder`` with -ffp-contract=off (its driver's flags otherwise)."""
    home, teem = Path(shutil.which("diderotc") or "").parent.parent, Path(shutil.which("unu") or "").parent.parent
    subprocess.run(["g++", "-m64", "-fPIC", "-march=native", "-O3", "-DNDEBUG", "-ffp-contract=off",
                    f"-I{home}/include", f"-I{teem}/include", "p.cxx", "-o", "p", str(home / "lib" / "diderot-rt-seq.o"),
                    f"-Wl,-rpath={teem}/lib", f"-L{teem}/lib", "-lteem", "-lm"], cwd=folder, check=True,
                   capture_output=True, timeout=600)


def run_diderotc(case: Case, folder: Path, cwd: Path | None = None) -> tuple[int, str]:
    """Run diderotc's executable built in ``folder``, in ``cwd`` (default ``folder``): (exit status, printed text)."""
    got = subprocess.run([str(folder / "p"), *case.argv], cwd=cwd or folder, capture_output=True, text=True, timeout=120)
    return got.returncode, got.stdout


def run_tensorlang(case: Case, folder: Path, backend: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """Run ``case`` as ``tensorlang run`` would, in ``cwd`` (default ``folder``, which holds p.diderot): (exit
    status, printed text or the error, the note of a C run that fell back to the interpreter)."""
    import io
    import os
    from contextlib import redirect_stderr, redirect_stdout

    import tensorlang as tl
    from tensorlang.errors import TensorLangError

    here = os.getcwd()
    os.chdir(cwd or folder)
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = tl.compile(str(folder / "p.diderot"), backend=backend).main(list(case.argv))
        return rc, out.getvalue(), "".join(ln for ln in err.getvalue().splitlines(True) if "note:" in ln)
    except TensorLangError as exc:
        return -1, f"{exc}", ""
    except Exception as exc:  # noqa: BLE001 - a crash is a finding
        return -2, f"{type(exc).__name__}: {exc}", ""
    finally:
        os.chdir(here)


def compare(want: str, got: str, rtol: float = 1e-9) -> list[tuple[str, str, str]]:
    """The lines where ``got`` differs from ``want`` (:func:`same_line`): (strand and label, diderotc's value, ours)."""
    a, b = lines_of(want), lines_of(got)
    return [(k, a.get(k, "<none>"), b.get(k, "<none>")) for k in sorted(set(a) | set(b), key=_order)
            if not same_line(a.get(k, ""), b.get(k, "<none>"), rtol)]


def _order(key: str) -> tuple[int, int]:
    s, e = key.split()
    return int(s[1:]), int(e[1:]) if e[1:].isdigit() else -1


def classify(expr: str, want: str, got: str) -> str:
    """The known difference (docs/diderot.md, "Generated programs against diderotc") a differing line shows, or
    "new": "identity" (diderotc rewrites products with identity[n] algebraically, so 0·∞ terms vanish, and merges
    identity[2] with identity[3] in one program), "clamp" (diderotc's trace of a 3×3 clamp, and so its inv,
    takes one diagonal entry), "ends" (products taken in another order overflow or underflow
    differently: a side ±∞, ⊥ or beyond 1e±290), "cancel" (a result that cancels to rounding noise, below 1e-12 on
    both sides: diderotc pulls scalar factors out of fused products, so u × normalize(u) is exactly 0 there),
    "noise" (an exact 0 against rounding noise below 1e-12 of a field's derivatives, each executor summing in its
    own order)."""
    if "identity[" in expr:
        return "identity"
    if "clamp(" in expr and any(f + "(" in expr for f in ("trace", "inv", "evals", "evecs")):
        return "clamp"
    nums = [float(t) for t in _NUM.findall(want) + _NUM.findall(got)]
    if any(not math.isfinite(x) or 0 < abs(x) < 1e-290 or abs(x) > 1e290 for x in nums):
        return "ends"
    a, b = [float(t) for t in _NUM.findall(want)], [float(t) for t in _NUM.findall(got)]
    if all(abs(x) < 1e-12 for x in a + b):
        return "cancel"
    if "∇" in expr and len(a) == len(b) and all(repr(x) == repr(y) or (x == 0) != (y == 0) and abs(x - y) < 1e-12 for x, y in zip(a, b)):
        return "noise"
    return "new"


def expression(case: Case, label: str) -> str:
    """The expression the line ``label`` prints."""
    m = re.search(rf'print\("{label} ", (.*), "\\n"\);', case.text)
    return m.group(1) if m else "?"


def compare_files(want: Path, got: Path, rtol: float = 1e-9) -> list[tuple[str, str, str]]:
    """Where the NRRD files written in ``got`` differ from those in ``want``: a file one side lacks, a header, or
    values (within ``rtol`` of the file's largest, NaN of either sign where NaN, the sign of every zero: the first
    four that differ, by position); values that agree once each side's rows are sorted are an "order" difference (a
    collection written in another order)."""
    from unseen_inputs import outputs

    a, b = outputs(want), outputs(got)
    diffs = []
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            diffs.append((name, "written" if name in a else "<none>", "written" if name in b else "<none>"))
        elif a[name]["header"] != b[name]["header"]:
            diffs.append((name, " ".join(a[name]["header"]), " ".join(b[name]["header"])))
        else:
            x, y = a[name]["values"], b[name]["values"]
            text = [" ".join(repr(v) for v in vs) for vs in (x, y)]
            if not same_line(*text, rtol):
                sizes = next(h for h in a[name]["header"] if h.startswith("sizes:")).split()[1:]
                n = int(sizes[0]) if len(sizes) > 1 else 1
                rows = [sorted(" ".join(repr(v) for v in vs[k:k + n]) for k in range(0, len(vs), n)) for vs in (x, y)]
                if same_line(" ".join(rows[0]), " ".join(rows[1]), rtol):
                    diffs.append((f"{name} order", text[0][:300], text[1][:300]))
                    continue
                top = repr(max((abs(v) for v in x if math.isfinite(v)), default=0.0))  # (each value against it)
                at = [k for k, (u, v) in enumerate(zip(x, y)) if not same_line(f"{top} {u!r}", f"{top} {v!r}", rtol)][:4]
                diffs.append((f"{name} values at {','.join(map(str, at))}", *(" ".join(repr(vs[k]) for k in at)
                                                                              for vs in (x, y))))
    return diffs


def _negative_extent(case: Case) -> bool:
    """Whether a range the strands are made over runs backwards by more than one (``2..-1``): diderotc's
    executables multiply the ranges' signed lengths, so ``i in 3..1, j in 2..0`` makes one strand (i = j = 0), and
    ``i in 3..0`` or ``i in -1..1, j in 2..-1`` fail to allocate (or crash in the global start block), where there
    are no strands (docs/diderot.md)."""
    its = re.findall(r"in (-?\w+)\.\.(-?\w+)", case.text.rsplit("create_", 1)[-1])
    if "-k0" not in case.argv:
        return False
    k0 = int(case.argv[case.argv.index("-k0") + 1])
    ends = [[k0 if e == "k0" else -k0 if e == "-k0" else int(e) for e in it] for it in its]
    return any(hi < lo - 1 for lo, hi in ends)


def _accepts(text: str, line: str, refused: set[str]) -> bool:
    """Whether tensorlang's front end takes ``text`` with ``line`` and without the other ``refused`` lines."""
    from tensorlang.errors import TensorLangError
    from tensorlang.lang.diderot import parse_program, strands, typecheck

    try:
        strands(typecheck(parse_program("\n".join(r for r in text.split("\n") if r.strip() == line
                                                 or r.strip() not in refused))))
    except TensorLangError:
        return False
    return True


def check_strands(case: Case, folder: Path, backends: list[str],
                  rtol: float = 1e-9) -> tuple[dict[str, list[tuple[str, str, str]]], str]:
    """Build ``case`` with diderotc in ``folder``, run it and tensorlang's ``backends`` each in a folder of its
    own, and say where each backend differs: the exit status, the printed lines (in order; "order" where only
    their order differs), the files written (:func:`compare_files`), and a C run's fallback to the interpreter
    (and, as "front end", a printed line diderotc refuses that tensorlang takes); and what diderotc's executable
    did (its exit status, lines printed, files written)."""
    text = case.text
    case, refused = without_refused(case, folder)
    accepts = [("accepts", line, why) for line, why in refused
               if not why.startswith("diderotc crashed") and _accepts(text, line, {ln for ln, _ in refused})]
    for line, why in refused:
        print(f"  diderotc refuses {line}: {why}", flush=True)
    runs = {}
    for who in ["diderotc", *backends]:
        (folder / who).mkdir()
        runs[who] = (run_diderotc(case, folder, folder / who) if who == "diderotc"
                     else run_tensorlang(case, folder, who, folder / who))
    want = runs["diderotc"]
    report = {}
    for backend in backends:
        got = runs[backend]
        diffs = [("rc", str(want[0]), f"{got[0]} {got[1][:300] if got[0] < 0 else ''}")] if got[0] != want[0] else []
        # a grid stopped by -l with no stable strand: diderotc's writes nothing, exit 1 (docs/diderot.md, known)
        limited = (want[0], got[0]) == (1, 0) and "create_array" in case.text and "-l" in case.argv
        if limited:
            diffs = [("rc grid-limit", "1", "0")]
        if got[0] == -1 and "error[backend]" in got[1]:  # (backend="c" refuses what it would leave to the interpreter)
            diffs = [("fallback", "", got[1])]
        backwards = diffs != [] and _negative_extent(case)
        if backwards:
            diffs = [("rc diderotc-ranges", str(want[0]), str(got[0]))]
        if got[0] >= 0 and not backwards:
            lines = compare(want[1], got[1], rtol)
            if lines and sorted(want[1].splitlines()) == sorted(got[1].splitlines()):
                lines = [("printed order", want[1][:300], got[1][:300])]
            diffs += lines + ([] if limited else compare_files(folder / "diderotc", folder / backend, rtol))
        if got[2]:
            diffs.append(("fallback", "", got[2].strip()))
        report[backend] = diffs
    if accepts:  # (a line diderotc refuses that tensorlang's front end takes)
        report["front end"] = accepts
    files = len(list((folder / "diderotc").glob("*.nrrd")))
    return report, f"rc {want[0]}, {len(want[1].splitlines())} lines, {files} files"


def _main_strands(seeds, backends: list[str], out: Path, mode: str = "strands") -> int:
    """``--mode strands`` and ``--mode fields``: each seed's program (:func:`generate_strands`,
    :func:`generate_fields`, whose input images are written first) built by diderotc and checked
    (:func:`check_strands`; fields within 1e-12 of a line's or file's largest value); a printed line that differs
    is classified (:func:`classify`); a program that differs or that diderotc refuses is kept in ``out``."""
    import json
    import tempfile

    from unseen_inputs import _write

    totals: dict[str, int] = {"programs": 0}
    for seed in seeds:
        case = (generate_fields if mode == "fields" else generate_strands)(seed)
        with tempfile.TemporaryDirectory() as tmp:
            for name, data, kinds, dirs, origin in case.files:
                _write(Path(tmp) / f"{name}.nrrd", data, kinds, dirs, origin)
            try:
                report, did = check_strands(case, Path(tmp), backends, 1e-12 if mode == "fields" else 1e-9)
            except RuntimeError as exc:
                print(exc, flush=True)
                (out / f"refused{seed}.diderot").write_text(case.text)
                continue
        totals["programs"] += 1
        for backend, diffs in report.items():
            for k, w, g in diffs:
                kind = k.split()[-1] if k.split()[-1] in ("order", "fallback", "grid-limit", "diderotc-ranges", "accepts") else "differ"
                if re.fullmatch(r"s\d+ e\d+", k) or " values at " in k:
                    kind = classify(expression(case, k.split()[-1]), w, g)
                    if kind == "ends" and [math.isfinite(float(t)) for t in _NUM.findall(w)] != [
                            math.isfinite(float(t)) for t in _NUM.findall(g)]:  # (⊥ or ∞ on one side only)
                        kind = "finite"
                totals[kind] = totals.get(kind, 0) + 1
                print(f"  {backend} {k} ({kind}): {expression(case, k.split()[-1])[:200]}\n    diderotc {w}\n"
                      f"    {backend:8} {g}", flush=True)
        print(f"seed {seed}: {' '.join(case.argv)}: {did}; " + ", ".join(f"{b} {len(v)} differ" for b, v in report.items()),
              flush=True)
        if any(report.values()):
            (out / f"{mode}{seed}.diderot").write_text(case.text)
            (out / f"{mode}{seed}.json").write_text(json.dumps({"argv": case.argv, "flags": case.flags,
                                                                 "diffs": report}, indent=1))
    print(totals)
    return 0


def main(argv: list[str]) -> int:
    import argparse
    import json
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    from unseen_inputs import make

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0:10")
    ap.add_argument("--c", action="store_true", help="also run the C executor")
    ap.add_argument("--out", default="fuzz-out")
    ap.add_argument("--lines", type=int, default=60)
    ap.add_argument("--mode", choices=["exprs", "strands", "fields"], default="exprs",
                    help="printed expressions, strand-level behaviour (generate_strands) or fields (generate_fields)")
    args = ap.parse_args(argv)
    lo, hi = map(int, args.seeds.split(":"))
    out = Path(args.out)
    out.mkdir(exist_ok=True)
    if args.mode != "exprs":
        return _main_strands(range(lo, hi), ["interp", "c"] if args.c else ["interp"], out, args.mode)
    totals = {"programs": 0, "lines": 0, "differ": 0}
    for seed in range(lo, hi):
        case = generate(seed, args.lines)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            make(folder)
            try:
                case, refused = without_refused(case, folder)
            except RuntimeError as exc:
                print(exc, flush=True)
                (out / f"refused{seed}.diderot").write_text(case.text)
                continue
            for line, why in refused:
                print(f"  diderotc refuses {line}: {why}", flush=True)
            want = run_diderotc(case, folder)
            runs = {"interp": run_tensorlang(case, folder, "interp")[:2]}
            if args.c:
                runs["c"] = run_tensorlang(case, folder, "c")[:2]
            totals["programs"] += 1
            totals["lines"] += len(lines_of(want[1]))
            report = {}
            for backend, got in runs.items():
                diffs = compare(want[1], got[1]) if got[0] >= 0 else [("run", f"rc {want[0]}", got[1])]
                if got[0] != want[0] and got[0] >= 0:
                    diffs.append(("rc", str(want[0]), str(got[0])))
                report[backend] = [(k, expression(case, k.split()[-1]), w, g) for k, w, g in diffs]
                for k, e, w, g in report[backend]:
                    kind = classify(e, w, g)
                    totals[kind] = totals.get(kind, 0) + 1
                    if kind == "new":
                        print(f"  NEW {backend} {k}: {e}\n    diderotc {w}\n    {backend:8} {g}", flush=True)
            bad = sum(len(v) for v in report.values())
            totals["differ"] += bad
            print(f"seed {seed}: {len(lines_of(want[1]))} lines, rc {want[0]}, "
                  + ", ".join(f"{b} {len(v)} differ" for b, v in report.items()), flush=True)
            if bad:
                (out / f"seed{seed}.diderot").write_text(case.text)
                (out / f"seed{seed}.json").write_text(json.dumps({"argv": case.argv, "diffs": report,
                                                                  "diderotc": want[1]}, indent=1))
    print(totals)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
