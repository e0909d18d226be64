import gc
import os
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests import their strategies as `properties.generators`.
sys.path.insert(0, str(Path(__file__).parent))
# The benchmark package of this checkout (not the one an editable install points at),
# as PYTHONPATH=src does for the package itself.
sys.path.insert(1, str(Path(__file__).parent.parent / "benchmarks"))

# Every optimization a test causes is checked by the IR verifier as lowered and after
# every pass (src/tensorlang/ein/verify.py); TENSORLANG_VERIFY=0 turns that off.
os.environ.setdefault("TENSORLANG_VERIFY", "1")
# the C target's parallel threshold is measured per machine (targets/c/threshold.py):
# pinned here, so generated code and the tests on it do not depend on the machine
os.environ.setdefault("TENSORLANG_PARALLEL_WORK", str(1 << 17))
# so are the cache sizes (machine.cache_sizes): tile, unroll and padding choices read them,
# and the tests that assert those choices were written against a 48 KiB L1 and a 2 MiB L2
# (an AMD machine's 32 KiB / 1 MiB cuts CFD blocks differently at n = 25-28)
os.environ.setdefault("TENSORLANG_CACHE_SIZES", "l1=48K,l2=2M")
# every slab gets its next-element hint on every CPU (the AMD rule, machine.hint_min_slab, has its own tests)
os.environ.setdefault("TENSORLANG_HINT_MIN_SLAB", "0")

# Compiled C kernels go to a private cache for this test run, never the user's.
if not os.environ.get("TENSORLANG_TEST_KEEP_CACHE"):
    import atexit
    import shutil
    import tempfile

    _cache = tempfile.mkdtemp(prefix="tensorlang-test-cache-")
    os.environ["TENSORLANG_CACHE"] = _cache
    atexit.register(shutil.rmtree, _cache, True)

settings.register_profile(
    "default", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow], derandomize=False
)
settings.register_profile("thorough", deadline=None, max_examples=3000, suppress_health_check=list(HealthCheck))
# the quick tier (`pytest -m "not slow"`, see pytest_configure below): a property test that
# sets no example count of its own draws 50 programs instead of 200 (or the ci profile's 500)
settings.register_profile(
    "quick", deadline=None, max_examples=50, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))


def _quick_tier(config) -> bool:
    """Whether the run leaves out the slow tests: ``-m "not slow"`` (also ``"not slow and not x"``),
    not ``-m "slow or not slow"``, which runs them all (at their full counts)."""
    expr = config.getoption("markexpr", "") or ""
    return "not slow" in expr and re.search(r"\bslow\b", re.sub(r"\bnot\s+slow\b", "", expr)) is None


def pytest_configure(config):
    """Two tiers (docs/architecture.md, "Tests"): `python -m pytest` runs everything;
    `python -m pytest -m "not slow"` leaves out the tests marked ``slow`` (registered in
    pyproject.toml) and loads the "quick" hypothesis profile, unless $HYPOTHESIS_PROFILE
    names one.  Runs before the test modules are imported, so every ``@settings`` sees it."""
    if "HYPOTHESIS_PROFILE" not in os.environ and _quick_tier(config):
        settings.load_profile("quick")


#: a test file whose tests are all slow says so at its top level
_ALL_SLOW = re.compile(r"^pytestmark = \[?pytest\.mark\.slow\b", re.MULTILINE)


def pytest_ignore_collect(collection_path, config):
    """In the quick tier a test file marked slow as a whole (``pytestmark = pytest.mark.slow``,
    alone or first in a list) is not imported: none of its tests would run, and its imports
    (dask, the sanitizer probe) would cost every xdist worker at collection."""
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_") and _quick_tier(config):
        if _ALL_SLOW.search(collection_path.read_text(encoding="utf-8")):
            return True
    return None


def pytest_collection_finish(session):
    """What collection built (every test module, its parameters and strategies: most of a
    worker's heap) is moved out of the garbage collector's generations, so the full
    collections the tests' allocations set off do not walk it again and again (about 5% of
    the CPU of a run of 540 tests after a whole collection; docs/performance.md)."""
    gc.collect()
    gc.freeze()


