"""Per-pixel splits: random (for comparison with the literature) and fixed train/test maps.

:func:`random_split` reproduces the per-pixel splits of the literature and warns
(:class:`hsi.errors.LeakageWarning`). :func:`fixed_split` wraps benchmark releases that
ship separate train and test maps.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, Sequence

import numpy as np

from hsi.errors import LeakageWarning, ShapeMismatchError, SplitError
from hsi.preprocess._split_checks import check_fractions, check_int, check_labels
from hsi.preprocess._split_result import make_split
from hsi.preprocess.split_types import COLUMNS, Split

__all__ = ["fixed_split", "random_split"]


def _n_train(n: int, train_per_class: int | float, what: str) -> int:
    """Training pixels for a class of ``n``: a count or a fraction, leaving one for test."""
    if isinstance(train_per_class, bool) or not isinstance(train_per_class, numbers.Real):
        raise SplitError(f"{what}: train_per_class must be an int count or a float fraction in "
                         f"(0, 1), found {train_per_class!r}")
    if isinstance(train_per_class, numbers.Integral):
        if train_per_class < 1:
            raise SplitError(f"{what}: train_per_class must be >= 1, found {train_per_class}")
        k = int(train_per_class)
    else:
        if not 0 < train_per_class < 1:
            raise SplitError(f"{what}: a float train_per_class is a fraction in (0, 1), found "
                             f"{train_per_class!r}")
        k = max(1, int(round(train_per_class * n)))
    return min(k, n - 1) if n > 1 else n


def random_split(labels: Any, fractions: Sequence[float] = (0.6, 0.2, 0.2),
                 train_per_class: int | float | None = None, seed: int = 0) -> Split:
    """Per-pixel stratified random split, for comparison with the literature only.

    Each class's labeled pixels are shuffled (``np.random.default_rng(seed)``) and cut in
    the proportions ``fractions``, keeping at least one train and one test pixel for
    every class with >= 2 pixels. With ``train_per_class`` (an int count, or a float
    fraction of the class) the training count is set that way instead (capped at the
    class size minus one), and the rest is divided between val and test in the ratio
    ``fractions[1] : fractions[2]``.

    Always warns :class:`hsi.errors.LeakageWarning`: neighbouring pixels are strongly
    correlated and patch models see test pixels inside their training windows, so
    accuracies are optimistic.
    """
    what = "random_split"
    lab = check_labels(labels, what)
    f = check_fractions(fractions, what)
    seed_ = check_int(seed, "seed", what, 0)
    if not (lab > 0).any():
        raise SplitError(f"{what}: labels has no labeled pixel (all 0)")
    warnings.warn(
        "random_split assigns neighbouring pixels to different splits: patches around "
        "training pixels contain test pixels and adjacent pixels are near-duplicates, so "
        "test accuracy is inflated. Use block_split for honest evaluation.",
        LeakageWarning, stacklevel=2)
    rng = np.random.default_rng(seed_)
    flat = lab.ravel()
    masks = {s: np.zeros(flat.size, dtype=bool) for s in COLUMNS}
    for k in range(1, int(lab.max()) + 1):
        idx = np.flatnonzero(flat == k)
        n = idx.size
        if n == 0:
            continue
        idx = rng.permutation(idx)
        if train_per_class is None:
            n_tr = int(round(f[0] * n))
            n_va = int(round(f[1] * n))
            if n > 1:
                n_tr = min(max(n_tr, 1), n - 1)
                n_va = min(n_va, n - n_tr - 1)
            else:
                n_tr, n_va = 1, 0
        else:
            n_tr = _n_train(n, train_per_class, what)
            rest = n - n_tr
            n_va = int(round(rest * f[1] / (f[1] + f[2]))) if rest > 1 else 0
            n_va = min(n_va, rest - 1) if rest > 0 else 0
        masks["train"][idx[:n_tr]] = True
        masks["val"][idx[n_tr:n_tr + n_va]] = True
        masks["test"][idx[n_tr + n_va:]] = True
    masks = {s: m.reshape(lab.shape) for s, m in masks.items()}
    params = {"method": "random", "fractions": f.tolist(), "seed": seed_,
              "train_per_class": train_per_class, "buffer": 0}
    return make_split(lab, masks, params, what)


def fixed_split(train_labels: Any, test_labels: Any, val_fraction: float = 0.0,
                seed: int = 0) -> Split:
    """Split given as separate train and test label maps (as some benchmarks ship them).

    ``val_fraction`` of each class's training pixels (rounded, at least one left for
    training) is moved to val at random (``np.random.default_rng(seed)``).

    Raises
    ------
    ShapeMismatchError
        The two maps differ in shape.
    SplitError
        A pixel is labeled in both maps, or ``val_fraction`` is outside [0, 1).
    """
    what = "fixed_split"
    tr = check_labels(train_labels, what, "train_labels")
    te = check_labels(test_labels, what, "test_labels")
    if tr.shape != te.shape:
        raise ShapeMismatchError(f"{what}: train_labels has shape {tr.shape} but test_labels "
                                 f"has shape {te.shape}; they must cover the same scene")
    both = (tr > 0) & (te > 0)
    if both.any():
        r, c = np.argwhere(both)[0]
        raise SplitError(f"{what}: {int(both.sum())} pixels are labeled in both train_labels and "
                         f"test_labels (first at row {r}, col {c}); the maps must not overlap")
    if not isinstance(val_fraction, numbers.Real) or not 0 <= val_fraction < 1:
        raise SplitError(f"{what}: val_fraction must be in [0, 1), found {val_fraction!r}")
    seed_ = check_int(seed, "seed", what, 0)
    if not (tr > 0).any():
        raise SplitError(f"{what}: train_labels has no labeled pixel (all 0)")
    lab = np.where(tr > 0, tr, te)
    rng = np.random.default_rng(seed_)
    flat_tr = tr.reshape(-1)
    flat_train = flat_tr > 0
    flat_val = np.zeros_like(flat_train)
    if val_fraction > 0:
        for k in range(1, int(tr.max()) + 1):
            idx = np.flatnonzero(flat_tr == k)
            n_va = min(int(round(val_fraction * idx.size)), idx.size - 1)
            if n_va > 0:
                pick = rng.choice(idx, size=n_va, replace=False)
                flat_train[pick] = False
                flat_val[pick] = True
    train, val = flat_train.reshape(tr.shape), flat_val.reshape(tr.shape)
    masks = {"train": train, "val": val, "test": te > 0, "buffer": np.zeros_like(train)}
    params = {"method": "fixed", "val_fraction": float(val_fraction), "seed": seed_,
              "buffer": 0}
    return make_split(lab, masks, params, what)
