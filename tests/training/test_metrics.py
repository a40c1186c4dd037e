"""OA / AA / kappa from a confusion matrix agree with scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score, cohen_kappa_score, confusion_matrix

from hsi.training.metrics import scores_from_confusion


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scores_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    k = 6
    y_true = rng.integers(0, k, 500)
    # A noisy classifier: right 60 % of the time, otherwise a random class.
    y_pred = np.where(rng.random(500) < 0.6, y_true, rng.integers(0, k, 500))
    scores = scores_from_confusion(confusion_matrix(y_true, y_pred, labels=range(k)))
    assert scores["oa"] == pytest.approx(accuracy_score(y_true, y_pred))
    assert scores["aa"] == pytest.approx(balanced_accuracy_score(y_true, y_pred))
    assert scores["kappa"] == pytest.approx(cohen_kappa_score(y_true, y_pred))
    recalls = confusion_matrix(y_true, y_pred, labels=range(k), normalize="true").diagonal()
    np.testing.assert_allclose(scores["per_class"], recalls)
    assert scores["support"] == np.bincount(y_true, minlength=k).tolist()


def test_class_absent_from_truth_is_left_out_of_aa():
    # Class 2 never occurs in the truth but is predicted once: AA averages classes 0 and 1 only,
    # as balanced_accuracy_score does, and its per-class entry is None rather than 0.
    y_true = np.array([0, 0, 1, 1])
    y_pred = np.array([0, 2, 1, 1])
    scores = scores_from_confusion(confusion_matrix(y_true, y_pred, labels=range(3)))
    assert scores["aa"] == pytest.approx(0.75)
    assert scores["per_class"] == [0.5, 1.0, None]


def test_perfect_and_empty():
    perfect = scores_from_confusion(np.diag([3, 4, 5]))
    assert (perfect["oa"], perfect["aa"], perfect["kappa"]) == (1.0, 1.0, 1.0)
    empty = scores_from_confusion(np.zeros((3, 3)))
    assert np.isnan(empty["oa"]) and empty["per_class"] == [None, None, None]
    with pytest.raises(ValueError, match="square"):
        scores_from_confusion(np.zeros((2, 3)))
