"""Random-forest baseline: own traversal equals scikit-learn's predict_proba; safe files."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from hsi.classical import RandomForest, fit_classical, load_classical
from hsi.errors import ModelFileError, OptionError


@pytest.fixture(scope="module")
def forest(blobs) -> RandomForest:
    X, y, _, _ = blobs
    return fit_classical("rf", X, y, seed=3, n_estimators=25)


def test_traversal_equals_sklearn(forest, blobs):
    X, y, X_test, _ = blobs
    reference = RandomForestClassifier(n_estimators=25, random_state=3, n_jobs=1).fit(X, y)
    # Points on thresholds and training points exercise the "<=" and float32 rounding.
    probe = np.concatenate([X_test, X, np.round(X_test, 1)])
    np.testing.assert_allclose(forest.predict_proba(probe), reference.predict_proba(probe), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(forest.predict(probe), reference.predict(probe))
    assert forest.roots_.size == 25 and forest.left_.size > 25 * 10


def test_same_seed_same_forest(forest, blobs):
    X, y, _, _ = blobs
    again = fit_classical("rf", X, y, seed=3, n_estimators=25)
    np.testing.assert_array_equal(again.threshold_, forest.threshold_)
    other = fit_classical("rf", X, y, seed=4, n_estimators=25)
    assert other.threshold_.shape != forest.threshold_.shape or not np.array_equal(other.threshold_, forest.threshold_)


def test_save_load_roundtrip(forest, blobs, tmp_path):
    _, _, X_test, _ = blobs
    loaded = load_classical(forest.save(tmp_path / "rf.npz"))
    assert isinstance(loaded, RandomForest)
    np.testing.assert_array_equal(loaded.predict_proba(X_test), forest.predict_proba(X_test))


def test_cyclic_or_out_of_range_trees_are_refused(forest, tmp_path):
    path = forest.save(tmp_path / "rf.npz")
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    inner = np.flatnonzero(arrays["left"] >= 0)[1]
    arrays["left"][inner] = inner  # a node that is its own child would loop for ever
    np.savez(path, **arrays)
    with pytest.raises(ModelFileError, match="children must point forward"):
        load_classical(path)


def test_bad_options(blobs):
    X, y, _, _ = blobs
    with pytest.raises(OptionError, match="n_estimators: 0"):
        fit_classical("rf", X, y, seed=0, n_estimators=0)
    with pytest.raises(OptionError, match="max_features"):
        fit_classical("rf", X, y, seed=0, max_features="all")
