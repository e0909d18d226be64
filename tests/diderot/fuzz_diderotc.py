"""Differential fuzzing of the Diderot front end against ``diderotc --double --exec`` (docs/diderot.md, "Generated
programs against diderotc"): random well-typed Diderot 2.0 programs, each a grid of strands that print many typed
expressions (over int, bool, real, vectors, matrices, tensor[2,2,2], the basis functions, and probes of fields of
the synthetic images of ``unseen_inputs``), with special values (⊥, ±∞, ±0, tiny and huge) given on the command
line so that diderotc cannot fold them.  Each program is compiled once by diderotc (its C++ rebuilt with
``-ffp-contract=off``, as tensorlang computes without fused multiply-adds) and run by tensorlang's interpreter (and,
with ``--c``, its C executor); every printed line is compared (numbers within 1e-9 relative, NaN where NaN, the
sign of every zero).

``python tests/diderot/fuzz_diderotc.py [--seeds A:B] [--c] [--out DIR]`` (diderotc on PATH); a program that
disagrees is kept in DIR with its command line and both outputs.  Not a test: ``test_check`` imports it and
generates a few programs as a smoke test."""

from __future__ import annotations

import math
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Case:
    """One generated program: its text and the command line of its run."""

    seed: int
    text: str
    argv: tuple[str, ...]


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
            got = getattr(self, "_" + t)(d - 1)
            if got is not None:
                return got
        return self.leaf(t)

    def _cond(self, t: str, d: int) -> str:
        return f"({self.expr(t, d)} if {self.expr('bool', d)} else {self.expr(t, d)})"

    def _int(self, d: int) -> str | None:
        e, r = self.expr, self.r
        k = r.randrange(9)
        if k == 0:
            return f"({e('int', d)} {r.choice('+-*')} {e('int', d)})"
        if k == 1:
            return f"({e('int', d)} {r.choice('/%')} {r.choice(['2', '3', '(-4)', '7'])})"
        if k == 2:
            return f"(-{e('int', d)})"
        if k == 4:
            return f"{r.choice(['min', 'max'])}({e('int', d)}, {e('int', d)})"
        if k == 5:
            return f"|({e('int', d)})|"
        if k == 6:
            return self._cond("int", d)
        return None

    def _bool(self, d: int) -> str | None:
        e, r = self.expr, self.r
        k = r.randrange(8)
        if k in (0, 1):
            t = r.choice(["real", "int"])
            return f"({e(t, d)} {r.choice(['<', '<=', '>', '>=', '==', '!='])} {e(t, d)})"
        if k == 2:
            return f"({e('bool', d)} {r.choice(['&&', '||'])} {e('bool', d)})"
        if k == 3:
            return f"!{e('bool', d)}"
        if k == 4 and self.fields:
            name, _, dim, _, _, _ = r.choice(self.fields)
            return f"inside({self.point(dim)}, {name})"
        if k == 5:
            return f"({e('bool', d)} == {e('bool', d)})"
        return None

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

    def _real(self, d: int) -> str | None:
        e, r = self.expr, self.r
        k = r.randrange(23)
        if k == 0:
            return f"({e('real', d)} {r.choice('+-*/')} {e('real', d)})"
        if k == 1:
            return f"(-{e('real', d)})"
        if k == 2:
            return f"({e('real', d)}^{r.choice(['2', '3', '(-1)', '0', '5', '(-2)'])})"
        if k == 3:
            return f"({e('real', d)}^{e('real', d)})"
        if k == 4:
            f = r.choice(["sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "erf", "erfc", "floor",
                          "ceil", "round", "trunc", "log10", "log2", "inv"])
            return f"{f}({e('real', d)})"
        if k == 5:
            f = r.choice(["atan2", "pow", "fmod", "min", "max"])
            return f"{f}({e('real', d)}, {e('real', d)})"
        if k == 6:
            return f"{r.choice(['clamp', 'lerp'])}({e('real', d)}, {e('real', d)}, {e('real', d)})"
        if k == 7:
            t = r.choice(["vec2", "vec3"])
            return f"({e(t, d)} • {e(t, d)})"
        if k == 8:
            t = r.choice(["vec2", "vec3", "mat2", "mat3", "real", "t222"])
            return f"|({e(t, d)})|"  # (diderotc reads "||" as a syntax error)
        if k == 9:
            t = r.choice(["mat2", "mat3"])
            return f"{r.choice(['trace', 'det'])}({e(t, d)})"
        if k == 10:
            t = r.choice(["mat2", "mat3"])
            return f"({e(t, d)} : {e(t, d)})"
        if k == 11:
            t = r.choice(["vec2", "vec3"])
            return f"{e(t, d)}[{r.randrange(SHAPES[t][0])}]"
        if k == 12:
            t = r.choice(["mat2", "mat3"])
            n = SHAPES[t][0]
            return f"{e(t, d)}[{r.randrange(n)},{r.randrange(n)}]"
        if k == 13:
            return f"real({e('int', d)})"
        if k == 14:
            return self._cond("real", d)
        if k == 15:
            t = r.choice(["mat2", "mat3"])
            return f"evals({e(t, d)})[{r.randrange(SHAPES[t][0])}]"
        if k in (16, 17):
            return self.probe("real")
        if k == 18:
            return f"({e('vec2', d)} × {e('vec2', d)})"
        if k == 19:
            return f"t3[{r.randrange(2)},{r.randrange(2)},{r.randrange(2)}]"
        if k == 20:
            return f"lerp({e('real', d)}, {e('real', d)}, {e('real', d)}, {e('real', d)}, {e('real', d)})"
        if k == 21:  # (x^n with n an int variable crashes diderotc's translator: "Fail: impossible")
            return f"pow({e('real', d)}, real({e('int', d)}))"
        return None

    def _tensor(self, t: str, d: int) -> str | None:
        e, r = self.expr, self.r
        shape = SHAPES[t]
        k = r.randrange(16)
        if k == 0:
            return f"({e(t, d)} {r.choice('+-')} {e(t, d)})"
        if k == 1:
            return f"({e('real', d)} * {e(t, d)})" if r.random() < 0.5 else f"({e(t, d)} {r.choice('*/')} {e('real', d)})"
        if k == 2:
            return f"(-{e(t, d)})"
        if k == 3:
            return self._cond(t, d)
        if k == 4 and len(shape) == 1:  # diderotc's modulate takes vectors only
            return f"modulate({e(t, d)}, {e(t, d)})"
        if k == 5:
            return f"lerp({e(t, d)}, {e(t, d)}, {e('real', d)})"
        if k == 6:
            return f"clamp({e('real', d)}, {e('real', d)}, {e(t, d)})"
        if k in (7, 8):
            return self.probe(t)
        if len(shape) == 1:
            n = shape[0]
            m = f"mat{n}"
            if k == 9:
                return f"({e(m, d)} • {e(t, d)})" if r.random() < 0.5 else f"({e(t, d)} • {e(m, d)})"
            if k == 10:
                return f"normalize({e(t, d)})"
            if k == 11 and n == 3:
                return f"({e(t, d)} × {e(t, d)})"
            if k == 12:
                return f"evecs({e(m, d)})[{r.randrange(n)}]"
            if k == 13:
                return f"{e(m, d)}[{r.randrange(n)},:]" if r.random() < 0.5 else f"{e(m, d)}[:,{r.randrange(n)}]"
            if k == 14:
                return "[" + ", ".join(e("real", d) for _ in range(n)) + "]"
            if k == 15 and n == 2:
                return f"t3[{r.randrange(2)},:,{r.randrange(2)}]"
            return None
        if len(shape) == 2:
            n = shape[0]
            v = f"vec{n}"
            if k == 9:
                return f"({e(t, d)} • {e(t, d)})"
            if k == 10:
                return f"({e(v, d)} ⊗ {e(v, d)})"
            if k == 11:
                return f"{r.choice(['transpose', 'inv'])}({e(t, d)})"
            if k == 12:
                return f"transpose({e(t, d)})"
            if k == 13 and n == 2:
                return f"(t3 • {e('vec2', d)})" if r.random() < 0.5 else f"t3[{r.randrange(2)},:,:]"
            if k == 14:
                return "[" + ", ".join("[" + ", ".join(e("real", d) for _ in range(n)) + "]" for _ in range(n)) + "]"
            if k == 15 and n == 2:
                return f"({e('vec2', d)} • t3)"
            return None
        if k == 9:
            return f"({e('mat2', d)} ⊗ {e('vec2', d)})" if r.random() < 0.5 else f"({e('vec2', d)} ⊗ {e('mat2', d)})"
        if k == 10:
            return f"(t3 • {e('mat2', d)})"
        return None

    def _vec2(self, d):
        return self._tensor("vec2", d)

    def _vec3(self, d):
        return self._tensor("vec3", d)

    def _mat2(self, d):
        return self._tensor("mat2", d)

    def _mat3(self, d):
        return self._tensor("mat3", d)

    def _t222(self, d):
        return self._tensor("t222", d)


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
    pre += [f"    int n{j} = {_pick('k', r, INTS)};" for j in range(3)]
    pre += ["    bool b0 = x0 < x1;", "    bool b1 = n0 > 0;", "    vec2 u2 = [x1, x2];", "    vec2 w2 = [x3, 0.5];",
            "    vec3 u3 = [x0, x1, x2];", "    vec3 w3 = [x3, x4, x5];", "    mat2 m2 = [[x0, x1], [x2, x3]];",
            "    mat3 m3 = [[x1, x2, x3], [x2, x4, x5], [x0, 1.0, x4]];",
            "    mat2 q2 = [[x4, 0.5], [0.5, x5]];", "    mat3 q3 = [[x3, 0.25, x0], [0.25, x1, 2.0], [x0, 2.0, x5]];",
            "    tensor[2,2,2] t3 = [[[x0, x1], [x2, x3]], [[x4, x5], [1.0, x0]]];"]
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


