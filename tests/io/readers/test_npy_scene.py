"""The ``.npy`` reader: the scene ``hsi convert --to npy`` writes is read by every entry point, as its source was."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from hsi.errors import CubeFormatError, IntegrityError
from hsi.io import list_arrays, open_cube, read_cube, read_labels
from hsi.io.convert import convert
from hsi.io.labels import read_label_georef
from hsi.io.readers import files_of, find_reader


@pytest.fixture(scope="module")
def scene(geotiff_module, tmp_path_factory):
    """A georeferenced GeoTIFF cube (scaled int16, nodata, wavelengths) and its labels, converted to an npy scene."""
    folder = tmp_path_factory.mktemp("npy_scene")
    files = geotiff_module.make_fixtures(folder / "tif")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        convert(files.cube, folder / "scene", "npy", labels_path=files.labels)
    return files, folder / "scene"


def _read(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_cube(path, **kw)


@pytest.mark.parametrize("name", ["", "cube.npy", "meta.json"])
def test_read_cube_of_the_scene_equals_read_cube_of_its_source(scene, name):
    files, folder = scene
    original, back = _read(files.cube), _read(folder / name if name else folder)
    np.testing.assert_array_equal(back.data, original.data)  # NaN where the source had nodata
    np.testing.assert_array_equal(back.wavelengths, original.wavelengths)
    assert back.meta["georef"] == original.meta["georef"] and back.meta["georef"] is not None
    assert back.meta["units"]["kind"] == original.meta["units"]["kind"] == "reflectance"
    assert back.meta["units"]["scale"] is None  # the scene holds the values after the source's scale
    assert back.meta["format"] == "npy" and back.meta["layout_reason"] == "fixed by the npy format"
    assert _read(folder, georef="ignore").meta["georef"] is None


def test_labels_arrays_and_windows_of_the_scene(scene):
    files, folder = scene
    np.testing.assert_array_equal(read_labels(folder), read_labels(files.labels))
    assert read_label_georef(folder) == _read(files.cube).meta["georef"]
    assert [(a.name, a.shape) for a in list_arrays(folder)] == [("cube.npy", (12, 10, 6)), ("labels.npy", (12, 10))]
    with open_cube(folder) as lazy:
        np.testing.assert_array_equal(lazy.read_window(slice(2, 9), slice(3, 7)), _read(files.cube).data[2:9, 3:7])
    every = [folder / "meta.json", folder / "cube.npy", folder / "labels.npy"]
    assert files_of(folder) == files_of(folder / "meta.json") == every
    assert files_of(folder / "cube.npy") == [folder / "cube.npy", folder / "meta.json", folder / "labels.npy"]


def test_hsi_inspect_describes_the_scene(scene, capsys):
    from hsi.cli import main

    files, folder = scene
    assert main(["inspect", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "'cube.npy' (12 x 10 x 6 float32)" in out and "'labels.npy' (12 x 10 int64)" in out
    assert "kind: cube (6 bands)" in out and f"({folder / 'meta.json'}; units 'nm')" in out
    assert "georeference: WGS 84 / UTM zone 33N (EPSG:32633)" in out


def test_a_lone_npy_array_is_hwc_unless_told(tmp_path):
    cube = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    np.save(tmp_path / "a.npy", cube)
    np.save(tmp_path / "chw.npy", np.ascontiguousarray(cube.transpose(2, 0, 1)))
    np.testing.assert_array_equal(_read(tmp_path / "a.npy").data, cube)
    np.testing.assert_array_equal(_read(tmp_path / "chw.npy", layout="CHW").data, cube)
    assert _read(tmp_path / "a.npy").wavelengths is None
    np.save(tmp_path / "gt.npy", np.array([[0, 1], [2, 0]], np.int16))
    np.testing.assert_array_equal(read_labels(tmp_path / "gt.npy"), [[0, 1], [2, 0]])


def test_a_cube_npy_beside_someone_elses_meta_json_is_a_lone_array(tmp_path):
    np.save(tmp_path / "cube.npy", np.ones((2, 3, 4), np.float32))
    (tmp_path / "meta.json").write_text(json.dumps({"format": "other"}))
    assert _read(tmp_path / "cube.npy").wavelengths is None
    with pytest.raises(IntegrityError, match="format 'other', expected 'hsi-npy'"):
        read_cube(tmp_path)


def test_broken_scenes_are_refused_naming_the_file(scene, tmp_path):
    files, folder = scene
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("cube.npy", "meta.json"):
        (broken / name).write_bytes((folder / name).read_bytes())
    meta = json.loads((broken / "meta.json").read_text())
    (broken / "meta.json").write_text(json.dumps({**meta, "shape": [1, 2, 3]}))
    with pytest.raises(IntegrityError, match=r"broken/cube.npy: shape \(12, 10, 6\), meta.json says \[1, 2, 3\]"):
        read_cube(broken)
    (broken / "meta.json").write_text(json.dumps({**meta, "labels": None}))
    with pytest.raises(CubeFormatError, match="this .npy scene holds no labels"):
        read_labels(broken)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CubeFormatError, match="is a directory, expected a file"):
        find_reader(tmp_path / "empty")


def test_hsi_infer_reads_the_scene_from_its_memory_map(scene):
    from hsi.infer.sources import NpySource, open_scene_source

    files, folder = scene
    original = _read(files.cube)
    for path in (folder, folder / "cube.npy"):
        source = open_scene_source(path)
        assert isinstance(source, NpySource) and source.georef == original.meta["georef"]
        np.testing.assert_array_equal(source.read_window(slice(0, 12), slice(0, 10)), original.data)
        np.testing.assert_array_equal(source.wavelengths, original.wavelengths)
        source.close()


def test_hsi_train_reads_the_scene_named_by_its_folder(scene, tmp_path):
    from hsi.cli import main

    _, folder = scene
    args = ["train", "--cube", str(folder), "--labels", str(folder), "--patch-size", "3", "--block-size", "6",
            "--model", "spectral1d", "--no-progress", "--epochs", "1", "--out", str(tmp_path / "run")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(args) == 0
    assert (tmp_path / "run").is_dir()


def _copy_scene(folder, into):
    import shutil

    return shutil.copytree(folder, into)


def _other_bytes(path):
    """``path``'s bytes with the last 64 changed: same size, other pixels."""
    data = bytearray(path.read_bytes())
    data[-64:] = bytes(b ^ 0x21 for b in data[-64:])
    return bytes(data)


