"""Real public files from ../shared/data (skipped when absent): shapes, keys, orientation, counts."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io

from hsi.io import open_cube, read_cube, read_labels

# Standard per-class labeled-pixel counts (classes 1..K); their totals are the README's.
CLASS_COUNTS = {
    "indian_pines": [46, 1428, 830, 237, 483, 730, 28, 478, 20, 972, 2455, 593, 205, 1265, 386, 93],
    "pavia_university": [6631, 18649, 2099, 3064, 1345, 5029, 1330, 3682, 947],
    "salinas": [2009, 3726, 1976, 1394, 2678, 3959, 3579, 11271, 6203, 3278, 1068, 1927, 916, 1070, 7268, 1807],
    "ksc": [761, 243, 256, 252, 161, 229, 105, 431, 520, 404, 419, 503, 927],
}
TOTALS = {"indian_pines": 10249, "pavia_university": 42776, "salinas": 54129, "ksc": 5211}


def counts(labels: np.ndarray) -> list[int]:
    return np.bincount(labels.ravel())[1:].tolist()


def test_class_count_table_matches_readme_totals():
    for name, per_class in CLASS_COUNTS.items():
        assert sum(per_class) == TOTALS[name]


@pytest.fixture(scope="module")
def jasper(shared_data):
    return shared_data / "envi" / "jasper_ridge"


def test_jasper_ridge_envi_bil(jasper):
    cube = read_cube(jasper / "jasperRidge2_R198.hdr")
    assert cube.shape == (100, 100, 198) and cube.data.dtype == np.float32 and cube.data.flags.c_contiguous
    assert cube.meta["interleave"] == "bil" and cube.meta["original_dtype"] == "int16"
    wl = cube.wavelengths
    assert wl.shape == (198,) and np.all(np.diff(wl) > 0)
    assert wl[0] == pytest.approx(399.37, abs=0.01) and wl[-1] == pytest.approx(2457.24, abs=0.01)
    # AVIRIS detector overlap (664 nm follows 676 nm in the header) is sorted, and recorded
    assert cube.meta["sorted_bands"] is True and len(cube.meta["band_index"]) == 198
    assert cube.meta["scale_factor"] == 10000.0
    assert float(cube.data.max()) == pytest.approx(0.5437, abs=1e-6)
    assert float(cube.data.min()) == pytest.approx(-0.0448, abs=1e-6)
    assert len(cube.meta["bbl"]) == 198


def test_jasper_envi_equals_abs_of_matlab_y_column_major(jasper):
    raw = read_cube(jasper / "jasperRidge2_R198.img", scale=False)
    assert raw.meta["scale_factor"] is None
    mat = scipy.io.loadmat(jasper / "jasperRidge2_R198.mat")
    y = mat["Y"]  # (198, 10000), bands in file order, pixels column-major
    y_hwc = y.reshape(198, 100, 100, order="F").transpose(1, 2, 0)[..., raw.meta["band_index"]]
    np.testing.assert_array_equal(np.abs(raw.data), y_hwc.astype(np.float32))
    assert (raw.data < 0).sum() == 16017


def test_jasper_windows(jasper):
    full = read_cube(jasper / "jasperRidge2_R198.hdr").data
    with open_cube(jasper / "jasperRidge2_R198.hdr") as lazy:
        assert lazy.shape == (100, 100, 198)
        np.testing.assert_array_equal(lazy.read_window(slice(10, 30), slice(90, 100)), full[10:30, 90:100])


def test_samson_envi_bsq_and_matlab_v(shared_data):
    folder = shared_data / "envi" / "samson"
    cube = read_cube(folder / "samson_1.img.hdr")
    assert cube.shape == (95, 95, 156) and cube.data.dtype == np.float32
    assert cube.meta["interleave"] == "bsq" and cube.meta["header"].endswith("samson_1.img.hdr")
    assert np.all(np.diff(cube.wavelengths) > 0) and not cube.meta["reversed_bands"]
    assert cube.wavelengths[0] == pytest.approx(400.94, abs=0.01)
    assert cube.wavelengths[-1] == pytest.approx(899.07, abs=0.01)
    assert cube.meta["scale_factor"] is None and cube.data.max() == 1402 and cube.data.min() == -17
    np.testing.assert_array_equal(read_cube(folder / "samson_1.img").data, cube.data)
    v = scipy.io.loadmat(folder / "samson_1.mat")["V"]
    v_hwc = v.reshape(156, 95, 95, order="F").transpose(1, 2, 0)
    np.testing.assert_array_equal(np.maximum(cube.data.astype(np.float64), 0) / 1402, v_hwc)


@pytest.mark.parametrize(
    ("name", "file", "shape"),
    [
        ("pavia_university", "PaviaU_gt_v73.mat", (610, 340)),
        ("salinas", "Salinas_gt_v73.mat", (512, 217)),
        ("ksc", "KSC_gt_v73.mat", (512, 614)),
        ("indian_pines", "Indian_pines_gt_v73.mat", (145, 145)),
    ],
)
def test_matlab_v73_label_maps(shared_data, name, file, shape):
    labels = read_labels(shared_data / "mat_v73" / file)
    assert labels.shape == shape and labels.dtype == np.int64
    assert counts(labels) == CLASS_COUNTS[name]


@pytest.mark.parametrize(
    ("name", "file", "v73"),
    [
        ("indian_pines", "indian_pines/Indian_pines_gt.mat", "Indian_pines_gt_v73.mat"),  # key hyperimg_gt
        ("indian_pines", "indian_pines/Indian_pines_gt_key_y.mat", "Indian_pines_gt_v73.mat"),  # key y
        ("pavia_university", "pavia_university/PaviaU_gt.mat", "PaviaU_gt_v73.mat"),
        ("salinas", "salinas/Salinas_gt.mat", "Salinas_gt_v73.mat"),  # key hyperimg_gt
    ],
)
def test_resaved_label_maps_found_by_discovery_and_agree_with_v73(shared_data, name, file, v73):
    labels = read_labels(shared_data / file)
    assert counts(labels) == CLASS_COUNTS[name]
    np.testing.assert_array_equal(labels, read_labels(shared_data / "mat_v73" / v73))


def test_salinas_a_labels(shared_data):
    labels = read_labels(shared_data / "salinas_a" / "SalinasA_gt.mat")
    assert labels.shape == (83, 86) and int((labels > 0).sum()) == 5348
    assert np.unique(labels[labels > 0]).tolist() == [1, 10, 11, 12, 13, 14]


def test_erdas_gis_agrees_with_matlab_map(shared_data):
    gis = read_labels(shared_data / "indian_pines" / "92AV3GT.GIS")
    mat = read_labels(shared_data / "indian_pines" / "Indian_pines_gt.mat", key="hyperimg_gt")
    assert gis.shape == (145, 145) and gis.max() == 16
    assert int((gis > 0).sum()) == 10366
    both = (gis > 0) & (mat > 0)
    assert int(both.sum()) == 10110
    np.testing.assert_array_equal(gis[both], mat[both])
    assert int(((gis > 0) & (mat == 0)).sum()) == 256 and int(((mat > 0) & (gis == 0)).sum()) == 139


@pytest.mark.parametrize(
    ("file", "key", "shape"),
    [
        ("an_hsi_image_sub_for_demo.mat", "hsi_img_sub", (51, 88, 72)),
        ("an_hsi_img_for_class_demo.mat", "hsi_sub", (31, 20, 72)),  # wavelengths under 'wavlength' (sic)
        ("an_hsi_img_for_tgt_det_demo.mat", "hsi_sub", (36, 36, 72)),
    ],
)
def test_muufl_chips_with_wavelengths(shared_data, file, key, shape):
    cube = read_cube(shared_data / "muufl_gulfport" / file)
    assert cube.meta["key"] == key and cube.shape == shape and cube.meta["original_layout"] == "HWC"
    assert cube.wavelengths.shape == (72,) and np.all(np.diff(cube.wavelengths) > 0)
    assert cube.wavelengths[0] == pytest.approx(367.7, abs=0.01)
    assert cube.wavelengths[-1] == pytest.approx(1043.4, abs=0.01)
    raw = scipy.io.loadmat(shared_data / "muufl_gulfport" / file)[key]
    np.testing.assert_array_equal(cube.data, raw)


def test_muufl_masks(shared_data):
    folder = shared_data / "muufl_gulfport"
    mask = read_labels(folder / "an_hsi_image_sub_for_demo.mat")
    assert mask.shape == (51, 88) and int((mask > 0).sum()) == 3884
    gt = read_labels(folder / "an_hsi_img_for_tgt_det_demo.mat")
    assert gt.shape == (36, 36) and int((gt > 0).sum()) == 3


def test_aviris_224_band_chip(shared_data):
    cube = read_cube(shared_data / "aviris_224band" / "a_hsi_img_for_VI_demo.mat", expected_bands=224)
    assert cube.shape == (90, 90, 224) and cube.meta["original_dtype"] == "int16"
    assert cube.wavelengths[0] == pytest.approx(365.91, abs=0.01)
    assert cube.wavelengths[-1] == pytest.approx(2496.22, abs=0.01)
    assert np.all(np.diff(cube.wavelengths) > 0) and cube.meta["sorted_bands"] is True
    assert cube.data.min() == -12 and cube.data.max() == 8143
