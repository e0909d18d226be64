"""Probes of images from strand programs, generated as C (filled in below)."""

from __future__ import annotations

import numpy as np

from ...errors import error
from ...strands import ir as S

PRELUDE = "typedef struct { const double *data; int64_t size[3]; double m[9]; double b[3]; } tl_img;\n"


def kernels(ir: S.StrandIR) -> list[str]:
    return []


def render(s: S.Probe, image: S.ImageSlot, ex, pad: str) -> list[str]:
    raise error("internal", "probes are not rendered yet")


def pack(ffi, images, values):
    arr = ffi.new("tl_img[]", max(1, len(images)))
    return arr, [arr]


_ = np
