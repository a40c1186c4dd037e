"""A model trained from a label GeoTIFF names its classes as the file does: GDAL category names (QGIS), the tag
``hsi infer`` writes, or a names file beside it; in ``metrics.json`` and in the checkpoint."""

from __future__ import annotations

import json

import numpy as np
import pytest
import rasterio

from hsi.infer.checkpoint import load_checkpoint
from hsi.io import write_h5
from hsi.scenes import make_synthetic_scene

SCENE = {"height": 32, "width": 32, "bands": 10, "n_classes": 4, "seed": 1}
TRAIN = ["--model", "svm", "--block-size", "8", "--patch-size", "1", "--no-progress"]
NAMES = ["water", "bare soil", "grass", "trees"]


def _label_tif(tmp_path, how: str) -> None:
    """The scene's cube as ``cube.h5`` and its labels as ``gt.tif``, with the names stored ``how``."""
    scene = make_synthetic_scene(**SCENE)
    write_h5(tmp_path / "cube.h5", scene.cube.data, wavelengths=scene.cube.wavelengths)
    with rasterio.Env(), rasterio.open(tmp_path / "gt.tif", "w", driver="GTiff", width=32, height=32, count=1,
                                       dtype="uint8", crs="EPSG:32633",
                                       transform=rasterio.Affine(30, 0, 500000, 0, -30, 4000000)) as dst:
        dst.write(scene.labels.astype(np.uint8), 1)
        if how == "tag":  # as hsi infer writes it inside the .tif
            dst.update_tags(1, class_names=json.dumps(["Unclassified", *NAMES]))
    if how == "categories":  # GDAL's PAM sidecar, as QGIS and gdal_translate write category names
        cats = "".join(f"<Category>{n}</Category>" for n in ["", *NAMES])
        (tmp_path / "gt.tif.aux.xml").write_text(
            f'<PAMDataset><PAMRasterBand band="1"><CategoryNames>{cats}</CategoryNames></PAMRasterBand></PAMDataset>')
    if how == "names file":
        (tmp_path / "gt.tif.names").write_text("".join(f"{i} {n}\n" for i, n in enumerate(NAMES, start=1)))


@pytest.mark.parametrize("how", ["categories", "tag", "names file"])
def test_a_model_trained_from_a_label_geotiff_reports_its_class_names(how, hsi_main, tmp_path):
    _label_tif(tmp_path, how)
    status, _, err = hsi_main(["train", "--cube", "cube.h5", "--labels", "gt.tif", *TRAIN, "--out", "run"], tmp_path)
    assert status == 0, err
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["class_names"] == NAMES
    assert set(metrics["per_class"]) == set(NAMES)
    assert load_checkpoint(tmp_path / "run" / "model.npz").class_names == NAMES


def test_a_bad_names_file_is_one_error_line(hsi_main, tmp_path):
    _label_tif(tmp_path, "categories")
    (tmp_path / "gt.tif.names").write_text("1 water\n1 grass\n")
    status, _, err = hsi_main(["train", "--cube", "cube.h5", "--labels", "gt.tif", *TRAIN, "--out", "run"], tmp_path)
    assert status == 2
    assert "error: " in err and "gt.tif.names line 2: id 1 is given twice" in err
    assert "Traceback" not in err
