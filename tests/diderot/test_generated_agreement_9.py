"""The C executor against the strand interpreter on generated programs, where the generators of
test_compiled.py do not reach: images with ⊥, ±inf and ±0 samples probed by every kernel (scalar,
vector and matrix images in 1, 2 and 3 dimensions, with and without border control, at knots, at
the border, outside and at ⊥/±inf positions); strand lifecycles (die, stabilize, new, limits,
snapshots, reductions over empty sets, counts); and the basis library on ⊥, ±inf and ±0.

One C program per hypothesis example (a compile costs about a second): each example batches many
probes, strands and calls.  The quick tier draws one example of each; the full tier a few more."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import Phase, given, settings, strategies as st

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.sampling.image import image
from tensorlang.sampling.kernels import KERNELS
from tensorlang.targets.c import build as c_build
from agreement import printed_close  # tests/diderot is on the path: the folder is not a package

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")

QUICK = settings(max_examples=1, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
FULL = settings(max_examples=8, deadline=None)

NAN, INF = "(0.0/0.0)", "(1.0/0.0)"


def program(text: str):
    p = strands(check(parse_program(text)))
    assert strand_plan(p.checked)[1] is None, strand_plan(p.checked)[1]  # C runs all of it
    return p


def lit(x: float) -> str:
    """``x`` as Diderot source: ⊥ and ±inf as quotients, -0 as a negated literal."""
    if np.isnan(x):
        return NAN
    if np.isinf(x):
        return INF if x > 0 else f"(-{INF})"
    if x == 0 and np.signbit(x):
        return "(-0.0)"
    text = repr(float(x))
    return f"({text.replace('e', '.0e') if '.' not in text else text})"  # diderotc's literals have a point


def close_bits(name: str, x, y, rtol: float, lead: int = 1) -> None:
    """One output of both runs (``lead`` axes of strands): shape and dtype alike, ints and bools
    exactly, ⊥ and ±inf at the same places, finite reals within ``rtol`` of the output's largest (bit
    for bit when 0) and zeros that are zero in both of the same sign, in every strand whose finite
    values agree bit for bit: where one differs by rounding, a zero can take its sign from a rounded
    term (0 × -1e-28 is -0 where 0 × 0 is +0), so its sign is a rounding difference too."""
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape and x.dtype == y.dtype, name
    if x.dtype == object:  # sequences of any length: each strand's alike
        for u, v in zip(x.reshape(-1), y.reshape(-1)):
            close_bits(name, u, v, rtol, 0)
        return
    if x.dtype.kind != "f":
        assert np.array_equal(x, y), name
        return
    assert np.array_equal(np.isnan(x), np.isnan(y)), (name, np.argwhere(np.isnan(x) != np.isnan(y))[:4])
    assert np.array_equal(np.isinf(x), np.isinf(y)) and np.array_equal(x[np.isinf(x)], y[np.isinf(y)]), name
    fin = np.isfinite(x)
    scale = np.max(np.abs(x[fin]), initial=1.0)
    assert np.allclose(x[fin], y[fin], rtol=rtol, atol=rtol * scale), (name, np.max(np.abs(x[fin] - y[fin])))
    zeros = (x == 0) & (y == 0)
    if rtol:
        rows = (x == y) | ~np.isfinite(x)
        zeros &= np.broadcast_to(rows.reshape(rows.shape[:lead] + (-1,)).all(-1).reshape(
            rows.shape[:lead] + (1,) * (x.ndim - lead)), x.shape)
    assert np.array_equal(np.signbit(x[zeros]), np.signbit(y[zeros])), (name, "a zero's sign")


def both_agree(p, values=None, rtol: float = 0.0, **run):
    """The interpreter's and the C executor's results: counts, outputs (:func:`close_bits`), the
    printed text; the C executor's result."""
    a = p.run(values or {}, backend="interp", **run)
    b = p.run(values or {}, backend="c", **run)
    assert p.executor_note is None, p.executor_note
    assert (a.steps, a.active, a.stable, a.grid_shape) == (b.steps, b.active, b.stable, b.grid_shape)
    assert a.outputs.keys() == b.outputs.keys()
    for name in a.outputs:
        close_bits(name, a.outputs[name], b.outputs[name], rtol, len(a.grid_shape or (0,)))
    printed_close(a.printed, b.printed, rtol)
    two = p.run(values or {}, backend="c", threads=2, **run)  # the same program on two threads: the same bits
    for name in b.outputs:
        close_bits(name, b.outputs[name], two.outputs[name], 0.0)
    assert (b.steps, b.printed) == (two.steps, two.printed)
    return a, b


