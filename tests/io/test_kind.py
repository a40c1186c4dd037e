"""A colour photo read as a cube is said to be one: by the library (a warning), by hsi inspect and by hsi train."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest

from hsi.errors import NotHyperspectralWarning
from hsi.io import read_cube
from hsi.io.kind import colour_image_reason

from tests.helpers import CHILD_TIMEOUT

rasterio = pytest.importorskip("rasterio")

PHRASE = "3 bands of 8-bit integers without wavelengths: this looks like a colour image, not a hyperspectral cube"


def _write_tif(path: Path, bands: np.ndarray) -> Path:
    """(H, W, C) or (H, W) ``bands`` as a plain GeoTIFF (no georeference, no wavelengths)."""
    from rasterio.errors import NotGeoreferencedWarning

    data = bands[..., None] if bands.ndim == 2 else bands
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)
        with rasterio.open(path, "w", driver="GTiff", height=data.shape[0], width=data.shape[1],
                           count=data.shape[2], dtype=data.dtype.name) as dst:
            dst.write(np.moveaxis(data, -1, 0))
    return path


@pytest.fixture
def photo(tmp_path) -> tuple[Path, Path]:
    """A seeded 'colour photo' (24 x 20 x 3 uint8) and a two-class label map on its grid."""
    rng = np.random.default_rng(7)
    rgb = rng.integers(0, 256, size=(24, 20, 3)).astype(np.uint8)
    labels = np.ones((24, 20), np.uint8)
    labels[12:] = 2
    return _write_tif(tmp_path / "photo.tif", rgb), _write_tif(tmp_path / "photo_gt.tif", labels)


def test_reading_a_colour_photo_warns_once_with_the_rule(photo):
    with pytest.warns(NotHyperspectralWarning) as caught:
        cube = read_cube(photo[0])
    mine = [w for w in caught if issubclass(w.category, NotHyperspectralWarning)]
    assert len(mine) == 1 and str(mine[0].message) == f"{photo[0]}: {PHRASE}"
    assert cube.looks_like() == f"{photo[0]}: {PHRASE}"


@pytest.mark.parametrize("case", ["wavelengths", "uint16", "many bands"])
def test_hyperspectral_cubes_are_not_called_photos(tmp_path, case):
    rng = np.random.default_rng(1)
    bands = 3 if case != "many bands" else 12
    cube = rng.integers(0, 256, size=(30, 28, bands)).astype(np.uint16 if case == "uint16" else np.uint8)
    path = tmp_path / "c.h5"
    with h5py.File(path, "w") as f:
        f["cube"] = cube
        if case == "wavelengths":
            f["wavelengths"] = np.array([450.0, 550.0, 650.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotHyperspectralWarning)
        read = read_cube(path)
    assert read.looks_like() is None


def test_the_rule_reads_only_meta_band_count_and_wavelengths():
    meta = {"source": "x.tif", "original_dtype": "uint8"}
    assert colour_image_reason(meta, 4, None).startswith("x.tif: 4 bands (colour and alpha) of 8-bit integers")
    assert colour_image_reason(meta, 3, np.array([1.0, 2.0, 3.0])) is None
    assert colour_image_reason({**meta, "original_dtype": "float32"}, 3, None) is None


def test_inspect_says_it_in_one_warning_line(photo, capsys):
    from hsi.cli import main

    assert main(["inspect", str(photo[0])]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"warning: {photo[0]}: {PHRASE}"]


def test_train_on_a_photo_says_it_once(photo, tmp_path):
    """The reported case: ``hsi train --cube photo.tif --labels ...`` ran without a word (a real process:
    the command's own warning display, not the test runner's)."""
    cube, labels = photo
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "hsi", "train", "--cube", str(cube), "--labels", str(labels), "--model", "svm",
         "--seed", "0", "--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"],
        capture_output=True, text=True, timeout=CHILD_TIMEOUT, env=env, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "colour image" in line]
    assert lines == [f"warning: {cube}: {PHRASE}"], done.stderr
