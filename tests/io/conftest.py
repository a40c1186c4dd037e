"""Writers for tiny test files in every format the readers support (all seeded, in tmp_path)."""

from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace

import h5py
import numpy as np
import pytest
import spectral.io.envi as spy_envi

_MATLAB_CLASS = {
    np.dtype("float64"): b"double", np.dtype("float32"): b"single", np.dtype("uint8"): b"uint8",
    np.dtype("int16"): b"int16", np.dtype("uint16"): b"uint16", np.dtype("int32"): b"int32",
}


def make_cube(shape=(7, 5, 6), dtype=np.float32, seed=0) -> np.ndarray:
    """Random H x W x C array; asymmetric default shape so any transpose is caught."""
    rng = np.random.default_rng(seed)
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(-300, 3000, size=shape).astype(dtype)
    return rng.random(shape).astype(dtype)


def wavelengths(n: int, start: float = 400.0, step: float = 10.0) -> np.ndarray:
    return start + step * np.arange(n, dtype=np.float64)


def write_v73(path: Path, variables: dict[str, np.ndarray]) -> Path:
    """Emulate MATLAB -v7.3: HDF5 with a 512-byte MATLAB userblock, arrays stored transposed."""
    with h5py.File(path, "w", userblock_size=512) as handle:
        for name, value in variables.items():
            value = np.asarray(value)
            ds = handle.create_dataset(name, data=value.T)  # MATLAB is column-major
            ds.attrs["MATLAB_class"] = np.bytes_(_MATLAB_CLASS[value.dtype])
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 00:00:00 2024 HDF5 schema 1.00 ."
    with open(path, "r+b") as handle:
        handle.write(text.ljust(116, b" ") + b"\0" * 8 + b"\x00\x02IM")
    return path


def write_envi(
    folder: Path, cube: np.ndarray, name: str = "image", interleave: str = "bsq", byteorder: int = 0,
    metadata: dict | None = None, offset: int = 0, samson_style: bool = False,
) -> tuple[Path, Path]:
    """ENVI pair through spectral's writer; ``offset`` bytes of padding are then inserted."""
    if samson_style:
        header = folder / f"{name}.img.hdr"
        spy_envi.save_image(str(header), cube, interleave=interleave, byteorder=byteorder,
                            metadata=dict(metadata or {}), ext="", force=True)
        binary = folder / f"{name}.img"
    else:
        header = folder / f"{name}.hdr"
        spy_envi.save_image(str(header), cube, interleave=interleave, byteorder=byteorder,
                            metadata=dict(metadata or {}), ext=".img", force=True)
        binary = folder / f"{name}.img"
    if offset:
        payload = binary.read_bytes()
        binary.write_bytes(b"\xab" * offset + payload)
        text = header.read_text().replace("header offset = 0", f"header offset = {offset}")
        assert f"header offset = {offset}" in text
        header.write_text(text)
    return header, binary


def write_lan(path: Path, cube: np.ndarray) -> Path:
    """ERDAS 7.4 LAN: 128-byte HEAD74 header then BIL data (uint8 -> packing 0, int16 -> 2)."""
    packing = {np.dtype("uint8"): 0, np.dtype("int16"): 2}[cube.dtype]
    rows, cols, bands = cube.shape
    header = bytearray(128)
    header[0:6] = b"HEAD74"
    header[6:10] = struct.pack("<hh", packing, bands)
    header[16:24] = struct.pack("<ii", cols, rows)
    payload = np.ascontiguousarray(cube.transpose(0, 2, 1)).astype(cube.dtype.newbyteorder("<")).tobytes()
    path.write_bytes(bytes(header) + payload)
    return path


@pytest.fixture
def io_files():
    """The writers above, for tests (tests cannot import each other)."""
    return SimpleNamespace(make_cube=make_cube, wavelengths=wavelengths, write_v73=write_v73,
                           write_envi=write_envi, write_lan=write_lan)


@pytest.fixture(scope="session")
def geotiff_module():
    """``tests/io/geotiff_fixtures.py`` as a module (it writes the GeoTIFF fixtures; rasterio needed)."""
    import importlib.util

    pytest.importorskip("rasterio")
    spec = importlib.util.spec_from_file_location("geotiff_fixtures", Path(__file__).with_name("geotiff_fixtures.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
