"""RBF support-vector machine on centre-pixel spectra, tuned by cross-validation on training pixels.

scikit-learn's ``SVC`` (libsvm) fits it; prediction is done here from the support vectors,
dual coefficients and intercepts (one-vs-one votes, as libsvm does), so a saved model
needs neither scikit-learn nor pickle to be used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from hsi.classical.base import ClassicalModel, check_features
from hsi.errors import ModelFileError, OptionError

__all__ = ["RBFSVM", "fit_svm"]

DEFAULT_C_GRID = (1.0, 10.0, 100.0, 1000.0)
DEFAULT_GAMMA_GRID = (0.3, 1.0, 3.0)
"""Multiples of scikit-learn's ``gamma="scale"`` (``1 / (C * var(X))``) searched by default."""


class RBFSVM(ClassicalModel):
    """A fitted one-vs-one RBF-SVM: ``f_ij(x) = sum_s a_s exp(-gamma |x - s|^2) + b_ij``.

    Parameters
    ----------
    support_vectors : ndarray (S, C)
        Support vectors, grouped by class in ascending class order.
    n_support : ndarray (M,)
        Support vectors per fitted class (``M`` classes seen in training).
    dual_coef : ndarray (M - 1, S)
        libsvm's dual coefficients (``SVC.dual_coef_``).
    intercept : ndarray (M (M - 1) / 2,)
        Intercepts of the pairs ``(0, 1), (0, 2), ..., (M - 2, M - 1)``.
    fitted_classes : ndarray (M,)
        0-based labels of the fitted classes, ascending.
    gamma : float
        RBF width.
    num_classes : int
        Columns ``K`` of ``predict_proba``.
    params : dict
        Hyperparameters and cross-validation results.

    Notes
    -----
    ``predict_proba`` returns one-vs-one vote shares (votes / number of pairs), not
    calibrated probabilities; its argmax is libsvm's prediction (ties go to the lower
    class, as in libsvm).
    """

    kind: ClassVar[str] = "svm"
    required_arrays = ("support_vectors", "n_support", "dual_coef", "intercept", "fitted_classes")

    def __init__(
        self,
        support_vectors: np.ndarray,
        n_support: np.ndarray,
        dual_coef: np.ndarray,
        intercept: np.ndarray,
        fitted_classes: np.ndarray,
        gamma: float,
        num_classes: int,
        params: dict[str, Any],
    ) -> None:
        super().__init__(support_vectors.shape[1], num_classes, {**params, "gamma": float(gamma)})
        self.support_vectors_ = np.ascontiguousarray(support_vectors, dtype=np.float64)
        self.n_support_ = np.asarray(n_support, dtype=np.int64)
        self.dual_coef_ = np.asarray(dual_coef, dtype=np.float64)
        self.intercept_ = np.asarray(intercept, dtype=np.float64)
        self.fitted_classes_ = np.asarray(fitted_classes, dtype=np.int64)
        self.gamma_ = float(gamma)
        self._check_consistent()

    def _check_consistent(self) -> None:
        m, s = self.fitted_classes_.size, self.support_vectors_.shape[0]
        problems = []
        if self.n_support_.shape != (m,) or int(self.n_support_.sum()) != s:
            problems.append(f"n_support {self.n_support_.tolist()} does not add up to {s} support vectors")
        if self.dual_coef_.shape != (max(m - 1, 1), s):
            problems.append(f"dual_coef has shape {self.dual_coef_.shape}, expected ({max(m - 1, 1)}, {s})")
        if self.intercept_.shape != (max(m * (m - 1) // 2, 1),):
            problems.append(f"intercept has shape {self.intercept_.shape}, expected ({m * (m - 1) // 2},)")
        if m and (self.fitted_classes_.min() < 0 or self.fitted_classes_.max() >= self.num_classes_):
            problems.append(f"fitted classes {self.fitted_classes_.tolist()} outside 0..{self.num_classes_ - 1}")
        if not (np.isfinite(self.gamma_) and self.gamma_ > 0):
            problems.append(f"gamma must be a positive number, got {self.gamma_}")
        if problems:
            raise ModelFileError("inconsistent SVM arrays: " + "; ".join(problems))

    def _kernel(self, X: np.ndarray) -> np.ndarray:
        """RBF kernel ``(N, S)`` between ``X`` and the support vectors."""
        sv = self.support_vectors_
        sq = (X * X).sum(1)[:, None] + (sv * sv).sum(1)[None, :] - 2.0 * (X @ sv.T)
        return np.exp(-self.gamma_ * np.maximum(sq, 0.0))

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """One-vs-one decision values ``(N, M (M - 1) / 2)``; positive favours the lower class."""
        X = check_features(X, num_bands=self.num_bands_)
        kernel = self._kernel(X)
        starts = np.concatenate([[0], np.cumsum(self.n_support_)])
        m = self.fitted_classes_.size
        out = np.empty((X.shape[0], max(m * (m - 1) // 2, 1)))
        pair = 0
        for i in range(m):
            si = slice(starts[i], starts[i + 1])
            for j in range(i + 1, m):
                sj = slice(starts[j], starts[j + 1])
                out[:, pair] = (
                    kernel[:, si] @ self.dual_coef_[j - 1, si]
                    + kernel[:, sj] @ self.dual_coef_[i, sj]
                    + self.intercept_[pair]
                )
                pair += 1
        return out

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """One-vs-one vote shares ``(N, K)``; see Notes of the class."""
        m = self.fitted_classes_.size
        if m == 1:
            votes = np.ones((check_features(X, num_bands=self.num_bands_).shape[0], 1))
        else:
            decision = self.decision_function(X)
            votes = np.zeros((decision.shape[0], m))
            pair = 0
            for i in range(m):
                for j in range(i + 1, m):
                    wins_i = decision[:, pair] > 0
                    votes[:, i] += wins_i
                    votes[:, j] += ~wins_i
                    pair += 1
        proba = np.zeros((votes.shape[0], self.num_classes_))
        proba[:, self.fitted_classes_] = votes / votes.sum(axis=1, keepdims=True)
        return proba

    def _arrays(self) -> dict[str, np.ndarray]:
        return {
            "support_vectors": self.support_vectors_,
            "n_support": self.n_support_,
            "dual_coef": self.dual_coef_,
            "intercept": self.intercept_,
            "fitted_classes": self.fitted_classes_,
        }

    @classmethod
    def _from_arrays(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> RBFSVM:
        params = dict(meta["params"])
        if "gamma" not in params:
            raise ModelFileError("SVM meta params have no 'gamma'")
        return cls(
            arrays["support_vectors"], arrays["n_support"], arrays["dual_coef"], arrays["intercept"],
            arrays["fitted_classes"], gamma=params.pop("gamma"), num_classes=meta["num_classes"], params=params,
        )


def fit_svm(
    X: np.ndarray,
    y: np.ndarray,
    num_classes: int,
    *,
    seed: int,
    C_grid: Sequence[float] = DEFAULT_C_GRID,
    gamma_grid: Sequence[float] = DEFAULT_GAMMA_GRID,
    folds: int = 3,
    max_cv_samples: int = 1500,
    max_fit_samples: int = 5000,
) -> RBFSVM:
    """Fit an RBF-SVM, choosing ``C`` and ``gamma`` by stratified cross-validation on ``(X, y)``.

    Parameters
    ----------
    X : ndarray (N, C)
        Training features (checked finite by the caller, :func:`hsi.classical.fit_classical`).
    y : ndarray (N,)
        0-based labels ``< num_classes``.
    num_classes : int
        Columns of ``predict_proba``.
    seed : int
        Seed of the subsamples and of the fold assignment; same seed, same model.
    C_grid : sequence of float
        Values of ``C`` searched.
    gamma_grid : sequence of float
        Multiples of ``1 / (C * var(X))`` (scikit-learn's ``gamma="scale"``) searched.
    folds : int
        Stratified folds (fewer when the rarest class has fewer pixels; no search when it
        has one).
    max_cv_samples, max_fit_samples : int
        Stratified subsample sizes for the search and for the final fit (libsvm's cost
        grows faster than linearly with ``N``).
    """
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    C_grid = _positive_grid("C_grid", C_grid)
    gamma_grid = _positive_grid("gamma_grid", gamma_grid)
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise OptionError("folds", folds, "an integer >= 2")
    rng = np.random.default_rng(seed)
    scale = float(1.0 / (X.shape[1] * X.var())) if X.var() > 0 else 1.0
    cv_idx = stratified_subsample(y, max_cv_samples, rng)
    counts = np.bincount(y[cv_idx])
    n_folds = min(folds, int(counts[counts > 0].min()))
    params: dict[str, Any] = {"C_grid": list(C_grid), "gamma_grid": [g * scale for g in gamma_grid]}
    if n_folds >= 2 and np.count_nonzero(counts) >= 2 and len(C_grid) * len(gamma_grid) > 1:
        search = GridSearchCV(
            SVC(kernel="rbf"),
            {"C": list(C_grid), "gamma": [g * scale for g in gamma_grid]},
            cv=StratifiedKFold(n_folds, shuffle=True, random_state=seed),
            n_jobs=1,
        )
        search.fit(X[cv_idx], y[cv_idx])
        C, gamma = float(search.best_params_["C"]), float(search.best_params_["gamma"])
        params.update(cv_folds=n_folds, cv_samples=int(cv_idx.size), cv_accuracy=float(search.best_score_))
    else:  # too few pixels per class to cross-validate: the middle of the grid
        C, gamma = float(C_grid[len(C_grid) // 2]), float(gamma_grid[len(gamma_grid) // 2] * scale)
        params.update(cv_folds=0, cv_samples=int(cv_idx.size), cv_accuracy=None)
    fit_idx = stratified_subsample(y, max_fit_samples, rng)
    params.update(C=C, fit_samples=int(fit_idx.size), seed=int(seed))
    fitted = np.unique(y[fit_idx])
    if fitted.size == 1:  # libsvm needs two classes; a one-class model predicts that class
        return RBFSVM(X[fit_idx[:1]], np.array([1]), np.zeros((1, 1)), np.zeros(1), fitted, gamma, num_classes, params)
    svc = SVC(kernel="rbf", C=C, gamma=gamma).fit(X[fit_idx], y[fit_idx])
    return RBFSVM(
        svc.support_vectors_, svc.n_support_, svc.dual_coef_, svc.intercept_,
        svc.classes_, gamma, num_classes, params,
    )


def stratified_subsample(y: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted indices of at most ``size`` entries of ``y``, each class kept in proportion (>= 1 each)."""
    if y.size <= size:
        return np.arange(y.size)
    chosen = []
    for label in np.unique(y):
        members = np.flatnonzero(y == label)
        take = max(1, round(size * members.size / y.size))
        chosen.append(rng.choice(members, size=min(take, members.size), replace=False))
    return np.sort(np.concatenate(chosen))


def _positive_grid(name: str, values: Sequence[float]) -> tuple[float, ...]:
    try:
        grid = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise OptionError(name, values, "a non-empty list of positive numbers") from None
    if not grid or not all(np.isfinite(v) and v > 0 for v in grid):
        raise OptionError(name, values, "a non-empty list of positive numbers")
    return grid
