"""Pipeline: train-only fitting through all steps, save/load and state round-trips."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hsi.errors import NotFittedError
from hsi.preprocess import (
    FORMAT_VERSION,
    PCA,
    FirstDerivative,
    NonFiniteFill,
    PerBandMinMax,
    PerBandStandardize,
    Pipeline,
    PixelNormalize,
    RemoveBands,
    StateFormatError,
    make_pipeline,
)


@pytest.fixture
def fitted(cube_and_mask):
    cube, mask = cube_and_mask
    wl = np.linspace(400, 2500, 12)
    pipe = Pipeline([RemoveBands(indices=[0], wavelength_ranges=[(1300, 1500)]),
                     PerBandStandardize(), PerBandMinMax(feature_range=(-1, 1), clip=True),
                     PCA(4, whiten=True)])
    return pipe.fit(cube, sample_mask=mask, wavelengths=wl), cube, mask


def test_fit_equals_fitting_steps_by_hand(fitted):
    pipe, cube, mask = fitted
    x = cube[mask]
    # redo by hand: remove, standardize, minmax, pca, each fitted on the training pixels
    wl = np.linspace(400, 2500, 12)
    rb = RemoveBands(indices=[0], wavelength_ranges=[(1300, 1500)]).fit(x, wavelengths=wl)
    x1 = rb.transform(x)
    st = PerBandStandardize().fit(x1)
    x2 = st.transform(x1)
    mm = PerBandMinMax(feature_range=(-1, 1), clip=True).fit(x2)
    pca = PCA(4, whiten=True).fit(mm.transform(x2))
    expected = pca.transform(mm.transform(st.transform(rb.transform(cube))))
    np.testing.assert_array_equal(pipe.transform(cube), expected)
    assert pipe.n_bands_in_ == 12 and pipe.n_bands_out_ == 4


def test_pipeline_state_ignores_non_training_pixels(fitted):
    pipe, cube, mask = fitted
    other = cube.copy()
    other[~mask] = 1e6
    again = Pipeline.from_state(pipe.to_state())  # unfitted copy of the steps would also do
    again.fit(other, sample_mask=mask, wavelengths=np.linspace(400, 2500, 12))
    assert json.dumps(again.to_state()) == json.dumps(pipe.to_state())


def test_save_load_transforms_identically(fitted, tmp_path):
    pipe, cube, _ = fitted
    json_path = pipe.save(tmp_path / "prep" / "pipeline.json")
    assert json_path.name == "pipeline.json" and (tmp_path / "prep" / "pipeline.npz").is_file()
    header = json.loads(json_path.read_text())
    assert header["format_version"] == FORMAT_VERSION
    assert [s["class"] for s in header["steps"]] == ["RemoveBands", "PerBandStandardize",
                                                      "PerBandMinMax", "PCA"]
    for path in (json_path, tmp_path / "prep" / "pipeline", tmp_path / "prep" / "pipeline.npz"):
        loaded = Pipeline.load(path)
        np.testing.assert_array_equal(loaded.transform(cube), pipe.transform(cube))
    np.testing.assert_array_equal(loaded[3].components_, pipe[3].components_)


def test_to_state_is_plain_json_and_round_trips(fitted):
    pipe, cube, _ = fitted
    state = pipe.to_state()

    def plain(v):
        if isinstance(v, dict):
            return all(isinstance(k, str) and plain(x) for k, x in v.items())
        if isinstance(v, list):
            return all(plain(x) for x in v)
        return v is None or type(v) in (str, int, float, bool)

    assert plain(state)
    restored = Pipeline.from_state(json.loads(json.dumps(state)))
    np.testing.assert_array_equal(restored.transform(cube), pipe.transform(cube))
    assert restored.n_bands_out_ == 4


def test_torch_checkpoint_weights_only(fitted, tmp_path):
    torch = pytest.importorskip("torch")
    pipe, cube, _ = fitted
    torch.save({"pipeline": pipe.to_state()}, tmp_path / "ckpt.pt")
    state = torch.load(tmp_path / "ckpt.pt", weights_only=True)["pipeline"]
    np.testing.assert_array_equal(Pipeline.from_state(state).transform(cube), pipe.transform(cube))


def test_corrupt_and_wrong_version_files(fitted, tmp_path):
    pipe, _, _ = fitted
    path = pipe.save(tmp_path / "p.json")
    header = json.loads(path.read_text())

    header["format_version"] = 99
    path.write_text(json.dumps(header))
    with pytest.raises(StateFormatError, match=r"unsupported format_version 99.*reads format_version 1"):
        Pipeline.load(path)

    path.write_text("{not json")
    with pytest.raises(StateFormatError, match="not valid JSON"):
        Pipeline.load(path)

    header["format_version"] = FORMAT_VERSION
    path.write_text(json.dumps(header))
    npz = tmp_path / "p.npz"
    npz.write_bytes(npz.read_bytes()[:-10])
    with pytest.raises(StateFormatError, match="SHA-256"):
        Pipeline.load(path)

    npz.unlink()
    with pytest.raises(FileNotFoundError, match="p.npz"):
        Pipeline.load(path)
    with pytest.raises(FileNotFoundError, match="no saved pipeline"):
        Pipeline.load(tmp_path / "absent.json")

    state = pipe.to_state()
    state["steps"][0]["class"] = "Sharpen"
    with pytest.raises(StateFormatError, match="unknown transformer class 'Sharpen'"):
        Pipeline.from_state(state)
    with pytest.raises(StateFormatError, match="not a saved hsi pipeline"):
        Pipeline.from_state({"steps": []})


def test_unfitted_pipeline(cube_and_mask):
    cube, mask = cube_and_mask
    pipe = make_pipeline("standardize", pca=3)
    with pytest.raises(NotFittedError, match="Pipeline"):
        pipe.transform(cube)
    # an unfitted pipeline's state rebuilds an unfitted pipeline with the same params
    again = Pipeline.from_state(pipe.to_state())
    assert [type(s).__name__ for s in again.steps] == ["PerBandStandardize", "PCA"]
    assert not again.is_fitted


def test_make_pipeline_variants(cube_and_mask):
    cube, mask = cube_and_mask
    assert [type(s).__name__ for s in make_pipeline().steps] == ["PerBandMinMax"]
    p = make_pipeline(None, remove_bands=[0, 1], pca=0.95).fit(cube, sample_mask=mask)
    assert [type(s).__name__ for s in p.steps] == ["RemoveBands", "PCA"]
    assert p.n_bands_in_ == 12 and p.n_bands_out_ < 10
    identity = make_pipeline(None).fit(cube, sample_mask=mask)
    np.testing.assert_array_equal(identity.transform(cube), cube.astype(np.float32))
    with pytest.raises(ValueError, match="scaling must be 'minmax', 'standardize' or None"):
        make_pipeline("robust")


def test_transform_into_out_equals_a_fresh_transform():
    from hsi.preprocess import NonFiniteFill

    rng = np.random.default_rng(3)
    cube = (500.0 + 100.0 * rng.random((9, 8, 5))).astype(np.float32)
    cube[2, 3, 1] = np.nan
    for steps in ([NonFiniteFill(), PerBandMinMax()], [NonFiniteFill(), PerBandStandardize()]):
        pipe = Pipeline(steps).fit(cube)
        assert pipe.in_place
        ref = pipe.transform(cube)
        block = cube.copy()
        assert pipe.transform(block, out=block) is block  # in place: the input is overwritten
        np.testing.assert_array_equal(block, ref)
        assert np.isfinite(block).all()
    # a step that changes the band count cannot work in place: the result is copied into out
    pca = Pipeline([NonFiniteFill(), PerBandStandardize(), PCA(2)]).fit(cube)
    assert not pca.in_place
    out = np.empty((9, 8, 2), np.float32)
    np.testing.assert_array_equal(pca.transform(cube, out=out), pca.transform(cube))
    # no steps: out receives the input
    empty = Pipeline([]).fit(cube)
    np.testing.assert_array_equal(empty.transform(cube, out=np.zeros_like(cube)), cube)


def _chains():
    """Steps of every kind, in the order make_pipeline puts them (fresh instances each call)."""
    return [NonFiniteFill(), RemoveBands(indices=[0]), PixelNormalize("l2"), FirstDerivative(),
            PerBandStandardize(), PerBandMinMax(feature_range=(-1, 1), clip=True), PCA(4, whiten=True)]


def _sklearn_pipeline(steps):
    from sklearn.pipeline import Pipeline as SkPipeline

    return SkPipeline([(f"{i}_{type(s).__name__.lower()}", s) for i, s in enumerate(steps)])


def _masked(pipe, mask):
    """The fit parameters giving every step of a scikit-learn pipeline the training mask."""
    return {f"{name}__sample_mask": mask for name, _ in pipe.steps}


def test_sklearn_pipeline_equals_hsi_pipeline_on_a_cube(cube_and_mask):
    from sklearn.base import clone

    cube32, mask = cube_and_mask
    cube = cube32.astype(np.float64)
    ours = Pipeline(_chains()).fit(cube, sample_mask=mask)
    theirs = _sklearn_pipeline(_chains())
    theirs.fit(cube, **_masked(theirs, mask))  # each step's fit gets sample_mask=
    expected = ours.transform(cube)
    assert expected.shape == (30, 25, 4)
    np.testing.assert_array_equal(theirs.transform(cube), expected)
    for step, (_, their_step) in zip(ours.steps, theirs.steps):
        assert json.dumps(their_step.to_state()) == json.dumps(step.to_state())
    again = _sklearn_pipeline(_chains())
    np.testing.assert_array_equal(again.fit_transform(cube, **_masked(again, mask)), expected)
    refit = clone(theirs)  # what grid searches and cross-validation do with a pipeline
    assert not any(s.is_fitted for _, s in refit.steps)
    np.testing.assert_array_equal(refit.fit(cube, **_masked(refit, mask)).transform(cube), expected)
    # the hsi Pipeline clones too, unfitted, and refits to the same output
    np.testing.assert_array_equal(clone(ours).fit(cube, sample_mask=mask).transform(cube), expected)


def test_sklearn_pipeline_fits_on_the_mask_only(cube_and_mask):
    cube, mask = cube_and_mask
    other = cube.copy()
    other[~mask] = 1e6
    a, b = _sklearn_pipeline(_chains()), _sklearn_pipeline(_chains())
    a.fit(cube, **_masked(a, mask))
    b.fit(other, **_masked(b, mask))
    for (_, sa), (_, sb) in zip(a.steps, b.steps):
        assert json.dumps(sa.to_state()) == json.dumps(sb.to_state())


def test_sklearn_pipeline_on_float32_cubes(cube_and_mask):
    """float32 cubes: the default chain is exact; after a scaling a later fit sees float32-computed values.

    The hsi Pipeline passes the float64 training pixels through the steps (a per-band scaling of
    float64 computes in float64), scikit-learn's the float32 cube, so a step fitted after a scaling
    learns from values a few float32 ulps apart.
    """
    from sklearn.base import clone

    cube, mask = cube_and_mask
    default = make_pipeline(fill_nonfinite="median")
    theirs = _sklearn_pipeline([clone(s) for s in default.steps])
    expected = default.fit(cube, sample_mask=mask).transform(cube)
    np.testing.assert_array_equal(theirs.fit(cube, **_masked(theirs, mask)).transform(cube), expected)
    with_pca = make_pipeline("standardize", pca=3, fill_nonfinite="median")
    theirs = _sklearn_pipeline([clone(s) for s in with_pca.steps])
    expected = with_pca.fit(cube, sample_mask=mask).transform(cube)
    got = theirs.fit(cube, **_masked(theirs, mask)).transform(cube)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5 * np.abs(expected).max())


def test_sklearn_pipeline_routes_wavelengths_to_a_step(cube_and_mask):
    cube, mask = cube_and_mask
    wl = np.linspace(400, 2500, 12)
    steps = [RemoveBands(wavelength_ranges=[(1300, 1500)]), PerBandMinMax()]
    ours = Pipeline(steps).fit(cube, sample_mask=mask, wavelengths=wl)
    theirs = _sklearn_pipeline([RemoveBands(wavelength_ranges=[(1300, 1500)]), PerBandMinMax()])
    theirs.fit(cube, **_masked(theirs, mask), **{"0_removebands__wavelengths": wl})
    np.testing.assert_array_equal(theirs.transform(cube), ours.transform(cube))
    assert ours.n_bands_out_ < 12


def test_sklearn_pipeline_refuses_pandas_output():
    with pytest.raises(ValueError, match="set_output"):
        _sklearn_pipeline(_chains()).set_output(transform="pandas")
