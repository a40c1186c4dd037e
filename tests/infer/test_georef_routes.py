"""Every route carries the scene's georeference: cube files, registry scenes, the checkpoint, inference."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import spectral.io.envi as spy_envi
from rasterio.crs import CRS

from hsi.errors import GeoRefError

from .conftest import SCENE, train_checkpoint

MAP_INFO = ["UTM", "1.000", "1.000", "500000.0", "4000000.0", "30.0", "30.0", "33", "North", "WGS-84", "units=Meters"]


def _write_envi(path, array, map_info):
    meta = {} if map_info is None else {"map info": list(map_info)}
    spy_envi.save_image(str(path), array, metadata=meta, ext=".img", force=True)
    return path


@pytest.fixture(scope="module")
def geo_files(tmp_path_factory, scene):
    """The checkpoints' synthetic scene as ENVI cube + labels on a UTM 33N grid, and a label map shifted by one pixel."""
    folder = tmp_path_factory.mktemp("geo")
    cube = _write_envi(folder / "cube.hdr", scene.cube.data.astype(np.float32), MAP_INFO)
    labels = _write_envi(folder / "gt.hdr", scene.labels.astype(np.uint8)[..., None], MAP_INFO)
    shifted = MAP_INFO[:3] + ["500030.0"] + MAP_INFO[4:]
    moved = _write_envi(folder / "gt_moved.hdr", scene.labels.astype(np.uint8)[..., None], shifted)
    return SimpleNamespace(cube=cube, labels=labels, moved=moved, folder=folder)


def _quiet_dm(**kwargs):
    from hsi.data import HSIDataModule

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dm = HSIDataModule(scene_options=SCENE, patch_size=5, block_size=9, fractions=(0.5, 0.25, 0.25), **kwargs)
        dm.setup("fit")
    return dm


def test_cube_file_georeference_reaches_the_state(geo_files):
    dm = _quiet_dm(cube_path=str(geo_files.cube), labels_path=str(geo_files.labels))
    geo = dm.state_dict()["georef"]
    assert CRS.from_wkt(geo["crs"]).to_epsg() == 32633
    assert geo["transform"] == [30.0, 0.0, 500000.0, 0.0, -30.0, 4000000.0]


def test_labels_on_another_grid_are_refused_unless_ignored(geo_files):
    with pytest.raises(GeoRefError, match=r"gt_moved\.hdr.*another grid than cube .*cube\.hdr"):
        _quiet_dm(cube_path=str(geo_files.cube), labels_path=str(geo_files.moved))
    dm = _quiet_dm(cube_path=str(geo_files.cube), labels_path=str(geo_files.moved), ignore_georef=True)
    assert dm.state_dict()["georef"] is None


def test_checkpoint_records_the_training_georeference_for_infer(geo_files, tmp_path):
    from hsi.infer import infer_scene, load_checkpoint
    from hsi.io.georef import GeoRef

    ckpt = train_checkpoint(tmp_path / "geo.ckpt", "spectral1d", patch_size=1, cube_path=str(geo_files.cube),
                            labels_path=str(geo_files.labels))
    model = load_checkpoint(ckpt)
    assert isinstance(model.georef, GeoRef) and model.georef.transform[2] == 500000.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = infer_scene(model, out=tmp_path / "maps", progress=False)  # the checkpoint's own cube file
    import json

    manifest = json.loads((tmp_path / "maps" / "inference.json").read_text())
    assert GeoRef.from_dict(manifest["georef"]).same_grid(model.georef)
    assert result.labels.shape == (SCENE["height"], SCENE["width"])
    import rasterio

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        only_tif = infer_scene(model, out=tmp_path / "tif", progress=False, format=("gtiff",))
    assert not list((tmp_path / "tif").glob("*.npy"))
    with rasterio.open(tmp_path / "tif" / "labels.tif") as src:  # the maps come back even without .npy files
        np.testing.assert_array_equal(src.read(1), only_tif.labels)
        assert src.transform[2] == 500000.0
    np.testing.assert_array_equal(only_tif.labels, result.labels)
    with pytest.raises(GeoRefError, match="gt_moved"):
        infer_scene(model, geo_files.cube, labels=geo_files.moved, progress=False)
    infer_scene(model, geo_files.cube, labels=geo_files.moved, progress=False, ignore_georef=True)


def test_samson_registry_route_keeps_its_coordinates(shared_data):
    from hsi.infer.api import _open_source

    root = shared_data / "envi" / "samson"
    stub = SimpleNamespace(scene_name="samson", data_arguments={"scene": "samson", "root": str(root)},
                           scene_options={}, georef=None, source="stub")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        source, truth = _open_source(stub, None, "samson", str(root), None, None)
    assert truth is not None and CRS.from_wkt(source.georef.crs).to_epsg() == 32610
    assert source.georef.transform == (1.0, 0.0, 612730.910, 0.0, -1.0, 4074488.708)


def test_samson_datamodule_state_keeps_its_coordinates(shared_data):
    from hsi.data import HSIDataModule

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dm = HSIDataModule(scene="samson", root=str(shared_data / "envi" / "samson"))
        dm.setup("fit")
    assert dm.state_dict()["georef"]["transform"] == [1.0, 0.0, 612730.910, 0.0, -1.0, 4074488.708]


def test_a_converted_npy_folder_keeps_wavelengths_and_georeference(geo_files, tmp_path):
    from hsi.infer.sources import open_scene_source
    from hsi.io import read_cube
    from hsi.io.convert import convert

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        convert(geo_files.cube, tmp_path / "npy", to="npy")
        original = read_cube(geo_files.cube)
    source = open_scene_source(tmp_path / "npy" / "cube.npy")
    assert source.georef == original.meta["georef"]
    np.testing.assert_array_equal(source.wavelengths, original.wavelengths)
    assert open_scene_source(tmp_path / "npy" / "cube.npy", georef="ignore").georef is None
