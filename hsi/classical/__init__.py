"""Classical per-pixel baselines (RBF-SVM, random forest) beside the deep models.

They classify the centre pixel's spectrum after the run's fitted preprocessing (scaling,
PCA), so a table can put them next to the deep models on the same scene, split and
preprocessing::

    model = fit_classical("svm", X_train, y_train, seed=0, num_classes=K)
    y_pred = model.predict(X_test)          # (N,) 0-based labels
    probs = model.predict_proba(X_test)     # (N, K)
    path = model.save("out/model.npz")
    same = load_classical(path)
    same, run = load_classical_run(path)  # with what ``hsi train`` saved beside it (or None)

scikit-learn fits them; prediction is implemented here from the fitted arrays (support
vectors and dual coefficients; tree nodes), and tested equal to scikit-learn's. Saved
files are ``.npz`` with numeric arrays and a JSON ``meta`` entry, read with
``allow_pickle=False``: loading a file from someone else runs none of their code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hsi.classical.base import (
    ClassicalModel,
    check_features,
    check_targets,
    read_model_file,
)
from hsi.classical.forest import RandomForest, fit_forest
from hsi.classical.svm import RBFSVM, fit_svm
from hsi.errors import ModelFileError, OptionError

__all__ = [
    "CLASSICAL_MODELS", "CLASSICAL_RUN_FORMAT", "RBFSVM", "ClassicalModel", "RandomForest", "fit_classical",
    "load_classical", "load_classical_run",
]

CLASSICAL_MODELS = ("svm", "rf")
"""Names accepted by :func:`fit_classical` (and by ``hsi train --model``)."""

CLASSICAL_RUN_FORMAT = "hsi.classical-run"
"""``format`` of the run description ``hsi train`` saves in a model's ``meta["run"]``."""

_CLASSES: dict[str, type[ClassicalModel]] = {"svm": RBFSVM, "rf": RandomForest}


def fit_classical(
    name: str,
    X: np.ndarray,
    y: np.ndarray,
    *,
    seed: int,
    num_classes: int | None = None,
    **options: Any,
) -> ClassicalModel:
    """Fit the classical model ``name`` on features ``X`` and 0-based labels ``y``.

    Parameters
    ----------
    name : {"svm", "rf"}
        ``"svm"``: RBF-SVM with ``C`` and ``gamma`` chosen by stratified cross-validation
        on ``(X, y)`` only (:func:`hsi.classical.svm.fit_svm`); ``"rf"``: random forest
        (:func:`hsi.classical.forest.fit_forest`).
    X : ndarray (N, C)
        Centre-pixel spectra of the training pixels after the run's fitted
        preprocessing; must be finite.
    y : ndarray (N,)
        0-based integer labels.
    seed : int
        Seed of every random choice (subsamples, folds, bootstrap); same seed, same model.
    num_classes : int, optional
        Columns ``K`` of ``predict_proba`` (the scene's class count); default ``max(y) + 1``.
    **options
        Keyword options of ``fit_svm`` / ``fit_forest`` (e.g. ``C_grid``, ``n_estimators``).

    Returns
    -------
    ClassicalModel
        With ``predict``, ``predict_proba`` and ``save``.

    Raises
    ------
    OptionError
        Unknown ``name``, unknown option, or an option value that is not allowed.
    ValueError
        Non-finite ``X``, labels that are negative or ``>= num_classes``, mismatched shapes.
    """
    key = str(name).lower()
    if key not in _CLASSES:
        raise OptionError("model", name, f"one of {', '.join(CLASSICAL_MODELS)} for a classical model")
    fit = fit_svm if key == "svm" else fit_forest
    accepted = _keyword_options(fit)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise OptionError(
            "model_options", ", ".join(unknown), f"options of {key}: {', '.join(accepted)}"
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise OptionError("seed", seed, "an integer")
    X = check_features(X)
    y, k = check_targets(y, X.shape[0], num_classes)
    return fit(X, y, k, seed=int(seed), **options)


def load_classical(path: str | Path) -> ClassicalModel:
    """Read a model written by ``ClassicalModel.save`` (no pickle; arrays checked for consistency).

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ModelFileError
        Not a classical model file, an unsupported version or kind, missing or
        inconsistent arrays.
    """
    return _model_from(*read_model_file(path), path)


def load_classical_run(path: str | Path) -> tuple[ClassicalModel, dict[str, Any] | None]:
    """The model in ``path`` and the run description ``hsi train`` saved with it (None if there is none).

    Raises
    ------
    FileNotFoundError, ModelFileError
        As :func:`load_classical`.
    """
    meta, arrays = read_model_file(path)
    run = meta.get("run")
    return _model_from(meta, arrays, path), run if isinstance(run, dict) else None


def _model_from(meta: dict[str, Any], arrays: dict[str, np.ndarray], path: str | Path) -> ClassicalModel:
    """The model of a file's checked ``meta`` and arrays."""
    cls = _CLASSES.get(str(meta["kind"]))
    if cls is None:
        raise ModelFileError(f"{path}: model kind {meta['kind']!r} unknown; expected one of {', '.join(_CLASSES)}")
    missing = [k for k in cls.required_arrays if k not in arrays]
    if missing:
        raise ModelFileError(f"{path}: {meta['kind']} model file lacks array(s) {', '.join(missing)}")
    try:
        return cls._from_arrays(meta, arrays)
    except ModelFileError as err:
        raise ModelFileError(f"{path}: {err}") from err


def _keyword_options(fn: Any) -> list[str]:
    import inspect

    params = inspect.signature(fn).parameters.values()
    return [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name != "seed"]
