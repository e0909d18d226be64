"""Other projects' einsum test suites, read for their cases and written here as tensorlang's
own data: each case is an equation and its operands' shapes (facts, not code), run through
``tl.einsum`` on every back end (``numpy``, ``interp``, ``c`` where a C compiler works), in
the sublist form and through ``tl.contract_expression``, against ``numpy.einsum``.

Suites read (the cases' ``source``): PyTorch ``test/test_linalg.py`` (``test_einsum*``),
JAX ``tests/lax_numpy_einsum_test.py``, Dask ``dask/array/tests/test_routines.py``,
TensorFlow ``kernel_tests/linalg/einsum_op_test.py``, CuPy
``tests/cupy_tests/linalg_tests/test_einsum.py`` (with its shrunk and size-1 variants of
each shape), opt_einsum's ``test_edge_cases.py`` and numpy's newest ``test_einsum.py``
(which has no case the installed one lacks: ``test_numpy_suite.py`` runs that).

Where numpy refuses a call, tl.einsum refuses it with a :class:`tl.TensorLangError`
(``error[input]``) of numpy's exception type (ValueError, TypeError, KeyError), never a
result.  Float inputs carry NaN, ±inf and ±0: where numpy's entry is not finite
tensorlang's is not either (it may be ±inf where numpy has NaN: docs/einsum.md, "NaN and
infinities"), finite entries agree up to rounding.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import tensorlang as tl

from test_einsum import _data  # NaN, ±inf and ±0 among uniform numbers

BACKENDS = [b for b in ("numpy", "interp", "c") if b in tl.available_backends()]
#: numpy's own warnings where its optimized paths (matmul, tensordot) meet inf and NaN
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

#: (source, subscripts, shapes)
CASES = [
    # PyTorch test_einsum (shapes of its x, y, A..I)
    ("torch", "i->", [(5,)]),
    ("torch", "i,i->", [(5,), (5,)]),
    ("torch", "i,i->i", [(5,), (5,)]),
    ("torch", "i,j->ij", [(5,), (7,)]),
    ("torch", "ij->ji", [(3, 5)]),
    ("torch", "ij->j", [(3, 5)]),
    ("torch", "ij->i", [(3, 5)]),
    ("torch", "ij,ij->ij", [(3, 5), (3, 5)]),
    ("torch", "ij,j->i", [(3, 5), (5,)]),
    ("torch", "ij,kj->ik", [(3, 5), (2, 5)]),
    ("torch", "ij,ab->ijab", [(3, 5), (7, 9)]),
    ("torch", "Aij,Ajk->Aik", [(2, 3, 5), (2, 5, 7)]),
    ("torch", "ijk,jk->i", [(2, 3, 5), (3, 5)]),
    ("torch", "aij,jk->aik", [(2, 5, 7), (7, 9)]),
    ("torch", "abCd,dFg->abCFg", [(2, 3, 3, 5), (5, 4, 6)]),
    ("torch", "ijk,jk->ik", [(2, 3, 5), (3, 5)]),
    ("torch", "ijk,jk->ij", [(2, 3, 5), (3, 5)]),
    ("torch", "ijk,ik->j", [(2, 3, 5), (2, 5)]),
    ("torch", "ijk,ik->jk", [(2, 3, 5), (2, 5)]),
    ("torch", "ii", [(4, 4)]),
    ("torch", "ii->i", [(4, 4)]),
    ("torch", "iji->j", [(2, 3, 2)]),
    ("torch", "ngrg...->nrg...", [(2, 1, 3, 1, 4)]),
    ("torch", "i...->...", [(4, 4)]),
    ("torch", "ki,...k->i...", [(5, 3), (2, 5)]),
    ("torch", "k...,jk->...", [(5, 3), (2, 5)]),
    ("torch", "...ik, ...j -> ...ij", [(2, 3, 5), (5,)]),
    ("torch", "Bik,k...j->i...j", [(2, 3, 5), (5, 3)]),
    ("torch", "i...j, ij... -> ...ij", [(2, 3, 5), (2, 5, 2, 3)]),
    ("torch", "bn,anm,bm->ba", [(5, 10), (15, 10, 20), (5, 20)]),
    ("torch", "bn,Anm,bm->bA", [(5, 5), (15, 5, 10), (5, 10)]),
    # PyTorch test_einsum_corner_cases (spaces, 0-d operands, broadcasting)
    ("torch", " ", [()]),
    ("torch", " -> ", [()]),
    ("torch", " , ", [(), ()]),
    ("torch", " , , ", [(), (), ()]),
    ("torch", " , -> ", [(), ()]),
    ("torch", " i ", [(1,)]),
    ("torch", " i -> ", [(1,)]),
    ("torch", " i , i ", [(1,), (1,)]),
    ("torch", " i , i -> i ", [(1,), (1,)]),
    ("torch", "i,j", [(1,), (2,)]),
    ("torch", "i,ij->ij", [(2,), (2, 3)]),
    ("torch", "...", [()]),
    ("torch", "...->", [()]),
    ("torch", "...->...", [()]),
    ("torch", "...->", [(1,)]),
    ("torch", "z...->z", [(1,)]),
    ("torch", "Z...->...Z", [(1,)]),
    ("torch", "...a->", [(2, 1)]),
    ("torch", "a...b->ab", [(2, 2, 1)]),
    # JAX lax_numpy_einsum_test
    ("jax", "i,j,k->ijk", [(3,), (4,), (5,)]),
    ("jax", "ijk,j->i", [(3, 4, 5), (4,)]),
    ("jax", "iji,i->j", [(3, 4, 3), (3,)]),
    ("jax", "nij,jk->nik", [(10, 2, 3), (3, 4)]),
    ("jax", "sa,shb->shab", [(2, 1), (2, 3, 4)]),
    ("jax", "...ijk->...ki", [(2, 3, 4, 5)]),
    ("jax", "...ijk->ki", [(3, 4, 5)]),
    ("jax", "iii->", [(3, 3, 3)]),
    ("jax", "iij->i", [(3, 3, 4)]),
    ("jax", "iijkk->ik", [(3, 3, 5, 4, 4)]),
    ("jax", "iijkl->il", [(3, 3, 5, 4, 4)]),
    ("jax", "ij...,jk...->ik...", [(2, 3, 5, 1), (3, 4, 5, 1)]),
    ("jax", "ijj,k->ik", [(2, 3, 3), (4,)]),
    ("jax", "ij,ij,jk->ik", [(2, 3), (2, 3), (3, 4)]),
    ("jax", "ijkl,ijml->ijkm", [(1, 8, 20, 4), (1, 8, 20, 4)]),
    ("jax", "ntk,kd,dc->nc", [(2, 6, 5), (5, 4), (4, 3)]),
    ("jax", "cij,cjk->cik", [(3, 4, 5), (3, 1, 6)]),
    ("jax", "cij,cjk->cik", [(1, 4, 5), (3, 5, 6)]),
    ("jax", "cij,cjk->cik", [(1, 4, 5), (3, 1, 6)]),
    ("jax", "...ij,...j", [(2, 1, 3, 3), (2, 4, 3)]),
    ("jax", "ijk,kl->ijl", [(2, 2, 2), (2, 2)]),
    ("jax", "ij,jkl,klm", [(2, 2), (2, 3, 4), (3, 4, 2)]),
    ("jax", "baa->ba", [(1, 2, 2)]),
    # Dask test_einsum (its label sizes a5 b6 c7 d5 e6 f10 g1 h2, '...' 11)
    ("dask", "abc,bad->abcd", [(5, 6, 7), (6, 5, 5)]),
    ("dask", "abcdef,bcdfg->abcdeg", [(5, 6, 7, 5, 6, 10), (6, 7, 5, 10, 1)]),
    ("dask", "ea,fb,abcd,gc,hd->efgh", [(6, 5), (10, 6), (5, 6, 7, 5), (1, 7), (2, 5)]),
    ("dask", "ab,b", [(5, 6), (6,)]),
    ("dask", "aa", [(5, 5)]),
    ("dask", "a,a->", [(5,), (5,)]),
    ("dask", "a,a->a", [(5,), (5,)]),
    ("dask", "a,a", [(5,), (5,)]),
    ("dask", "a,b", [(5,), (6,)]),
    ("dask", "a,b,c", [(5,), (6,), (7,)]),
    ("dask", "a", [(5,)]),
    ("dask", "ba,b", [(6, 5), (6,)]),
    ("dask", "ba,b->", [(6, 5), (6,)]),
    ("dask", "defab,fedbc->defac", [(5, 6, 10, 5, 6), (10, 6, 5, 6, 7)]),
    ("dask", "ab...,bc...->ac...", [(5, 6, 11), (6, 7, 11)]),
    ("dask", "a...a", [(5, 11, 5)]),
    ("dask", "abc...->cba...", [(5, 6, 7, 11)]),
    ("dask", "...ab->...a", [(11, 5, 6)]),
    ("dask", "a...a->a...", [(5, 11, 5)]),
    ("dask", "...abc,...abcd->...d", [(11, 5, 6, 7), (11, 5, 6, 7, 5)]),
    ("dask", "ab...,b->ab...", [(5, 6, 11), (6,)]),
    ("dask", "aa->a", [(5, 5)]),
    ("dask", "ab,ab,c->c", [(5, 6), (5, 6), (7,)]),
    ("dask", "aab,bc->ac", [(5, 5, 6), (6, 7)]),
    ("dask", "aab,bcc->ac", [(5, 5, 6), (6, 7, 7)]),
    ("dask", "fdf,cdd,ccd,afe->ae", [(10, 5, 10), (7, 5, 5), (7, 7, 5), (5, 10, 6)]),
    ("dask", "fff,fae,bef,def->abd", [(10, 10, 10), (10, 5, 6), (6, 6, 10), (5, 6, 10)]),
    ("dask", "aij,amn->ijmn", [(2, 4, 4), (2, 4, 4)]),
    ("dask", "ijk,kl,jl", [(1, 5, 4), (4, 6), (5, 6)]),
    ("dask", "ijk,kl,jl,i->i", [(1, 5, 4), (4, 6), (5, 6), (10,)]),
    ("dask", "abjk,kl,jl", [(1, 1, 5, 4), (4, 6), (5, 6)]),
    ("dask", "abjk,kl,jl,ab->ab", [(1, 1, 5, 4), (4, 6), (5, 6), (7, 7)]),
    ("dask", "ajk,kbl,jl,ab->ab", [(1, 5, 4), (4, 1, 6), (5, 6), (7, 7)]),
    ("dask", "ca,ca->c", [(0, 10), (0, 10)]),
    # TensorFlow einsum_op_test
    ("tf", "->", [()]),
    ("tf", "ab->", [(3, 3)]),
    ("tf", "abc->cab", [(3, 4, 5)]),
    ("tf", "aaa->a", [(3, 3, 3)]),
    ("tf", "aabcc->a", [(3, 3, 5, 4, 4)]),
    ("tf", "aabcd->ad", [(3, 3, 5, 4, 4)]),
    ("tf", "->...", [()]),
    ("tf", "a...a->", [(2, 2)]),
    ("tf", "a...a->...", [(2, 5, 1, 2)]),
    ("tf", "a...a->a...", [(2, 1, 2)]),
    ("tf", "a...a->a...", [(2, 3, 4, 5, 2)]),
    ("tf", "...ijk->...ki", [(1, 3, 4, 5)]),
    ("tf", "...ijk->...ki", [(2, 2, 3, 4, 5)]),
    ("tf", "i...ii->...i", [(3, 2, 3, 3)]),
    ("tf", ",->", [(), ()]),
    ("tf", "ab,b->a", [(3, 4), (4,)]),
    ("tf", "abc,bad->abcd", [(1, 2, 3), (2, 1, 4)]),
    ("tf", "ba,b->", [(3, 2), (3,)]),
    ("tf", "abce,badf->abcd", [(1, 2, 3, 4), (2, 1, 4, 3)]),
    ("tf", "aba,a->b", [(3, 4, 3), (3,)]),
    ("tf", "aab,bc->ac", [(2, 2, 3), (3, 4)]),
    ("tf", "aab,bcc->ac", [(2, 2, 3), (3, 4, 4)]),
    ("tf", "...mk,...kn->...mn", [(5, 1, 2, 3), (5, 1, 3, 4)]),
    ("tf", "...mk,...kn->...mn", [(2, 3), (3, 4)]),
    ("tf", "...ija,aijb...->ba...ij", [(1, 2, 2, 3, 1), (1, 2, 3, 4, 1, 2)]),
    ("tf", "...mk,...kn->mn", [(2, 3), (3, 4)]),
    ("tf", "...mk,kn->mn", [(2, 3), (3, 4)]),
    ("tf", "mk,...kn->mn", [(2, 3), (3, 4)]),
    ("tf", "...ij,...jk->...ik", [(1, 2, 3), (3, 5)]),
    ("tf", "...ij,...jk->...ik", [(2, 3), (1, 3, 5)]),
    ("tf", "...ij,...jk->...ik", [(5, 2, 3), (3, 5)]),
    ("tf", "...ij,...jk->...ik", [(2, 3), (5, 3, 5)]),
    ("tf", "...ij,...jk->...ik", [(3, 1, 2, 3), (1, 1, 7, 3, 5)]),
    ("tf", "i...j,j...k->...ik", [(2, 1, 3, 1, 3), (3, 1, 7, 5)]),
    ("tf", "...abc,...abcd->...d", [(1, 1, 2, 3, 4), (5, 2, 3, 4, 6)]),
    ("tf", "ab...,b->ab...", [(2, 3, 1, 1, 5), (3,)]),
    ("tf", "i...j,j...k->i...k", [(3, 1, 2, 2), (2, 2, 3, 1, 4)]),
    ("tf", "ij,jk...k->i...", [(3, 2), (2, 4, 1, 4)]),
    ("tf", "ij,jk...k->...i", [(3, 2), (2, 4, 5, 4)]),
    ("tf", "ijj,jk...k->i...", [(3, 2, 2), (2, 4, 1, 4)]),
    ("tf", "i...jj,jk...k->i...", [(3, 3, 1, 2, 2), (2, 4, 1, 5, 4)]),
    ("tf", "bijl,bjkm->bik", [(9, 2, 3, 5), (9, 3, 4, 7)]),
    ("tf", "...ij,...->...i", [(4, 3, 1, 2), (4, 3)]),
    ("tf", "...ij,...jk->...ik", [(3, 1, 2, 3), (1, 7, 3, 4)]),
    ("tf", "ab,bc->ac", [(0, 10), (10, 10)]),
    ("tf", "ibnd,ijbn->jnd", [(1, 0, 5, 10), (1, 1, 0, 5)]),
    ("tf", "aab,bc->ac", [(0, 0, 10), (10, 10)]),
    ("tf", "aaab,bc->c", [(0, 0, 0, 3), (3, 4)]),
    # CuPy test_einsum (unary, binary, ternary, large)
    ("cupy", "ij", [(2, 3)]),
    ("cupy", "...", [(2, 3)]),
    ("cupy", "ji", [(2, 3)]),
    ("cupy", "jii->ij", [(3, 3, 3)]),
    ("cupy", "...ii->...i", [(3, 3, 3)]),
    ("cupy", "kji->ikj", [(2, 3, 4)]),
    ("cupy", "j...i->i...j", [(2, 3, 4)]),
    ("cupy", "ijkj->kij", [(2, 2, 2, 2)]),
    ("cupy", "ijij->ij", [(2, 2, 2, 2)]),
    ("cupy", "jiji->ij", [(2, 2, 2, 2)]),
    ("cupy", "ii...->...", [(2, 2, 2, 2)]),
    ("cupy", "i...i->...", [(2, 2, 2, 2)]),
    ("cupy", "...ii->...", [(2, 2, 2, 2)]),
    ("cupy", "j...i->...", [(2, 2, 2, 2)]),
    ("cupy", "ij->ij...", [(2, 3)]),
    ("cupy", "ij->i...j", [(2, 3)]),
    ("cupy", "ij->...ij", [(2, 3)]),
    ("cupy", "ij...->ij", [(2, 3)]),
    ("cupy", "i...j->ij", [(2, 3)]),
    ("cupy", "", [()]),
    ("cupy", "i,i", [(3,), (3,)]),
    ("cupy", "ij,j", [(2, 3), (3,)]),
    ("cupy", "ij,i", [(2, 3), (2,)]),
    ("cupy", "ij,jk", [(2, 3), (3, 4)]),
    ("cupy", "ijk, jil -> kl", [(3, 4, 2), (4, 3, 2)]),
    ("cupy", "i...,...k->ki...", [(3, 4, 2), (4, 2, 3)]),
    ("cupy", "ij...,ji...->i...", [(3, 4, 2), (4, 3, 2)]),
    ("cupy", "ijil,jkk->kj", [(2, 3, 2, 4), (3, 2, 2)]),
    ("cupy", "i...ij,ji...->...j", [(2, 4, 2, 3), (3, 2, 4)]),
    ("cupy", "ij...,j...->ij...", [(2, 3, 4), (3,)]),
    ("cupy", "ij...,...j->ij...", [(2, 3, 4), (3,)]),
    ("cupy", "ij...,j->ij...", [(2, 3, 4), (3,)]),
    ("cupy", "ik...,k...->i...", [(4, 3), (3, 2)]),
    ("cupy", "ik...,...kj->i...j", [(4, 3), (3, 2)]),
    ("cupy", "...k,kj", [(4, 3), (3, 2)]),
    ("cupy", "ik,k...->i...", [(4, 3), (3, 2)]),
    ("cupy", "ijkl,k", [(2, 3, 4, 5), (4,)]),
    ("cupy", "...kl,k", [(2, 3, 4, 5), (4,)]),
    ("cupy", "...kl,k...", [(2, 3, 4, 5), (4,)]),
    ("cupy", "...lmn,lmno->...o", [(1, 1, 1, 2, 3, 2), (2, 3, 2, 2)]),
    ("cupy", ",i->", [(), (2,)]),
    ("cupy", "i,->", [(2,), ()]),
    ("cupy", "ij,jk,kl", [(2, 3), (3, 4), (4, 5)]),
    ("cupy", "ij,ik,i->ijk", [(2, 4), (2, 3), (2,)]),
    ("cupy", "ij,ki,i->jk", [(2, 4), (3, 2), (2,)]),
    ("cupy", "i...,i,...i->...i", [(2, 3, 4), (2,), (3, 4, 2)]),
    ("cupy", "a...,...b,c...->abc...", [(2, 3, 4), (4, 3), (3, 3, 4)]),
    ("cupy", "a...,...,c...->ac...", [(2, 3, 4), (3, 4), (3, 3, 4)]),
    ("cupy", "a...,...b,c...->abc...", [(3, 3, 4), (4, 3), (2, 3, 4)]),
    ("cupy", "a...,...,c...->ac...", [(3, 3, 4), (3, 4), (2, 3, 4)]),
    # opt_einsum test_edge_cases
    ("opt_einsum", "obk,ijk->ioj", [(2, 4, 8), (2, 4, 8)]),
    ("opt_einsum", "ab,bc,bd->acd", [(5, 4), (1, 5), (4, 20)]),
]

#: CuPy's "large" cases: its label sizes a2 b3 c4 d5 e4 f3 g2 h6 i5 j4.
_LARGE_SIZES = dict(zip("abcdefghij", (2, 3, 4, 5, 4, 3, 2, 6, 5, 4)))
for _eq in ("a,b,c->abc", "acdf,jbje,gihb,hfac", "acdf,jbje,gihb,hfac,gfac,gifabc,hfac",
            "chd,bde,agbc,hiad,bdi,cgh,agdb", "eb,cb,fb->cef", "dd,fb,be,cdb->cef", "bca,cdb,dbf,afc->",
            "dcc,fce,ea,dbf->ab", "a,ac,ab,ad,cd,bd,bc->"):
    CASES.append(("cupy", _eq, [tuple(_LARGE_SIZES[c] for c in term) for term in _eq.split("->")[0].split(",")]))


def _cupy_variants(shapes: list, seed: int) -> list:
    """CuPy's augmentation of a case: every size shrunk by 1 and by 2 (down to 0, a size 1
    kept), and each of those with some sizes made 1 (the same sizes everywhere, so that
    diagonals stay square)."""
    rnd = random.Random(seed)
    out = []
    for dec in (1, 2):
        shrunk = [tuple(1 if n == 1 else max(0, n - dec) for n in s) for s in shapes]
        out.append(shrunk)
        p = rnd.random()
        ones = {n: 1 if rnd.random() < p else n for s in shrunk for n in s}
        out.append([tuple(ones[n] for n in s) for s in shrunk])
    out.append([tuple(1 if rnd.random() < 0.5 else n for n in s) for s in shapes])  # broadcast sizes
    return out


VARIANTS = []
for _k, (_src, _eq, _shapes) in enumerate(CASES):
    if _src == "cupy" and len(_shapes) >= 2 and len(_eq.split(",")) <= 3:
        for _v in _cupy_variants(_shapes, _k):
            VARIANTS.append(("cupy-variant", _eq, _v))


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng([sum(map(ord, str(k))) for k in key])


def _numpy_or_error(*args, **kw):
    try:
        return np.einsum(*args, **kw), None
    except Exception as exc:  # noqa: BLE001 - the refusal is the expectation
        return None, exc


def _same(got, expected):
    """numpy's type, shape and dtype; non-finite where numpy is; finite entries close."""
    assert isinstance(got, np.ndarray) == isinstance(expected, np.ndarray), (type(got), type(expected))
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, got.dtype, expected.dtype)
    if expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, expected)
        return
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(expected))
    finite = np.isfinite(expected)
    tight = expected.dtype in (np.float64, np.complex128)
    np.testing.assert_allclose(np.where(finite, got, 0), np.where(finite, expected, 0),
                               rtol=1e-9 if tight else 2e-4, atol=1e-12 if tight else 1e-5)


