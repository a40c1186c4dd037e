"""ENVI round trips through spectral's writer: every interleave, byte order and header option."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hsi.errors import CubeFormatError, DatasetNotFoundError
from hsi.io import open_cube, read_cube, read_labels


@pytest.mark.parametrize("interleave", ["bsq", "bil", "bip"])
@pytest.mark.parametrize("byteorder", [0, 1])
@pytest.mark.parametrize("dtype", [np.int16, np.float32])
def test_interleave_byte_order_round_trip(tmp_path, io_files, interleave, byteorder, dtype):
    cube = io_files.make_cube(dtype=dtype)
    wl = io_files.wavelengths(6)
    header, _ = io_files.write_envi(tmp_path, cube, interleave=interleave, byteorder=byteorder,
                                    metadata={"wavelength": list(wl), "wavelength units": "Nanometers"})
    out = read_cube(header)
    assert out.data.dtype == np.float32 and out.data.flags.c_contiguous and out.shape == (7, 5, 6)
    np.testing.assert_array_equal(out.data, cube.astype(np.float32))
    np.testing.assert_array_equal(out.wavelengths, wl)
    assert out.meta["interleave"] == interleave and out.meta["byte_order"] == byteorder
    assert out.meta["original_dtype"] == np.dtype(dtype).name


def test_header_offset(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    header, binary = io_files.write_envi(tmp_path, cube, interleave="bil", offset=64)
    out = read_cube(binary)
    np.testing.assert_array_equal(out.data, cube.astype(np.float32))
    assert out.meta["header_offset"] == 64 and out.meta["header"] == str(header)


@pytest.mark.parametrize("units", ["Micrometers", "um", None])
def test_micrometer_wavelengths_become_nm(tmp_path, io_files, units):
    cube = io_files.make_cube()
    wl_um = io_files.wavelengths(6, start=0.45, step=0.1)
    meta = {"wavelength": list(wl_um)}
    if units:
        meta["wavelength units"] = units
    header, _ = io_files.write_envi(tmp_path, cube, metadata=meta)
    out = read_cube(header)
    np.testing.assert_allclose(out.wavelengths, wl_um * 1000)
    assert out.wavelengths[0] == pytest.approx(450.0)


def test_descending_wavelengths_are_reversed(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    wl = io_files.wavelengths(6)[::-1]
    header, _ = io_files.write_envi(tmp_path, cube, interleave="bip",
                                    metadata={"wavelength": list(wl), "fwhm": [1, 2, 3, 4, 5, 6]})
    out = read_cube(header)
    np.testing.assert_array_equal(out.data, cube[..., ::-1].astype(np.float32))
    np.testing.assert_array_equal(out.wavelengths, wl[::-1])
    assert out.meta["reversed_bands"] is True
    assert out.meta["fwhm"] == [6, 5, 4, 3, 2, 1]
    with open_cube(header) as lazy:
        np.testing.assert_array_equal(lazy.read_window(slice(1, 3), slice(2, 5)), out.data[1:3, 2:5])


def test_detector_overlap_is_sorted(tmp_path, io_files):
    """AVIRIS-like: two detectors of 8 bands whose ranges overlap (Jasper Ridge has this)."""
    cube = io_files.make_cube(shape=(4, 3, 16))
    wl = np.r_[400 + 10 * np.arange(8), 465 + 10 * np.arange(8)]
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"wavelength": list(wl)})
    out = read_cube(header)
    order = np.argsort(wl, kind="stable")
    np.testing.assert_array_equal(out.wavelengths, wl[order])
    np.testing.assert_array_equal(out.data, cube[..., order])
    assert out.meta["sorted_bands"] is True and out.meta["band_index"] == order.tolist()


def test_bad_band_list_is_recorded_and_optionally_dropped(tmp_path, io_files):
    cube = io_files.make_cube()
    wl = io_files.wavelengths(6)
    bbl = [1, 0, 1, 1, 0, 1]
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"wavelength": list(wl), "bbl": bbl})
    kept = read_cube(header)
    assert kept.meta["bbl"] == bbl and kept.n_bands == 6 and kept.meta["removed_bands"] == []
    dropped = read_cube(header, drop_bad_bands=True)
    np.testing.assert_array_equal(dropped.data, cube[..., [0, 2, 3, 5]])
    np.testing.assert_array_equal(dropped.wavelengths, wl[[0, 2, 3, 5]])
    assert dropped.meta["removed_bands"] == [1, 4] and dropped.meta["bbl"] == [1, 1, 1, 1]


def test_data_ignore_value_becomes_nan(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    cube[0, 0, :] = -9999
    cube[3, 2, 4] = -9999
    header, _ = io_files.write_envi(tmp_path, cube, interleave="bil", metadata={"data ignore value": -9999})
    out = read_cube(header, layout=None)
    mask = cube == -9999
    assert np.isnan(out.data[mask]).all() and not np.isnan(out.data[~mask]).any()
    assert out.meta["n_ignored"] == 7 and out.meta["ignore_value"] == -9999
    np.testing.assert_array_equal(out.data[~mask], cube[~mask].astype(np.float32))


def test_reflectance_scale_factor_divides_after_float_conversion(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    cube[1, 1, 1] = 32767  # would overflow if scaled in int16
    header, _ = io_files.write_envi(tmp_path, cube, metadata={"reflectance scale factor": 10000})
    out = read_cube(header)
    np.testing.assert_allclose(out.data, cube.astype(np.float32) / np.float32(10000), rtol=1e-7)
    assert out.meta["scale_factor"] == 10000.0
    raw = read_cube(header, scale=False)
    np.testing.assert_array_equal(raw.data, cube.astype(np.float32))
    assert raw.meta["scale_factor"] is None


def test_samson_style_header_name_from_either_file(tmp_path, io_files):
    cube = io_files.make_cube(dtype=np.int16)
    header, binary = io_files.write_envi(tmp_path, cube, name="samson_1", samson_style=True)
    assert header.name == "samson_1.img.hdr" and binary.name == "samson_1.img"
    for given in (header, binary):
        np.testing.assert_array_equal(read_cube(given).data, cube.astype(np.float32))


@pytest.mark.parametrize("interleave", ["bil", "bip"])
def test_interleave_is_case_insensitive(tmp_path, io_files, interleave):
    # spectral alone reads "Bil"/"Bip" (not all lower or upper case) as BSQ: scrambled data
    cube = io_files.make_cube()
    header, _ = io_files.write_envi(tmp_path, cube, interleave=interleave)
    text = header.read_text()
    header.write_text(text.replace(f"interleave = {interleave}", f"interleave = {interleave.capitalize()}"))
    out = read_cube(header)
    assert out.meta["interleave"] == interleave
    np.testing.assert_array_equal(out.data, cube)


@pytest.mark.parametrize(
    ("line", "bad", "match"),
    [
        ("interleave = bsq", "interleave = xyz", "interleave 'xyz'"),
        ("byte order = 0", "byte order = 2", "byte order '2'"),
        ("byte order = 0", "", r"lacks required field\(s\) \['byte order'\]"),
    ],
)
def test_bad_interleave_or_byte_order_raises(tmp_path, io_files, line, bad, match):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube())
    text = header.read_text()
    assert line in text
    header.write_text(text.replace(line, bad))
    with pytest.raises(CubeFormatError, match=match) as info:
        read_cube(header)
    assert header.name in str(info.value)


def test_spectral_library_is_not_read_as_a_cube(tmp_path, io_files):
    header, _ = io_files.write_envi(tmp_path, io_files.make_cube(shape=(4, 6, 1)))
    header.write_text(header.read_text() + "file type = ENVI Spectral Library\n")
    with pytest.raises(CubeFormatError, match="spectral library"):
        read_cube(header)


def test_header_without_binary(tmp_path, io_files):
    header, binary = io_files.write_envi(tmp_path, io_files.make_cube())
    binary.unlink()
    with pytest.raises(DatasetNotFoundError, match="no binary image"):
        read_cube(header)


def test_single_band_envi_labels(tmp_path, io_files):
    gt = np.random.default_rng(2).integers(0, 4, size=(7, 5, 1)).astype(np.uint8)
    header, _ = io_files.write_envi(tmp_path, gt, name="gt")
    labels = read_labels(header)
    assert labels.shape == (7, 5) and labels.dtype == np.int64
    np.testing.assert_array_equal(labels, gt[..., 0])


def test_windows_each_interleave_match_full(tmp_path, io_files):
    cube = io_files.make_cube(shape=(11, 8, 5), dtype=np.int16)
    for interleave in ("bsq", "bil", "bip"):
        header, _ = io_files.write_envi(tmp_path, cube, name=interleave, interleave=interleave, byteorder=1,
                                        metadata={"reflectance scale factor": 100})
        with open_cube(header) as lazy:
            win = lazy.read_window(slice(2, 9), slice(0, 3))
        np.testing.assert_allclose(win, cube[2:9, 0:3].astype(np.float32) / 100)


def test_large_sparse_envi_is_memory_mapped(tmp_path):
    """A 1 GB ENVI file (sparse on disk): open_cube and a window read never load it whole."""
    rows, cols, bands = 8000, 8000, 8
    binary = tmp_path / "big.img"
    with open(binary, "wb") as f:
        f.truncate(rows * cols * bands * 2)
        f.seek(2 * (5 * cols * bands + 7 * bands + 3))  # BIP: row 5, col 7, band 3
        f.write(np.int16(1234).tobytes())
    (tmp_path / "big.hdr").write_text(
        f"ENVI\nsamples = {cols}\nlines = {rows}\nbands = {bands}\nheader offset = 0\n"
        "file type = ENVI Standard\ndata type = 2\ninterleave = bip\nbyte order = 0\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with open_cube(binary) as lazy:
            assert lazy.shape == (rows, cols, bands)
            win = lazy.read_window(slice(4, 6), slice(6, 9))
    assert win.shape == (2, 3, 8) and win[1, 1, 3] == 1234 and win.sum() == 1234


@pytest.mark.parametrize("interleave", ["bsq", "bip"])
def test_windows_are_arrays_of_their_own(tmp_path, io_files, interleave):
    # a native-order float32 BIP file maps straight to H x W x C: the window must still be a
    # writeable copy (inference preprocesses blocks in place), never a view of the file
    cube = io_files.make_cube((6, 5, 4), np.float32)
    header, _ = io_files.write_envi(tmp_path, cube, interleave=interleave)
    with open_cube(header) as lazy:
        first = lazy.read_window(slice(1, 4), slice(0, 3))
        assert first.flags.writeable and first.flags.owndata and first.dtype == np.float32
        first[...] = -1.0
        np.testing.assert_array_equal(lazy.read_window(slice(1, 4), slice(0, 3)), cube[1:4, 0:3])
