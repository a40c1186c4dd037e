"""``hsi train --model svm|rf``: a classical per-pixel baseline through the same run as a deep model.

Same scene, split, train-fitted preprocessing, output folder rules and reports as a deep
run (``metrics.json``, ``predictions.npz``, ``confusion.png``, ``split.png``); the model is
fitted on the centre-pixel spectra of the training pixels (:mod:`hsi.classical`) and saved
without pickle as ``model.npz``, beside ``model.json`` that holds the DataModule's
arguments and state (fitted pipeline, split, classes), so inference needs nothing else.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from hsi.data import HSIDataModule
from hsi.training.report import write_json_atomic
from hsi.training.results import Evaluation, base_metrics, finish, jsonable

__all__ = ["CLASSICAL_RUN_FORMAT", "centre_spectra", "run_classical"]

CLASSICAL_RUN_FORMAT = "hsi.classical-run"


def centre_spectra(datamodule: HSIDataModule, split: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X (N, C), y (N,), coords (N, 2))``: the preprocessed spectra of a split's pixels, 0-based labels."""
    dataset = getattr(datamodule, f"{split}_dataset")
    coords = np.asarray(dataset.coords, dtype=np.int64)
    pad = datamodule.patch_size // 2
    cube = datamodule._ensure_entry().load("cube")  # padded (H + 2 pad, W + 2 pad, C)
    X = np.asarray(cube[coords[:, 0] + pad, coords[:, 1] + pad, :], dtype=np.float32)
    return X, np.asarray(dataset.labels, dtype=np.int64), coords


def run_classical(settings: Any, started: float) -> dict[str, Any]:
    """Fit, evaluate and report a classical model; returns the metrics written to ``metrics.json``."""
    from hsi.classical import fit_classical
    from hsi.training.run import _open_folder, build_datamodule

    name = str(settings.model["model"])
    unused = sorted(set(settings.model) - {"model", "model_options"})
    if unused:
        from hsi.errors import OptionError

        raise OptionError(unused[0], settings.model[unused[0]], f"not an option of the classical model {name}")
    datamodule = build_datamodule(settings)
    folder = _open_folder(settings, datamodule.source.name, name)
    try:
        return _fit_and_report(folder.path, settings, datamodule, name, started, fit_classical)
    except KeyboardInterrupt:
        raise
    except BaseException:
        folder.discard()
        raise


def _fit_and_report(out: Path, settings: Any, datamodule: HSIDataModule, name: str, started: float,
                    fit_classical: Any) -> dict[str, Any]:
    datamodule.prepare_data()
    datamodule.setup("fit")
    X, y, _ = centre_spectra(datamodule, "train")
    fit_started = time.perf_counter()
    model = fit_classical(name, X, y, seed=settings.run.seed, num_classes=datamodule.num_classes,
                          **(settings.model.get("model_options") or {}))
    fit_seconds = time.perf_counter() - fit_started
    model_path = model.save(out / "model.npz")
    _write_run_file(out / "model.json", datamodule, name)
    test_started = time.perf_counter()
    X_test, y_test, coords = centre_spectra(datamodule, "test")
    probs = model.predict_proba(X_test).astype(np.float32)
    evaluation = Evaluation(coords=coords, y_true=y_test, y_pred=probs.argmax(axis=1), probs=probs, best_epoch=None,
                            checkpoint=str(Path(model_path).resolve()), seconds=time.perf_counter() - test_started,
                            hparams=dict(settings.model))
    metrics = base_metrics(datamodule, evaluation, name)
    metrics.update({
        "seed": settings.run.seed,
        "model_params": model.params_,
        "timing": {"fit_s": round(fit_seconds, 3), "test_s": round(evaluation.seconds, 3),
                   "total_s": round(time.perf_counter() - started, 3)},
        "config": {"data": jsonable(dict(datamodule.hparams)),
                   "model": evaluation.hparams, "run": settings.run.to_dict(), "resumed_from": None},
    })
    return finish(out, metrics, datamodule, evaluation)


def _write_run_file(path: Path, datamodule: HSIDataModule, name: str) -> None:
    """``model.json``: what inference needs besides ``model.npz`` (data arguments, fitted pipeline, classes)."""
    write_json_atomic(path, {
        "format": CLASSICAL_RUN_FORMAT,
        "format_version": 1,
        "model": name,
        "model_file": "model.npz",
        "datamodule_hyper_parameters": jsonable(dict(datamodule.hparams)),
        "HSIDataModule": datamodule.state_dict(),
    })
