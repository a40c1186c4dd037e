"""What the one training run (:mod:`hsi.training.run`) asks of the kind of model it trains.

A run's steps are the same for every model: settle the settings, build the DataModule,
check the options, open the output folder, fit and evaluate on the test pixels, write the
reports and commit the folder. Only "fit and evaluate" (and a few checks and defaults)
depend on the model; a :class:`RunBackend` supplies them. The deep networks
(:class:`hsi.training.deep_run.DeepBackend`) and the classical baselines
(:class:`hsi.training.classical_run.ClassicalBackend`) implement it;
:func:`hsi.training.run.backend_for` picks one from the model name, the only place that
tells them apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hsi.data import HSIDataModule
from hsi.training.config import TrainConfig
from hsi.training.resume import ResumeState
from hsi.training.results import Evaluation

__all__ = ["Fitted", "RunBackend", "Settings"]


@dataclass
class Settings:
    """The settled arguments of a run: the DataModule's, the task's, the run options and any resume state.

    ``given_run`` names the run options given explicitly (those a resumed run restored
    included), ``resumed`` says what a resumed run restored and overrode
    (:func:`hsi.training.resume.restore_run`).
    """

    data: dict[str, Any]
    model: dict[str, Any]
    run: Any
    resume: ResumeState | None
    given_run: frozenset[str] = frozenset()
    resumed: dict[str, Any] | None = None


@dataclass
class Fitted:
    """What a backend's :meth:`RunBackend.fit` hands to the shared reports.

    Attributes
    ----------
    evaluation : Evaluation
        Test-pixel predictions of the chosen model (its ``checkpoint`` is the model file's
        final path).
    facts : dict
        Entries of ``metrics.json`` only this kind of model has (epochs and best
        validation OA of a network; the fitted parameters of a classical model).
    fit_seconds : float
        Time the fit took.
    """

    evaluation: Evaluation
    facts: dict[str, Any]
    fit_seconds: float


class RunBackend(Protocol):
    """One kind of model, as the run drives it."""

    def check(self, cfg: TrainConfig) -> None:
        """Refuse options this kind of model cannot take, before anything is read."""

    def recommend(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` with this model's recommended data settings (PCA, patch size) where none was given."""

    def announce(self) -> None:
        """Say the recommendations :meth:`recommend` applied (when training starts, never before an error)."""

    def build(self, settings: Settings, datamodule: HSIDataModule) -> None:
        """Build and check what the fit needs (a task, devices) before the output folder is opened."""

    def fit(self, settings: Settings, datamodule: HSIDataModule, out: Path) -> Fitted | None:
        """Fit on the set-up ``datamodule``, save the model in ``out``, evaluate it on the test pixels.

        Returns None on DDP ranks other than 0 (which write no reports).
        """