# ---------------------------------------------------------------- probes of images with ⊥, ±inf, ±0
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0]


def _shape(voxel: tuple, d: int, order: int) -> tuple:
    return voxel + ((d,) * order if d > 1 else ())


def _ty(shape: tuple) -> str:
    return "real" if not shape else f"tensor[{','.join(map(str, shape))}]"


def _diff(voxel: tuple, order: int, d: int) -> str:
    if order == 0:
        return ""
    if d == 1 and not voxel:  # a 1-D scalar field's derivatives are 1-D scalar fields
        return "∇" * order
    if voxel:
        return "∇⊗" * order
    return "∇⊗" * (order - 1) + "∇"


@st.composite
def probe_cases(draw):
    d = draw(st.integers(1, 3))
    voxel = draw(st.sampled_from([(), (), (2,), (3,), (2, 2)]))
    kernels = draw(st.lists(st.sampled_from(sorted(KERNELS)), min_size=2, max_size=4 if d < 3 else 3, unique=True))
    support = max(KERNELS[k].support for k in kernels)
    sizes = tuple(draw(st.integers(support, support + 2)) for _ in range(d))
    fields, decls, body, outs = [], [], [], []
    for j, name in enumerate(kernels):
        kern = KERNELS[name]
        border = draw(st.sampled_from(["", "clamp", "wrap", "mirror"]))
        img = f"{border}(img)" if border else "img"
        top = draw(st.integers(0, min(kern.continuity, (3 if d < 3 else 2) if not voxel else (2 if d < 3 else 1))))
        shape_v = "" if not voxel else f"[{','.join(map(str, voxel))}]"
        decls.append(f"field#{kern.continuity}({d}){shape_v or '[]'} F{j} = {name} ⊛ {img};")
        for order in range(top + 1):
            shape = _shape(voxel, d, order)
            out = f"o{j}_{order}"
            zero = "0.0" if not shape else f"zeros[{','.join(map(str, shape))}]"
            outs.append(f"output {_ty(shape)} {out} = {zero};")
            probe = f"{_diff(voxel, order, d)}F{j}(p)"
            if draw(st.booleans()):  # an inside guard, with -0 where it is false
                body.append(f"if (inside(p, F{j})) {{ {out} = {probe}; }} else {{ {out} = -{out}; }}")
            else:
                body.append(f"{out} = {probe};")
        outs.append(f"output bool in{j} = false;")
        body.append(f"in{j} = inside(p, F{j});")
        fields.append((name, border))
    # world space: a spacing and an origin (so index positions are exact), sometimes a shear
    spacing = [draw(st.sampled_from([1.0, 0.5, 2.0, -0.75])) for _ in range(d)]
    origin = [draw(st.sampled_from([0.0, -1.0, 0.25, 3.0])) for _ in range(d)]
    shear = d > 1 and draw(st.booleans())
    npos = {1: 12, 2: 6, 3: 4}[d]
    radius = max(KERNELS[k].radius for k in kernels)
    axes = []
    for a in range(d):
        n = sizes[a]
        # index positions: knots at and next to the border of every kernel's support, cell
        # midpoints, random points in and beyond the image, and ⊥/±inf
        idx = st.one_of(st.sampled_from([0.0, float(radius - 1), float(n - radius), float(n - 1), float(n), -1.0,
                                         float(n) / 2, float(n - radius) - 1e-12, radius - 1 + 1e-12]),
                        st.floats(-2.0, n + 1.0), st.sampled_from([np.nan, np.inf, -np.inf]))
        axes.append([draw(idx) for _ in range(npos)])
    text_axes = []
    for a in range(d):
        world = [origin[a] + spacing[a] * x for x in axes[a]]
        text_axes.append("{" + ", ".join(lit(x) for x in world) + "}")
    pdecl = "".join(f"real{{{npos}}} P{a} = {text_axes[a]};\n" for a in range(d))
    pos = "P0{i0}" if d == 1 else "[" + ", ".join(f"P{a}{{i{a}}}" for a in range(d)) + "]"
    if shear:  # positions off the axes: the world-to-index map mixes coordinates
        pos = f"{pos} + [{', '.join('0.0' if a else '0.125 * P1{i1}' for a in range(d))}]"
    params = ", ".join(f"int i{a}" for a in range(d))
    grid = ", ".join(f"i{a} in 0..{npos - 1}" for a in range(d))
    nl = "\n   "
    text = f"""#version 1.0
input image({d}){'[' + ','.join(map(str, voxel)) + ']' if voxel else '[]'} img;
{chr(10).join(decls)}
{pdecl}strand s ({params}) {{
   {nl.join(outs)}
   update {{
      {_ty((d,) if d > 1 else ())} p = {pos};
      {nl.join(body)}
      stabilize;
   }}
}}
initially [ s({", ".join(f"i{a}" for a in range(d))}) | {grid} ];
"""
    n = int(np.prod(sizes + voxel))
    data = np.array(draw(st.lists(st.floats(-8, 8, allow_nan=False).map(lambda x: round(x, 3)), min_size=n, max_size=n)))
    data = data.reshape(sizes + voxel)
    flat = data.reshape(sizes + (-1,))
    for _ in range(draw(st.integers(0, 4))):
        at = tuple(draw(st.integers(0, k - 1)) for k in sizes)
        flat[at + (draw(st.integers(0, flat.shape[-1] - 1)),)] = draw(st.sampled_from(SPECIALS))
    if draw(st.booleans()):  # a corner of signed zeros: probes there are ±0
        corner = tuple(slice(0, 3) for _ in sizes)
        data[corner] = draw(st.sampled_from([0.0, -0.0]))
    world = np.eye(d + 1)
    world[:d, :d] = np.diag(spacing)
    world[:d, d] = origin
    if shear:
        world[0, 1] = 0.125 * spacing[1]
    return text, image(data, dim=d, world=world), fields


