"""``hsi.infer.infer``: one entry for one scene or many, the same maps as the one-scene and many-scene workers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hsi.errors import OptionError

from .conftest import SCENE

#: fast inference: the maps as .npy only
FAST = {"format": ("npy",), "progress": False, "accelerator": "cpu", "tile": 16}


def _cube(path, seed):
    """A cube file of the checkpoints' kind (10 bands), from the synthetic scene with ``seed``."""
    from hsi.io.writers.hdf5 import write_h5
    from hsi.scenes.synthetic import make_synthetic_scene

    scene = make_synthetic_scene(**{**SCENE, "seed": seed})
    write_h5(path, scene.cube.data, wavelengths=scene.cube.wavelengths, overwrite=True)
    return str(path)


@pytest.fixture()
def cubes(tmp_path):
    return [_cube(tmp_path / "north.h5", 5), _cube(tmp_path / "south.h5", 6)]


def test_one_scene_writes_into_out_the_maps_of_infer_scene(cnn_ckpt, cubes, tmp_path):
    from hsi.infer import InferResult, infer, infer_scene

    one = infer(cnn_ckpt, cubes[0], out=tmp_path / "one", **FAST)
    worker = infer_scene(cnn_ckpt, cubes[0], out=tmp_path / "worker", **FAST)
    assert isinstance(one, InferResult)
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == sorted(p.name for p in (tmp_path / "worker").iterdir())
    assert (tmp_path / "one" / "labels.npy").is_file()  # the folder itself, no per-scene folder
    for name in ("labels.npy", "confidence.npy"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "worker" / name).read_bytes()
    np.testing.assert_array_equal(one.labels, worker.labels)
    in_memory = infer(cnn_ckpt, cubes[0], **FAST)  # no out: nothing written, the same map
    assert in_memory.files == {} and np.array_equal(in_memory.labels, one.labels)


@pytest.mark.parametrize("how", ["cube_list", "scenes"])
def test_several_scenes_go_into_out_name_each_the_one_scene_map(cnn_ckpt, cubes, tmp_path, how):
    from hsi.infer import infer

    given = {"cube": cubes} if how == "cube_list" else {"scenes": cubes}
    done = infer(cnn_ckpt, **given, out=tmp_path / "maps", log=lambda line: None, **FAST)
    assert done["mapped"] == ["north", "south"] and done["summary"] == tmp_path / "maps" / "summary.json"
    assert [r["name"] for r in json.loads((tmp_path / "maps" / "summary.json").read_text())["scenes"]] == \
        ["north", "south"]
    for cube, name in zip(cubes, ("north", "south")):
        alone = infer(cnn_ckpt, cube, out=tmp_path / f"alone-{name}", **FAST)
        for part in ("labels.npy", "confidence.npy"):
            assert (tmp_path / "maps" / name / part).read_bytes() == (tmp_path / f"alone-{name}" / part).read_bytes()
        assert np.array_equal(np.load(tmp_path / "maps" / name / "labels.npy"), alone.labels)
    again = infer(cnn_ckpt, **given, out=tmp_path / "maps", **FAST)  # complete: reused, as infer_scenes does
    assert again["skipped"] == ["north", "south"] and again["mapped"] == []


def test_the_older_names_are_the_same_entry(cnn_ckpt, cubes, tmp_path):
    from hsi.infer import infer
    from hsi.infer.many import infer_scenes

    infer_scenes(cnn_ckpt, cubes, tmp_path / "old", **FAST)
    infer(cnn_ckpt, cubes, out=tmp_path / "new", **FAST)
    for name in ("north", "south"):
        assert (tmp_path / "old" / name / "labels.npy").read_bytes() == \
            (tmp_path / "new" / name / "labels.npy").read_bytes()


@pytest.mark.parametrize(("several", "kwargs", "option", "says"), [
    (True, {"labels": "gt.mat"}, "labels", "collection file"),
    (True, {"cube_key": "cube"}, "cube_key", "collection file"),
    (True, {"classes": ["class_1=Tree"]}, "classes", "collection file"),
    (True, {"units": "reflectance"}, "units", "collection file"),
    (True, {"ignore_georef": True}, "ignore_georef", "georeference checked"),
    (True, {}, "out", "out/<name>/"),
    (False, {"rank": 0}, "rank", "several scenes"),
    (False, {"log": print}, "log", "several scenes"),
])
def test_an_argument_of_the_other_kind_is_refused_before_any_work(cnn_ckpt, cubes, tmp_path, monkeypatch, several,
                                                                  kwargs, option, says):
    import hsi.infer.entry as entry

    monkeypatch.setattr(entry, "infer_scene", lambda *a, **k: pytest.fail("mapped one scene"))
    monkeypatch.setattr(entry, "infer_scenes", lambda *a, **k: pytest.fail("mapped several scenes"))
    out = {} if option == "out" else {"out": tmp_path / "maps"}
    with pytest.raises(OptionError, match=r"^" + option) as err:
        entry.infer(cnn_ckpt, cubes if several else cubes[0], **out, **kwargs, **FAST)
    assert err.value.option == option and says in err.value.allowed
    assert not (tmp_path / "maps").exists()


def test_cube_and_scenes_together_no_cube_or_a_loaded_model_with_several_are_refused(cnn_ckpt, cubes, tmp_path):
    from hsi.infer import infer, load_checkpoint

    with pytest.raises(OptionError, match="none with scenes="):
        infer(cnn_ckpt, cubes[0], scenes=cubes, out=tmp_path / "maps")
    with pytest.raises(OptionError, match="a list of at least one cube file"):
        infer(cnn_ckpt, [], out=tmp_path / "maps")
    with pytest.raises(OptionError, match="a checkpoint file with several scenes") as err:
        infer(load_checkpoint(cnn_ckpt), cubes, out=tmp_path / "maps", **FAST)
    assert err.value.option == "checkpoint"
    assert not (tmp_path / "maps").exists()
    # arguments of the other kind left at None are no arguments: the command line passes every one
    result = infer(cnn_ckpt, cubes[0], rank=None, world_size=None, log=None, **FAST)
    assert result.labels.shape == (SCENE["height"], SCENE["width"])
