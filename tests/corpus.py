"""The shared corpus: named programs with numpy references, used by the back-end tests and
by ``tensorlang bench``.

Every entry is a program (an example file, or text made by a function of its sizes), a
builder of its inputs from a seeded generator, and its expected results written directly
in numpy (``np.einsum``, ``@``, elementwise arithmetic), never through tensorlang.  The
families, by tag:

* ``paper``: every program printed in papers 000 and 002 (``examples/*.tl``);
* ``cfd``: the CFDlang kernels (``examples/cfd/*.cfd``) and the batched spectral-element
  kernels the ``cfd`` benchmark suite times (:func:`interpolation_source`,
  :func:`helmholtz_source`, in the model language);
* ``inplace``: 002's in-place statements (``examples/inplace_*.tl``);
* ``chain``: contraction chains that the optimizer reorders;
* ``teil``: TeIL programs (``examples/teil``);
* ``einsum``: einsum programs (subscripts and shapes), numpy.einsum the reference.

:data:`CORPUS` maps each name to a :class:`Case`; ``EXAMPLE_CASES`` and ``CFD_KERNELS``
keep the tables ``tests/lang/tl/test_examples.py`` and ``tests/lang/test_cfd.py`` were written over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def rand(rng: np.random.Generator, *shape: int):
    """Standard normal numbers of the given shape; a Python float for shape ()."""
    return rng.standard_normal(shape) if shape else float(rng.standard_normal())


# --------------------------------------------------------------------------- inputs
def interpolation_inputs(rng, n=5):
    return {"A": rand(rng, n, n), "B": rand(rng, n, n), "C": rand(rng, n, n), "u": rand(rng, n, n, n)}


def interpolation_fig18(A, B, C, u):
    """Figure 18 / the thesis's Figure 26a: v[c,b,a] = sum A[c,i] B[b,j] C[a,k] u[i,j,k]."""
    return np.einsum("ci,bj,ak,ijk->cba", A, B, C, u)


def fig18_tmp1(C, u):
    """tmp1 = C # u . [2 5]: tmp1[a,i,j] = sum_k C[a,k] u[i,j,k]."""
    return np.einsum("ak,ijk->aij", C, u)


def fig18_tmp2(B, tmp1):
    """tmp2 = B # tmp1 . [2 5]: tmp2[b,a,i] = sum_j B[b,j] tmp1[a,i,j]."""
    return np.einsum("bj,aij->bai", B, tmp1)


