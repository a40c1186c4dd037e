"""Random forest on centre-pixel spectra: scikit-learn fits it, the trees are traversed here.

The fitted trees are stored as flat arrays (children, split feature, threshold, leaf class
fractions, one offset per tree), so a saved forest needs neither scikit-learn nor pickle.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from hsi.classical.base import ClassicalModel, check_features
from hsi.errors import ModelFileError, OptionError

__all__ = ["RandomForest", "fit_forest"]

_LEAF = -1  # scikit-learn's TREE_LEAF


class RandomForest(ClassicalModel):
    """A fitted forest of binary trees; ``predict_proba`` is the mean of the trees' leaf fractions.

    Parameters
    ----------
    left, right : ndarray (T,) int64
        Children of each node, as indices into the flat arrays (``-1`` at leaves).
    feature : ndarray (T,) int64
        Feature tested at each node (unused at leaves).
    threshold : ndarray (T,) float64
        Split threshold: ``x[feature] <= threshold`` goes left, with ``x`` rounded to
        float32 first, as scikit-learn's trees do.
    value : ndarray (T, M) float64
        Class fractions of the training samples reaching each node (rows sum to 1).
    roots : ndarray (n_trees,) int64
        Index of each tree's root in the flat arrays.
    fitted_classes : ndarray (M,) int64
        0-based labels of the columns of ``value``.
    num_bands, num_classes : int
        Features ``C`` and columns ``K`` of ``predict_proba``.
    params : dict
        Hyperparameters.
    """

    kind: ClassVar[str] = "rf"
    required_arrays = ("left", "right", "feature", "threshold", "value", "roots", "fitted_classes")

    def __init__(
        self,
        left: np.ndarray,
        right: np.ndarray,
        feature: np.ndarray,
        threshold: np.ndarray,
        value: np.ndarray,
        roots: np.ndarray,
        fitted_classes: np.ndarray,
        num_bands: int,
        num_classes: int,
        params: dict[str, Any],
    ) -> None:
        super().__init__(num_bands, num_classes, params)
        self.left_ = np.asarray(left, dtype=np.int64)
        self.right_ = np.asarray(right, dtype=np.int64)
        self.feature_ = np.asarray(feature, dtype=np.int64)
        self.threshold_ = np.asarray(threshold, dtype=np.float64)
        self.value_ = np.asarray(value, dtype=np.float64)
        self.roots_ = np.asarray(roots, dtype=np.int64)
        self.fitted_classes_ = np.asarray(fitted_classes, dtype=np.int64)
        self._check_consistent()

    def _check_consistent(self) -> None:
        t = self.left_.size
        problems = []
        for name in ("right_", "feature_", "threshold_"):
            if getattr(self, name).shape != (t,):
                problems.append(f"{name[:-1]} has shape {getattr(self, name).shape}, expected ({t},)")
        if self.value_.shape != (t, self.fitted_classes_.size):
            problems.append(f"value has shape {self.value_.shape}, expected ({t}, {self.fitted_classes_.size})")
        inner = self.left_ != _LEAF
        if self.roots_.size == 0 or self.roots_.min() < 0 or self.roots_.max() >= t:
            problems.append(f"tree roots must be in 0..{t - 1}")
        if inner.any() and not problems:
            parents = np.flatnonzero(inner)
            kids = np.concatenate([self.left_[parents], self.right_[parents]])
            # Forward pointers (child index > parent index) make every traversal end at a leaf.
            if kids.max() >= t or np.any(kids <= np.tile(parents, 2)):
                problems.append("children must point forward inside the flat arrays")
            features = self.feature_[inner]
            if features.min() < 0 or features.max() >= self.num_bands_:
                problems.append(f"split features must be in 0..{self.num_bands_ - 1}")
        if problems:
            raise ModelFileError("inconsistent forest arrays: " + "; ".join(problems))

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Mean leaf class fractions over the trees, ``(N, K)``."""
        X = check_features(X, num_bands=self.num_bands_).astype(np.float32)
        rows = np.arange(X.shape[0])
        total = np.zeros((X.shape[0], self.fitted_classes_.size))
        for root in self.roots_:
            node = np.full(X.shape[0], root, dtype=np.int64)
            active = self.left_[node] != _LEAF
            while active.any():
                at = node[active]
                go_left = X[rows[active], self.feature_[at]] <= self.threshold_[at]
                node[active] = np.where(go_left, self.left_[at], self.right_[at])
                active = self.left_[node] != _LEAF
            total += self.value_[node]
        proba = np.zeros((X.shape[0], self.num_classes_))
        proba[:, self.fitted_classes_] = total / self.roots_.size
        return proba

    def _arrays(self) -> dict[str, np.ndarray]:
        return {
            "left": self.left_, "right": self.right_, "feature": self.feature_,
            "threshold": self.threshold_, "value": self.value_, "roots": self.roots_,
            "fitted_classes": self.fitted_classes_,
        }

    @classmethod
    def _from_arrays(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> RandomForest:
        return cls(
            *(arrays[k] for k in cls.required_arrays),
            num_bands=meta["num_bands"], num_classes=meta["num_classes"], params=meta["params"],
        )


def fit_forest(
    X: np.ndarray,
    y: np.ndarray,
    num_classes: int,
    *,
    seed: int,
    n_estimators: int = 200,
    max_features: str | float = "sqrt",
    min_samples_leaf: int = 1,
) -> RandomForest:
    """Fit ``sklearn.ensemble.RandomForestClassifier`` (one job, seeded) and flatten its trees.

    Parameters
    ----------
    X : ndarray (N, C)
        Training features.
    y : ndarray (N,)
        0-based labels ``< num_classes``.
    num_classes : int
        Columns of ``predict_proba``.
    seed : int
        ``random_state`` of the forest; same seed, same trees.
    n_estimators : int
        Number of trees.
    max_features : {"sqrt", "log2"} or float
        Features tried at each split (a float is a fraction of ``C``).
    min_samples_leaf : int
        Minimum training pixels per leaf.
    """
    from sklearn.ensemble import RandomForestClassifier

    if isinstance(n_estimators, bool) or not isinstance(n_estimators, int) or n_estimators < 1:
        raise OptionError("n_estimators", n_estimators, "an integer >= 1")
    if isinstance(min_samples_leaf, bool) or not isinstance(min_samples_leaf, int) or min_samples_leaf < 1:
        raise OptionError("min_samples_leaf", min_samples_leaf, "an integer >= 1")
    if not (max_features in ("sqrt", "log2") or (isinstance(max_features, float) and 0 < max_features <= 1)):
        raise OptionError("max_features", max_features, "'sqrt', 'log2' or a fraction in (0, 1]")
    forest = RandomForestClassifier(
        n_estimators=n_estimators, max_features=max_features, min_samples_leaf=min_samples_leaf,
        random_state=seed, n_jobs=1,
    ).fit(X, y)
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("left", "right", "feature", "threshold", "value")}
    roots, offset = [], 0
    for estimator in forest.estimators_:
        tree = estimator.tree_
        inner = tree.children_left != _LEAF
        parts["left"].append(np.where(inner, tree.children_left + offset, _LEAF))
        parts["right"].append(np.where(inner, tree.children_right + offset, _LEAF))
        parts["feature"].append(np.where(inner, tree.feature, 0))
        parts["threshold"].append(np.where(inner, tree.threshold, 0.0))
        value = tree.value[:, 0, :]
        parts["value"].append(value / value.sum(axis=1, keepdims=True))
        roots.append(offset)
        offset += tree.node_count
    params = {"n_estimators": n_estimators, "max_features": max_features,
              "min_samples_leaf": min_samples_leaf, "seed": int(seed)}
    flat = {k: np.concatenate(v) for k, v in parts.items()}
    return RandomForest(
        flat["left"], flat["right"], flat["feature"], flat["threshold"], flat["value"],
        np.asarray(roots), forest.classes_, X.shape[1], num_classes, params,
    )
