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


def test_the_c_back_ends_c_files_are_shipped():
    # the C a generated source reads (targets/c/csrc): kernels' pieces and the strand programs' runtime
    csrc = files("tensorlang").joinpath("targets", "c", "csrc")
    for name in ("tl_prelude.h", "callext.c", "probe_head.h", "strands_prelude.h", "strands_linalg.h",
                 "strands_births.c", "strands_neighbours.c", "strands_driver.c", "strands_api.h"):
        assert csrc.joinpath(name).is_file(), name
