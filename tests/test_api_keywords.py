"""Unknown keywords are errors everywhere in the public API (docs/api.md, "Arguments"):
every function of ``tl.__all__`` refuses a misspelt keyword with ArgumentError —
error[input] and a TypeError — naming it, the closest accepted keyword and all of them;
and the signatures ``inspect.signature`` reports are the real ones."""

import inspect

import numpy as np
import pytest

import tensorlang as tl


def _public_functions():
    for name in tl.__all__:
        value = getattr(tl, name)
        if callable(value) and not inspect.isclass(value):
            yield name, value


def _misspelt(function) -> tuple[str, str | None]:
    """A misspelling of the function's last keyword (its second letter left out), and
    that keyword; ``bogus`` where it takes no keyword."""
    params = inspect.signature(function).parameters.values()
    named = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and len(p.name) > 3]
    if not named:
        return "bogus", None
    word = named[-1]
    return word[0] + word[2:], word


def test_the_audit_covers_the_api():
    names = {name for name, _ in _public_functions()}
    assert {"compile", "check", "einsum", "einsum_path", "contract_expression", "build", "var", "kron", "field",
            "grad", "outer", "transpose", "available_backends", "padded_empty"} <= names


@pytest.mark.parametrize("name", [name for name, _ in _public_functions()])
def test_a_misspelt_keyword_is_refused_by_name(name):
    function = getattr(tl, name)
    wrong, meant = _misspelt(function)
    with pytest.raises(tl.ArgumentError) as caught:
        function(**{wrong: 1})
    err = caught.value
    assert isinstance(err, TypeError) and isinstance(err, tl.TensorLangError) and err.code == "input"
    assert f"unexpected keyword argument {wrong!r}" in err.message and f"{name}()" in err.message
    if meant is not None:
        assert f"did you mean {meant}?" in err.message


def test_the_examples_of_the_issue():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    with pytest.raises(TypeError, match="did you mean backend"):
        tl.contract_expression("ij,jk->ik", (2, 3), (3, 4), bakend="numpy")
    with pytest.raises(tl.TensorLangError, match="did you mean backend"):
        tl.einsum("ij,jk->ik", a, b, bakend="numpy")
    with pytest.raises(tl.ArgumentError, match="did you mean backend"):
        tl.compile("var x : [2]\nx = x + x", bakend="numpy")
    with pytest.raises(tl.ArgumentError, match="did you mean optimize"):
        tl.einsum_path("ij,jk->ik", a, b, optimise="greedy")


def test_opt_einsums_own_keywords_are_accepted():
    expr = tl.contract_expression("ij,jk->ik", (2, 3), (3, 4), optimize="greedy", use_blas=False, memory_limit=None)
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(expr(a, b), a @ b)
    np.testing.assert_allclose(tl.einsum("ij,jk->ik", a, b, optimize=True, backend="numpy"), a @ b)


def test_kernel_methods_and_inputs():
    k = tl.compile("in var A : [2 2]\nout var C : [2 2]\nC = A + A", backend="numpy")
    a = np.ones((2, 2))
    with pytest.raises(tl.TensorLangError, match=r"no variable 'AA' \(did you mean 'A'\?\)"):
        k(AA=a)
    with pytest.raises(tl.TensorLangError, match=r"did you mean 'out'"):
        k(A=a, outs={"C": np.empty((2, 2))})
    with pytest.raises(tl.ArgumentError, match="did you mean compressed"):
        k.run({"A": a}, compresed=True)
    with pytest.raises(tl.ArgumentError, match="did you mean stage"):
        k.ir(stag="ein")
    s = tl.compile("in var X : [N p]\nout var C : [p p]\nC[i,j] = sum(r) X[r,i] * X[r,j]", backend="numpy")
    with pytest.raises(tl.TensorLangError, match=r"'bacth' is no input of the program \(did you mean 'batch'\?\)"):
        s.dask(X=np.ones((4, 2)), bacth="N")
    expr = tl.contract_expression("ij,jk->ik", (2, 3), (3, 4))
    with pytest.raises(TypeError, match="unexpected keyword argument 'bakend'"):  # Python's own
        expr(np.ones((2, 3)), np.ones((3, 4)), bakend="numpy")


def test_signatures_are_the_real_ones():
    einsum = inspect.signature(tl.einsum)
    assert list(einsum.parameters) == ["subscripts", "operands", "out", "dtype", "order", "casting", "optimize",
                                       "backend"]
    assert {k: p.default for k, p in einsum.parameters.items() if p.default is not p.empty} == {
        "out": None, "dtype": None, "order": "K", "casting": "safe", "optimize": False, "backend": "auto"}
    compile_params = inspect.signature(tl.compile).parameters
    assert list(compile_params) == ["source_or_path", "backend", "dtype", "pad", "threads", "lang", "params", "opt",
                                    "skip_passes", "check_structure", "fma", "allow_missing"]
    for name, function in _public_functions():  # no function shows a bare *args, **kwargs wrapper
        params = inspect.signature(function).parameters.values()
        assert not any(p.kind is p.VAR_KEYWORD for p in params), name