def _check(subscripts, ops, backend, **kw):
    expected, refused = _numpy_or_error(subscripts, *ops, **kw)
    if refused is not None:
        _refuses_as_numpy(refused, subscripts, *ops, backend=backend, **kw)
        return
    _same(tl.einsum(subscripts, *ops, backend=backend, **kw), expected)


def _refuses_as_numpy(numpy_error: BaseException, *args, **kw):
    """``tl.einsum(*args, **kw)`` raises numpy's exception type, a tl.TensorLangError."""
    with pytest.raises(type(numpy_error)) as caught:
        tl.einsum(*args, **kw)
    assert isinstance(caught.value, tl.TensorLangError), repr(caught.value)
    assert "error[" in str(caught.value)


def _ids(cases):
    return [f"{src}:{eq}:{'x'.join(map(str, shapes))}".replace(" ", "_") for src, eq, shapes in cases]


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "c"])
@pytest.mark.parametrize("source, subscripts, shapes", CASES, ids=_ids(CASES))
def test_peer_cases_match_numpy(source, subscripts, shapes, backend):
    rng = _rng(source, subscripts, shapes)
    _check(subscripts, [_data(s, rng=rng) for s in shapes], backend)


#: the C back end in the quick tier (a compile each): a selection; test_every_case_on_c runs all
_QUICK_C = [c for c in CASES if (c[0], c[1]) in {
    ("torch", "ij,kj->ik"), ("torch", "abCd,dFg->abCFg"), ("jax", "iji,i->j"), ("jax", "sa,shb->shab"),
    ("dask", "ea,fb,abcd,gc,hd->efgh"), ("dask", "fdf,cdd,ccd,afe->ae"), ("tf", "i...jj,jk...k->i..."),
    ("cupy", "i...ij,ji...->...j"), ("opt_einsum", "ab,bc,bd->acd"), ("torch", " , , ")}]


