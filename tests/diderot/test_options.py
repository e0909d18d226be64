"""The command line of a strand program (tensorlang.strands.options), with a stand-in program."""

from __future__ import annotations

import numpy as np
import pytest

from diderot.run_programs.fake import Input, Output, FakeProgram, collection_program, grid_program
from tensorlang.errors import TensorLangError
from tensorlang.strands import options


def parse(argv, program=None):
    return options.parse(program or grid_program(outputs=("val",)), argv)


def test_every_kind_of_input_is_an_option_and_tensors_take_one_number_per_component():
    values, opts = parse(["-size", "3", "-isoval", "-0.25", "-cmin", "-4", "-3.5", "-flag", "true",
                          "-label", "hi there", "-img", "x.nrrd"])
    assert values["size"] == 3 and isinstance(values["size"], int)
    assert values["isoval"] == -0.25
    assert values["cmin"].tolist() == [-4.0, -3.5] and values["cmin"].shape == (2,)
    assert values["flag"] is True and values["label"] == "hi there" and values["img"] == "x.nrrd"
    assert opts.limit == 0 and opts.steps == options.DEFAULT_LIMIT and opts.snapshot == 0


def test_inputs_left_out_keep_their_defaults_and_long_spellings_work():
    values, _ = parse(["--size=2", "-img", "a.nrrd"])
    assert values == {"size": 2, "img": "a.nrrd"}


@pytest.mark.parametrize("word, expected", [("yes", True), ("on", True), ("1", True), ("False", False),
                                            ("no", False), ("0", False)])
def test_booleans_take_the_usual_spellings(word, expected):
    values, _ = parse(["-size", "1", "-img", "a", "-flag", word])
    assert values["flag"] is expected


def test_a_matrix_input_takes_its_components_in_row_major_order():
    prog = FakeProgram("m", (Input("M", "mat2", "tensor", (2, 2), default=np.eye(2)),), (), True)
    values, _ = options.parse(prog, ["-M", "1", "2", "3", "4"])
    assert values["M"].tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_run_options():
    _, opts = parse(["-size", "1", "-img", "a", "-l", "50", "-s", "5", "-n", "2", "-print", "p.txt", "-v", "-t"])
    assert (opts.limit, opts.snapshot, opts.threads, opts.print_to, opts.verbose, opts.timing) == \
        (50, 5, 2, "p.txt", True, True)
    assert opts.steps == 50
    _, opts = parse(["-size", "1", "-img", "a", "--limit", "7", "--snapshot", "2", "--threads", "3", "--verbose"])
    assert (opts.limit, opts.snapshot, opts.threads, opts.verbose) == (7, 2, 3, True)


def test_one_output_takes_dash_o_and_several_take_dash_o_dash_name():
    _, opts = parse(["-size", "1", "-img", "a", "-o", "out.nrrd", "-sp", "snap"])
    prog = grid_program(outputs=("val",))
    assert options.output_files(prog, opts) == {"val": "out.nrrd"}
    assert options.snapshot_prefixes(prog, opts) == {"val": "snap"}
    assert options.output_files(prog) == {"val": "val.nrrd"}
    two = grid_program(outputs=("val", "pos"))
    _, opts = options.parse(two, ["-size", "1", "-img", "a", "-o-pos", "p.nrrd", "--snapshot-prefix-val", "v"])
    assert options.output_files(two, opts) == {"val": "val.nrrd", "pos": "p.nrrd"}
    assert options.snapshot_prefixes(two, opts) == {"val": "v", "pos": "pos"}
    with pytest.raises(TensorLangError, match=r"2 outputs \(val, pos\); name one, as in -o-val"):
        options.parse(two, ["-size", "1", "-img", "a", "-o", "x.nrrd"])