# file -> (inputs(rng) -> dict, expected(inputs) -> dict of every result)
EXAMPLE_CASES = {
    "fig2_fig3_declarations.tl": (
        lambda rng: {"x": rand(rng, 30, 40, 50), "s": rand(rng)},
        lambda i: {"x": i["x"], "s": np.asarray(i["s"])},
    ),
    "fig4_matrix_product.tl": (
        lambda rng: {"A": rand(rng, 30, 40), "B": rand(rng, 40, 50)},
        lambda i: {"A": i["A"], "B": i["B"], "C": i["A"] @ i["B"]},
    ),
    "fig5_trace_of_product.tl": (
        lambda rng: {"A": rand(rng, 30, 40), "B": rand(rng, 40, 30)},
        lambda i: {"A": i["A"], "B": i["B"], "s": np.asarray(np.trace(i["A"] @ i["B"]))},
    ),
    "fig6_transposition.tl": (
        lambda rng: {"u": rand(rng, 2, 3, 4, 5, 6)},
        lambda i: {"u": i["u"], "v": np.einsum("abcde->adcbe", i["u"])},
    ),
    "matvec_product.tl": (
        lambda rng: {"v": rand(rng, 30, 40), "w": rand(rng, 40)},
        lambda i: {"u": i["v"] @ i["w"], "v": i["v"], "w": i["w"]},
    ),
    "inplace_scalar_literal.tl": (
        lambda rng: {"x": rand(rng, 1000)},
        lambda i: {"x": 3 * i["x"]},
    ),
    "fig8_compatible_contraction.tl": (
        lambda rng: {"x": rand(rng, 50), "y": rand(rng, 40, 40)},
        lambda i: {"x": i["x"] * np.trace(i["y"])},
    ),
    "fig9_incompatible_matvec.tl": (
        lambda rng: {"x": rand(rng, 50), "y": rand(rng, 50, 50)},
        # ev-stmt: the right side reads the old x everywhere.
        lambda i: {"x": i["y"] @ i["x"]},
    ),
    "compatible_statement.tl": (
        lambda rng: {"x": rand(rng, 20, 30), "w": rand(rng, 20, 30), "u": rand(rng, 10), "v": rand(rng, 10)},
        lambda i: {"x": (i["x"] + i["w"]) * (np.dot(i["u"], i["v"]) * i["x"])},
    ),
    "interpolation_grouped.tl": (
        interpolation_inputs,
        lambda i: {"v": np.einsum("ak,bj,ci,ijk->abc", i["A"], i["B"], i["C"], i["u"])},
    ),
    "fig18_interpolation_immediate.tl": (
        interpolation_inputs,
        lambda i: {"v": interpolation_fig18(i["A"], i["B"], i["C"], i["u"])},
    ),
    "fig19_interpolation_wrongly_transformed.tl": (
        interpolation_inputs,
        lambda i: {
            "u": fig18_tmp1(i["C"], i["u"]),
            "v": interpolation_fig18(i["A"], i["B"], i["C"], i["u"]),
        },
    ),
    "fig20_interpolation_reuse.tl": (
        lambda rng: {**interpolation_inputs(rng), "v": rand(rng, 5, 5, 5)},  # v's old value is never read
        lambda i: {
            "A": i["A"],
            "B": i["B"],
            "C": i["C"],
            "u": fig18_tmp2(i["B"], fig18_tmp1(i["C"], i["u"])),
            "v": interpolation_fig18(i["A"], i["B"], i["C"], i["u"]),
        },
    ),
    "inplace_scalar_mul.tl": (
        lambda rng: {"s": rand(rng), "x": rand(rng, 1_000_000)},
        lambda i: {"x": i["s"] * i["x"]},
    ),
    "inplace_elementwise_mul.tl": (
        lambda rng: {"v": rand(rng, 1_000_000), "x": rand(rng, 1_000_000)},
        lambda i: {"x": i["x"] * i["v"]},
    ),
    "inplace_linear_combination.tl": (
        lambda rng: {
            "s1": rand(rng),
            "s2": rand(rng),
            "s3": rand(rng),
            "u": rand(rng, 1_000_000),
            "v": rand(rng, 1_000_000),
            "x": rand(rng, 1_000_000),
        },
        lambda i: {"x": i["s1"] * i["x"] + i["s2"] * i["u"] + i["s3"] * i["v"]},
    ),
    "inplace_matvec_elementwise.tl": (
        lambda rng: {"u": rand(rng, 100, 100), "v": rand(rng, 100), "x": rand(rng, 100)},
        lambda i: {"x": (i["u"] @ i["v"]) * i["x"]},
    ),
    "fig16a_scale_then_outer.tl": (
        lambda rng: {"s": rand(rng), "x": rand(rng, 1000), "w": rand(rng, 500)},
        lambda i: {"v": np.outer(i["s"] * i["x"], i["w"])},
    ),
    "fig16b_scale_inplace_then_outer.tl": (
        lambda rng: {"s": rand(rng), "x": rand(rng, 1000), "w": rand(rng, 500)},
        lambda i: {"x": i["s"] * i["x"], "v": np.outer(i["s"] * i["x"], i["w"])},
    ),
}


def _cfd_case(inputs, expected):
    """(inputs(rng), expected(inputs)) as the ``case(rng) -> (inputs, expected)`` builder
    tests/lang/test_cfd.py uses."""
    def case(rng, **sizes):
        ins = inputs(rng, **sizes)
        return ins, expected(ins)

    case.inputs, case.expected = inputs, expected
    return case


