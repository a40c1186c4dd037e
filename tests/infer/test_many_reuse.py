"""Many-scene inference reuses a scene's maps only when the checkpoint, the cube and the options are the same."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from .conftest import SCENE

#: fast inference: the maps as .npy only
FAST = {"format": ("npy",), "progress": False, "accelerator": "cpu", "tile": 16}


def _cube(path, seed):
    """A cube file of the checkpoints' kind (10 bands), from the synthetic scene with ``seed``."""
    from hsi.io.writers.hdf5 import write_h5
    from hsi.scenes.synthetic import make_synthetic_scene

    scene = make_synthetic_scene(**{**SCENE, "seed": seed})
    write_h5(path, scene.cube.data, wavelengths=scene.cube.wavelengths, overwrite=True)
    return path


@pytest.fixture()
def setup(tmp_path, cnn_ckpt):
    """A checkpoint copied to ``model.ckpt``, two cube files and the first many-scene run into ``maps``."""
    from hsi.infer.many import infer_scenes

    ckpt = shutil.copy(cnn_ckpt, tmp_path / "model.ckpt")
    cubes = [str(_cube(tmp_path / "north.h5", 5)), str(_cube(tmp_path / "south.h5", 6))]
    lines: list[str] = []
    first = infer_scenes(ckpt, cubes, tmp_path / "maps", log=lines.append, **FAST)
    assert first["mapped"] == ["north", "south"] and not lines
    return ckpt, cubes, tmp_path / "maps"


def _run(ckpt, cubes, out, **options):
    from hsi.infer.many import infer_scenes

    lines: list[str] = []
    done = infer_scenes(ckpt, cubes, out, log=lines.append, **{**FAST, **options})
    return done, lines


def test_the_same_command_again_skips_every_scene(setup):
    done, lines = _run(*setup)
    assert done["skipped"] == ["north", "south"] and done["mapped"] == [] and lines == []


def test_another_model_copied_over_the_checkpoint_maps_every_scene_again(setup, spectral_ckpt):
    ckpt, cubes, out = setup
    shutil.copy(spectral_ckpt, ckpt)
    done, lines = _run(ckpt, cubes, out)
    assert done["mapped"] == ["north", "south"] and done["skipped"] == []
    assert len(lines) == 2 and all("the checkpoint" in line and "changed" in line for line in lines)
    from hsi._identity import file_identity

    recorded = json.loads((out / "north" / "inference.json").read_text())["inputs"]["checkpoint"]
    assert recorded["sha256"] == file_identity(ckpt)["sha256"]
    assert _run(ckpt, cubes, out)[0]["skipped"] == ["north", "south"]


def test_another_scene_at_a_cubes_path_is_mapped_again_alone(setup):
    from hsi.infer import infer_scene

    ckpt, cubes, out = setup
    before = np.load(out / "north" / "labels.npy")
    _cube(cubes[0], 11)  # another scene written over north.h5
    done, lines = _run(ckpt, cubes, out)
    assert done["mapped"] == ["north"] and done["skipped"] == ["south"]
    assert lines == [f"north: mapped again: the input {cubes[0]} changed" + lines[0].split("changed", 1)[1]]
    fresh = infer_scene(ckpt, cubes[0], **FAST).labels
    now = np.load(out / "north" / "labels.npy")
    assert np.array_equal(now, fresh) and not np.array_equal(now, before)


@pytest.mark.parametrize("option, value, new_file", [("probabilities", True, "probabilities.npy"),
                                                     ("format", ("npy", "envi"), "classification.img"),
                                                     ("tile", 8, None)])
def test_an_option_that_changes_the_outputs_maps_every_scene_again(setup, option, value, new_file):
    ckpt, cubes, out = setup
    done, lines = _run(ckpt, cubes, out, **{option: value})
    assert done["mapped"] == ["north", "south"]
    assert all(f"the option {option} changed" in line for line in lines) and len(lines) == 2
    if new_file is not None:
        assert (out / "north" / new_file).is_file() and (out / "south" / new_file).is_file()
    assert json.loads((out / "south" / "inference.json").read_text())["inputs"]["options"][option] == \
        json.loads(json.dumps(value))


def test_an_option_that_changes_no_output_reuses_the_maps(setup):
    done, _ = _run(*setup, batch_size=7)
    assert done["skipped"] == ["north", "south"]


@pytest.mark.parametrize("damage", ["deleted", "edited"])
def test_a_deleted_or_edited_output_is_named_and_mapped_again(setup, damage):
    ckpt, cubes, out = setup
    target = out / "south" / "confidence.npy"
    if damage == "deleted":
        target.unlink()
    else:
        target.write_bytes(b"not a map")
    done, lines = _run(ckpt, cubes, out)  # no overwrite needed: the files are the package's
    assert done["mapped"] == ["south"] and done["skipped"] == ["north"]
    assert lines == [f"south: mapped again: {target} was {damage} since it was written"]
    assert np.load(target).shape == (SCENE["height"], SCENE["width"])


def test_a_users_file_in_a_stale_folder_is_refused_naming_the_change(setup):
    from hsi.errors import OverwriteError

    ckpt, cubes, out = setup
    (out / "north" / "classification.img").write_bytes(b"the user's own file")
    _cube(cubes[0], 11)
    with pytest.raises(OverwriteError, match=r"scene north: the input .*north\.h5 changed .*classification\.img"):
        _run(ckpt, cubes, out, format=("npy", "envi"))
    assert (out / "north" / "classification.img").read_bytes() == b"the user's own file"


def test_cli_says_which_scene_is_mapped_again(setup, hsi_main, tmp_path):
    ckpt, cubes, out = setup
    _cube(cubes[1], 12)
    status, stdout, err = hsi_main(["infer", "--checkpoint", str(ckpt), "--cube", *cubes, "--out", str(out),
                                    "--format", "npy", "--tile", "16", "--no-progress", "--accelerator", "cpu"],
                                   tmp_path)
    assert status == 0
    assert f"south: mapped again: the input {cubes[1]} changed" in err
    assert "mapped south; skipped (complete) north" in stdout
