"""NRRD files made by Teem's own tools (``unu``), as users have them, and the programs that probe them
(``more/teem/``): every encoding (raw, ascii, hex, gzip, bzip2), both byte orders, the sample types uchar
short ushort int float double, detached headers (``.nhdr`` and a data file, with line and byte skips),
comments and key/value pairs, spacings without space directions, cell and node centering, non-axis-aligned
space directions, resampled, permuted and axis-inserted images, 1-D/2-D/3-D scalars, 2- and 3-vectors,
colors and 2-D/3-D matrices.  ``python tests/diderot/teem_files.py`` remakes the files (with ``unu``) and the
stored outputs of ``diderotc --double --exec`` on them (``more/teem/diderotc.json``; ``python
tests/diderot/teem_files.py PROGRAM ...``: only those programs' outputs), with ``unu`` and
``diderotc`` on PATH; /work/shared/tools/diderot/README.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent / "more" / "teem"
STORED = HERE / "diderotc.json"

#: each program and the files it is run on (``-img FILE``)
RUNS: dict[str, list[str]] = {}


def _unu(folder: Path, *args: str, stdin: bytes | None = None) -> None:
    subprocess.run(["unu", *args], cwd=folder, check=True, input=stdin, capture_output=True)


def _values(sizes: list[int], comps: int = 0) -> str:
    """Integer samples 0..60 (exact in every sample type), fastest axis first, components fastest."""
    out, n = [], 1
    for s in sizes:
        n *= s
    for k in range(n):
        idx, r = [], k
        for s in sizes:
            idx.append(r % s)
            r //= s
        for c in range(max(comps, 1)):
            out.append(str((3 * idx[0] + 7 * sum(idx[1:]) + 5 * c + idx[0] * idx[-1] * (c + 1)) % 61))
    return " ".join(out) + "\n"


def make(f: Path) -> None:
    """Write every file of ``RUNS`` into ``f`` with unu."""
    f = Path(f)
    RUNS.clear()

    def base(name, sizes, kinds, comps=0, extra=()):
        (f / "vals.txt").write_text(_values(sizes, comps))
        full = ([comps] if comps else []) + sizes
        _unu(f, "make", "-i", "vals.txt", "-t", "float", "-e", "ascii", "-s", *map(str, full), "-k", *kinds,
             *extra, "-o", name)
        (f / "vals.txt").unlink()

    # ---- 2-D scalars: one header, every encoding, byte order and sample type
    d2 = ["-spc", "2", "-orig", "(-1.7,-1.4)", "-dirs", "(0.5,0.1) (-0.05,0.45)"]
    base("s2.nrrd", [9, 8], ["space", "space"], extra=d2)
    runs = ["s2.nrrd"]
    for t, enc, end in [("uchar", "gzip", "little"), ("short", "bzip2", "big"), ("ushort", "hex", "big"),
                        ("int", "ascii", "little"), ("double", "raw", "big"), ("float", "raw", "big"),
                        ("double", "gzip", "little")]:
        name = f"s2_{t}_{enc}_{end}.nrrd"
        _unu(f, "convert", "-i", "s2.nrrd", "-t", t, "-o", "tmp.nrrd")
        _unu(f, "save", "-i", "tmp.nrrd", "-f", "nrrd", "-e", enc, "-en", end, "-o", name)
        runs.append(name)
    _unu(f, "save", "-i", "s2.nrrd", "-f", "nrrd", "-e", "gzip", "-o", "s2_detached.nhdr")  # + s2_detached.raw.gz
    runs.append("s2_detached.nhdr")
    # a detached header over a data file with two text lines and 3 bytes before the samples
    _unu(f, "convert", "-i", "s2.nrrd", "-t", "short", "-o", "tmp.nrrd")
    _unu(f, "save", "-i", "tmp.nrrd", "-f", "nrrd", "-e", "raw", "-en", "big", "-o", "s2_skip_data.nhdr")
    data = (f / "s2_skip_data.raw").read_bytes()
    (f / "s2_skip.dat").write_bytes(b"first line\nsecond line\nXYZ" + data)
    for p in ("s2_skip_data.nhdr", "s2_skip_data.raw"):
        (f / p).unlink()
    _unu(f, "make", "-h", "-i", "s2_skip.dat", "-t", "short", "-en", "big", "-s", "9", "8", "-k", "space", "space",
         "-ls", "2", "-bs", "3", *d2, "-o", "s2_skip.nhdr")
    runs.append("s2_skip.nhdr")
    # comments and key/value pairs; spacings only (cell and node centering); a permuted and a resampled image
    base("s2_kv.nrrd", [9, 8], ["space", "space"], extra=[*d2, "-kv", "modality:=synthetic", "tool:=unu"])
    head, data = (f / "s2_kv.nrrd").read_bytes().split(b"\n", 1)  # and comments, which unu keeps
    (f / "tmp.nrrd").write_bytes(head + b"\n# made by unu make\n#  a second comment: 1 2 3\n" + data)
    _unu(f, "save", "-i", "tmp.nrrd", "-f", "nrrd", "-e", "raw", "-o", "s2_kv.nrrd")
    base("s2_spacing_cell.nrrd", [9, 8], ["space", "space"], extra=["-sp", "0.4", "0.35", "-cn", "cell", "cell"])
    base("s2_spacing_node.nrrd", [9, 8], ["space", "space"], extra=["-sp", "0.4", "0.35", "-cn", "node", "node"])
    base("s2_nospace.nrrd", [9, 8], ["space", "space"])
    _unu(f, "permute", "-i", "s2.nrrd", "-p", "1", "0", "-o", "s2_permuted.nrrd")
    _unu(f, "resample", "-i", "s2.nrrd", "-s", "x1.5", "x1.25", "-k", "tent", "-o", "s2_resampled.nrrd")
    runs += ["s2_kv.nrrd", "s2_spacing_cell.nrrd", "s2_spacing_node.nrrd", "s2_nospace.nrrd", "s2_permuted.nrrd",
             "s2_resampled.nrrd"]
    # a hex payload behind a detached header, after a line of text; raw samples at the file's end (byte skip -1);
    # axes of kind domain; a named space (3 world axes for a 2-D image)
    (f / "s2_hex.dat").write_bytes(b"a line to skip\n" + (f / "s2_ushort_hex_big.nrrd").read_bytes().split(b"\n\n", 1)[1])
    _unu(f, "make", "-h", "-i", "s2_hex.dat", "-t", "ushort", "-e", "hex", "-en", "big", "-s", "9", "8", "-k", "space",
         "space", "-ls", "1", *d2, "-o", "s2_hex.nhdr")
    (f / "s2_end.dat").write_bytes(b"junk before the samples " + (f / "s2_float_raw_big.nrrd").read_bytes().split(b"\n\n", 1)[1])
    _unu(f, "make", "-h", "-i", "s2_end.dat", "-t", "float", "-en", "big", "-s", "9", "8", "-k", "space", "space",
         "-bs", "-1", *d2, "-o", "s2_end.nhdr")
    base("s2_domain.nrrd", [9, 8], ["domain", "domain"], extra=["-sp", "0.4", "0.35"])
    base("s2_lps.nrrd", [9, 8], ["space", "space"], extra=["-spc", "LPS", "-orig", "(-1.7,-1.4,0.5)", "-dirs",
                                                          "(0.5,0.1,0) (-0.05,0.45,0)"])
    runs += ["s2_hex.nhdr", "s2_end.nhdr", "s2_domain.nrrd", "s2_lps.nrrd"]
    # flipped (a negative direction, the origin moved), cropped, axis minima and maxima, labels, units, thicknesses
    _unu(f, "flip", "-i", "s2.nrrd", "-a", "0", "-o", "s2_flip.nrrd")
    _unu(f, "crop", "-i", "s2.nrrd", "-min", "1", "0", "-max", "M", "M-1", "-o", "s2_crop.nrrd")
    base("tmp.nrrd", [9, 8], ["space", "space"], extra=["-l", "x", "y", "-th", "0.5", "0.5", "-u", "cm", "cm"])
    text = (f / "tmp.nrrd").read_bytes()  # (unu axinfo -mm crashes in this Teem)
    (f / "tmp.nrrd").write_bytes(text.replace(b"kinds:", b"axis mins: -1 -0.5\naxis maxs: 2.2 2\ncenterings: node cell\n"
                                                        b"kinds:", 1))
    _unu(f, "save", "-i", "tmp.nrrd", "-f", "nrrd", "-o", "s2_minmax.nrrd")
    runs += ["s2_flip.nrrd", "s2_crop.nrrd", "s2_minmax.nrrd"]
    RUNS["probe2"] = runs
    # ---- 1-D and 3-D scalars
    base("s1.nrrd", [12], ["space"], extra=["-spc", "1", "-orig", "(-1.3)", "-dirs", "(0.45)"])
    _unu(f, "save", "-i", "s1.nrrd", "-f", "nrrd", "-e", "bzip2", "-o", "s1_bz2.nrrd")
    base("s1_spacing.nrrd", [12], ["space"], extra=["-sp", "0.3", "-cn", "cell"])
    RUNS["probe1"] = ["s1.nrrd", "s1_bz2.nrrd", "s1_spacing.nrrd"]
    d3 = ["-spc", "3", "-orig", "(-1.5,-1.2,-1.1)", "-dirs", "(0.5,0.05,0) (0,0.45,0.1) (0.05,0,0.55)"]
    base("s3.nrrd", [7, 7, 6], ["space"] * 3, extra=d3)
    _unu(f, "convert", "-i", "s3.nrrd", "-t", "ushort", "-o", "tmp.nrrd")
    _unu(f, "save", "-i", "tmp.nrrd", "-f", "nrrd", "-e", "gzip", "-en", "big", "-o", "s3_ushort_gz.nrrd")
    base("s3_spacing.nrrd", [7, 7, 6], ["space"] * 3, extra=["-sp", "0.5", "0.45", "0.55", "-cn", "node", "node", "node"])
    _unu(f, "axinsert", "-i", "s2.nrrd", "-a", "2", "-k", "space", "-s", "5", "-o", "s3_axinsert.nrrd")
    base("s3_ras.nrrd", [7, 7, 6], ["space"] * 3, extra=["-spc", "RAS", *d3[2:], "-mf", "(1,0,0) (0,0,1) (0,1,0)",
                                                           "-spu", "mm", "mm", "mm"])
    RUNS["probe3"] = ["s3.nrrd", "s3_ushort_gz.nrrd", "s3_spacing.nrrd", "s3_axinsert.nrrd", "s3_ras.nrrd"]
    # ---- vectors, colors and matrices
    dn2 = ["-spc", "2", "-orig", "(-1.7,-1.4)", "-dirs", "none (0.5,0.1) (-0.05,0.45)"]
    dn3 = ["-spc", "3", "-orig", "(-1.5,-1.2,-1.1)", "-dirs", "none (0.5,0.05,0) (0,0.45,0.1) (0.05,0,0.55)"]
    base("v2.nrrd", [9, 8], ["2-vector", "space", "space"], 2, dn2)
    _unu(f, "save", "-i", "v2.nrrd", "-f", "nrrd", "-e", "hex", "-en", "big", "-o", "v2_hex.nrrd")
    _unu(f, "permute", "-i", "v2.nrrd", "-p", "1", "2", "0", "-o", "v2_last.nrrd")  # the vector axis last
    base("v2_vector.nrrd", [9, 8], ["vector", "space", "space"], 2, dn2)
    base("v2_list.nrrd", [9, 8], ["list", "space", "space"], 2, dn2)
    RUNS["probe2v"] = ["v2.nrrd", "v2_hex.nrrd", "v2_last.nrrd", "v2_vector.nrrd", "v2_list.nrrd"]
    base("c2.nrrd", [9, 8], ["3-color", "space", "space"], 3, dn2)
    _unu(f, "convert", "-i", "c2.nrrd", "-t", "uchar", "-o", "c2_uchar.nrrd")
    base("v3in2.nrrd", [9, 8], ["3-vector", "space", "space"], 3, dn2)
    base("sym2.nrrd", [9, 8], ["2D-symmetric-matrix", "space", "space"], 3, dn2)
    base("rgb2.nrrd", [9, 8], ["RGB-color", "space", "space"], 3, dn2)
    base("point2.nrrd", [9, 8], ["point", "space", "space"], 3, dn2)
    base("normal2.nrrd", [9, 8], ["normal", "space", "space"], 3, dn2)
    RUNS["probe2c"] = ["c2.nrrd", "c2_uchar.nrrd", "v3in2.nrrd", "sym2.nrrd", "rgb2.nrrd", "point2.nrrd", "normal2.nrrd"]
    runs = []
    for kind in ("4-vector", "4-color", "RGBA-color", "quaternion"):
        base(f"q2_{kind.lower()}.nrrd", [9, 8], [kind, "space", "space"], 4, dn2)
        runs.append(f"q2_{kind.lower()}.nrrd")
    RUNS["probe2q"] = runs
    base("m2.nrrd", [9, 8], ["2D-matrix", "space", "space"], 4, dn2)
    _unu(f, "save", "-i", "m2.nrrd", "-f", "nrrd", "-e", "gzip", "-en", "big", "-o", "m2_gz.nrrd")
    RUNS["probe2m"] = ["m2.nrrd", "m2_gz.nrrd"]
    base("v3.nrrd", [7, 7, 6], ["3-vector", "space", "space", "space"], 3, dn3)
    _unu(f, "convert", "-i", "v3.nrrd", "-t", "short", "-o", "tmp.nrrd")
    _unu(f, "save", "-i", "tmp.nrrd", "-f", "nrrd", "-e", "bzip2", "-en", "big", "-o", "v3_short_bz2.nrrd")
    RUNS["probe3v"] = ["v3.nrrd", "v3_short_bz2.nrrd"]
    base("m3.nrrd", [6, 6, 6], ["3D-matrix", "space", "space", "space"], 9, dn3)
    RUNS["probe3m"] = ["m3.nrrd"]
    (f / "tmp.nrrd").unlink()


def proxied(text: str, name: str) -> str:
    """The program with ``name`` as its image input's default (diderotc's proxy image: the sample type its
    executable expects)."""
    head, rest = text.split(" img;", 1)
    return f'{head} img = load_image("{name}");{rest}'


def _run(folder: Path, prog: str, text: str, name: str) -> dict:
    import nrrd
    (folder / f"{prog}.diderot").write_text(text)
    subprocess.run(["diderotc", "--double", "--exec", f"{prog}.diderot"], cwd=folder, check=True, capture_output=True)
    run = subprocess.run([f"./{prog}", "-img", name, "-o", "out.nrrd"], cwd=folder, capture_output=True, text=True)
    values = nrrd.read(str(folder / "out.nrrd"))[0].ravel(order="F").tolist() if run.returncode == 0 else []
    values = [float(f"{x:.12g}") for x in values]  # (checked within 1e-9 of the largest)
    (folder / "out.nrrd").unlink(missing_ok=True)
    return {"rc": run.returncode, "stderr": run.stderr.strip()[-300:], "values": values}


def remake(names: list[str]) -> None:
    """Make the files into ``more/teem/`` and run each program's diderotc executable on each of its files; where
    the executable refuses a file's sample type (it expects float samples unless compiled with a proxy image),
    also the program compiled with that file as its proxy (``proxied``)."""
    for old in HERE.iterdir():
        if old.suffix not in (".diderot", ".json"):
            old.unlink()
    make(HERE)
    stored = {k: v for k, v in (json.loads(STORED.read_text()) if STORED.exists() else {}).items()
              if names and k.split()[0] not in names}
    with tempfile.TemporaryDirectory() as tmp:
        for f in HERE.iterdir():
            shutil.copy(f, tmp)
        for prog in names or sorted(RUNS):
            text = (HERE / f"{prog}.diderot").read_text()
            for name in RUNS[prog]:
                got = stored[f"{prog} {name}"] = _run(Path(tmp), prog, text, name)
                if "unexpected sample type" in got["stderr"]:
                    got["proxy"] = _run(Path(tmp), prog, proxied(text, name), name)
                print(prog, name, got["rc"], len(got["values"]), got["stderr"][:80], got.get("proxy", {}).get("rc"))
    first: dict[tuple[str, str], str] = {}
    for key, got in stored.items():  # the values once: a run that wrote another's values names it
        for run in (got, got.get("proxy", {})):
            seen = first.setdefault((key.split()[0], json.dumps(run.get("values"))), key)
            if run.get("values") and seen != key:
                run["same_as"] = seen
                del run["values"]
    rows = (f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(stored.items()))
    STORED.write_text("{\n" + ",\n".join(rows) + "\n}\n")


if __name__ == "__main__":
    if shutil.which("diderotc") is None or shutil.which("unu") is None:
        sys.exit("diderotc and unu are not on PATH (/work/shared/tools/diderot/README.md)")
    remake(sys.argv[1:])
