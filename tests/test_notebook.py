"""The pictures people look at: the notebooks run anywhere and show their figures; the split map has a class legend.

Each notebook of docs/notebooks/ is executed from a copy in a folder outside the repository
(the kernel's working folder), with the kernel's temporary folder pointed at an empty folder
of its own: a notebook must find nothing of the repository, leave nothing behind in either
folder, and print no Lightning banners. The notebook tests need nbclient, nbformat and
ipykernel (the dev extra) and are skipped without them.
"""

from __future__ import annotations

import base64
import re
import shutil
from pathlib import Path

import pytest

from tests.helpers import CHILD_TIMEOUT

NOTEBOOKS = Path(__file__).resolve().parents[1] / "docs" / "notebooks"
#: what Lightning prints unless quietened (its banners, tips and checkpoint notes)
BANNERS = ("GPU available", "TPU available", "LOCAL_RANK", "Tip:", "litlogger", "`weights_only` was not set")


def _images(cell) -> list[bytes]:
    return [base64.b64decode(out["data"]["image/png"]) for out in cell.get("outputs", [])
            if out.get("output_type") in ("display_data", "execute_result") and "image/png" in out.get("data", {})]


def _run_copy(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[bytes], Path]:
    """Execute a copy of ``docs/notebooks/<name>`` in a folder outside the repository; its stdout text, its PNGs and
    the kernel's temporary folder. Checks that nothing is left in the copy's folder or the temporary folder and
    that nothing is written to stderr (no banners, tips or warnings)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    elsewhere, temp = tmp_path / "elsewhere", tmp_path / "tmp"
    elsewhere.mkdir()
    temp.mkdir()
    copy = Path(shutil.copy(NOTEBOOKS / name, elsewhere / name))
    monkeypatch.setenv("TMPDIR", str(temp))  # the kernel's tempfile.gettempdir(), empty before the run
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(copy, as_version=4)
    nbclient.NotebookClient(nb, timeout=CHILD_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(elsewhere)}}).execute()
    outputs = [out for c in nb.cells if c.cell_type == "code" for out in c.outputs]
    text = "".join(out.get("text", "") for out in outputs if out.get("name") == "stdout")
    stderr = "".join(out.get("text", "") for out in outputs if out.get("name") == "stderr")
    assert not [b for b in BANNERS if b in text + stderr], stderr
    assert stderr == ""  # quiet: the notebook's own lines only
    assert [p.name for p in elsewhere.iterdir()] == [name]  # nothing beside the notebook
    # its temporary folder removed; `import lightning` makes torch's per-user compile cache folder
    # (torchinductor_<user>: one for every run of the user, not one per run), which is not the notebook's
    assert [p.name for p in temp.iterdir() if not p.name.startswith("torchinductor_")] == []
    images = [img for c in nb.cells if c.cell_type == "code" for img in _images(c)]
    return text, images, temp


@pytest.mark.slow
def test_quickstart_runs_anywhere_and_shows_its_figures(tmp_path, monkeypatch):
    monkeypatch.setenv("HSI_SHARED_DATA", str(tmp_path / "no-shared-data"))  # the absent-data branch, plainly said
    text, images, temp = _run_copy("quickstart.ipynb", tmp_path, monkeypatch)
    assert f"working folder: {temp}" in text  # it worked in the temporary folder the test watched
    # false colour, spectra, split (with its class legend), whole-scene map
    assert len(images) >= 4 and all(img.startswith(b"\x89PNG") and len(img) > 5000 for img in images)
    assert "<Figure size" not in text  # figures are shown, not printed as their repr
    assert "LeakageWarning: random_split" in text  # the random split's warning, said as one plain line
    # the map's test-pixel OA is the one training scored on the same pixels
    mapped = re.search(r"test pixels: OA (\d\.\d+)", text).group(1)
    tested = re.search(r"trainer\.test: OA (\d\.\d+)", text).group(1)
    assert mapped == tested
    assert float(mapped) >= 0.9  # a model that learns: the first impression is a map that is right
    assert "Samson is not available" in text and "no-shared-data" in text
    assert "removed: True" in text


@pytest.mark.slow
@pytest.mark.shared
def test_quickstart_reads_samson_from_the_shared_data_folder(tmp_path, monkeypatch, shared_data):
    monkeypatch.setenv("HSI_SHARED_DATA", str(shared_data))
    text, images, _ = _run_copy("quickstart.ipynb", tmp_path, monkeypatch)
    assert "Samson is not available" not in text
    assert "['Rock', 'Tree', 'Water']" in text
    assert len(images) == 5  # the four synthetic figures and Samson's false colour


@pytest.mark.slow
def test_own_cube_notebook_maps_a_geotiff_into_map_coordinates(tmp_path, monkeypatch):
    text, images, temp = _run_copy("own-cube-to-gis.ipynb", tmp_path, monkeypatch)
    assert f"working folder: {temp}" in text
    # hsi inspect found the wavelengths in the band metadata and the georeference
    assert "GDAL band metadata 'wavelength'" in text
    assert "georeference: WGS 84 / UTM zone 33N (EPSG:32633); pixel 30 x 30" in text
    assert float(re.search(r"test pixels: OA (\d\.\d+)", text).group(1)) >= 0.9
    # the GeoTIFF map: the cube's CRS and transform, nodata 0, a colour table and the category names
    assert "CRS: EPSG:32633" in text
    assert "transform: (30.0, 0.0, 500000.0, 0.0, -30.0, 5500000.0)" in text
    assert "nodata: 0.0" in text
    assert re.search(r"colour table: \{0: \(0, 0, 0, 0\), 1: \(\d+, \d+, \d+, 255\)", text)
    assert "category names (labels.tif.aux.xml): ['Unclassified', 'class_1', 'class_2'" in text
    assert "sidecar beside the map: True" in text
    assert len(images) == 1 and images[0].startswith(b"\x89PNG") and len(images[0]) > 20000  # three map panels
    assert "removed: True" in text


def test_notebooks_are_stored_without_outputs():
    nbformat = pytest.importorskip("nbformat")
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code and all(not c.outputs and c.execution_count is None for c in code), path.name


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