@pytest.mark.skipif("c" not in BACKENDS, reason="no C compiler")
@pytest.mark.parametrize("source, subscripts, shapes", _QUICK_C, ids=_ids(_QUICK_C))
def test_a_selection_on_c(source, subscripts, shapes):
    rng = _rng(source, subscripts, shapes)
    _check(subscripts, [_data(s, rng=rng) for s in shapes], "c")


@pytest.mark.slow
@pytest.mark.parametrize("source, subscripts, shapes", CASES + VARIANTS, ids=_ids(CASES + VARIANTS))
def test_every_case_on_c(source, subscripts, shapes):
    if "c" not in BACKENDS:
        pytest.skip("no C compiler")
    rng = _rng(source, subscripts, shapes)
    ops = [_data(s, rng=rng) for s in shapes]
    _check(subscripts, ops, "c")
    expected, refused = _numpy_or_error(subscripts, *ops)
    if refused is None and len(shapes) >= 2:  # the expression runs the kernel tl.einsum compiled
        _same(tl.contract_expression(subscripts, *shapes)(*ops), expected)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "c"])
@pytest.mark.parametrize("source, subscripts, shapes", VARIANTS, ids=_ids(VARIANTS))
def test_shrunk_and_broadcast_variants(source, subscripts, shapes, backend):
    """CuPy's variants: sizes 0 (numpy computes: an empty sum is 0) and 1 (broadcasting)."""
    rng = _rng(source, subscripts, shapes)
    _check(subscripts, [_data(s, rng=rng) for s in shapes], backend)


