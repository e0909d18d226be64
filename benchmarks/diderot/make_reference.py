"""Make the reference directory that ``examples.py`` compares against, with the real compiler.

    python benchmarks/diderot/make_reference.py OUT [example,example,...]

needs ``diderotc`` and Teem's ``unu`` on PATH (/work/shared/tools/diderot/README.md) and
DIDEROT_EXAMPLES naming a checkout of Diderot-Language/examples.  For every example: the
input data made as its ``.test.sh`` (or its README) makes them, the programs compiled with
``diderotc --double --exec`` (``--snapshot`` where the script asks for it), every run of the
script executed in ``OUT/<example>/runs/<run>/`` (its inputs, outputs, snapshots and
``stdout.txt`` kept) and ``OUT/<example>/runs.json`` written.  The data generators fs2d-scl,
fs3d-scl and fs3d-vec are compiled *without* ``--double`` (into TOOLS, default
/tmp/diderot-tools): their printed NRRD header, which the scripts pipe into ``unu``,
describes single-precision data.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

EX = Path(os.environ.get("DIDEROT_EXAMPLES", "/work/diderot-build/examples"))
T = Path(os.environ.get("TOOLS", "/tmp/diderot-tools"))
FS2D, FS3D, FS3V = str(T / "fs2d-scl"), str(T / "fs3d-scl"), str(T / "fs3d-vec")


def sh(cmd: str, cwd: Path) -> str:
    r = subprocess.run(["bash", "-c", "set -e; " + cmd], cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{cmd}: {r.stderr[-500:]}")
    return r.stdout


# example: (folder, build set-up, [(program, snapshot)], [(run, executable, arguments, set-up)])
CIRC = "eval echo {1..240} | unu reshape -s 2 120 | unu 1op nrand -s 42 -o vec2.nrrd; unu project -i vec2.nrrd -a 0 -m l2 | unu axinsert -a 0 -s 2 | unu 2op / vec2.nrrd - -o vec2.nrrd"
SPH = "echo 0 0 0 | unu pad -min 0 0 -max M 1 | unu 1op nrand -s 1 -o vec3.nrrd; unu project -i vec3.nrrd -a 0 -m l2 | unu axinsert -a 0 -s 3 | unu 2op / vec3.nrrd - -o vec3.nrrd"
HT = f"{FS2D} -which x -width 2 -size0 401 -size1 401 | unu crop -min 0 100 -max M M-100 | unu affine -1 - 1 0 1 | unu pad -min -2 -2 -max M+2 M+2 -o img.nrrd; echo 0 0 | unu pad -min 0 0 -max M 299 | unu 1op rand -s 5 | unu affine 0 - 1 -1 1 -o vec2.nrrd; echo 1 0.5 | unu 2op x vec2.nrrd - -o vec2.nrrd"
ISO = f"{FS2D} -size0 50 -size1 50 -which tcubic -width 8 | unu save -f nrrd -o cubic.nrrd"
NOISY = ISO + f"; unu 2op nrand cubic.nrrd 0.5 -s 42 -o noisy.nrrd; {FS2D} -size0 50 -size1 50 -which y -width 8 | unu save -f nrrd -o yramp.nrrd; unu 2op x yramp.nrrd 3 | unu 2op + noisy.nrrd - -o noisy.nrrd; rm -f yramp.nrrd"
VIMG = "unu resample -i $EX/data/sscand.nrrd -s /2 /2 -o img.nrrd; cp $EX/cmap/spiral.nrrd cmap.nrrd"
CMM = "-cmin -500 -cmax 1900"
EPRM = ["", "", "", CMM + " -iso 1210 -th 20", CMM + " -iso 1210 -th 0.2", CMM + " -th 0.3 -sthr 2", CMM + " -th 0.3 -sthr 2",
        CMM + " -th 0.4 -sthr 25 -fcol 0 0 0.8", CMM + " -th 0.4 -fcol 0 1 0", CMM + " -th 0.4 -sthr 25 -fcol 0 1 1"]
CUBE = f"{FS3D} -which cube -width 3 -sz0 73 -sz1 73 -sz2 73 | unu save -f nrrd -o vol.nrrd"
SPHV = f"{FS3D} -which dparab -width 5 -sz0 30 -sz1 32 -sz2 35 | unu save -f nrrd -o vol.nrrd; unu 3op lerp 0.5 $EX/cmap/isobow.nrrd 1 -o cmap.nrrd"
VEC = f"{FS3V} -width 10 -angle 30 -axis 1 2 3 -which foo -sz0 30 -sz1 25 -sz2 20 | unu save -f nrrd -o vec.nrrd"
LIFEP = "mkdir -p patterns; cp $EX/life/patterns/gosperglidergun.nrrd patterns/"
PLOT = 'echo "0 0 1 0 0" | unu axdelete -a -1 | unu dnorm -c -o data.nrrd'
SPEC = {
 "fs2d": ("fs2d", "", [("fs2d-scl.diderot", False), ("fs2d-vec.diderot", False)],
          [("tcubic", "fs2d-scl", "-size0 50 -size1 50 -which tcubic -width 8", ""), ("y", "fs2d-scl", "-size0 50 -size1 50 -which y -width 8", ""),
           ("x401", "fs2d-scl", "-which x -width 2 -size0 401 -size1 401", ""), ("vec", "fs2d-vec", "", "")]),
 "fs3d": ("fs3d", "", [("fs3d-scl.diderot", False), ("fs3d-vec.diderot", False)],
          [("parab", "fs3d-scl", "-which parab", ""), ("dparab", "fs3d-scl", "-which dparab -sz0 10 -sz1 10 -sz2 10 -angle 30 -off 0.25 0.25 0.25", ""),
           ("vecfoo", "fs3d-vec", "-width 10 -angle 30 -axis 1 2 3 -which foo -sz0 30 -sz1 25 -sz2 20", "")]),
 "hello": ("hello", "", [("hello.diderot", False)], [("default", "hello", "", "")]),
 "heron": ("heron", "grep -v 'initially \\[' heron.diderot > coll.diderot; echo 'initially { sqroot(lerp(minval, maxval, 1, ii, numval)) | ii in 1 .. numval };' >> coll.diderot",
           [("heron.diderot", False), ("coll.diderot", False)],
           [("default", "heron", "", ""), ("lim", "heron", "-eps 1e-8 -l 20 -o vrie-lim.nrrd", ""), ("coll", "coll", "-eps 1e-8 -l 20 -o vrie-coll.nrrd", "")]),
 "heron-2.0": ("heron-2.0", "", [("heron.diderot", False)], [("default", "heron", "", ""), ("lim", "heron", "-eps 1e-8 -l 20 -o vrie-lim.nrrd", "")]),
 "sieve": ("sieve", "", [("sieve.diderot", False)], [("NN1000", "sieve", "-NN 1000", "")]),
 "sieve-2.0": ("sieve-2.0", "", [("sieve.diderot", False)], [("NN1000", "sieve", "-NN 1000", "")]),
 "tensor": ("tensor", "", [("tensor.diderot", False)], [("default", "tensor", "", "")]),
 "unicode": ("unicode", "", [("unicode.diderot", False)], [("default", "unicode", "", "")]),
 "steps": ("steps", "", [("steps.diderot", True)], [("s1", "steps", "-s 1", "")]),
 "steps-2.0": ("steps-2.0", "", [("steps.diderot", True)], [("s1", "steps", "-s 1", "")]),
 "life": ("life", LIFEP, [("life.diderot", True)], [("glider", "life", "-s 1 -l 200 -NN 80 -init patterns/gosperglidergun.nrrd", LIFEP)]),
 "life-2.0": ("life-2.0", LIFEP, [("life.diderot", True)], [("glider", "life", "-s 1 -l 200 -NN 80 -init patterns/gosperglidergun.nrrd", LIFEP)]),
 "iso2d": ("iso2d", ISO, [("iso2d.diderot", False)],
           [("size100", "iso2d", "-cmin -4 -4 -cmax 4 4 -size 100", ISO), ("noisy", "iso2d", "-cmin -4 -4 -cmax 4 4 -size 100 -img noisy.nrrd -o pos2.nrrd", NOISY)]),
 "plot1d": ("plot1d", PLOT, [("plot1d.diderot", False)], [("ymm", "plot1d", "-img data.nrrd -ymm -0.3 1.3", PLOT)]),
 "plot1d-2.0": ("plot1d-2.0", PLOT, [("plot1d.diderot", False)], [("ymm", "plot1d", "-img data.nrrd -ymm -0.3 1.3", PLOT)]),
 "vimg": ("vimg", VIMG, [("vimg.diderot", False)],
          [(f"which{i}", "vimg", f"-which {i} -cent 290 414 -fov 80 {EPRM[i]} -o rgb.nrrd", VIMG) for i in range(10)]),
 "circle": ("circle", CIRC, [("circle.diderot", True)], [("s1l900", "circle", "-s 1 -l 900", CIRC)]),
 "circle-2.0": ("circle-2.0", CIRC, [("circle.diderot", True)], [("s1l500", "circle", "-s 1 -l 500", CIRC)]),
 "sphere": ("sphere", SPH, [("sphere.diderot", True)], [("rad015", "sphere", "-s 0 -l 400 -rad 0.15 -eps 0.033 -pcp 2", SPH)]),
 "halftone": ("halftone", HT, [("halftone.diderot", True)], [("first", "halftone", "-s 0 -l 800 -radmm 0.04 1 -eps 0.0001 -pcp 2", HT)]),
 "mip": ("mip", CUBE, [("mip.diderot", False)], [("persp", "mip", "-out0 0 -camFOV 20 -rayStep 0.03 -iresU 300 -iresV 300", CUBE),
          ("ortho", "mip", "-out0 0 -camFOV 20 -rayStep 0.03 -iresU 300 -iresV 300 -camOrtho true", CUBE)]),
 "dvr": ("dvr", SPHV, [("dvr.diderot", False)], [("sphere", "dvr", "-camEye 10 20 5 -camAt 0 0 0 -camUp 0 0 1 -camNear -2 -camFar 2 -camFOV 8 -iresU 400 -iresV 400 -thick 0.1 -refStep 0.1 -rayStep 0.01 -isoval 0.0 -cmin -1 -cmax 1", SPHV)]),
 "tensor2": ("tensor2", VEC, [("tensor2.diderot", False)], [("default", "tensor2", "", VEC)]),
}
ORDER = list(SPEC)


def tools() -> None:
    T.mkdir(parents=True, exist_ok=True)
    for folder, prog in (("fs2d", "fs2d-scl"), ("fs3d", "fs3d-scl"), ("fs3d", "fs3d-vec")):
        if not (T / prog).is_file():
            shutil.copy(EX / folder / f"{prog}.diderot", T)
            sh(f"diderotc --exec {prog}.diderot", T)


def files(rd: Path) -> dict:
    return {str(p.relative_to(rd)): p.stat().st_mtime_ns for p in rd.rglob("*") if p.is_file()}


def run(ref: Path, name: str, build: Path) -> None:
    folder, bsetup, progs, runs = SPEC[name]
    bd = build / name
    if bd.exists():
        shutil.rmtree(bd)
    shutil.copytree(EX / folder, bd)
    rec: dict = {"runs": []}
    (ref / name).mkdir(parents=True, exist_ok=True)
    try:
        if bsetup:
            sh(bsetup, bd)
        ctimes = {}
        for prog, snap in progs:
            t = time.perf_counter()
            sh(f"diderotc --double {'--snapshot ' if snap else ''}--exec {prog}", bd)
            ctimes[prog] = time.perf_counter() - t
    except RuntimeError as exc:
        print(name, "BUILD FAILED", exc, flush=True)
        (ref / name / "runs.json").write_text(json.dumps({"runs": [], "build_error": str(exc)}))
        return
    rec["compile_seconds"] = ctimes
    for rname, exe, args, setup in runs:
        rd = ref / name / "runs" / rname
        if rd.exists():
            shutil.rmtree(rd)
        rd.mkdir(parents=True)
        if setup:
            sh(setup, rd)
        before = files(rd)
        shutil.copy(bd / exe, rd / exe)
        prog = next(p for p, _ in progs if p.rsplit(".", 1)[0] == exe)
        shutil.copy(bd / prog, ref / name / prog)
        t = time.perf_counter()
        p = subprocess.run(["./" + exe] + args.split(), cwd=rd, capture_output=True, text=True)
        secs = time.perf_counter() - t
        (rd / "stdout.txt").write_text(p.stdout)
        os.remove(rd / exe)
        after = {f for f, m in files(rd).items() if before.get(f) != m} - {"stdout.txt"}
        snaps = sorted(f for f in after if re.search(r"-\d{4}\.nrrd$", f))
        outs = sorted(f for f in after if f.endswith(".nrrd") and f not in snaps)
        rec["runs"].append({"name": rname, "program": prog, "args": args.split(),
                            "inputs": {f: f for f in sorted(before) if f not in after},
                            "outputs": outs, "snapshots": snaps, "rc": p.returncode, "seconds_seq": secs})
        print(name, rname, "rc", p.returncode, f"{secs:.2f}s", outs, len(snaps), "snapshots", flush=True)
    (ref / name / "runs.json").write_text(json.dumps(rec, indent=1))


def main(argv: list[str]) -> int:
    ref = Path(argv[0])
    only = argv[1].split(",") if len(argv) > 1 else ORDER
    os.environ["EX"] = str(EX)
    tools()
    for name in [n for n in ORDER if n in only]:
        run(ref, name, ref / "_build")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
