"""``hsi train --model svm|rf`` through the real command: same outputs as a deep run, honest metrics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
)

REPORTS = ("metrics.json", "predictions.npz", "confusion.png", "split.png")
SCENE = ["--scene", "synthetic", "--scene-options", "height=32", "width=32", "bands=12", "n_classes=3"]


def _train(tmp_path: Path, model: str, *extra: str) -> Path:
    import hsi.cli as cli

    out = tmp_path / model
    argv = ["train", *SCENE, "--model", model, "--seed", "0", "--out", str(out),
            "--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra]
    assert cli.main(argv) in (0, None)
    return out


@pytest.fixture(scope="module")
def deep_run(tmp_path_factory) -> Path:
    return _train(tmp_path_factory.mktemp("deep"), "fcn", "--epochs", "1")


@pytest.fixture(scope="module", params=["svm", "rf"])
def classical_run(request, tmp_path_factory) -> tuple[str, Path]:
    return request.param, _train(tmp_path_factory.mktemp(request.param), request.param)


def test_classical_run_writes_what_a_deep_run_writes(classical_run, deep_run):
    model, out = classical_run
    for name in REPORTS:
        assert (out / name).is_file(), f"{model} run lacks {name}"
    deep_metrics = json.loads((deep_run / "metrics.json").read_text())
    metrics = json.loads((out / "metrics.json").read_text())
    shared = {"oa", "aa", "kappa", "per_class", "confusion", "class_names", "seed", "split", "scene"}
    assert shared <= set(deep_metrics) and shared <= set(metrics)
    assert metrics["model"] == model
    with np.load(out / "predictions.npz") as got, np.load(deep_run / "predictions.npz") as want:
        assert set(got.files) == set(want.files)
        np.testing.assert_array_equal(got["rows"], want["rows"])  # same split, same test pixels
        y_true, y_pred = got["y_true"], got["y_pred"]
        probs = got["probs"]
    assert probs.shape == (len(y_true), len(metrics["class_names"]))
    np.testing.assert_array_equal(probs.argmax(1) + 1, y_pred)  # ids 1..K as in the maps
    assert metrics["oa"] == pytest.approx(accuracy_score(y_true, y_pred), abs=1e-9)
    assert metrics["aa"] == pytest.approx(balanced_accuracy_score(y_true, y_pred), abs=1e-9)
    assert metrics["kappa"] == pytest.approx(cohen_kappa_score(y_true, y_pred), abs=1e-9)
    labels = list(range(1, len(metrics["class_names"]) + 1))
    np.testing.assert_array_equal(np.array(metrics["confusion"]), confusion_matrix(y_true, y_pred, labels=labels))
    assert 0.0 < metrics["oa"] < 1.0  # a real, imperfect classifier on this scene


def test_the_saved_model_loads_without_pickle(classical_run):
    from hsi.classical import load_classical

    model, out = classical_run
    saved = sorted(out.glob("*.npz"))
    models = [p for p in saved if p.name != "predictions.npz"]
    assert models, f"{model} run saved no model file in {out}"
    loaded = load_classical(models[0])
    assert loaded.kind == model and loaded.num_classes_ == 3


def test_both_kinds_of_run_commit_the_same_reports_through_one_path(classical_run, deep_run):
    """The run steps are shared: same reports, same ``run.json``; only the model file and a few facts differ."""
    from hsi.transaction import verify_manifest

    model, out = classical_run
    for folder, own in ((out, {"model.npz"}), (deep_run, {"best.ckpt", "last.ckpt", "curves.png"})):
        manifest = json.loads((folder / "run.json").read_text())
        assert manifest["status"] == "complete" and manifest["command"] == "hsi train"
        assert verify_manifest(folder, "run.json") == {}
        assert set(REPORTS) | own <= set(manifest["files"]), folder
    classical = json.loads((out / "metrics.json").read_text())
    deep = json.loads((deep_run / "metrics.json").read_text())
    assert set(deep) - set(classical) == {"epochs_trained", "start_epoch", "best_epoch", "best_val_oa", "ssl", "pretrain",
                                          "refit"}
    assert set(classical) - set(deep) == {"model_params"}
    assert classical["best_checkpoint"] == str(out / "model.npz")
    assert set(classical["config"]) == set(deep["config"]) and classical["config"]["resumed_from"] is None
