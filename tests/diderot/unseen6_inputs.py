"""The inputs of the programs in ``more/unseen6/`` (a fifth round: the same programs on NRRD files of other
orientations, spacings, axis fields, encodings and sample types; field algebra, kernels to their highest
derivatives, tensor[3,3] fields, border control, strands that never stabilize or all die, empty and
1-wide grids, prints and command-line inputs of every type) and the stored outputs of ``diderotc --double
--exec`` on them (``more/unseen6/diderotc.json``); ``python tests/diderot/unseen6_inputs.py [RUN ...]``
remakes them where diderotc is on PATH (docs/diderot.md, "Programs written to combine the features")."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import agreement
import numpy as np
from unseen_inputs import _grid as grid

PROGRAMS = Path(__file__).parent / "more" / "unseen6"
STORED = PROGRAMS / "diderotc.json"
_TYPES = {"float": "f4", "double": "f8", "unsigned char": "u1", "short": "i2", "int": "i4"}


def write(path: Path, data, lines: list[str], t="float", enc="raw", endian="little", detached=None) -> None:
    """An NRRD file of ``data`` (slowest axis first) with the header ``lines`` after type, dimension and sizes."""
    data = np.asarray(data)
    raw = np.ascontiguousarray(data, np.dtype(_TYPES[t]).newbyteorder("<" if endian == "little" else ">")).tobytes()
    if enc == "gzip":
        raw = gzip.compress(raw, mtime=0)
    elif enc == "ascii":
        raw = (" ".join(repr(float(x)) for x in np.ravel(data)) + "\n").encode()
    head = ["NRRD0004", f"type: {t}", f"dimension: {data.ndim}", "sizes: " + " ".join(map(str, data.shape[::-1]))]
    head += lines + ([f"endian: {endian}"] if _TYPES[t] != "u1" and enc != "ascii" else []) + [f"encoding: {enc}"]
    if detached:
        Path(detached).write_bytes(raw)
        Path(path).write_text("\n".join(head + [f"data file: {Path(detached).name}"]) + "\n")
    else:
        Path(path).write_bytes(("\n".join(head) + "\n\n").encode() + raw)


def make(folder: Path) -> None:
    """Every input file of RUNS, written into ``folder``."""
    f = Path(folder)
    sp = "space dimension: 2"
    g = grid([9, 8])
    # 2-D scalars, float: orientations
    write(f / "a_flipx.nrrd", g, [sp, "space directions: (-0.5,0) (0,0.5)", "space origin: (2.0,-1.75)", "kinds: space space"])
    write(f / "a_rot90.nrrd", g, [sp, "space directions: (0,0.5) (-0.5,0)", "space origin: (1.75,-2.0)", "kinds: domain domain"])
    write(f / "a_lps.nrrd", g, ["space: right-anterior", "space directions: (0.45,0.05) (-0.1,0.4)", "space origin: (-1.9,-1.6)"])  # no NRRD space name
    write(f / "a_aniso.nrrd", g, [sp, "space directions: (0.3,0) (0,0.6)", "space origin: (-1.3,-2.1)", "centerings: cell cell"])
    write(f / "a_units.nrrd", g, [sp, "space units: \"mm\" \"mm\"", "space directions: (0.5,0.1) (0.1,0.5)", "space origin: (-2,-2)", "labels: \"x\" \"y\"", "units: \"mm\" \"mm\""])
    write(f / "a_spc.nrrd", g, ["spacings: 0.5 0.4"])
    write(f / "a_spcneg.nrrd", g, ["spacings: -0.5 0.4"])
    write(f / "a_minmax.nrrd", g, ["axis mins: -2 -1.5", "axis maxs: 2 1.5", "centers: node cell"])
    write(f / "a_thick.nrrd", g, [sp, "space directions: (0.5,0) (0,0.5)", "space origin: (-2,-2)", "thicknesses: 1 nan", "old min: -1", "old max: 3", "content: hello world"])
    write(f / "a_gzbe.nhdr", g, [sp, "space directions: (0.5,0) (0,-0.5)", "space origin: (-2,1.75)"], enc="gzip", endian="big", detached=f / "a_gzbe.raw.gz")
    write(f / "a_ascii.nrrd", g, [sp, "space directions: (0.5,0) (0,0.5)", "space origin: (-2,-2)"], enc="ascii")
    write(f / "a_tiny.nrrd", g, [sp, "space directions: (1e-3,0) (0,1e-3)", "space origin: (-2e-3,-2e-3)"])
    write(f / "a_hugespc.nrrd", g, [sp, "space directions: (1e3,0) (0,1e3)", "space origin: (-2e3,-2e3)"])
    write(f / "a_3dspace.nrrd", g, ["space dimension: 3", "space directions: (0.5,0,0) (0,0.5,0)", "space origin: (-2,-2,0)"])
    write(f / "a_mframe.nrrd", g, [sp, "space directions: (0.5,0) (0,0.5)", "space origin: (-2,-2)", "measurement frame: (0,1) (1,0)"])
    write(f / "a_noorigin.nrrd", g, [sp, "space directions: (0.5,0) (0,0.5)"])
    write(f / "a_nodirs.nrrd", g, [sp, "space origin: (-2,-2)"])
    write(f / "a_kv.nrrd", g, [sp, "space directions: (0.5,0) (0,0.5)", "space origin: (-2,-2)", "foo:=bar", "# comment", "sample units: mm",
                                  "foo:=again"])
    write(f / "a_upper.nrrd", g, [sp, "space directions: (0.5,0) (0,0.5)", "space origin: (-2,-2)"], endian="big")
    upper = (f / "a_upper.nrrd").read_bytes().split(b"\n\n", 1)  # Teem's field values in any case
    (f / "a_upper.nrrd").write_bytes(upper[0].replace(b"float", b"FLOAT").replace(b"raw", b"Raw").replace(b"big", b"BIG")
                                     + b"\n\n" + upper[1])
    write(f / "a_ws.nrrd", g, [sp, "space directions: ( 0.5, 0.1 )(0 ,\t0.5)", "space origin: ( -2,-2 )"])
    write(f / "a_unknown.nrrd", g, [sp, "space directions: (0.5,0) (0,0.5)", "space origin: (-2,-2)", "kinds: ??? space"])
    write(f / "a_both.nrrd", g, [sp, "space: right-anterior-superior", "space directions: (0.5,0) (0,0.5)"])
    write(f / "a_sdim.nrrd", g, [sp, "spacings: 0.5 0.5", "space origin: (-2,-1)"])  # (a space: spacings unused)
    write(f / "a_sdimmm.nrrd", g, [sp, "axis mins: -1 -1", "axis maxs: 1 1"])
    # 3-D scalars
    sp3 = "space dimension: 3"
    g3 = grid([6, 5, 4])
    write(f / "b_lps.nrrd", g3, ["space: left-posterior-superior", "space directions: (-0.7,0,0) (0,-0.75,0.1) (0,0.1,0.8)", "space origin: (1.6,1.5,-1.2)", "kinds: space space space"])
    write(f / "b_perm.nrrd", g3, [sp3, "space directions: (0,0.7,0) (0,0,0.75) (0.8,0,0)", "space origin: (-1.2,-1.6,-1.5)"])
    write(f / "b_spc.nrrd", g3, ["spacings: 0.7 0.75 0.8", "axis mins: -1 -1 -1"])
    # 2-D vectors
    gv = grid([9, 8], 2)
    write(f / "c_vec.nrrd", gv, [sp, "space directions: none (0.5,0) (0,0.5)", "space origin: (-2,-2)", "kinds: 2-vector space space"])
    write(f / "c_mframe.nrrd", gv, [sp, "space directions: none (0.5,0) (0,0.5)", "space origin: (-2,-2)", "kinds: 2-vector space space", "measurement frame: (0,1) (-1,0)"])
    write(f / "c_nokinds.nrrd", gv, [sp, "space directions: none (0.5,0) (0,0.5)", "space origin: (-2,-2)"])
    # 1-D
    g1 = grid([12])
    write(f / "d_1.nrrd", g1, ["space dimension: 1", "space directions: (0.4)", "space origin: (-2.2)"])
    write(f / "d_neg.nrrd", g1, ["space dimension: 1", "space directions: (-0.4)", "space origin: (2.2)"])
    write(f / "d_spc.nrrd", g1, ["spacings: 0.3", "axis mins: -1.7"])
    write(f / "d_kind.nrrd", g1, ["kinds: domain", "spacings: 0.35"])
    # sequences (fastest axis: an item's components)
    v2 = [[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]]
    write(f / "r.nrrd", [0.5, -1.25, 3.0], ["kinds: list"], t="double")
    write(f / "r_f.nrrd", [0.5, -1.25, 3.0, 8.0], [])
    write(f / "r_i.nrrd", [5, -2, 3], [], t="int")
    write(f / "r_u8.nrrd", [5, 2], [], t="unsigned char")
    write(f / "r_2d.nrrd", [[1.0, 2.0], [3.0, 4.0]], [], t="double")
    write(f / "v2.nrrd", v2, ["kinds: 2-vector list"], t="double")
    write(f / "v2_nok.nrrd", v2[:2], [], t="double")
    write(f / "v2_gz.nrrd", v2, ["kinds: 2-vector list"], enc="gzip", endian="big")
    write(f / "v2_lf2.nrrd", [[1.0, 3.0], [2.0, 4.0]], ["kinds: list 2-vector"], t="double")
    write(f / "v2_wrong.nrrd", [[1.0, 2.0, 0.0], [3.0, 4.0, 0.0]], ["kinds: 3-vector list"], t="double")
    write(f / "m2.nrrd", [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], ["kinds: 2D-matrix list"], t="double")
    write(f / "m2_s.nrrd", [[1, 2, 3, 4], [5, 6, 7, 8], [-1, 0, 2, 9]], [], t="short", endian="big")
    write(f / "e_m3.nrrd", grid([6, 6, 6], 9), ["space dimension: 3", "space origin: (-1,-1,-1)",
          "space directions: none (0.4,0,0) (0,0.4,0.05) (0,-0.05,0.4)", "kinds: 3D-matrix space space space"])


def written(folder: Path) -> dict[str, dict]:
    """What a run wrote into ``folder``, less the input files ``make`` wrote."""
    return agreement.written(folder, make)


#: each run: (its name, the program, its command line)
RUNS: list[tuple[str, str, list[str]]] = (
    [(f"g2_{n}", "g2", ["-img", f"a_{n}.nrrd"]) for n in (
        "flipx", "rot90", "aniso", "spc", "spcneg", "minmax", "thick", "ascii", "tiny", "hugespc", "3dspace", "mframe",
        "noorigin", "nodirs", "kv", "lps", "units", "upper", "ws", "unknown",
        "both", "sdim", "sdimmm")]
    + [("g2_gzbe", "g2", ["-img", "a_gzbe.nhdr"])]
    + [(f"g3_{n}", "g3", ["-img", f"b_{n}.nrrd"]) for n in ("lps", "perm", "spc")]
    + [(f"gv2_{n}", "gv2", ["-img", f"c_{n}.nrrd"]) for n in ("vec", "mframe", "nokinds")]
    + [(f"g1_{n}", "g1", ["-img", f"d_{n}.nrrd"]) for n in ("1", "neg", "spc", "kind")]
    + [(p, p, []) for p in ("v01_fieldalg", "v02_kernhi", "v03_mat3", "v04_heseig2", "v05_border", "v10_prints",
                            "v11_inputs", "v12_fieldops", "v13_mixkern", "v14_vecops", "v15_hess3", "v16_fieldparam",
                            "v07_alldie", "v08_empty", "v09_grid1")]
    + [("v06_l3", "v06_never", ["-l", "3"]), ("v06_l9", "v06_never", ["-l", "9"]), ("v06_l20", "v06_never", ["-l", "20"]),
       ("v07_none", "v07_alldie", ["-top", "-1"]), ("v08_one", "v08_empty", ["-lo", "0", "-hi", "0"]),
       ("v09_none", "v09_grid1", ["-m", "-1"]),
       ("v10_odd", "v10_prints", ["-name", "a b  c", "-flag", "false", "-r", "1e-3", "-n", "3"]),
       ("v10_nan", "v10_prints", ["-r", "nan"]), ("v10_inf", "v10_prints", ["-r", "-inf", "-n", "-0"]),
       ("v11_all", "v11_inputs", ["-a", "3", "-k", "-4", "-u", "-1", "-2", "-3", "-b", "true", "-s", "with space",
                                  "-m", "1", "2", "3", "4", "-q", "1e-3", "-2", "3"]),
       ("v11_twice", "v11_inputs", ["-a", "1", "-a", "2", "-b", "yes"]), ("v11_empty", "v11_inputs", ["-b", "1", "-s", ""]),
       ("v11_short", "v11_inputs", ["-u", "1", "2"]), ("v11_unknown", "v11_inputs", ["-zz", "2"]),
       ("v11_novalue", "v11_inputs", ["-a"]), ("v11_huge", "v11_inputs", ["-a", "1e400"]),
       ("v11_maybe", "v11_inputs", ["-b", "maybe"]), ("v11_inf", "v11_inputs", ["-a", "inf", "-k", "+3"]),
       ("v11_point", "v11_inputs", ["-a", ".5"]),
       ("v17_seqfiles", "v17_seqfiles", []),
       ("v17_types", "v17_seqfiles", ["-rs", "r_f.nrrd", "-ps", "v2_gz.nrrd", "-ms", "m2_s.nrrd"]),
       ("v17_more", "v17_seqfiles", ["-rs", "r_i.nrrd", "-ps", "v2_nok.nrrd"]),
       ("v17_u8", "v17_seqfiles", ["-rs", "r_u8.nrrd", "-ps", "v2_lf2.nrrd"]),
       ("v17_wrong", "v17_seqfiles", ["-ps", "v2_wrong.nrrd"]), ("v17_2d", "v17_seqfiles", ["-rs", "r_2d.nrrd"]),
       ("v17_scalars", "v17_seqfiles", ["-ps", "r.nrrd"]), ("v17_nofile", "v17_seqfiles", ["-rs", "nofile.nrrd"]),
       ("v11_nan", "v11_inputs", ["-a", "-nan", "-u", "-nan", "1", "NaN", "-b", "TRUE", "-k", "010"]),
       ("v11_spell", "v11_inputs", ["-a", "-1.5e+2", "-u", "1.", "-.5", "infinity", "-b", "Yes", "-k", "-0"])])


def diderotc_flags(argv: list[str]) -> list[str]:
    """diderotc's build options for a run: none (every run takes the plain sequential executable)."""
    return []


if __name__ == "__main__":
    agreement.remake_main(sys.modules[__name__], sys.argv[1:])
