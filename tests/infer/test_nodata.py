"""No-data pixels end to end: never classified, counted, drawn and declared; an all-no-data cube is refused."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from hsi.errors import NoDataError
from hsi.infer import infer_scene, load_checkpoint
from hsi.viz import NODATA_COLOR, class_map_rgb

#: a 10 x 10 block of no-data pixels (a cloud mask) away from the borders
HOLE = (slice(8, 18), slice(6, 16))


def _holed(scene, value=np.nan):
    cube = np.array(scene.cube.data, dtype=np.float32)
    cube[HOLE] = value
    return cube


@pytest.mark.parametrize("ckpt", ["cnn_ckpt", "fcn_ckpt", "spectral_ckpt"])
def test_nodata_pixels_are_never_classified(ckpt, scene, tmp_path, request):
    path = request.getfixturevalue(ckpt)
    cube = _holed(scene)
    cube[3, 4, 2] = np.inf  # one band is enough
    result = infer_scene(path, cube, out=tmp_path / "out", tile=8, accelerator="cpu", progress=False,
                         probabilities=True)
    hole = np.zeros(scene.labels.shape, dtype=bool)
    hole[HOLE] = True
    hole[3, 4] = True
    labels, conf = np.load(tmp_path / "out" / "labels.npy"), np.load(tmp_path / "out" / "confidence.npy")
    probs = np.load(tmp_path / "out" / "probabilities.npy")
    assert (labels[hole] == 0).all() and (conf[hole] == 0).all() and (probs[hole] == 0).all()
    assert (labels[~hole] >= 1).all() and (conf[~hole] > 0).all()
    manifest = json.loads((tmp_path / "out" / "inference.json").read_text())
    assert manifest["nodata_pixels"] == int(hole.sum()) == result.nodata_pixels
    header = (tmp_path / "out" / "classification.hdr").read_text()
    assert "data ignore value = 0" in header


def test_neighbours_of_nodata_use_the_training_fill(cnn_ckpt, scene):
    """Valid pixels see their no-data neighbours as the training median, as in training."""
    from hsi.preprocess.fill import NonFiniteFill

    model = load_checkpoint(cnn_ckpt)
    fill = next(step for step in model.pipeline.steps if isinstance(step, NonFiniteFill)).fill_values_
    holed = infer_scene(model, _holed(scene), tile=8, accelerator="cpu", progress=False)
    cube = _holed(scene)
    cube[HOLE] = fill.astype(np.float32)
    filled = infer_scene(model, cube, tile=8, accelerator="cpu", progress=False)
    valid = np.ones(scene.labels.shape, dtype=bool)
    valid[HOLE] = False
    np.testing.assert_array_equal(holed.labels[valid], filled.labels[valid])
    np.testing.assert_allclose(holed.confidence[valid], filled.confidence[valid], rtol=1e-5)


def test_all_nodata_cube_is_an_error_and_writes_nothing(cnn_ckpt, scene, tmp_path):
    cube = np.full(scene.cube.data.shape, np.nan, dtype=np.float32)
    with pytest.raises(NoDataError, match="all 1080 pixels are no-data"):
        infer_scene(cnn_ckpt, cube, out=tmp_path / "out", tile=8, accelerator="cpu", progress=False)
    left = [p.name for p in (tmp_path / "out").iterdir()] if (tmp_path / "out").exists() else []
    assert not any(name.endswith((".npy", ".png", ".json", ".hdr", ".img")) for name in left), left
    assert not any(".partial" in name for name in left), left


def test_all_nodata_cube_on_the_command_line(cnn_ckpt, scene, tmp_path, capsys):
    from hsi.cli import main

    path = tmp_path / "nan.npy"
    np.save(path, np.full(scene.cube.data.shape, np.nan, dtype=np.float32))
    status = main(["infer", "--checkpoint", str(cnn_ckpt), "--cube", str(path), "--out", str(tmp_path / "out"),
                   "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith("error:") and "no-data" in err


def test_hdf5_nodata_attribute_is_no_data(cnn_ckpt, scene, tmp_path):
    """A declared ``nodata`` (or ``_FillValue``) attribute marks no-data pixels as ENVI's data ignore value does."""
    cube = np.array(scene.cube.data, dtype=np.float32)
    cube[HOLE] = -9999.0
    for attr in ("nodata", "_FillValue"):
        path = tmp_path / f"{attr}.h5"
        with h5py.File(path, "w") as f:
            ds = f.create_dataset("cube", data=cube)
            ds.attrs["layout"] = "HWC"
            ds.attrs[attr] = -9999.0
        result = infer_scene(cnn_ckpt, path, tile=8, accelerator="cpu", progress=False)
        assert result.nodata_pixels == 100
        assert (result.labels[HOLE] == 0).all()


def test_metrics_leave_nodata_pixels_out(cnn_ckpt, scene):
    result = infer_scene(cnn_ckpt, _holed(scene), labels=scene.labels, tile=8, accelerator="cpu", progress=False)
    labeled_in_hole = int((scene.labels[HOLE] > 0).sum())
    assert labeled_in_hole > 0
    labeled = result.metrics["labeled"]
    assert labeled["excluded_nodata"] == labeled_in_hole
    assert labeled["pixels"] == int((scene.labels > 0).sum()) - labeled_in_hole


def test_map_draws_nodata_in_its_own_colour():
    labels = np.array([[1, 2], [0, 1]])
    palette = np.array([[0, 0, 0], [10, 20, 30], [40, 50, 60]], dtype=np.uint8)
    rgb = class_map_rgb(labels, palette, nodata=labels == 0)
    assert tuple(rgb[1, 0]) == NODATA_COLOR
    assert tuple(rgb[0, 1]) == (40, 50, 60)
    assert all(tuple(row) != NODATA_COLOR for row in palette)
