"""After fitting: evaluate the best model on the test pixels and write the run's reports.

:func:`evaluate` tests the best checkpoint and predicts the test pixels; :func:`score`
turns test predictions into OA / AA / kappa / per-class / confusion (one function for deep
and classical models); :func:`write_reports` (every run, deep or classical) writes ``predictions.npz`` (class
ids as the maps number them: ``1..K``),
``metrics.json``, ``confusion.png``, ``curves.png`` and ``split.png`` atomically and
records the settings that actually ran.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch

import hsi
from hsi._atomic import atomic_path, null_nonfinite, write_json_atomic
from hsi.data import HSIDataModule
from hsi.data.checkpoint import read_checkpoint
from hsi.training.metrics import NOT_SCORED, scores_from_confusion
from hsi.training.progress import epoch_number
from hsi.training.scene_scores import scene_scores
from hsi.training.unseen import score_seen, unseen_message
from hsi.training.report import (
    format_summary,
    plot_confusion,
    plot_curves,
    prediction_arrays,
    read_epoch_history,
    write_npz_atomic,
)
from hsi.training.task import HSIClassifier

__all__ = ["Evaluation", "evaluate", "jsonable", "score", "split_record", "write_predictions", "write_reports"]


@dataclass
class Evaluation:
    """Test predictions of the chosen model.

    Attributes
    ----------
    coords : ndarray (N, 2)
        Row, column of each test pixel.
    y_true, y_pred : ndarray (N,)
        0-based classes.
    probs : ndarray (N, K)
        Class probabilities.
    best_epoch : int | None
        Epoch of the chosen checkpoint, numbered from 1 (:func:`~hsi.training.progress.epoch_number`).
    checkpoint : str
        Path of the chosen model.
    hparams : dict
        The chosen model's arguments (as ``metrics.json`` records them).
    seconds : float
        Time the evaluation took.
    predict_seconds : float | None
        Of which the pass over the test pixels (model loading excluded): ``len(coords) / predict_seconds`` is the
        inference speed in pixels per second.
    """

    coords: np.ndarray
    y_true: np.ndarray
    y_pred: np.ndarray
    probs: np.ndarray
    best_epoch: int | None
    checkpoint: str
    seconds: float
    hparams: dict[str, Any]
    predict_seconds: float | None = None


def evaluate(best_path: str, datamodule: HSIDataModule, accelerator: str) -> Evaluation:
    """Predict the test pixels with the checkpoint at ``best_path``, in this process alone."""
    started = time.perf_counter()
    epoch = read_checkpoint(best_path).get("epoch")
    best = HSIClassifier.load_from_checkpoint(best_path, weights_only=False)
    trainer = L.Trainer(accelerator=accelerator, devices=1, logger=False, enable_progress_bar=False,
                        enable_model_summary=False, deterministic=True)
    predict_started = time.perf_counter()
    outputs = trainer.predict(best, datamodule=datamodule)
    predict_seconds = time.perf_counter() - predict_started
    probs = torch.cat([o["probs"] for o in outputs]).numpy()
    dataset = datamodule.predict_dataset
    return Evaluation(
        coords=np.asarray(dataset.coords), y_true=np.asarray(dataset.labels), y_pred=probs.argmax(axis=1),
        probs=probs.astype(np.float32), best_epoch=None if epoch is None else epoch_number(epoch),
        checkpoint=str(Path(best_path).resolve()), seconds=time.perf_counter() - started, hparams=dict(best.hparams),
        predict_seconds=predict_seconds,
    )


def score(y_true: np.ndarray, y_pred: np.ndarray, num_classes: int) -> dict[str, Any]:
    """OA, AA, kappa, per-class accuracy, support and confusion of 0-based predictions."""
    confusion = np.zeros((num_classes, num_classes), dtype=np.int64)
    np.add.at(confusion, (np.asarray(y_true, dtype=np.int64), np.asarray(y_pred, dtype=np.int64)), 1)
    scores = scores_from_confusion(confusion)
    scores["confusion"] = confusion.astype(int).tolist()
    return scores


def write_predictions(out: Path, evaluation: Evaluation, class_names: list[str] | None = None) -> None:
    """``predictions.npz``: test pixel coordinates (``rows``, ``cols``), truth and prediction (``y_true``,
    ``y_pred``) as the class maps number classes (``1..K``; :data:`~hsi.training.report.LABEL_CONVENTION`, stored
    as ``label_convention``), ``class_names`` and the probabilities ``probs`` (N, K)."""
    write_npz_atomic(out / "predictions.npz", rows=evaluation.coords[:, 0], cols=evaluation.coords[:, 1],
                     **prediction_arrays(class_names, y_true=evaluation.y_true, y_pred=evaluation.y_pred),
                     probs=evaluation.probs)


def split_record(summary: dict[str, Any]) -> dict[str, Any]:
    """The split as ``metrics.json`` records it: its ``fold`` counted from 1, as the ``fold`` option, the evaluation's
    folders and its leaderboard count it (the split itself counts from 0, :func:`hsi.preprocess.block_split`)."""
    if summary.get("fold") is None:
        return summary
    return {**summary, "fold": int(summary["fold"]) + 1}


def base_metrics(datamodule: HSIDataModule, evaluation: Evaluation, model_name: str) -> dict[str, Any]:
    """The scores and data facts every run reports (several scenes: :func:`collection_metrics` too)."""
    names = list(datamodule.class_names)
    several = len(datamodule.scene_names) > 1
    trained = trained_classes(datamodule) if several else names
    scores = score_seen(evaluation.y_true, evaluation.y_pred, names, trained)
    unseen = {"scored_classes": scores["scored_classes"], "unseen_classes": scores["unseen_classes"]} \
        if len(trained) < len(names) else {}
    message = unseen_message(scores["unseen_classes"])
    if message:
        logging.getLogger("hsi.training").warning(message)
    return {
        "oa": scores["oa"], "aa": scores["aa"], "kappa": scores["kappa"],
        "per_class": dict(zip(names, scores["per_class"])),
        **unseen,
        **(collection_metrics(datamodule, evaluation, trained) if several else {}),
        "support": dict(zip(names, scores["support"])),
        "confusion": scores["confusion"],
        "class_names": names,
        "model": model_name,
        "scene": datamodule.scene_name,
        "num_bands": datamodule.num_bands,
        "patch_size": datamodule.patch_size,
        "split": split_record(datamodule.split_summary()),
        "excluded_nonfinite": datamodule.excluded_nonfinite,
        "best_checkpoint": evaluation.checkpoint,
        "hsi_version": hsi.__version__,
    }


def trained_classes(datamodule: HSIDataModule) -> list[str]:
    """The classes with training pixels, in class order."""
    ids = set(np.unique(np.asarray(datamodule.train_dataset.labels)).tolist())
    return [name for k, name in enumerate(datamodule.class_names) if k in ids]


def collection_metrics(datamodule: HSIDataModule, evaluation: Evaluation, trained: list[str]) -> dict[str, Any]:
    """What a run on several scenes reports besides the scores: per-scene scores, the scenes as they ran (entries,
    split, units, band grid, normalisation, preprocessing) and the scene-shift checks."""
    names = list(datamodule.class_names)
    scenes = scene_scores(evaluation.y_true, evaluation.y_pred, datamodule.predict_dataset.scene_index,
                          datamodule.scene_names, names, datamodule.scene_classes(), trained)
    return {"scenes": scenes, "collection": datamodule.collection_record(), "bands": datamodule.bands_summary(),
            "scene_shift": datamodule.scene_shift()}


def write_figures(out: Path, metrics: dict[str, Any], datamodule: HSIDataModule, best_epoch: int | None) -> None:
    """``confusion.png``, ``split.png`` and, when there are training logs, ``curves.png``."""
    from hsi.viz import plot_split

    oa = "n/a" if metrics["oa"] is None else f"{100 * metrics['oa']:.1f}%"
    title = f"{metrics['scene']} / {metrics['model']}: test OA {oa}"
    plot_confusion(np.array(metrics["confusion"]), metrics["class_names"], out / "confusion.png", title=title)
    if (out / "logs").is_dir():
        plot_curves(read_epoch_history(out / "logs"), out / "curves.png", best_epoch=best_epoch)
    names = datamodule.scene_names
    for name in names:  # one split figure per scene: split.png for a single scene
        figure = "split.png" if len(names) == 1 else f"split-{name}.png"
        with atomic_path(out / figure, suffix=".png") as split_png:
            plot_split(datamodule.scene_split(name), labels=datamodule.scene_labels(name), path=split_png,
                       class_names=datamodule.class_names, palette=datamodule.palette,
                       title=f"{name}: {metrics['split']['method']} split")


def finish(out: Path, metrics: dict[str, Any], datamodule: HSIDataModule, evaluation: Evaluation) -> dict[str, Any]:
    """Write predictions, ``metrics.json`` (strict JSON: a score no pixel could give is null, with
    ``<key>_reason`` beside it) and the figures; add the printed summary."""
    metrics = null_nonfinite(metrics, NOT_SCORED)
    write_predictions(out, evaluation, metrics["class_names"])
    write_json_atomic(out / "metrics.json", metrics, indent=2)
    write_figures(out, metrics, datamodule, evaluation.best_epoch)
    return {**metrics, "summary": format_summary(metrics), "out": str(out)}


def write_reports(out: Path, settings: Any, datamodule: HSIDataModule, evaluation: Evaluation,
                  facts: dict[str, Any], timing: dict[str, float]) -> dict[str, Any]:
    """Every report of a run, deep or classical; returns the metrics (plus the printed summary).

    ``facts`` are the entries only one kind of model has (a network's epochs and best
    validation OA, a classical model's fitted parameters), written after ``seed``.
    """
    task_hparams = evaluation.hparams
    metrics = base_metrics(datamodule, evaluation, str(task_hparams["model"]))
    metrics.update({
        "seed": settings.run.seed,
        **facts,
        "timing": {"fit_s": round(timing["fit_s"], 3), "test_s": round(evaluation.seconds, 3),
                   "total_s": round(time.perf_counter() - timing["started"], 3), **speeds(evaluation, facts, timing)},
        "config": {"data": jsonable(datamodule.data_arguments()), "model": jsonable(task_hparams),
                   "run": settings.run.to_dict(), "resumed_from": settings.resume.path if settings.resume else None,
                   # a resumed run: the run options it took from the checkpoint and those given again
                   "resume": getattr(settings, "resumed", None)},
    })
    return finish(out, metrics, datamodule, evaluation)


def speeds(evaluation: Evaluation, facts: dict[str, Any], timing: dict[str, float]) -> dict[str, float | None]:
    """``epoch_s``: fit time per epoch trained in this run (None for a classical model); ``pixels_per_s``: test
    pixels classified per second by the test pass (None when it was not timed)."""
    epochs = facts.get("epochs_trained", 0) - facts.get("start_epoch", 1) + 1 if "epochs_trained" in facts else 0
    epoch_s = round(timing["fit_s"] / epochs, 4) if epochs > 0 else None
    passed = evaluation.predict_seconds
    pixels_per_s = round(len(evaluation.coords) / passed, 1) if passed and len(evaluation.coords) else None
    return {"epoch_s": epoch_s, "pixels_per_s": pixels_per_s}


def jsonable(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` with tuples as lists, as JSON writes them (settings recorded in reports)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}
