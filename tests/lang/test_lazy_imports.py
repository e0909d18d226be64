"""A plain ``import tensorlang`` loads neither islpy nor the Diderot front end, and a
``.tl`` program compiles without the Diderot front end (docs/performance.md, "Import
time"): run in fresh interpreters, so that other tests' imports do not hide a regression."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = "sorted(m for m in sys.modules if m.startswith(('islpy', 'tensorlang.lang.diderot')))"


def _run(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_plain_import_loads_no_heavy_module():
    assert _run(f"import tensorlang, sys; print({HEAVY})") == "[]"


def test_compiling_a_tl_program_does_not_load_the_diderot_front_end():
    program = ROOT / "examples" / "fig4_matrix_product.tl"
    code = (f"import sys, tensorlang as tl; tl.compile({str(program)!r}, backend='numpy'); "
            "print(sorted(m for m in sys.modules if m.startswith('tensorlang.lang.diderot')))")
    assert _run(code) == "[]"


def test_a_diderot_program_loads_its_front_end_on_first_use():
    code = ("import sys, tensorlang as tl; from tensorlang import lang; lang.get('diderot'); "
            "print('tensorlang.lang.diderot' in sys.modules)")
    assert _run(code) == "True"


def test_a_front_end_folder_is_still_an_attribute_of_lang():
    code = ("import sys, tensorlang; from tensorlang import lang; "
            "print(lang.teil.LANGUAGE.name, 'tensorlang.lang.teil' in sys.modules, hasattr(lang, 'nothing'))")
    assert _run(code) == "teil True False"
