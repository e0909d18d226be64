"""``inv`` and ``det`` of 2x2 and 3x3 matrices (and ``trace``, ``•``, ``:``, ``⊗``, ``×``,
``|x|``, ``normalize`` of tensors) compute what the real Diderot compiler's executables
compute, operation for operation (docs/diderot.md, "inv and det"): inv of a 2x2 is
(trace·I − M)/det, of a 3x3 ((tr² − tr M²)/2·I − tr·M + M²)/det, so a singular matrix gives
±∞ and ⊥ (1/0, 0/0), not ⊥ everywhere; the strand interpreter and C agree bit for bit.

``more/linalg_diderotc.json`` holds the matrices of ``more/linalg.diderot`` with the outputs
diderotc's executable made of them (2026-12-01): ``exact``, its generated C++ rebuilt with
``-ffp-contract=off`` (tensorlang's outputs, bit for bit), and ``fma``, as ``diderotc --double
--exec`` builds it (``-march=native -O3``: g++ contracts products and sums into FMAs, which
changes the last bits, and more where the closed form cancels: diag(1e16, 1, 1)).
:func:`test_the_stored_outputs_are_what_diderotc_makes_today` remakes both where diderotc is on
PATH."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build
from agreement import same_bits  # tests/diderot is on the path: the folder is not a package

MORE = Path(__file__).parent / "more"
CASES = json.loads((MORE / "linalg_diderotc.json").read_text())
OUTPUTS = ("inv2", "inv3", "dets", "prods", "outer", "vecs", "cross2", "unit", "unit2", "scal")
#: where the closed form cancels (diag(1e16, 1, 1): tr² − tr M² loses every bit), FMA or not changes the result
ILL = {15}
needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


def _write(path: Path, ms: np.ndarray) -> None:
    head = f"NRRD0004\ntype: double\ndimension: 2\nsizes: {ms[0].size} {len(ms)}\nendian: little\nencoding: raw\n\n"
    path.write_bytes(head.encode() + ms.astype("<f8").tobytes())


def _inputs(folder: Path) -> None:
    for key, name in (("a", "ms2"), ("b", "ms3"), ("c", "ns3")):
        _write(folder / f"{name}.nrrd", np.array([c[key] for c in CASES], dtype=np.float64))


def _stored(which: str) -> dict[str, np.ndarray]:
    return {k: np.array([c[which][k] for c in CASES], dtype=np.float64) for k in OUTPUTS}


def _ours(tmp_path: Path, backend: str) -> dict[str, np.ndarray]:
    _inputs(tmp_path)
    res = strands(check(parse_program((MORE / "linalg.diderot").read_text())), str(tmp_path)).run({}, backend=backend)
    return {k: np.asarray(res.outputs[k], dtype=np.float64).reshape(len(CASES), -1) for k in OUTPUTS}


def _flat(d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v.reshape(len(CASES), -1) for k, v in d.items()}


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=needs_cc)])
def test_every_output_is_diderotcs_bit_for_bit(backend, tmp_path):
    ours, want = _ours(tmp_path, backend), _flat(_stored("exact"))
    for k in OUTPUTS:
        bad = [i for i in range(len(CASES)) if not same_bits(ours[k][i], want[k][i])]
        assert not bad, (k, bad, ours[k][bad[0]], want[k][bad[0]])


@needs_cc
def test_the_interpreter_and_c_agree_bit_for_bit(tmp_path):
    a, c = _ours(tmp_path, "interp"), _ours(tmp_path, "c")
    assert all(same_bits(a[k], c[k]) for k in OUTPUTS)


def test_singular_and_signed_zeros_are_diderots():
    """[[1,2],[2,4]] → [[∞,−∞],[−∞,∞]] (diderotc's, not ⊥ everywhere); the identity's inverse has
    +0 off the diagonal (trace·0 − 0) where cofactors give −0; the zero 3x3 matrix is 0/0."""
    from tensorlang.lang.diderot.interp import BASIS

    inv = BASIS["inv"]
    assert np.array_equal(inv(np.array([[1.0, 2.0], [2.0, 4.0]])), [[np.inf, -np.inf], [-np.inf, np.inf]])
    got = inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
    assert same_bits(got, [[0.5, 0.0], [0.0, 0.25]]) and not np.signbit(got[0, 1])
    assert np.all(np.isnan(inv(np.zeros((3, 3)))))
    assert BASIS["det"](np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])) == 0.0


def test_fma_outputs_differ_only_in_the_last_bits():
    """What ``diderotc --exec`` itself gives (FMAs) is the exact form within 4e-15, outside ILL."""
    exact, fma = _flat(_stored("exact")), _flat(_stored("fma"))
    for k in OUTPUTS:
        for i in set(range(len(CASES))) - ILL:
            assert np.array_equal(np.isnan(exact[k][i]), np.isnan(fma[k][i])), (k, i)
            assert np.allclose(fma[k][i], exact[k][i], rtol=4e-15, atol=0, equal_nan=True), (k, i)


def _diderotc_outputs(folder: Path, contract: bool) -> dict[str, np.ndarray]:
    """Build more/linalg.diderot with diderotc (``contract``: as it does; else its C++ rebuilt
    with -ffp-contract=off, the flags of its driver otherwise) and run it in ``folder``."""
    import nrrd

    shutil.copy(MORE / "linalg.diderot", folder)
    subprocess.run(["diderotc", "--double", "--exec", "linalg.diderot"], cwd=folder, check=True, capture_output=True,
                   timeout=600)
    if not contract:
        home, teem = Path(shutil.which("diderotc") or "").parent.parent, Path(shutil.which("unu") or "").parent.parent
        subprocess.run(["g++", "-m64", "-fPIC", "-march=native", "-O3", "-DNDEBUG", "-ffp-contract=off",
                        f"-I{home}/include", f"-I{teem}/include", "linalg.cxx", "-o", "linalg",
                        str(home / "lib" / "diderot-rt-seq.o"), f"-Wl,-rpath={teem}/lib", f"-L{teem}/lib", "-lteem", "-lm"],
                       cwd=folder, check=True, capture_output=True, timeout=600)
    subprocess.run(["./linalg"], cwd=folder, check=True, capture_output=True, timeout=60)
    return {k: nrrd.read(str(folder / f"{k}.nrrd"))[0].T.reshape(len(CASES), -1) for k in OUTPUTS}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("diderotc") is None or shutil.which("unu") is None or shutil.which("g++") is None,
                    reason="diderotc (the real Diderot compiler), teem's unu and g++ are not on PATH")
def test_the_stored_outputs_are_what_diderotc_makes_today(tmp_path):
    _inputs(tmp_path)
    exact = _diderotc_outputs(tmp_path, contract=False)
    ours, want = _ours(tmp_path, "interp"), _flat(_stored("exact"))
    for k in OUTPUTS:
        assert same_bits(exact[k], want[k]) and same_bits(ours[k], exact[k]), k
    fma = _diderotc_outputs(tmp_path, contract=True)
    for k in OUTPUTS:
        for i in set(range(len(CASES))) - ILL:
            assert np.allclose(fma[k][i], exact[k][i], rtol=4e-15, atol=0, equal_nan=True), (k, i)
