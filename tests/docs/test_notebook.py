"""The tutorial notebook in examples/ runs from top to bottom without an error (nbclient),
and its checks (assert cells comparing with numpy) hold."""

from __future__ import annotations

import pytest

from corpus import EXAMPLES

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

pytestmark = pytest.mark.slow


def test_the_tutorial_notebook_runs(tmp_path):
    notebook = nbformat.read(EXAMPLES / "tutorial.ipynb", as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = "".join(out.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                      for out in cell.get("outputs", []))
    assert "specialisations:" in outputs and "symmetric: True" in outputs
    assert "flops 4*E*n^6" in outputs and "after the optimizer" in outputs
