"""Compressed NRRD payloads are bounded by the header's sizes before they are inflated
(issue 41): a small gzip or bzip2 file that inflates far beyond what its sizes need is
error[too-large] after inflating at most that much; honest files still load."""

from __future__ import annotations

import bz2
import gzip
import tracemalloc

import numpy as np
import pytest

from tensorlang.errors import TensorLangError
from tensorlang.sampling.image import INFLATE_SLACK, load

COMPRESS = {"gzip": gzip.compress, "gz": gzip.compress, "bzip2": bz2.compress, "bz2": bz2.compress}


def _write(path, encoding, payload, sizes="4 4", extra=b""):
    header = f"NRRD0004\ntype: double\ndimension: 2\nsizes: {sizes}\nencoding: {encoding}\nendian: little\n".encode()
    path.write_bytes(header + extra + b"\n" + payload)
    return path


@pytest.mark.parametrize("encoding", sorted(COMPRESS))
@pytest.mark.parametrize("inflated", [16 * 8 + INFLATE_SLACK + 1, 64 << 20])
def test_a_payload_inflating_beyond_its_sizes_is_too_large(tmp_path, encoding, inflated):
    path = _write(tmp_path / "bomb.nrrd", encoding, COMPRESS[encoding](b"\0" * inflated))
    tracemalloc.start()
    try:
        with pytest.raises(TensorLangError) as caught:
            load(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.code == "too-large"
    assert peak < 16 << 20  # at most the bound was inflated, never the 64 MiB


@pytest.mark.parametrize("encoding", sorted(COMPRESS))
def test_honest_compressed_images_load(tmp_path, encoding):
    values = np.arange(16.0)
    path = _write(tmp_path / "ok.nrrd", encoding, COMPRESS[encoding](values.tobytes()))
    img = load(str(path))
    assert sorted(np.asarray(img.data).ravel().tolist()) == values.tolist()


def test_a_line_skip_before_compressed_data_is_kept(tmp_path):
    data = tmp_path / "data.raw.gz"
    data.write_bytes(b"a comment line\n" + gzip.compress(np.arange(16.0).tobytes()))
    path = tmp_path / "detached.nrrd"
    path.write_bytes(b"NRRD0004\ntype: double\ndimension: 2\nsizes: 4 4\nencoding: gzip\nendian: little\n"
                     b"line skip: 1\ndata file: data.raw.gz\n\n")
    assert sorted(np.asarray(load(str(path)).data).ravel().tolist()) == list(np.arange(16.0))


def test_a_broken_stream_is_still_a_clear_error(tmp_path):
    path = _write(tmp_path / "broken.nrrd", "gzip", b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(TensorLangError) as caught:
        load(str(path))
    assert caught.value.code in ("input", "too-large")
