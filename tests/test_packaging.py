"""What the installed package carries besides its modules (pyproject's package-data).

CI runs the tests once more against the built wheel, installed in a fresh environment
(.ci/run), so these check the wheel as users get it."""

from importlib.resources import files


def test_the_package_says_it_is_typed():
    # PEP 561: without the marker, mypy and pyright ignore the annotations of an installed package
    assert files("tensorlang").joinpath("py.typed").is_file()


def test_the_front_ends_grammars_are_shipped():
    lang = files("tensorlang").joinpath("lang")
    for grammar in ("tl/grammar.lark", "teil/grammar.lark", "cfd/cfd.lark"):
        assert lang.joinpath(grammar).is_file(), grammar
