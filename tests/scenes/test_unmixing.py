"""Unmixing scenes as classification scenes, against the real files in ../shared/data."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import scipy.io

from hsi.errors import CubeFormatError, DatasetNotFoundError, ShapeMismatchError
from hsi.scenes import abundance_labels, load_scene
from hsi.scenes.unmixing import parse_endmember_names, read_abundances, read_matlab_unmixing_cube
from hsi.scenes.files import DOC

URBAN_COUNTS = {  # ../shared/data/README.md, "Pure-pixel counts"
    0.5: [8315, 16789, 33202, 20902, 5763, 1882, 7396],
    0.8: [49280, 8948, 17865, 12690, 2749, 498, 2219],
    0.0: [0, 18570, 35198, 22468, 6821, 2436, 8756],
}


@pytest.fixture(scope="module")
def samson_dir(shared_data):
    return shared_data / "envi" / "samson"


def test_samson_loads_from_its_folder(samson_dir):
    scene = load_scene("samson", root=samson_dir)
    assert scene.cube.data.shape == (95, 95, 156) and scene.cube.data.dtype == np.float32
    assert scene.cube.wavelengths is not None and np.all(np.diff(scene.cube.wavelengths) > 0)
    assert scene.class_names == ["Rock", "Tree", "Water"]  # cood order 1-rock, 2-Tree, 3-water, one casing
    assert scene.labels.shape == (95, 95) and scene.labels.dtype == np.int64
    assert np.bincount(scene.labels.ravel()).tolist() == [295, 2836, 3592, 2302]
    assert scene.meta["purity"] == 0.5 and scene.palette.shape == (4, 3)


def test_samson_purity_option_and_parent_root(samson_dir):
    scene = load_scene("samson", root=samson_dir.parent, purity=0.8)  # root = folder holding samson/
    assert np.bincount(scene.labels.ravel()).tolist() == [3455, 2008, 1947, 1615]
    everything = load_scene("samson", root=samson_dir, purity=0.0)
    assert np.bincount(everything.labels.ravel()).tolist() == [0, 3015, 3666, 2344]


def test_samson_labels_are_column_major_registered_with_the_cube(samson_dir):
    scene = load_scene("samson", root=samson_dir)
    nir = scene.cube.data[..., scene.cube.wavelengths > 750].mean(axis=-1)
    water = scene.labels == 3
    land = (scene.labels > 0) & ~water
    assert nir[water].mean() < 0.2 * nir[land].mean()  # water is dark in the NIR
    # The transposed (row-major) reading puts "water" on bright land.
    water_t, land_t = water.T, land.T
    assert nir[water_t].mean() > 0.5 * nir[land_t].mean()
    a, _, _ = read_abundances(samson_dir / "end3.mat")
    water_map = a[2].reshape(95, 95, order="F")
    r_good = np.corrcoef(water_map.ravel(), nir.ravel())[0, 1]
    r_transposed = np.corrcoef(water_map.T.ravel(), nir.ravel())[0, 1]
    assert r_good < -0.7 and r_good < r_transposed - 0.3


def test_matlab_form_cube_matches_envi(samson_dir):
    envi = load_scene("samson", root=samson_dir).cube.data
    mat = read_matlab_unmixing_cube(samson_dir / "samson_1.mat")
    assert mat.data.shape == (95, 95, 156) and mat.meta["key"] == "V"
    np.testing.assert_allclose(mat.data, np.maximum(envi, 0) / 1402, atol=1e-6)  # README: exact


def test_samson_from_matlab_form_alone(tmp_path, samson_dir):
    for name in ("samson_1.mat", "end3.mat"):
        shutil.copyfile(samson_dir / name, tmp_path / name)
    scene = load_scene("samson", root=tmp_path)
    assert scene.cube.data.shape == (95, 95, 156) and scene.cube.wavelengths is None
    assert np.bincount(scene.labels.ravel()).tolist() == [295, 2836, 3592, 2302]


@pytest.mark.parametrize("purity", [0.5, 0.8, 0.0])
def test_urban_labels_from_end6(shared_data, purity):
    a, names, shape = read_abundances(shared_data / "envi" / "urban" / "end6_groundTruth.mat")
    assert names == ["Asphalt Road", "Grass", "Tree", "Roof", "Metal", "Dirt"]
    assert shape == (307, 307) and a.shape == (6, 94249)
    labels = abundance_labels(a, shape, purity)
    assert np.bincount(labels.ravel(), minlength=7).tolist() == URBAN_COUNTS[purity]


def test_urban_without_cube_names_the_cube(shared_data):
    root = shared_data / "envi" / "urban"
    with pytest.raises(DatasetNotFoundError) as info:
        load_scene("urban", root=root)
    msg = str(info.value)
    assert "Urban_R162.mat" in msg and "end6_groundTruth.mat" not in msg.split("Place")[1].split("\n")[1]
    assert str(root) in msg and DOC in msg


def test_jasper_without_end4_names_it(shared_data):
    root = shared_data / "envi" / "jasper_ridge"
    with pytest.raises(DatasetNotFoundError, match="end4.mat") as info:
        load_scene("jasper_ridge", root=root)
    assert "jasperRidge2_R198.img" not in str(info.value)  # the cube was found


def test_jasper_with_a_ground_truth_placed(tmp_path, shared_data):
    src = shared_data / "envi" / "jasper_ridge"
    for name in ("jasperRidge2_R198.img", "jasperRidge2_R198.hdr"):
        shutil.copyfile(src / name, tmp_path / name)
    a = np.zeros((4, 10000))
    a[1, :] = 1.0
    a[:, 250] = (0.9, 0.1, 0.0, 0.0)  # pixel 250 -> row 50, column 2
    cood = np.array([["1-Tree"], ["2-Water"], ["3-Dirt"], ["4-Road"]], dtype=object)
    scipy.io.savemat(tmp_path / "end4.mat", {"A": a, "cood": cood})
    scene = load_scene("jasper_ridge", root=tmp_path)
    assert scene.cube.data.shape == (100, 100, 198)
    assert scene.class_names == ["Tree", "Water", "Dirt", "Road"]
    assert scene.labels[50, 2] == 1 and (np.delete(scene.labels.ravel(), 50 * 100 + 2) == 2).all()


def test_ground_truth_size_must_match_cube(tmp_path, samson_dir):
    shutil.copyfile(samson_dir / "samson_1.mat", tmp_path / "samson_1.mat")
    scipy.io.savemat(tmp_path / "end3.mat", {"A": np.full((3, 100), 1 / 3), "nRow": 10, "nCol": 10})
    with pytest.raises(ShapeMismatchError, match=r"end3.mat.*10 x 10.*samson_1.mat.*95 x 95"):
        load_scene("samson", root=tmp_path, checksum=False)  # a made-up end3.mat: past the checksum, to the shapes


def test_parse_endmember_names():
    cood = np.array([[np.array(["1-rock"])], [np.array(["2-Tree"])], [np.array(["10 - Asphalt Road"])]], dtype=object)
    assert parse_endmember_names(cood) == ["rock", "Tree", "Asphalt Road"]


def test_urban_with_a_matlab_cube_placed(tmp_path, shared_data):
    shutil.copyfile(shared_data / "envi" / "urban" / "end6_groundTruth.mat", tmp_path / "end6_groundTruth.mat")
    y = np.arange(3 * 94249, dtype=np.uint16).reshape(3, 94249) % 1000  # 3 bands are enough here
    scipy.io.savemat(tmp_path / "Urban_R162.mat", {"Y": y, "nRow": 307, "nCol": 307})
    scene = load_scene("urban", root=tmp_path)
    assert scene.cube.data.shape == (307, 307, 3)
    np.testing.assert_array_equal(scene.cube.data[..., 1], y[1].reshape(307, 307, order="F"))
    assert scene.class_names == ["Asphalt Road", "Grass", "Tree", "Roof", "Metal", "Dirt"]
    assert np.bincount(scene.labels.ravel()).tolist() == URBAN_COUNTS[0.5]


@pytest.mark.parametrize("content", [b"", b"hello" * 100, "truncated"])
def test_unreadable_ground_truth_names_the_file(tmp_path, content):
    path = tmp_path / "end3.mat"
    if content == "truncated":
        scipy.io.savemat(path, {"A": np.full((3, 100), 1 / 3)})
        content = path.read_bytes()[:200]
    path.write_bytes(content)
    with pytest.raises(CubeFormatError, match="end3.mat"):  # a ValueError, not scipy's MatReadError
        read_abundances(path)


def test_v73_ground_truth_in_matlab_orientation(tmp_path):
    import h5py

    a = np.random.default_rng(0).dirichlet(np.ones(3), size=20).T  # (3, 20)
    path = tmp_path / "end3.mat"
    with h5py.File(path, "w", userblock_size=512) as handle:
        handle["A"] = a.T  # MATLAB stores column-major: HDF5 sees the transpose
        handle["nRow"] = np.array([[4.0]])
        handle["nCol"] = np.array([[5.0]])
    got, names, shape = read_abundances(path)
    np.testing.assert_array_equal(got, a)
    assert names is None and shape == (4, 5)


def test_class_names_take_the_registry_casing():
    from hsi.scenes.unmixing import class_name

    assert [class_name(n) for n in ("rock", "Tree", "water", "Asphalt Road", "")] == [
        "Rock", "Tree", "Water", "Asphalt Road", ""]


def test_every_registry_scene_names_its_classes_in_one_casing():
    from hsi.scenes import make_synthetic_scene
    from hsi.scenes.benchmark import SCENES as BENCHMARKS
    from hsi.scenes.unmixing import SCENES as UNMIXING

    names = [n for s in BENCHMARKS for n in s.class_names] + [n for s in UNMIXING for n in s.default_names]
    names += make_synthetic_scene(height=48, width=48, bands=4, parcel_size=6.0).class_names
    assert all(n[0].isupper() for n in names), [n for n in names if not n[0].isupper()]
