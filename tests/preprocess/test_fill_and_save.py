"""Non-finite fill fitted on training pixels; Pipeline.save keeps its promises (issue 10)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hsi.errors import OptionError, OverwriteError, SplitError
from hsi.preprocess import NonFiniteFill, Pipeline, StateFormatError, make_pipeline


@pytest.fixture
def nan_cube():
    rng = np.random.default_rng(0)
    cube = rng.random((10, 12, 4)).astype(np.float32)
    train = np.zeros((10, 12), dtype=bool)
    train[:5] = True
    cube[7, 3, 1] = np.nan  # outside training
    cube[8, 8, 2] = np.inf
    cube[1, 1, 0] = np.nan  # a training pixel with a NaN: left out of the statistics
    return cube, train


def test_fill_uses_the_median_of_finite_training_values_only(nan_cube):
    cube, train = nan_cube
    fill = NonFiniteFill().fit(cube, sample_mask=train)
    expected = [np.median(cube[train][:, c][np.isfinite(cube[train][:, c])].astype(np.float64)) for c in range(4)]
    np.testing.assert_allclose(fill.fill_values_, expected)
    cube2 = cube.copy()
    cube2[~train] += 100.0  # test pixels change: the fill does not
    np.testing.assert_array_equal(NonFiniteFill().fit(cube2, sample_mask=train).fill_values_, fill.fill_values_)
    out = fill.transform(cube)
    assert np.isfinite(out).all() and out.dtype == np.float32
    assert out[7, 3, 1] == np.float32(fill.fill_values_[1]) and out[8, 8, 2] == np.float32(fill.fill_values_[2])
    finite = np.isfinite(cube)
    np.testing.assert_array_equal(out[finite], cube[finite])  # everything else untouched


def test_fill_refuses_a_band_without_finite_training_values(nan_cube):
    cube, train = nan_cube
    cube[:5, :, 3] = np.nan
    with pytest.raises(SplitError, match=r"band\(s\) \[3\]"):
        NonFiniteFill().fit(cube, sample_mask=train, )


def test_make_pipeline_puts_the_fill_first_and_the_output_is_finite(nan_cube):
    cube, train = nan_cube
    pipe = make_pipeline(scaling="standardize", pca=2, fill_nonfinite="median")
    assert [type(s).__name__ for s in pipe.steps] == ["NonFiniteFill", "PerBandStandardize", "PCA"]
    with pytest.warns(UserWarning, match="ignored 1 of 60"):
        pipe.fit(cube, sample_mask=train)
    assert np.isfinite(pipe.transform(cube)).all()
    again = Pipeline.from_state(json.loads(json.dumps(pipe.to_state())))
    np.testing.assert_array_equal(again.transform(cube), pipe.transform(cube))
    with pytest.raises(OptionError, match="fill_nonfinite"):
        make_pipeline(fill_nonfinite="zero")


@pytest.fixture
def saved(tmp_path):
    rng = np.random.default_rng(1)
    cube = rng.random((8, 9, 6))
    pipe = make_pipeline(scaling="minmax", pca=3, fill_nonfinite="median").fit(cube)
    return pipe, cube, pipe.save(tmp_path / "prep.json")


def test_save_never_replaces_a_users_file(tmp_path, saved):
    pipe = saved[0]
    user = tmp_path / "survey.npz"
    np.savez(user, data=np.arange(5))
    before = user.read_bytes()
    with pytest.raises(OverwriteError, match="survey.npz already exists and was not written by Pipeline.save"):
        pipe.save(tmp_path / "survey.json")
    assert user.read_bytes() == before and not (tmp_path / "survey.json").exists()
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": 1}')
    with pytest.raises(OverwriteError, match="notes.json"):
        pipe.save(notes)
    assert notes.read_text() == '{"mine": 1}' and not (tmp_path / "notes.npz").exists()


def test_save_replaces_its_own_files_atomically(tmp_path, saved):
    pipe, cube, path = saved
    assert pipe.save(path) == path  # its own pair: replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prep.json", "prep.npz"]  # no temporaries left
    np.testing.assert_array_equal(Pipeline.load(path).transform(cube), pipe.transform(cube))


def test_edited_learned_value_in_the_json_is_caught(saved):
    _, _, path = saved
    state = json.loads(path.read_text())
    pca = state["steps"][-1]["fitted"]
    pca["n_components_"] = 2
    path.write_text(json.dumps(state, indent=1))
    with pytest.raises(StateFormatError, match="edited"):
        Pipeline.load(path)


def test_edited_n_bands_in_and_removed_checksum_are_caught(saved):
    _, _, path = saved
    state = json.loads(path.read_text())
    state["fitted"]["n_bands_in_"] = 7
    path.write_text(json.dumps(state))
    with pytest.raises(StateFormatError, match="state_sha256"):
        Pipeline.load(path)
    del state["state_sha256"]
    path.write_text(json.dumps(state))
    with pytest.raises(StateFormatError, match="no state_sha256"):
        Pipeline.load(path)


def test_swapped_and_truncated_arrays_file_is_caught(tmp_path, saved):
    pipe, cube, path = saved
    other = make_pipeline(scaling="minmax", pca=3, fill_nonfinite="median").fit(cube + 1.0)
    other.save(tmp_path / "other.json")
    npz = tmp_path / "prep.npz"
    npz.write_bytes((tmp_path / "other.npz").read_bytes())  # swapped
    with pytest.raises(StateFormatError, match="does not match the SHA-256"):
        Pipeline.load(path)
    pipe.save(path)
    npz.write_bytes(npz.read_bytes()[:-10])  # truncated
    with pytest.raises(StateFormatError, match="does not match the SHA-256"):
        Pipeline.load(path)


def test_find_nonfinite_counts_values_or_pixels_and_ignores_an_overflowing_sum():
    from hsi.preprocess._base import find_nonfinite

    x = np.ones((4, 5, 3), dtype=np.float32)
    assert find_nonfinite(x) is None
    big = np.full((4, 5, 3), 3e38, dtype=np.float32)  # finite, but the float32 sum overflows
    assert find_nonfinite(big) is None
    x[1, 2, 0] = np.nan
    x[1, 2, 2] = np.inf
    x[3, 0, 1] = -np.inf
    assert find_nonfinite(x) == (3, (1, 2, 0))
    assert find_nonfinite(x, per_pixel=True) == (2, (1, 2))
