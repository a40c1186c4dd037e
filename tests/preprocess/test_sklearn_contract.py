"""The preprocessing estimators under scikit-learn's contract: check_estimator, y ignored, nested parameters."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline as SkPipeline
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import check_estimator

from hsi.errors import ArrayTypeError, OptionError, ShapeMismatchError
from hsi.preprocess import (
    PCA,
    FirstDerivative,
    NonFiniteFill,
    PerBandMinMax,
    PerBandStandardize,
    Pipeline,
    PixelNormalize,
    RemoveBands,
)
from hsi.preprocess._registry import transformer_classes

#: every preprocessing estimator, as check_estimator runs it (a pipeline of several kinds of step)
ESTIMATORS = {
    "PerBandMinMax": lambda: PerBandMinMax(),
    "PerBandStandardize": lambda: PerBandStandardize(),
    "PCA": lambda: PCA(n_components=2),
    "NonFiniteFill": lambda: NonFiniteFill(),
    "RemoveBands": lambda: RemoveBands(),
    "PixelNormalize": lambda: PixelNormalize(),
    "FirstDerivative": lambda: FirstDerivative(),
    "Pipeline": lambda: Pipeline([NonFiniteFill(), RemoveBands(), PixelNormalize("l2"), PerBandStandardize(),
                                  PCA(2)]),
}

_ONE_SPECTRUM = ("transform takes one spectrum of shape (C,): the bands are always the last axis, so a 1-D "
                 "array is not ambiguous; scikit-learn asks every 1-D input to be refused")

#: The checks of ``check_estimator`` that fail on purpose, by estimator: check name -> reason. The one list;
#: docs/splits.md ("scikit-learn's contract") lists the same checks with these reasons.
EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    name: {"check_fit2d_predict1d": _ONE_SPECTRUM} for name in ESTIMATORS
}
EXPECTED_FAILURES["Pipeline"]["check_estimators_overwrite_params"] = (
    "fit fits the steps it was given, in place: their fitted state is what the pipeline transforms with and "
    "saves (to_state, checkpoints); scikit-learn's own Pipeline does the same and lists the same failure"
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "splits.md"


def test_every_registered_transformer_is_checked():
    assert set(ESTIMATORS) == set(transformer_classes()) | {"Pipeline"}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_check_estimator_fails_exactly_the_listed_checks(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(ESTIMATORS[name](), expected_failed_checks=EXPECTED_FAILURES[name],
                                  on_fail=None, on_skip=None)
    failed = {r["check_name"]: str(r["exception"])[:300] for r in results if r["status"] == "failed"}
    assert failed == {}
    xfailed = {r["check_name"] for r in results if r["status"] == "xfail"}
    assert xfailed == set(EXPECTED_FAILURES[name])  # a listed check that now passes must leave the list
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    assert len(passed) >= 40


def test_the_docs_list_every_expected_failure():
    text = DOCS.read_text()
    section = text[text.index("### scikit-learn's contract"):]
    for checks in EXPECTED_FAILURES.values():
        for check in checks:
            assert f"`{check}`" in section


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_tags_say_what_the_estimators_do(name):
    est = ESTIMATORS[name]()
    tags = get_tags(est)
    assert tags.input_tags.allow_nan and tags.input_tags.three_d_array
    expected = ["float32", "float64"] if name == "NonFiniteFill" else ["float32"]
    assert tags.transformer_tags.preserves_dtype == expected
    x = np.random.default_rng(0).random((40, 6)) + 1.0
    out = est.fit(x).transform(x)
    assert out.dtype == (np.float64 if name == "NonFiniteFill" else np.float32)
    assert est.fit(x.astype(np.float32)).transform(x.astype(np.float32)).dtype == np.float32
    assert est.n_features_in_ == 6 and not hasattr(clone(est), "n_features_in_")


def _labelled(n: int = 90, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(N, 6) spectra of 3 classes (means far apart on three bands) and their integer labels 0, 1, 2."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    x = rng.normal(size=(n, 6)) * np.array([1.0, 2.0, 3.0, 1.0, 1.0, 1.0]) + 5.0
    x[:, :3] += 8.0 * np.eye(3)[y]
    return x, y


@pytest.mark.parametrize("labels", ["binary", "three classes"])
def test_in_a_sklearn_pipeline_integer_labels_do_not_pick_the_training_rows(labels):
    x, y = _labelled()
    if labels == "binary":
        y = (y == 1).astype(np.int64)
    pipe = SkPipeline([("scale", PerBandStandardize()), ("clf", LogisticRegression())]).fit(x, y)
    scaler = pipe.named_steps["scale"]
    np.testing.assert_array_equal(scaler.mean_, x.mean(axis=0))  # every row, not the rows of class 1
    assert scaler.n_samples_seen_ == x.shape[0]
    assert not np.allclose(scaler.mean_, x[y == 1].mean(axis=0))
    assert pipe.score(x, y) > 0.9


def test_grid_search_over_a_nested_parameter_of_the_hsi_pipeline():
    x, y = _labelled(seed=1)
    prep = Pipeline([NonFiniteFill(), PerBandStandardize(), PCA(5)])
    search = GridSearchCV(SkPipeline([("prep", prep), ("clf", LogisticRegression())]),
                          {"prep__pca__n_components": [1, 3]}, cv=3).fit(x, y)
    scores = dict(zip(search.cv_results_["param_prep__pca__n_components"], search.cv_results_["mean_test_score"]))
    assert set(scores) == {1, 3} and scores[3] > scores[1]  # three informative bands need three components
    assert search.best_params_ == {"prep__pca__n_components": 3}
    best = search.best_estimator_.named_steps["prep"]
    assert best.named_steps["pca"].n_components_ == 3 and best.n_bands_out_ == 3
    assert prep.named_steps["pca"].n_components == 5 and not prep.is_fitted  # the search worked on clones


def test_nested_parameters_of_the_hsi_pipeline():
    pipe = Pipeline([NonFiniteFill(), PixelNormalize("l2"), PixelNormalize("mean"), PCA(5)])
    assert list(pipe.named_steps) == ["nonfinitefill", "pixelnormalize-1", "pixelnormalize-2", "pca"]
    deep = pipe.get_params(deep=True)
    assert deep["pca__n_components"] == 5 and deep["pixelnormalize-2__method"] == "mean"
    assert deep["pca"] is pipe.steps[3] and set(pipe.get_params(deep=False)) == {"steps"}
    assert pipe.set_params(pca__n_components=2, **{"pixelnormalize-2__method": "l2"}) is pipe
    assert pipe.steps[3].n_components == 2 and pipe.steps[2].method == "l2"
    assert clone(pipe).get_params(deep=True)["pca__n_components"] == 2
    x = np.random.default_rng(2).random((50, 8)) + 0.5
    assert pipe.fit(x).n_bands_out_ == 2
    pipe.set_params(pca=PCA(3))  # a step replaced by name
    assert pipe.fit(x).transform(x).shape == (50, 3)


def test_unknown_nested_parameters_are_clear_errors():
    pipe = Pipeline([PerBandStandardize(), PCA(5)])
    with pytest.raises(OptionError, match=r"Invalid parameter 'pcaa__n_components'.*'perbandstandardize', 'pca'"):
        pipe.set_params(pcaa__n_components=2)
    with pytest.raises(ValueError, match="Invalid parameter 'n_component' for estimator PCA"):
        pipe.set_params(pca__n_component=2)
    with pytest.raises(OptionError, match="Invalid parameter 'anything'"):
        Pipeline([]).set_params(anything=1)


def test_a_training_mask_goes_as_sample_mask_and_a_mask_as_y_is_refused(cube_and_mask):
    cube, mask = cube_and_mask
    masked = PerBandStandardize().fit(cube, sample_mask=mask)
    np.testing.assert_array_equal(masked.mean_, cube[mask].astype(np.float64).mean(axis=0))
    for est in (PerBandStandardize(), PCA(2), NonFiniteFill(), RemoveBands(), PixelNormalize(), Pipeline([])):
        with pytest.raises(ShapeMismatchError, match=r"y has the shape \(30, 25\).*sample_mask=mask"):
            est.fit(cube, mask)
    pixels, rows = cube.reshape(-1, 12), mask.reshape(-1)
    ignored = PerBandStandardize().fit(pixels, rows.astype(np.int64))  # (N, C) with any y: y is ignored
    np.testing.assert_array_equal(ignored.mean_, PerBandStandardize().fit(pixels).mean_)
    sk = SkPipeline([("scale", PerBandMinMax()), ("pca", PCA(2))]).fit(cube, scale__sample_mask=mask,
                                                                       pca__sample_mask=mask)
    hsi = Pipeline([PerBandMinMax(), PCA(2)]).fit(cube, sample_mask=mask)
    np.testing.assert_array_equal(sk.named_steps["scale"].data_min_, hsi.steps[0].data_min_)
    with sklearn.config_context(enable_metadata_routing=True):  # the mask given once, routed to the steps
        routed = SkPipeline([("scale", PerBandMinMax().set_fit_request(sample_mask=True)),
                             ("pca", PCA(2).set_fit_request(sample_mask=True))]).fit(cube, sample_mask=mask)
    np.testing.assert_array_equal(routed.transform(cube), sk.transform(cube))
    np.testing.assert_array_equal(routed.named_steps["scale"].data_min_, cube[mask].min(axis=0))


def test_inputs_scikit_learn_refuses_are_refused_by_name():
    from scipy import sparse

    with pytest.raises(ArrayTypeError, match="PerBandMinMax.partial_fit: sparse input is not supported"):
        PerBandMinMax().fit(sparse.csr_matrix(np.ones((3, 2))))
    with pytest.raises(ArrayTypeError, match="PCA.fit: Complex data not supported"):
        PCA(1).fit(np.ones((3, 2), dtype=complex))
    with pytest.raises(ShapeMismatchError, match=r"RemoveBands.fit: .*found shape \(4,\)"):
        RemoveBands().fit(np.ones(4))
    with pytest.raises(ValueError, match=re.escape("0 feature(s) (shape=(3, 0)) while a minimum of 1")):
        PixelNormalize().fit(np.ones((3, 0)))
    fitted = PerBandStandardize().fit(np.ones((3, 4)))
    with pytest.raises(ValueError, match="X has 2 features, but PerBandStandardize is expecting 4 features"):
        fitted.transform(np.ones((3, 2)))
    assert fitted.transform(np.ones(4)).shape == (4,)  # one spectrum
