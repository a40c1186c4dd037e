"""The DataModule cache is keyed by every file a read takes data from, not only the file named.

Each test replaces one file of a multi-file input in turn (same size, different content,
the other files untouched) and asserts that the next DataModule builds a new cache rather
than reusing the one made from the old pixels.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from hsi.errors import IntegrityError
from tests.helpers import quiet_datamodule

H, W, C = 24, 24, 8


def _scene(seed: int):
    from hsi.scenes.synthetic import make_synthetic_scene

    return make_synthetic_scene(height=H, width=W, bands=C, n_classes=3, seed=seed)


def _write_envi(folder: Path, seed: int) -> tuple[Path, Path]:
    """``scene.hdr`` + ``scene.img`` (float32, wavelengths in the header) and a ``labels.npy`` label map."""
    from spectral.io import envi

    scene = _scene(seed)
    header = folder / "scene.hdr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        envi.save_image(str(header), scene.cube.data.astype(np.float32), ext=".img", force=True,
                        metadata={"wavelength": [f"{w:.1f}" for w in np.linspace(400, 1000, C)],
                                  "wavelength units": "nm", "description": "seed A"})
    np.save(folder / "labels.npy", scene.labels.astype(np.int64))
    return header, folder / "labels.npy"


def _replace_same_size(path: Path, content: bytes) -> None:
    """Write ``content`` over ``path`` as a new file (a replace, as a copy or a re-export does)."""
    assert len(content) == path.stat().st_size and content != path.read_bytes()
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(content)
    tmp.replace(path)


def _other_pixels(path: Path) -> bytes:
    """``path``'s bytes with every value of its last 256 bytes changed (an array's data: its end)."""
    data = bytearray(path.read_bytes())
    for i in range(len(data) - 256, len(data)):
        data[i] ^= 0x21
    return bytes(data)


def _prepared(cube: Path, labels: Path, cache: Path):
    dm = quiet_datamodule(cube_path=str(cube), labels_path=str(labels), block_size=6, patch_size=5,
                          batch_size=16, cache_dir=str(cache), seed=0)
    dm.prepare_data()
    return dm


def _rebuilt_after(cube: Path, labels: Path, cache: Path, replace) -> tuple[bool, str]:
    """Build the cache, run ``replace()``, prepare again: ``(a new cache was built, what the identity names)``."""
    from hsi._identity import first_change

    first = _prepared(cube, labels, cache)
    again = _prepared(cube, labels, cache)
    assert again.cache_path == first.cache_path  # reused while unchanged
    before = first.source.identity()
    replace()
    after = _prepared(cube, labels, cache)
    return after.cache_path != first.cache_path and after.cache_path.is_dir(), \
        str(first_change(before, after.source.identity(), "the scene"))


@pytest.mark.parametrize("name", ["scene.img", "scene.hdr", "labels.npy"])
def test_envi_replacing_each_file_rebuilds_the_cache(tmp_path, name):
    header, labels = _write_envi(tmp_path, 1)
    target = tmp_path / name
    if name == "scene.hdr":  # the same header with another description: same size, other bytes
        content = target.read_bytes().replace(b"seed A", b"seed B")
    else:
        content = _other_pixels(target)
    rebuilt, change = _rebuilt_after(header, labels, tmp_path / "cache", lambda: _replace_same_size(target, content))
    assert rebuilt and f"the input {target} changed (SHA-256" in change


def test_envi_binary_of_another_scene_under_the_same_header_gives_its_pixels(tmp_path):
    """The user's report: ``scene.img`` replaced under an unchanged ``scene.hdr`` trained on the old pixels."""
    header, labels = _write_envi(tmp_path, 1)
    old = _prepared(header, labels, tmp_path / "cache")
    old.setup("fit")
    other = tmp_path / "other"
    other.mkdir()
    _write_envi(other, 2)
    _replace_same_size(tmp_path / "scene.img", (other / "scene.img").read_bytes())
    new = _prepared(header, labels, tmp_path / "cache")
    new.setup("fit")
    assert new.cache_path != old.cache_path
    x_old, x_new = (np.asarray(dm.train_dataset[0][0]) for dm in (old, new))
    assert not np.array_equal(x_old, x_new)


