from __future__ import annotations

import json
import logging
import multiprocessing as mp
import time

import numpy as np
import pytest
import torch

from hsi.data.cache import PatchCache

from tests.helpers import CHILD_TIMEOUT


def _built(caplog) -> bool:
    return any("building patch cache" in r.getMessage() or "rebuilding" in r.getMessage() for r in caplog.records)


def test_second_setup_reuses_the_cache(make_dm, caplog):
    caplog.set_level(logging.DEBUG, logger="hsi.data")
    first = make_dm()
    first.prepare_data()
    assert _built(caplog)
    first.setup("fit")
    path = first.cache_path
    stamp = {p.name: p.stat().st_mtime_ns for p in path.iterdir()}
    caplog.clear()
    second = make_dm()
    second.prepare_data()
    second.setup("fit")
    assert not _built(caplog)
    assert second.cache_path == path and not second._ensure_entry().built
    assert {p.name: p.stat().st_mtime_ns for p in path.iterdir()} == stamp  # nothing rewritten
    meta = json.loads((path / "meta.json").read_text())
    assert meta["description"]["patch_size"] == 5 and meta["description"]["source"]["source"]["kind"] == "synthetic"
    assert {"cube", "train_coords", "train_labels", "label_map"} <= set(meta["files"])


def test_changed_inputs_get_a_new_cache(make_dm):
    paths = set()
    for kw in ({}, {"patch_size": 7}, {"split_seed": 1}, {"scaling": "standardize"}, {"cache": "patches"}):
        dm = make_dm(**kw)
        dm.prepare_data()
        paths.add(dm.cache_path)
    assert len(paths) == 5


def test_truncated_file_is_detected_and_rebuilt(make_dm, caplog):
    dm = make_dm(augment=False)
    dm.prepare_data()
    dm.setup("fit")
    ref = [b[0].clone() for b in dm.val_dataloader()]
    cube = dm.cache_path / "cube.npy"
    size = cube.stat().st_size
    with open(cube, "r+b") as f:
        f.truncate(size - 1000)
    caplog.set_level(logging.INFO, logger="hsi.data")
    again = make_dm(augment=False)
    again.setup("fit")
    msgs = [r.getMessage() for r in caplog.records if r.name == "hsi.data"]
    assert any("cube.npy" in m and "truncated" in m and "rebuilding" in m for m in msgs), msgs
    assert again._ensure_entry().built and cube.stat().st_size == size
    assert all(torch.equal(a, b[0]) for a, b in zip(ref, again.val_dataloader()))


def test_corrupted_content_and_edited_meta_are_rebuilt(make_dm, caplog):
    dm = make_dm()
    dm.prepare_data()
    labels = dm.cache_path / "train_labels.npy"
    data = bytearray(labels.read_bytes())
    data[-1] ^= 0xFF  # same size, different content
    labels.write_bytes(bytes(data))
    caplog.set_level(logging.INFO, logger="hsi.data")
    make_dm().setup("fit")
    assert any("train_labels.npy" in r.getMessage() and "checksum" in r.getMessage() for r in caplog.records)

    meta_path = dm.cache_path / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["description"]["padding"] = "zeros"
    meta_path.write_text(json.dumps(meta))
    caplog.clear()
    again = make_dm()
    again.setup("fit")
    assert any("different inputs" in r.getMessage() for r in caplog.records)
    assert again._ensure_entry().built
    assert json.loads(meta_path.read_text())["description"]["padding"] == "reflect"


def test_both_strategies_give_identical_patches(make_dm):
    cube = make_dm(cache="cube", augment=True, predict_on="test")
    pats = make_dm(cache="patches", augment=True, predict_on="test")
    for dm in (cube, pats):
        dm.prepare_data()
        dm.setup()
    assert pats.train_dataset.source_kind == "patches" and cube.train_dataset.source_kind == "cube"
    assert pats.cache_path != cube.cache_path
    for epoch in (0, 1):
        a, b = cube.train_dataloader(), pats.train_dataloader()
        a.sampler.set_epoch(epoch)
        b.sampler.set_epoch(epoch)
        for (xa, ya), (xb, yb) in zip(a, b):
            assert torch.equal(xa, xb) and torch.equal(ya, yb)
    for (xa, ya), (xb, yb) in zip(cube.test_dataloader(), pats.test_dataloader()):
        assert torch.equal(xa, xb) and torch.equal(ya, yb)


def _slow_build(root, out_queue):
    calls = []

    def builder():
        calls.append(1)
        time.sleep(0.5)
        return {"a": np.arange(100_000, dtype=np.float32)}, {"x": 1}

    entry = PatchCache(root, {"what": "race"}, prefix="race").open_or_build(builder)
    out_queue.put((len(calls), entry.built, float(np.load(entry.arrays["a"], mmap_mode="r").sum())))


