"""Found by a review of the merges of the third hostile sweep, the Teem files and the 2×2 call:
hex NRRD data skipped and read as Teem reads them, ``centers:`` as ``centerings:``, axis
mins and maxs that give no finite spacing refused, and a copied kernel with a runner of
its own, and a kernel of fixed sizes specializes to itself."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.sampling.image import load

MATMUL = "in var A : [2 3]\nin var B : [3 2]\nout var C : [2 2]\nC = A # B . [2 3]\n"
HEX = "".join(f"{v:04x}" for v in range(1, 13))  # ushort 1..12, big-endian


def _hex_image(tmp_path, data: bytes, skip: int):
    (tmp_path / "h.dat").write_bytes(data)
    head = ["NRRD0004", "type: ushort", "dimension: 2", "sizes: 4 3", "kinds: space space", "endian: big",
            "encoding: hex", f"byte skip: {skip}", "data file: h.dat", ""]
    (tmp_path / "h.nhdr").write_text("\n".join(head))
    return str(tmp_path / "h.nhdr")


@pytest.mark.parametrize("data, skip", [
    (HEX.encode(), 0),
    (b"abcd" + HEX.encode() + b"abcd", 4),  # the skip counts the file's bytes, before decoding (Teem)
    (b"ZZZZ" + HEX.encode(), 4),  # skipped bytes need not be hex digits
    (HEX.encode() + b"\nEND OF DATA\n", 0),  # what follows the samples' digits is not read
    (" ".join(HEX[i:i + 2] for i in range(0, len(HEX), 2)).encode(), 0),  # white space anywhere
])
def test_hex_samples_are_read_as_teem_reads_them(tmp_path, data, skip):
    image = load(_hex_image(tmp_path, data, skip))
    assert image.data.ravel(order="F").tolist() == list(range(1, 13))


def test_hex_data_with_a_byte_skip_of_minus_one_is_refused(tmp_path):
    with pytest.raises(tl.TensorLangError, match="byte skip -1") as caught:
        load(_hex_image(tmp_path, HEX.encode(), -1))
    assert caught.value.code == "input"


def _minmax_image(tmp_path, lo: str, hi: str, centers: str = "centers: node node") -> str:
    head = ["NRRD0004", "type: float", "dimension: 2", "sizes: 3 4", "kinds: space space", centers,
            f"axis mins: {lo}", f"axis maxs: {hi}", "endian: little", "encoding: raw", "", ""]
    path = tmp_path / "m.nrrd"
    path.write_bytes("\n".join(head).encode() + np.arange(12, dtype="<f4").tobytes())
    return str(path)


@pytest.mark.parametrize("field", ["centers: node node", "centerings: node node"])
def test_both_spellings_of_centerings_place_node_centered_samples(tmp_path, field):
    image = load(_minmax_image(tmp_path, "0 0", "2 3", field))
    assert image.world.tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]  # unu dnorm: directions (1,0) (0,1)


@pytest.mark.parametrize("lo, hi", [("0 0", "2 inf"), ("-1e308 0", "1e308 3")])
def test_axis_mins_and_maxs_without_a_finite_spacing_are_refused(tmp_path, lo, hi):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (1e308 - -1e308 overflowed with numpy's warning)
        with pytest.raises(tl.TensorLangError, match="no finite sample spacing") as caught:
            load(_minmax_image(tmp_path, lo, hi))
    assert caught.value.code == "input"


def test_a_copied_kernel_has_a_runner_of_its_own():
    k = tl.compile(MATMUL, backend="c")
    a, b = np.ones((2, 3)), np.ones((3, 2))
    k(A=a, B=b)
    twin = copy.copy(k)
    assert twin.runner is not k.runner and twin.runner.kernel is twin
    twin.check_structure = True  # re-arms the twin's runner, not the original's
    assert twin._c_call is None and twin.runner.c_call is None
    assert (k._c_call is None) == (k.target.c_call is None)
    assert twin(A=a, B=b)["C"].tolist() == k(A=a, B=b)["C"].tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_a_kernel_of_fixed_sizes_specializes_to_itself_and_refuses_others():
    """``k.specialize(n=3)`` on a kernel whose extents are numbers was Python's AttributeError."""
    k = tl.compile(MATMUL)
    assert k.specialize() is k
    with pytest.raises(tl.TensorLangError, match="no size 'n' = 3") as caught:
        k.specialize(n=3)
    assert caught.value.code == "input"
    bound = tl.compile("in var A : [n 3]\nout var B : [n 3]\nB = A\n", params={"n": 4})
    assert bound.specialize(n=4) is bound
    with pytest.raises(tl.TensorLangError, match="its sizes: n=4"):
        bound.specialize(n=5)