def probes_agree(case) -> None:
    text, img, _ = case
    # the two runs read the same samples with the same weights; the kernels' polynomials and the
    # tap sums are evaluated in another order in C (Horner per tap, sums unrolled), so the
    # finite values agree to rounding, not bit for bit
    both_agree(program(text), {"img": img}, rtol=1e-12)


@needs_cc
@QUICK
@given(case=probe_cases())
def test_generated_probes_of_special_images_agree_quick(case):
    probes_agree(case)


@pytest.mark.slow
@needs_cc
@FULL
@given(case=probe_cases())
def test_generated_probes_of_special_images_agree(case):
    probes_agree(case)


# ---------------------------------------------------------------- strand lifecycles
REDUCERS = ["sum", "mean", "max", "min", "product"]
SETS = ["all", "active", "stable"]
LIFE_COND = st.sampled_from(["k % 3 == 1", "k % 4 == 0", "x > 2.0", "x < -1.0", "step == 2", "step > 3", "i % 2 == 0",
                             "gx > 1.0", "gn == 0", "f", "!f", "k > 5 && x < 3.0", "numActive() < 4", "gb"])


def life_stmt(collection: bool) -> st.SearchStrategy[str]:
    acts = ["k += 1;", "k -= i % 3;", "x = half(x) + real(k);", "x = x * -1.5 + 0.25;", "x += gx;", "f = !f;",
            "k += numStable();", "x += real(numStrands()) - real(numActive());", "x = bump(x, k);",
            'print(i, " ", k, " ", x, "\\n");', "x = -0.0 * x;", "x = x / real(k - 2);",
            # sequences of any length in the state (an output), and of fixed length
            "hist = hist @ x;", "ks = {k} @ ks;", "x += sum { t | t in hist };", "k += length(ks);",
            "if (length(hist) > 1) { x = hist{length(hist) - 2} - max { t | t in hist }; }",
            "{ real{3} q = {x, real(k), -0.0}; x = q{k % 3 if k >= 0 else 0} + min { t | t in q }; }",
            "hist = { t * 0.5 | t in hist };", "if (length(ks) > 3) { ks = {}; }"]
    ends = ["stabilize;", "die;"] if collection else ["stabilize;"]
    spawn = ["if (i < 12) { new S(i + 5); }"] if collection else []
    simple = st.sampled_from(acts)
    guarded = st.tuples(LIFE_COND, st.sampled_from(ends + spawn + acts)).map(lambda t: f"if ({t[0]}) {{ {t[1]} }}")
    return st.one_of(simple, guarded)


