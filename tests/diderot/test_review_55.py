"""A review's findings (rev55): an NRRD header whose ``sizes`` no int64 holds warned from pynrrd before its clear
error (a traceback under ``-W error``); a text sequence file with commas between its numbers, which Teem reads, was
refused; a ``bool{n}`` component on the command line took any number (2 was true), where a ``bool`` takes only
Teem's true and false words."""

from __future__ import annotations

import warnings

import pytest

import tensorlang as tl
from tensorlang.cli import main
from tensorlang.errors import TensorLangError

PAIRS = """#version 2.0
input vec2{} xs;
strand S (int i) { output real y = 0; update { y = xs{i}[0] + 10*xs{i}[1]; stabilize; } }
create_collection { S(i) | i in 0..1 };
"""


@pytest.mark.parametrize("sizes", ["9223372036854775807", "1e30", "99999999999999999999"])
def test_an_nrrd_of_absurd_sizes_is_an_error_with_no_warning(sizes, tmp_path):
    path = tmp_path / "big.nrrd"
    path.write_bytes(f"NRRD0004\ntype: double\ndimension: 1\nsizes: {sizes}\nencoding: raw\n\n".encode())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (pynrrd's "invalid value encountered in cast" was raised here)
        with pytest.raises(TensorLangError, match=r"error\[(too-large|input)\]"):
            tl.image(str(path))


@pytest.mark.parametrize("text", ["1,2\n3,4\n", "1, 2\r\n3 ,4\r\n", "1\t2\n3 4\n"])
def test_a_text_sequence_files_numbers_may_be_separated_by_commas(text, tmp_path):
    (tmp_path / "xs.txt").write_bytes(text.encode())
    got = tl.compile(PAIRS, lang="diderot", backend="interp")(xs=str(tmp_path / "xs.txt")).y
    assert got.tolist() == [21.0, 43.0]


def test_a_bool_sequence_component_on_the_command_line_is_true_or_false(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.diderot").write_text("""#version 2.0
input bool{2} bs = {true, false};
strand S (int i) { output real y = 0; update { print(bs{i}, "\\n"); stabilize; } }
create_collection { S(i) | i in 0..0 };
""")
    argv = ["run", "p.diderot", "--backend", "interp", "-o", "o.nrrd", "-bs"]
    for words in (["2", "0"], ["0.5", "1"], ["nan", "0"]):  # (each ran as true false)
        assert main([*argv, *words]) == 1 and "expects true or false" in capsys.readouterr().err
    assert main([*argv, "no", "On"]) == 0 and capsys.readouterr().out == "false\n"
