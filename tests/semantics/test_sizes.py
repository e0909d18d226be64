"""Symbolic sizes (issue [sizes], docs/language.md "Symbolic sizes"): declarations with
names for extents, checked as symbols, bound at call time from the inputs' shapes (or
from params=), specialised and cached per binding.

The examples in examples/sizes/ run against numpy at two different sizes on every back
end; the binding rules, the errors and the caching have their own tests; the symbolic
type checker's guarantee is a property test in tests/properties/test_symbolic_sizes.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.cli import main
from tensorlang.semantics.sizes import Sym

from corpus import EXAMPLES, kron3, rand

SIZES = EXAMPLES / "sizes"
BACKENDS = tl.available_backends()


def helmholtz(S, D, u):
    t = np.einsum("eabc,ai,bj,ck->eijk", u, S, S, S)
    return kron3(S, S, S, D * t)


#: file -> (inputs at given sizes, the expected results in numpy, two bindings)
CASES = {
    "matrix_product.tl": (
        lambda rng, n, k, m: {"A": rand(rng, n, k), "B": rand(rng, k, m)},
        lambda i: {"C": i["A"] @ i["B"]},
        [dict(n=3, k=4, m=5), dict(n=17, k=2, m=9)],
    ),
    "interpolation.tl": (
        lambda rng, E, n: {"A": rand(rng, n, n), "B": rand(rng, n, n), "C": rand(rng, n, n), "u": rand(rng, E, n, n, n)},
        lambda i: {"v": kron3(i["A"], i["B"], i["C"], i["u"])},
        [dict(E=3, n=4), dict(E=2, n=5)],
    ),
    "inverse_helmholtz.tl": (
        lambda rng, E, n: {"S": rand(rng, n, n), "D": rand(rng, E, n, n, n), "u": rand(rng, E, n, n, n)},
        lambda i: {"v": helmholtz(i["S"], i["D"], i["u"])},
        [dict(E=2, n=3), dict(E=3, n=5)],
    ),
    "batched_matvec.tl": (
        lambda rng, batch, n, m: {"M": rand(rng, batch, n, m), "x": rand(rng, batch, m)},
        lambda i: {"y": np.einsum("bij,bj->bi", i["M"], i["x"])},
        [dict(batch=1, n=3, m=2), dict(batch=6, n=5, m=8)],
    ),
    "quadratic_features.tl": (  # a size expression, [M p+p*p] (tests/semantics/test_size_expressions.py)
        lambda rng, M, p: {"F": rand(rng, M, p)},
        lambda i: {"Z": np.concatenate([i["F"], np.einsum("mi,mj->mij", i["F"], i["F"]).reshape(len(i["F"]), -1)], 1)},
        [dict(M=3, p=2), dict(M=5, p=4)],
    ),
}


def test_every_sized_example_is_covered():
    assert {p.name for p in SIZES.glob("*.tl")} == set(CASES)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_sized_example_matches_numpy_at_two_sizes(name, backend):
    build, expected, bindings = CASES[name]
    k = tl.compile(SIZES / name, backend=backend)
    assert isinstance(k, tl.SymbolicKernel) and set(k.symbols) == set(bindings[0])
    rng = np.random.default_rng(7)
    for sizes in bindings + bindings[:1]:  # the first binding again: served from the cache
        inputs = build(rng, **sizes)
        got = k(**inputs)
        for out, want in expected(inputs).items():
            np.testing.assert_allclose(got[out], want, rtol=1e-11, atol=1e-11, err_msg=f"{name} {sizes}")
    assert k.specializations() == [{s: b[s] for s in k.symbols} for b in bindings]


def test_a_binding_compiles_once_and_equals_the_program_written_with_numbers():
    k = tl.compile(SIZES / "matrix_product.tl", backend="numpy")
    a, b = np.ones((2, 3)), np.ones((3, 4))
    first = k.for_inputs({"A": a, "B": b})
    assert k.for_inputs({"A": a, "B": b}) is first  # cached per binding
    assert first.sizes == {"n": 2, "k": 3, "m": 4}
    concrete = tl.compile("in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nC = (A # B) . [2 3]\n",
                          backend="numpy")
    assert first.ein == concrete.ein  # constants folded in: the same EIN as the program with numbers
    assert k.specialize(n=2, k=3, m=4) is first
    assert concrete.specializations() == [{}]


def test_params_at_compile_time_bind_before_checking():
    k = tl.compile(SIZES / "matrix_product.tl", params={"n": 2, "k": 3, "m": 4}, backend="numpy")
    assert isinstance(k, tl.Kernel) and k.shapes == {"A": (2, 3), "B": (3, 4), "C": (2, 4)}
    assert k.specializations() == [{"n": 2, "k": 3, "m": 4}]
    # some bound, the rest from the inputs
    k = tl.compile(SIZES / "matrix_product.tl", params={"k": 3}, backend="numpy")
    assert isinstance(k, tl.SymbolicKernel) and k.symbols == ("n", "m")
    np.testing.assert_allclose(k(A=np.ones((5, 3)), B=np.ones((3, 2)))["C"], np.full((5, 2), 3.0))
    with pytest.raises(tl.TensorLangError) as info:
        k(A=np.ones((5, 4)), B=np.ones((4, 2)))  # k is 3 in this kernel
    assert info.value.code == "input" and "[5 4]" in str(info.value)


def test_inconsistent_binding_names_the_symbol_both_arrays_and_both_sizes():
    k = tl.compile(SIZES / "matrix_product.tl", backend="numpy")
    with pytest.raises(tl.TensorLangError) as info:
        k(A=np.ones((2, 3)), B=np.ones((4, 5)))
    err = info.value
    assert err.code == "input" and err.line == 4  # B's declaration
    for word in ("'k'", "3", "4", "'A'", "'B'"):
        assert word in err.message, err.message


def test_a_size_only_results_have_comes_from_params_else_input_error():
    src = "in var x : [n]\nout var y : [m]\ny[i] = sum(j) x[j] + 0 * delta[i, i]\n"
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(src, backend="numpy")(x=np.ones(3))
    assert info.value.code == "input" and "'m'" in info.value.message and "--param m=" in info.value.message
    k = tl.compile(src, params={"m": 2}, backend="numpy")
    np.testing.assert_allclose(k(x=np.arange(4.0))["y"], [6.0, 6.0])
    # an out= array binds it too
    y = np.empty(5)
    tl.compile(src, backend="numpy")(x=np.ones(3), out={"y": y})
    np.testing.assert_allclose(y, np.full(5, 3.0))


@pytest.mark.parametrize("bad, code, words", [
    ({"A": np.ones((2, 3, 1)), "B": np.ones((3, 4))}, "input", ["'A'", "[2 3 1]", "[n k]"]),
    ({"A": np.ones((0, 3)), "B": np.ones((3, 4))}, "input", ["'n'", "0", "positive"]),
    ({"A": np.ones((2, 3))}, "input", ["'B'"]),
    ({"A": "text", "B": np.ones((3, 4))}, "input", ["'A'"]),
])
def test_bad_arrays_for_a_symbolic_kernel_are_input_errors(bad, code, words):
    k = tl.compile(SIZES / "matrix_product.tl", backend="numpy")
    with pytest.raises(tl.TensorLangError) as info:
        k(**bad)
    assert info.value.code == code
    for word in words:
        assert word in info.value.message, info.value.message


def test_a_binding_that_breaks_a_range_condition_is_an_input_error():
    k = tl.compile("in var x : [n]\nout var y : []\ny[] = x[3]\n", backend="numpy")
    assert float(k(x=np.array([1.0, 2.0, 5.0]))["y"]) == 5.0
    with pytest.raises(tl.TensorLangError) as info:
        k(x=np.ones(2))
    assert info.value.code == "input" and "n = 2" in info.value.message and info.value.line == 3
    # a position below 1 fails whatever n is: at check time
    with pytest.raises(tl.TensorLangError) as info:
        tl.check("in var x : [n]\nout var y : []\ny[] = x[0]\n")
    assert info.value.code == "dim-range"


@pytest.mark.parametrize("src, code, words", [
    ("in var A : [n m]\nout var B : [n m]\nB = A ^ [1 2]\n", "assign-shape", ["[n m]", "[m n]"]),
    ("in var A : [n m]\nout var s : []\ns = A . [1 2]\n", "shape", ["n", "m"]),
    ("in var A : [n]\nin var B : [3]\nout var C : [n]\nC = A + B\n", "shape", ["[n]", "[3]"]),
    ("in var A : [n]\nin var B : [m]\nout var s : []\ns[] = sum(i) A[i] * B[i]\n", "index-extent", ["n", "m"]),
    ("in var A : [n n]\nout var B : [n]\nB[i] = A[i, i]\n", None, []),
    ("in var A : [sum]\n", "syntax", ["sum"]),
])
def test_the_checker_compares_extents_as_symbols(src, code, words):
    if code is None:
        tl.check(src)
        return
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(src)
    assert info.value.code == code, info.value.render()
    for word in words:
        assert word in info.value.message


def test_symbols_in_teil_and_cfdlang():
    k = tl.compile("in alloc A : [n, m]\nout alloc B : [m n]\nB = transp 1 2 A\n", lang="teil", backend="numpy")
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(k(A=a)["B"], a.T)
    k = tl.compile(EXAMPLES / "cfd" / "interpolation.cfd", backend="numpy")
    assert k.symbols == ("m", "n")
    rng = np.random.default_rng(3)
    for m, n in ((7, 5), (3, 4)):
        A, u = rand(rng, m, n), rand(rng, n, n, n)
        np.testing.assert_allclose(k(A=A, u=u)["v"], np.einsum("ai,bj,ck,ijk->abc", A, A, A, u), rtol=1e-12, atol=1e-12)
    with pytest.raises(tl.TensorLangError) as info:
        tl.check("in alloc A : [n]\nout alloc B : [m]\nB = A\n", lang="teil")
    assert info.value.code == "assign-shape" and "[m]" in info.value.message


def test_stages_of_a_symbolic_kernel():
    k = tl.compile(SIZES / "matrix_product.tl", backend="numpy")
    assert "in var A : [n k]" in k.ir("ast")
    assert "contr" in k.ir("teil")
    with pytest.raises(tl.TensorLangError) as info:
        k.ir("ein")
    assert info.value.code == "input" and "k.specialize(" in info.value.message
    assert "C[i,j]" in k.specialize(n=2, k=2, m=2).ir("ein").replace(" ", "")
    assert k.shapes["A"] == (Sym("n"), Sym("k"))


HEAD_FIXED = """\
symbols: N, J
A(i, j) := B(i, k) * C(k, j) * (j = J)
A:D(i, j) := (0 <= i < N) * (0 <= j < N)
B:D(i, k) := (0 <= i < N) * (0 <= k < N)
C:D(k, j) := (0 <= k < N) * (0 <= j < N)
"""


@pytest.mark.parametrize("src, lang", [
    ("in var u : [n]\nout var v : [n]\nv = u * 2\n", "tl"),
    ("in var u : [n]\nout var v : [n-10]\nv[i] = u[i+10]\n", "tl"),  # n = 8 is no size
    ("in var u : [n]\nout var v : [n]\nv[i] = u[i] * u[12]\n", "tl"),  # position 12 past n = 8
    ("in var u : [n]\nin var w : [m]\nout var v : [m-n]\nv[i] = w[i+0]\n", "tl"),  # m > n
    (HEAD_FIXED, "stur"),  # J = 8 is past the last column of N = 8
    ("in var u : [n]\nout var v : [n-3000000]\nv[i] = u[i+3000000]\n", "tl"),  # none tried fits: N
])
def test_the_sizes_a_message_suggests_fit_the_program(src, lang):
    """The example a symbolic kernel's messages give (k.code(), k.ir("ein"), its notebook
    view) is a binding the program accepts, with a position inside its sizes' range."""
    k = tl.compile(src, lang=lang, backend="numpy")
    with pytest.raises(tl.TensorLangError) as info:
        k.code()
    example = k.example_sizes()
    call = f"k.specialize({', '.join(f'{s}={v}' for s, v in example.items())})"
    assert call in info.value.message and call in k._repr_html_()
    if "3000000" in src:
        assert example == {"n": "N"}
        return
    binding = {s: int(v) for s, v in example.items()}
    k.specialize(**binding)
    assert all(binding[p] < min(binding[s] for s in k.symbols if s not in k.checked.position_symbols)
               for p in k.checked.position_symbols)


