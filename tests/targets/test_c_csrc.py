"""The C files of targets/c/csrc: each compiles on its own as C (``cc -fsyntax-only``,
its placeholders given as macros, what it follows included first), and :func:`csrc.text`
fills in exactly the placeholders a file has."""

from __future__ import annotations

import re
import subprocess
from importlib import resources
from pathlib import Path

import pytest

from tensorlang.targets.c import probe as cprobe
from tensorlang.targets.c import build as c_build
from tensorlang.machine import blas
from tensorlang.targets.c import callext, codegen, csrc, threshold
from tensorlang.targets.c import strands_probe as cstrands_probe
from tensorlang.loops.parallel import SCHEDULE

COMPILER = c_build.find_compiler()
needs_compiler = pytest.mark.skipif(COMPILER is None, reason="no working C compiler on this machine")

#: The prelude of a double kernel, which the printer's other pieces follow.
_PRELUDE = ("tl_prelude.h", {"real": "double"})
#: Gram's shape macros (gram.source writes them) and its generated tiles' prototypes (as
#: the raw files name them: the prefix placeholder is part of each name).
_GRAM_SHAPE = {"N": "100L", "M": "13L", "MB": "2L", "MP": "16L", "KC": "100L", "STRIP": "1", "TB": "1L", "SG": "5L"}
_TILES = "\n".join(
    f"void TL_FILL_Ptile{w}(const double *a, const double *b, long kc, double *c, int first, const char *pf, "
    f"const double *src, double *dst, long cn);" for w in (1, 2, 3))
_STRIP = "void TL_FILL_Pstrip(const double *a, const double *t, long kc, double *c, int first, long count);"
_SROWS = "\n".join(
    f"void TL_FILL_Psrow{w}(int rows, const double *a, const double *b, const double *s, long kc, double *c, int first, "
    f"const char *pf);" for w in (1, 2, 3))
#: A probe's shape macros and head (cprobe.source writes them) for a scalar 3-D bspln3.
_PROBE_SHAPE = {"D": "3", "S": "4", "NC": "1", "PACKED": "1", "B": str(cprobe.BATCH), "TL_TILES": str(cprobe.TILES),
                "TL_REGION_POINTS": str(cprobe.REGION_POINTS),
                "TL_TILE_EDGE": "19", "TL_TILE_SIZE": str(19 ** 3)}
_PROBE_INCLUDES = "#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n#ifdef _OPENMP\n#include <omp.h>\n#endif\n"
_PROBE_HEAD = ("probe_head.h", {})
_PROBE_FUNCTIONS = (
    "static int64_t tl_sort(int64_t n, const double *pts, const int64_t *sizes, const double *M, "
    "double *sorted, int32_t *key, int64_t *ends, int threads);\n"
    "static void tl_probe_points(int64_t n, const double *pts, int packed, const double *data, "
    "const int64_t *sizes, const double *M, double *out, int threads, int64_t look);\n"
    "static void tl_probe_tiles(int64_t n, const double *pts, const double *data, const int64_t *sizes, "
    "const double *M, double *out, int threads, const int64_t *ends, int64_t total, int copy);\n"
    "static void tl_unpack(int64_t n, const int32_t *inv, const double *packed, double *out, int threads);\n")

_PROBE_SORT = {"shift": cprobe.SORT_SHIFT, "parallelpoints": 2048, "coherent": cprobe.COHERENT_POINTS}
_PROBE_CELLS = ("static int tl_cells(const double *M, const double *pts, int64_t p0, int64_t n, const int64_t *sizes, "
                "const int64_t *stride, int64_t first[B], int64_t ok[B], const double *org, const int64_t *tst, "
                "int64_t tfirst[B], double w0[2][S][B]);\n")

#: A strand program's head (strands.Renderer.source writes it) and what its driver calls.
_STRANDS_PRELUDE = ("strands_prelude.h", {})
_STRANDS_HEAD = (_STRANDS_PRELUDE, cstrands_probe.PRELUDE + "\nstatic int64_t tl_gext[3], tl_gnd;\n"
                 "static const int64_t tl_posrow[2] = {0, 1};\nstatic double tl_grid_h(const double *gr, const int64_t *gi);\n")