@st.composite
def life_cases(draw):
    collection = draw(st.booleans())
    body = draw(st.lists(life_stmt(collection), min_size=2, max_size=7))
    body.append("step += 1;")
    body.append("if (step > 6 || k > 30 || k < -30) { stabilize; }")
    body = draw(st.permutations(body))
    red = []
    for g, ty in (("gx", "real"), ("gn", "int"), ("gb", "bool")):
        field = {"real": "s.x", "int": "s.k", "bool": "s.f"}[ty]
        op = draw(st.sampled_from(["all", "exists"] if ty == "bool" else
                                  (REDUCERS if ty == "real" else ["sum", "max", "min", "product"])))
        red.append(f"{g} = {op} {{ {field} | s in S.{draw(st.sampled_from(SETS))} }};")
    extra = draw(st.sampled_from(["", "gc = numStable() + 10 * numActive();", "gc += 1;",
                                  'print("g ", gx, " ", gn, " ", gb, "\\n");']))
    stab = draw(st.sampled_from(["", "stabilize { x = x + 0.5; k = -k; }", "stabilize { f = true; }"]))
    n = draw(st.integers(0, 6))
    create = f"{{ S(i) | i in 0..{n - 1} }}" if collection else f"[ S(i) | i in 0..{n - 1} ]"
    nl = "\n      "
    text = f"""#version 1.0
input real p0 = {draw(st.sampled_from(["0.5", "-1.25", "0.0", "-0.0", "3.0", "1.0e300"]))};
real gx = 0.0;
int gn = 0;
bool gb = false;
int gc = 0;
function real half(real a) = a / 2.0;
function real bump(real a, int b) {{ if (b % 2 == 0) {{ return a + 1.0; }} return a - real(b); }}
strand S (int i) {{
   output real x = real(i) * p0;
   output int k = i;
   output bool f = i % 2 == 1;
   output real{{}} hist = {{}};
   int{{}} ks = {{i}};
   int step = 0;
   update {{
      {nl.join(body)}
   }}
   {stab}
}}
global {{ {' '.join(red)} {extra} }}
initially {create};
"""
    if draw(st.booleans()):  # Diderot 2.0's spelling: T[] and T[n] sequences, create_array / create_collection
        text = (text.replace("#version 1.0", "#version 2.0").replace("real{} hist", "real[] hist")
                .replace("int{} ks", "int[] ks").replace("real{3} q", "real[3] q").replace("\nglobal {", "\nupdate {")
                .replace("hist{length(hist) - 2}", "hist[length(hist) - 2]").replace("q{k % 3 if k >= 0 else 0}",
                                                                                     "q[k % 3 if k >= 0 else 0]"))
        kind = "collection" if collection else "array"
        text = text.replace(f"initially {create};", f"create_{kind} {{ S(i) | i in 0..{n - 1} }}")
        start = draw(st.sampled_from(["", "start { x = x * 2.0 + real(numActive()); }",
                                      "start { k += length(ks); if (i % 3 == 1) { stabilize; } }"]
                                     + (["start { if (i % 3 == 2) { die; } hist = {x}; }"] if collection else [])))
        text = text.replace("   update {", f"   {start}\n   update {{", 1)
    limit = draw(st.sampled_from([0, 0, 1, 3, 5]))
    snapshot = draw(st.sampled_from([0, 0, 1, 2]))
    return text, limit, snapshot


def lives_agree(case) -> None:
    text, limit, snapshot = case
    p = program(text)
    runs = []
    for backend, threads in (("interp", 1), ("c", 1), ("c", 2)):
        shots: list = []
        try:
            res = p.run({}, backend=backend, limit=limit, snapshot=snapshot, threads=threads,
                        on_snapshot=lambda step, r, shots=shots: shots.append((step, r)))
        except TensorLangError as exc:
            runs.append(exc.code)
            continue
        assert p.executor_note is None, p.executor_note
        runs.append((res, shots))
    if any(isinstance(r, str) for r in runs):
        assert runs[0] == runs[1] == runs[2], runs
        return
    (a, sa), *rest = runs
    for b, sb in rest:
        assert (a.steps, a.active, a.stable, a.grid_shape) == (b.steps, b.active, b.stable, b.grid_shape)
        for name in a.outputs:
            close_bits(name, a.outputs[name], b.outputs[name], 0.0)
        assert a.printed == b.printed
        assert [s for s, _ in sa] == [s for s, _ in sb]
        for (_, x), (_, y) in zip(sa, sb):
            for name in x.outputs:
                close_bits(name, x.outputs[name], y.outputs[name], 0.0)