@pytest.mark.parametrize("argv, message", [
    (["-img", "a"], r"missing required input: -size \(int\)"),
    ([], r"missing required inputs: -size \(int\), -img \(image\(2\)\[\]\)"),
    (["-size", "two", "-img", "a"], r"-size \(int\) expects an integer, got 'two'"),
    (["-size", "1", "-img", "a", "-isoval", "x"], r"-isoval \(real\) expects a number"),
    (["-size", "1", "-img", "a", "-cmin", "1"], r"-cmin expects 2 values, got 1"),
    (["-size", "1", "-img", "a", "-flag", "maybe"], r"expects true or false"),
    (["-size", "1", "-img", "a", "-bogus", "1"], r"unknown option '-bogus' \(the program's inputs: -isoval, -size"),
    (["-size", "1", "-img", "a", "-isovl", "1"], r"unknown option '-isovl': did you mean -isoval\? \(the program"),
    (["-size", "1", "-img", "a", "-Size", "1"], r"unknown option '-Size': did you mean -size\?"),
    (["-size", "1", "-img", "a", "--limt", "1"], r"unknown option '--limt': did you mean --limit\?"),
    (["-size", "1", "-img", "a", "stray"], r"unexpected argument 'stray'"),
    (["-size", "1", "-img", "a", "-l", "-1"], r"-l expects an integer from 0 to 4294967295"),
    (["-size", "1", "-img", "a", "-n", "0"], r"-n expects an integer from 1 to 256"),
    (["-size", "1", "-img", "a", "-l"], r"-l expects 1 value, got none"),
])
def test_bad_command_lines_are_input_errors_naming_the_option(argv, message):
    with pytest.raises(TensorLangError, match=message) as info:
        parse(argv)
    assert info.value.code == "input"


def test_help_needs_no_required_input_and_lists_every_input_with_type_description_and_default():
    _, opts = parse(["--help"])
    assert opts.help == "long"
    text = options.usage(grid_program(outputs=("val",)), "iso")
    assert text.startswith("usage: iso [-isoval x] -size int [-cmin x y] [-flag bool] [-label string] "
                           "-img file.nrrd [options]\n")
    assert "-isoval x" in text and "(real) isovalue to look for; default: 0.5" in text
    assert "(int) grid size; required" in text and "(vec2) lower corner; default: -4 -4" in text
    assert "(bool); default: false" in text and "(image(2)[]) the image; required" in text
    for option in ("-l, --limit N", "-s, --snapshot N", "-o, --output FILE", "-sp, --snapshot-prefix PREFIX",
                   "-n, --nworkers, --threads N", "-print FILE", "-v, --verbose", "-t, --timing"):
        assert option in text, option
    assert f"default cap ({options.DEFAULT_LIMIT}" in text
    assert options.usage(grid_program(outputs=("val",)), "iso", long=False).count("\n") == 1


def test_help_with_several_outputs_names_an_option_per_output():
    text = options.usage(grid_program(outputs=("val", "pos")), "iso")
    assert "-o-val, --output-val FILE" in text and "-sp-pos, --snapshot-prefix-pos PREFIX" in text
    assert "-o, --output" not in text


def test_an_input_named_like_a_run_option_wins_over_it():
    prog = FakeProgram("p", (Input("n", "int", "int", default=1),), (Output("x", "real", "real"),), False)
    values, opts = options.parse(prog, ["-n", "5", "--nworkers", "2"])
    assert values == {"n": 5} and opts.threads == 2


def test_a_collection_program_parses_like_a_grid():
    values, opts = options.parse(collection_program(), ["-n", "4", "-o", "x.nrrd"])
    assert values == {"n": 4} and opts.outputs == {"x": "x.nrrd"}


def test_values_are_shown_as_the_command_line_writes_them():
    assert options.show_value(np.array([-4.0, 4.0])) == "-4 4"
    assert options.show_value(True) == "true" and options.show_value(0.25) == "0.25"


def test_real_defaults_are_what_the_executables_option_parser_reads_back(tmp_path, capsys):
    """Diderot's executables hand a default to their option parser as text with six
    significant digits (C++ streams) and read it back: on the command line a real input's
    default is that value, components of tensors and fixed sequences too; ints, and the
    Python API's defaults, are as written."""
    from tensorlang.cli import main

    prog = tmp_path / "d.diderot"
    prog.write_text('input real a = 0.083333336;\ninput vec2 v = [123456789.0, -0.95833331];\n'
                    'input int n = 123456789;\ninput real{2} s = {1.0, 2.7182818};\n'
                    'strand p (int i) { output real o = 0.0;\n'
                    '  update { print(a, " ", v, " ", n, " ", s, "\\n"); stabilize; } }\n'
                    'initially [ p(i) | i in 0..0 ];\n')
    assert main(["run", str(prog), "-o", str(tmp_path / "o.nrrd")]) == 0
    assert capsys.readouterr().out == "0.083333299999999999 [123457000,-0.95833299999999999] 123456789 {1,2.71828}\n"
    assert main(["run", str(prog), "-a", "0.083333336", "-o", str(tmp_path / "o.nrrd")]) == 0
    assert capsys.readouterr().out.startswith("0.083333335999999994 ")
    assert main(["run", str(prog), "--help"]) == 0
    assert "default: 0.0833333" in capsys.readouterr().out
    import tensorlang as tl

    assert tl.compile(str(prog)).inputs[0].default == 0.083333336
