"""Many-scene inference maps a scene again when any file it is read from changed, not only the file named."""

from __future__ import annotations

import shutil
import warnings

import numpy as np

from .conftest import SCENE

#: fast inference: the maps as .npy only
FAST = {"format": ("npy",), "progress": False, "accelerator": "cpu", "tile": 16}


def _envi(folder, name, seed):
    """``<name>.hdr`` + ``<name>.img`` of the synthetic scene with ``seed`` (the checkpoints' 10 bands)."""
    from spectral.io import envi

    from hsi.scenes.synthetic import make_synthetic_scene

    scene = make_synthetic_scene(**{**SCENE, "seed": seed})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        envi.save_image(str(folder / f"{name}.hdr"), scene.cube.data.astype(np.float32), ext=".img", force=True,
                        metadata={"wavelength": [f"{w:.3f}" for w in scene.cube.wavelengths],
                                  "wavelength units": "nm"})
    return folder / f"{name}.hdr"


def test_another_envi_binary_under_the_same_header_is_mapped_again(tmp_path, cnn_ckpt):
    from hsi.infer.many import infer_scenes

    ckpt = shutil.copy(cnn_ckpt, tmp_path / "model.ckpt")
    cubes = [str(_envi(tmp_path, "north", 5)), str(_envi(tmp_path, "south", 6))]
    lines: list[str] = []
    assert infer_scenes(ckpt, cubes, tmp_path / "maps", log=lines.append, **FAST)["mapped"] == ["north", "south"]
    before = np.load(tmp_path / "maps" / "north" / "labels.npy")
    other = tmp_path / "other"
    other.mkdir()
    _envi(other, "north", 11)
    (tmp_path / "north.img").write_bytes((other / "north.img").read_bytes())  # the header stays as it was
    done = infer_scenes(ckpt, cubes, tmp_path / "maps", log=lines.append, **FAST)
    assert done["mapped"] == ["north"] and done["skipped"] == ["south"]
    assert len(lines) == 1 and lines[0].startswith(f"north: mapped again: the input {tmp_path / 'north.img'} changed")
    assert not np.array_equal(np.load(tmp_path / "maps" / "north" / "labels.npy"), before)
