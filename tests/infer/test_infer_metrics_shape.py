"""``hsi infer``'s metrics.json has the shape of ``hsi train``'s: per-class scores keyed by class name."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hsi.infer.metrics import map_metrics

NAMES = ["water", "trees", "soil"]


def test_per_class_and_support_are_mappings_by_class_name():
    truth = np.array([[1, 1, 2, 2], [1, 2, 0, 0]])  # no "soil" pixel
    predicted = np.array([[1, 2, 2, 2], [1, 2, 3, 3]])
    scores = map_metrics(truth, predicted, NAMES, test_mask=None)["labeled"]
    assert scores["per_class"] == {"water": pytest.approx(2 / 3), "trees": 1.0, "soil": None}
    assert scores["support"] == {"water": 3, "trees": 3, "soil": 0}


def test_a_class_without_training_pixels_is_null_and_counted_apart():
    truth = np.array([[1, 2, 3, 3]])
    predicted = np.array([[1, 1, 3, 2]])
    scores = map_metrics(truth, predicted, NAMES, test_mask=None, trained=["water", "trees"])["labeled"]
    assert scores["per_class"] == {"water": 1.0, "trees": 0.0, "soil": None}
    assert scores["unseen_pixels"] == 2


def test_infer_metrics_json_matches_the_training_metrics_json(tmp_path, hsi_main):
    scene = ["--scene", "synthetic", "--scene-options", "height=24", "width=24", "bands=8", "n_classes=3", "seed=1"]
    code, _, err = hsi_main(["train", *scene, "--model", "spectral1d", "--block-size", "6", "--epochs", "1",
                             "--no-progress", "--out", "run"], tmp_path)
    assert code == 0, err
    code, _, err = hsi_main(["infer", "--checkpoint", "run/best.ckpt", "--out", "map", "--accelerator", "cpu",
                             "--no-progress"], tmp_path)
    assert code == 0, err
    trained = json.loads((tmp_path / "run" / "metrics.json").read_text())
    inferred = json.loads((tmp_path / "map" / "metrics.json").read_text())["test"]
    assert list(inferred["per_class"]) == list(trained["per_class"]) == trained["class_names"]
    assert inferred["per_class"] == pytest.approx(trained["per_class"])
    assert inferred["support"] == trained["support"]
