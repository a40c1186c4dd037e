"""The classical baselines (``hsi train --model svm|rf``) as a :class:`~hsi.training.backend.RunBackend`.

Same scene, split, train-fitted preprocessing, output folder rules and reports as a deep
run (the run steps are :mod:`hsi.training.run`'s, shared); the model is fitted on the
preprocessed centre-pixel spectra of the training pixels
(:meth:`hsi.data.HSIDataModule.pixel_spectra`, :mod:`hsi.classical`) and saved without
pickle as ``model.npz``, whose ``meta`` also holds the DataModule's arguments and state
(fitted pipeline, split, classes, palette, wavelengths), so ``hsi infer`` needs nothing
else (:mod:`hsi.infer.classical`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from hsi.classical import CLASSICAL_RUN_FORMAT, fit_classical
from hsi.data import HSIDataModule
from hsi.errors import OptionError
from hsi.training.backend import Fitted, Settings
from hsi.training.config import TrainConfig
from hsi.training.outputs import final_path
from hsi.training.results import Evaluation, jsonable

__all__ = ["CLASSICAL_RUN_FORMAT", "ClassicalBackend", "run_description"]


class ClassicalBackend:
    """An RBF-SVM or random forest on the preprocessed centre-pixel spectra, fitted in one go.

    Parameters
    ----------
    model : {"svm", "rf"}
        The classical model (:data:`hsi.classical.CLASSICAL_MODELS`).
    """

    def __init__(self, model: str) -> None:
        self.model = model

    def check(self, cfg: TrainConfig) -> None:
        """Refuse ``--resume`` (nothing to resume: the fit is one step) and network-only model options."""
        if cfg.run.resume:
            raise OptionError("resume", cfg.run.resume,
                              f"a checkpoint of a deep model ({self.model} is fitted in one go)")
        unused = sorted(set(cfg.model) - {"model", "model_options"})
        if unused:
            raise OptionError(unused[0], cfg.model[unused[0]], f"not an option of the classical model {self.model}")

    def recommend(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` unchanged: a classical model reads the preprocessing and split it is given."""
        return data

    def announce(self) -> None:
        """Nothing to say: :meth:`recommend` applies nothing."""

    def build(self, settings: Settings, datamodule: HSIDataModule) -> None:
        """Nothing to build before the fit (the options were checked by :meth:`check`)."""

    def fit(self, settings: Settings, datamodule: HSIDataModule, out: Path) -> Fitted:
        """Fit on the training pixels, save ``model.npz`` (with :func:`run_description`), predict the test pixels."""
        X, y, _ = datamodule.pixel_spectra("train")
        started = time.perf_counter()
        model = fit_classical(self.model, X, y, seed=settings.run.seed, num_classes=datamodule.num_classes,
                              **(settings.model.get("model_options") or {}))
        fit_seconds = time.perf_counter() - started
        model_path = model.save(out / "model.npz", run=run_description(datamodule, self.model))
        test_started = time.perf_counter()
        X_test, y_test, coords = datamodule.pixel_spectra("test")
        predict_started = time.perf_counter()
        probs = model.predict_proba(X_test).astype(np.float32)
        predict_seconds = time.perf_counter() - predict_started
        evaluation = Evaluation(coords=coords, y_true=y_test, y_pred=probs.argmax(axis=1), probs=probs,
                                best_epoch=None, checkpoint=str(final_path(model_path)),
                                seconds=time.perf_counter() - test_started, hparams=dict(settings.model),
                                predict_seconds=predict_seconds)
        return Fitted(evaluation, {"model_params": model.params_, "parameters": None}, fit_seconds)


def run_description(datamodule: HSIDataModule, model: str) -> dict[str, Any]:
    """What inference needs besides the fitted arrays: the DataModule's arguments and state.

    The state (:meth:`hsi.data.HSIDataModule.state_dict`) holds the fitted pipeline, the
    split, the class names, palette and label ids, the wavelengths and the band counts,
    as a deep checkpoint's does.
    """
    return {
        "format": CLASSICAL_RUN_FORMAT,
        "format_version": 1,
        "model": model,
        "datamodule_hyper_parameters": jsonable(dict(datamodule.hparams)),
        "HSIDataModule": datamodule.state_dict(),
    }
