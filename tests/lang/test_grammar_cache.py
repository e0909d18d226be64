"""The grammars' LALR tables are cached per user (lang/lark_support.py, lalr_parser):
a second parser of the same grammar loads them; an unusable cache directory means no
cache, silently; a changed grammar or lark version never reads old tables."""

import os
import subprocess
import sys

import lark
import pytest

from tensorlang.lang import lark_support

GRAMMAR = r"""
start: NAME "=" NAME
NAME: /[a-z]+/
%ignore " "
"""


@pytest.fixture
def builds(monkeypatch):
    """How many times lark computed parse tables (a parser loaded from the cache computes none)."""
    count = [0]
    original = lark.Lark._build_parser

    def counting(self):
        count[0] += 1
        return original(self)

    monkeypatch.setattr(lark.Lark, "_build_parser", counting)
    return count


def _parses(parser) -> bool:
    return parser.parse("a = b").children[0] == "a"


def test_a_second_parser_loads_the_tables(tmp_path, monkeypatch, builds):
    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    assert _parses(lark_support.lalr_parser(GRAMMAR))
    files = list((tmp_path / "grammars").iterdir())
    assert len(files) == 1 and builds[0] == 1
    assert _parses(lark_support.lalr_parser(GRAMMAR))
    assert builds[0] == 1  # loaded, not computed
    assert list((tmp_path / "grammars").iterdir()) == files


def test_the_key_is_the_grammar_the_options_and_the_versions(monkeypatch):
    name = lark_support.cache_file(GRAMMAR, {"parser": "lalr"})
    assert lark_support.cache_file(GRAMMAR + "\n", {"parser": "lalr"}) != name
    assert lark_support.cache_file(GRAMMAR, {"parser": "lalr", "keep_all_tokens": True}) != name
    monkeypatch.setattr(lark, "__version__", "0.0.1")
    assert lark_support.cache_file(GRAMMAR, {"parser": "lalr"}) != name


def test_a_damaged_file_is_rebuilt_silently(tmp_path, monkeypatch, builds, capfd):
    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    lark_support.lalr_parser(GRAMMAR)
    (path,) = (tmp_path / "grammars").iterdir()
    path.write_bytes(path.read_bytes()[:100])  # cut short, as a write in progress would be
    assert _parses(lark_support.lalr_parser(GRAMMAR)) and builds[0] == 2
    assert _parses(lark_support.lalr_parser(GRAMMAR)) and builds[0] == 2  # rewritten whole
    assert capfd.readouterr().err == ""


def test_an_unusable_directory_means_no_cache(tmp_path, monkeypatch, builds, capfd):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TENSORLANG_CACHE", str(blocker / "below"))  # cannot be made
    assert _parses(lark_support.lalr_parser(GRAMMAR)) and _parses(lark_support.lalr_parser(GRAMMAR))
    assert builds[0] == 2
    shared = tmp_path / "shared"
    (shared / "grammars").mkdir(parents=True)
    os.chmod(shared / "grammars", 0o777)  # others could plant pickles: not used
    monkeypatch.setenv("TENSORLANG_CACHE", str(shared))
    assert _parses(lark_support.lalr_parser(GRAMMAR))
    assert list((shared / "grammars").iterdir()) == [] and builds[0] == 3
    assert capfd.readouterr().err == ""


def test_the_default_directory_is_under_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv("TENSORLANG_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert lark_support.grammar_cache_dir() == tmp_path / "tensorlang" / "grammars"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_home_runs_without_cache(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o500)
    env = {k: v for k, v in os.environ.items() if k not in ("TENSORLANG_CACHE", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    done = subprocess.run([sys.executable, "-c", "import tensorlang as tl; tl.check('var x : [2]\\nx = x + x')"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == ""
    assert list(home.iterdir()) == []


def test_a_fresh_process_writes_then_reads_the_tables(tmp_path):
    env = {**os.environ, "TENSORLANG_CACHE": str(tmp_path)}
    code = ("import lark, tensorlang as tl\n"
            "built = []\n"
            "original = lark.Lark._build_parser\n"
            "lark.Lark._build_parser = lambda self: built.append(1) or original(self)\n"
            "tl.check('var x : [2]\\nx = x + x')\n"
            "print(len(built))\n")
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert int(first.stdout) >= 1 and int(second.stdout) == 0  # the .tl grammar's tables were loaded
    assert any(p.suffix == ".lark" for p in (tmp_path / "grammars").iterdir())


def test_a_home_that_cannot_hold_a_cache_runs_without_one(tmp_path):
    """As any user (root included): a HOME below a regular file, where no directory can be made."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {k: v for k, v in os.environ.items() if k not in ("TENSORLANG_CACHE", "XDG_CACHE_HOME")}
    env["HOME"] = str(blocker / "home")
    done = subprocess.run([sys.executable, "-c", "import tensorlang as tl; tl.check('var x : [2]\\nx = x + x')"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == ""


def test_the_diderot_grammar_is_cached(tmp_path, monkeypatch, builds):
    """The Diderot front end's tables come from the cache too (they took 0.18 s a process)."""
    from tensorlang.lang.diderot import parse as diderot_parse

    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    diderot_parse._parser.cache_clear()
    diderot_parse._parser()
    diderot_parse._parser.cache_clear()
    diderot_parse._parser()
    diderot_parse._parser.cache_clear()
    assert builds[0] == 1 and len(list((tmp_path / "grammars").iterdir())) == 1
