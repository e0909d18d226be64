"""``TENSORLANG_*`` environment variables set to values they do not accept (issue 41):
each is error[input] naming the variable and what it accepts, never silently the default
(docs/security.md, "Environment variables").  The class: every variable tensorlang
reads, each through the function that reads it, with every kind of malformed value;
the table in the docs names every variable the sources read; nothing outside
``limits.py`` reads one from ``os.environ`` itself."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import limits, machine
from tensorlang.cli import main
from tensorlang.errors import TensorLangError
from tensorlang.ein import ir
from tensorlang.lang.lark_support import grammar_cache_dir
from tensorlang.passes import verifying
from tensorlang.schedule.fusion import fusion_groups
from tensorlang.strands.runner import strand_backend
from tensorlang.machine import blas
from tensorlang.targets.c import build, callext, threshold

SRC = Path(__file__).resolve().parents[2] / "src" / "tensorlang"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"

#: each variable: (the call that reads it, a value it accepts, what that value gives)
READERS = {
    "TENSORLANG_MAX_BYTES": (limits.memory_budget_bytes, " 4096 ", 4096),
    "TENSORLANG_MAX_SOURCE_BYTES": (limits.max_source_bytes, "65536", 65536),
    "TENSORLANG_MAX_STATEMENTS": (limits.max_statements, "50", 50),
    "TENSORLANG_PARALLEL_WORK": (lambda: threshold._thresholds.__wrapped__(2).compute, "500", 500),
    "TENSORLANG_CACHE": (lambda: (build.cache_dir(), grammar_cache_dir().parent), "/tmp/tl-x",
                         (Path("/tmp/tl-x"), Path("/tmp/tl-x"))),
    "TENSORLANG_CACHE_SIZES": (lambda: machine.cache_sizes.__wrapped__(), "l1=48K,l2=2M",
                               machine.CacheSizes(48 * 1024, 2 * 2**20, "env", machine.hint_min_slab())),
    "TENSORLANG_HINT_MIN_SLAB": (machine.hint_min_slab, "2048", 2048),
    "TENSORLANG_FUSE": (lambda: fusion_groups(ir.Program((), ()), {}, 8) == (), "off", True),
    "TENSORLANG_VERIFY": (verifying, "Yes", True),
    "TENSORLANG_NO_C_BLAS": (lambda: blas._find.__wrapped__("float64"), "1", None),
    "TENSORLANG_NO_CALLEXT": (lambda: callext.extension.__wrapped__(), "true", None),
    "TENSORLANG_STRAND_BACKEND": (strand_backend, "Interp", "interp"),
}
#: read while reporting another error: a warning and the default (the on/off reader's)
WARNS = {"TENSORLANG_DEBUG"}

NUMBER_BAD = ["", "  ", "abc", "-5", "0", "1e999", "inf", "nan", "2.5", "+3", "0x10", "1_000", "9" * 5000,
              str(2**62 + 1), "\u0661\u0662", "12 34"]
BAD = {
    "TENSORLANG_MAX_BYTES": NUMBER_BAD, "TENSORLANG_MAX_SOURCE_BYTES": NUMBER_BAD,
    "TENSORLANG_MAX_STATEMENTS": NUMBER_BAD, "TENSORLANG_PARALLEL_WORK": NUMBER_BAD,
    "TENSORLANG_CACHE": ["", "   "],
    "TENSORLANG_CACHE_SIZES": ["", "x,y", "l1=48K", "l1=0,l2=2M", "l1=48K,l2=2M,l1=1K", "l1=-1,l2=2", "l1=1T,l2=2M",
                               "l1=" + "9" * 5000 + ",l2=1"],
    "TENSORLANG_STRAND_BACKEND": ["", "gpu", "numpy", "c interp"],
    "TENSORLANG_HINT_MIN_SLAB": ["", "abc", "-5", "2.5", "+3", "0x10", "1_000", "1" * 10, "\u0661\u0662", "12 34"],
}
FLAG_BAD = ["", "2", "-1", "maybe", "enabled", "0.0", "1e999"]
CASES = [(v, bad) for v in READERS for bad in BAD.get(v, FLAG_BAD)]


@pytest.mark.parametrize("variable, value", CASES, ids=[f"{v[11:]}={b[:12]!r}" for v, b in CASES])
def test_a_malformed_variable_is_an_input_error_naming_it(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(TensorLangError) as info:
        READERS[variable][0]()
    assert info.value.code == "input"
    assert f"${variable}=" in info.value.message and "unset it for the default" in info.value.message
    assert "is not " in info.value.message and len(info.value.message) < 300


@pytest.mark.parametrize("variable", sorted(READERS))
def test_an_accepted_value_is_read_and_unset_is_the_default(monkeypatch, variable):
    read, good, expected = READERS[variable]
    monkeypatch.setenv(variable, good)
    assert read() == expected or expected is None and read() is None
    monkeypatch.delenv(variable)
    read()  # the default: no error


@pytest.mark.parametrize("value", FLAG_BAD)
def test_a_malformed_debug_switch_warns_in_one_line_and_the_internal_error_still_shows(monkeypatch, capsys, value):
    monkeypatch.setenv("TENSORLANG_DEBUG", value)
    assert limits.env_flag("TENSORLANG_DEBUG", warn=True) is False
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning: $TENSORLANG_DEBUG=" in err
    monkeypatch.setenv("TENSORLANG_DEBUG", "1")
    assert limits.env_flag("TENSORLANG_DEBUG", warn=True) is True


def test_every_variable_the_sources_read_is_tested_and_in_the_docs_table():
    named = {m for p in SRC.rglob("*.py") for m in re.findall(r"TENSORLANG_[A-Z_]+[A-Z]", p.read_text("utf-8"))}
    table = set(re.findall(r"^\| `(TENSORLANG_[A-Z_]+)` \|", DOCS.read_text("utf-8"), re.M))
    assert named == set(READERS) | WARNS == table


def test_only_the_limits_module_reads_the_environment_for_them():
    readers = [p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")
               if re.search(r"environ(\.get)?\(?[\[(]?\s*\"TENSORLANG_|getenv\(\s*\"TENSORLANG_", p.read_text("utf-8"))]
    assert readers == []


def test_a_run_and_the_command_line_refuse_a_malformed_budget(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", "lots")
    with pytest.raises(TensorLangError) as info:
        tl.compile("in var x : [3]\nout var y : [3]\ny = x * 2\n", backend="numpy")(x=np.ones(3))
    assert info.value.code == "input" and "TENSORLANG_MAX_BYTES" in info.value.message
    program = tmp_path / "p.tl"
    program.write_text("in var x : [3]\nout var y : [3]\ny = x * 2\n")
    assert main(["run", str(program), "--random-inputs"]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "$TENSORLANG_MAX_BYTES='lots'" in err and "Traceback" not in err
