"""write_bytes_atomic: all or nothing, with ordinary permissions."""

from __future__ import annotations

import os
import stat

import pytest

from hsi import _atomic
from hsi._atomic import write_bytes_atomic


def test_replaces_content_with_umask_permissions(tmp_path):
    target = tmp_path / "meta.json"
    target.write_bytes(b"old")
    write_bytes_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in tmp_path.iterdir()] == ["meta.json"]


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "state.json"
    target.write_bytes(b"old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(_atomic.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_bytes_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
