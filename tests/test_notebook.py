"""The example notebook runs from start to end as a user would run it (nbclient, a real
kernel), its results show as tables and its figure inline, and nothing prints a warning."""

from __future__ import annotations

import shutil

import pytest

from conftest import REPO

nbclient = pytest.importorskip("nbclient", reason="the notebook test needs nbclient and ipykernel (the test extra)")
nbformat = pytest.importorskip("nbformat")


def test_the_example_notebook_runs_and_shows_tables_and_figures(tmp_path):
    for name in ("getting-started.ipynb", "torus-8x8-dor-uniform.toml"):
        shutil.copy(REPO / "examples" / name, tmp_path / name)
    nb = nbformat.read(tmp_path / "getting-started.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    kinds = [set(o.get("data", {})) for o in outputs]
    # The run's table, the sweep's DataFrame, the figure inline.
    assert sum("text/html" in k for k in kinds) >= 2
    assert any("image/png" in k for k in kinds)
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("<code>accepted_load</code>" in h and "phits/server/cycle" in h for h in html)
    streams = "".join(o.get("text", "") for o in outputs if o.output_type == "stream" and o.name == "stderr")
    assert "Warning" not in streams and "IProgress" not in streams, streams
    assert (tmp_path / "hopsim-out" / "notebook" / "load.pdf").read_bytes()[:5] == b"%PDF-"
