"""``run_training``: one seeded, resumable training run from a :class:`TrainConfig`.

The run is a sequence of steps with one job each: settle the settings (a checkpoint's
when resuming), build the DataModule, the task and the trainer (every option is checked
here, before any file is read), open the output folder, fit with early stopping and
best/last checkpoints, evaluate the best checkpoint on the test pixels, and write the
reports (:mod:`hsi.training.results`). A run that fails removes the folder it
created; an interrupted one keeps ``last.ckpt`` for ``--resume``.
"""

from __future__ import annotations

import inspect
import logging
import os
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger

from hsi.data import HSIDataModule
from hsi.errors import OptionError
from hsi.training.config import TrainConfig
from hsi.training.outputs import RunFolder, open_run_folder
from hsi.training.resume import ResumeState, load_resume_state, reconcile
from hsi.training.task import HSIClassifier

__all__ = ["run_training", "quiet_lightning", "Settings", "settle"]

log = logging.getLogger("hsi.training")

#: set by rank 0 for the processes Lightning's DDP launcher starts, so every rank uses one folder
OUT_ENV = "HSI_RUN_OUT"


class _NoTips(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "Tip:" not in str(record.msg)


def quiet_lightning(level: int = logging.INFO) -> None:
    """Drop Lightning's advertising lines ("Tip: try litlogger..."); keep messages at ``level`` and up."""
    for name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero"):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        if not any(isinstance(f, _NoTips) for f in logger.filters):
            logger.addFilter(_NoTips())


@dataclass
class Settings:
    """The settled arguments of a run: the DataModule's, the task's, the run options and any resume state."""

    data: dict[str, Any]
    model: dict[str, Any]
    run: Any
    resume: ResumeState | None


def settle(cfg: TrainConfig) -> Settings:
    """The run's arguments: the given ones, on top of the checkpoint's when resuming."""
    data, model, run = dict(cfg.data), dict(cfg.model), cfg.run
    if "seed" in cfg.given_run or not run.resume:
        data["seed"] = run.seed
    state = None
    if run.resume:
        state = load_resume_state(run.resume)
        data, model = reconcile(state, data, model)
        model.pop("max_epochs", None)  # the schedule follows this run's --epochs
        run = replace(run, seed=int(data.get("seed", run.seed)))
    else:
        if "pca" not in data:
            data = apply_recommended_pca(data, cfg.model_name)
        if "patch_size" not in data:
            data = apply_recommended_patch_size(data, cfg.model_name)
    return Settings(data, model, run, state)


def raw_band_count(data: dict[str, Any]) -> int:
    """Bands of the run's cube before preprocessing; read from the header where the format allows."""
    from hsi.data.scene_source import load_source
    from hsi.scenes.synthetic import make_synthetic_scene

    probe = HSIDataModule(**data)
    source = probe.source
    if source.kind == "files":
        from hsi.io import open_cube

        with open_cube(source.cube_path, key=source.cube_key, layout=source.layout) as cube:
            return int(cube.shape[2])
    if source.kind == "synthetic":
        default = inspect.signature(make_synthetic_scene).parameters["bands"].default
        return int(source.scene_options.get("bands", default))
    return int(load_source(source).cube.shape[2])


def apply_recommended_pca(data: dict[str, Any], model: str) -> dict[str, Any]:
    """``data`` with the registry's recommended PCA for ``model`` (3-D models on many raw bands), said on stderr."""
    from hsi.classical import CLASSICAL_MODELS
    from hsi.models import get_model_class, recommended_pca

    if model in CLASSICAL_MODELS or getattr(get_model_class(model), "RECOMMENDED_PCA", None) is None:
        return data
    bands = raw_band_count(data)
    components = recommended_pca(model, bands)
    if components is None:
        return data
    log.warning("%s on %d raw bands: applying PCA to %d components fitted on the training pixels, as the model "
                "registry recommends (3-D convolutions over every band are slow); give --pca none to keep them all",
                model, bands, components)
    return {**data, "pca": components}


def apply_recommended_patch_size(data: dict[str, Any], model: str) -> dict[str, Any]:
    """``data`` with the registry's patch size for ``model`` (the window it reads, e.g. 1 for spectral1d), said on stderr."""
    from hsi.classical import CLASSICAL_MODELS
    from hsi.models import recommended_patch_size

    size = None if model in CLASSICAL_MODELS else recommended_patch_size(model)
    if size is None:
        return data
    log.warning("%s reads %dx%d patches: using patch size %d (and its split buffer) as the model registry "
                "recommends; give --patch-size to change it", model, size, size, size)
    return {**data, "patch_size": size}


def check_devices(run: Any) -> None:
    """Build a bare trainer so a bad accelerator, device list or strategy fails before any work."""
    from lightning.fabric.utilities.exceptions import MisconfigurationException

    loggers = [logging.getLogger(n) for n in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero")]
    levels = [lg.level for lg in loggers]
    try:
        for lg in loggers:  # this trainer is a check only: no "GPU available" lines from it
            lg.setLevel(logging.WARNING)
        L.Trainer(accelerator=run.accelerator, devices=run.lightning_devices, strategy=run.strategy, logger=False,
                  enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    except (MisconfigurationException, ValueError, RuntimeError) as err:
        option = "accelerator"
        text = str(err)
        if "strateg" in text.lower():
            option = "strategy"
        elif "device" in text.lower() and "accelerator" not in text.lower():
            option = "devices"
        value = {"accelerator": run.accelerator, "devices": run.devices, "strategy": run.strategy}[option]
        raise OptionError(option, value, " ".join(text.split())) from err
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def make_trainer(run: Any, out: Path) -> tuple[L.Trainer, ModelCheckpoint, ModelCheckpoint]:
    """The fitting trainer: early stopping on val OA, ``best.ckpt`` and ``last.ckpt`` in ``out``, CSV logs."""
    best = ModelCheckpoint(dirpath=out, filename="best", monitor="val_oa", mode="max", save_top_k=1,
                           enable_version_counter=False)
    last = ModelCheckpoint(dirpath=out, filename="last", monitor=None, save_top_k=1, save_on_exception=True,
                           enable_version_counter=False)
    trainer = L.Trainer(
        max_epochs=run.epochs, accelerator=run.accelerator, devices=run.lightning_devices, strategy=run.strategy,
        deterministic=True, logger=CSVLogger(save_dir=out, name="logs"), enable_progress_bar=run.progress,
        enable_model_summary=False, log_every_n_steps=10, num_sanity_val_steps=0,
        callbacks=[best, last, EarlyStopping(monitor="val_oa", mode="max", patience=run.patience)],
    )
    return trainer, best, last


def _open_folder(settings: Settings, scene: str, model: str) -> RunFolder:
    inherited = os.environ.get(OUT_ENV)
    if inherited and os.environ.get("LOCAL_RANK", "0") != "0":  # a DDP rank started by Lightning
        return RunFolder(Path(inherited), False)
    run = settings.run
    folder = open_run_folder(run.out, run.overwrite, scene=scene, model=model, seed=run.seed)
    os.environ[OUT_ENV] = str(folder.path)
    return folder


def _fit(trainer: L.Trainer, task: HSIClassifier, datamodule: HSIDataModule, resume: str | None, last: Path) -> float:
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*does not have many workers.*")
        warnings.filterwarnings("ignore", message="Checkpoint directory .* exists and is not empty")
        try:
            trainer.fit(task, datamodule=datamodule, ckpt_path=resume)
        except SystemExit:  # Lightning exits after saving on Ctrl-C; say where the state went
            if not trainer.interrupted:
                raise
    if trainer.interrupted:
        raise KeyboardInterrupt(f"training stopped; its state is in {last} (continue with --resume {last})")
    return time.perf_counter() - started


def leave_process_group() -> None:
    """End a DDP process group once fitting is over, so single-process evaluation cannot wait on other ranks."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


def build_datamodule(settings: Settings) -> HSIDataModule:
    """The run's DataModule (checked, nothing read yet); a resumed run reuses the checkpoint's split and pipeline."""
    datamodule = HSIDataModule(**{**settings.data, "predict_on": "test"})  # the reports cover the test pixels
    if settings.resume is not None and settings.resume.datamodule_state:
        datamodule.load_state_dict(settings.resume.datamodule_state)
    return datamodule


def run_training(cfg: TrainConfig) -> dict[str, Any]:
    """Train, test and report; returns the metrics written to ``metrics.json`` (empty on ranks other than 0)."""
    from hsi.classical import CLASSICAL_MODELS

    started = time.perf_counter()
    if cfg.run.threads is not None:
        torch.set_num_threads(cfg.run.threads)
    name = cfg.model_name
    if name in CLASSICAL_MODELS and cfg.run.resume:
        raise OptionError("resume", cfg.run.resume, f"a checkpoint of a deep model ({name} is fitted in one go)")
    settings = settle(cfg)
    name = str(settings.model.get("model", name))
    settings.model.setdefault("model", name)
    if name in CLASSICAL_MODELS:
        from hsi.training.classical_run import run_classical

        return run_classical(settings, started)
    datamodule = build_datamodule(settings)
    task = HSIClassifier(**settings.model)
    check_devices(settings.run)
    folder = _open_folder(settings, datamodule.source.name, name)
    try:
        return _train_in(folder.path, settings, datamodule, task, started)
    except KeyboardInterrupt:
        raise
    except BaseException:
        folder.discard()
        raise


def _train_in(out: Path, settings: Settings, datamodule: HSIDataModule, task: HSIClassifier, started: float) -> dict[str, Any]:
    from hsi.training.results import evaluate, write_reports

    run = settings.run
    L.seed_everything(run.seed, workers=True, verbose=False)
    datamodule.prepare_data()
    datamodule.setup("fit")  # a resumed run's scene is checked against the checkpoint's split and classes here
    trainer, best, last = make_trainer(run, out)
    fit_seconds = _fit(trainer, task, datamodule, run.resume, out / "last.ckpt")
    leave_process_group()  # evaluation below runs in rank 0 alone
    if not trainer.is_global_zero:
        return {}
    best_path = best.best_model_path or last.last_model_path
    evaluation = evaluate(best_path, datamodule, run.accelerator)
    return write_reports(out, settings, datamodule, trainer, best, evaluation,
                         timing={"fit_s": fit_seconds, "started": started})
