"""hsi.transaction: a folder holds the old complete outputs or no manifest, whenever its writer dies."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from hsi import transaction
from hsi.errors import DiskFullError, OverwriteError, RunOutputError
from hsi.transaction import Staging, begin, read_manifest, remove_leftovers, verify_manifest

OUTPUTS = ("a.bin", "b.bin", "sub")


def _write(staging: Staging, tag: str) -> None:
    (staging.path / "a.bin").write_bytes(tag.encode() * 100)
    (staging.path / "b.bin").write_bytes(tag.encode() * 50)
    (staging.path / "sub").mkdir(exist_ok=True)
    (staging.path / "sub" / "c.txt").write_text(tag)


def _run(target, tag: str, overwrite: bool = True) -> dict:
    staging = begin(target, manifest="m.json", outputs=OUTPUTS, overwrite=overwrite, command="hsi test")
    _write(staging, tag)
    return staging.commit({"tag": tag})


def test_commit_moves_files_and_writes_the_manifest_last_with_checksums(tmp_path):
    target = tmp_path / "out"
    files = _run(target, "old", overwrite=False)
    assert set(files) == {"a.bin", "b.bin", "sub/c.txt", "m.json"}
    manifest = read_manifest(target, "m.json")
    assert manifest["status"] == "complete" and manifest["tag"] == "old"
    assert manifest["files"]["a.bin"]["size"] == 300 and len(manifest["files"]["a.bin"]["sha256"]) == 64
    assert verify_manifest(target, "m.json") == {}
    assert manifest["versions"]["python"] == platform.python_version()
    assert manifest["versions"]["numpy"] == np.__version__ and manifest["versions"]["torch"] != "absent"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder left
    (target / "a.bin").write_bytes(b"changed")
    assert set(verify_manifest(target, "m.json")) == {"a.bin"}


def test_overwrite_replaces_listed_files_only_and_the_old_set_as_a_whole(tmp_path):
    target = tmp_path / "out"
    _run(target, "old", overwrite=False)
    (target / "notes.txt").write_text("mine")
    with pytest.raises(RunOutputError, match="--overwrite"):
        _run(target, "new", overwrite=False)
    staging = begin(target, manifest="m.json", outputs=OUTPUTS, overwrite=True, command="hsi test")
    (staging.path / "a.bin").write_bytes(b"new")  # this run writes a.bin alone
    staging.commit()
    assert sorted(p.name for p in target.iterdir()) == ["a.bin", "m.json", "notes.txt"]
    assert (target / "notes.txt").read_text() == "mine" and verify_manifest(target, "m.json") == {}


def test_a_file_hsi_did_not_write_is_never_replaced(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "a.bin").write_bytes(b"mine")
    with pytest.raises(OverwriteError, match=r"a\.bin: exists but was not written by hsi test"):
        _run(target, "new")
    assert (target / "a.bin").read_bytes() == b"mine"
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunOutputError, match="not a folder"):
        _run(tmp_path / "file", "new")


def test_leftovers_of_dead_processes_are_removed_and_live_ones_kept(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    target = tmp_path / "out"
    target.mkdir()
    stale = [tmp_path / f".out.staging-{pid}", tmp_path / f".x.h5.tmp-{pid}-abc.h5", target / f".m.json.tmp-{pid}-q",
             target / ".labels.npy.partial"]
    stale[0].mkdir()
    for path in stale[1:]:
        path.write_bytes(b"x")
    live = tmp_path / f".out.staging-{os.getppid()}"
    live.mkdir()
    assert sorted(remove_leftovers(target)) == sorted(stale)
    assert live.is_dir() and not any(p.exists() for p in stale)


def test_free_space_check_names_folder_and_bytes(tmp_path):
    with pytest.raises(DiskFullError, match=rf"{tmp_path}: .* need 1[0-9]+ bytes .* free"):
        transaction.require_free_space(tmp_path, 1 << 60, "the outputs")
    err = OSError(28, "No space left on device")
    with pytest.raises(DiskFullError, match="no space left"):
        with transaction.disk_full_as_error(tmp_path, 100, "x"):
            raise err


KILLER = textwrap.dedent("""
    import os, signal, sys
    from hsi import transaction
    target, moment, tag = sys.argv[1:4]

    def hook(now):
        if now == moment:
            os.kill(os.getpid(), signal.SIGKILL)

    transaction._test_hook = hook
    staging = transaction.begin(target, manifest="m.json", outputs=("a.bin", "b.bin", "sub"), overwrite=True,
                                command="hsi test")
    (staging.path / "a.bin").write_bytes(tag.encode() * 100)
    (staging.path / "b.bin").write_bytes(tag.encode() * 50)
    (staging.path / "sub").mkdir()
    (staging.path / "sub" / "c.txt").write_text(tag)
    staging.commit({"tag": tag})
