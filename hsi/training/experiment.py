"""``run_training``: one seeded, resumable training run from a ``TrainConfig``.

It builds the DataModule and the task, fits with early stopping and best/last
checkpoints, tests the best checkpoint, predicts the test pixels, and writes every
artefact into the output folder (see ``scripts/train.py --help``).
"""

from __future__ import annotations

import logging
import time
import warnings
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger

import hsi
from hsi.data import HSIDataModule
from hsi.errors import HSIError
from hsi.training.config import TrainConfig
from hsi.training.report import (
    format_summary,
    plot_confusion,
    plot_curves,
    read_epoch_history,
    write_json_atomic,
)
from hsi.training.task import HSIClassifier

log = logging.getLogger("hsi.training")

DATAMODULE_KEY = "HSIDataModule"


class CheckpointError(HSIError, ValueError):
    """A ``--resume`` checkpoint that cannot be read."""


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


def build_datamodule(cfg: TrainConfig, cache_dir: str | Path | None = None) -> HSIDataModule:
    """The DataModule described by ``cfg`` (nothing is loaded until ``prepare_data``)."""
    kwargs: dict[str, Any] = dict(
        scene=None if cfg.cube else cfg.scene,
        root=cfg.root,
        cube_path=cfg.cube,
        labels_path=cfg.labels,
        cube_key=cfg.cube_key,
        labels_key=cfg.labels_key,
        scene_options={**cfg.scene_options, **({"download": True} if cfg.download else {})} or None,
        scaling=cfg.scaling,
        pca=_int_if_whole(cfg.pca),
        split=cfg.split,
        test_labels_path=cfg.test_labels,
        test_labels_key=cfg.test_labels_key,
        buffer=cfg.buffer,
        split_seed=cfg.seed,
        patch_size=cfg.patch_size,
        batch_size=cfg.batch_size,
        num_workers=cfg.num_workers,
        persistent_workers=cfg.num_workers > 0,
        cache_dir=str(cfg.cache_dir or cache_dir) if (cfg.cache_dir or cache_dir) else None,
        gather_on_device=cfg.gather_on_device,
        predict_on="test",
        seed=cfg.seed,
    )
    if cfg.block_size is not None:
        kwargs["block_size"] = cfg.block_size
    if cfg.fractions is not None:
        kwargs["fractions"] = tuple(cfg.fractions)
    return HSIDataModule(**kwargs)