def _sublists(subscripts: str, ndims: list):
    """The interleaved form of a case: letters as numpy's integers, '...' as Ellipsis."""
    def labels(term):
        out, k = [], 0
        while k < len(term):
            if term.startswith("...", k):
                out.append(Ellipsis)
                k += 3
            else:
                c = term[k]
                out.append(ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26)
                k += 1
        return out
    text = subscripts.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = [labels(t) for t in inputs.split(",")]
    return terms, (labels(output) if arrow else None)


_TWO_OR_MORE = [c for c in CASES if len(c[2]) >= 2]


@pytest.mark.parametrize("source, subscripts, shapes", _TWO_OR_MORE, ids=_ids(_TWO_OR_MORE))
def test_the_sublist_form_matches_numpy(source, subscripts, shapes):
    rng = _rng(source, subscripts, shapes)
    ops = [_data(s, rng=rng) for s in shapes]
    terms, output = _sublists(subscripts, [len(s) for s in shapes])
    args = [x for pair in zip(ops, terms) for x in pair] + ([output] if output is not None else [])
    _same(tl.einsum(*args, backend="numpy"), np.einsum(subscripts, *ops))
    _same(tl.einsum(*args, backend="numpy"), np.einsum(*args))


@pytest.mark.parametrize("source, subscripts, shapes", _TWO_OR_MORE, ids=_ids(_TWO_OR_MORE))
def test_contract_expressions_match_numpy(source, subscripts, shapes):
    rng = _rng(source, subscripts, shapes)
    ops = [_data(s, rng=rng) for s in shapes]
    expected = np.einsum(subscripts, *ops)
    expr = tl.contract_expression(subscripts, *shapes, backend="numpy")
    _same(expr(*ops), expected)
    if len(ops) > 1 and all(0 not in s for s in shapes):  # the first operand a constant
        fixed = tl.contract_expression(subscripts, ops[0], *shapes[1:], constants=[0], backend="numpy")
        _same(fixed(*ops[1:]), expected)


