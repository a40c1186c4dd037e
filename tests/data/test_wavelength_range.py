"""HSIDataModule(wavelength_range=...): only the bands within the range, for one scene and for a collection."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.errors import OptionError
from tests.helpers import quiet_datamodule, ready_datamodule

SCENE = {"height": 24, "width": 24, "bands": 12, "n_classes": 3, "seed": 2}
ARGS = dict(scene="synthetic", scene_options=SCENE, block_size=6, patch_size=3, scaling=None)
RANGE = (600.0, 1600.0)


@pytest.fixture(scope="module")
def source():
    from hsi.data.scene_source import SourceSpec, load_source

    return load_source(SourceSpec(scene="synthetic", scene_options=SCENE))


def test_one_scene_keeps_the_bands_and_values_within_the_range(source):
    dm = ready_datamodule(**ARGS, wavelength_range=RANGE)
    keep = np.flatnonzero((source.wavelengths >= RANGE[0]) & (source.wavelengths <= RANGE[1]))
    assert 0 < keep.size < source.wavelengths.size
    assert np.array_equal(dm.wavelengths, source.wavelengths[keep])
    assert dm.num_bands == dm.raw_band_count() == keep.size
    x, _, coords = dm.pixel_spectra("train")  # no scaling: the raw values of the kept bands
    assert np.array_equal(x, source.cube[coords[:, 0], coords[:, 1]][:, keep])
    assert dm.state_dict()["wavelengths"] == source.wavelengths[keep].tolist()  # what inference reads
    assert dm.hparams.wavelength_range == list(RANGE)


def test_remove_bands_counts_in_the_kept_bands(source):
    dm = ready_datamodule(**ARGS, wavelength_range=RANGE, remove_bands=[0])
    keep = np.flatnonzero((source.wavelengths >= RANGE[0]) & (source.wavelengths <= RANGE[1]))
    assert dm.num_bands == keep.size - 1
    assert np.array_equal(dm.pipeline.wavelengths_out(dm.wavelengths), source.wavelengths[keep[1:]])


def test_a_collection_cuts_its_common_grid(source):
    scenes = [{"name": "a", "scene": "synthetic", "scene_options": SCENE},
              {"name": "b", "scene": "synthetic", "scene_options": {**SCENE, "seed": 3}}]
    dm = ready_datamodule(scenes=scenes, block_size=6, patch_size=3, wavelength_range=RANGE)
    inside = source.wavelengths[(source.wavelengths >= RANGE[0]) & (source.wavelengths <= RANGE[1])]
    assert np.array_equal(dm.wavelengths, inside) and dm.num_bands == inside.size
    assert dm.state_dict()["collection"]["grid"] == inside.tolist()


@pytest.mark.parametrize("bad", [(900.0, 900.0), (1000.0, 500.0), (-5.0, 500.0), (400.0,)])
def test_a_range_that_is_not_min_below_max_is_refused_at_once(bad):
    with pytest.raises(OptionError, match="MIN MAX in nm with 0 <= MIN < MAX") as caught:
        quiet_datamodule(**ARGS, wavelength_range=bad)
    assert caught.value.option == "wavelength_range"


def test_a_range_without_any_band_of_the_scene_names_the_scene_and_its_bands():
    dm = quiet_datamodule(**ARGS, wavelength_range=(3000.0, 4000.0))
    with pytest.raises(OptionError, match=r"at least one band of scene 'synthetic'.*400\.00-2500\.00 nm") as caught:
        dm.setup("fit")
    assert caught.value.option == "wavelength_range"


def test_a_scene_without_wavelengths_cannot_be_cut_by_wavelength(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "cube.npy", rng.random((12, 12, 5)).astype(np.float32))
    np.save(tmp_path / "gt.npy", (np.arange(144).reshape(12, 12) % 2 + 1).astype(np.int64))
    dm = quiet_datamodule(scene=None, cube_path=str(tmp_path / "cube.npy"), labels_path=str(tmp_path / "gt.npy"),
                          block_size=4, patch_size=3, wavelength_range=(400.0, 900.0))
    with pytest.raises(OptionError, match="band centre wavelengths; scene 'cube' declares none") as caught:
        dm.setup("fit")
    assert caught.value.option == "wavelength_range"
