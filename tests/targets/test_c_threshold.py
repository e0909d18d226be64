"""The parallel threshold (002 §7): measured once per machine and cached, overridden by
$TENSORLANG_PARALLEL_WORK, forced by threads= at compile time."""

from __future__ import annotations

import json

import pytest

import tensorlang as tl
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import threshold

pytestmark = pytest.mark.skipif("c" not in tl.available_backends(), reason="no C compiler")

SMALL = "in var s : []\ninout var x : [1000]\nx = s * x\n"


def test_threads_at_compile_time_force_openmp_on_small_statements():
    assert "omp parallel" not in tl.compile(SMALL, backend="c").code("c")
    assert "#pragma omp parallel for" in tl.compile(SMALL, backend="c", threads=2).code("c")


def test_the_threshold_decides_which_statements_run_on_threads(monkeypatch):
    monkeypatch.setenv("TENSORLANG_PARALLEL_WORK", "500")
    threshold.parallel_work.cache_clear()
    try:
        assert "#pragma omp parallel for" in tl.compile(SMALL, backend="c").code("c")
        assert "omp parallel" not in tl.compile(SMALL.replace("1000", "400"), backend="c").code("c")
    finally:
        threshold.parallel_work.cache_clear()


def test_the_measurement_is_cached_next_to_the_kernels(monkeypatch, tmp_path):
    monkeypatch.delenv("TENSORLANG_PARALLEL_WORK")
    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    monkeypatch.setattr(threshold, "SIZES", (1 << 10, 1 << 12))
    threshold.parallel_work.cache_clear()
    try:
        value = threshold.parallel_work()
        record = json.loads((tmp_path / threshold.CACHE_FILE).read_text())
        assert record["parallel_work"] == value and value in (1 << 10, 1 << 12, threshold.NEVER)
        if record["cpus"] >= 2 and c_build.find_compiler().openmp:
            assert [n for n, _, _ in record["times"]] == [1 << 10, 1 << 12]
        # a second process reads the file instead of measuring again
        (tmp_path / threshold.CACHE_FILE).write_text(json.dumps({**record, "parallel_work": 777}))
        threshold.parallel_work.cache_clear()
        assert threshold.parallel_work() == 777
    finally:
        threshold.parallel_work.cache_clear()