@pytest.mark.parametrize("source, subscripts, shapes", _TWO_OR_MORE[::6], ids=_ids(_TWO_OR_MORE[::6]))
def test_float32_operands(source, subscripts, shapes):
    rng = _rng(source, subscripts, shapes, "f4")
    ops = [_data(s, dtype=np.float32, rng=rng) for s in shapes]
    for backend in ("numpy", "interp"):
        _check(subscripts, ops, backend)


# ------------------------------------------------------------------ dtypes and keywords
_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_, np.float16, np.complex64, np.complex128]
_BINARY = [("ij,jk", [(2, 3), (3, 4)]), ("i...,...k->ki...", [(3, 4, 2), (4, 2, 3)]),
           ("ijil,jkk->kj", [(2, 3, 2, 4), (3, 2, 2)]), ("...lmn,lmno->...o", [(1, 1, 1, 2, 3, 2), (2, 3, 2, 2)])]


@pytest.mark.parametrize("subscripts, shapes", _BINARY, ids=[b[0] for b in _BINARY])
def test_every_pair_of_dtypes(subscripts, shapes):
    """CuPy's dtype combinations (its operands: 0, 1, 2, ... in order; bool: nonzero)."""
    for da, db in itertools.product(_DTYPES, repeat=2):
        a = (np.arange(np.prod(shapes[0])).reshape(shapes[0]) % 5).astype(da)
        b = (np.arange(np.prod(shapes[1])).reshape(shapes[1]) % 3).astype(db)
        got, expected = tl.einsum(subscripts, a, b), np.einsum(subscripts, a, b)
        assert got.dtype == expected.dtype, (da, db)
        np.testing.assert_allclose(got, expected, rtol=1e-2 if np.float16 in (da, db) else 1e-6)


@pytest.mark.parametrize("subscripts", ["ii->i", "jii->ij", "ijk->kij", "ii", "i->", "...ii->..."])
def test_unary_dtype_argument(subscripts):
    """CuPy's ``dtype=`` on one operand: every safe cast, numpy's result."""
    shape = {"ii->i": (3, 3), "jii->ij": (3, 3, 3), "ijk->kij": (2, 3, 4), "ii": (3, 3), "i->": (3,),
             "...ii->...": (2, 2, 2, 2)}[subscripts]
    for da, dout in itertools.product(_DTYPES, repeat=2):
        if not np.can_cast(da, dout):
            continue
        a = np.arange(np.prod(shape)).reshape(shape).astype(da)
        got, expected = tl.einsum(subscripts, a, dtype=dout), np.einsum(subscripts, a, dtype=dout)
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_scalar_operands_with_dtype(dtype):
    """CuPy's ``einsum('->', 2, dtype=...)``, ``einsum('', 2.0, dtype=...)`` and ',i->'."""
    for args in (("->", 2), ("", 2.0)):
        _same(tl.einsum(*args, dtype=dtype), np.einsum(*args, dtype=dtype))
    a = np.arange(2).astype(dtype)
    for args in ((",i->", 3, a), ("i,->", a, 4), (",i->", 3.0, a)):
        _same(tl.einsum(*args), np.einsum(*args))
    if np.dtype(dtype).kind == "f":
        for backend in BACKENDS:
            _same(tl.einsum(",i->", 3.0, a, backend=backend), np.einsum(",i->", 3.0, a))


_FIVE = "ea,fb,abcd,gc,hd->efgh"
_FIVE_SHAPES = [(6, 5), (10, 6), (5, 6, 7, 5), (1, 7), (2, 5)]


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal", ("greedy", 0), ("optimal", 10**6),
                                      "auto", "eager", "fastest", 1, 0, None,
                                      ["einsum_path", (0, 2), (0, 3), (0, 2), (0, 1)]])
def test_optimize_values(optimize):
    """JAX's, Dask's and CuPy's ``optimize=`` values: numpy's verdict, numpy's result."""
    rng = _rng("optimize", str(optimize))
    ops = [_data(s, rng=rng) for s in _FIVE_SHAPES]
    for backend in ("numpy", "interp"):
        _check(_FIVE, ops, backend, optimize=optimize)


@pytest.mark.parametrize("path", [["einsum_path", (0, 1), (0, 1)], ["einsum_path", (0, 2), (0, 1)],
                                  ["einsum_path", (1, 2), (0, 1)], ["einsum_path", (0, 1, 2)],
                                  ["einsum_path", (0, 3)], ["einsum_path", (0, 1)], ["einsum_path", (5, 1), (0, 1)]])
