"""The one training run drives any :class:`~hsi.training.backend.RunBackend`; one place picks it from the model name."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from hsi.training.backend import Fitted, Settings
from hsi.training.classical_run import ClassicalBackend
from hsi.training.deep_run import DeepBackend
from hsi.training.options import RunOptions
from hsi.training.results import Evaluation
from hsi.training.run import backend_for, run_backend

SCENE = {"scene": "synthetic", "scene_options": {"height": 24, "width": 24, "bands": 8, "n_classes": 3, "seed": 1},
         "block_size": 6, "seed": 0}


class MajorityBackend:
    """A stand-in model: every test pixel gets the most frequent training class."""

    def check(self, cfg) -> None:
        pass

    def recommend(self, data):
        return data

    def build(self, settings, datamodule) -> None:
        self.built = True

    def fit(self, settings, datamodule, out: Path) -> Fitted:
        _, y, _ = datamodule.pixel_spectra("train")
        majority = int(np.bincount(y).argmax())
        (out / "model.npz").write_bytes(b"majority")  # the model file, committed with the reports
        _, y_test, coords = datamodule.pixel_spectra("test")
        probs = np.zeros((len(y_test), datamodule.num_classes), dtype=np.float32)
        probs[:, majority] = 1.0
        evaluation = Evaluation(coords=coords, y_true=y_test, y_pred=probs.argmax(1), probs=probs, best_epoch=None,
                                checkpoint=str(out / "model.npz"), seconds=0.0, hparams=dict(settings.model))
        return Fitted(evaluation, {"majority_class": majority}, fit_seconds=0.0)


def test_any_backend_gets_every_report_and_the_manifest(tmp_path):
    from hsi.transaction import verify_manifest

    out = tmp_path / "run"
    backend = MajorityBackend()
    settings = Settings(data=dict(SCENE), model={"model": "majority"}, run=RunOptions(out=str(out), progress=False),
                        resume=None)
    result = run_backend(backend, settings, time.perf_counter())
    assert backend.built and result["out"] == str(out)
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "complete" and manifest["model"] == "majority"
    assert {"metrics.json", "predictions.npz", "confusion.png", "split.png", "model.npz"} <= set(manifest["files"])
    assert verify_manifest(out, "run.json") == {}
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["model"] == "majority" and metrics["majority_class"] == result["majority_class"]
    assert {"oa", "aa", "kappa", "confusion", "split", "timing", "config"} <= set(metrics)
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


def test_one_place_tells_classical_from_deep():
    assert isinstance(backend_for("svm"), ClassicalBackend) and isinstance(backend_for("rf"), ClassicalBackend)
    for name in ("cnn2d", "fcn", "spectral1d", "hybridsn"):
        assert isinstance(backend_for(name), DeepBackend)
    training = Path(__file__).resolve().parents[2] / "hsi" / "training"
    branches = {p.name: p.read_text().count("in CLASSICAL_MODELS") for p in training.glob("*.py")}
    assert {name: n for name, n in branches.items() if n} == {"run.py": 1}