def test_unused_and_bad_params_are_errors():
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(SIZES / "matrix_product.tl", params={"q": 3})
    assert info.value.code == "input" and "'q'" in info.value.message and "n, k, m" in info.value.message
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(SIZES / "matrix_product.tl", params={"n": 2**62})
    assert info.value.code == "too-large" and info.value.line == 3
    k = tl.compile(SIZES / "matrix_product.tl")
    for bad in ({"n": 0, "k": 1, "m": 1}, {"n": 1, "k": 1}, {"n": 1, "k": 1, "m": 1, "z": 1}, {"n": 1.5, "k": 1, "m": 1}):
        with pytest.raises(tl.TensorLangError) as info:
            k.specialize(**bad)
        assert info.value.code == "input"


def test_the_loaded_specializations_are_bounded():
    from tensorlang import specialize

    k = tl.compile("in var x : [n]\nout var y : [n]\ny = x + x\n", backend="numpy")
    for n in range(1, specialize.MAX_SPECIALIZATIONS + 6):
        assert k(x=np.ones(n))["y"].shape == (n,)
    bindings = k.specializations()
    assert len(bindings) == specialize.MAX_SPECIALIZATIONS and bindings[-1] == {"n": specialize.MAX_SPECIALIZATIONS + 5}


def test_threads_reach_every_specialization():
    k = tl.compile(SIZES / "matrix_product.tl", threads=2)
    k(A=np.ones((2, 2)), B=np.ones((2, 2)))
    k.threads = 1
    assert all(k.specialize(**b).threads == 1 for b in k.specializations())
    with pytest.raises(tl.TensorLangError):
        k.threads = 0