def test_explicit_paths(path):
    """CuPy's explicit paths on a ternary case, and paths numpy refuses."""
    rng = _rng("paths", str(path))
    ops = [_data(s, rng=rng) for s in [(2, 3), (3, 4), (4, 5)]]
    _check("ij,jk,kl", ops, "numpy", optimize=path)


@pytest.mark.parametrize("order", ["C", "F", "A", "K", "c", "f", "W"])
@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe", "blah"])
def test_order_and_casting(order, casting):
    """Dask's ``order=`` and ``casting=`` on its five-operand case (and values numpy refuses)."""
    rng = _rng("order", order, casting)
    ops = [_data(s, special=False, rng=rng) for s in _FIVE_SHAPES]
    expected, refused = _numpy_or_error(_FIVE, *ops, order=order, casting=casting)
    if refused is not None:
        _refuses_as_numpy(refused, _FIVE, *ops, order=order, casting=casting)
        return
    got = tl.einsum(_FIVE, *ops, order=order, casting=casting)
    _same(got, expected)
    assert got.flags.c_contiguous == expected.flags.c_contiguous
    assert got.flags.f_contiguous == expected.flags.f_contiguous


def test_out_argument():
    """``out=``: the right array is filled and returned; a wrong shape or dtype refused as numpy."""
    rng = _rng("out")
    a, b = _data((2, 3), rng=rng), _data((3, 4), rng=rng)
    for backend in BACKENDS:
        out = np.full((2, 4), 7.0)
        assert tl.einsum("ij,jk", a, b, out=out, backend=backend) is out
        _same(out, np.einsum("ij,jk", a, b))
        for wrong in (np.empty((4, 2)), np.empty((2, 4), np.float32), np.empty((2, 4), np.int64), "test"):
            _, refused = _numpy_or_error("ij,jk", a, b, out=wrong)
            _refuses_as_numpy(refused, "ij,jk", a, b, out=wrong, backend=backend)


# ------------------------------------------------------------------ torch's sublist cases and random cases
_SUBLIST = [
    ([(5,)], lambda x: (x, [0])),
    ([(5,)], lambda x: (x, [0], [])),
    ([(5,), (7,)], lambda x, y: (x, [0], y, [1], [0, 1])),
    ([(3, 5)], lambda a: (a, [0, 1], [1, 0])),
    ([(3, 5), (5,)], lambda a, x: (a, [0, 1], x, [1], [0])),
    ([(3, 5), (2, 5)], lambda a, b: (a, [0, 1], b, [2, 1])),
    ([(3, 5), (2, 5)], lambda a, b: (a, [0, 1], b, [2, 1], [0, 2])),
    ([(2, 1, 3, 1, 4)], lambda c: (c, [0, 1, 2, 1, Ellipsis], [0, 2, 1, Ellipsis])),
    ([(5, 3), (2, 5)], lambda a, b: (a, [0, 1], b, [Ellipsis, 0])),
    ([(5, 3), (2, 5)], lambda a, b: (a, [0, 1], b, [Ellipsis, 0], [1, Ellipsis])),
    ([(5, 3), (2, 5)], lambda a, b: (a, [0, Ellipsis], b, [1, 0], [Ellipsis])),
    ([(5, 10), (15, 10, 20), (5, 20)], lambda l, w, r: (l, [40, 41], w, [2, 41, 50], r, [40, 50], [40, 2])),
    ([(3, 3)], lambda a: (a, np.array([0, 0]))),  # CuPy: numpy's integer array as a sublist
    ([(3, 3)], lambda a: (a, list(np.array([0, 0])))),
    ([(3, 3), (3,)], lambda a, x: (a, np.array([0, 1]), x, (np.int64(1),), np.array([0]))),
]


@pytest.mark.parametrize("k", range(len(_SUBLIST)))
def test_torch_sublist_cases(k):
    shapes, make = _SUBLIST[k]
    rng = _rng("sublist", k)
    args = make(*[_data(s, rng=rng) for s in shapes])
    expected = np.einsum(*args)
    for backend in BACKENDS:
        _same(tl.einsum(*args, backend=backend), expected)


def _random_case(rnd: random.Random):
    """PyTorch's random generator, restated: 1-3 operands of 1-3 dimensions over 5 of the 52
    labels (repeats make diagonals), sizes 1-8, some 1 (broadcasting), an ellipsis of 1-2
    dimensions where there is room, and half the time an explicit output."""
    labels = rnd.sample(range(52), 5)
    size = {lab: rnd.randint(1, 8) for lab in labels}
    ell = [rnd.randint(1, 8) for _ in range(2)]
    sublists, shapes, width, seen = [], [], 0, set()
    for _ in range(rnd.randint(1, 3)):
        n = rnd.randint(1, 3)
        labs = [rnd.choice(labels) for _ in range(n)]
        ones = {lab for lab in labs if rnd.random() < 0.1}
        shape = [1 if lab in ones else size[lab] for lab in labs]
        seen.update(labs)
        if n < 3 and rnd.random() < 0.5:
            m = rnd.randint(1, 3 - n)
            width = max(width, m)
            at = rnd.randint(0, n)
            shape[at:at] = [1 if rnd.random() < 0.1 else e for e in ell[-m:]]
            labs.insert(at, Ellipsis)
        sublists.append(labs)
        shapes.append(tuple(shape))
    output = None
    if rnd.random() < 0.5:
        k = max(0, rnd.randint(0, min(3, len(seen))) - width)
        output = rnd.sample(sorted(seen), k)
        output.insert(rnd.randint(0, k), Ellipsis)
    return sublists, shapes, output


def _letters(sublist):
    return "".join("..." if s is Ellipsis else chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26)
                   for s in sublist)


_RANDOM = [_random_case(random.Random(seed)) for seed in range(60)]


@pytest.mark.parametrize("seed", range(len(_RANDOM)))
def test_random_cases_like_torchs(seed):
    sublists, shapes, output = _RANDOM[seed]
    rng = _rng("random", seed)
    ops = [_data(s, rng=rng) for s in shapes]
    eq = ",".join(map(_letters, sublists)) + ("" if output is None else "->" + _letters(output))
    args = [x for pair in zip(ops, sublists) for x in pair] + ([] if output is None else [output])
    for backend in ("numpy", "interp"):
        _check(eq, ops, backend)
        expected, refused = _numpy_or_error(eq, *ops)
        if refused is None:
            _same(tl.einsum(*args, backend=backend), expected)
        else:
            _refuses_as_numpy(refused, *args, backend=backend)