_STRANDS_METHOD = "(int64_t n, int64_t i, double *restrict R, int64_t *restrict I, const double *gr, const int64_t *gi, " \
    "const tl_img *img);\n"
_STRANDS_CALLED = (
    "static int64_t *tl_ordp, tl_nl; static const int8_t *tl_status;\n"
    "static double *tl_R0; static int64_t *tl_I0, *tl_P0, tl_n0, tl_run; static int8_t *tl_S0;\n"
    "static void tl_nb_step(int64_t n, int64_t dead, const double *gr, const int64_t *gi, const int8_t *status, int threads);\n"
    "static void tl_drop(int64_t n, int64_t i, double *R, int64_t *I);\n"
    "static int tl_create_one(const int64_t *its, " + _STRANDS_METHOD[1:]
    + "".join(f"static int tl_{name}{_STRANDS_METHOD}" for name in ("init_one", "update", "stabilize")))
_STRANDS_DRIVER = {"TL_HAS_GLOBAL": "0", "TL_COMM": "0", "TL_INDIRECT": "0", "TL_SOLO": "0", "TL_BATCH": "0",
                   "TL_STEPS": "", "TL_BKS": "0", "TL_LANES": "0", "TL_CLANES": "0", "TL_ND": "2", "TL_NR": "1",
                   "TL_NI": "1", "TL_BKARG": "", "TL_CALL_GLOBAL": "0", "TL_NBR": "1", "TL_NBI": "1"}
#: a 2-D program's neighbour queries (strands.Renderer.neighbours writes these macros)
_STRANDS_NEIGHBOURS = {
    "TL_D": "2", "TL_STILL": "1", "TL_SITES": "1", "TL_VSITES": "1", "TL_INDIRECT_KEY": "0", "TL_ALLKEPT": "0",
    "TL_FIN(n,j)": "isfinite(tl_RP[0 * n + j]) && isfinite(tl_RP[1 * n + j])", "TL_CELL(n,j)": "0",
    "TL_D2E(p,c)": "0.0 + (p[0] - c[0]) * (p[0] - c[0]) + (p[1] - c[1]) * (p[1] - c[1])",
    "TL_D2(p,c)": "(double)(float)(0.0 + (p[0] - c[0]) * (p[0] - c[0]) + (p[1] - c[1]) * (p[1] - c[1]))"}

