"""What the ``diderot`` suite runs besides tensorlang: its programs' inputs, the numpy/scipy
versions of the programs (vectorized over all strands: one array operation per super-step
over every active strand), and the real Diderot compiler's executables (an optional peer).

The numpy versions follow the programs in benchmarks/diderot/programs/ statement by
statement, with Diderot's conventions (checked against the real executables by
tests/diderot/test_bench_peers.py):

* an image's sample ``i`` (fastest axis first) sits at world ``origin + i * spacing``; a
  probe maps the world position to index space, ``n = floor(x)``, ``f = x - n``, and sums
  the samples ``n + o`` (``o`` over the kernel's taps) weighted by the kernel at ``f - o``;
  a gradient is the index-space gradient over the spacing;
* ``inside(x, F)`` holds when ``s - 1 < x < size - s`` on every axis, strictly, for the
  index-space position ``x`` itself (``s``: the kernel's support, 1 for tent, 2 for bspln3):
  that is the test diderotc generates (``inside2Ds1`` etc.); the runtime library's
  ``image::inside`` tests ``floor(x)`` instead, which differs at ``x = s - 1`` exactly;
* ``clamp`` border control clamps the sample indices a probe reads;
* a grid ``initially [ ... | j in .., i in .. ]`` has its first iterator outermost: its
  outputs are numpy arrays of shape (len j, len i) + the output's shape.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: the suite's Diderot programs (this checkout's benchmarks/diderot/programs)
PROGRAMS = Path(__file__).resolve().parents[2] / "diderot" / "programs"


# ------------------------------------------------------------------ images
@dataclass
class Img:
    """A sampled image: ``data`` in C order (slowest axis first; a voxel's components
    last), sample ``i`` of axis ``a`` (fastest first) at ``origin[a] + i * spacing``."""

    data: np.ndarray
    dim: int
    origin: np.ndarray
    spacing: float

    @property
    def sizes(self) -> tuple[int, ...]:  # fastest axis first
        return tuple(reversed(self.data.shape[:self.dim]))

    def to_index(self, x: np.ndarray) -> np.ndarray:
        return (x - self.origin) / self.spacing


def write_nrrd(path: str | Path, img: Img, dtype: str = "double") -> None:
    """``img`` as a raw little-endian NRRD (``double`` or ``float`` samples) with its world
    placement.  (An image input with no default file is read as float by Diderot's
    executables: they specialize on a proxy file's sample type, float without one.)"""
    vshape = img.data.shape[img.dim:]
    sizes = list(vshape[::-1]) + list(img.sizes)
    kinds = [{(): "", (2,): "2-vector", (3,): "3-vector"}[vshape]] if vshape else []
    d = img.dim
    dirs = ["none"] * len(vshape) + ["(" + ",".join(repr(float(img.spacing if b == a else 0.0)) for b in range(d)) + ")"
                                     for a in range(d)]
    header = ["NRRD0004", f"type: {dtype}", f"dimension: {len(sizes)}", "sizes: " + " ".join(map(str, sizes)),
              "kinds: " + " ".join(kinds + ["space"] * d), f"space dimension: {d}",
              "space directions: " + " ".join(dirs),
              "space origin: (" + ",".join(repr(float(o)) for o in img.origin) + ")",
              "endian: little", "encoding: raw"]
    with open(path, "wb") as fh:
        fh.write(("\n".join(header) + "\n\n").encode())
        fh.write(np.ascontiguousarray(img.data, dtype="<f8" if dtype == "double" else "<f4").tobytes())


def write_list_nrrd(path: str | Path, points: np.ndarray) -> None:
    """A sequence of vectors (``vec3{}`` input): sizes (components, count)."""
    n, c = points.shape
    header = ["NRRD0004", "type: double", "dimension: 2", f"sizes: {c} {n}", f"kinds: {c}-vector list",
              "endian: little", "encoding: raw"]
    with open(path, "wb") as fh:
        fh.write(("\n".join(header) + "\n\n").encode())
        fh.write(np.ascontiguousarray(points, dtype="<f8").tobytes())


def read_nrrd(path: str | Path) -> np.ndarray:
    """An output NRRD as a C-order array (slowest axis first, so a grid of vectors reads
    (rows, columns, components)), as float64."""
    import nrrd

    data, _ = nrrd.read(str(path), index_order="C")
    return np.asarray(data, dtype=np.float64)


# ------------------------------------------------------------------ kernels and probes
#: (support, first tap offset relative to floor(x))
KERNELS = {"tent": (1, 0), "bspln3": (2, -1)}


def weights(kernel: str, f: np.ndarray, order: int) -> np.ndarray:
    """The kernel's weights (order 0) or their derivative (order 1) for the taps around
    ``n = floor(x)``, ``f = x - n``: shape (len(f), taps)."""
    s, first = KERNELS[kernel]
    t = f[:, None] - np.arange(first, first + 2 * s)[None, :]
    if kernel == "tent":
        return 1 - np.abs(t) if order == 0 else -np.sign(t)
    a = np.abs(t)
    if order == 0:
        return np.where(a < 1, 2 / 3 - a * a + a ** 3 / 2, np.where(a < 2, (2 - a) ** 3 / 6, 0.0))
    sgn = np.sign(t)
    return sgn * np.where(a < 1, -2 * a + 1.5 * a * a, np.where(a < 2, -((2 - a) ** 2) / 2, 0.0))


def inside(img: Img, kernel: str, x: np.ndarray) -> np.ndarray:
    """Diderot's ``inside(x, F)`` for world points ``x`` (N, d)."""
    s = KERNELS[kernel][0]
    xi = img.to_index(x)
    sizes = np.array(img.sizes)
    return np.all((xi > s - 1) & (xi < sizes - s), axis=1)


def probe(img: Img, kernel: str, x: np.ndarray, grad: bool = False):
    """Value (and world-space gradient) of ``kernel ⊛ img`` at points ``x`` (N, d), all
    inside: the neighbourhood gathered with one fancy index, contracted axis by axis
    (separable weights, fastest axis first)."""
    d = img.dim
    s, first = KERNELS[kernel]
    taps = 2 * s
    xi = img.to_index(x)
    n = np.floor(xi)
    f = xi - n
    n = n.astype(np.intp) + first
    strides = [int(np.prod(img.sizes[:a])) for a in range(d)]  # fastest axis first
    offs = np.zeros((taps,) * d, dtype=np.intp)  # axes: slowest first
    for a in range(d):
        shape = [1] * d
        shape[d - 1 - a] = taps
        offs = offs + (np.arange(taps) * strides[a]).reshape(shape)
    base = sum(n[:, a] * strides[a] for a in range(d))
    hood = img.data.reshape(-1)[base[:, None] + offs.reshape(1, -1)].reshape((len(x),) + (taps,) * d)
    w = [weights(kernel, f[:, a], 0) for a in range(d)]
    dw = [weights(kernel, f[:, a], 1) for a in range(d)] if grad else []
    # contract the fastest axis (the array's last) first; one array per derivative direction
    parts: dict[tuple[int, ...], np.ndarray] = {(): hood}
    for a in range(d):
        nxt: dict[tuple[int, ...], np.ndarray] = {}
        for key, arr in parts.items():
            nxt[key] = np.einsum("n...i,ni->n...", arr, w[a])
            if grad and not key:
                nxt[(a,)] = np.einsum("n...i,ni->n...", arr, dw[a])
        parts = nxt
    value = parts[()]
    if not grad:
        return value
    g = np.stack([parts[(a,)] for a in range(d)], axis=1) / img.spacing
    return value, g


def cmap_tent_clamp(cmap: Img, t: np.ndarray) -> np.ndarray:
    """``tent ⊛ clamp(cmap)`` of a 1-D image of 3-vectors at ``t`` (N,)."""
    xi = (t - cmap.origin[0]) / cmap.spacing
    n = np.floor(xi)
    f = (xi - n)[:, None]
    last = cmap.data.shape[0] - 1
    i0 = np.clip(n.astype(np.intp), 0, last)
    i1 = np.clip(n.astype(np.intp) + 1, 0, last)
    return (1 - f) * cmap.data[i0] + f * cmap.data[i1]


def lerp5(a, b, x0, x, x1):
    return a + (b - a) * (x - x0) / (x1 - x0)


def norm(v: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ni,ni->n", v, v))


# ------------------------------------------------------------------ the programs in numpy
def vimg(inp: dict, count=None) -> np.ndarray:
    a = inp["args"]
    img, cmap = inp["images"]["img"], inp["images"]["cmap"]
    resU, resV = a["resU"], a["resV"]
    pix = a["height"] / (resV - 1)
    corner = np.array(a["center"]) - np.array([pix * (resU - 1), pix * (resV - 1)]) / 2
    vi, ui = np.meshgrid(np.arange(resV), np.arange(resU), indexing="ij")
    x = corner + np.stack([ui.ravel() * pix, vi.ravel() * pix], axis=1)
    rgb = np.tile(np.array(a["background"], dtype=float), (len(x), 1))
    ins = inside(img, "bspln3", x)
    v, g = probe(img, "bspln3", x[ins], grad=True)
    if count is not None:
        count[0] += int(ins.sum())
    gl = norm(g)
    col = cmap_tent_clamp(cmap, lerp5(0.0, 1.0, a["vmin"], v, a["vmax"]))
    pos = gl > 0
    dd = np.where(pos, (v - a["level"]) / np.where(pos, gl, 1.0), 0.0)
    dark = np.maximum(0, 1 - np.abs(dd) / a["width"])
    col = np.where(pos[:, None], col * (1 - dark)[:, None], col)
    rgb[ins] = col
    return rgb.reshape(resV, resU, 3)


def iso2d(inp: dict, count=None) -> np.ndarray:
    a = inp["args"]
    img = inp["images"]["img"]
    res = a["res"]
    j, i = np.meshgrid(np.arange(res), np.arange(res), indexing="ij")
    lo, hi = a["lo"], a["hi"]
    x = np.stack([lerp5(lo[0], hi[0], 0, i.ravel(), res - 1), lerp5(lo[1], hi[1], 0, j.ravel(), res - 1)], axis=1)
    steps = np.zeros(len(x), dtype=np.int64)
    state = np.zeros(len(x), dtype=np.int8)  # 0 active, 1 stable, 2 dead
    active = np.arange(len(x))
    while active.size:
        xa = x[active]
        die = ~inside(img, "bspln3", xa) | (steps[active] > a["maxSteps"])
        live = active[~die]
        state[active[die]] = 2
        v, g = probe(img, "bspln3", x[live], grad=True)
        v = v - a["level"]
        if count is not None:
            count[0] += len(live)
        gl = norm(g)
        flat = gl == 0.0
        state[live[flat]] = 2
        live, v, g = live[~flat], v[~flat], g[~flat]
        d = (-v)[:, None] * g / np.einsum("ni,ni->n", g, g)[:, None]
        x[live] += d
        steps[live] += 1
        done = norm(d) < a["tol"]
        state[live[done]] = 1
        active = live[~done]
    return x[state == 1]


def life(inp: dict, count=None) -> np.ndarray:
    """The board as bytes inside a border of dead cells that stays allocated: each generation
    sums the eight shifted views into one preallocated array and writes the rule in place (a
    generation is a few array passes over a quarter megabyte at 512²)."""
    a = inp["args"]
    board = inp["images"]["board"]
    N = a["N"]
    padded = np.zeros((N + 2, N + 2), dtype=np.uint8)
    alive = padded[1:-1, 1:-1]
    alive[...] = board.data > 0.5
    alive[[0, -1], :] = 0  # tent's inside(): 0 < index < N - 1 on either axis
    alive[:, [0, -1]] = 0
    n = np.empty_like(alive)
    p = padded
    for _ in range(a["gens"]):
        np.add(p[:-2, :-2], p[:-2, 1:-1], out=n)
        for view in (p[:-2, 2:], p[1:-1, :-2], p[1:-1, 2:], p[2:, :-2], p[2:, 1:-1], p[2:, 2:]):
            n += view
        alive[...] = (n == 3) | ((n == 2) & (alive == 1))
    assert alive.shape == (N, N)
    return alive.astype(np.int64)


def sphere(inp: dict, count=None) -> np.ndarray:
    from scipy.spatial import cKDTree

    a = inp["args"]
    rad, step = a["rad"], a["step"]
    pos = sphere_points(a["num"])
    for _ in range(a["gens"]):
        pairs = cKDTree(pos).query_pairs(rad, output_type="ndarray")
        i, j = pairs[:, 0], pairs[:, 1]
        d = pos[i] - pos[j]
        dl = norm(d)
        keep = dl > 0
        i, j, d, dl = i[keep], j[keep], d[keep], dl[keep]
        if count is not None:
            count[0] += len(i)
        p = ((1 - dl / rad) ** 3)[:, None] * d / dl[:, None]
        f = np.zeros_like(pos)
        for c in range(3):
            f[:, c] = np.bincount(i, p[:, c], len(pos)) - np.bincount(j, p[:, c], len(pos))
        t = f - np.einsum("ni,ni->n", f, pos)[:, None] * pos
        mv = step * t
        ml = norm(mv)
        big = ml > 0.5 * rad
        mv[big] = 0.5 * rad * mv[big] / ml[big][:, None]
        pos = pos + mv
        pos /= norm(pos)[:, None]
    return pos


def _camera(a: dict):
    eye, at, up = (np.array(a[k], dtype=float) for k in ("eye", "at", "up"))
    fwd = (at - eye) / np.linalg.norm(at - eye)
    right = np.cross(fwd, up)
    right /= np.linalg.norm(right)
    down = np.cross(fwd, right)
    dist = float(np.linalg.norm(at - eye))
    halfV = dist * np.tan(a["fov"] * np.pi / 360)
    halfU = halfV * a["resU"] / a["resV"]
    vi, ui = np.meshgrid(np.arange(a["resV"]), np.arange(a["resU"]), indexing="ij")
    off = (lerp5(-halfU, halfU, -0.5, ui.ravel(), a["resU"] - 0.5)[:, None] * right
           + lerp5(-halfV, halfV, -0.5, vi.ravel(), a["resV"] - 0.5)[:, None] * down)
    return eye, fwd, dist, fwd + off / dist


def mip(inp: dict, count=None) -> np.ndarray:
    from scipy import ndimage

    a = inp["args"]
    vol = inp["images"]["vol"]
    eye, _, dist, dirs = _camera(a)
    m = np.zeros(len(dirs))
    t = dist + a["near"]  # every ray takes the same steps
    while not t > dist + a["far"]:
        p = eye + t * dirs
        ins = np.flatnonzero(inside(vol, "tent", p))
        if ins.size:
            xi = vol.to_index(p[ins])
            val = ndimage.map_coordinates(vol.data, xi[:, ::-1].T, order=1, prefilter=False)
            m[ins] = np.maximum(m[ins], val)
            if count is not None:
                count[0] += ins.size
        t += a["dt"]
    return m.reshape(a["resV"], a["resU"])


def dvr(inp: dict, count=None) -> np.ndarray:
    a = inp["args"]
    vol = inp["images"]["vol"]
    eye, fwd, dist, dirs = _camera(a)
    L = np.array(a["light"], dtype=float)
    L /= np.linalg.norm(L)
    H = L - fwd
    H /= np.linalg.norm(H)
    tint = np.array(a["tint"], dtype=float)
    n_rays = len(dirs)
    rgb = np.zeros((n_rays, 3))
    tr = np.ones(n_rays)
    t = np.full(n_rays, dist + a["near"])
    active = np.arange(n_rays)
    while active.size:
        go = ~(t[active] > dist + a["far"])
        active = active[go]
        if not active.size:
            break
        p = eye + t[active, None] * dirs[active]
        t[active] += a["dt"]
        ins = inside(vol, "bspln3", p)
        r = active[ins]
        v, g = probe(vol, "bspln3", p[ins], grad=True)
        if count is not None:
            count[0] += r.size
        v = v - a["level"]
        gl = norm(g)
        pos = gl > 0
        safe = np.where(pos, gl, 1.0)
        alpha = np.where(pos, np.clip(1.5 - np.abs(v) / (safe * a["thick"]), 0, 1), 0.0)
        hit = alpha > 0
        r, alpha, g, gl = r[hit], alpha[hit], g[hit], gl[hit]
        n = -g / gl[:, None]
        diff = np.maximum(0, n @ L)
        spec = np.maximum(0, n @ H) ** a["shiny"]
        col = (a["ka"] + a["kd"] * diff)[:, None] * tint + (a["ks"] * spec)[:, None]
        rgb[r] += (tr[r] * alpha)[:, None] * col
        tr[r] *= 1 - alpha
        stop = np.zeros(n_rays, dtype=bool)
        stop[r[tr[r] < a["stopAt"]]] = True
        active = active[~stop[active]]
    return np.concatenate([rgb, (1 - tr)[:, None]], axis=1).reshape(a["resV"], a["resU"], 4)


NUMPY = {"vimg": vimg, "iso2d": iso2d, "life": life, "sphere": sphere, "mip": mip, "dvr": dvr}


# ------------------------------------------------------------------ inputs
def smooth2d(n: int) -> Img:
    """An n x n image over [-1,1]^2 of a smooth function with many isocontours."""
    h = 2.0 / (n - 1)
    c = -1 + h * np.arange(n)
    y, x = np.meshgrid(c, c, indexing="ij")
    data = np.sin(3 * x) * np.cos(4 * y) + 0.5 * x * y
    return Img(data, 2, np.array([-1.0, -1.0]), h)


def colormap(n: int = 64) -> Img:
    t = np.linspace(0, 1, n)
    data = np.stack([t, 1 - np.abs(2 * t - 1), 1 - t], axis=1)
    return Img(data, 1, np.array([0.0]), 1.0 / (n - 1))


def blob3d(n: int) -> Img:
    """An n^3 volume over [-1,1]^3: a bumpy sphere's distance-like function."""
    h = 2.0 / (n - 1)
    c = -1 + h * np.arange(n)
    z, y, x = np.meshgrid(c, c, c, indexing="ij", sparse=True)
    data = x * x + y * y + z * z + 0.15 * np.sin(6 * x) * np.sin(6 * y) * np.sin(6 * z)
    return Img(np.ascontiguousarray(np.broadcast_to(data, (n, n, n))), 3, np.array([-1.0] * 3), h)


def board(n: int, seed: int = 7) -> Img:
    rng = np.random.default_rng(seed)
    return Img((rng.random((n, n)) < 0.3).astype(float), 2, np.array([-(n // 2)] * 2, dtype=float), 1.0)


def sphere_points(n: int) -> np.ndarray:
    """sphere.diderot's starting points: particle i on a golden-angle spiral, pushed off it
    by a wobble, normalized (the same arithmetic as the program's)."""
    i = np.arange(n, dtype=np.float64)
    z = 1 - 2 * (i + 0.5) / n
    phi = 2.399963229728653 * i
    r = np.sqrt(1 - z * z)
    p = np.stack([r * np.cos(phi) + 0.2 * np.sin(1.7 * i), r * np.sin(phi) + 0.2 * np.sin(2.3 * i),
                  z + 0.2 * np.sin(3.1 * i)], axis=1)
    return p / norm(p)[:, None]


# ------------------------------------------------------------------ the real Diderot executables
def diderotc() -> str | None:
    return shutil.which("diderotc")


def cli_args(args: dict) -> list[str]:
    out = []
    for k, v in args.items():
        vals = v if isinstance(v, (list, tuple)) else [v]
        out += [f"-{k}"] + [("true" if x else "false") if isinstance(x, bool) else repr(x) if isinstance(x, float)
                            else str(x) for x in vals]
    return out


def cache_dir() -> Path:
    root = os.environ.get("TENSORLANG_BENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "tensorlang-bench")
    return Path(root) / "diderot"


@dataclass
class Built:
    exe: Path
    compile_s: float  # 0.0 when taken from the cache (the first build's time is in build.txt)
    first_compile_s: float


def build(program: str, target: str, proxies: dict[str, Path]) -> Built:
    """``diderotc --double --exec`` (``--target=pthread`` for "par") of a suite program,
    with the proxy images its defaults name present (Diderot specializes on them); cached
    by the program's text, the target and the proxies' headers."""
    src = PROGRAMS / f"{program}.diderot"
    key = hashlib.sha256(src.read_bytes() + target.encode()
                         + b"".join(Path(p).read_bytes()[:400] for p in sorted(map(str, proxies.values())))).hexdigest()[:16]
    where = cache_dir() / f"{program}-{target}-{key}"
    exe = where / program
    if exe.is_file() and (where / "build.txt").is_file():
        first = float((where / "build.txt").read_text().split()[0])
        return Built(exe, 0.0, first)
    where.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, where / src.name)
    for name, path in proxies.items():
        shutil.copy(path, where / name)
    cmd = ["diderotc", "--double", "--exec"] + (["--target=pthread"] if target == "par" else []) + [src.name]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=where, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    if proc.returncode != 0 or not exe.is_file():
        raise RuntimeError(f"diderotc failed: {(proc.stdout + proc.stderr).strip()[-300:]}")
    (where / "build.txt").write_text(f"{seconds:.3f} seconds: {' '.join(cmd)}\n")
    return Built(exe, seconds, seconds)


def run_exe(exe: Path, cwd: Path, args: list[str], output: str, timeout: float = 300) -> np.ndarray:
    proc = subprocess.run([str(exe)] + args + ["-o", output], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{exe.name} failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-300:]}")
    return read_nrrd(cwd / output)