# ------------------------------------------------------------------ refusals
#: (source, arguments): calls numpy refuses.  tl.einsum refuses them too, with numpy's
#: exception type and tensorlang's error[input].
_Z = np.zeros
REFUSED = [
    ("cupy", ("..", _Z((2, 2, 2)))),
    ("cupy", ("...i...", _Z((2, 2, 2)))),
    ("cupy", ("i...->...i...", _Z((2, 2, 2)))),
    ("cupy", ("...->", _Z((2, 2, 2)))),
    ("cupy", ()),
    ("cupy", ("",)),
    ("cupy", (0, 0)),
    ("cupy", ("", 0, 0)),
    ("cupy", ("i,j", _Z(2), _Z(2), _Z(2))),
    ("cupy", (",", 0)),
    ("cupy", ("i", 0)),
    ("cupy", ("ij", _Z(2))),
    ("cupy", ("ijk...->...", _Z((2, 3)))),
    ("cupy", ("i->i", _Z((2, 3)))),
    ("cupy", ("i%", _Z(2))),
    ("cupy", ("j$", _Z(2))),
    ("cupy", ("i->&", _Z(2))),
    ("cupy", ("i->ij", _Z(2))),
    ("cupy", ("ij->jij", _Z((2, 2)))),
    ("cupy", ("ij->i,j", _Z((2, 2)))),
    ("cupy", ("ii", _Z((2, 3)))),
    ("cupy", ("ii->", _Z((2, 3)))),
    ("cupy", ("ii", _Z((1, 3)))),
    ("cupy", ("i,i", _Z(2), _Z(3))),
    ("cupy", ("...,...", _Z(2), _Z(3))),
    ("cupy", ("i...,...i", _Z((2, 3, 2)), _Z((2, 3, 2)))),
    ("cupy", ("...,...", _Z((2, 3, 2)), _Z((2, 2, 2)))),
    ("cupy", ("i-i", _Z(2))),
    ("cupy", ("i>i", _Z(2))),
    ("cupy", ("i->->i", _Z(2))),
    ("cupy", ("i-", _Z(2))),
    ("cupy", (_Z(2), [None])),
    ("cupy", (_Z(2), [0], [1])),
    ("cupy", (_Z(2), [Ellipsis, 0, Ellipsis])),
    ("cupy", (_Z(2), [0], _Z(3), [0])),
    ("cupy", (_Z(2), [0], _Z(3), [0], [0])),
    ("cupy", (_Z((2, 3)), [0, 0])),
    ("cupy", (3, [0])),
    ("cupy", (_Z(2), [0, 1])),
    ("cupy", (_Z((2, 3)), [Ellipsis, 0, 1, 2])),
    ("cupy", ("", 0, {"bad_arg": 0})),
    ("torch", (". ..", _Z(2))),
    ("torch", ("... ...", _Z(2))),
    ("torch", ("1", _Z(2))),
    ("torch", ("", _Z(2), _Z(2))),
    ("torch", ("", _Z(2))),
    ("torch", ("ai", _Z(2))),
    ("torch", ("ai...", _Z(2))),
    ("torch", ("a->... .", _Z(2))),
    ("torch", ("a->..", _Z(2))),
    ("torch", ("a->1", _Z(2))),
    ("torch", ("a->aa", _Z(2))),
    ("torch", ("a->i", _Z(2))),
    ("torch", ("aa", _Z((2, 3)))),
    ("torch", ("a, ba", _Z(2), _Z((2, 3)))),
    ("torch", (_Z(2), [-1])),
    ("torch", (_Z(2), [52])),
    ("tf", ("ij,jk->ik", _Z((1, 2, 3)), _Z((3, 4)))),
    ("tf", ("...ij,jk->ik", _Z(3), _Z((3, 4)))),
    ("tf", ("ij,jk->ik", _Z((2, 3)), _Z((4, 4)))),
    ("tf", ("...ij,...jk->...ik", _Z((5, 2, 3)), _Z((7, 3, 4)))),
    ("tf", ("...ij,...jk->ik", _Z((2, 2, 3)), _Z((3, 4)))),
    ("tf", ("a->aa", _Z(2))),
    ("tf", ("ab,bc->aaca", _Z((0, 10)), _Z((10, 5)))),
    ("tf", ("ab,bc->cc", _Z((0, 10)), _Z((10, 5)))),
    ("jax", ("ij,ik,il->jkl", _Z((2, 3)), _Z((2, 4)), _Z((2, 5)), {"optimize": [(0, 1, 2)]})),
    ("dask", ("a", _Z(5), {"foo": 1, "bar": 2})),
    ("numpy", ("", 0, {"out": "test"})),
    ("numpy", ("", 0, {"order": "W"})),
    ("numpy", ("", 0, {"casting": "blah"})),
    ("numpy", ("", 0, {"dtype": "bad_data_type"})),
    ("numpy", (None,) * 63),
]


def _split(args):
    if args and isinstance(args[-1], dict):
        return args[:-1], args[-1]
    return args, {}


@pytest.mark.parametrize("k", range(len(REFUSED)), ids=[f"{s}:{k}" for k, (s, _) in enumerate(REFUSED)])
def test_what_numpy_refuses_is_refused(k):
    args, kw = _split(REFUSED[k][1])
    _, refused = _numpy_or_error(*args, **kw)
    assert refused is not None, "numpy accepts this call"
    backends = BACKENDS if not kw else ["auto"]
    for backend in backends:
        _refuses_as_numpy(refused, *args, **kw, backend=backend)


def test_contract_expression_checks():
    """opt_einsum's checks of an expression: sizes, the number of arrays, their shapes, keywords."""
    with pytest.raises(ValueError) as caught:
        tl.contract_expression("ab,bc->ac", (2, 3), (3, 4), (42, 42))
    assert isinstance(caught.value, tl.TensorLangError)
    expr = tl.contract_expression("ab,bc->ac", (2, 3), (3, 4))
    rng = _rng("expr")
    for arrays in ([(2, 3)], [(2, 3)] * 3, [(2, 3, 4), (3, 4)], [(2, 4), (3, 4, 5)]):
        with pytest.raises(ValueError) as caught:
            expr(*[rng.random(s) for s in arrays])
        assert isinstance(caught.value, tl.TensorLangError)
    with pytest.raises(ValueError):
        expr(rng.random((2, 3)), rng.random((3, 4)), out=rng.random((2, 4, 6)))
    with pytest.raises(TypeError) as caught:
        expr(rng.random((2, 3)), rng.random((3, 4)), order="F")
    assert isinstance(caught.value, tl.TensorLangError)