""")

MOMENTS = ["manifest-removed", "moved:a.bin", "moved:b.bin", "moved:sub/c.txt", "before-manifest", "never"]


def folder_state(target, manifest: str, old: dict) -> str:
    """``"old"``, ``"new"`` or ``"none"`` (no manifest); fails when a listed file does not match its checksum."""
    data = read_manifest(target, manifest)
    if data is None:
        return "none"
    assert verify_manifest(target, manifest) == {}, f"{target}: the manifest vouches for a changed file"
    return "old" if data["files"] == old else "new"


@pytest.mark.parametrize("moment", MOMENTS)
def test_sigkill_at_any_moment_of_a_commit_leaves_old_outputs_or_no_manifest(tmp_path, moment):
    target = tmp_path / "out"
    _run(target, "old", overwrite=False)
    old = json.loads((target / "m.json").read_text())["files"]
    proc = subprocess.run([sys.executable, "-c", KILLER, str(target), moment, "new"], capture_output=True, text=True)
    assert proc.returncode == (0 if moment == "never" else -9), proc.stderr
    state = folder_state(target, "m.json", old)
    assert state == {"manifest-removed": "none", "before-manifest": "none", "never": "new"}.get(moment, "none")
    _run(target, "third")  # the next run cleans what the killed one left and commits
    assert folder_state(target, "m.json", old) == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# -- transaction.staged: the one context manager of every command ------------------------------------------------


def _staged(target, **kwargs):
    return transaction.staged(target, manifest="m.json", outputs=OUTPUTS, overwrite=True, command="hsi test", **kwargs)


def _tree(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_staged_aborts_on_an_error_and_leaves_the_target_as_it_was(tmp_path):
    target = tmp_path / "out"
    _run(target, "old", overwrite=False)
    (target / "notes.txt").write_text("mine")
    before = _tree(target)
    with pytest.raises(ValueError, match="boom"):
        with _staged(target) as staging:
            (staging.path / "a.bin").write_bytes(b"new")
            raise ValueError("boom")
    assert _tree(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder left


def test_staged_removes_the_folder_the_caller_created_and_leaves_nothing_without_a_commit(tmp_path):
    target = tmp_path / "new"
    target.mkdir()
    with pytest.raises(KeyboardInterrupt):
        with _staged(target, created=True) as staging:
            (staging.path / "a.bin").write_bytes(b"x")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    with _staged(tmp_path / "out") as staging:  # a block that does not commit stages nothing for good
        (staging.path / "a.bin").write_bytes(b"x")
    assert list(tmp_path.iterdir()) == []


def test_staged_turns_a_full_disk_into_one_disk_full_error_naming_the_folder(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(DiskFullError, match=rf"^{target}: no space left .*\(about 1234 bytes") as info:
        with _staged(target) as staging:
            staging.needed = 1234
            raise RuntimeError("HDF5 write failed") from OSError(28, "No space left on device")
    assert isinstance(info.value.__cause__, RuntimeError)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(DiskFullError, match=rf"^{target}: the hsi test outputs need 1[0-9]+ bytes"):
        with _staged(target, needed=1 << 60):
            pytest.fail("the block runs although the space is missing")
    assert list(tmp_path.iterdir()) == []


def test_staged_commit_writes_the_manifest_last(tmp_path, monkeypatch):
    target = tmp_path / "out"
    seen = []
    monkeypatch.setattr(transaction, "_test_hook", lambda moment: seen.append(
        (moment, sorted(p.name for p in target.iterdir()) if target.is_dir() else [])))
    with _staged(target) as staging:
        _write(staging, "new")
        files = staging.commit({"tag": "new"})
    # every file in place (and the commit's journal), no manifest yet
    assert seen[-1] == ("before-manifest", [".m.json.commit", "a.bin", "b.bin", "sub"])
    assert set(files) == {"a.bin", "b.bin", "sub/c.txt", "m.json"} and staging.committed
    assert read_manifest(target, "m.json")["tag"] == "new" and verify_manifest(target, "m.json") == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_staged_interrupt_hook_keeps_what_it_commits(tmp_path):
    def keep_a(staging, err):
        staging.commit(status="interrupted", only=["a.bin"])
        return KeyboardInterrupt("kept a.bin")

    target = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt, match="kept a.bin"):
        with _staged(target, on_interrupt=keep_a) as staging:
            _write(staging, "new")
            raise KeyboardInterrupt
    assert sorted(p.name for p in target.iterdir()) == ["a.bin", "m.json"]
    assert read_manifest(target, "m.json")["status"] == "interrupted"


def test_a_process_writing_into_anothers_staging_never_commits_or_removes_it(tmp_path):
    target = tmp_path / "out"
    with _staged(target) as owner:
        with pytest.raises(ValueError):
            with _staged(target, inherited=owner.path) as rank1:
                assert not rank1.owner and rank1.path == owner.path and rank1.target == owner.target
                (rank1.path / "a.bin").write_bytes(b"rank 1")
                raise ValueError("rank 1 failed")
        assert (owner.path / "a.bin").read_bytes() == b"rank 1"
        with pytest.raises(RuntimeError, match="cannot commit"):
            rank1.commit()
        owner.commit()
    assert sorted(p.name for p in target.iterdir()) == ["a.bin", "m.json"]


def test_a_killed_runs_resumable_state_is_kept_aside_and_said(tmp_path, caplog):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    target = tmp_path / "run"
    resumable, plain = tmp_path / f".run.staging-{pid}", tmp_path / f".other.staging-{pid}"
    for folder in (resumable, plain):
        folder.mkdir()
        (folder / "logs.csv").write_text("x")
    (resumable / "last.ckpt").write_bytes(b"state")
    removed = remove_leftovers(target, "last.ckpt", "hsi train")
    kept = tmp_path / f"run.killed-{pid}"
    assert removed == [plain] and not plain.exists() and not resumable.exists()
    assert (kept / "last.ckpt").read_bytes() == b"state"
    assert f"its state is kept in {kept} (continue with --resume {kept / 'last.ckpt'}" in caplog.text
    assert remove_leftovers(target, "last.ckpt", "hsi train") == [] and kept.is_dir()  # never removed later
