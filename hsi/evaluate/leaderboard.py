"""The leaderboard: one row per model, mean ± std of its fold runs.

A row's statistics are over all its block-split fold runs (K folds times the seeds),
``std`` the population standard deviation (``ddof=0``) of those runs; ``per_class`` holds each
class's mean accuracy over the runs whose test split holds the class (``per_class_std`` its std;
None for a class in no test split), ``seconds`` the mean time of one fold run, ``parameters``,
``epoch_s`` and ``pixels_per_s`` the trainable parameters, fit seconds per epoch and test pixels
classified per second (None for what a model has not), ``settings`` what the runs were given (patch,
PCA, scaling, input bands, epochs), and ``folds`` every run's own scores, leakage audit and train, val and
test pixel counts. With ``--random``, ``random`` holds the same statistics over the random-split runs.
``buffer`` is the split buffer of every block fold, the same for every model (the largest any
model needs), so on each fold every model trained, validated and was tested on the same pixels. Rows are ordered by mean OA, best first (ties by
name), so the table is the same for the same runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hsi.evaluate.options import DEFAULT_ROW

__all__ = ["LEADERBOARD_FORMAT", "leaderboard", "settings_of", "summarize"]

#: ``format`` of ``leaderboard.json``
LEADERBOARD_FORMAT = "hsi.leaderboard"
_SCORES = ("oa", "aa", "kappa")


def summarize(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """``oa_mean``, ``oa_std``, ... ``per_class`` means and stds, the mean ``seconds``, ``parameters``, ``epoch_s``
    and ``pixels_per_s`` (None when no run recorded one) and the largest ``leak``."""
    stats: dict[str, Any] = {}
    for key in _SCORES:
        values = np.array([e[key] for e in entries], dtype=np.float64)
        stats[f"{key}_mean"], stats[f"{key}_std"] = float(values.mean()), float(values.std())
    names = list(entries[0]["per_class"])
    per_class = np.array([[np.nan if e["per_class"][n] is None else e["per_class"][n] for n in names]
                          for e in entries], dtype=np.float64)
    stats["per_class"] = dict(zip(names, _nan_stat(per_class, np.mean)))
    stats["per_class_std"] = dict(zip(names, _nan_stat(per_class, np.std)))
    stats["seconds"] = float(np.mean([e["seconds"] for e in entries]))
    for key in ("parameters", "epoch_s", "pixels_per_s"):
        values = [e[key] for e in entries if e.get(key) is not None]
        stats[key] = None if not values else int(round(np.mean(values))) if key == "parameters" else float(np.mean(values))
    stats["leak"] = int(max(e["leak"] for e in entries))
    return stats


def _nan_stat(values: np.ndarray, stat: Any) -> list[float | None]:
    """``stat`` of each column over the runs whose test split holds the class (None: in none of them)."""
    return [float(stat(col[~np.isnan(col)])) if (~np.isnan(col)).any() else None for col in values.T]


def _model_label(model: str, results: list[Any]) -> str:
    """``default (ssnet)`` for the default row, the name otherwise."""
    if model != DEFAULT_ROW:
        return model
    resolved = sorted({str(r.metrics.get("model")) for r in results})
    return f"{DEFAULT_ROW} ({', '.join(resolved)})"


def settings_of(metrics: dict[str, Any]) -> dict[str, Any]:
    """What a row's runs were given, as its first run records it: patch, PCA, scaling, input bands, epochs."""
    data, run = (metrics.get("config") or {}).get("data") or {}, (metrics.get("config") or {}).get("run") or {}
    return {"patch_size": metrics.get("patch_size"), "pca": data.get("pca"), "scaling": data.get("scaling"),
            "num_bands": metrics.get("num_bands"), "epochs": run.get("epochs")}


def _row(model: str, results: list[Any]) -> dict[str, Any]:
    block = [r.entry() for r in results if r.job.fold is not None]
    row: dict[str, Any] = {"model": _model_label(model, results), **summarize(block),
                           "settings": settings_of(results[0].metrics), "folds": block}
    random = [r.entry() for r in results if r.job.fold is None]
    if random:
        row["random"] = {**summarize(random), "runs": random}
    return row


def leaderboard(results: list[Any], config: Any, seconds: float, buffer: int | None = None) -> dict[str, Any]:
    """The leaderboard of the fold runs ``results`` (:class:`~hsi.evaluate.running.FoldResult`) of ``config``, whose
    block folds all had the split ``buffer`` (:func:`hsi.evaluate.fitness.board_buffer`)."""
    models = list(dict.fromkeys(r.job.model for r in results))
    rows = [_row(m, [r for r in results if r.job.model == m]) for m in models]
    rows.sort(key=lambda row: (-row["oa_mean"], row["model"]))
    first = results[0].metrics
    return {
        "format": LEADERBOARD_FORMAT,
        "format_version": 1,
        "scene": first["scene"],
        "class_names": list(first["class_names"]),
        "n_folds": config.n_folds,
        "seeds": list(config.options.seeds),
        "block_size": first["split"].get("block_size"),
        "buffer": buffer,
        "rows": rows,
        "settings": {"data": _jsonable(config.data), "model": _jsonable(config.model), "run": _jsonable(config.run),
                     "models": list(config.options.model_names), "random": bool(config.options.random)},
        "seconds": round(float(seconds), 3),
    }


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
