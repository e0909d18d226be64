"""The inputs of the programs in ``more/unseen8/`` (a seventh round: programs as researchers write them (ridges and
the eigensystem of a 3-D Hessian, the shape operator of isosurfaces, Jacobian, curl and divergence of vector-field
images, diffusion tensors, fields built by arithmetic), language corners (order-3 and order-4 tensors, slices,
functions of fields, int and real promotion, sequences built with ``@`` and printed) and NRRD files of other
sample types, encodings and orientations) and the stored outputs of ``diderotc --double --exec`` on them
(``more/unseen8/diderotc.json``); ``python tests/diderot/unseen8_inputs.py [RUN ...]`` remakes them where
diderotc is on PATH (docs/diderot.md, "Programs written to combine the features")."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import agreement
import numpy as np
from unseen_inputs import _grid as grid
from unseen_inputs import outputs  # noqa: F401  (re-exported for the tests)

PROGRAMS = Path(__file__).parent / "more" / "unseen8"
STORED = PROGRAMS / "diderotc.json"
_TYPES = {"float": "f4", "double": "f8", "unsigned char": "u1", "signed char": "i1", "short": "i2",
          "unsigned short": "u2", "int": "i4", "unsigned int": "u4", "long long": "i8"}


def write(path: Path, data, lines: list[str], t="float", enc="raw", endian="little", detached: str = "") -> None:
    """An NRRD file of ``data`` (slowest axis first) with the header ``lines`` after type, dimension and sizes."""
    data = np.asarray(data)
    raw = np.ascontiguousarray(data, np.dtype(_TYPES[t]).newbyteorder("<" if endian == "little" else ">")).tobytes()
    if enc == "hex":
        raw = (raw.hex() + "\n").encode()
    elif enc == "ascii":
        raw = ("\n".join(repr(x) for x in np.ravel(data).tolist()) + "\n").encode()
    head = ["NRRD0004", f"type: {t}", f"dimension: {data.ndim}", "sizes: " + " ".join(map(str, data.shape[::-1]))]
    head += lines + ([f"endian: {endian}"] if _TYPES[t][1] != "1" and enc != "ascii" else []) + [f"encoding: {enc}"]
    if detached:
        (Path(path).parent / detached).write_bytes(raw)
        Path(path).write_text("\n".join(head + [f"data file: {detached}"]) + "\n")
    else:
        Path(path).write_bytes(("\n".join(head) + "\n\n").encode() + raw)


def _make(f: Path) -> None:
    sp3 = ["space dimension: 3", "space directions: (0.25,0,0) (0,0.25,0) (0,0,0.25)", "space origin: (-1.5,-1.5,-1.5)"]
    g3 = grid([13, 13, 13])
    write(f / "vol.nrrd", g3, sp3)
    rot = ["space dimension: 3", "space directions: (0.25,0.15,0) (-0.15,0.25,0) (0.04,0,0.3)", "space origin: (-0.84,-2.4,-1.8)"]
    write(f / "vol_rot.nrrd", g3, rot)
    write(f / "vol_s8.nrrd", np.round(g3 * 40), sp3, t="signed char")
    write(f / "vol_u16be.nrrd", np.round(g3 * 1000 + 3000), sp3, t="unsigned short", endian="big")
    write(f / "vol_u32.nhdr", np.round(g3 * 1000 + 3000), sp3, t="unsigned int", detached="vol_u32.raw")
    write(f / "vol_hex.nrrd", g3, sp3, enc="hex")
    write(f / "vol_d.nrrd", g3, sp3, t="double")
    write(f / "vol_i64.nrrd", np.round(g3 * 100), sp3, t="long long")
    nan = g3.copy()
    nan[6, 6, 5] = np.nan
    write(f / "vol_nan.nrrd", nan, sp3)
    write(f / "vol_asc.nrrd", np.round(g3, 3), sp3 + ["kinds: space space space"], enc="ascii")
    sv = ["space dimension: 3", "space directions: none (0.3,0,0) (0,0.3,0) (0,0,0.3)", "space origin: (-1.5,-1.5,-1.5)"]
    write(f / "vec3.nrrd", grid([11, 11, 11], 3), sv + ["kinds: 3-vector space space space"])
    write(f / "vec3_be.nrrd", grid([11, 11, 11], 3), sv + ["kinds: 3-vector space space space"], endian="big")
    s2 = ["space dimension: 2", "space directions: none (0.3,0.02) (-0.02,0.3)", "space origin: (-1.65,-1.6)"]
    write(f / "vec2.nrrd", grid([12, 12], 2), s2 + ["kinds: 2-vector space space"])
    skew = ["space dimension: 3", "space directions: (0.25,0.1,0) (0,0.25,0.1) (0.08,0,0.25)", "space origin: (-2,-2,-1.8)"]
    write(f / "vol_skew.nrrd", g3, skew)
    vnan = grid([11, 11, 11], 3)
    vnan[5, 5, 6, 1] = np.nan
    write(f / "vec3_nan.nrrd", vnan, sv + ["kinds: 3-vector space space space"])
    write(f / "vol_flat.nrrd", g3[:1], sp3)
    g2 = grid([9, 8])
    s2d = ["space dimension: 2", "space directions: (0.5,0) (0,0.5)", "space origin: (-2,-1.75)"]
    raw = np.ascontiguousarray(g2, "<f4").tobytes()
    head = ["NRRD0004", "type: float", "dimension: 2", "sizes: 9 8", *s2d, "endian: little", "encoding: raw"]
    (f / "skip.raw").write_bytes(b"0123456789abcdef" + raw)
    (f / "skip.nhdr").write_text("\n".join(head + ["byte skip: 16", "data file: skip.raw"]) + "\n")
    (f / "lines.raw").write_bytes(b"junk line one\nand two\n" + raw)
    (f / "lines.nhdr").write_text("\n".join(head + ["line skip: 2", "data file: lines.raw"]) + "\n")
    (f / "tail.raw").write_bytes(b"a header of another format, 40 bytes...\n" + raw)
    (f / "tail.nhdr").write_text("\n".join(head + ["byte skip: -1", "data file: tail.raw"]) + "\n")
    for k in range(8):
        (f / f"slice{k}.raw").write_bytes(np.ascontiguousarray(g2[k], "<f4").tobytes())
    (f / "slices.nhdr").write_text("\n".join(head + ["data file: slice%d.raw 0 7 1 1"]) + "\n")
    (f / "list.nhdr").write_text("\n".join(head + ["data file: LIST 1"] + [f"slice{k}.raw" for k in range(8)]) + "\n")
    for k in range(2):  # two slabs of four slices, each gzip'd with a 4-byte prefix (byte skip: after inflating)
        (f / f"slab{k}.raw.gz").write_bytes(gzip.compress(b"junk" + np.ascontiguousarray(g2[4 * k:4 * k + 4], "<f4").tobytes(), mtime=0))
        (f / f"rows{k}.txt").write_text("a line to skip\n" + " ".join(map(repr, g2[4 * k:4 * k + 4].ravel().tolist())) + "\n")
    several = {"rev": ["data file: slice%d.raw 7 0 -1"], "gz": ["byte skip: 4", "data file: slab%d.raw.gz 0 1 1 2"],
               "txt": ["line skip: 1", "data file: LIST 2", "rows0.txt", "rows1.txt"],
               "lmiss": ["data file: LIST"] + [f"slice{k}.raw" for k in (0, 1, 2, 3, 9, 5, 6, 7)],
               "short": ["data file: slice%d.raw 0 3 1 2"], "count": ["data file: slice%d.raw 0 2 1 2"],
               "huge": ["data file: slice%d.raw 0 1000000000000 1"]}
    for name, lines in several.items():
        enc = {"gz": "encoding: gzip", "txt": "encoding: ascii"}.get(name, "encoding: raw")
        (f / f"{name}.nhdr").write_text("\n".join(head[:-1] + [enc] + lines) + "\n")
    c, r = 0.3, 0.173205080756887719
    write(f / "img_rot.nrrd", grid([8, 7]), ["space dimension: 2", f"space directions: ({c},{r}) ({-r},{c})", "space origin: (-1.3,0.4)"])
    write(f / "img_rotd.nrrd", grid([8, 7]), ["space dimension: 2", "space directions: (0.3,0.17) (-0.17,0.3)", "space origin: (-1.3,0.4)"])
    write(f / "img_z1.nrrd", g2[None], ["space dimension: 3", "space directions: (0.5,0,0) (0,0.5,0) (0,0,1)", "space origin: (-2,-1.75,0)"])
    write(f / "img_c1.nrrd", g2[..., None], ["space dimension: 2", "space directions: none (0.5,0) (0,0.5)", "space origin: (-2,-1.75)",
                                             "kinds: scalar space space"])
    m4 = grid([12, 12], 4) + np.array([2.0, 0.0, 0.0, 2.0])
    write(f / "mat2.nrrd", m4, ["space dimension: 2", "space directions: none (0.3,0.02) (-0.02,0.3)", "space origin: (-1.65,-1.6)",
                                "kinds: 2D-matrix space space"])
    write(f / "cmap.nrrd", grid([10], 3), ["space dimension: 1", "space directions: none (0.11)", "space origin: (0.02)",
                                            "kinds: 3-vector space"])
    write(f / "img.nrrd", grid([9, 8]), ["space dimension: 2", "space directions: (0.5,0) (0,0.5)", "space origin: (-2,-1.75)"])
    write(f / "img_2.nrrd", grid([9, 2]), ["space dimension: 2", "space directions: (0.5,0) (0,0.5)", "space origin: (-2,-1.75)"])
    t9 = grid([6, 6, 6], 9)
    t9 = (t9 + t9[..., [0, 3, 6, 1, 4, 7, 2, 5, 8]]) / 2 + 3 * np.array([1, 0, 0, 0, 1, 0, 0, 0, 1])  # symmetric, near 3I
    st = ["space dimension: 3", "space directions: none (0.45,0,0) (0,0.45,0) (0,0,0.45)", "space origin: (-1.1,-1.1,-1.1)"]
    write(f / "dti.nrrd", t9, st + ["kinds: 3D-matrix space space space"])
    write(f / "dti_sym.nrrd", t9[..., [0, 1, 2, 4, 5, 8]], st + ["kinds: 3D-symmetric-matrix space space space"])
    write(f / "dti_mf.nrrd", t9, st + ["kinds: 3D-matrix space space space", "measurement frame: (0,1,0) (-1,0,0) (0,0,1)"])


make, written = agreement.input_files(_make)  # every input file of RUNS (a few kilobytes each); what a run wrote


#: each run: (its name, the program, its command line)
RUNS: list[tuple[str, str, list[str]]] = (
    [(f"x01_{k}", "x01_ridge3", ["-vol", v]) for k, v in (("f", "vol.nrrd"), ("rot", "vol_rot.nrrd"), ("hex", "vol_hex.nrrd"),
                                                           ("nan", "vol_nan.nrrd"), ("asc", "vol_asc.nrrd"))]
    + [("x02", "x02_shapeop", ["-vol", "vol.nrrd"]), ("x02_rot", "x02_shapeop", ["-vol", "vol_rot.nrrd"])]
    + [("x03", "x03_vfield3", ["-vimg", "vec3.nrrd", "-v2img", "vec2.nrrd"]),
       ("x03_be", "x03_vfield3", ["-vimg", "vec3_be.nrrd", "-v2img", "vec2.nrrd"])]
    + [("x04", "x04_fieldalg", ["-img", "img.nrrd"]), ("x04_s", "x04_fieldalg", ["-img", "img.nrrd", "-s", "-0.25"]),
       ("x04_2", "x04_fieldalg", ["-img", "img_2.nrrd"])]
    + [("x05", "x05_dti", ["-dti", "dti.nrrd"]), ("x05_sym", "x05_dti", ["-dti", "dti_sym.nrrd"]),
       ("x05_mf", "x05_dti", ["-dti", "dti_mf.nrrd"])]
    + [("x06", "x06_tensor222", ["-img", "img.nrrd"])]
    + [("x07", "x07_promo", []), ("x07_n", "x07_promo", ["-m", "5", "-n", "-4"])]
    + [("x08", "x08_seqprint", []), ("x08_0", "x08_seqprint", ["-n", "0"])]
    + [("x09", "x09_types", [])]
    + [("x11", "x11_vecalg", ["-vimg", "vec3.nrrd"]), ("x12", "x12_rk4", ["-vimg", "vec3.nrrd"]),
       ("x12_h", "x12_rk4", ["-vimg", "vec3.nrrd", "-dt", "0.35", "-maxsteps", "30"]),
       ("x12_l", "x12_rk4", ["-vimg", "vec3.nrrd", "-l", "3"]), ("x12_0", "x12_rk4", ["-vimg", "vec3.nrrd", "-maxsteps", "0"])]
    + [(f"x13_{k}", "x13_oddinputs", a) for k, a in enumerate([
        [], ["-r", "+1.5e1", "-k", "+3", "-b", "true", "-s", "a b\\tc", "-m", "1", "2", "3", "4"], ["-b", "1"], ["-b", "yes"],
        ["-b", "on", "-k", "010", "-r", "0x10"], ["-s", ""], ["-k", "-0", "-r", "-.5e-0"], ["-v", ".5", "-2.", "1E-1"],
        ["-b", "0", "-m", "-0", "1e-3", "+2", ".25"], ["-b", "TRUE"], ["-r", "1e400"], ["-s", "x", "-s", "é ü"],
        ["-r", "0X1.8p1", "-m", "0x1", "-0x.8", "0x1p-1074", "+0x0"], ["-r", "0x"], ["-r", " 2"], ["-r", "infinity"]])]
    + [("x16", "x16_compose", ["-img", "img.nrrd", "-v2img", "vec2.nrrd", "-cmap", "cmap.nrrd"])]
    + [("x17", "x17_reduce", []), ("x17_1", "x17_reduce", ["-n", "1"]), ("x17_l2", "x17_reduce", ["-l", "2"])]
    + [("x18", "x18_condexpr", []), ("x18_x", "x18_condexpr", ["-tiny", "1e-310", "-big", "1e300"]),
       ("x18_n", "x18_condexpr", ["-tiny", "-0", "-big", "-inf"])]
    + [("x19", "x19_particles", []), ("x19_r", "x19_particles", ["-rad", "0.9", "-gens", "2"]),
       ("x19_s", "x19_particles", ["-rad", "0.2"])]
    + [("x20", "x20_skew3", ["-vol", "vol_skew.nrrd", "-vimg", "vec3_nan.nrrd"]),
       ("x20_flat", "x20_skew3", ["-vol", "vol_flat.nrrd", "-vimg", "vec3.nrrd"])]
    + [("x21", "x21_fieldfns", ["-img", "img.nrrd", "-v2img", "vec2.nrrd"])]
    + [("x22", "x22_globals", ["-img", "img.nrrd"]), ("x22_at", "x22_globals", ["-img", "img.nrrd", "-at", "-0.4", "0.35"])]
    + [("x23", "x23_seqinputs", []), ("x23_w", "x23_seqinputs", ["-w", "-1", "+.5e1", "0x2"]),
       ("x23_short", "x23_seqinputs", ["-w", "1", "2"])]
    + [(f"x24_{k}", "x24_nhdr", ["-img", f"{k}.nhdr"]) for k in ("skip", "lines", "tail", "slices", "list", "rev", "gz",
                                                                  "txt", "lmiss", "short", "count", "huge")]
    + [("x24_z1", "x24_nhdr", ["-img", "img_z1.nrrd"]), ("x24_c1", "x24_nhdr", ["-img", "img_c1.nrrd"])]
    + [("x25", "x25_edges", ["-img", "img_rot.nrrd"]),
       ("x25_d", "x25_edges", ["-img", "img_rotd.nrrd", "-d0", "0.3", "0.17", "-d1", "-0.17", "0.3"]),
       ("x25_o", "x25_edges", ["-img", "img_rot.nrrd", "-o", "-1.3", "0.4000000000000001"])]
    + [("x26", "x26_control", []), ("x26_big", "x26_control", ["-lim", "60"]), ("x26_neg", "x26_control", ["-lim", "-30"])]
    + [("x27", "x27_stateinit", ["-vol", "vol.nrrd"]), ("x27_rot", "x27_stateinit", ["-vol", "vol_rot.nrrd"])]
    + [("x28", "x28_mat2field", ["-mimg", "mat2.nrrd", "-v2img", "vec2.nrrd"])]
    + [("x14", "x14_products", ["-img", "img.nrrd"]), ("x15", "x15_tensorfield", ["-dti", "dti.nrrd"]),
       ("x15_mf", "x15_tensorfield", ["-dti", "dti_mf.nrrd"])]
    + [("x10", "x10_v1ridge", []), ("x10_1", "x10_v1ridge", ["-steps", "1"])]
)


def diderotc_flags(argv: list[str]) -> list[str]:
    """diderotc's build options for a run: none (every run takes the plain sequential executable)."""
    return []


if __name__ == "__main__":
    agreement.remake_main(sys.modules[__name__], sys.argv[1:])
