"""``hsi infer`` on a checkpoint's own scene predicts exactly what ``hsi train`` reported on its test pixels.

For every registry model at two patch sizes; for the dense models (fcn, ssnet: receptive
radius 3) one of them is below the receptive field (3 < 7), where a dense pass would show
the network neighbours that training never did, so inference takes the patch-centre path.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from hsi.infer import infer_scene, load_checkpoint

SCENE = ["height=32", "width=28", "bands=16", "n_classes=3", "seed=2"]

#: model -> two patch sizes the model accepts (the first below a dense model's 7 x 7 receptive field)
PATCH_SIZES = {
    "ssnet": (3, 7),
    "fcn": (3, 7),
    "cnn2d": (3, 7),
    "cnn3d": (3, 5),
    "spectral1d": (1, 5),
    "hybridsn": (9, 11),
    "ssftt": (5, 7),
    "spectralformer": (3, 5),
    "spectralformer_pixel": (1, 3),
    "anyband": (3, 7),
}

CASES = [(model, p) for model, sizes in PATCH_SIZES.items() for p in sizes]


def test_every_registry_model_is_covered():
    from hsi.models import list_models

    assert set(PATCH_SIZES) == set(list_models())


@pytest.mark.parametrize(("model", "patch_size"), CASES, ids=[f"{m}-P{p}" for m, p in CASES])
def test_infer_reproduces_the_training_test_predictions(model, patch_size, tmp_path, monkeypatch, capsys):
    from hsi.cli import main

    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = main(["train", "--scene", "synthetic", "--scene-options", *SCENE, "--model", model,
                       "--patch-size", str(patch_size), "--block-size", "8", "--epochs", "1", "--batch-size", "32",
                       "--no-progress", "--out", str(run)])
    assert status == 0, capsys.readouterr().err
    ckpt = load_checkpoint(run / "best.ckpt")
    if model in ("fcn", "ssnet"):
        assert ckpt.dense == (patch_size >= 2 * ckpt.net.receptive_radius + 1)
    result = infer_scene(ckpt, scene="synthetic", tile=8, accelerator="cpu", progress=False)
    pred = np.load(run / "predictions.npz")
    assert pred["rows"].size > 0
    np.testing.assert_array_equal(result.labels[pred["rows"], pred["cols"]], pred["y_pred"])
    trained = json.loads((run / "metrics.json").read_text())
    assert result.metrics["test"]["oa"] == pytest.approx(trained["oa"], abs=0)
    assert result.metrics["test"]["kappa"] == pytest.approx(trained["kappa"], abs=1e-12)
