"""The parallel threshold (002 §7): measured once per machine and cached, overridden by
$TENSORLANG_PARALLEL_WORK (1 forces threads everywhere); a parallel loop's team."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.targets.c import build as c_build
from tensorlang.loops import parallel
from tensorlang.targets.c import codegen, threshold

pytestmark = pytest.mark.skipif("c" not in tl.available_backends(), reason="no C compiler")

SMALL = "in var s : []\ninout var x : [1000]\nx = s * x\n"


def test_threads_at_compile_time_do_not_force_openmp_on_small_statements(monkeypatch):
    # issue 19/21: the threshold decides also with threads=2; $TENSORLANG_PARALLEL_WORK=1 forces
    assert "omp parallel" not in tl.compile(SMALL, backend="c").code("c")
    assert "omp parallel" not in tl.compile(SMALL, backend="c", threads=2).code("c")
    monkeypatch.setenv("TENSORLANG_PARALLEL_WORK", "1")
    threshold.clear()
    try:
        code = tl.compile(SMALL, backend="c", threads=2).code("c")
        assert "#pragma omp parallel for schedule(guided) num_threads(tl_threads)" in code  # no team limit
    finally:
        threshold.clear()


def test_a_parallel_reduction_keeps_static_halves_and_its_bits(monkeypatch):
    # loops.parallel.SCHEDULE: guided hands out iterations to whichever thread comes first, so a
    # loop with an OpenMP reduction keeps static: its partial sums must not depend on it
    monkeypatch.setenv("TENSORLANG_PARALLEL_WORK", "1")
    threshold.clear()
    try:
        k = tl.compile("in var x : [1000]\nout var s : []\ns[] = sum(i) x[i] * x[i]\n", backend="c", threads=2)
        code = k.code("c")
        assert "schedule(static) num_threads(tl_threads) if(tl_threads > 1) reduction(+:" in code
        assert "schedule(guided)" not in code
        x = np.random.default_rng(5).standard_normal(1000) * 1e8
        first = k(x=x)["s"]
        for _ in range(20):  # the same two halves every call: the same bits
            assert k(x=x)["s"].tobytes() == first.tobytes()
        assert abs(first - x @ x) <= 1e-12 * abs(x @ x)
    finally:
        threshold.clear()


def test_a_parallel_statement_asks_for_the_team_its_work_pays_for(monkeypatch):
    monkeypatch.setenv("TENSORLANG_PARALLEL_WORK", "500")
    threshold.clear()
    try:
        k = tl.compile(SMALL, backend="c", threads=2)  # 1000 points: 2 * 1000 // 500 = 4 threads pay
        assert "const int tl_team1_x_i = tl_pick(&tl_choice1, tl_team(tl_threads, 4));" in k.code("c")
        assert "parallel for i in range(1000):  # at most 4 threads" in k.ir("loops")
        x = np.arange(1000.0)
        np.testing.assert_array_equal(k(s=np.array(-0.0), x=x)["x"], -0.0 * x)
    finally:
        threshold.clear()


def test_team_size_grows_with_the_work_and_is_bounded_by_the_iterations():
    assert parallel.team_size(1000, 1000, 50) == 2  # at the threshold: two threads win
    assert parallel.team_size(4000, 1000, 50) == 8
    assert parallel.team_size(10 ** 9, 1000, 6) == 6  # never more threads than iterations
    assert parallel.team_size(10 ** 9, 1, 6) == 0  # forced: no limit


def test_the_team_is_at_most_the_threads_asked_for_and_the_limit(monkeypatch):
    """The run-time decision itself (codegen's THREADS), called through a probe."""
    compiler = c_build.require_compiler()
    if not compiler.openmp:
        pytest.skip("needs a C compiler with OpenMP: the team is OpenMP's")
    source = (codegen.prelude("double", teams=True)
              + "int tl_probe_team(int threads, int cap) { return tl_team(threads, cap); }\n")
    _, lib = c_build.build_and_load(source, compiler, "int tl_probe_team(int threads, int cap);")
    cpus = os.cpu_count() or 1
    assert lib.tl_probe_team(1, 8) == 1  # one thread asked for: never more
    assert lib.tl_probe_team(8, 1) == 1  # work for one: one
    for threads, cap in ((2, 2), (8, 3), (3, 8)):
        team = lib.tl_probe_team(threads, cap)
        assert 1 <= team <= min(threads, cap, cpus)  # fewer where cores are busy, never more


def test_the_threshold_decides_which_statements_run_on_threads(monkeypatch):
    monkeypatch.setenv("TENSORLANG_PARALLEL_WORK", "500")
    threshold.clear()
    try:
        assert "#pragma omp parallel for" in tl.compile(SMALL, backend="c").code("c")
        assert "omp parallel" not in tl.compile(SMALL.replace("1000", "400"), backend="c").code("c")
    finally:
        threshold.clear()


def test_the_measurement_is_cached_next_to_the_kernels(monkeypatch, tmp_path):
    # the premise is the machine: probes are timed with two CPUs and OpenMP, and only a
    # process that may use every CPU caches its figures (a pinned one measures for itself)
    compiler = c_build.find_compiler()
    cpus, machine = threshold.usable_cpus(), os.cpu_count() or 1
    if compiler is None or not compiler.openmp:
        pytest.skip("needs a C compiler with OpenMP: without it nothing is probed")
    if cpus < 2:
        pytest.skip(f"needs two CPUs: this process may use {cpus}, and one CPU measures nothing")
    if cpus < machine:
        pytest.skip(f"needs every CPU: this process may use {cpus} of {machine}, and a pinned process caches nothing")
    monkeypatch.delenv("TENSORLANG_PARALLEL_WORK")
    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    monkeypatch.setattr(threshold, "SIZES", (1 << 10, 1 << 12))
    monkeypatch.setattr(threshold, "wait_for_quiet", lambda timeout_s=1.0: True)  # whatever else runs now
    threshold.clear()
    try:
        value = threshold.parallel_work()
        record = json.loads((tmp_path / threshold.CACHE_FILE).read_text())
        assert value == parallel.Threshold(record["parallel_work"], record["stream_work"])
        assert {value.compute, value.stream} <= {1 << 10, 1 << 12, threshold.NEVER}
        assert record["cpus"] == cpus
        assert [n for n, _, _ in record["times"]] == [1 << 10, 1 << 12]
        assert [n for n, _, _ in record["stream_times"]] == [1 << 10, 1 << 12]
        # a second process reads the file instead of measuring again
        (tmp_path / threshold.CACHE_FILE).write_text(json.dumps({**record, "parallel_work": 777, "stream_work": 999}))
        threshold.clear()
        assert threshold.parallel_work() == parallel.Threshold(777, 999)
    finally:
        threshold.clear()


def test_a_measurement_while_other_work_ran_is_used_but_not_cached(monkeypatch, tmp_path):
    # a thread still spinning on the second CPU (OpenBLAS's, ~110 ms after a numpy
    # product) makes two threads look no faster than one: that figure is not the machine's
    compiler = c_build.find_compiler()
    if compiler is None or not compiler.openmp:
        pytest.skip("no C compiler with OpenMP: nothing is probed")
    monkeypatch.delenv("TENSORLANG_PARALLEL_WORK")
    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    monkeypatch.setattr(threshold, "usable_cpus", lambda: 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    looks = iter([False, True])  # busy before the measurement, quiet after it
    monkeypatch.setattr(threshold, "wait_for_quiet", lambda timeout_s=1.0: next(looks))
    monkeypatch.setattr(threshold, "measure", lambda compiler, cpus=None: {"parallel_work": 1 << 26, "stream_work": 1 << 20})
    threshold.clear()
    try:
        assert threshold.parallel_work() == parallel.Threshold(1 << 26, 1 << 20)  # used in this process
        assert not (tmp_path / threshold.CACHE_FILE).exists()  # the next one measures again
        looks = iter([True, False])  # quiet before, busy after
        threshold.clear()
        threshold.parallel_work()
        assert not (tmp_path / threshold.CACHE_FILE).exists()
        looks = iter([True, True])
        threshold.clear()
        threshold.parallel_work()
        assert json.loads((tmp_path / threshold.CACHE_FILE).read_text())["parallel_work"] == 1 << 26
    finally:
        threshold.clear()


def test_without_probes_nothing_waits_for_quiet(monkeypatch, tmp_path):
    # no OpenMP (or one CPU): measure() times nothing, so a busy machine costs no wait
    monkeypatch.delenv("TENSORLANG_PARALLEL_WORK")
    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    if c_build.find_compiler() is None:
        pytest.skip("no C compiler")
    monkeypatch.setattr(threshold, "_probes", lambda compiler, cpus: False)

    def busy(timeout_s=1.0):
        raise AssertionError("waited for quiet with no probe to time")

    monkeypatch.setattr(threshold, "wait_for_quiet", busy)
    monkeypatch.setattr(threshold, "measure", lambda compiler, cpus=None: {"parallel_work": threshold.NEVER,
                                                                          "stream_work": threshold.NEVER})
    threshold.clear()
    try:
        assert threshold.parallel_work() == parallel.Threshold(threshold.NEVER, threshold.NEVER)
    finally:
        threshold.clear()


def test_waiting_for_quiet_needs_two_calm_looks_in_a_row(monkeypatch):
    monkeypatch.setattr(threshold, "QUIET_POLL_S", 0.0)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)  # a free CPU among 8: 7 runnable tasks at most
    monkeypatch.setattr(threshold, "running_tasks", lambda: 7)
    assert threshold.wait_for_quiet(1.0)
    monkeypatch.setattr(threshold, "running_tasks", lambda: 8)
    assert not threshold.wait_for_quiet(0.0)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # two CPUs: nothing but this thread
    seen = iter([2, 1, 3, 1, 1, 5])
    monkeypatch.setattr(threshold, "running_tasks", lambda: next(seen))
    assert threshold.wait_for_quiet(10.0)
    assert next(seen) == 5  # it stopped at the second calm look in a row
    monkeypatch.setattr(threshold, "running_tasks", lambda: 2)
    assert not threshold.wait_for_quiet(0.0)  # busy until the time is up
    monkeypatch.setattr(threshold, "running_tasks", lambda: None)
    assert threshold.wait_for_quiet(0.0)  # no /proc/loadavg: nothing to wait for


def test_running_tasks_counts_at_least_this_thread():
    if not os.path.exists("/proc/loadavg"):
        pytest.skip("no /proc/loadavg")
    assert threshold.running_tasks() >= 1


def test_the_first_win_needs_two_sizes_in_a_row():
    times = [(1, 1.0, 0.9), (2, 1.0, 0.8), (4, 1.0, 0.95), (8, 1.0, 0.5), (16, 1.0, 0.6)]
    assert threshold._first_win(times) == 8  # 2 won alone (4 lost): noise
    assert threshold._first_win(times[:4]) == 8  # the last size wins on its own
    assert threshold._first_win([(1, 1.0, 1.0), (2, 1.0, 0.9)]) == threshold.NEVER


@pytest.mark.parametrize("program, kind", [
    ("in var s : []\ninout var x : [100000]\nx = s * x\n", "stream"),  # elementwise: 1 op per element
    ("in var A : [300 300]\nin var x : [300]\nout var y : [300]\ny[i] = sum(j) A[i,j] * x[j]\n", "stream"),  # matvec: reads A once
    ("in var A : [200 200]\nin var B : [200 200]\nout var C : [200 200]\nC[i,k] = sum(j) A[i,j] * B[j,k]\n",
     "compute"),
])
def test_each_statement_takes_the_threshold_of_its_kind_of_work(program, kind):
    """With one threshold at 1000 and the other NEVER, only the statements of that kind
    of work run on threads (the loops as the C target prints them, BLAS off)."""
    from c_source import generate

    program = tl.compile(program, backend="c", opt=False).executed
    for compute, stream, threaded in ((1000, threshold.NEVER, "compute"), (threshold.NEVER, 1000, "stream")):
        code = generate(program, "float64", blas=False,
                                parallel_work=parallel.Threshold(compute, stream)).source
        assert ("omp parallel for" in code) is (kind == threaded)


def test_intensity_counts_each_buffer_once_at_its_largest_access():
    from tensorlang.loops.ir import Load, Loop, Store, footprint

    # y[i] = y[i] + A[i,j] * x[j] over i < 30, j < 20: A 600, x 20, y 30
    body = (Loop("i", 30, (Loop("j", 20, (Store(2, ("i",), Load(0, ("i", "j"))),
                                          Store(2, ("i",), Load(1, ("j",))))),)),)
    assert footprint(body) == 600 + 20 + 30
    assert parallel.intensity(body) == 2 * 600 / 650


def test_an_affine_index_counts_the_rows_it_reaches():
    """A[4i+r, j] over i < 75, j < 300 for r = 0..3 (loops/jam.py's rows): the 300 rows of
    A, not 75 (counted as 75 a matrix-vector product looked four times as intense and took
    the compute threshold)."""
    from tensorlang.ein.index import Affine
    from tensorlang.loops.ir import Load, Loop, Store, footprint

    rows = tuple(Store(2, (Affine((("i", 4),), r - 3),), Load(0, (Affine((("i", 4),), r - 3), "j"))) for r in range(4))
    assert footprint((Loop("i", 75, (Loop("j", 300, rows),)),)) == (4 * 74 + 1) * 300 + 4 * 74 + 1


# ------------------------------------------------------------ the measured choice (CHOICE)
def _choice_harness():
    """tl_pick and tl_record as generated (codegen.THREADS), behind small C functions."""
    import ctypes

    compiler = c_build.find_compiler()
    if compiler is None or not compiler.openmp:
        pytest.skip("no C compiler with OpenMP here")
    source = (codegen.prelude("double", teams=True) + "\n#include <string.h>\n"
              "static tl_choice tl_c;\n"
              "int tl_test_pick(int team) { return tl_pick(&tl_c, team); }\n"
              "void tl_test_record(int ran, long long ns) { tl_record(&tl_c, ran, ns); }\n"
              "long long tl_test_mean(int i) { return tl_c.mean[i]; }\n"
              "void tl_test_reset(void) { memset(&tl_c, 0, sizeof tl_c); }\n")
    lib = ctypes.CDLL(str(c_build.build(source, compiler)))
    lib.tl_test_record.argtypes = [ctypes.c_int, ctypes.c_longlong]
    lib.tl_test_mean.restype = ctypes.c_longlong
    lib.tl_test_reset()
    return lib


def _run(lib, calls: int, times: dict[int, int]) -> list[int]:
    """``calls`` calls of a loop whose team of 2 takes times[2] ns and one thread times[1]:
    the team each call ran."""
    ran = []
    for _ in range(calls):
        team = lib.tl_test_pick(2)
        lib.tl_test_record(team, times[team])
        ran.append(team)
    return ran


def test_a_parallel_loop_keeps_to_the_faster_of_one_thread_and_its_team():
    lib = _choice_harness()
    warm = codegen.CHOICE["warm"]
    explore = codegen.CHOICE["explore"]
    first = _run(lib, 2 * warm, {1: 2000, 2: 1000})
    assert first.count(1) == warm and first.count(2) == warm and first[0] == 2  # both tried, the team first
    steady = _run(lib, 4 * explore, {1: 2000, 2: 1000})
    assert steady.count(1) == 4  # the team wins; one thread only to look again, 1 in `explore`
    # the machine changes: the second core is taken, the team now takes 4x as long
    after = _run(lib, 4 * explore, {1: 2000, 2: 4000})
    assert after[:8].count(2) <= 4  # the team's mean passes one thread's within a few calls
    assert after[8:].count(2) <= 4  # then it is only looked at now and then ...
    back = _run(lib, 6 * explore, {1: 2000, 2: 1000})
    assert back[-2 * explore:].count(2) >= 2 * explore - 2  # ... which finds it fast again
    first_look = back.index(2)
    assert first_look <= explore  # the first look at the team comes within `explore` calls
    assert back[first_look + 1:first_look + explore].count(2) == explore - 1  # and one look wins it back


def test_one_look_at_the_losing_choice_replaces_its_stale_mean():
    """A look at the loser replaces its mean with the new time; the winner's mean moves
    by 1/decay of each new time (noise does not flip it at once)."""
    lib = _choice_harness()
    warm, decay = codegen.CHOICE["warm"], codegen.CHOICE["decay"]
    _run(lib, 2 * warm, {1: 2000, 2: 8000})  # the team loses: 8000 against 2000
    lib.tl_test_record(2, 500)  # a look at the team, the machine now free
    assert lib.tl_test_mean(1) == 500
    lib.tl_test_record(2, 1500)  # the team now wins: its mean moves by a quarter
    assert lib.tl_test_mean(1) == 500 + (1500 - 500) // decay
    lib.tl_test_record(1, 300)  # a look at one thread, now the loser: replaced
    assert lib.tl_test_mean(0) == 300


def test_one_thread_asked_is_one_thread_run():
    lib = _choice_harness()
    assert {lib.tl_test_pick(1) for _ in range(100)} == {1}


def test_the_first_time_of_each_is_dropped():
    lib = _choice_harness()
    lib.tl_test_record(2, 10 ** 9)  # the team's first call: the threads start
    lib.tl_test_record(2, 1000)
    assert lib.tl_test_mean(1) == 1000


def test_parallel_loops_of_a_kernel_measure_their_choice(monkeypatch):
    """Each parallel loop with a team times itself after the loop, under the same choice
    it picked; many calls (both choices tried, then the faster) give the same results."""
    monkeypatch.setenv("TENSORLANG_PARALLEL_WORK", "500")
    threshold.clear()
    try:
        k = tl.compile(SMALL + "\n", backend="c", threads=2)
        c = k.code("c")
        assert "static tl_choice tl_choice1;" in c
        assert "tl_record(&tl_choice1, tl_team1_x_i, tl_clock() - tl_team1_x_i_t0);" in c
        x = np.linspace(-3.0, 3.0, 1000)
        x[7] = np.nan
        for _ in range(2 * codegen.CHOICE["warm"] + codegen.CHOICE["explore"] + 3):
            np.testing.assert_array_equal(k(s=np.array(-2.5), x=x)["x"], -2.5 * x)
    finally:
        threshold.clear()


def test_a_process_pinned_to_fewer_cpus_neither_reads_nor_writes_the_machines_figures(monkeypatch, tmp_path):
    """A pinned first measurement (the bench's one-thread pass runs on CPU 0) once cached
    'threads never pay' for the whole machine; a pinned process now measures for itself
    (two threads on one CPU: NEVER) and leaves the cache alone."""
    monkeypatch.delenv("TENSORLANG_PARALLEL_WORK", raising=False)
    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    monkeypatch.setattr(threshold, "SIZES", (1 << 10, 1 << 12))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    compiler = c_build.find_compiler()
    if compiler is None:
        pytest.skip("no C compiler")
    key = threshold._key(compiler)
    (tmp_path / threshold.CACHE_FILE).write_text(json.dumps({"key": key, "parallel_work": 777, "stream_work": 999}))
    threshold.clear()
    try:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
        assert threshold.usable_cpus() == 1
        assert threshold.parallel_work() == parallel.Threshold(threshold.NEVER, threshold.NEVER)
        record = json.loads((tmp_path / threshold.CACHE_FILE).read_text())
        assert (record["parallel_work"], record["stream_work"]) == (777, 999)  # not overwritten
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
        assert threshold.parallel_work() == parallel.Threshold(777, 999)  # the whole machine: the cache
    finally:
        threshold.clear()


# ------------------------------------------------------------ the team's own workers
OWN_RUNNING_PROBE = r"""
int main(int argc, char **argv) {
    int spin = argc > 1 && argv[1][0] == '1';
    int stop = 0;
    long seen = -1;
    #pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) {
            if (spin) { while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) { } }
            else { struct timespec t = {0, 200000000}; nanosleep(&t, NULL); }
        } else {
            struct timespec t = {0, 20000000};
            nanosleep(&t, NULL);  /* the other thread has started by now */
            seen = tl_own_running();
            __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
        }
    }
    printf("%ld %ld %ld %ld %ld", seen, tl_others(3, 1, 2), tl_others(2, 0, 2), tl_others(4, 3, 2), tl_others(1, 0, 4));
    long last = 1, samples[] = {1, 2, 1, 2, 2, 2, 1, 3, 3, 1};
    for (int k = 0; k < 10; k++) printf(" %ld", tl_steady(&last, samples[k]));
    printf("\n");
    return 0;
}
"""


def test_the_teams_own_spinning_workers_are_not_counted_as_other_work(tmp_path):
    """OpenMP's workers spin a while after a parallel region; /proc/loadavg counts them as
    runnable.  Taken for other work, they kept the next calls of a 2-thread loop on one
    thread (runs of ~16 calls, one 10 ms sample, at the 1-thread time: interpolation n = 8
    measured 0.43 ms a call on average against 0.32 ms after this)."""
    import subprocess

    compiler = c_build.find_compiler()
    if compiler is None or not compiler.openmp or not os.path.isdir("/proc/self/task"):
        pytest.skip("no C compiler with OpenMP, or no /proc")
    src, exe = tmp_path / "own.c", tmp_path / "own"
    src.write_text(codegen.prelude("double", teams=True) + OWN_RUNNING_PROBE)
    built = subprocess.run([*compiler.command, "-O1", "-std=c99", "-fopenmp", str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]

    def run(spin: bool) -> list[int]:
        ran = subprocess.run([str(exe), "1" if spin else "0"], capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        return [int(x) for x in ran.stdout.split()]

    spinning, sleeping = run(True), run(False)
    assert spinning[0] == 1  # the spinning worker is running: counted as our own
    assert sleeping[0] == 0  # a sleeping one is not running
    # others = running - the caller - our own workers (at most the largest team less one)
    assert spinning[1:5] == [1, 1, 2, 0]
    # busy cores count only where two samples in a row saw them (tl_steady)
    assert spinning[5:] == [1, 1, 1, 1, 2, 2, 1, 1, 3, 1]


def test_a_step_without_parallel_loops_asks_openmp_nothing(monkeypatch):
    """A step whose loops all run on one thread calls no ``omp_get_max_threads`` per call
    (a 2x2 product's call: docs/performance.md, "The 2×2 call below numba's"); a parallel one does."""
    small = tl.compile(SMALL, backend="c", threads=2).code("c")
    assert "omp_get_max_threads" not in small and "(void)nthreads;" in small
    monkeypatch.setenv("TENSORLANG_PARALLEL_WORK", "1")
    threshold.clear()
    try:
        code = tl.compile(SMALL, backend="c", threads=2).code("c")
        assert "omp_get_max_threads" in code and "num_threads(tl_threads)" in code
    finally:
        threshold.clear()


def test_the_team_is_declared_where_the_printer_asked_for_it_not_where_a_name_says_so():
    """The step declares ``tl_threads`` where a parallel loop of its printer used it
    (``CPrinter.threads``), not where its text holds the word: a variable named
    ``tl_threads`` in a serial step's comments asked OpenMP for its threads at every call."""
    code = tl.compile("in var tl_threads : [3]\nout var y : [3]\ny[i] = tl_threads[i] * 2\n", backend="c").code("c")
    assert "omp_get_max_threads" not in code and "(void)nthreads;" in code
