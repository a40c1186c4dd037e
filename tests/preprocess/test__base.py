"""BandTransformer as a scikit-learn estimator: clone, get/set_params, repr, check_is_fitted, set_output, state."""

from __future__ import annotations

import inspect
import json
import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import NotFittedError as SkNotFittedError
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from hsi.errors import NotFittedError
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

#: one instance of every registered transformer, each with non-default parameters where it has any
EXAMPLES = {
    "PerBandMinMax": lambda: PerBandMinMax(feature_range=(-1.0, 2.0), clip=True),
    "PerBandStandardize": lambda: PerBandStandardize(),
    "PCA": lambda: PCA(n_components=3, whiten=True, random_state=5, max_fit_pixels=200),
    "RemoveBands": lambda: RemoveBands(indices=[0, -1], wavelength_ranges=[(1300.0, 1500.0)]),
    "NonFiniteFill": lambda: NonFiniteFill(strategy="mean"),
    "PixelNormalize": lambda: PixelNormalize(method="l2"),
    "FirstDerivative": lambda: FirstDerivative(),
}
WAVELENGTHS = np.linspace(400.0, 2500.0, 12)


def _state(t) -> str:
    return json.dumps(t.to_state())


def test_every_registered_transformer_has_an_example():
    assert set(EXAMPLES) == set(transformer_classes())


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_is_a_scikit_learn_transformer(name):
    t = EXAMPLES[name]()
    assert isinstance(t, BaseEstimator) and isinstance(t, TransformerMixin)
    assert get_tags(t).transformer_tags is not None


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_clone_is_unfitted_with_the_same_parameters(name, cube_and_mask):
    cube, mask = cube_and_mask
    fitted = EXAMPLES[name]().fit(cube, sample_mask=mask, wavelengths=WAVELENGTHS)
    copy = clone(fitted)
    assert type(copy) is type(fitted) and copy is not fitted
    assert copy.get_params() == fitted.get_params()
    assert not copy.is_fitted
    with pytest.raises(NotFittedError):
        copy.transform(cube)
    assert _state(copy.fit(cube, sample_mask=mask, wavelengths=WAVELENGTHS)) == _state(fitted)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_get_params_set_params_round_trip(name):
    t = EXAMPLES[name]()
    names = [p for p in inspect.signature(type(t)).parameters]
    params = t.get_params()
    assert sorted(params) == sorted(names)
    assert all(params[k] is getattr(t, k) for k in names)  # stored unchanged, under the same name
    rebuilt = type(t)(**params)
    assert rebuilt.get_params() == params
    target = clone(t)
    assert target.set_params(**params) is target and target.get_params() == params
    with pytest.raises(ValueError, match="Invalid parameter"):
        t.set_params(no_such_option=1)


def test_set_params_changes_what_fit_learns(cube_and_mask):
    cube, mask = cube_and_mask
    scaler = PerBandMinMax().set_params(feature_range=(-1.0, 3.0))
    out = scaler.fit(cube, sample_mask=mask).transform(cube[mask])
    np.testing.assert_allclose([out.min(), out.max()], [-1.0, 3.0], atol=1e-5)
    pca = PCA(5).set_params(n_components=2).fit(cube, sample_mask=mask)
    assert pca.n_components_ == 2


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_state_keeps_parameters_in_signature_order(name):
    """The JSON state lists parameters as the constructor does (get_params sorts them): saved files unchanged."""
    t = EXAMPLES[name]()
    assert list(t.to_state()["params"]) == list(inspect.signature(type(t)).parameters)


#: the state this pipeline had before the transformers became scikit-learn estimators (written by that code)
GOLDEN_STATE = (
    '{"format": "hsi.preprocess.Pipeline", "format_version": 1, "steps": [{"class": "NonFiniteFill", "params": '
    '{"strategy": "median"}, "fitted": {"n_bands_in_": 3, "n_bands_out_": 3, "fill_values_": {"__ndarray__": "f8", '
    '"shape": [3], "data": [2.0, 3.0, 7.0]}}}, {"class": "RemoveBands", "params": {"indices": [2], '
    '"wavelength_ranges": null, "bbl": null}, "fitted": {"n_bands_in_": 3, "n_bands_out_": 2, "keep_": '
    '{"__ndarray__": "i8", "shape": [2], "data": [0, 1]}, "removed_": {"__ndarray__": "i8", "shape": [1], "data": '
    '[2]}, "wavelengths_out_": null}}, {"class": "PerBandMinMax", "params": {"feature_range": [-1.0, 1.0], "clip": '
    'false}, "fitted": {"n_bands_in_": 2, "n_bands_out_": 2, "n_samples_seen_": 3, "data_min_": {"__ndarray__": '
    '"f8", "shape": [2], "data": [0.0, 1.0]}, "data_max_": {"__ndarray__": "f8", "shape": [2], "data": [4.0, 5.0]}, '
    '"data_range_": {"__ndarray__": "f8", "shape": [2], "data": [4.0, 4.0]}, "scale_": {"__ndarray__": "f8", '
    '"shape": [2], "data": [0.5, 0.5]}}}], "fitted": {"n_bands_in_": 3, "n_bands_out_": 2}}'
)


