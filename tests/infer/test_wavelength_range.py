"""A checkpoint trained on a wavelength_range maps a cube with every band as it maps the cube cut to the range."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.infer.conftest import SCENE, train_checkpoint

#: the synthetic scene's 10 bands lie at 400-2500 nm; these 4 are kept
RANGE = (600.0, 1500.0)
FAST = {"format": ("npy",), "progress": False, "accelerator": "cpu"}


@pytest.fixture(scope="module")
def full_scene():
    from hsi.scenes import load_scene

    return load_scene("synthetic", **SCENE)


def _map(ckpt, data, wavelengths, fwhm=None):
    from hsi.infer import infer_scene
    from hsi.io import Cube

    meta = {"source": "cube"} if fwhm is None else {"source": "cube", "fwhm": list(fwhm)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return infer_scene(ckpt, Cube(np.ascontiguousarray(data, dtype=np.float32), wavelengths, meta), out=None,
                           **FAST)


@pytest.mark.parametrize("model", ["fcn", "anyband"])
def test_a_cube_with_every_band_is_cut_to_the_checkpoints_range(full_scene, tmp_path_factory, model):
    ckpt = train_checkpoint(tmp_path_factory.mktemp(model) / "w.ckpt", model, shape_from_data=model == "anyband",
                            wavelength_range=RANGE)
    wl, data = full_scene.cube.wavelengths, full_scene.cube.data
    keep = (wl >= RANGE[0]) & (wl <= RANGE[1])
    assert 0 < keep.sum() < wl.size
    from hsi.infer import load_checkpoint

    assert np.array_equal(load_checkpoint(ckpt).wavelengths, wl[keep])  # the checkpoint's bands are the range's
    cut = _map(ckpt, data[..., keep], wl[keep])
    full = _map(ckpt, data, wl)
    assert np.array_equal(full.labels, cut.labels) and np.array_equal(full.confidence, cut.confidence)
    assert len(np.unique(cut.labels)) > 1  # a map, not one class everywhere


def test_the_kept_bands_are_picked_even_where_band_widths_are_known(full_scene, tmp_path):
    """A cube of the training sensor with declared widths: its in-range bands are taken as they are, not
    resampled by their own (narrowed to nothing) responses."""
    from hsi.data.sources.bands import ResampledSource
    from hsi.infer.sources import ArraySource

    wl, data = full_scene.cube.wavelengths, full_scene.cube.data
    keep = (wl >= RANGE[0]) & (wl <= RANGE[1])
    fwhm = np.full(wl.size, 150.0)
    source = ArraySource(data, wl, "cube")
    source.fwhm = fwhm
    onto = ResampledSource(source, wl[keep], fwhm[keep])
    assert onto.record["method"] == "subset"
    assert np.array_equal(onto.read_window(slice(0, 9), slice(3, 20)), data[0:9, 3:20][..., keep])


def test_an_anyband_checkpoint_reads_only_the_in_range_bands_of_another_sensor(full_scene, tmp_path):
    ckpt = train_checkpoint(tmp_path / "a.ckpt", "anyband", shape_from_data=True, wavelength_range=RANGE)
    from hsi.preprocess.response import apply_response, response_matrix

    wl = full_scene.cube.wavelengths
    trained = wl[(wl >= RANGE[0]) & (wl <= RANGE[1])]
    inside = np.linspace(trained[0], trained[-1], 11)  # another sensor: 11 bands inside the range ...
    other = np.concatenate([[450.0, 520.0], inside, [1800.0, 2300.0]])  # ... and 4 outside it
    cube = apply_response(full_scene.cube.data, response_matrix(wl, other))
    full = _map(ckpt, cube, other)
    cut = _map(ckpt, cube[..., 2:13], inside)
    assert np.array_equal(full.labels, cut.labels) and np.array_equal(full.confidence, cut.confidence)