def _int_if_whole(value: float | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() and value >= 1 else float(value)


def _devices(value: str) -> int | str | list[int]:
    if value.isdigit():
        return int(value)
    if "," in value:
        return [int(v) for v in value.split(",") if v.strip()]
    return value


def _resolve_out(cfg: TrainConfig) -> Path:
    out = Path(cfg.out) if cfg.out else cfg.default_out()
    out.mkdir(parents=True, exist_ok=True)
    return out


def run_training(cfg: TrainConfig) -> dict[str, Any]:
    """Train, test and report; returns the metrics written to ``metrics.json``."""
    started = time.perf_counter()
    out = _resolve_out(cfg)
    L.seed_everything(cfg.seed, workers=True, verbose=False)

    datamodule = build_datamodule(cfg, cache_dir=out / "cache")
    resume_state = None
    if cfg.resume:
        resume_state = _load_resume_state(cfg.resume)
        if DATAMODULE_KEY in resume_state:
            datamodule.load_state_dict(resume_state[DATAMODULE_KEY])
    datamodule.prepare_data()
    datamodule.setup("fit")

    task = HSIClassifier(
        model=cfg.model,
        num_bands=datamodule.num_bands,
        num_classes=datamodule.num_classes,
        patch_size=cfg.patch_size,
        lr=cfg.lr,
        weight_decay=cfg.weight_decay,
        optimizer=cfg.optimizer,
        scheduler=cfg.scheduler,
        max_epochs=cfg.epochs,
        label_smoothing=cfg.label_smoothing,
        class_names=list(datamodule.class_names),
    )

    best_ckpt = ModelCheckpoint(
        dirpath=out, filename="best", monitor="val_oa", mode="max", save_top_k=1,
        enable_version_counter=False,
    )
    last_ckpt = ModelCheckpoint(
        dirpath=out, filename="last", monitor=None, save_top_k=1, save_on_exception=True,
        enable_version_counter=False,
    )
    callbacks = [best_ckpt, last_ckpt, EarlyStopping(monitor="val_oa", mode="max", patience=cfg.patience)]
    trainer = L.Trainer(
        max_epochs=cfg.epochs,
        accelerator=cfg.accelerator,
        devices=_devices(str(cfg.devices)),
        strategy=cfg.strategy,
        deterministic=True,
        callbacks=callbacks,
        logger=CSVLogger(save_dir=out, name="logs"),
        enable_progress_bar=cfg.progress,
        enable_model_summary=False,
        log_every_n_steps=10,
        num_sanity_val_steps=0,
    )
    start_epoch = int(resume_state.get("epoch", -1)) + 1 if resume_state else 0
    fit_started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*does not have many workers.*")
        # The output folder is ours: it holds the cache and logs beside the checkpoints.
        warnings.filterwarnings("ignore", message="Checkpoint directory .* exists and is not empty")
        try:
            trainer.fit(task, datamodule=datamodule, ckpt_path=cfg.resume)
        except SystemExit:  # Lightning exits after saving on Ctrl-C; say where the state went
            if not trainer.interrupted:
                raise
    fit_seconds = time.perf_counter() - fit_started
    if trainer.interrupted:
        last = Path(last_ckpt.dirpath or out) / "last.ckpt"
        raise KeyboardInterrupt(f"training stopped; its state is in {last} (continue with --resume {last})")
    _leave_process_group()  # evaluation below runs in rank 0 alone
    if not trainer.is_global_zero:
        return {}

    best_path = best_ckpt.best_model_path or last_ckpt.last_model_path
    test_started = time.perf_counter()
    best = HSIClassifier.load_from_checkpoint(best_path, weights_only=False)
    eval_trainer = L.Trainer(
        accelerator=cfg.accelerator, devices=1, logger=False, enable_progress_bar=False,
        enable_model_summary=False, deterministic=True,
    )
    eval_trainer.test(best, datamodule=datamodule, verbose=False)
    probs = torch.cat(eval_trainer.predict(best, datamodule=datamodule)).numpy()
    test_seconds = time.perf_counter() - test_started

    coords, y_true = datamodule.predict_dataset.coords, datamodule.predict_dataset.labels
    y_pred = probs.argmax(axis=1)
    np.savez_compressed(
        out / "predictions.npz", rows=coords[:, 0], cols=coords[:, 1], y_true=y_true, y_pred=y_pred, probs=probs.astype(np.float32)
    )

    scores = best.test_scores
    names = list(datamodule.class_names)
    metrics: dict[str, Any] = {
        "oa": scores["oa"],
        "aa": scores["aa"],
        "kappa": scores["kappa"],
        "per_class": dict(zip(names, scores["per_class"])),
        "support": dict(zip(names, scores["support"])),
        "confusion": scores["confusion"],
        "class_names": names,
        "model": cfg.model,
        "seed": cfg.seed,
        "scene": datamodule.scene_name,
        "num_bands": datamodule.num_bands,
        "patch_size": cfg.patch_size,
        "split": _split_summary(datamodule),
        "epochs_trained": trainer.current_epoch,
        "start_epoch": start_epoch,
        "best_epoch": _epoch_of(best_path),
        "best_val_oa": float(best_ckpt.best_model_score) if best_ckpt.best_model_score is not None else None,
        "best_checkpoint": str(Path(best_path).resolve()),
        "timing": {
            "fit_s": round(fit_seconds, 3),
            "test_s": round(test_seconds, 3),
            "total_s": round(time.perf_counter() - started, 3),
        },
        "config": cfg.to_dict(),
        "hsi_version": hsi.__version__,
    }
    write_json_atomic(out / "metrics.json", metrics)
    plot_confusion(np.array(scores["confusion"]), names, out / "confusion.png", title=f"{metrics['scene']} / {cfg.model}: test OA {100 * scores['oa']:.1f}%")
    plot_curves(read_epoch_history(out / "logs"), out / "curves.png")
    from hsi.viz import plot_split

    plot_split(datamodule.split, labels=datamodule.labels, path=out / "split.png", title=f"{metrics['scene']}: {cfg.split} split")
    metrics["summary"] = format_summary(metrics)
    return metrics


def _leave_process_group() -> None:
    """End a DDP process group once fitting is over, so single-process evaluation cannot wait on other ranks."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


def _load_resume_state(path: str) -> dict[str, Any]:
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except FileNotFoundError as err:
        raise CheckpointError(f"--resume: checkpoint not found: {path}") from err
    except Exception as err:  # a truncated or foreign file
        raise CheckpointError(f"--resume: {path} is not a readable Lightning checkpoint ({err})") from err


def _epoch_of(checkpoint_path: str) -> int | None:
    try:
        return int(torch.load(checkpoint_path, map_location="cpu", weights_only=False)["epoch"])
    except Exception:
        return None


def _split_summary(datamodule: HSIDataModule) -> dict[str, Any]:
    split = datamodule.split
    summary: dict[str, Any] = {k: v for k, v in split.params.items()}
    for name in ("train", "val", "test"):
        summary[f"{name}_pixels"] = int(getattr(split, name).sum())
    return summary
