"""What the classical baselines share: input checks, the saved-file format, the base class.

A saved model is one ``.npz`` file holding only numeric arrays plus a ``meta`` entry with
a JSON text (format name, version, model kind, parameters). It is read with
``allow_pickle=False``, so loading a file never runs code from it: the trust boundary
is the same as for any array file.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from hsi._atomic import write_bytes_atomic
from hsi.errors import (
    BandMismatchError, MissingFileError, ModelFileError, NonFiniteInputError, OptionError, ShapeMismatchError,
)

__all__ = ["FORMAT", "FORMAT_VERSION", "ClassicalModel", "check_features", "check_targets"]

FORMAT = "hsi.classical"
"""Value of ``meta["format"]`` in every saved classical model."""

FORMAT_VERSION = 1


def check_features(X: object, name: str = "X", num_bands: int | None = None) -> np.ndarray:
    """``X`` as a C-contiguous float64 ``(N, C)`` array, after checking shape and finiteness.

    Raises
    ------
    ShapeMismatchError
        ``X`` is not 2-D or has no rows.
    BandMismatchError
        ``num_bands`` is given and ``X`` has another number of columns.
    ValueError
        ``X`` holds NaN or infinite values (the message counts them).
    """
    arr = np.asarray(X)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ShapeMismatchError(
            f"{name} must be a non-empty 2-D array (pixels, bands); got shape {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise OptionError(name, f"dtype {arr.dtype}", "an array of real numbers (integer or floating point)")
    if num_bands is not None and arr.shape[1] != num_bands:
        raise BandMismatchError(
            f"{name} has {arr.shape[1]} bands (columns) but the model was fitted on {num_bands}"
        )
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        raise NonFiniteInputError(
            f"{name} holds {int(bad.sum())} non-finite values in {rows.size} pixels "
            f"(first row {int(rows[0])}); remove or fill them before fitting/predicting"
        )
    return arr


def check_targets(y: object, n: int, num_classes: int | None) -> tuple[np.ndarray, int]:
    """``y`` as int64 ``(n,)`` of 0-based labels, and the number of classes ``K``.

    ``K`` is ``num_classes`` when given (labels must then be ``< K``), else ``max(y) + 1``.
    """
    arr = np.asarray(y)
    if arr.shape != (n,):
        raise ShapeMismatchError(f"y must have shape ({n},) to match X; got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        if not (np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr))):
            raise OptionError("y", f"dtype {arr.dtype}", "integer class labels")
    arr = arr.astype(np.int64)
    if arr.min() < 0:
        raise OptionError("y", int(arr.min()), "0-based class labels (>= 0)")
    k = int(arr.max()) + 1 if num_classes is None else int(num_classes)
    if arr.max() >= k:
        raise OptionError("y", int(arr.max()),
                          f"labels 0..{k - 1}: y holds label {int(arr.max())} but num_classes is {k}")
    return arr, k


class ClassicalModel(ABC):
    """A fitted per-pixel classifier that predicts without scikit-learn and saves without pickle.

    Attributes
    ----------
    num_bands_ : int
        Number of features ``C`` it was fitted on.
    num_classes_ : int
        Number of output columns ``K`` of ``predict_proba`` (classes absent from training
        get probability 0).
    params_ : dict
        The hyperparameters used (and, for the SVM, those chosen by cross-validation).
    """

    kind: ClassVar[str]

    def __init__(self, num_bands: int, num_classes: int, params: dict[str, Any]) -> None:
        self.num_bands_ = int(num_bands)
        self.num_classes_ = int(num_classes)
        self.params_ = dict(params)

    @abstractmethod
    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Class scores ``(N, K)`` float64, rows summing to 1, for features ``X`` ``(N, C)``."""

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Labels ``(N,)`` int64 (0-based): the first column of maximal ``predict_proba``."""
        return self.predict_proba(X).argmax(axis=1).astype(np.int64)

    @abstractmethod
    def _arrays(self) -> dict[str, np.ndarray]:
        """The numeric arrays that, with ``params_``, define the model."""

    @classmethod
    @abstractmethod
    def _from_arrays(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> ClassicalModel:
        """Rebuild from what ``save`` wrote (arrays already checked to be present)."""

    required_arrays: ClassVar[tuple[str, ...]] = ()

    def save(self, path: str | Path, run: dict[str, Any] | None = None) -> Path:
        """Write the model to ``path`` (``.npz`` added if missing) atomically; returns the path.

        ``run`` (JSON values only) is stored beside the arrays as ``meta["run"]``: what
        ``hsi train`` adds so that the file alone is enough for inference (the fitted
        preprocessing, split and classes; :func:`hsi.classical.load_classical_run`).
        """
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        meta = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "kind": self.kind,
            "num_bands": self.num_bands_,
            "num_classes": self.num_classes_,
            "params": self.params_,
        }
        if run is not None:
            meta["run"] = run
        buffer = io.BytesIO()
        np.savez_compressed(buffer, meta=np.array(json.dumps(meta)), **self._arrays())
        write_bytes_atomic(path, buffer.getvalue())
        return path

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_bands={self.num_bands_}, num_classes={self.num_classes_}, "
            f"params={self.params_})"
        )


def read_model_file(path: str | Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The ``meta`` dict and arrays of a saved classical model, checked for format and version."""
    path = Path(path)
    if not path.is_file():
        raise MissingFileError(f"classical model file not found: {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as err:
        # a truncated or damaged archive ("File is not a zip file", "Bad CRC-32"): not a traceback
        raise ModelFileError(f"{path}: not a readable .npz file ({type(err).__name__}: {err}); the file is "
                             f"truncated or corrupt: train again, or copy the model file again") from err
    if "meta" not in arrays:
        raise ModelFileError(f"{path}: no 'meta' entry; not a model saved by hsi.classical")
    try:
        meta = json.loads(str(arrays.pop("meta")))
    except json.JSONDecodeError as err:
        raise ModelFileError(f"{path}: the 'meta' entry is not valid JSON ({err})") from err
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise ModelFileError(f"{path}: meta format is {found!r}, expected {FORMAT!r}")
    if meta.get("version") != FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: format version {meta.get('version')!r} is not supported "
            f"(this hsi reads version {FORMAT_VERSION})"
        )
    for key in ("kind", "num_bands", "num_classes", "params"):
        if key not in meta:
            raise ModelFileError(f"{path}: meta has no {key!r} entry")
    return meta, arrays
