"""EHU benchmark scenes with real ground-truth files and small fake cubes (in tmp_path)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import scipy.io

from hsi.errors import IntegrityError, ShapeMismatchError
from hsi.scenes import load_scene
from hsi.scenes.benchmark import SCENES, indian_pines_wavelengths

SALINAS_A_COUNTS = {1: 391, 10: 1343, 11: 616, 12: 1525, 13: 674, 14: 799}  # EHU GT, 5348 labeled


def _fake_cube(path, key, shape):
    data = np.random.default_rng(1).integers(0, 4000, size=shape, dtype=np.int16)
    scipy.io.savemat(path, {key: data})
    return data


def test_every_benchmark_spec_is_consistent():
    for scene in SCENES:
        assert len(scene.shape) == 3
        k = len(scene.class_names)
        assert scene.label_values is None or len(scene.label_values) == k
        if scene.wavelengths is not None:
            assert len(scene.wavelengths) == scene.shape[2]
        assert scene.cube.url and scene.gt.url


def test_indian_pines_wavelengths_drop_the_water_bands():
    wl = indian_pines_wavelengths()
    assert wl.shape == (200,)
    assert wl[0] == pytest.approx(400.02) and wl[-1] == pytest.approx(2489.11)
    assert not ((wl > 1355) & (wl < 1405)).any() and not ((wl > 1815) & (wl < 1940)).any()


def test_salinas_a_labels_remapped_to_contiguous(tmp_path, shared_data):
    gt_src = shared_data / "salinas_a" / "SalinasA_gt.mat"
    raw = scipy.io.loadmat(gt_src)["salinasA_gt"]
    assert {int(v): int((raw == v).sum()) for v in np.unique(raw) if v} == SALINAS_A_COUNTS
    folder = tmp_path / "salinas_a"
    folder.mkdir()
    shutil.copyfile(gt_src, folder / "SalinasA_gt.mat")
    data = _fake_cube(folder / "SalinasA_corrected.mat", "salinasA_corrected", (83, 86, 204))
    scene = load_scene("salinas_a", root=tmp_path, checksum=False)  # a fake cube under the registry's name
    assert scene.cube.data.shape == (83, 86, 204) and scene.cube.data.dtype == np.float32
    np.testing.assert_array_equal(scene.cube.data, data.astype(np.float32))
    assert scene.meta["label_values"] == [1, 10, 11, 12, 13, 14]
    assert scene.class_names == [
        "Brocoli_green_weeds_1", "Corn_senesced_green_weeds", "Lettuce_romaine_4wk",
        "Lettuce_romaine_5wk", "Lettuce_romaine_6wk", "Lettuce_romaine_7wk",
    ]
    assert np.bincount(scene.labels.ravel()).tolist() == [83 * 86 - 5348, 391, 1343, 616, 1525, 674, 799]
    np.testing.assert_array_equal(scene.labels == 2, raw == 10)
    assert scene.palette.shape == (7, 3)
    # The GT is the EHU original: its SHA-256 matches the reference (the fake cube does not), by default.
    with pytest.raises(IntegrityError, match="SalinasA_corrected.mat"):
        load_scene("salinas_a", root=tmp_path)


@pytest.mark.parametrize(
    "gt_file",
    ["indian_pines/Indian_pines_gt.mat", "indian_pines/Indian_pines_gt_key_y.mat", "mat_v73/Indian_pines_gt_v73.mat"],
)
def test_indian_pines_resaved_ground_truths_found_by_key_discovery(tmp_path, shared_data, gt_file):
    shutil.copyfile(shared_data / gt_file, tmp_path / "Indian_pines_gt.mat")  # flat in root
    _fake_cube(tmp_path / "Indian_pines_corrected.mat", "indian_pines_corrected", (145, 145, 200))
    scene = load_scene("indian_pines", root=tmp_path, checksum=False)  # re-saves under the registry's names
    assert scene.num_classes == 16 and scene.class_names[0] == "Alfalfa"
    assert int((scene.labels > 0).sum()) == 10249
    assert (np.bincount(scene.labels.ravel(), minlength=17)[1:] > 0).all()
    wl = scene.cube.wavelengths
    assert wl.shape == (200,) and np.all(np.diff(wl) > 0)  # detector overlaps sorted
    assert scene.cube.meta["sorted_bands"] is True
    order = np.asarray(scene.cube.meta["band_index"])
    np.testing.assert_array_equal(wl, indian_pines_wavelengths()[order])


def test_label_and_cube_shapes_must_match(tmp_path, shared_data):
    shutil.copyfile(shared_data / "indian_pines" / "Indian_pines_gt.mat", tmp_path / "Indian_pines_gt.mat")
    _fake_cube(tmp_path / "Indian_pines_corrected.mat", "indian_pines_corrected", (145, 144, 200))
    with pytest.raises(ShapeMismatchError) as info:
        load_scene("indian_pines", root=tmp_path, checksum=False)  # past the checksum, to the shapes
    msg = str(info.value)
    assert "Indian_pines_gt.mat" in msg and "Indian_pines_corrected.mat" in msg
    assert "145 x 145" in msg and "145 x 144" in msg


def test_wrong_band_count_is_integrity_error(tmp_path, shared_data):
    shutil.copyfile(shared_data / "indian_pines" / "Indian_pines_gt.mat", tmp_path / "Indian_pines_gt.mat")
    _fake_cube(tmp_path / "Indian_pines_corrected.mat", "indian_pines_corrected", (145, 145, 199))
    with pytest.raises(IntegrityError, match=r"\(145, 145, 199\).*\(145, 145, 200\)"):
        load_scene("indian_pines", root=tmp_path, checksum=False)  # past the checksum, to the shapes


def test_pavia_university_v73_ground_truth_in_matlab_orientation(tmp_path, shared_data):
    folder = tmp_path / "pavia_university"
    folder.mkdir()
    shutil.copyfile(shared_data / "mat_v73" / "PaviaU_gt_v73.mat", folder / "PaviaU_gt.mat")
    _fake_cube(folder / "PaviaU.mat", "paviaU", (610, 340, 103))
    scene = load_scene("pavia_university", root=tmp_path)
    assert scene.labels.shape == (610, 340)
    assert int((scene.labels > 0).sum()) == 42776 and scene.num_classes == 9
