from __future__ import annotations

import json
import logging
import multiprocessing as mp
import time

import numpy as np
import pytest
import torch

from hsi.data.cache import PatchCache


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
    assert second.cache_path == path and not second._entry.built
    assert {p.name: p.stat().st_mtime_ns for p in path.iterdir()} == stamp  # nothing rewritten
    meta = json.loads((path / "meta.json").read_text())
    assert meta["description"]["patch_size"] == 5 and meta["description"]["source"]["kind"] == "synthetic"
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
    assert again._entry.built and cube.stat().st_size == size
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
    assert again._entry.built
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
    results = [q.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(timeout=30)
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
