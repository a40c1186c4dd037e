"""``hsi._identity``: a file's identity by content, whole-file hashed below the limit, sampled above it."""

from __future__ import annotations

import hashlib
import os

import hsi._identity as identity


def test_a_small_file_is_hashed_whole(tmp_path):
    path = tmp_path / "cube.bin"
    path.write_bytes(b"x" * 5000)
    found = identity.file_identity(path)
    assert found["sha256"] == hashlib.sha256(b"x" * 5000).hexdigest() and "hash" not in found
    os.utime(path, ns=(1, 1))  # a touch: same content, the same input
    assert identity.identity_change(found, identity.file_identity(path)) is None


def test_a_file_above_the_limit_is_hashed_by_sampled_chunks_and_its_mtime_counts(tmp_path, monkeypatch):
    monkeypatch.setattr(identity, "FULL_HASH_LIMIT", 1000)
    monkeypatch.setattr(identity, "SAMPLE_CHUNK", 10)
    monkeypatch.setattr(identity, "SAMPLE_CHUNKS", 4)
    path = tmp_path / "big.bin"
    data = bytearray(os.urandom(3000))
    path.write_bytes(bytes(data))
    first = identity.file_identity(path)
    assert first["hash"] == "sampled" and first["size"] == 3000
    data[-1] ^= 0xFF  # inside the last chunk
    path.write_bytes(bytes(data))
    second = identity.file_identity(path)
    assert second["sha256"] != first["sha256"] and "SHA-256" in identity.identity_change(first, second)
    data[1500] ^= 0xFF  # between the chunks: the hash cannot see it, the mtime can
    path.write_bytes(bytes(data))
    os.utime(path, ns=(second["mtime_ns"] + 10**9, second["mtime_ns"] + 10**9))
    third = identity.file_identity(path)
    assert third["sha256"] == second["sha256"]
    assert "modification time" in identity.identity_change(second, third)


def test_first_change_names_the_file_or_the_setting():
    a = {"cube": {"path": "/d/c.h5", "size": 3, "mtime_ns": 1, "sha256": "a" * 64}, "key": "x"}
    assert identity.first_change(a, a) is None
    assert identity.first_change(a, {**a, "cube": {**a["cube"], "sha256": "b" * 64}}).startswith(
        "the input /d/c.h5 changed (SHA-256 aaaaaaaaaaaa... -> bbbbbbbbbbbb...)")
    assert identity.first_change(a, {**a, "key": "y"}, "the scene") == "the scene.key changed ('x' -> 'y')"


def test_an_input_recorded_as_one_file_counts_as_changed_when_it_is_read_from_several():
    header = {"path": "/d/s.hdr", "size": 3, "mtime_ns": 1, "sha256": "a" * 64}
    binary = {"path": "/d/s.img", "size": 9, "mtime_ns": 1, "sha256": "b" * 64}
    now = {"cube": [header, binary]}
    assert identity.first_change({"cube": [header, binary]}, now) is None
    for old in ({"cube": header}, {"cube": [header]}, {}):  # an older hsi's record; a file fewer
        assert identity.first_change(old, now, "the scene") == \
            "the scene.cube is now read from other files (/d/s.hdr, /d/s.img)"
    assert identity.first_change({"cube": [header, {**binary, "sha256": "c" * 64}]}, now).startswith(
        "the input /d/s.img changed (SHA-256 cccccccccccc... -> bbbbbbbbbbbb...)")
