"""``run_training``: one seeded training run from a :class:`TrainConfig`, for every kind of model.

The run is a sequence of steps with one job each, the same for a network and a classical
baseline: pick the model's :class:`~hsi.training.backend.RunBackend` (:func:`backend_for`,
the one place that tells them apart), settle the settings (a checkpoint's when resuming),
build the DataModule and what the fit needs (every option value is checked here, before
any scene file is read; only the model registry's recommendations, the PCA of 3-D models on
many bands, read the cube's band count first, from the header where the format allows),
open the output folder, fit and evaluate the chosen model on the test
pixels (the backend's step: :mod:`hsi.training.deep_run`,
:mod:`hsi.training.classical_run`), and write the reports (:mod:`hsi.training.results`),
all in a staging folder that is committed to the output folder, ``run.json`` last, once
the run has finished (:func:`hsi.training.outputs.run_folder`). A run that fails leaves
nothing; an interrupted one keeps ``last.ckpt`` for ``--resume``.
"""

from __future__ import annotations

import logging
import os
import time
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_only

from hsi._quiet import quiet_lightning
from hsi.classical import CLASSICAL_MODELS
from hsi.data import HSIDataModule
from hsi.training.backend import RunBackend, Settings
from hsi.training.classical_run import ClassicalBackend
from hsi.training.config import TrainConfig
from hsi.training.deep_run import DeepBackend
from hsi.training.outputs import run_folder
from hsi.training.resume import load_resume_state, reconcile, restore_run, resume_line
from hsi.training.results import write_reports
from hsi.transaction import Transaction

__all__ = ["run_training", "run_backend", "backend_for", "quiet_lightning", "Settings", "settle"]

log = logging.getLogger("hsi.training")

#: set by rank 0 for the processes Lightning's DDP launcher starts, so every rank uses one (staging) folder
OUT_ENV = "HSI_RUN_OUT"


def backend_for(model: str) -> RunBackend:
    """The run backend of ``model``: the one place that tells a classical baseline from a network."""
    if model in CLASSICAL_MODELS:
        return ClassicalBackend(model)
    return DeepBackend(model)


def settle(cfg: TrainConfig, backend: RunBackend | None = None) -> Settings:
    """The run's arguments: the given ones (with the backend's recommendations), or, when resuming, the
    checkpoint's (data, model and run options) with the ones given again on top, said in one line."""
    data, model, run = dict(cfg.data), dict(cfg.model), cfg.run
    if "seed" in cfg.given_run or not run.resume:
        data["seed"] = run.seed
    if not run.resume:
        data = (backend or backend_for(cfg.model_name)).recommend(data)
        return Settings(data, model, run, None, frozenset(cfg.given_run))
    state = load_resume_state(run.resume)
    data, model = reconcile(state, data, model)
    model.pop("max_epochs", None)  # the schedule follows the run's epochs (restored, or given again)
    run, resumed = restore_run(state, run, set(cfg.given_run))
    run = replace(run, seed=int(data.get("seed", run.seed)))
    log.warning(resume_line(resumed))
    given = frozenset({*state.given_run, *cfg.given_run, *resumed["restored"]})
    return Settings(data, model, run, state, given, resumed)


def open_folder(settings: Settings, scene: str, model: str) -> AbstractContextManager[Transaction]:
    """The run's output folder as a transaction (:func:`hsi.training.outputs.run_folder`); DDP ranks started by
    Lightning write into rank 0's staging folder."""
    started_by_lightning = os.environ.get("LOCAL_RANK", "0") != "0"
    inherited = (os.environ.get(OUT_ENV) or None) if started_by_lightning else None
    run = settings.run
    return run_folder(run.out, run.overwrite, scene=scene, model=model, seed=run.seed, inherited=inherited)


def build_datamodule(settings: Settings) -> HSIDataModule:
    """The run's DataModule (checked, nothing read yet); a resumed run reuses the checkpoint's split and pipeline."""
    datamodule = HSIDataModule(**{**settings.data, "predict_on": "test"})  # the reports cover the test pixels
    if settings.resume is not None and settings.resume.datamodule_state:
        datamodule.load_state_dict(settings.resume.datamodule_state)
    return datamodule


def run_training(cfg: TrainConfig) -> dict[str, Any]:
    """Train, test and report; returns the metrics written to ``metrics.json`` (empty on ranks other than 0)."""
    started = time.perf_counter()
    backend = backend_for(cfg.model_name)
    backend.check(cfg)
    settings = settle(cfg, backend)
    if settings.run.threads is not None:  # a resumed run's own, unless given again
        torch.set_num_threads(settings.run.threads)
    settings.model.setdefault("model", cfg.model_name)
    return run_backend(backend, settings, started)


def run_backend(backend: RunBackend, settings: Settings, started: float | None = None) -> dict[str, Any]:
    """The run steps of every model: DataModule, checks, output folder, fit and evaluation, reports, commit."""
    started = time.perf_counter() if started is None else started
    datamodule = build_datamodule(settings)
    backend.build(settings, datamodule)
    with open_folder(settings, datamodule.source.name, str(settings.model["model"])) as folder:
        if not folder.owner:  # a DDP rank other than 0: rank 0 commits
            return _fit_and_report(folder.path, backend, settings, datamodule, started)
        os.environ[OUT_ENV] = str(folder.path)  # for the DDP ranks Lightning starts
        result = _fit_and_report(folder.path, backend, settings, datamodule, started)
        folder.commit({"model": result.get("model"), "scene": result.get("scene")})
    return {**result, "out": str(folder.target)}


@rank_zero_only
def announce_scenes(datamodule: HSIDataModule) -> None:
    """Before training on several scenes: say how their bands were put on one grid, and check them for other units
    or shifted values (warnings; the records go into ``metrics.json``)."""
    from hsi.data.sources.bands import bands_line

    summary = datamodule.bands_summary()
    if summary is not None:
        logging.getLogger("hsi.data").warning(bands_line(summary))
        datamodule.scene_shift()


def _fit_and_report(out: Path, backend: RunBackend, settings: Settings, datamodule: HSIDataModule,
                    started: float) -> dict[str, Any]:
    L.seed_everything(settings.run.seed, workers=True, verbose=False)
    datamodule.prepare_data()
    datamodule.setup("fit")  # a resumed run's scene is checked against the checkpoint's split and classes here
    announce_scenes(datamodule)
    fitted = backend.fit(settings, datamodule, out)
    if fitted is None:  # a DDP rank other than 0: rank 0 reports
        return {}
    return write_reports(out, settings, datamodule, fitted.evaluation, fitted.facts,
                         timing={"fit_s": fitted.fit_seconds, "started": started})