def _helmholtz_cfd(i):
    A, B, C, D, u = (i[k] for k in "ABCDu")
    # t = D * (A#B#C#u . [[0 6] [2 7] [4 8]]): A's, B's, C's first dimension against u's
    t = D * np.einsum("ai,bj,ck,abc->ijk", A, B, C, u)
    # v = A#B#C#t . [[1 6] [3 7] [5 8]]: their second dimension against t's
    return {"v": np.einsum("ia,jb,kc,abc->ijk", A, B, C, t)}


def _gradient_cfd(i):
    u = i["u"]
    return {"v": np.stack([
        np.einsum("ia,ajk->ijk", i["Dx"], u),
        np.einsum("ia,jak->ijk", i["Dy"], u),  # Dy # u . [[1 3]]: Dy's 2nd against u's 2nd
        np.einsum("ia,jka->ijk", i["Dz"], u),
    ])}


interpolation_case = _cfd_case(
    lambda rng: {"A": rand(rng, 7, 5), "u": rand(rng, 5, 5, 5)},
    lambda i: {"v": np.einsum("ia,jb,kc,abc->ijk", i["A"], i["A"], i["A"], i["u"])})
helmholtz_case = _cfd_case(
    lambda rng, n=4: {k: rand(rng, n, n) for k in "ABC"} | {"D": rand(rng, n, n, n), "u": rand(rng, n, n, n)},
    _helmholtz_cfd)
gradient_case = _cfd_case(
    lambda rng: {"u": rand(rng, 6, 6, 6), "Dx": rand(rng, 6, 6), "Dy": rand(rng, 6, 6), "Dz": rand(rng, 6, 6)},
    _gradient_cfd)
matrix_chain_case = _cfd_case(
    lambda rng: {"M": rand(rng, 4, 5), "N": rand(rng, 5, 6), "x": rand(rng, 6)},
    lambda i: {"w": i["M"] @ i["N"] @ i["x"]})


CFD_KERNELS = {
    "interpolation.cfd": (interpolation_case, {"m": 7, "n": 5}),
    "inverse_helmholtz.cfd": (helmholtz_case, {"n": 4}),
    "gradient.cfd": (gradient_case, {}),
    "matrix_chain.cfd": (matrix_chain_case, {}),
}


# --------------------------------------------------------------------------- TeIL (paper 001)
# file -> (inputs(rng) -> dict, expected(inputs) -> dict)
TEIL_CASES = {
    "fig7_matrix_product.teil": (
        lambda rng: {"A": rand(rng, 3, 4), "B": rand(rng, 4, 5)},
        lambda i: {"C": i["A"] @ i["B"]},
    ),
    "fig10a_taco_kernels.teil": (
        lambda rng: {"B": rand(rng, 3, 4, 3), "C": rand(rng, 3)},
        lambda i: {
            "Aa": np.einsum("ijk,k->ij", i["B"], i["C"]),
            "Ab": np.einsum("ijk,i->ij", i["B"], i["C"]),
            "Ac": np.einsum("kji,i->ji", i["B"], i["C"]),
        },
    ),
    "fig10b_tvm_transposed_product.teil": (
        lambda rng: {"A": rand(rng, 5, 3), "B": rand(rng, 5, 4)},
        lambda i: {"C": i["A"].T @ i["B"]},
    ),
    "fig10c_tc_increment.teil": (
        lambda rng: {"B": rand(rng, 6), "C": rand(rng, 6)},
        lambda i: {"A": i["B"] + i["C"]},
    ),
    "fig11_proj_expa.teil": (
        lambda rng: {"A": rand(rng, 4, 5), "B": rand(rng, 3, 4, 5)},
        lambda i: {"C": i["A"] + i["B"][1], "D": i["A"][None, :, :] + i["B"]},
    ),
}


# --------------------------------------------------------------------------- batched CFD kernels
def _decl_cfd(n: int, E: int) -> str:
    return f"[{E} {n} {n} {n}]"