def test_compile_options_is_the_one_keyword_list():
    """tl.compile's option keywords, past the program, its language, params and
    check_structure, are compile_options's, in order: written once (api.py)."""
    from tensorlang.api import compile_options

    own = {"source_or_path", "lang", "params", "check_structure"}
    assert [k for k in inspect.signature(tl.compile).parameters if k not in own] == list(
        inspect.signature(compile_options).parameters)
    assert {k: p.default for k, p in inspect.signature(tl.compile).parameters.items() if k not in own} == {
        k: p.default for k, p in inspect.signature(compile_options).parameters.items()}


_PROGRAM = "var input a : [2]\nvar output b : [2]\nb = a + a\n"


@pytest.mark.parametrize("keyword", [p for p in inspect.signature(tl.compile).parameters if p != "source_or_path"])
@pytest.mark.parametrize("value", [np.array([1, 2]), object()], ids=["array", "object"])
def test_a_meaningless_value_for_any_compile_keyword_is_a_user_error(keyword, value):
    """No keyword's value reaches a truth test or a comparison unchecked (an array's ``==``
    is elementwise): every one is refused with a user-facing code, never error[internal]."""
    with pytest.raises(tl.TensorLangError) as err:
        tl.compile(_PROGRAM, **{keyword: value})
    assert err.value.code in ("input", "backend"), str(err.value)


@pytest.mark.parametrize("method", ["ir", "code", "report", "run", "specializations"])
def test_a_kernels_methods_refuse_an_unknown_keyword_by_name(method):
    """The methods docs/api.md documents on a kernel (fixed and symbolic sizes) are part of
    the public API too: a misspelt keyword is error[input] naming the method, never a
    plain TypeError (``specializations`` was one)."""
    fixed = tl.compile("in var a : [3]\nout var y : [3]\ny = 2 * a\n", backend="numpy")
    symbolic = tl.compile("in var a : [n]\nout var y : [n]\ny = 2 * a\n", backend="numpy")
    for kernel in (fixed, symbolic):
        args = ({"a": np.ones(3)},) if method == "run" else ()
        with pytest.raises(tl.ArgumentError) as caught:
            getattr(kernel, method)(*args, bogus_keyword=1)
        assert caught.value.code == "input" and f"{method}()" in caught.value.message


def _returned_objects() -> dict:
    """One of each kind of object the public API hands a user: kernels (fixed and
    symbolic sizes, compiled or built), a contract expression, builder expressions, fields
    and a compressed result."""
    fixed = tl.compile("in var a : [3]\nout var y : [3]\ny = 2 * a\n", backend="numpy")
    x = tl.var("x", (2, 3))
    field = tl.field(np.ones((8, 8)), "bspln3")
    return {"Kernel": fixed,
            "SymbolicKernel": tl.compile("in var a : [n]\nout var y : [n]\ny = 2 * a\n", backend="numpy"),
            "built Kernel": tl.build({"C": tl.contract(tl.outer(x, x), (1, 3))}, backend="numpy"),
            "ContractExpression": tl.contract_expression("ij,jk->ik", (2, 3), (3, 4)),
            "builder variable": x, "builder expression": tl.outer(x, x),
            "Field": field, "derived Field": tl.grad(field),
            "Compressed": fixed.run({"a": np.ones(3)}, compressed=True)["y"]}


def _public_callables():
    """Every public function of ``tl``, ``tl.fields`` and ``tl.testing``, and every public
    method of the objects they return: found by introspection, so that a new one is
    covered without editing this list."""
    for module, prefix in ((tl, "tl"), (tl.fields, "tl.fields"), (tl.testing, "tl.testing")):
        for name in module.__all__:
            value = getattr(module, name)
            if callable(value) and not inspect.isclass(value):
                yield f"{prefix}.{name}", name, value
    for kind, obj in _returned_objects().items():
        for name in dir(type(obj)):
            if name.startswith("_") or isinstance(inspect.getattr_static(type(obj), name), property):
                continue
            value = getattr(obj, name)
            if callable(value):
                yield f"{kind}.{name}", name, value


def test_the_walk_finds_the_methods_users_call():
    found = {label for label, _, _ in _public_callables()}
    assert {"Kernel.run", "Kernel.ir", "Kernel.roles", "SymbolicKernel.dask", "SymbolicKernel.example_sizes",
            "Field.probe", "builder expression.text", "tl.fields.load", "tl.testing.assert_matches_reference",
            "tl.einsum"} <= found


@pytest.mark.parametrize("label,name,function", list(_public_callables()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_public_callable_refuses_an_unknown_keyword(label, name, function):
    """Unknown keywords are errors everywhere in the public API (docs/api.md,
    "Arguments"): error[input], never Python's bare TypeError.  Where the callable takes
    any keyword (``**arrays``: a kernel's inputs by name) the keyword is read as such a
    name and refused as one; otherwise the message names the callable and the keyword."""
    try:
        takes_any = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(function).parameters.values())
    except ValueError:  # no signature to read (a builtin): it must still refuse
        takes_any = False
    with pytest.raises(tl.TensorLangError) as caught:
        function(bogus_keyword=1)
    assert caught.value.code == "input", str(caught.value)
    if not takes_any:
        assert "'bogus_keyword'" in caught.value.message and f"{name}()" in caught.value.message, caught.value.message