def test_two_processes_building_the_same_cache_serialize(tmp_path):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_slow_build, args=(str(tmp_path), q)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [q.get(timeout=CHILD_TIMEOUT) for _ in procs]
    for p in procs:
        p.join(timeout=CHILD_TIMEOUT)
    assert sorted(r[0] for r in results) == [0, 1]  # built exactly once
    assert sorted(r[1] for r in results) == [False, True]
    assert all(r[2] == float(np.arange(100_000, dtype=np.float32).sum()) for r in results)


def test_incomplete_cache_without_meta_is_rebuilt(tmp_path, caplog):
    cache = PatchCache(tmp_path, {"k": 1})
    entry = cache.open_or_build(lambda: ({"a": np.ones(3)}, {}))
    (entry.path / "meta.json").unlink()
    caplog.set_level(logging.INFO, logger="hsi.data")
    again = PatchCache(tmp_path, {"k": 1}).open_or_build(lambda: ({"a": np.ones(3)}, {}))
    assert again.built and any("incomplete" in r.getMessage() for r in caplog.records)
    with pytest.raises(KeyError):
        again.arrays["missing"]


# ---------------------------------------------------------------- issue 10: every byte checked, leftovers cleaned
def _array_cache(root, arr, key="bytes"):
    return PatchCache(root, {"k": key}, prefix="t"), (lambda: ({"cube": arr}, {"n": 1}))


def _flip(path, offset, n=8):
    data = bytearray(path.read_bytes())
    for i in range(offset, offset + n):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def test_flipped_bytes_between_former_sample_points_are_caught(tmp_path, caplog):
    arr = np.random.default_rng(0).random((550, 1000)).astype(np.float32)  # 2.2 MB, like the report
    cache, builder = _array_cache(tmp_path, arr)
    first = cache.open_or_build(builder)
    npy = first.path / "cube.npy"
    _flip(npy, 80_000)  # after the first 64 kB sample, before the second one of the old 17-sample digest
    caplog.set_level(logging.INFO, logger="hsi.data")
    again = PatchCache(tmp_path, {"k": "bytes"}, prefix="t").open_or_build(builder)
    assert again.built
    assert any("cube.npy bytes 0..16777215 differ from their checksum" in r.getMessage() for r in caplog.records)
    np.testing.assert_array_equal(again.load("cube"), arr)


def test_large_cache_is_checked_on_first_touch(tmp_path, monkeypatch, caplog):
    import hsi.data.cache as cache_mod

    monkeypatch.setattr(cache_mod, "FULL_CHECK_BYTES", 0)  # every cache counts as large
    monkeypatch.setattr(cache_mod, "CHUNK_BYTES", 1 << 16)
    arr = np.arange(300_000, dtype=np.float32)
    cache, builder = _array_cache(tmp_path, arr, key="large")
    built = cache.open_or_build(builder)
    assert len(json.loads((built.path / "meta.json").read_text())["files"]["cube"]["chunks"]) == 19
    _flip(built.path / "cube.npy", 700_000)
    entry = PatchCache(tmp_path, {"k": "large"}, prefix="t").open_or_build(builder)
    assert not entry.built  # not read on open...
    caplog.set_level(logging.INFO, logger="hsi.data")
    path = entry.arrays["cube"]  # ...but before the first use, which rebuilds it
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "\n" not in warned[0]
    assert "cube.npy bytes 655360..720895 differ from their checksum (corrupt); rebuilt it" in warned[0]
    np.testing.assert_array_equal(np.load(path), arr)
    assert PatchCache(tmp_path, {"k": "large"}, prefix="t").verify()[0] is not None  # valid on disk again


