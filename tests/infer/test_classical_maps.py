"""``hsi infer`` from the ``model.npz`` of an svm / rf run: the model's own per-pixel prediction, every pixel."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hsi.classical import load_classical
from hsi.infer import infer_scene, load_checkpoint
from hsi.scenes.synthetic import make_synthetic_scene
from hsi.transaction import verify_manifest

SCENE = {"height": 24, "width": 24, "bands": 8, "n_classes": 3, "seed": 1}
TRAIN = ["--scene", "synthetic", "--scene-options", *(f"{k}={v}" for k, v in SCENE.items()), "--block-size", "6",
         "--no-progress"]
MAP_FILES = ("labels.npy", "confidence.npy", "map.png", "false_color.png", "confidence.png", "classification.hdr",
             "classification.img", "metrics.json", "inference.json")


@pytest.fixture(scope="module", params=["svm", "rf"])
def classical_run(request, tmp_path_factory) -> Path:
    """The output folder of ``hsi train --model svm|rf`` on the tiny synthetic scene."""
    import hsi.cli as cli

    out = tmp_path_factory.mktemp(request.param) / "run"
    assert cli.main(["train", *TRAIN, "--model", request.param, "--out", str(out)]) in (0, None)
    return out


def expected_map(run: Path, cube: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels ``1..K`` and confidence of the model's own ``predict_proba`` on the pipeline-transformed cube."""
    model = load_classical(run / "model.npz")
    pipeline = load_checkpoint(run / "model.npz").pipeline
    x = pipeline.transform(np.array(cube, dtype=np.float32)).astype(np.float32)
    probs = model.predict_proba(x.reshape(-1, x.shape[2])).astype(np.float32).reshape(*x.shape[:2], -1)
    return probs.argmax(axis=2) + 1, probs.max(axis=2)


def test_map_is_the_models_per_pixel_prediction(classical_run, hsi_main, tmp_path):
    out = tmp_path / "map"
    status, printed, err = hsi_main(["infer", "--checkpoint", str(classical_run / "model.npz"), "--scene", "synthetic",
                                     "--out", str(out), "--no-progress", "--tile", "7"], tmp_path)
    assert status == 0, err
    for name in MAP_FILES:
        assert (out / name).is_file(), name
    assert verify_manifest(out, "inference.json") == {}
    labels, confidence = np.load(out / "labels.npy"), np.load(out / "confidence.npy")
    want_labels, want_confidence = expected_map(classical_run, make_synthetic_scene(**SCENE).cube.data)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(confidence, want_confidence)


def test_test_pixel_metrics_are_those_training_reported(classical_run, tmp_path):
    result = infer_scene(classical_run / "model.npz", scene="synthetic", out=tmp_path / "map", progress=False)
    trained = json.loads((classical_run / "metrics.json").read_text())
    with np.load(classical_run / "predictions.npz") as pred:
        np.testing.assert_array_equal(result.labels[pred["rows"], pred["cols"]], pred["y_pred"])
        np.testing.assert_array_equal(result.confidence[pred["rows"], pred["cols"]], pred["probs"].max(axis=1))
    for key in ("oa", "aa", "kappa"):
        assert result.metrics["test"][key] == pytest.approx(trained[key], abs=1e-12)
    assert result.metrics["test"]["confusion"] == trained["confusion"]


def test_nodata_pixels_are_left_unclassified(classical_run, tmp_path):
    cube = np.array(make_synthetic_scene(**SCENE).cube.data, dtype=np.float32)
    hole = np.zeros(cube.shape[:2], dtype=bool)
    hole[5:11, 9:15] = True
    hole[0, 0] = True
    want_labels, want_confidence = expected_map(classical_run, cube)  # before the hole: the pixels' own spectra
    cube[hole] = np.nan
    cube[0, 0, 3] = np.inf  # one band is enough
    result = infer_scene(classical_run / "model.npz", cube, out=tmp_path / "map", tile=8, progress=False,
                         probabilities=True)
    assert result.nodata_pixels == int(hole.sum())
    assert (result.labels[hole] == 0).all() and (result.confidence[hole] == 0).all()
    assert (result.probabilities[hole] == 0).all()
    np.testing.assert_array_equal(result.labels[~hole], want_labels[~hole])
    np.testing.assert_array_equal(result.confidence[~hole], want_confidence[~hole])


def test_the_model_file_alone_is_enough(classical_run):
    model = load_checkpoint(classical_run / "model.npz")
    assert not model.dense and model.patch_size == 1 and model.halo == 0
    trained = json.loads((classical_run / "metrics.json").read_text())
    assert model.class_names == trained["class_names"] and model.num_bands_in == SCENE["bands"]
    assert model.scene_name == "synthetic" and model.scene_options == SCENE
    assert model.test_mask((SCENE["height"], SCENE["width"])).sum() == trained["split"]["test_pixels"]


def test_a_file_that_is_neither_is_refused_in_one_line(classical_run, hsi_main, tmp_path):
    bare = tmp_path / "bare.npz"
    load_classical(classical_run / "model.npz").save(bare)  # the model without the run's data state
    for path, words in ((classical_run / "predictions.npz", "neither"), (bare, "data state")):
        status, _, err = hsi_main(["infer", "--checkpoint", str(path), "--scene", "synthetic",
                                   "--out", str(tmp_path / "m")], tmp_path)
        assert status == 2 and err.startswith("error:") and len(err.strip().splitlines()) == 1, err
        assert str(path) in err and words in err
        assert not (tmp_path / "m").exists()
