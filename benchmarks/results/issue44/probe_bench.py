"""What the probe measurements of this folder share (probe_phases/, sort_unpack/, tiles/): the
source tree whose probe C is measured, the C wrapper ``tl_phases`` that times a probe's phases
apart, and the libraries' rounds, interleaved.  The scripts put this folder on sys.path."""
import ctypes
import os
import sys
from string import Template

import numpy as np


def tree():
    """The probe (``targets/c/probe.py``) and the kernels of the source tree at $SRC (unset: this
    repository's src), imported from there."""
    sys.path.insert(0, os.environ.get("SRC") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../src"))
    from tensorlang.sampling.kernels import KERNELS
    from tensorlang.targets.c import probe
    return KERNELS, probe


_PHASES = Template(r'''
#include <time.h>
static double tl_now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
/* t[0] the sort, t[1] the probes, t[2] the unpacking (one thread); coherent points: t[1] only */
void tl_phases(int64_t n, const double *pts, const double *data, const int64_t *sizes, const double *M, double *out,
               char *scratch, double *t)
{
    const size_t lines_sorted = ((size_t)n * D * sizeof(double) + 63) / 64;
    const size_t lines_key = ((size_t)n * sizeof(int32_t) + 63) / 64;
    double *sorted = (double *)(scratch + (64 - (uintptr_t)scratch % 64) % 64);
    int32_t *key = (int32_t *)((char *)sorted + lines_sorted * 64);
    double *packed = (double *)((char *)key + lines_key * 64);
${ends}    const double a = tl_now();
    const int64_t blocks = ${sort};
    const double b = tl_now();
    if (blocks <= 0) {  /* coherent points: the given order */
        tl_probe_points(n, pts, 0, data, sizes, M, out, 1, 0);
        t[0] = b - a; t[1] = tl_now() - b; t[2] = 0;
${early}        return;
    }
${probes}
    const double c = tl_now();
    tl_unpack(n, key, packed, out, 1);
    t[0] = b - a; t[1] = c - b; t[2] = tl_now() - c;
${free}}
''')

_ENDS = '''    int64_t total = 1;
    for (int a = 0; a < D; a++) total *= ((sizes[a] - 1) >> SHIFT) + 1;
%s    int64_t *ends = %s ? (int64_t *)malloc((size_t)total * sizeof(int64_t)) : NULL;
'''


def phases_c(probe, sort: str = "tl_sort(n, pts, sizes, M, sorted, key, 1)", ends: str = "", tiles: str = "",
             setup: str = "") -> str:
    """``tl_phases``, C to append to ``probe.source``'s: a wrapper that makes the choices ``tl_probe``
    makes and times ``sort`` (a C call), the probes and ``tl_unpack`` apart (thread CPU time).  With
    ``ends`` (a C condition on ``n`` and the blocks' number ``total``, after the C lines ``setup``) the
    blocks' ends are asked for and the probes are ``tiles`` (a C statement) where it holds; else (and
    without ``ends``) ``tl_probe_points`` on the sorted points with the tree's look-ahead."""
    look = (f"int64_t look = {probe.REGION_BLOCKS} * (n / blocks);\n"
            f"look = look < B ? B : look > {probe.REGION_AHEAD} ? {probe.REGION_AHEAD} : look;\n"
            "tl_probe_points(n, sorted, 1, data, sizes, M, packed, 1, look);")
    if not ends:
        return _PHASES.substitute(ends="", sort=sort, early="", free="", probes="    " + look.replace("\n", "\n    "))
    probes = f"    if (ends != NULL) {{\n        {tiles};\n    }} else {{\n        {look.replace(chr(10), chr(10) + ' ' * 8)}\n    }}"
    return _PHASES.substitute(ends=_ENDS % (setup, ends), sort=sort, early="        free(ends);\n", free="    free(ends);\n",
                              probes=probes)


def library(name: str):
    """The probe library ``name`` (a gen.py's C, built: its name ends in its derivative order, p0.so,
    a345_1.so), its ``tl_phases`` typed, and that order."""
    lib = ctypes.CDLL(os.path.abspath(name))
    lib.tl_phases.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 7
    return lib, int(os.path.basename(name).split(".")[0][-1])


def scratch(n: int) -> np.ndarray:
    """The scratch of a probe of ``n`` points (sorted points, keys, packed results)."""
    return np.empty(n * 14 + 1000)


def phases(lib, pts, data, sizes, M, out, work) -> np.ndarray:
    """One call of ``lib``'s ``tl_phases`` on ``pts``: the seconds of its sort, probes and unpacking."""
    t = np.zeros(3)
    lib.tl_phases(len(pts), pts.ctypes.data, data.ctypes.data, sizes.ctypes.data, M.ctypes.data, out.ctypes.data,
                  work.ctypes.data, t.ctypes.data)
    return t


def rounds(calls: dict, reps: int) -> dict:
    """Each of ``calls``' results (a name -> a call without arguments) over ``reps`` rounds, the calls
    in turn, in reverse order every other round."""
    times: dict = {name: [] for name in calls}
    for r in range(reps):
        for name in (list(calls) if r % 2 == 0 else list(calls)[::-1]):
            times[name].append(calls[name]())
    return times
