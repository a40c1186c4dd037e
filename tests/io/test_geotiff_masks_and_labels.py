"""GeoTIFF corners of the reader contract: mask bands as no-data, partial band-description wavelengths,
class maps with more than 255 classes (hsi infer's uint16 maps), and the advice of georeference errors.

Every file is generated here from a seeded generator, deliberately broken ones included.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hsi.errors import CubeFormatError, DataQualityWarning, GeoRefError
from hsi.io import open_cube, read_cube, read_labels

rasterio = pytest.importorskip("rasterio")

H, W, C = 16, 14, 5


def _write(path: Path, data: np.ndarray, *, mask: np.ndarray | None = None, descriptions=None, transform=None,
           crs: str | None = None) -> Path:
    """(H, W, C) or (H, W) ``data`` as a GeoTIFF; ``mask`` (H, W) bool (True = valid) as an internal mask band."""
    from rasterio.errors import NotGeoreferencedWarning

    bands = data[..., None] if data.ndim == 2 else data
    profile = {"driver": "GTiff", "height": bands.shape[0], "width": bands.shape[1], "count": bands.shape[2],
               "dtype": bands.dtype.name}
    if transform is not None:
        profile.update(transform=transform, crs=crs)
    with warnings.catch_warnings(), rasterio.Env(GDAL_TIFF_INTERNAL_MASK=True):
        warnings.simplefilter("ignore", NotGeoreferencedWarning)
        with rasterio.open(path, "w", **profile) as dst:
            dst.write(np.moveaxis(bands, -1, 0))
            if mask is not None:
                dst.write_mask(np.where(mask, 255, 0).astype(np.uint8))
            for i, text in enumerate(descriptions or [], start=1):
                dst.set_band_description(i, text)
    return path


@pytest.fixture
def masked(tmp_path):
    """An int16 cube and a uint8 label map, both with an internal mask band hiding a 3 x 4 block and a column."""
    rng = np.random.default_rng(11)
    cube = rng.integers(1, 5000, size=(H, W, C)).astype(np.int16)
    labels = rng.integers(1, 4, size=(H, W)).astype(np.uint8)
    valid = np.ones((H, W), bool)
    valid[2:5, 3:7] = False
    valid[:, -1] = False
    assert not (cube == 0).any()  # the mask, not a nodata value, is what hides pixels
    return SimpleNamespace(cube_path=_write(tmp_path / "cube.tif", cube, mask=valid),
                           labels_path=_write(tmp_path / "labels.tif", labels, mask=valid), cube=cube,
                           labels=labels, valid=valid)


def test_mask_band_pixels_are_nodata_in_the_cube(masked):
    with pytest.warns(DataQualityWarning, match="no-data value or mask"):
        cube = read_cube(masked.cube_path)
    nan_pixels = np.isnan(cube.data).any(axis=-1)
    np.testing.assert_array_equal(nan_pixels, ~masked.valid)  # every band of a masked pixel, nothing else
    assert np.isnan(cube.data[~masked.valid]).all()
    np.testing.assert_array_equal(cube.data[masked.valid], masked.cube[masked.valid].astype(np.float32))
    assert cube.meta["nodata_mask"] == "the file's mask band"
    assert cube.meta["n_ignored"] == int((~masked.valid).sum()) * C
    from hsi.preprocess._base import nodata_mask

    np.testing.assert_array_equal(nodata_mask(cube.data), ~masked.valid)  # training and inference leave them out


def test_mask_band_applies_to_windows_too(masked):
    with pytest.warns(DataQualityWarning):
        whole = read_cube(masked.cube_path).data
    with open_cube(masked.cube_path) as lazy:
        window = lazy.read_window(slice(1, 9), slice(2, 14))
    np.testing.assert_array_equal(window, whole[1:9, 2:14])  # NaN at the same places


def test_mask_band_pixels_are_unlabeled_in_a_label_map(masked):
    labels = read_labels(masked.labels_path)
    np.testing.assert_array_equal(labels[~masked.valid], 0)
    np.testing.assert_array_equal(labels[masked.valid], masked.labels[masked.valid])


def test_inspect_names_the_mask(masked, capsys):
    from hsi.cli import main

    assert main(["inspect", str(masked.cube_path)]) == 0
    out = capsys.readouterr().out
    assert "nodata mask: the file's mask band" in out
    assert main(["inspect", str(masked.labels_path)]) == 0
    assert "nodata mask: the file's mask band (masked pixels read as 0, unlabeled)" in capsys.readouterr().out


def test_a_file_without_mask_band_reads_every_pixel(tmp_path):
    cube = np.random.default_rng(2).integers(1, 5000, size=(H, W, C)).astype(np.int16)
    read = read_cube(_write(tmp_path / "plain.tif", cube))
    assert not np.isnan(read.data).any() and read.meta["nodata_mask"] is None


# ---------------------------------------------------------------- wavelengths in band descriptions
def test_descriptions_on_some_bands_warn_naming_the_file_and_the_bands(tmp_path):
    rng = np.random.default_rng(3)
    cube = rng.integers(1, 5000, size=(H, W, 16)).astype(np.int16)
    texts = [f"Band {i + 1} ({450 + 10 * i} nm)" for i in range(16)]
    texts[6] = "Band 7"  # one band without its wavelength
    path = _write(tmp_path / "partial.tif", cube, descriptions=texts)
    with pytest.warns(DataQualityWarning) as caught:
        read = read_cube(path)
    messages = [str(w.message) for w in caught if "band descriptions" in str(w.message)]
    assert len(messages) == 1 and "\n" not in messages[0]
    assert str(path) in messages[0] and "15 of 16 bands" in messages[0] and "band 7 without one" in messages[0]
    assert read.wavelengths is None  # wavelengths cover every band or none


def test_descriptions_on_every_band_give_wavelengths_without_a_warning(tmp_path):
    cube = np.random.default_rng(4).integers(1, 5000, size=(H, W, 4)).astype(np.int16)
    path = _write(tmp_path / "full.tif", cube, descriptions=[f"Band {i} ({w} nm)" for i, w in
                                                            enumerate((500, 600, 700, 800), 1)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataQualityWarning)
        read = read_cube(path)
    np.testing.assert_array_equal(read.wavelengths, [500.0, 600.0, 700.0, 800.0])


# ---------------------------------------------------------------- class maps past 255 classes
def _class_map(k: int = 300) -> np.ndarray:
    rng = np.random.default_rng(5)
    blocks = rng.permutation(np.arange(1, k + 1))  # each class a 2 x 2 block, every class present
    side = int(np.ceil(np.sqrt(k)))
    grid = np.zeros(side * side, np.int64)
    grid[:k] = blocks
    return np.kron(grid.reshape(side, side), np.ones((2, 2), np.int64))


def test_the_uint16_map_hsi_infer_writes_reads_back_as_labels(tmp_path):
    from hsi.io.writers.geotiff import write_label_cog

    labels = _class_map(300)
    names = ["Unclassified"] + [f"class {i}" for i in range(1, 301)]
    palette = np.random.default_rng(6).integers(0, 256, size=(301, 3))
    path = write_label_cog(tmp_path / "map.tif", labels, names, palette)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the map has no georeference on purpose
        with rasterio.open(path) as src:
            assert src.dtypes[0] == "uint16"
    np.testing.assert_array_equal(read_labels(path), labels)


def test_an_undeclared_uint16_band_with_many_values_is_still_refused_naming_real_options(tmp_path):
    data = np.random.default_rng(8).integers(1, 4000, size=(40, 40)).astype(np.uint16)  # a band, not classes
    path = _write(tmp_path / "band.tif", data)
    with pytest.raises(CubeFormatError) as err:
        read_labels(path)
    message = str(err.value)
    assert str(path) in message and "looks like data" in message
    assert "colour table" in message and "read_labels(..., max_classes=N)" in message
    assert read_labels(path, max_classes=5000).shape == (40, 40)


# ---------------------------------------------------------------- georeference advice
def test_rotated_grid_advice_names_what_read_cube_accepts(tmp_path):
    from affine import Affine

    cube = np.random.default_rng(9).integers(1, 5000, size=(H, W, C)).astype(np.int16)
    path = _write(tmp_path / "rotated.tif", cube, transform=Affine(30.0, 5.0, 5e5, 5.0, -30.0, 4.5e6),
                  crs="EPSG:32633")
    with pytest.raises(GeoRefError) as err:
        read_cube(path)
    message = str(err.value)
    assert "rotated" in message and 'georef="ignore"' in message and "ignore_georef=True for HSIDataModule" in message
    assert read_cube(path, georef="ignore").meta["georef"] is None  # the advice works as written


@pytest.mark.parametrize("command", ["train", "infer", "evaluate", "inspect"])
def test_the_commands_the_advice_names_have_the_option(command, capsys):
    from hsi.cli import main
    from hsi.io.georef import IGNORE_HINT

    assert command in IGNORE_HINT
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--ignore-georef" in capsys.readouterr().out
