"""The inputs of the programs in ``more/unseen7/`` (a sixth round: the scalar basis, int division, linear
algebra and prints on NaN, infinities, signed zeros and extremes given on the command line; reductions over
empty sets, globals written by the global update, strands born by ``new`` cut by ``-l``, stabilize and die in
start methods; programs shaped like the public examples (a probe window, a ray cast, Heron's iteration) run
with other sizes, cameras, steps and limits; hostile command lines) and the stored outputs of ``diderotc
--double --exec`` on them (``more/unseen7/diderotc.json``); ``python tests/diderot/unseen7_inputs.py [RUN ...]``
remakes them where diderotc is on PATH (docs/diderot.md, "Programs written to combine the features")."""

from __future__ import annotations

import sys
from pathlib import Path

import agreement
import numpy as np
from unseen6_inputs import write
from unseen_inputs import _grid as grid

PROGRAMS = Path(__file__).parent / "more" / "unseen7"
STORED = PROGRAMS / "diderotc.json"


def make(folder: Path) -> None:
    """Every input file of RUNS, written into ``folder`` (a few hundred bytes each)."""
    f = Path(folder)
    sp = ["space dimension: 2", "space directions: (0.5,0) (0,0.5)", "space origin: (-1.5,-1.25)"]
    g = grid([7, 6])
    write(f / "p2.nrrd", g, sp)
    write(f / "p2_u8.nrrd", np.clip(np.round(g * 20 + 100), 0, 255), sp, t="unsigned char")
    write(f / "p2_crop.nrrd", g[1:4, 2:6], ["space dimension: 2", "space directions: (0.5,0) (0,0.5)", "space origin: (-0.5,-0.75)"])
    write(f / "p2_pad.nrrd", np.pad(g, 2, mode="edge"), ["space dimension: 2", "space directions: (0.5,0) (0,0.5)", "space origin: (-2.5,-2.25)"])
    write(f / "p2_half.nrrd", g[::2, ::2], ["space dimension: 2", "space directions: (1,0) (0,1)", "space origin: (-1.5,-1.25)"], t="double")
    write(f / "p2_tiny.nrrd", g[:4, :4], sp, t="short")
    sp3 = ["space dimension: 3", "space directions: (0.5,0,0) (0,0.5,0) (0,0,0.5)", "space origin: (-1,-1,-1)"]
    write(f / "v3.nrrd", grid([5, 5, 5]), sp3)
    write(f / "v3_d.nrrd", grid([5, 5, 5])[:, ::2, :], ["space dimension: 3", "space directions: (0.5,0,0) (0,1,0) (0,0,0.5)",
                                                       "space origin: (-1,-1,-1)"], t="double")


def written(folder: Path) -> dict[str, dict]:
    """What a run wrote into ``folder``, less the input files ``make`` wrote."""
    return agreement.written(folder, make)


def _nums(name: str, *pairs: tuple[str, str]) -> list[tuple[str, str, list[str]]]:
    return [(f"w01_{name}{k}", "w01_numin", ["-a", a, "-b", b]) for k, (a, b) in enumerate(pairs)]


