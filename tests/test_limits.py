"""limits.py: `tl.clear_caches()` empties what the package keeps from one call for the next."""

import numpy as np

import tensorlang as tl
from tensorlang import einsum_api, limits
from tensorlang.sampling import image as I


def test_clear_caches_empties_every_kept_table_and_calls_still_work(tmp_path, monkeypatch):
    monkeypatch.setattr(I, "SAME_BYTES", 1 << 20)
    data = np.arange(12.0).reshape(3, 4)
    path = tmp_path / "img.nrrd"
    path.write_bytes(b"NRRD0004\ntype: double\ndimension: 2\nsizes: 4 3\nencoding: raw\nendian: little\n\n"
                     + data.astype("<f8").tobytes())
    first = I.load(str(path), 2)
    a = np.arange(4.0).reshape(2, 2)
    before = tl.einsum("ij,jk->ik", a, a, backend="numpy")
    assert I._LAST and einsum_api._CACHE
    assert any(table for table in limits._KEPT)
    tl.clear_caches()
    assert not any(table for table in limits._KEPT)
    again = I.load(str(path), 2)
    assert again is not first and np.array_equal(again.data, first.data)
    np.testing.assert_array_equal(tl.einsum("ij,jk->ik", a, a, backend="numpy"), before)
