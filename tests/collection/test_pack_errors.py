"""A damaged pack file ends in one clear error naming the file and the dataset, on every reading path;
a pack name that is no HDF5 name is refused before anything is read."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from hsi.errors import CubeFormatError, OptionError


def _scene_files(folder: Path) -> list[dict]:
    """Two seeded scenes, each one HDF5 file holding its cube, labels and wavelengths."""
    rng = np.random.default_rng(21)
    entries = []
    for name in ("north", "south"):
        path = folder / f"{name}.h5"
        with h5py.File(path, "w") as f:
            f["cube"] = rng.random((40, 40, 6)).astype(np.float32)
            f["labels"] = rng.integers(0, 3, size=(40, 40)).astype(np.uint8)
            f["wavelengths"] = np.linspace(400.0, 900.0, 6)
        entries.append({"name": name, "cube": str(path), "labels": str(path), "cube_key": "cube",
                        "labels_key": "labels"})
    return entries


@pytest.fixture
def broken_pack(tmp_path) -> Path:
    """A pack written by pack_collection whose first gzip chunk of ``north/cube`` is then damaged."""
    from hsi.collection import pack_collection

    pack = pack_collection({"scenes": _scene_files(tmp_path), "split": "block"}, tmp_path / "pack.h5")
    with h5py.File(pack, "r") as f:
        chunk = f["north/cube"].id.get_chunk_info(0)
    data = bytearray(pack.read_bytes())
    for i in range(chunk.byte_offset + 20, chunk.byte_offset + 60):
        data[i] ^= 0xFF
    pack.write_bytes(bytes(data))
    return pack


def test_reading_the_scene_from_the_pack_names_file_and_dataset(broken_pack):
    from hsi.data.sources.packfile import read_pack_scene

    with pytest.raises(CubeFormatError) as err:
        read_pack_scene(broken_pack, "north")
    message = str(err.value)
    assert str(broken_pack) in message and "'north/cube'" in message and "corrupt" in message
    assert read_pack_scene(broken_pack, "south").cube.shape == (40, 40, 6)  # the undamaged scene still reads


def test_reading_the_dataset_as_a_cube_names_file_and_dataset(broken_pack):
    from hsi.io import read_cube

    with pytest.raises(CubeFormatError) as err:
        read_cube(broken_pack, key="north/cube")
    message = str(err.value)
    assert str(broken_pack) in message and "'north/cube'" in message and "rows 0:40, cols 0:40" in message
    assert "corrupt" in message


def test_training_on_the_pack_ends_in_one_error_line(broken_pack, tmp_path, capsys):
    from hsi.cli import main

    status = main(["train", "--scenes", str(broken_pack), "--model", "svm", "--out", str(tmp_path / "run"),
                   "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith("error:"), err
    assert str(broken_pack) in err[0] and "'north/cube'" in err[0]


@pytest.mark.parametrize("name", ["pack.tif", "pack", "pack.yaml"])
def test_a_pack_name_without_an_hdf5_suffix_is_refused_before_reading(tmp_path, name, monkeypatch):
    from hsi.collection import pack_collection
    from hsi.data.sources import load

    def no_read(*args, **kwargs):
        raise AssertionError("a scene was read before the output name was checked")

    monkeypatch.setattr(load, "load_entry", no_read)
    with pytest.raises(OptionError, match=r"\.h5"):
        pack_collection({"scenes": _scene_files(tmp_path), "split": "block"}, tmp_path / name)
    assert not (tmp_path / name).exists()
