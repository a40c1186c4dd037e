"""Reading a collection: its YAML keys, names and files are checked before any cube is read."""

from __future__ import annotations

import pytest

from hsi.collection import read_collection
from hsi.errors import CollectionError, DatasetNotFoundError


def test_yaml_file_gives_entries_with_paths_from_its_folder(files):
    col = read_collection(files["scene"])
    assert col.names == ["north", "south", "west"]
    assert col.split == "scene" and col.test_scenes == ("south",) and col.train_names == ["north", "west"]
    north = col.entries[0]
    assert north.kind == "files" and north.cube == str(files["north"]) and north.classes["class_1"] == "legume"
    assert col.entries[2].kind == "registry" and col.entries[2].scene_options["bands"] == 16


@pytest.mark.parametrize("doc, words", [
    ({"scenes": [{"name": "a", "scene": "synthetic"}], "splitt": "scene"}, ["splitt", "did you mean 'split'"]),
    ({"scenes": [{"nme": "a", "scene": "synthetic"}]}, ["scenes[0]", "nme", "did you mean 'name'"]),
    ({"scenes": [{"name": "a", "scene": "synthetic"}, {"name": "a", "scene": "synthetic"}]}, ["two scenes", "'a'"]),
    ({"scenes": [{"name": "a", "scene": "synthetic"}], "split": "scene"}, ["test_scenes"]),
    ({"scenes": [{"name": "a", "scene": "synthetic"}], "split": "scene", "test_scenes": ["b"]}, ["'b'", "not a scene"]),
    ({"scenes": [{"name": "a", "scene": "synthetic"}], "split": "scene", "test_scenes": ["a"]}, ["at least one"]),
    ({"scenes": [{"name": "a", "scene": "synthetic"}], "test_scenes": ["a"]}, ["split: scene"]),
    ({"scenes": [{"name": "a/b", "scene": "synthetic"}]}, ["'a/b'", "folder"]),
    ({"scenes": [{"name": "a", "scene": "synthetic", "cube": "x.h5"}]}, ["exactly one of scene"]),
    ({"scenes": [{"name": "a", "scene": "nowhere"}]}, ["scenes[0]", "nowhere"]),
    ({"scenes": []}, ["non-empty list"]),
    ({"scenes": [{"name": "a", "scene": "synthetic"}], "preprocess": "each"}, ["preprocess: 'each'"]),
])
def test_bad_collections_are_refused_naming_the_key(doc, words):
    with pytest.raises(CollectionError) as info:
        read_collection(doc)
    for word in words:
        assert word in str(info.value)


def test_missing_file_names_the_entry_and_the_path(files, tmp_path):
    with pytest.raises(DatasetNotFoundError, match=r"scenes\[0\] 'n': labels: .*nope\.mat.*no such file"):
        read_collection([{"name": "n", "cube": str(files["north"]), "labels": str(tmp_path / "nope.mat")}])
    with pytest.raises(DatasetNotFoundError, match="no such file"):
        read_collection(tmp_path / "absent.yaml")


def test_cube_without_labels_is_refused_for_training_only(files):
    entry = [{"name": "n", "cube": str(files["north"])}]
    with pytest.raises(CollectionError, match="labels: FILE"):
        read_collection(entry)
    assert read_collection(entry, need_labels=False).entries[0].labels is None
