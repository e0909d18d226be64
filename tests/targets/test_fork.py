"""Kernels, fields and compiled probes in a child process after the parent used threads
(issue 47): GCC's OpenMP pool does not survive ``fork``, and a child whose parent had run
a team of two once waited forever on the first parallel region (targets/c/forking.py).

Each test runs a script in a subprocess with a timeout, so that a hang fails the test
instead of hanging the suite: the parent computes on two OpenMP threads (and on two
Python threads), then ``multiprocessing`` children, started by ``fork`` and by ``spawn``,
compute the same and send their results back to be compared.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tensorlang.targets import available

SRC = Path(__file__).resolve().parents[2] / "src"

needs_c = pytest.mark.skipif("c" not in available(), reason="no C compiler")

SCRIPT = r'''
import multiprocessing as mp
import sys
import threading

import numpy as np
import tensorlang as tl

rng = np.random.default_rng(0)
A, B = rng.standard_normal((64, 48)), rng.standard_normal((48, 40))
KERNEL = tl.compile("in var A : [64 48]\nin var B : [48 40]\nout var C : [64 40]\nC = A # B . [2 3]\n",
                    backend="c", threads=2)
PADDED = tl.compile("in var A : [64 48]\nin var B : [48 40]\nout var C : [64 40]\nC = A # B . [2 3]\n",
                    backend="c", threads=2, pad=8)
SYMBOLIC = tl.compile("in var A : [n m]\nin var B : [m p]\nout var C : [n p]\nC = A # B . [2 3]\n",
                      backend="c", threads=2)
FIELD = tl.grad(tl.field(rng.normal(size=(40, 40)), "ctmr"))
POINTS = rng.uniform(3, 36, size=(20000, 2))


def compute():
    return {
        "kernel": KERNEL(A=A, B=B)["C"],
        "padded": np.array(PADDED(A=A, B=B)["C"]),
        "symbolic": SYMBOLIC(A=A, B=B)["C"],
        "einsum": tl.einsum("ij,jk->ik", A, B),
        "field": FIELD.probe(POINTS, threads=2),
    }


def child(queue):
    results = compute()
    # a thread the child starts has its own OpenMP pool: its teams run as usual
    box = []
    worker = threading.Thread(target=lambda: box.append(compute()))
    worker.start()
    worker.join()
    queue.put((results, box[0]))


def main(method):
    expected = compute()  # the parent: teams of two on this thread ...
    workers = [threading.Thread(target=compute) for _ in range(2)]  # ... and on two others
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    context = mp.get_context(method)
    queue = context.Queue()
    process = context.Process(target=child, args=(queue,))
    process.start()
    results, threaded = queue.get(timeout=240)
    process.join(60)
    assert process.exitcode == 0, process.exitcode
    for name, value in expected.items():
        for got in (results[name], threaded[name]):
            assert np.allclose(got, value, equal_nan=True), name
    assert np.allclose(expected["kernel"], A @ B)
    print("ok", method, sorted(results))


if __name__ == "__main__":
    main(sys.argv[1])
'''


def run_script(tmp_path: Path, method: str, timeout: float = 300) -> tuple[int, str]:
    """Run the script in its own process group; on a timeout the whole group (the hung
    child included) is killed and the test fails."""
    script = tmp_path / "fork_after_threads.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
               TENSORLANG_PARALLEL_WORK="1")  # every loop on the team it is given
    process = subprocess.Popen([sys.executable, str(script), method], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"the {method} child did not finish in {timeout} s (a hang): {output}")
    finally:
        try:  # a child left behind (the parent failed first) goes with its group
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return process.returncode, output


@pytest.mark.slow
@needs_c
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_child_after_parent_threads(tmp_path, method):
    code, output = run_script(tmp_path, method)
    assert code == 0, output
    assert f"ok {method}" in output


def test_fork_handler_registered():
    """Importing the C target registers the handler (once: a second install is a no-op)."""
    from tensorlang.targets.c import forking

    assert forking._installed
    forking.install()
    assert forking._installed
