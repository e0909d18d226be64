"""docs/fields.md: its Python runs, prints what the page says it prints, and its kernel
table and rule names are the code's."""

import re
from pathlib import Path

import tensorlang as tl
from tensorlang.passes import fields as field_passes

PAGE = Path(__file__).resolve().parents[2] / "docs" / "fields.md"


def test_the_python_in_the_page_runs_and_prints_what_it_shows(capsys):
    text = PAGE.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 3
    namespace: dict = {}
    for n, block in enumerate(blocks):
        exec(compile(block, f"fields.md block {n + 1}", "exec"), namespace)
        printed = capsys.readouterr().out.splitlines()
        shown = [m.strip() for m in re.findall(r"^print\(.*?\)\s*#\s*(.*)$", block, re.M)]
        for line, claim in zip(printed, shown):
            assert line.startswith(claim.split(":")[0].strip()), (line, claim)


def test_the_kernel_table_is_the_code():
    text = PAGE.read_text()
    for name, k in tl.fields.KERNELS.items():
        row = re.search(rf"^\| `{name}`[^|]*\| (\d+) \| C?(\d)", text, re.M) or \
            re.search(rf"^\| `{name}`[^|]*\| (\d+) \| declared C(\d)", text, re.M)
        assert row, name
        assert (int(row[1]), int(row[2])) == (k.support, k.continuity), name
    for rule in field_passes.RULES:
        assert rule.citation.startswith("004")