def test_opt_einsum_assumed_shapes():
    """opt_einsum's operands without shapes: Python numbers, nested lists, complex, bool."""
    for eq, ops in ((",,->", (5, 5.0, 2.0j)), ("ab,->", ([[5, 5], [2.0, 1]], 2.0j)),
                    ("ab,bc->ac", ([[5, 5], [2.0, 1]], [[2.0, 1], [3.0, 4]])), ("ab,->", ([[5, 5], [2.0, 1]], True))):
        for backend in BACKENDS:
            _same(tl.einsum(eq, *ops, backend=backend), np.einsum(eq, *ops))


def test_empty_contractions_are_zero():
    """TensorFlow's contractions over a size-0 dimension (numpy: an empty sum is 0) and
    PyTorch's 0-size corner cases, on every back end."""
    rng = _rng("empty")
    for eq, shapes in (("ab,bc->ac", [(0, 10), (10, 10)]), ("ab,bc->ac", [(3, 0), (0, 4)]),
                       ("ibnd,ijbn->jnd", [(1, 0, 5, 10), (1, 1, 0, 5)]), ("aab,bc->ac", [(0, 0, 10), (10, 10)]),
                       ("aaab,bc->c", [(0, 0, 0, 3), (3, 4)]), ("i", [(0,)]), ("ij->j", [(2, 0)]),
                       ("ij->i", [(2, 0)]), ("ijk,k->ij", [(3, 0, 6), (6,)]), ("ca,ca->c", [(0, 10), (0, 10)]),
                       ("i,i->", [(0,), (0,)]), ("ij,jk,kl->il", [(2, 0), (0, 3), (3, 2)])):
        ops = [_data(s, rng=rng) for s in shapes]
        for backend in BACKENDS:
            _check(eq, ops, backend)


def test_jax_inf_diagonal():
    """JAX's ``baa->ba`` of a diagonal holding inf (one operand) and as a product with ones."""
    x = np.array([[[np.inf, np.inf], [1.0, 1.0]]])
    _same(tl.einsum("baa->ba", x), np.einsum("baa->ba", x))
    for backend in BACKENDS:
        _check("baa,a->ba", [x, np.ones(2)], backend)
        _check("baa,a->ba", [x, np.array([0.0, -0.0])], backend)


def test_einsum_path_docstring_example():
    """JAX's check of numpy's einsum_path example: numpy's own path with ``optimize=``."""
    rng = _rng("path")
    a, b, c = rng.random((2, 2)), rng.random((2, 5)), rng.random((5, 2))
    path, report = tl.einsum_path("ij,jk,kl->il", a, b, c, optimize="greedy")
    assert path == ["einsum_path", (1, 2), (0, 1)]
    assert report.split("\n")[0] == "  Complete contraction:  ij,jk,kl->il"
    big, small = rng.random((10, 10, 10, 10)), rng.random((10, 10))
    tl.einsum_path("ea,fb,abcd,gc,hd->efgh", small, small, big, small, small, optimize="greedy")
    S, W, V = rng.random((2, 6, 5)), rng.random((5, 4)), rng.random((4, 3))
    path, _ = tl.einsum_path("ntk,kd,dc->nc", S, W, V)
    assert path == ["einsum_path", (1, 2), (0, 1)]  # the order of three: opt_einsum's
    two, _ = tl.einsum_path("ntk,kd->nd", S, W)  # t, read by S alone, summed over S first (private-summation-index)
    assert two == ["einsum_path", (0,), (0, 1)]
    for run in (np.einsum, tl.einsum):  # the paths as an optimize= of numpy's and ours (JAX's kpmurphy check)
        np.testing.assert_allclose(run("ntk,kd,dc->nc", S, W, V, optimize=path), np.einsum("ntk,kd,dc->nc", S, W, V))
        np.testing.assert_allclose(run("ntk,kd->nd", S, W, optimize=two), np.einsum("ntk,kd->nd", S, W))


@pytest.mark.parametrize("order", ["K", "C", "A", "F"])
def test_strided_operands(order):
    """PyTorch's bilinear product of strided operands (every other column): numpy's values
    and numpy's result layout for each ``order``, on every back end, cached call too."""
    rng = _rng("strided", order)
    left, w, right = _data((5, 10), rng=rng), _data((15, 10, 20), rng=rng), _data((5, 20), rng=rng)
    ops = (left[:, ::2], w[:, ::2, ::2], right[:, ::2])
    expected = np.einsum("bn,Anm,bm->bA", *ops, order=order)
    for backend in BACKENDS:
        for _ in range(2):
            got = tl.einsum("bn,Anm,bm->bA", *ops, order=order, backend=backend)
            _same(got, expected)
            assert (got.flags.c_contiguous, got.flags.f_contiguous) == \
                (expected.flags.c_contiguous, expected.flags.f_contiguous)


def test_a_refusal_keeps_numpys_whole_message():
    """numpy's message as it prints (str of the exception), not its first argument alone."""
    s = np.array([["a", "b"], ["c", "d"]])
    with pytest.raises(TypeError, match="did not contain a loop with signature matching types"):
        tl.einsum("ij,jk,kl->il", s, s, s, optimize=True)
    with pytest.raises(TypeError, match="cannot use operands with types"):
        tl.einsum("i,j->ij", np.array([1, 2], "M8[D]"), np.ones(2), optimize=True)


class _OwnArray:
    def __array__(self, dtype=None, copy=None):
        raise ValueError("the user's own")


def test_what_numpy_did_not_raise_passes_unchanged():
    """An object array's element's error and a user's ``__array__``'s are theirs, not a refusal."""
    none = np.array([None, None], object)
    with pytest.raises(TypeError) as caught:
        tl.einsum("i,i->", none, none)
    assert not isinstance(caught.value, tl.TensorLangError)
    with pytest.raises(ValueError, match="^the user's own$") as caught:
        tl.einsum("i,i->", _OwnArray(), np.ones(2))
    assert not isinstance(caught.value, tl.TensorLangError)


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.complex64])
def test_a_call_too_large_to_index_is_a_value_error_whatever_the_dtype(dtype):
    a = np.ones(100_000, dtype)
    with pytest.raises(ValueError) as caught:
        tl.einsum("i,j,k,l->ijkl", a, a, a, a)
    assert isinstance(caught.value, tl.TensorLangError) and caught.value.code == "too-large"
