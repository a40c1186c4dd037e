"""The pictures people look at: the notebooks run anywhere and show their figures; the split map has a class legend.

Each notebook of the top-level notebooks/ folder is executed from a copy in a folder outside the
repository (the kernel's working folder), with the kernel's temporary folder pointed at an empty
folder of its own: a notebook must find nothing of the repository, leave nothing behind in either
folder, print no Lightning banners, and show what its stored outputs show (the docs build shows
those outputs and executes nothing). A notebook interrupted in its training cell and then killed
leaves nothing behind either: a cell that writes files removes its folder itself. The notebook
tests need nbclient, nbformat and ipykernel (the dev extra) and are skipped without them.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import shutil
from pathlib import Path

import pytest

from tests.helpers import CHILD_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
#: what Lightning prints unless quietened (its banners, tips and checkpoint notes)
BANNERS = ("GPU available", "TPU available", "LOCAL_RANK", "Tip:", "litlogger", "`weights_only` was not set")


def _images(cell) -> list[bytes]:
    return [base64.b64decode(out["data"]["image/png"]) for out in cell.get("outputs", [])
            if out.get("output_type") in ("display_data", "execute_result") and "image/png" in out.get("data", {})]


def _shows(cell) -> tuple[int, bool]:
    """What a code cell shows: its number of PNGs, and whether it prints."""
    stdout = any(out.get("name") == "stdout" for out in cell.get("outputs", []))
    return len(_images(cell)), stdout


def _leftovers(temp: Path) -> list[str]:
    """What is in the kernel's temporary folder. ``import lightning`` makes torch's per-user compile cache folder
    (torchinductor_<user>: one for every run of the user, not one per run), which is not the notebook's."""
    return [p.name for p in temp.iterdir() if not p.name.startswith("torchinductor_")]