def interpolation_source(n: int, E: int) -> str:
    """Interpolation on E elements of size n: v[e,i,j,k] = Σ A[i,l] B[j,m] C[k,q] u[e,l,m,q],
    written naively (one O(E n^6) statement; the optimizer makes it three O(E n^4)
    matrix products).  Not examples/interpolation_grouped.tl: that is one element of
    fixed size 5 with A applied to u's last dimension."""
    return (
        f"// v = (A ⊗ B ⊗ C) u on each of {E} elements, written naively in the model language\n"
        f"// (one O(E n^6) statement; the optimizer makes it three O(E n^4) matrix products)\n"
        f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nin var C : [{n} {n}]\n"
        f"in var u : {_decl_cfd(n, E)}\nout var v : {_decl_cfd(n, E)}\n"
        "v = u # A # B # C . [[2 6] [3 8] [4 10]]\n"
    )


def helmholtz_source(n: int, E: int) -> str:
    """The inverse Helmholtz operator on E elements: t = (Sᵀ⊗Sᵀ⊗Sᵀ) u, r = D ⊙ t,
    v = (S⊗S⊗S) r."""
    return (
        f"// inverse Helmholtz on each of {E} elements: t = (Sᵀ⊗Sᵀ⊗Sᵀ) u, r = D ⊙ t, v = (S⊗S⊗S) r\n"
        f"in var S : [{n} {n}]\nin var D : {_decl_cfd(n, E)}\nin var u : {_decl_cfd(n, E)}\n"
        f"out var v : {_decl_cfd(n, E)}\nvar t : {_decl_cfd(n, E)}\nvar r : {_decl_cfd(n, E)}\n"
        "t = u # S # S # S . [[2 5] [3 7] [4 9]]\n"
        "r = D * t\n"
        "v = r # S # S # S . [[2 6] [3 8] [4 10]]\n"
    )


def kron3(A, B, C, u):
    """(A⊗B⊗C) applied to every element, by three tensordot passes (an independent
    reference for :func:`interpolation_source`): v[e] = (A⊗B⊗C) u[e]."""
    t = np.tensordot(u, C, axes=([3], [1]))  # e l m k
    t = np.tensordot(t, B, axes=([2], [1]))  # e l k j
    t = np.tensordot(t, A, axes=([1], [1]))  # e k j i
    return np.ascontiguousarray(t.transpose(0, 3, 2, 1))


def helmholtz_reference(inputs: dict) -> np.ndarray:
    """v for :func:`helmholtz_source`: Sᵀ applied along each axis, D pointwise, then S."""
    S, D, u = inputs["S"], inputs["D"], inputs["u"]
    return kron3(S, S, S, D * kron3(S.T, S.T, S.T, u))


def batched_inputs(n: int, E: int, rng: np.random.Generator, names=("A", "B", "C")) -> dict:
    """Inputs of the batched kernels: matrices scaled by 1/n (so values stay O(1)), fields in [-1, 1]."""
    shape = (E, n, n, n)
    inputs = {name: rng.uniform(-1, 1, (n, n)) / n for name in names}
    inputs["u"] = rng.uniform(-1, 1, shape)
    if "S" in names:
        inputs["D"] = rng.uniform(-1, 1, shape)
    return inputs


# --------------------------------------------------------------------------- contraction chains
def chain_source(dims: tuple[int, ...]) -> str:
    """A matrix chain M1 M2 ... Mk x written as one statement (the optimizer orders it)."""
    k = len(dims) - 1
    decls = "".join(f"in var M{m} : [{dims[m - 1]} {dims[m]}]\n" for m in range(1, k + 1))
    body = " * ".join(f"M{m}[i{m - 1},i{m}]" for m in range(1, k + 1))
    sums = ",".join(f"i{m}" for m in range(1, k))
    return (decls + f"in var x : [{dims[-1]}]\nout var y : [{dims[0]}]\n"
            f"y[i0] = sum({sums},i{k}) {body} * x[i{k}]\n")


def chain_case(dims: tuple[int, ...]):
    def inputs(rng):
        ins = {f"M{m}": rand(rng, dims[m - 1], dims[m]) for m in range(1, len(dims))}
        ins["x"] = rand(rng, dims[-1])
        return ins

    def expected(i):
        y = i["x"]
        for m in reversed(range(1, len(dims))):
            y = i[f"M{m}"] @ y
        return {"y": y}

    return inputs, expected