def without_refused(case: Case, folder: Path, tries: int = 6) -> tuple[Case, list[tuple[str, str]]]:
    """``case`` less the printed lines diderotc refuses (each with its first error), as diderotc builds it in
    ``folder`` (:func:`diderotc_build`); a refusal outside the printed lines stops with error[internal]."""
    refused = []
    for _ in range(tries):
        (folder / "p.diderot").write_text(case.text)
        got = subprocess.run(["diderotc", "--double", "--exec", "p.diderot"], cwd=folder, capture_output=True,
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
        case = Case(case.seed, "\n".join(r for n, r in enumerate(rows) if n not in bad), case.argv)
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


def run_diderotc(case: Case, folder: Path) -> tuple[int, str]:
    got = subprocess.run(["./p", *case.argv], cwd=folder, capture_output=True, text=True, timeout=120)
    return got.returncode, got.stdout


def run_tensorlang(case: Case, folder: Path, backend: str) -> tuple[int, str]:
    """Run ``case`` as ``tensorlang run`` would, in ``folder``: (exit status, printed text or the error)."""
    import io
    import os
    from contextlib import redirect_stderr, redirect_stdout

    import tensorlang as tl
    from tensorlang.errors import TensorLangError

    here = os.getcwd()
    os.chdir(folder)
    out = io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            rc = tl.compile(str(folder / "p.diderot"), backend=backend).main(list(case.argv))
        return rc, out.getvalue()
    except TensorLangError as exc:
        return -1, f"{exc}"
    except Exception as exc:  # noqa: BLE001 - a crash is a finding
        return -2, f"{type(exc).__name__}: {exc}"
    finally:
        os.chdir(here)


def compare(want: str, got: str) -> list[tuple[str, str, str]]:
    """The lines where ``got`` differs from ``want``: (strand and label, diderotc's value, ours)."""
    a, b = lines_of(want), lines_of(got)
    return [(k, a.get(k, "<none>"), b.get(k, "<none>")) for k in sorted(set(a) | set(b), key=_order)
            if not same_line(a.get(k, ""), b.get(k, "<none>"))]


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
    args = ap.parse_args(argv)
    lo, hi = map(int, args.seeds.split(":"))
    out = Path(args.out)
    out.mkdir(exist_ok=True)
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
            runs = {"interp": run_tensorlang(case, folder, "interp")}
            if args.c:
                runs["c"] = run_tensorlang(case, folder, "c")
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