def _quick_examples(count: int) -> int:
    """The examples a property test that asks for ``count`` draws in the quick tier: a quarter
    (the quick profile's 50 of the default 200), at least 5 (or all, where it asks for fewer)."""
    return max(min(count, 5), count // 4)


def pytest_collection_modifyitems(config, items):
    """A test id that prints an object's address (``<... at 0x7f...>``) differs from one
    process to the next, and pytest-xdist's workers refuse a collection that differs: such
    an id fails the run here, in one process, before a CI run meets it."""
    unstable = [item.nodeid for item in items if re.search(r" at 0x[0-9a-f]+", item.nodeid)]
    if unstable:
        raise pytest.UsageError("test ids with an object's address (give the parametrize ids): " + ", ".join(unstable))
    if settings.get_current_profile_name() == "quick":
        _scale_examples(items)
    _longest_files_first(items)


#: The test files that took longest in a full run (summed `--durations`, longest first; a file
#: not named keeps its place after them).  Under `-n auto` each file runs whole on one worker
#: (`--dist loadfile`) and the workers take the files in this order (`--no-loadscope-reorder`,
#: pyproject.toml): the long ones start first and the last a worker takes is a short one, so
#: both workers finish together.  xdist's own order (the most tests first) left a few long
#: files of few tests to the end and one worker busy for minutes alone.  A stale list costs
#: balance, never a test.
LONGEST_FILES = (
    "fields/test_cprobe_properties.py", "diderot/test_unseen_programs.py", "diderot/test_compiled.py",
    "hostile/test_diderot_hostile.py", "hostile/test_large_programs.py", "diderot/test_field_higher_c.py",
    "hostile/test_scaling.py", "diderot/test_strand_neighbours.py", "properties/test_wider_programs.py",
    "fields/test_cprobe.py", "diderot/test_field_ops_c.py", "fields/test_cprobe_sanitizers.py",
    "diderot/test_strand_c_fallbacks.py", "hostile/test_resources.py", "loops/test_ragged_tiles.py",
    "loops/test_tiles.py", "lang/einsum/test_gram.py", "diderot/test_c_coverage.py",
    "padding/test_padding_fused.py", "hostile/test_hostile_sweep7.py", "properties/test_passes_keep_meaning.py",
    "hostile/test_hostile_sweep11.py", "properties/test_backends_match_interpreter.py", "targets/test_c_cache.py",
    "loops/test_c_loop_order.py", "loops/test_epilogues.py", "diderot/test_strand_create_lanes.py",
    "diderot/test_strands_lanes3d.py", "properties/test_private_sums.py", "analysis/test_liveness.py",
    "hostile/test_hostile.py", "fuzz/test_fuzz_coverage.py", "fields/test_probe_out.py",
    "hostile/test_program_size.py", "docs/test_docs_examples.py", "diderot/test_standard_basis.py",
    "hostile/test_builder_arguments.py", "loops/test_prefetch.py", "hostile/test_robustness_generated.py",
    "loops/test_loop_pipeline.py", "targets/test_c_blas.py", "diderot/test_strand_ray_max.py",
    "diderot/test_teem_files.py", "structure/test_packed_blas.py", "structure/test_packed_heap.py",
    "targets/test_c_backend.py",
)


def _longest_files_first(items) -> None:
    """Sorts the collected tests so the files of :data:`LONGEST_FILES` come first, in its order;
    a file's tests keep their order, and so do the other files (a stable sort)."""
    here = Path(__file__).parent
    rank = {name: n for n, name in enumerate(LONGEST_FILES)}

    def key(item) -> int:
        try:
            return rank.get(Path(item.path).relative_to(here).as_posix(), len(rank))
        except ValueError:  # a test outside tests/
            return len(rank)

    items.sort(key=key)


def _scale_examples(items) -> int:
    """In the quick tier a property test that sets its own example count (``@settings(max_examples=N)``,
    which a profile does not override) draws :func:`_quick_examples` of them; the full run draws N.
    A ``@settings`` without a count (``deadline=None``) keeps the profile's.  Hypothesis reads a
    test's settings from the attribute its ``@settings`` sets, when the test runs; returns the
    number of tests scaled (tests/properties/test_quick_profile.py checks one)."""
    scaled = set()
    for item in items:
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))  # a method's function
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if getattr(test, "is_hypothesis_test", False) and own is not None \
                and own.max_examples != settings.default.max_examples and id(test) not in scaled:
            scaled.add(id(test))  # parametrized: one function, many items
            test._hypothesis_internal_use_settings = settings(own, max_examples=_quick_examples(own.max_examples))
    return len(scaled)


@pytest.fixture(scope="module")
def monkeypatch_budget():
    """Keep runs of randomly edited programs small: a 64 MiB memory budget, for one module (a session scope
    leaked it to every later file on the same xdist worker)."""
    old = os.environ.get("TENSORLANG_MAX_BYTES")
    os.environ["TENSORLANG_MAX_BYTES"] = str(64 * 2**20)
    yield
    if old is None:
        del os.environ["TENSORLANG_MAX_BYTES"]
    else:
        os.environ["TENSORLANG_MAX_BYTES"] = old


@pytest.fixture(scope="module")
def asan_ubsan():
    """Skips the tests that use it where the C compiler here cannot build and run a program with
    AddressSanitizer and UBSan (tests/sanitizer_probe.py; asked once per process, when first used)."""
    import sanitizer_probe

    sanitizer_probe.skip_unless(sanitizer_probe.ASAN_UBSAN, reason="the C compiler here cannot build with ASan/UBSan")