# --------------------------------------------------------------------------- einsum
#: einsum programs (the einsum front end's text: subscripts and shapes; operands T0, T1,
#: ..., result Res) with numpy.einsum as the reference
EINSUM_CASES = {
    "einsum_chain": "ij,jk,kl->il : [3 4] [4 5] [5 2]",
    "einsum_batched_trace": "bii,bij->bj : [2 3 3] [2 3 4]",
    "einsum_ellipsis_broadcast": "...ij,...j->...i : [2 1 3 4] [5 4]",
    "einsum_readme": "pi,qj,ijkl,rk,sl->pqrs : [2 3] [2 3] [3 3 3 3] [2 3] [2 3]",
}


def einsum_case(text: str):
    subscripts, _, shapes = text.partition(" : ")
    dims = [tuple(int(n) for n in s.split()) for s in shapes.strip("[]").split("] [")]

    def inputs(rng):
        return {f"T{k}": rand(rng, *shape) for k, shape in enumerate(dims)}

    def expected(i):
        return {"Res": np.einsum(subscripts, *[i[f"T{k}"] for k in range(len(dims))])}

    return inputs, expected


# --------------------------------------------------------------------------- the corpus
@dataclass(frozen=True)
class Case:
    """One named program: its text (or file), language and symbolic sizes, its inputs and
    its expected results (every name in the expected dict is checked)."""

    name: str
    source: str | Path
    inputs: Callable[[np.random.Generator], dict]
    expected: Callable[[dict], dict]
    tags: frozenset[str] = field(default_factory=frozenset)
    lang: str | None = None
    params: dict | None = None

    def compile(self, **options):
        import tensorlang as tl

        return tl.compile(self.source, lang=self.lang, params=self.params, **options)

    def draw(self, seed: int = 0) -> dict:
        return self.inputs(np.random.default_rng(seed))


def _corpus() -> dict[str, Case]:
    cases: list[Case] = []
    for file, (inputs, expected) in EXAMPLE_CASES.items():
        tags = {"paper"} | ({"inplace"} if file.startswith("inplace") or "compatible" in file else set())
        cases.append(Case(file.removesuffix(".tl"), EXAMPLES / file, inputs, expected, frozenset(tags)))
    for file, (case, params) in CFD_KERNELS.items():
        cases.append(Case(file.removesuffix(".cfd") + "_cfd", EXAMPLES / "cfd" / file, case.inputs, case.expected,
                          frozenset({"cfd"}), params=params or None))
    for file, (inputs, expected) in TEIL_CASES.items():
        cases.append(Case(file.removesuffix(".teil") + "_teil", EXAMPLES / "teil" / file, inputs, expected,
                          frozenset({"teil", "paper"})))
    for n, E in ((4, 3), (5, 2)):
        cases.append(Case(f"interpolation_batched_n{n}", interpolation_source(n, E),
                          lambda rng, n=n, E=E: batched_inputs(n, E, rng),
                          lambda i: {"v": kron3(i["A"], i["B"], i["C"], i["u"])}, frozenset({"cfd", "chain"})))
        cases.append(Case(f"helmholtz_batched_n{n}", helmholtz_source(n, E),
                          lambda rng, n=n, E=E: batched_inputs(n, E, rng, names=("S",)),
                          lambda i: {"v": helmholtz_reference(i)}, frozenset({"cfd", "chain"})))
    for dims in ((3, 40, 2, 30), (20, 3, 25, 4, 30)):
        inputs, expected = chain_case(dims)
        cases.append(Case("chain_" + "x".join(map(str, dims)), chain_source(dims), inputs, expected,
                          frozenset({"chain"})))
    for name, text in EINSUM_CASES.items():
        inputs, expected = einsum_case(text)
        cases.append(Case(name, text, inputs, expected, frozenset({"einsum"}), lang="einsum"))
    return {case.name: case for case in cases}


CORPUS: dict[str, Case] = _corpus()