def _flip_data(path, n=64):
    """Flip ``n`` bytes in the middle of a ``.npy`` file's data (its header stays readable)."""
    _flip(path, path.stat().st_size // 2, n)


def test_corruption_found_lazily_by_a_new_datamodule_is_rebuilt(make_dm, monkeypatch, caplog):
    import hsi.data.cache as cache_mod

    monkeypatch.setattr(cache_mod, "FULL_CHECK_BYTES", 0)  # verified per file on first touch, as large caches are
    dm = make_dm(augment=False)
    dm.prepare_data()
    dm.setup("fit")
    ref = [b[0].clone() for b in dm.val_dataloader()]
    _flip_data(dm.cache_path / "cube.npy")  # after the build, before a new DataModule reads it
    caplog.set_level(logging.INFO, logger="hsi.data")
    again = make_dm(augment=False)
    again.prepare_data()
    again.setup("fit")  # used to raise CacheError here
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "cube.npy" in warned[0] and "(corrupt); rebuilt it" in warned[0], warned
    assert all(torch.equal(a, b[0]) for a, b in zip(ref, again.val_dataloader()))
    caplog.clear()
    third = make_dm(augment=False)
    third.setup("fit")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # the rebuilt cache is valid


def test_a_rebuild_that_is_corrupt_again_is_a_clear_error(tmp_path, monkeypatch):
    import hsi.data.cache as cache_mod
    from hsi.errors import CacheError

    monkeypatch.setattr(cache_mod, "FULL_CHECK_BYTES", 0)
    arr = np.arange(300_000, dtype=np.float32)
    cache, builder = _array_cache(tmp_path, arr, key="again")
    built = cache.open_or_build(builder)
    _flip_data(built.path / "cube.npy")
    entry = PatchCache(tmp_path, {"k": "again"}, prefix="t").open_or_build(builder)
    write = PatchCache._write

    def faulty_disk(self, arrays, state):  # the rebuilt file is damaged after it was written and hashed
        out = write(self, arrays, state)
        _flip_data(self.path / "cube.npy")
        return out

    monkeypatch.setattr(PatchCache, "_write", faulty_disk)
    with pytest.raises(CacheError, match=r"cube.npy was corrupt, was rebuilt, and is corrupt again .*another "
                                         r"cache_dir") as info:
        entry.arrays["cube"]
    assert str(built.path) in str(info.value)
    assert not (built.path / "meta.json").exists()  # never reused as it is


def test_file_identity_memo_does_not_hide_a_rewrite_with_restored_mtime(tmp_path):
    import os

    from hsi.data.scene_source import file_identity

    p = tmp_path / "cube.img"
    p.write_bytes(b"a" * 4096)
    first = file_identity(p)
    st = os.stat(p)
    time.sleep(0.01)
    p.write_bytes(b"b" * 4096)  # same size
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    second = file_identity(p)
    assert (second["size"], second["mtime_ns"]) == (first["size"], first["mtime_ns"])
    assert second["sha256"] != first["sha256"]


def test_leftovers_of_dead_builders_and_unheld_locks_are_removed_on_open(tmp_path):
    import fcntl
    import os
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead_pid = int(dead.stdout)
    cache, builder = _array_cache(tmp_path, np.ones(10, dtype=np.float32), key="clean")
    entry = cache.open_or_build(builder)
    leftovers = [entry.path / f".cube.npy.tmp-{dead_pid}", entry.path / f".meta.json.tmp-{dead_pid}-x1y2"]
    kept = [entry.path / f".cube.npy.tmp-{os.getppid()}", entry.path / f".cube.npy.tmp-{os.getpid()}",
            tmp_path / f".notes.txt.tmp-{dead_pid}"]  # live writers, and files outside cache folders
    for p in leftovers + kept:
        p.write_bytes(b"\0" * 100)
    stale, held = tmp_path / "old-0123456789abcdef.lock", tmp_path / "busy-0123456789abcdef.lock"
    stale.touch()
    with open(held, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        again = PatchCache(tmp_path, {"k": "clean"}, prefix="t").open_or_build(builder)
        assert held.exists()  # somebody holds it: a build is running
    assert not again.built
    assert not any(p.exists() for p in leftovers) and all(p.exists() for p in kept)
    assert not stale.exists()


def _hold_the_lock_forever(lock_path, ready):
    from filelock import FileLock

    FileLock(lock_path).acquire()
    ready.set()
    time.sleep(600)


def test_a_killed_lock_holder_does_not_block_the_next_build(tmp_path):
    import threading

    cache, builder = _array_cache(tmp_path, np.arange(10, dtype=np.float32), key="killed")
    ctx = mp.get_context("fork")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_the_lock_forever, args=(str(cache.lock_path), ready))
    holder.start()
    assert ready.wait(30)
    holder.kill()  # SIGKILL: no clean-up code runs in the holder
    holder.join(30)
    assert cache.lock_path.exists()  # its lock file is left behind
    out = []
    opener = threading.Thread(target=lambda: out.append(cache.open_or_build(builder)), daemon=True)
    opener.start()
    opener.join(30)
    assert not opener.is_alive(), "the lock of a killed process still blocks the build"
    assert out[0].built
    again = PatchCache(tmp_path, {"k": "other"}, prefix="t")
    again.open_or_build(lambda: ({"cube": np.ones(2)}, {}))
    assert sorted(p.name for p in tmp_path.glob("*.lock")) == [again.lock_path.name]  # unheld ones were removed


def test_cache_dir_that_is_a_file_or_not_writable_raises_a_cache_error(tmp_path, make_dm):
    import os

    from hsi.errors import CacheError

    target = tmp_path / "cache_file"
    target.write_text("not a folder")
    for bad in (target, target / "sub"):
        with pytest.raises(CacheError, match=f"cache_dir {bad}"):
            make_dm(cache_dir=str(bad)).prepare_data()
    assert target.read_text() == "not a folder"
    if os.geteuid() == 0:
        pytest.skip("root can write into read-only folders")
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    with pytest.raises(CacheError, match=f"cache_dir {ro}: the folder is not writable"):
        make_dm(cache_dir=str(ro)).prepare_data()


def test_cache_key_covers_the_preprocessing_semantics(make_dm, monkeypatch):
    import hsi.data.build as build

    dm = make_dm()
    dm.prepare_data()
    meta = json.loads((dm.cache_path / "meta.json").read_text())
    assert meta["description"]["preprocess_semantics"] == build.PREPROCESS_SEMANTICS >= 2
    monkeypatch.setattr(build, "PREPROCESS_SEMANTICS", build.PREPROCESS_SEMANTICS + 1)
    other = make_dm()
    other.prepare_data()
    assert other.cache_path != dm.cache_path
