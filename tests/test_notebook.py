"""The pictures people look at: the quickstart notebook runs and shows its figures; the split map has a class legend.

The notebook test needs nbclient, nbformat and ipykernel (the dev extra) and is skipped without them.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"


def _images(cell) -> list[bytes]:
    return [base64.b64decode(out["data"]["image/png"]) for out in cell.get("outputs", [])
            if out.get("output_type") in ("display_data", "execute_result") and "image/png" in out.get("data", {})]


def test_quickstart_runs_and_shows_its_figures(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("HSI_SHARED_DATA", str(tmp_path / "no-shared-data"))  # the absent-data branch, plainly said
    before = sorted(p.name for p in NOTEBOOK.parent.iterdir())
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    text = "".join(out.get("text", "") for c in code for out in c.outputs)
    images = [img for c in code for img in _images(c)]
    # false colour, spectra, split (with its class legend), whole-scene map
    assert len(images) >= 4 and all(img.startswith(b"\x89PNG") and len(img) > 5000 for img in images)
    assert "<Figure size" not in text  # figures are shown, not printed as their repr
    assert "test pixels: OA" in text
    # the map's test-pixel OA is the one training scored on the same pixels
    mapped = re.search(r"test pixels: OA (\d\.\d+)", text).group(1)
    tested = re.search(r"trainer\.test: OA (\d\.\d+)", text).group(1)
    assert mapped == tested
    assert float(mapped) >= 0.9  # a model that learns: the first impression is a map that is right
    assert "Samson is not available" in text and "no-shared-data" in text
    assert sorted(p.name for p in NOTEBOOK.parent.iterdir()) == before  # no cache or output beside the notebook


def test_split_figure_has_a_class_legend_on_the_labels_panel():
    import numpy as np

    from hsi.preprocess import block_split
    from hsi.viz import plot_split

    labels = np.zeros((40, 40), dtype=np.int64)
    labels[:20, :20], labels[20:, 20:], labels[:20, 20:] = 1, 3, 2
    labels[0, 0] = 0
    split = block_split(labels, block_size=8, buffer=1, seed=0)
    fig = plot_split(split, labels=labels, class_names=["soil", "water", "trees"])
    legend = fig.axes[0].get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["soil (399)", "water (400)", "trees (400)"]
    unnamed = plot_split(split, labels=labels).axes[0].get_legend()
    assert [t.get_text() for t in unnamed.get_texts()][0] == "class 1 (399)"
