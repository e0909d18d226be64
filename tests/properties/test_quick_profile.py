"""The quick tier's example counts (tests/conftest.py, ``_scale_examples``): a property test
that sets its own count draws a quarter of it there; one that sets none keeps the profile's.
If hypothesis stops reading the attribute the scaling writes, the first test here fails."""
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=40, deadline=None)
@given(st.integers())
def test_sets_its_own_count(x):
    assert isinstance(x, int)


@settings(deadline=None)
@given(st.integers())
def test_sets_no_count(x):
    assert isinstance(x, int)


def test_the_quick_tier_draws_a_quarter_of_an_explicit_count():
    own = test_sets_its_own_count._hypothesis_internal_use_settings.max_examples
    inherited = test_sets_no_count._hypothesis_internal_use_settings.max_examples
    if settings.get_current_profile_name() == "quick":
        assert (own, inherited) == (10, settings.default.max_examples)
    else:
        assert own == 40


def test_a_run_of_slow_and_quick_tests_is_not_the_quick_tier(request):
    """``-m "slow or not slow"`` runs every test, at the full example counts (it loaded the
    quick profile and drew a quarter of them, as its text contains "not slow")."""
    from pathlib import Path
    # the loaded tests/conftest.py, found by its path among pytest's plugins (``conftest`` may name another folder's)
    root = (Path(__file__).parents[1] / "conftest.py").resolve()
    _quick_tier = next(m._quick_tier for m in request.config.pluginmanager.get_plugins()
                       if getattr(m, "__file__", None) and Path(m.__file__).resolve() == root)

    class Config:
        def __init__(self, expr):
            self.expr = expr

        def getoption(self, name, default=None):
            return self.expr

    quick = {e: _quick_tier(Config(e)) for e in ("not slow", "not slow and not gpu", "(not slow)", "slow or not slow",
                                                  "not slow or slow", "slow", "", None)}
    assert quick == {"not slow": True, "not slow and not gpu": True, "(not slow)": True, "slow or not slow": False,
                     "not slow or slow": False, "slow": False, "": False, None: False}