#: Per file: the values of its placeholders (as the module that reads it gives them for a
#: double kernel), other macros, and what it follows (C text, or (file, fill) read with
#: csrc.text; a str naming a csrc file is included raw, its placeholders the same macros).
RECIPES: dict[str, tuple[dict, dict, tuple]] = {
    "tl_prelude.h": ({"real": "double"}, {}, ()),
    "tl_threads.h": (codegen.CHOICE, {}, (_PRELUDE,)),
    "tl_tiles.h": ({"forced": 1, "lanes": "s, s, s, s, s, s, s, s", "set1": "_mm512_set1_pd"}, {}, (_PRELUDE,)),
    "tl_tiles_fma.h": ({"forced": 1, "fmadd": "_mm512_fmadd_pd", "m512": "__m512d", "count": 8, "fma": "fma"}, {},
                       (_PRELUDE, ("tl_tiles.h", {"forced": 1, "lanes": "s, s, s, s, s, s, s, s",
                                                  "set1": "_mm512_set1_pd"}))),
    "tl_tiles_tail.h": ({"forced": 1, "mask": "__mmask8", "loadn": "_mm512_maskz_loadu_pd",
                         "storen": "_mm512_mask_storeu_pd", "m512": "__m512d"}, {},
                        (_PRELUDE, ("tl_tiles.h", {"forced": 1, "lanes": "s, s, s, s, s, s, s, s",
                                                   "set1": "_mm512_set1_pd"}))),
    "tl_blas.h": ({"cblas64": blas.CBLAS64, "cblas32": blas.CBLAS32, "fortran32": blas.FORTRAN32}, {}, (_PRELUDE,)),
    "tl_wide_begin.h": ({}, {}, ()),
    "tl_wide_end.h": ({}, {}, ()),
    "callext.c": ({"maxslots": callext.MAX_SLOTS, "maxrank": callext.MAX_RANK, "cases": "case 0: return 0;"}, {}, ()),
    "threshold_probes.c": ({"schedule": SCHEDULE, "block": threshold.BLOCK, "maxblocks": threshold.MAX_BLOCKS},
                           {}, ()),
    "gram_team.c": ({"p": "tl_"}, {"TEAM": "2"}, ()),
    "gram_pack.c": ({"s": "par", "p": "tl_"}, {**_GRAM_SHAPE, "TRANSPOSED": "0"}, ()),
    "gram_body2.c": ({"s": "par", "p": "tl_"}, {**_GRAM_SHAPE, "TRANSPOSED": "0"}, ("gram_pack.c", _TILES + "\n" + _STRIP)),
    "gram_body3.c": ({"s": "par", "p": "tl_"}, {**_GRAM_SHAPE, "TRANSPOSED": "0"}, ("gram_pack.c", _SROWS)),
    "probe_head.h": ({}, _PROBE_SHAPE, (_PROBE_INCLUDES,)),
    "probe_sort.c": (_PROBE_SORT, _PROBE_SHAPE, (_PROBE_INCLUDES, _PROBE_HEAD)),
    "probe_entry.c": ({"regionblocks": cprobe.REGION_BLOCKS, "regionahead": cprobe.REGION_AHEAD},
                      {**_PROBE_SHAPE, "SHIFT": str(cprobe.SORT_SHIFT)},
                      (_PROBE_INCLUDES, _PROBE_HEAD, _PROBE_FUNCTIONS)),
    "probe_cells.c": ({"wparams": "double w0[2][S][B]", "weights": "", "low": "1.0", "radius": 2, "first": "-1.0"},
                      _PROBE_SHAPE, (_PROBE_INCLUDES, _PROBE_HEAD)),
    "probe_points.c": ({"full": 3, "wparams": "double w0[2][S][B]", "strides": "st0 = stride[0]", "unused": "(void)st0;", "parallel": 2048, "ahead": 16,
                        "firsttap": -1, "radius": 2, "rows": "", "wdecls": "double w0[2][S][B];", "wargs": "w0",
                        "lanes": "const tl_bd R0_0 = nanv;", "keep": "", "results": "double res[1][B];",
                        "packs": "", "stores": "", "unpacks": "", "streambytes": "8388608.0"},
                       {**_PROBE_SHAPE, "UNPACK": "64", "UNPACK_AHEAD": "1"},
                       (_PROBE_INCLUDES, _PROBE_HEAD, _PROBE_CELLS, ("probe_sort.c", _PROBE_SORT))),
    "strands_prelude.h": ({}, {}, ()),
    "strands_linalg.h": ({}, {}, (_STRANDS_PRELUDE,)),
    "strands_api.h": ({}, {}, ("#include <stdint.h>\n" + cstrands_probe.TYPEDEF + "\n",)),
    "strands_births.c": ({}, {"TL_NBR": "2", "TL_NBI": "1"}, (_STRANDS_PRELUDE,)),
    "strands_bounds.c": ({}, {}, ()),
    "strands_neighbours.c": ({"keep": "tl_keep_site(0, n, 1.0, status, dead);"}, _STRANDS_NEIGHBOURS,
                             (*_STRANDS_HEAD, "#define TL_BK 64\n")),
    "strands_driver.c": ({"snap": "", "block": "", "solosteps": ""}, _STRANDS_DRIVER,
                         (*_STRANDS_HEAD, ("strands_births.c", {}), _STRANDS_CALLED, ("tl_threads.h", codegen.CHOICE))),
}


#: Other branches of a file: the transposed X of the Gram kernels, the probes' AVX2 gathers.
BRANCHES = {
    **{name: [["-UTRANSPOSED", "-DTRANSPOSED=1"]] for name in ("gram_pack.c", "gram_body2.c", "gram_body3.c")},
    "probe_head.h": [["-mavx2"]],
    "tl_prelude.h": [["-UTL_FILL_REAL", "-DTL_FILL_REAL=float"]],
    "strands_neighbours.c": [["-UTL_STILL", "-DTL_STILL=0"], ["-UTL_INDIRECT_KEY", "-DTL_INDIRECT_KEY=1"]],
    "strands_driver.c": [["-UTL_SOLO", "-DTL_SOLO=1"], ["-UTL_INDIRECT", "-DTL_INDIRECT=1"], ["-UTL_COMM", "-DTL_COMM=1"]],
}