# ------------------------------------------------------------------ the command line
def test_cli_analyze_without_values_gives_polynomials(capsys):
    assert main(["analyze", str(SIZES / "interpolation.tl")]) == 0
    out = capsys.readouterr().out
    assert "flops 4*E*n^6" in out and "bytes 16*E*n^3 + 24*n^2" in out
    assert main(["analyze", str(SIZES / "interpolation.tl"), "--param", "n=4", "--param", "E=10"]) == 0
    out = capsys.readouterr().out
    assert "after the optimizer" in out and "[10 4 4 4]" in out


def test_cli_compile_and_run_with_params(capsys):
    assert main(["compile", str(SIZES / "matrix_product.tl"), "--emit", "ein", "--param", "n=2", "--param", "k=3",
                 "--param", "m=4"]) == 0
    assert "in var A : [2 3]" in capsys.readouterr().out
    assert main(["compile", str(SIZES / "matrix_product.tl"), "--emit", "ein"]) == 1
    assert "--param n=" in capsys.readouterr().err
    assert main(["run", str(SIZES / "matrix_product.tl"), "--random-inputs", "--param", "n=2", "--param", "k=3",
                 "--param", "m=4"]) == 0
    assert "[2 4]" in capsys.readouterr().out
    assert main(["run", str(SIZES / "matrix_product.tl"), "--random-inputs", "--param", "n=2"]) == 1
    assert "error[input]" in capsys.readouterr().err
    assert main(["check", str(SIZES / "matrix_product.tl"), "--param", "z=2"]) == 1
    assert "'z'" in capsys.readouterr().err