def test_state_is_byte_identical_to_the_earlier_format():
    cube = np.array([[[0.0, 1.0, 7.0], [2.0, 3.0, 7.0]], [[4.0, 5.0, 7.0], [6.0, 8.0, 7.0]]])
    mask = np.array([[True, True], [True, False]])
    pipe = Pipeline([NonFiniteFill(), RemoveBands(indices=[2]), PerBandMinMax(feature_range=(-1.0, 1.0))])
    assert _state(pipe.fit(cube, sample_mask=mask)) == GOLDEN_STATE
    assert _state(Pipeline.from_state(json.loads(GOLDEN_STATE))) == GOLDEN_STATE


def test_repr_is_scikit_learns():
    assert repr(PCA(3, whiten=True)) == "PCA(n_components=3, whiten=True)"
    assert repr(PerBandStandardize()) == "PerBandStandardize()"
    assert repr(Pipeline([NonFiniteFill(), PerBandMinMax(clip=True)])) == (
        "Pipeline(steps=[NonFiniteFill(), PerBandMinMax(clip=True)])")


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_check_is_fitted_agrees_with_not_fitted_error(name, cube_and_mask):
    cube, mask = cube_and_mask
    t = EXAMPLES[name]()
    with pytest.raises(SkNotFittedError):
        check_is_fitted(t)
    with pytest.raises(NotFittedError):
        t.transform(cube)
    t.fit(cube, sample_mask=mask, wavelengths=WAVELENGTHS)
    check_is_fitted(t)
    t.transform(cube)
    fitted = [k for k in vars(t) if k.endswith("_") and not k.startswith("_")]
    assert sorted(fitted) == sorted(t._fitted_attrs)  # learned attributes, and only they, end in "_"


def test_check_is_fitted_follows_partial_fit_and_the_pipeline(cube_and_mask):
    cube, mask = cube_and_mask
    check_is_fitted(PerBandStandardize().partial_fit(cube, sample_mask=mask))
    steps = [PerBandMinMax().fit(cube, sample_mask=mask)]
    pipe = Pipeline(steps)  # fitted steps, but the pipeline itself was never fitted
    with pytest.raises(SkNotFittedError):
        check_is_fitted(pipe)
    with pytest.raises(NotFittedError):
        pipe.transform(cube)
    check_is_fitted(pipe.fit(cube, sample_mask=mask))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_fit_transform_with_a_sample_mask_equals_fit_then_transform(name, cube_and_mask):
    cube, mask = cube_and_mask
    once = EXAMPLES[name]().fit_transform(cube, sample_mask=mask, wavelengths=WAVELENGTHS)
    twice = EXAMPLES[name]().fit(cube, sample_mask=mask, wavelengths=WAVELENGTHS).transform(cube)
    np.testing.assert_array_equal(once, twice)
    assert once.shape[:2] == cube.shape[:2]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_set_output_config_leaves_cubes_as_arrays(name, cube_and_mask):
    cube, mask = cube_and_mask
    plain = EXAMPLES[name]().fit(cube, sample_mask=mask, wavelengths=WAVELENGTHS).transform(cube)
    with sklearn.config_context(transform_output="pandas"):
        t = EXAMPLES[name]()
        out = t.fit_transform(cube, sample_mask=mask, wavelengths=WAVELENGTHS)
        again = t.transform(cube)
    for result in (out, again):
        assert type(result) is np.ndarray and result.ndim == 3
        np.testing.assert_array_equal(result, plain)
    assert not hasattr(t, "set_output")  # a cube has no table form: nothing to configure


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_pickle_round_trip_keeps_the_fit_and_adds_no_version_stamp(name, cube_and_mask):
    cube, mask = cube_and_mask
    t = EXAMPLES[name]().fit(cube, sample_mask=mask, wavelengths=WAVELENGTHS)
    assert "_sklearn_version" not in t.__getstate__()  # no version warning when scikit-learn is upgraded
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = pickle.loads(pickle.dumps(t))
    assert _state(back) == _state(t)
    np.testing.assert_array_equal(back.transform(cube), t.transform(cube))