def _path(name: str) -> Path:
    return Path(str(resources.files(csrc).joinpath(name)))


def test_every_c_file_has_a_recipe_and_its_placeholders_are_the_recipes():
    assert set(csrc.names()) == set(RECIPES)
    for name, (fill, _, _) in RECIPES.items():
        assert csrc.placeholders(name) == set(fill), name


def test_text_fills_every_placeholder_and_drops_the_notes():
    text = csrc.text("threshold_probes.c", schedule="static", block=7, maxblocks=9)
    assert "TL_FILL_" not in text and "schedule(static)" in text and "n / 7 < 9" in text
    assert not any(line.startswith("//") for line in text.splitlines())
    assert _path("threshold_probes.c").read_text().startswith("// threshold_probes.c:")


@pytest.mark.parametrize("fill", [{}, {"schedule": "static", "block": 1}, {"schedule": "static", "block": 1,
                                                                             "maxblocks": 2, "extra": 3}])
def test_text_refuses_a_missing_or_unused_value(fill):
    with pytest.raises(KeyError):
        csrc.text("threshold_probes.c", **fill)


def test_the_caller_switch_has_a_case_for_every_slot_count():
    """The extension (csrc/callext.c with callext.py's cases) calls a kernel's function with
    n buffer pointers for n up to MAX_SLOTS."""
    cases = re.findall(r"case (\d+): return \(\(int \(\*\)\(([^)]*)\)\)fn\)\(([^;]*)\);", callext.source())
    assert [int(n) for n, _, _ in cases] == list(range(callext.MAX_SLOTS + 1))
    for n, types, args in cases:
        assert types == ", ".join(["void *"] * int(n) + ["int"])
        assert args == ", ".join([f"p[{k}]" for k in range(int(n))] + ["threads"])


def _accepts(flag: str, tmp_path: Path) -> bool:
    empty = tmp_path / "empty.c"
    empty.write_text("int tl_empty;\n")
    run = subprocess.run([*COMPILER.command, flag, "-fsyntax-only", str(empty)], capture_output=True)
    return run.returncode == 0


@needs_compiler
@pytest.mark.parametrize("name", sorted(RECIPES))
def test_each_file_compiles_as_c_on_its_own(name, tmp_path):
    """``cc -fsyntax-only`` with the build's language flags (C99, OpenMP where the
    compiler has it), the placeholders as -D macros, for each branch of the file
    (:data:`BRANCHES`), and again with AVX-512 where the compiler takes ``-mavx512f``."""
    fill, macros, follows = RECIPES[name]
    flags = [f for f in COMPILER.flags if f in ("-std=c99", "-fopenmp", "-fopenmp-simd", "-fno-strict-aliasing")]
    flags += ["-fsyntax-only", "-Werror=implicit-function-declaration", "-Werror=implicit-int"]
    if name == "callext.c":
        includes = callext.include_dirs()
        if includes is None:
            pytest.skip("no Python.h or numpy/arrayobject.h here")
        flags += [f"-I{d}" for d in includes]
    defines = {**{f"TL_FILL_{k.upper()}": str(v) for k, v in fill.items()}, **macros}
    flags += [f"-D{k}={v}" for k, v in defines.items()]
    for k, piece in enumerate(follows):
        if isinstance(piece, tuple):
            text = csrc.text(piece[0], **piece[1])
        elif piece in RECIPES:
            text = csrc.raw(piece)  # the same placeholders, the same -D's
        else:
            text = piece
        before = tmp_path / f"before{k}.h"
        before.write_text(text)
        flags += ["-include", str(before)]
    variants = [[], *BRANCHES.get(name, [])]
    if _accepts("-mavx512f", tmp_path):
        variants += [["-mavx512f", *branch] for branch in variants]
    for extra in variants:
        run = subprocess.run([*COMPILER.command, *flags, *extra, str(_path(name))], capture_output=True, text=True)
        assert run.returncode == 0, f"{name} {extra}:\n{run.stderr}"