def test_cli_run_binds_sizes_from_input_files(capsys, tmp_path):
    a = np.arange(6.0).reshape(2, 3)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", np.ones((3, 2)))
    assert main(["run", str(SIZES / "matrix_product.tl"), "--input", f"A={tmp_path / 'a.npy'}",
                 "--input", f"B={tmp_path / 'b.npy'}", "--output", str(tmp_path / "out.npz")]) == 0
    with np.load(tmp_path / "out.npz") as saved:
        np.testing.assert_allclose(saved["C"], a @ np.ones((3, 2)))


def test_threads_calling_with_new_shapes_at_once_get_right_results():
    from concurrent.futures import ThreadPoolExecutor

    k = tl.compile(SIZES / "matrix_product.tl", backend="numpy")
    rng = np.random.default_rng(0)
    work = [(rng.standard_normal((n, 3)), rng.standard_normal((3, 2))) for n in (1, 2, 3, 1, 2, 3, 4, 4)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda ab: k(A=ab[0], B=ab[1])["C"], work))
    for (a, b), c in zip(work, results):
        np.testing.assert_allclose(c, a @ b, rtol=1e-12)
    assert sorted(s["n"] for s in k.specializations()) == [1, 2, 3, 4]


def test_the_builder_takes_size_names():
    A, B = tl.var("A", ("n", "m")), tl.var("B", ("m", "p"))
    k = tl.build({"C": tl.contract(tl.outer(A, B), (2, 3))}, backend="numpy")
    assert isinstance(k, tl.SymbolicKernel) and k.symbols == ("n", "m", "p")
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 4))
    np.testing.assert_allclose(k(A=a, B=b)["C"], a @ b)
    with pytest.raises(tl.TensorLangError) as info:
        tl.contract(tl.outer(A, A), (2, 3))  # m against n: different sizes
    assert info.value.code == "shape"
