"""Per-pixel spectral normalisation: gain and offset invariance, safety, in place, state, pipeline."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hsi.errors import BandMismatchError, OptionError, ShapeMismatchError, WavelengthError
from hsi.preprocess import (
    NORMALIZE_METHODS,
    PCA,
    FirstDerivative,
    NonFiniteFill,
    PerBandMinMax,
    PerBandStandardize,
    Pipeline,
    PixelNormalize,
    RemoveBands,
    make_pipeline,
)
from hsi.preprocess._base import nodata_mask

WL = np.linspace(400.0, 2500.0, 12)


@pytest.fixture
def spectra() -> np.ndarray:
    """(7, 5, 12) positive float32 spectra of varied brightness and shape."""
    rng = np.random.default_rng(4)
    shape = 1.0 + np.sin(np.linspace(0, 3, 12)) * rng.random((7, 5, 1))
    return (shape * rng.uniform(50, 5000, (7, 5, 1))).astype(np.float32)


def _fit(step, x, wavelengths=None):
    return step.fit(x, None, wavelengths=wavelengths)


@pytest.mark.parametrize("method", ["mean", "l2"])
def test_pixel_normalize_removes_any_positive_gain(spectra, method):
    step = _fit(PixelNormalize(method), spectra)
    ref = step.transform(spectra)
    assert ref.dtype == np.float32 and ref.shape == spectra.shape
    for gain in (1e-3, 0.37, 10.0, 2.5e4):
        scaled = (spectra.astype(np.float64) * gain).astype(np.float32)
        np.testing.assert_allclose(step.transform(scaled), ref, rtol=4e-7, atol=0)
    # the divisor is the documented one, per pixel
    x = spectra.astype(np.float64)
    d = x.mean(-1) if method == "mean" else np.sqrt((x**2).mean(-1))
    np.testing.assert_allclose(ref, x / d[..., None], rtol=3e-7)
    # per-pixel gains too (each pixel its own illumination)
    gains = np.random.default_rng(0).uniform(0.1, 10, spectra.shape[:-1] + (1,))
    np.testing.assert_allclose(step.transform((spectra * gains).astype(np.float32)), ref, rtol=4e-7)


def test_pixel_normalize_shapes_and_dtypes(spectra):
    step = _fit(PixelNormalize("l2"), spectra)
    flat = spectra.reshape(-1, 12)
    np.testing.assert_array_equal(step.transform(flat), step.transform(spectra).reshape(-1, 12))
    np.testing.assert_array_equal(step.transform(flat[3]), step.transform(flat)[3])
    wide = step.transform(spectra.astype(np.float64))
    assert wide.dtype == np.float32
    np.testing.assert_allclose(wide, step.transform(spectra), rtol=3e-7)
    ints = np.arange(1, 25, dtype=np.uint16).reshape(2, 12)
    np.testing.assert_allclose(step.transform(ints), _fit(PixelNormalize("l2"), flat)
                               .transform(ints.astype(np.float32)), rtol=3e-7)
    with pytest.raises(BandMismatchError, match="expected 12 bands"):
        step.transform(spectra[..., :5])
    with pytest.raises(OptionError, match="method"):
        PixelNormalize("max").fit(spectra)


def test_pixel_normalize_is_chunked_consistently(monkeypatch, spectra):
    import hsi.preprocess.spectral as spectral

    step = _fit(PixelNormalize("mean"), spectra)
    whole = step.transform(spectra)
    monkeypatch.setattr(spectral, "_CHUNK_VALUES", 25)  # two pixels per chunk
    np.testing.assert_array_equal(step.transform(spectra), whole)


@pytest.mark.parametrize("method", ["mean", "l2"])
def test_degenerate_spectra_stay_finite(method):
    tiny = np.float32(1e-40)  # a subnormal float32
    x = np.array([[0.0] * 4,                 # zero spectrum
                  [1.0, -1.0, 2.0, -2.0],     # mean exactly 0
                  [3e38, -3e38, 1.0, -1.0],   # huge values that cancel
                  [1e-7, -1e-7, 1e-7, -0.9999999e-7],  # mean almost cancelling
                  [tiny, tiny, tiny, tiny],   # divisor below the smallest normal float32
                  [-1.0, -2.0, -3.0, -4.0],   # negative brightness
                  [2.0, 2.0, 4.0, 4.0]], dtype=np.float32)
    step = _fit(PixelNormalize(method), x)
    y = step.transform(x)
    assert np.isfinite(y).all()
    np.testing.assert_array_equal(y[0], 0.0)  # divided by 1
    if method == "mean":
        for row in (1, 2, 3, 4, 5):  # unusable divisors: the spectrum is left as it is
            np.testing.assert_array_equal(y[row], x[row])
        np.testing.assert_allclose(y[6], [2 / 3, 2 / 3, 4 / 3, 4 / 3], rtol=1e-7)
    else:
        np.testing.assert_array_equal(y[4], x[4])
        np.testing.assert_allclose(y[1], x[1] / np.sqrt(2.5), rtol=1e-7)
    # non-finite input is passed through, never spread to the other pixels
    bad = x.copy()
    bad[6, 1] = np.nan
    z = step.transform(bad)
    np.testing.assert_array_equal(z[:6], y[:6])
    assert np.isnan(z[6, 1]) and np.isfinite(np.delete(z[6], 1)).all()


@pytest.mark.parametrize("method", ["mean", "l2"])
def test_out_in_place_equals_the_copy(spectra, method):
    step = _fit(PixelNormalize(method), spectra)
    assert step.in_place
    ref = step.transform(spectra)
    block = spectra.copy()
    assert step.transform(block, out=block) is block
    np.testing.assert_array_equal(block, ref)
    # a non-contiguous out (a transposed view) receives the same values
    strided = np.empty((12, 5, 7), np.float32).transpose(2, 1, 0)
    np.testing.assert_array_equal(step.transform(spectra, out=strided), ref)
    with pytest.raises(ShapeMismatchError, match="float32 array of shape"):
        step.transform(spectra, out=np.empty(spectra.shape, np.float64))
    # inside an in-place pipeline (the inference path)
    pipe = Pipeline([NonFiniteFill(), PixelNormalize(method), PerBandMinMax()]).fit(spectra)
    assert pipe.in_place
    ref = pipe.transform(spectra)
    block = spectra.copy()
    assert pipe.transform(block, out=block) is block
    np.testing.assert_array_equal(block, ref)


def test_derivative_removes_an_offset(spectra):
    for wl in (None, WL):
        step = _fit(FirstDerivative(), spectra, wl)
        ref = step.transform(spectra)
        assert ref.shape == spectra.shape[:-1] + (11,) and ref.dtype == np.float32
        shifted = (spectra.astype(np.float64) + 123.0).astype(np.float32)
        # the only difference is the rounding of x + 123 in float32 (half an ulp of ~5000)
        np.testing.assert_allclose(step.transform(shifted), ref, atol=5e-4 / (1 if wl is None else 190))
    per_pixel = spectra - np.arange(35, dtype=np.float32).reshape(7, 5, 1)
    np.testing.assert_allclose(step.transform(per_pixel), step.transform(spectra), atol=3e-6)


def test_derivative_of_a_linear_spectrum_is_its_slope_per_nm():
    wl = np.array([400.0, 410.0, 425.0, 445.0, 450.0, 500.0])  # uneven steps
    slope = 0.0125  # per nm
    x = (3.0 + slope * wl).astype(np.float32)[None, :]
    step = FirstDerivative().fit(x, wavelengths=wl)
    np.testing.assert_allclose(step.transform(x), [[slope] * 5], rtol=2e-4)
    np.testing.assert_allclose(step.transform(x.astype(np.float64)), [[slope] * 5], rtol=1e-6)
    np.testing.assert_array_equal(step.wavelengths_out_, [405.0, 417.5, 435.0, 447.5, 475.0])
    np.testing.assert_array_equal(step.step_, [10.0, 15.0, 20.0, 5.0, 50.0])
    # without wavelengths: the plain difference
    plain = FirstDerivative().fit(x)
    np.testing.assert_allclose(plain.transform(x), [np.diff(x[0].astype(np.float64))], rtol=1e-6)
    assert plain.step_ is None and plain.wavelengths_out_ is None
    # decreasing wavelengths are still per nm
    back = FirstDerivative().fit(x[:, ::-1], wavelengths=wl[::-1])
    np.testing.assert_allclose(back.transform(x[:, ::-1]), [[slope] * 5], rtol=2e-4)
    out = np.empty((1, 5), np.float32)
    assert step.transform(x, out=out) is out
    np.testing.assert_array_equal(out, step.transform(x))


def test_derivative_checks():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(WavelengthError, match="4"):
        FirstDerivative().fit(x, wavelengths=[1.0, 2.0, 3.0])
    for wl in ([1.0, 2.0, 2.0, 3.0], [1.0, 3.0, 2.0, 4.0], [1.0, np.nan, 3.0, 4.0]):
        with pytest.raises(WavelengthError, match="strictly"):
            FirstDerivative().fit(x, wavelengths=wl)
    with pytest.raises(BandMismatchError, match="at least 2"):
        FirstDerivative().fit(np.ones((3, 1)))
    assert not FirstDerivative.in_place
    assert np.isfinite(FirstDerivative().fit(x).transform(np.zeros((2, 4), np.float32))).all()


def test_zero_cube_and_nan_free_output_through_every_normalize():
    rng = np.random.default_rng(5)
    cube = rng.uniform(0, 900, (6, 5, 12)).astype(np.float32)
    cube[0, 0] = 0.0  # a dead pixel
    cube[1, 2, 3] = np.nan  # filled first
    for normalize in NORMALIZE_METHODS:
        pipe = make_pipeline("standardize", fill_nonfinite="median", normalize=normalize)
        mask = nodata_mask(cube)
        pipe.fit(cube, sample_mask=~mask, wavelengths=WL)
        y = pipe.transform(cube)
        assert np.isfinite(y).all(), normalize


def _assert_same_pipeline(a: Pipeline, b: Pipeline, cube: np.ndarray) -> None:
    assert json.dumps(a.to_state()) == json.dumps(b.to_state())
    np.testing.assert_array_equal(a.transform(cube), b.transform(cube))


def test_state_round_trip_is_bit_identical(cube_and_mask, tmp_path):
    cube, mask = cube_and_mask
    cube = np.abs(cube) + 1.0
    pipe = Pipeline([PixelNormalize("l2"), PixelNormalize("mean"), FirstDerivative(),
                     PerBandStandardize()]).fit(cube, sample_mask=mask, wavelengths=WL)
    again = Pipeline.from_state(json.loads(json.dumps(pipe.to_state())))
    _assert_same_pipeline(pipe, again, cube)
    assert again[0].method == "l2" and again[1].method == "mean"
    np.testing.assert_array_equal(again[2].step_, np.diff(WL))
    loaded = Pipeline.load(pipe.save(tmp_path / "spectral"))
    _assert_same_pipeline(pipe, loaded, cube)
    # a single transformer, and a derivative fitted without wavelengths (None state)
    plain = FirstDerivative().fit(cube)
    restored = FirstDerivative.from_state(json.loads(json.dumps(plain.to_state())))
    assert restored.step_ is None
    np.testing.assert_array_equal(restored.transform(cube), plain.transform(cube))
    plain_pipe = Pipeline([FirstDerivative()]).fit(cube, sample_mask=mask)
    _assert_same_pipeline(plain_pipe, Pipeline.load(plain_pipe.save(tmp_path / "plain")), cube)
    assert plain_pipe[0].step_ is None


def test_make_pipeline_orders_the_steps(cube_and_mask):
    cube, mask = cube_and_mask
    cube = np.abs(cube) + 1.0
    expected = {
        None: [], "none": [], "brightness": [PixelNormalize], "l2": [PixelNormalize],
        "derivative": [FirstDerivative], "derivative+l2": [FirstDerivative, PixelNormalize],
    }
    assert set(expected) - {None} == set(NORMALIZE_METHODS)
    for normalize, middle in expected.items():
        pipe = make_pipeline("minmax", pca=3, remove_bands=[0], fill_nonfinite="median",
                             normalize=normalize)
        assert [type(s) for s in pipe.steps] == [NonFiniteFill, RemoveBands, *middle,
                                                 PerBandMinMax, PCA]
        pipe.fit(cube, sample_mask=mask, wavelengths=WL)
        assert pipe.n_bands_out_ == 3
    methods = [s.method for s in make_pipeline(normalize="l2").steps[:1]]
    assert methods == ["l2"]
    assert make_pipeline(normalize="brightness").steps[0].method == "mean"


def test_pipeline_passes_midpoint_wavelengths_along(cube_and_mask):
    cube, mask = cube_and_mask
    pipe = Pipeline([RemoveBands(indices=[0]), FirstDerivative(), FirstDerivative()])
    pipe.fit(cube, sample_mask=mask, wavelengths=WL)
    kept = WL[1:]
    np.testing.assert_allclose(pipe[1].wavelengths_out_, (kept[1:] + kept[:-1]) / 2)
    np.testing.assert_allclose(pipe[2].step_, np.diff(pipe[1].wavelengths_out_))
    x = cube[mask].astype(np.float64)[:, 1:]
    first = np.diff(x, axis=-1) / np.diff(kept)
    second = np.diff(first, axis=-1) / np.diff(pipe[1].wavelengths_out_)
    np.testing.assert_allclose(pipe.transform(cube[mask]), second, rtol=2e-3, atol=1e-6)


def test_bad_normalize_names_the_option():
    for bad in ("minmax", "Brightness", "l2+derivative", 3):
        with pytest.raises(OptionError, match=r"^normalize: .*'derivative\+l2'") as info:
            make_pipeline(normalize=bad)
        assert info.value.option == "normalize" and info.value.value == bad


def test_default_pipelines_are_unchanged(cube_and_mask, tmp_path):
    cube, mask = cube_and_mask
    for kwargs in ({}, {"scaling": "standardize", "pca": 4}, {"fill_nonfinite": "median",
                                                             "remove_bands": [2, 3]}):
        old = make_pipeline(**kwargs).fit(cube, sample_mask=mask)
        for normalize in (None, "none"):
            new = make_pipeline(**kwargs, normalize=normalize).fit(cube, sample_mask=mask)
            _assert_same_pipeline(old, new, cube)
            a = old.save(tmp_path / "old" / "pipe")  # same file name: the JSON names its .npz
            b = new.save(tmp_path / f"new_{normalize}" / "pipe")
            assert a.read_bytes() == b.read_bytes()
            assert a.with_suffix(".npz").read_bytes() == b.with_suffix(".npz").read_bytes()


def test_per_scene_unsupervised_minmax_removes_a_scene_gain_and_offset(cube_and_mask):
    cube, _ = cube_and_mask
    cube = cube.copy()
    cube[4, 7, 2] = np.nan  # a no-data pixel: left out of the fit, filled in the output
    other = (cube.astype(np.float64) * 10.0 + 250.0).astype(np.float32)  # another sensor

    def own_minmax(scene: np.ndarray) -> np.ndarray:
        valid = ~nodata_mask(scene)  # every valid pixel; no label is read
        return make_pipeline("minmax", fill_nonfinite="median").fit(scene, sample_mask=valid).transform(scene)

    a, b = own_minmax(cube), own_minmax(other)
    assert np.isfinite(a).all() and a.min() == 0.0 and abs(a.max() - 1.0) < 1e-6
    np.testing.assert_allclose(b, a, rtol=0, atol=2e-6)
    # while the raw scenes, or scaling the second with the first one's fit, differ widely
    first = make_pipeline("minmax", fill_nonfinite="median").fit(cube, sample_mask=~nodata_mask(cube))
    assert np.abs(first.transform(other) - a).max() > 1.0