@needs_cc
@QUICK
@given(case=life_cases())
def test_generated_lifecycles_agree_quick(case):
    lives_agree(case)


@pytest.mark.slow
@needs_cc
@FULL
@given(case=life_cases())
def test_generated_lifecycles_agree(case):
    lives_agree(case)


# ---------------------------------------------------------------- the basis library on ⊥, ±inf, ±0
REALS = st.one_of(st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-300, -1e300]),
                  st.floats(-10, 10, allow_nan=False).map(lambda x: round(x, 2)))
INTS = st.one_of(st.sampled_from([0, 1, -1, 2, -2, 3, -7, 7, 2**62, -(2**62)]), st.integers(-20, 20))

BASIS = """#version 1.0
input bool unguarded = false;
real{@N} V = {VALUES};
int{@N} I = {INTS};
strand s (int i, int j) {
   output vec4 r1 = [0.0, 0.0, 0.0, 0.0];
   output vec4 r2 = [0.0, 0.0, 0.0, 0.0];
   output vec4 r3 = [0.0, 0.0, 0.0, 0.0];
   output vec2 n2 = [0.0, 0.0];
   output vec3 n3 = [0.0, 0.0, 0.0];
   output tensor[2,2] i2 = zeros[2,2];
   output tensor[3,3] i3 = zeros[3,3];
   output vec4 dt = [0.0, 0.0, 0.0, 0.0];
   output vec2 e2 = [0.0, 0.0];
   output tensor[2,2] w2 = zeros[2,2];
   output vec3 e3 = [0.0, 0.0, 0.0];
   output tensor[3,3] w3 = zeros[3,3];
   output int{8} q = {0, 0, 0, 0, 0, 0, 0, 0};
   update {
      real a = V{i};
      real b = V{j};
      real c = V{(i + 2*j) % @N};
      r1 = [atan2(a, b), fmod(a, b), pow(a, b), min(a, b)];
      r2 = [max(a, b), |a|, lerp(a, b, c), clamp(a, b, c)];
      r3 = [a / b, -a, a * b - c, sqrt(a) + b];
      n2 = normalize([a, b]);
      n3 = normalize([a, b, c]);
      tensor[2,2] m2 = [[a, b], [c, a]];
      tensor[3,3] m3 = [[a, b, c], [b, c, a], [c, a, b]];
      i2 = inv(m2);
      i3 = inv(m3);
      dt = [det(m2), trace(m2), det(m3), trace(m3)];
      real{2} ev2 = evals([[a, b], [b, c]]);
      vec2{2} ew2 = evecs([[a, b], [b, c]]);
      e2 = [ev2{0}, ev2{1}];
      w2 = [ew2{0}, ew2{1}];
      real{3} ev3 = evals(m3);
      vec3{3} ew3 = evecs(m3);
      e3 = [ev3{0}, ev3{1}, ev3{2}];
      w3 = [ew3{0}, ew3{1}, ew3{2}];
      int k = I{i};
      int l = I{j};
      if (l != 0 || unguarded) { q = {k / l, k % l, min(k, l), max(k, l), |k|, -k, k * l, k - l}; }
      stabilize;
   }
}
initially [ s(i, j) | i in 0..@N-1, j in 0..@N-1 ];
"""


@st.composite
def basis_cases(draw):
    n = draw(st.integers(3, 7))
    values = draw(st.lists(REALS, min_size=n, max_size=n))
    ints = draw(st.lists(INTS, min_size=n, max_size=n))
    text = (BASIS.replace("@N", str(n)).replace("{VALUES}", "{" + ", ".join(lit(v) for v in values) + "}")
            .replace("{INTS}", "{" + ", ".join(map(str, ints)) + "}"))
    return text, 0 in ints


def basis_agree(case) -> None:
    text, zero = case
    p = program(text)
    both_agree(p, rtol=0.0)
    if zero:  # an integer division by zero: refused by both
        codes = []
        for backend in ("interp", "c"):
            with pytest.raises(TensorLangError) as info:
                p.run({"unguarded": True}, backend=backend)
            codes.append(info.value.code)
        assert codes[0] == codes[1]


@needs_cc
@QUICK
@given(case=basis_cases())
def test_generated_basis_calls_agree_quick(case):
    basis_agree(case)


@pytest.mark.slow
@needs_cc
@FULL
@given(case=basis_cases())
def test_generated_basis_calls_agree(case):
    basis_agree(case)
