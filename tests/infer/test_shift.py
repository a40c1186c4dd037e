"""The sample behind inference's scene checks (hsi/infer/shift.py): read once, only when needed, at its own size."""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest

from hsi.infer.shift import WINDOW, SceneSample, check_new_scene, preprocessed_stats, raw_differs, sample_spectra
from hsi.infer.sources import ArraySource, open_scene_source


class CountingSource(ArraySource):
    """An in-memory source that counts its window reads."""

    reads = 0

    def read_window(self, rows: slice, cols: slice) -> np.ndarray:
        self.reads += 1
        return super().read_window(rows, cols)


def _windows_concatenated(cube: np.ndarray, starts_r: list[int], starts_c: list[int]) -> np.ndarray:
    """The sample as the windows concatenated one after another (each row-major)."""
    return np.concatenate([cube[r:r + WINDOW, c:c + WINDOW].reshape(-1, cube.shape[2])
                           for r in starts_r for c in starts_c])


@pytest.mark.parametrize("suffix", ["npy", "h5", "array"])
@pytest.mark.parametrize("size", [(100, 70), (400, 330)])  # the whole cube, then 6 x 6 windows spread over it
def test_the_sample_is_the_windows_one_after_another_from_every_kind_of_source(tmp_path, suffix, size):
    import h5py

    from hsi.infer.shift import _starts

    cube = np.random.default_rng(0).random((*size, 7), dtype=np.float32)
    if suffix == "npy":
        np.save(tmp_path / "c.npy", cube)
        source = open_scene_source(tmp_path / "c.npy")
    elif suffix == "h5":
        with h5py.File(tmp_path / "c.h5", "w") as f:
            f.create_dataset("cube", data=cube, chunks=(32, 32, 7))
        source = open_scene_source(tmp_path / "c.h5", "cube", "HWC")
    else:
        source = ArraySource(cube)
    try:
        got = sample_spectra(source)
    finally:
        source.close()
    assert got.dtype == np.float32 and got.flags.c_contiguous
    assert np.array_equal(got, _windows_concatenated(cube, _starts(size[0]), _starts(size[1])))


def test_the_sample_holds_its_own_size_at_its_peak(tmp_path):
    cube = np.random.default_rng(0).random((400, 400, 50), dtype=np.float32)
    np.save(tmp_path / "c.npy", cube)
    source = open_scene_source(tmp_path / "c.npy")
    try:
        tracemalloc.start()
        got = sample_spectra(source)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        source.close()
    assert peak < 1.2 * got.nbytes  # the windows gathered in a list and concatenated held twice its size


def _model(**fields):
    """What the checks read of a checkpoint: statistics, per-scene scaling, the fitted pipeline."""
    from hsi.preprocess import make_pipeline

    @dataclasses.dataclass
    class Model:
        pipeline: object = None
        band_stats: dict | None = None
        training_values: dict | None = None
        fit_per_scene: bool = False

    pipeline = make_pipeline(scaling="standardize").fit(np.random.default_rng(1).random((64, 64, 7)))
    return Model(pipeline=pipeline, **fields)


def test_a_checkpoint_without_statistics_has_no_pixel_read():
    from hsi.infer.shift import fit_on_scene

    source = CountingSource(np.ones((300, 300, 7), np.float32))
    sample = SceneSample(source)
    model = _model()
    assert fit_on_scene(model, source, sample) == (model, None)
    assert not raw_differs(model, source, sample)
    assert not check_new_scene(model, source, sample)["checked"]
    assert source.reads == 0


def test_a_sample_is_read_once_for_the_fit_and_the_checks():
    from hsi.infer.shift import fit_on_scene
    from hsi.preprocess.shift import band_stats, value_level

    cube = np.random.default_rng(2).random((300, 300, 7), dtype=np.float32)
    source = CountingSource(cube)
    sample = SceneSample(source)
    model = _model(band_stats=band_stats(cube).to_dict(), fit_per_scene=True,
                   training_values={"names": ["train"], "units": None, "value_level": value_level(cube)})
    raw_differs(model, source, sample)
    fitted, note = fit_on_scene(model, source, sample)
    record = check_new_scene(fitted, source, sample)
    assert source.reads == 36 and note["pixels"] == 36 * WINDOW * WINDOW
    assert record["checked"] and not record["preprocessed"]["shifted"]


def test_the_statistics_of_a_subsample_transformed_are_those_of_all_transformed_then_subsampled():
    from hsi.preprocess.shift import band_stats

    rng = np.random.default_rng(3)
    spectra = rng.normal(5.0, 2.0, (30000, 7)).astype(np.float32)
    spectra[::97, 3] = np.nan  # rows left out
    pipeline = _model().pipeline
    finite = np.isfinite(spectra).all(axis=1)
    whole = band_stats(pipeline.transform(spectra[finite][:, None, :])[:, 0, :], max_pixels=16384)
    got = preprocessed_stats(pipeline, spectra, max_pixels=16384)
    assert all(np.array_equal(getattr(got, k), getattr(whole, k)) for k in ("median", "p5", "p95"))
    assert got.pixels == 16384
    assert preprocessed_stats(pipeline, np.full((5, 7), np.nan, np.float32)) is None