#: each run: (its name, the program, its command line)
RUNS: list[tuple[str, str, list[str]]] = (
    _nums("n", ("nan", "1"), ("1", "nan"), ("nan", "nan"))
    + _nums("z", ("-0", "0"), ("0", "-0"), ("-0", "-0"), ("0", "0"), ("-0", "-1"), ("-1", "-0"))
    + _nums("i", ("inf", "inf"), ("-inf", "2"), ("2", "-inf"), ("inf", "0"), ("-inf", "-inf"), ("0", "inf"))
    + _nums("x", ("710", "-710"), ("-745", "1e308"), ("1e-320", "1e-320"), ("-8", "0.5"), ("-8", "3"), ("3", "-1"),
            ("5", "-3"), ("-5.5", "2"), ("2.5", "-2.5"), ("1.5", "-0.5"))
    + [(f"w02_{k}", "w02_intin", ["-a", m, "-b", n]) for k, (m, n) in enumerate(
        [("7", "-2"), ("-7", "-1"), ("-2147483648", "-1"), ("2147483647", "-3"), ("0", "-1"), ("-9", "2")])]
    + [("w03_zero", "w03_linalg", []),
       ("w03_sing", "w03_linalg", ["-u", "1", "2", "2", "-r0", "1", "2", "3", "-r1", "2", "4", "6", "-r2", "0", "1", "1", "-q", "1", "2", "2", "4"]),
       ("w03_rep", "w03_linalg", ["-r0", "2", "0", "0", "-r1", "0", "2", "0", "-r2", "0", "0", "2", "-q", "3", "0", "0", "3"]),
       ("w03_nan", "w03_linalg", ["-u", "nan", "0", "0", "-r0", "nan", "0", "0", "-q", "nan", "1", "1", "nan"]),
       ("w03_inf", "w03_linalg", ["-u", "inf", "0", "0", "-q", "inf", "0", "0", "1"]),
       ("w03_tiny", "w03_linalg", ["-u", "1e-200", "1e-200", "0", "-q", "1e-200", "0", "0", "1e-200"]),
       ("w03_negz", "w03_linalg", ["-u", "-0", "-0", "-0", "-q", "-0", "0", "0", "-0"])]
    + [(f"w04_{k}", "w04_printx", argv) for k, argv in enumerate(
        [["-x", "nan"], ["-x", "-0"], ["-x", "inf"], ["-x", "1e300", "-k", "2147483647"], ["-x", "1e-310", "-k", "-2147483647"],
         ["-x", "123456789012345678"], ["-x", "0.1"], ["-x", "-1e-5"]])]
    + [(f"w05_{m}", "w05_emptyred", ["-mode", str(m)]) for m in (0, 1, 2)]
    + [("w05_l1", "w05_emptyred", ["-mode", "2", "-l", "1"]), ("w05_l0", "w05_emptyred", ["-mode", "2", "-l", "0"])]
    + [("w06", "w06_globalrw", []), ("w06_l2", "w06_globalrw", ["-l", "2"]), ("w06_s2", "w06_globalrw", ["-s", "2"]),
       ("w06_lneg", "w06_globalrw", ["-lim", "-3"]), ("w06_n2", "w06_globalrw", ["-n", "2"])]
    + [("w07", "w07_newcut", []), ("w07_l1", "w07_newcut", ["-l", "1"]), ("w07_l2", "w07_newcut", ["-l", "2"]),
       ("w07_l3", "w07_newcut", ["-l", "3"]), ("w07_g0", "w07_newcut", ["-gens", "0"]), ("w07_s1", "w07_newcut", ["-s", "1", "-l", "3"])]
    + [("w08", "w08_gridstab", []), ("w08_l1", "w08_gridstab", ["-l", "1"]), ("w08_s2", "w08_gridstab", ["-s", "2"]),
       ("w08_nan", "w08_gridstab", ["-step", "nan", "-l", "3"]), ("w08_neg", "w08_gridstab", ["-step", "-1", "-l", "4"]),
       ("w08_s1l2", "w08_gridstab", ["-s", "1", "-l", "2"])]
    + [(f"w09_{c}", "w09_stabmeth", ["-cut", c]) for c in ("2", "0", "-5", "9")]
    + [("w10", "w10_probe2", ["-img", "p2.nrrd"]), ("w10_rot", "w10_probe2", ["-angle", "30", "-res", "4", "-fov", "3.5"]),
       ("w10_u8", "w10_probe2", ["-img", "p2_u8.nrrd", "-center", "0.3", "-0.2"]),
       ("w10_crop", "w10_probe2", ["-img", "p2_crop.nrrd", "-res", "3"]), ("w10_pad", "w10_probe2", ["-img", "p2_pad.nrrd"]),
       ("w10_half", "w10_probe2", ["-img", "p2_half.nrrd", "-fov", "4"]),
       ("w10_tiny", "w10_probe2", ["-img", "p2_tiny.nrrd", "-res", "2"]), ("w10_res1", "w10_probe2", ["-res", "1"]),
       ("w10_res0", "w10_probe2", ["-res", "0"])]
    + [("w11", "w11_mip3", ["-vol", "v3.nrrd"]), ("w11_cam", "w11_mip3", ["-eye", "0.2", "-5", "1", "-at", "0", "0.1", "0", "-stepSz", "0.4"]),
       ("w11_d", "w11_mip3", ["-vol", "v3_d.nrrd", "-res", "2"]), ("w11_far", "w11_mip3", ["-far", "0", "-l", "5"]),
       ("w11_l2", "w11_mip3", ["-l", "2"]), ("w11_axis", "w11_mip3", ["-eye", "0", "0", "5"])]
    + [("w12", "w12_heronish", []), ("w12_eps0", "w12_heronish", ["-eps", "0", "-l", "30"]),
       ("w12_neg", "w12_heronish", ["-lo", "-4", "-hi", "4", "-num", "3", "-l", "12"]),
       ("w12_one", "w12_heronish", ["-num", "1", "-l", "50"]), ("w12_zero", "w12_heronish", ["-lo", "0", "-hi", "0", "-num", "2", "-l", "5"])]
    + [(f"w13_{h}{a}", "w13_globalstop", ["-how", h, "-after", a]) for h, a in (("0", "2"), ("1", "2"), ("1", "1"), ("0", "1"))]
    + [("w13_never", "w13_globalstop", ["-how", "2", "-l", "4"])]
    + [("w13_l1", "w13_globalstop", ["-how", "1", "-after", "1", "-l", "1"])]
    # hostile command lines
    + [("h_twice", "w01_numin", ["-a", "2", "-a", "3"]), ("h_lneg", "w06_globalrw", ["-l", "-1"]),
       ("h_s0", "w06_globalrw", ["-s", "0"]), ("h_n0", "w06_globalrw", ["-n", "0"]),
       ("h_nbig", "w06_globalrw", ["-n", "100000"]), ("h_lhuge", "w06_globalrw", ["-l", "99999999999"]),
       ("h_shuge", "w06_globalrw", ["-s", "1000000"]), ("h_count", "w03_linalg", ["-u", "1", "2"]),
       ("h_count2", "w03_linalg", ["-q", "1", "2", "3", "4", "5"]), ("h_lx", "w06_globalrw", ["-l", "x"]),
       ("h_l2x", "w06_globalrw", ["-l", "2", "-l", "3"]), ("h_int", "w02_intin", ["-a", "2.5"]),
       ("h_intbig", "w02_intin", ["-a", "99999999999"]), ("h_real", "w01_numin", ["-a", "1x"])]
)
_IMAGE = {"w10_probe2": ["-img", "p2.nrrd"], "w11_mip3": ["-vol", "v3.nrrd"]}  # (no default file: given where not another)
RUNS = [(n, p, (_IMAGE[p] if p in _IMAGE and _IMAGE[p][0] not in a else []) + a) for n, p, a in RUNS]


def diderotc_flags(argv: list[str]) -> list[str]:
    """diderotc's build options for a run: ``-s`` and ``-n`` are options of the builds with ``--snapshot`` and
    ``--target=parallel`` only (a snapshot build takes snapshots every step unless ``-s`` says otherwise)."""
    return (["--snapshot"] if "-s" in argv else []) + (["--target=parallel"] if "-n" in argv else [])


if __name__ == "__main__":
    agreement.remake_main(sys.modules[__name__], sys.argv[1:])