@pytest.fixture()
def npy_scene(tmp_path):
    """An ``hsi convert --to npy`` scene (``meta.json``, ``cube.npy``, ``labels.npy``) of an ENVI cube."""
    from hsi.io.convert import convert

    source = tmp_path / "source"
    source.mkdir()
    header, labels = _write_envi(source, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        convert(header, tmp_path / "scene", "npy", labels_path=labels)
    return tmp_path / "scene"


def test_npy_scene_replaced_meta_json_rebuilds_the_cache(npy_scene, tmp_path):
    meta = npy_scene / "meta.json"
    body = json.loads(meta.read_text())
    text = meta.read_text()
    content = text.replace(json.dumps(body["source"]), json.dumps(body["source"].upper())).encode()
    rebuilt, change = _rebuilt_after(npy_scene, npy_scene, tmp_path / "cache",
                                     lambda: _replace_same_size(meta, content))
    assert rebuilt and f"the input {meta} changed" in change


@pytest.mark.parametrize("name", ["cube.npy", "labels.npy"])
def test_npy_scene_replaced_array_is_not_reused_but_refused(npy_scene, tmp_path, name):
    """A replaced array changes the identity (no reuse), and the read then refuses it against ``meta.json``."""
    from hsi._identity import first_change

    first = _prepared(npy_scene, npy_scene, tmp_path / "cache")
    before = first.source.identity()
    target = npy_scene / name
    _replace_same_size(target, _other_pixels(target))
    change = first_change(before, first.source.identity(), "the scene")
    assert change is not None and f"the input {target} changed (SHA-256" in change
    with pytest.raises(IntegrityError, match=f"{name}: SHA-256 .*meta.json lists .*hsi convert"):
        _prepared(npy_scene, npy_scene, tmp_path / "cache")


@pytest.fixture()
def toy_reader():
    """A reader plug-in whose cube is two files: ``x.toy`` (JSON shape) and ``x.toybin`` (float32 pixels)."""
    from hsi.io.readers import Reader, register_reader, unregister_reader
    from hsi.io.source import RawSource

    class ToyReader(Reader):
        name = "toy-two-files"
        description = ".toy (a test's two-file format)"
        suffixes = frozenset({".toy"})

        def open(self, path: Path, key, georef: str) -> RawSource:
            shape = json.loads(path.read_text())["shape"]
            array = np.fromfile(path.with_suffix(".toybin"), dtype=np.float32).reshape(shape)
            return RawSource(path, self.name, array, layout="HWC")

        def files(self, path: Path) -> list[Path]:
            return [path, path.with_suffix(".toybin")]

    register_reader(ToyReader)
    yield ToyReader
    unregister_reader(ToyReader.name)


@pytest.mark.parametrize("name", ["x.toy", "x.toybin"])
def test_a_reader_plugins_declared_files_all_key_the_cache(toy_reader, tmp_path, name):
    scene = _scene(1)
    (tmp_path / "x.toy").write_text(json.dumps({"shape": [H, W, C], "note": "A"}))
    scene.cube.data.astype(np.float32).tofile(tmp_path / "x.toybin")
    labels = tmp_path / "labels.npy"
    np.save(labels, scene.labels.astype(np.int64))
    target = tmp_path / name
    content = target.read_bytes().replace(b'"A"', b'"B"') if name == "x.toy" else _other_pixels(target)
    rebuilt, change = _rebuilt_after(tmp_path / "x.toy", labels, tmp_path / "cache",
                                     lambda: _replace_same_size(target, content))
    assert rebuilt and f"the input {target} changed" in change


def test_a_pack_with_any_chunk_rewritten_gets_a_new_cache(tmp_path):
    """Each HDF5 chunk of a pack's cube and labels counts: rewriting one (in place, mtime restored) rebuilds."""
    import os

    import h5py

    from hsi.collection.pack import pack_collection

    scene = _scene(1)
    header, labels = _write_envi(tmp_path, 1)
    pack = pack_collection([{"name": "a", "cube": str(header), "labels": str(labels)}], tmp_path / "pack.h5")
    with h5py.File(pack) as handle:
        regions = [(name, chunk) for name in ("a/cube", "a/labels")
                   for chunk in handle[name].iter_chunks()]
    assert len(regions) >= 2 and scene.labels.max() > 0
    cache = tmp_path / "cache"

    def scene_caches() -> set[str]:
        dm = quiet_datamodule(scenes=str(pack), block_size=6, patch_size=5, batch_size=16, cache_dir=str(cache))
        dm.prepare_data()
        dm.setup("fit")
        return {p.name for p in cache.iterdir() if p.is_dir()}

    seen = scene_caches()
    assert scene_caches() == seen  # unchanged: reused
    for name, chunk in regions:
        stat = pack.stat()
        with h5py.File(pack, "r+") as handle:
            values = handle[name][chunk]
            handle[name][chunk] = values + 1 if name.endswith("cube") else np.where(values > 0, values % 3 + 1, 0)
        os.utime(pack, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        now = scene_caches()
        assert now - seen, f"rewriting {name} chunk {chunk} reused the cache"
        seen = now
