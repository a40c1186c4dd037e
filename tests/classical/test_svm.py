"""RBF-SVM baseline: own prediction equals scikit-learn's, CV on training pixels, seeded, safe files."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from hsi.classical import CLASSICAL_MODELS, RBFSVM, fit_classical, load_classical
from hsi.errors import BandMismatchError, ModelFileError, OptionError


@pytest.fixture(scope="module")
def svm(blobs) -> RBFSVM:
    X, y, _, _ = blobs
    return fit_classical("svm", X, y, seed=0)


def test_names():
    assert CLASSICAL_MODELS == ("svm", "rf")


def test_prediction_equals_sklearn_fitted_with_the_chosen_parameters(svm, blobs):
    X, y, X_test, _ = blobs
    reference = SVC(kernel="rbf", C=svm.params_["C"], gamma=svm.params_["gamma"], decision_function_shape="ovo")
    reference.fit(X.astype(np.float64), y)
    np.testing.assert_allclose(svm.decision_function(X_test), reference.decision_function(X_test), atol=1e-9)
    np.testing.assert_array_equal(svm.predict(X_test), reference.predict(X_test))
    assert svm.support_vectors_.shape[0] > 20  # a non-trivial model: many support vectors take part


def test_parameters_come_from_the_grid_by_cross_validation(svm, blobs):
    X, y, _, _ = blobs
    assert svm.params_["cv_folds"] == 3 and svm.params_["cv_samples"] == len(y)
    assert svm.params_["C"] in svm.params_["C_grid"]
    assert svm.params_["gamma"] in svm.params_["gamma_grid"]
    scale = 1.0 / (X.shape[1] * X.astype(np.float64).var())
    np.testing.assert_allclose(svm.params_["gamma_grid"], [0.3 * scale, scale, 3.0 * scale])
    # The search must pick the best of its grid: a one-point grid at the chosen values
    # gives the same model, a one-point grid elsewhere a different one.
    again = fit_classical("svm", X, y, seed=0, C_grid=[svm.params_["C"]], gamma_grid=[svm.params_["gamma"] / scale])
    np.testing.assert_allclose(again.dual_coef_, svm.dual_coef_)


def test_same_seed_same_model_and_probabilities_are_vote_shares(svm, blobs):
    X, y, X_test, _ = blobs
    again = fit_classical("svm", X, y, seed=0)
    np.testing.assert_array_equal(again.support_vectors_, svm.support_vectors_)
    proba = svm.predict_proba(X_test)
    assert proba.shape == (len(X_test), 4)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_allclose(proba * 6, np.round(proba * 6))  # 6 pairs, whole votes
    np.testing.assert_array_equal(proba.argmax(1), svm.predict(X_test))


def test_large_training_sets_are_subsampled_per_class(blobs):
    X, y, _, _ = blobs
    model = fit_classical("svm", X, y, seed=1, max_cv_samples=100, max_fit_samples=200, C_grid=[10.0])
    assert model.params_["cv_samples"] == 100 and model.params_["fit_samples"] == 200
    assert sorted(model.fitted_classes_.tolist()) == [0, 1, 2, 3]


def test_classes_absent_from_training_get_zero_columns(blobs):
    X, y, X_test, _ = blobs
    keep = y != 2
    model = fit_classical("svm", X[keep], y[keep], seed=0, num_classes=5)
    proba = model.predict_proba(X_test)
    assert proba.shape == (len(X_test), 5)
    assert not proba[:, [2, 4]].any()
    assert set(model.predict(X_test)) <= {0, 1, 3}


def test_save_load_roundtrip_without_pickle(svm, blobs, tmp_path):
    _, _, X_test, _ = blobs
    path = svm.save(tmp_path / "svm")
    assert path.name == "svm.npz"
    with np.load(path, allow_pickle=False) as data:  # every entry is a plain array
        assert all(data[k].dtype != object for k in data.files)
    loaded = load_classical(path)
    assert isinstance(loaded, RBFSVM) and loaded.params_ == svm.params_
    np.testing.assert_array_equal(loaded.predict_proba(X_test), svm.predict_proba(X_test))


def test_bad_files_are_named(svm, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        load_classical(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ModelFileError, match="junk.npz"):
        load_classical(junk)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, weights=np.zeros(3))
    with pytest.raises(ModelFileError, match="no 'meta' entry"):
        load_classical(foreign)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, meta=np.array([{"format": "hsi.classical"}], dtype=object))
    with pytest.raises(ModelFileError, match="pickled.npz"):
        load_classical(pickled)
    path = svm.save(tmp_path / "cut.npz")
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["intercept"] = arrays["intercept"][:-1]
    np.savez(path, **arrays)
    with pytest.raises(ModelFileError, match=r"cut.npz.*intercept has shape"):
        load_classical(path)


def test_bad_input_is_refused_early(svm, blobs):
    X, y, X_test, _ = blobs
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"1 non-finite values in 1 pixels \(first row 3\)"):
        fit_classical("svm", bad, y, seed=0)
    with pytest.raises(BandMismatchError, match="5 bands.*fitted on 6"):
        svm.predict(X_test[:, :5])
    with pytest.raises(ValueError, match="label 4 but num_classes is 4"):
        fit_classical("svm", X, np.where(y == 3, 4, y), seed=0, num_classes=4)
    with pytest.raises(OptionError, match="model: 'knn'"):
        fit_classical("knn", X, y, seed=0)
    with pytest.raises(OptionError, match="model_options: 'kernel': options of svm"):
        fit_classical("svm", X, y, seed=0, kernel="linear")
    with pytest.raises(OptionError, match="C_grid"):
        fit_classical("svm", X, y, seed=0, C_grid=[0.0])