def _copy_elsewhere(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """Copy ``notebooks/<name>`` into an empty folder outside the repository and point the kernel's temporary
    folder at another empty one; the copy, its folder and the temporary folder."""
    elsewhere, temp = tmp_path / "elsewhere", tmp_path / "tmp"
    elsewhere.mkdir()
    temp.mkdir()
    copy = Path(shutil.copy(NOTEBOOKS / name, elsewhere / name))
    monkeypatch.setenv("TMPDIR", str(temp))  # the kernel's tempfile.gettempdir(), empty before the run
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return copy, elsewhere, temp


def _run_copy(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[bytes], Path]:
    """Execute a copy of ``notebooks/<name>`` in a folder outside the repository; its stdout text, its PNGs and
    the kernel's temporary folder. Checks that nothing is left in the copy's folder or the temporary folder, that
    nothing is written to stderr (no banners, tips or warnings), and that every cell shows what its stored outputs
    show (as many figures; printed text or none), except a cell that reads ``HSI_SHARED_DATA``, which shows what
    the machine holds."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    copy, elsewhere, temp = _copy_elsewhere(name, tmp_path, monkeypatch)
    nb = nbformat.read(copy, as_version=4)
    stored = [_shows(c) for c in nb.cells if c.cell_type == "code" and "HSI_SHARED_DATA" not in c.source]
    nbclient.NotebookClient(nb, timeout=CHILD_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(elsewhere)}}).execute()
    shown = [_shows(c) for c in nb.cells if c.cell_type == "code" and "HSI_SHARED_DATA" not in c.source]
    assert shown == stored, f"the stored outputs of {name} are stale: run python notebooks/store_outputs.py"
    outputs = [out for c in nb.cells if c.cell_type == "code" for out in c.outputs]
    text = "".join(out.get("text", "") for out in outputs if out.get("name") == "stdout")
    stderr = "".join(out.get("text", "") for out in outputs if out.get("name") == "stderr")
    assert not [b for b in BANNERS if b in text + stderr], stderr
    assert stderr == ""  # quiet: the notebook's own lines only
    assert [p.name for p in elsewhere.iterdir()] == [name]  # nothing beside the notebook
    assert _leftovers(temp) == []  # its temporary folders removed
    images = [img for c in nb.cells if c.cell_type == "code" for img in _images(c)]
    return text, images, temp


@pytest.mark.slow
def test_quickstart_runs_anywhere_and_shows_its_figures(tmp_path, monkeypatch):
    monkeypatch.setenv("HSI_SHARED_DATA", str(tmp_path / "no-shared-data"))  # the absent-data branch, plainly said
    text, images, _ = _run_copy("quickstart.ipynb", tmp_path, monkeypatch)
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
    text, images, _ = _run_copy("own-cube-to-gis.ipynb", tmp_path, monkeypatch)
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


#: a patched ``Trainer.fit`` that lists the kernel's temporary folder, then raises what Jupyter's "interrupt" raises
_INTERRUPT_FIT = """
import tempfile
from pathlib import Path

import lightning


def _interrupted_fit(*args, **kwargs):
    print("during fit:", sorted(p.name for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith("hsi-")))
    raise KeyboardInterrupt


lightning.Trainer.fit = _interrupted_fit
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_a_notebook_interrupted_while_training_and_killed_leaves_nothing(name, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    copy, elsewhere, temp = _copy_elsewhere(name, tmp_path, monkeypatch)
    nb = nbformat.read(copy, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(_INTERRUPT_FIT))
    # "immediate": the kernel is killed once the cell fails, so no exit handler of the kernel removes anything;
    # only what the interrupted cell itself does counts
    client = nbclient.NotebookClient(nb, timeout=CHILD_TIMEOUT, kernel_name="python3", shutdown_kernel="immediate",
                                     resources={"metadata": {"path": str(elsewhere)}})
    with pytest.raises(nbclient.exceptions.CellExecutionError) as failed:
        client.execute()
    assert failed.value.ename == "KeyboardInterrupt"
    text = "".join(out.get("text", "") for c in nb.cells if c.cell_type == "code" for out in c.outputs
                   if out.get("name") == "stdout")
    during = re.search(r"during fit: (\[.*\])", text)
    assert during and re.fullmatch(r"\['hsi-[\w-]+'\]", during.group(1)), text  # the cell's folder, while it ran
    assert _leftovers(temp) == []
    assert [p.name for p in elsewhere.iterdir()] == [name]


def _temporary_folders_outside_with(source: str) -> list[int]:
    """Lines of a cell that make a temporary folder other than as a ``with`` statement's context manager."""
    tree = ast.parse(source)
    managed = {id(item.context_expr) for node in ast.walk(tree) if isinstance(node, ast.With) for item in node.items}
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and id(node) not in managed
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("TemporaryDirectory", "mkdtemp")]


def test_every_temporary_folder_of_a_notebook_is_removed_by_the_cell_that_makes_it():
    nbformat = pytest.importorskip("nbformat")
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "code":
                assert not _temporary_folders_outside_with(cell.source), f"{path.name}, cell {i}: use `with`"
                assert ".cleanup()" not in cell.source, f"{path.name}, cell {i}"
    assert _temporary_folders_outside_with("import tempfile\nwork = tempfile.TemporaryDirectory()\n") == [2]


def test_notebooks_are_stored_with_small_outputs_of_one_run_from_the_top():
    # the docs show these outputs and execute nothing (docs/conf.py): python notebooks/store_outputs.py stores them
    nbformat = pytest.importorskip("nbformat")
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    assert [p.name for p in paths] == ["own-cube-to-gis.ipynb", "quickstart.ipynb"]
    for path in paths:
        assert path.stat().st_size < 600_000, path.name  # a few figures, not megabytes of them
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), path.name
        outputs = [out for c in code for out in c.outputs]
        assert not [out for out in outputs if out.output_type == "error" or out.get("name") == "stderr"], path.name
        assert not [c for c in code if "execution" in c.metadata], path.name  # no timing: a rerun changes only outputs


def test_every_notebook_has_a_docs_page_that_reads_it():
    links = {p.stem: json.loads(p.read_text(encoding="utf-8"))["path"] for p in (ROOT / "docs" / "notebooks").glob("*.nblink")}
    assert links == {p.stem: f"notebooks/{p.name}" for p in NOTEBOOKS.glob("*.ipynb")}
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert all(f"notebooks/{stem}\n" in index for stem in links)  # in the toctree


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