@pytest.mark.parametrize("name", ["cube.npy", "labels.npy"])
def test_an_array_replaced_after_convert_is_refused_against_meta_json(scene, tmp_path, name):
    _, folder = scene
    copy = _copy_scene(folder, tmp_path / "scene")
    listed = json.loads((copy / "meta.json").read_text())["files"][name]["sha256"]
    (copy / name).write_bytes(_other_bytes(copy / name))
    read = read_cube if name == "cube.npy" else read_labels
    with pytest.raises(IntegrityError) as err:
        read(copy)
    message = str(err.value)
    assert message.startswith(f"{copy / name}: SHA-256 ") and f"meta.json lists {listed}" in message
    assert "hsi convert" in message and "--to npy" in message


def test_above_the_whole_hash_limit_only_the_size_is_compared(scene, tmp_path, monkeypatch):
    import hsi._identity as identity

    _, folder = scene
    copy = _copy_scene(folder, tmp_path / "scene")
    monkeypatch.setattr(identity, "FULL_HASH_LIMIT", 0)  # every file counts as large (a sampled hash)
    monkeypatch.setattr(identity, "SAMPLE_CHUNK", 16)
    (copy / "cube.npy").write_bytes(_other_bytes(copy / "cube.npy"))
    assert _read(copy).data.shape == (12, 10, 6)  # same size: not re-read whole at every open
    with open(copy / "cube.npy", "ab") as f:
        f.write(b"\0" * 8)
    with pytest.raises(IntegrityError, match=r"cube.npy: \d+ bytes, meta.json lists \d+; .*hsi convert"):
        read_cube(copy)


def test_repeated_reads_hash_each_array_once(scene, tmp_path, monkeypatch):
    import hsi._identity as identity

    _, folder = scene
    copy = _copy_scene(folder, tmp_path / "scene")
    hashed = []
    real = identity.full_sha256
    monkeypatch.setattr(identity, "full_sha256", lambda p: hashed.append(str(p)) or real(p))
    for _ in range(3):
        _read(copy)
    assert hashed == [str(copy / "cube.npy")]
