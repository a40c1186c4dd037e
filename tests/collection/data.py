"""Seeded generator of the tiny collection used by ``tests/collection`` (run it to look at the files).

Three scenes of different sizes, band grids and class sets:

- ``north``: 32 x 32 x 16 bands at 400-2500 nm, 3 classes, cube and labels in HDF5 files;
- ``south``: 24 x 36 x 20 bands at 420-2400 nm (another sensor), 4 classes, HDF5 files;
- ``west``: the registry's synthetic scene, 28 x 28 x 16 bands at 400-2500 nm, 2 classes.

File classes are ``class_<id>``; the entries map them onto common names, so the union is
``legume, notill, mintill, row`` (``row`` only in ``south``, ``mintill`` not in ``west``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

WEST = {"height": 28, "width": 28, "bands": 16, "n_classes": 2, "seed": 3}


def _scene(height: int, width: int, bands: int, n_classes: int, seed: int):
    from hsi.scenes.synthetic import make_synthetic_scene

    return make_synthetic_scene(height=height, width=width, bands=bands, n_classes=n_classes, seed=seed)


def make_files(folder: Path) -> dict[str, Path]:
    """Write the cube and label files and ``collection.yaml`` into ``folder``; returns their paths."""
    from scipy.io import savemat

    from hsi.io.writers.hdf5 import write_h5

    folder.mkdir(parents=True, exist_ok=True)
    north = _scene(32, 32, 16, 3, 1)
    south = _scene(24, 36, 20, 4, 2)
    write_h5(folder / "north.h5", north.cube.data, wavelengths=np.linspace(400, 2500, 16))
    savemat(folder / "north_gt.mat", {"gt": north.labels.astype(np.uint8)})
    write_h5(folder / "south.h5", south.cube.data, wavelengths=np.linspace(420, 2400, 20))
    savemat(folder / "south_gt.mat", {"gt": south.labels.astype(np.uint8)})
    common = {"class_1": "legume", "class_2": "notill", "class_3": "mintill", "class_4": "row"}
    doc = {
        "scenes": [
            {"name": "north", "cube": "north.h5", "labels": "north_gt.mat",
             "classes": {k: v for k, v in common.items() if k != "class_4"}},
            {"name": "south", "cube": "south.h5", "labels": "south_gt.mat", "classes": common},
            {"name": "west", "scene": "synthetic", "scene_options": WEST,
             "classes": {"S-legume": "legume", "S-row-A-notill": "notill"}},
        ],
        "split": "block",
    }
    (folder / "collection.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    held = {**doc, "split": "scene", "test_scenes": ["south"]}
    (folder / "held_out.yaml").write_text(yaml.safe_dump(held, sort_keys=False))
    return {"block": folder / "collection.yaml", "scene": folder / "held_out.yaml", "north": folder / "north.h5",
            "south": folder / "south.h5", "south_gt": folder / "south_gt.mat"}


if __name__ == "__main__":
    import sys

    print(make_files(Path(sys.argv[1] if len(sys.argv) > 1 else "collection_data")))
