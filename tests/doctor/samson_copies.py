"""Copies of the real Samson scene, intact or broken on purpose, written into a test's folder.

Each copy is deterministic (the shuffled band order is seeded) and keeps the file's
wavelengths ascending as stored: only the data are wrong, as when a conversion goes
astray. The copies go into pytest's ``tmp_path``; ``../shared`` is only read.

- ``intact``: the scene as read, as HDF5 (cube + label map + wavelengths);
- ``labels_transposed``, ``labels_down_1``, ``labels_down_5``: the label map transposed,
  or shifted down by 1 or 5 rows (the uncovered rows unlabelled);
- ``bands_reversed``, ``bands_shuffled``: the band axis reversed, or permuted (seed 0);
- ``scaled_int16``: Samson's reflectance-like form (``max(counts, 0) / 1402``, what its
  MATLAB file stores) times 10000, as an int16 ENVI file whose header has no
  ``reflectance scale factor``, like the original.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

FAULTS = ("intact", "labels_transposed", "labels_down_1", "labels_down_5", "bands_reversed", "bands_shuffled",
          "scaled_int16")
#: label map of the copies: the Samson scene at this purity
PURITY = 0.5
#: DataModule settings of the tests (small and quick)
SETTINGS = dict(patch_size=5, block_size=16, batch_size=64)


def samson_root(shared_data: Path) -> Path:
    """The Samson folder of the shared data."""
    return shared_data / "envi" / "samson"


def _broken(cube: np.ndarray, labels: np.ndarray, fault: str) -> tuple[np.ndarray, np.ndarray]:
    if fault == "labels_transposed":
        return cube, labels.T.copy()
    if fault.startswith("labels_down_"):
        rows = int(fault.rsplit("_", 1)[1])
        moved = np.zeros_like(labels)
        moved[rows:] = labels[:-rows]
        return cube, moved
    if fault == "bands_reversed":
        return cube[..., ::-1].copy(), labels
    if fault == "bands_shuffled":
        return cube[..., np.random.default_rng(0).permutation(cube.shape[-1])].copy(), labels
    assert fault == "intact", fault
    return cube, labels


def _write_scaled_envi(root: Path, folder: Path, labels: np.ndarray) -> dict[str, Any]:
    """Reflectance x 10000 as int16 under Samson's own header (which has no reflectance scale factor)."""
    import scipy.io

    from hsi.io import read_cube

    counts = read_cube(root / "samson_1.img.hdr").data
    scaled = np.round(np.maximum(counts, 0) / counts.max() * 10000).astype("<i2")
    scaled.transpose(2, 0, 1).tofile(folder / "samson_scaled.img")  # BSQ: band, line, sample
    (folder / "samson_scaled.img.hdr").write_text((root / "samson_1.img.hdr").read_text())
    scipy.io.savemat(folder / "samson_scaled_gt.mat", {"gt": labels.astype(np.uint8)})
    return dict(cube_path=str(folder / "samson_scaled.img.hdr"), labels_path=str(folder / "samson_scaled_gt.mat"),
                labels_key="gt")


def write_copy(shared_data: Path, folder: Path, fault: str) -> dict[str, Any]:
    """Write the copy ``fault`` (one of :data:`FAULTS`) into ``folder``; return the ``HSIDataModule`` arguments."""
    from hsi.io import write_h5
    from hsi.scenes import load_scene

    root = samson_root(shared_data)
    scene = load_scene("samson", root=str(root), purity=PURITY)
    labels = np.asarray(scene.labels, dtype=np.uint8)
    if fault == "scaled_int16":
        return _write_scaled_envi(root, folder, labels)
    cube, labels = _broken(np.asarray(scene.cube.data), labels, fault)
    path = folder / f"samson_{fault}.h5"
    write_h5(path, cube, labels=labels, wavelengths=scene.cube.wavelengths)
    return dict(cube_path=str(path), labels_path=str(path), cube_key="cube", labels_key="labels")


def copy_datamodule(shared_data: Path, folder: Path, fault: str, **overrides: Any):
    """A set-up ``HSIDataModule`` (fit and test) of the copy ``fault``."""
    from hsi.data import HSIDataModule

    dm = HSIDataModule(**{**write_copy(shared_data, folder, fault), **SETTINGS, **overrides})
    dm.prepare_data()
    dm.setup("fit")
    dm.setup("test")
    return dm
