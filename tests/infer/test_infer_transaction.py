"""``hsi infer --overwrite`` as a transaction: Ctrl-C or SIGKILL at any moment leaves the old map or no manifest.

A first run writes a complete folder; a second run with ``--overwrite`` and ``--tta`` (so
its maps differ) is stopped at one moment: in this process by a ``KeyboardInterrupt``
(Ctrl-C), or in a child process by SIGKILL. Afterwards the folder's manifest either is the
first run's, with every listed file matching its checksum, or is absent; the next run
cleans what the stopped one left.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from hsi.transaction import read_manifest, verify_manifest
from tests.helpers import CHILD_TIMEOUT, child_env

MANIFEST = "inference.json"

#: the child: patches one moment to SIGKILL itself, then runs ``hsi infer``
KILLER = textwrap.dedent("""
    import os, signal, sys
    moment, argv = sys.argv[1], sys.argv[2:]

    def kill_after(fn):
        def wrapped(*a, **k):
            out = fn(*a, **k)
            os.kill(os.getpid(), signal.SIGKILL)
            return out
        return wrapped

    if moment == "map.png":
        import hsi.viz as viz
        viz.plot_class_map = kill_after(viz.plot_class_map)
    elif moment == "maps":
        from hsi.infer.arrays import ResultArrays
        ResultArrays.write_block = kill_after(ResultArrays.write_block)
    else:
        from hsi import transaction

        def hook(now):
            if now == moment:
                os.kill(os.getpid(), signal.SIGKILL)
        transaction._test_hook = hook
    from hsi.cli import main
    sys.exit(main(argv))
""")


def folder_state(out, old: dict) -> str:
    """``"old"``, ``"new"`` or ``"none"``; fails when the manifest lists a file whose checksum differs."""
    data = read_manifest(out, MANIFEST)
    if data is None:
        return "none"
    assert verify_manifest(out, MANIFEST) == {}, "the manifest vouches for a file it did not write"
    return "old" if data["files"] == old else "new"


def leftovers(parent) -> list[str]:
    return sorted(p.name for p in parent.rglob("*") if ".staging-" in p.name or ".tmp-" in p.name
                  or p.name.endswith(".partial"))


@pytest.fixture
def first_run(cnn_ckpt, tmp_path, hsi_args):
    """A complete folder from a first run; returns ``(out, its manifest's files, args of an --overwrite run)``."""
    from hsi.cli import main

    out = tmp_path / "maps" / "run"
    assert main(hsi_args(out)) == 0
    (out / "notes.txt").write_text("mine")  # a user's file, never touched
    again = [*hsi_args(out), "--overwrite", "--tta"]
    return out, json.loads((out / MANIFEST).read_text())["files"], again


@pytest.fixture
def hsi_args(cnn_ckpt):
    def args(out):
        return ["infer", "--checkpoint", str(cnn_ckpt), "--scene", "synthetic", "--out", str(out), "--tile", "16",
                "--probabilities", "--no-progress", "--accelerator", "cpu"]
    return args


@pytest.mark.parametrize(("moment", "expected"), [("maps", "old"), ("map.png", "old"), ("moved:labels.npy", "none")])
def test_sigkill_leaves_the_old_map_or_no_manifest(first_run, moment, expected):
    out, old, again = first_run
    proc = subprocess.run([sys.executable, "-c", KILLER, moment, *again], capture_output=True, text=True,
                          env=child_env(), timeout=CHILD_TIMEOUT)
    assert proc.returncode == -9, proc.stderr[-2000:]
    assert folder_state(out, old) == expected
    assert (out / "notes.txt").read_text() == "mine"
    # the next run removes what the killed one left and commits a complete folder
    from hsi.cli import main

    assert main(again) == 0
    assert folder_state(out, old) == "new" and leftovers(out.parent) == []
    assert (out / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("moment", ["maps", "map.png", "manifest-removed", "moved:map.png", "before-manifest"])
def test_ctrl_c_leaves_the_old_map_or_no_manifest_and_no_leftovers(first_run, moment, monkeypatch, capsys):
    from hsi import transaction
    from hsi.cli import main
    from hsi.infer.arrays import ResultArrays

    out, old, again = first_run

    def interrupt(*a, **k):
        raise KeyboardInterrupt

    if moment == "maps":
        monkeypatch.setattr(ResultArrays, "write_block", interrupt)
    elif moment == "map.png":
        import hsi.viz

        monkeypatch.setattr(hsi.viz, "plot_class_map", interrupt)
    else:
        monkeypatch.setattr(transaction, "_test_hook", lambda now: interrupt() if now == moment else None)
    assert main(again) == 130
    assert "interrupted" in capsys.readouterr().err
    assert folder_state(out, old) == ("old" if moment in ("maps", "map.png") else "none")
    if moment in ("maps", "map.png"):
        assert leftovers(out.parent) == []  # the staging folder went with the interrupt
    monkeypatch.undo()
    assert main(again) == 0 and folder_state(out, old) == "new" and leftovers(out.parent) == []


@pytest.fixture
def tiny_disk(small_disk):
    """A 2 MiB tmpfs (skipped where mounting is not permitted)."""
    return small_disk("2m")


def test_full_disk_is_one_error_line_exit_2_and_no_leftovers(hsi_args, tiny_disk, monkeypatch, capsys):
    from hsi import transaction
    from hsi.cli import main

    status = main(hsi_args(tiny_disk / "maps"))  # 4 MiB needed: refused before any compute
    err = capsys.readouterr().err
    assert status == 2 and err.startswith(f"error: {tiny_disk / 'maps'}: ") and "bytes" in err
    assert len(err.strip().splitlines()) == 1
    assert list(tiny_disk.iterdir()) == []
    # past the check, a disk that fills up while writing: one error line, nothing left behind
    monkeypatch.setattr(transaction, "require_free_space", lambda *a, **k: None)
    (tiny_disk / "filler").write_bytes(b"x" * ((2 << 20) - (96 << 10)))
    status = main(hsi_args(tiny_disk / "maps"))
    err = capsys.readouterr().err
    assert status == 2 and err.startswith(f"error: {tiny_disk / 'maps'}: no space left") and "bytes" in err, err
    assert len(err.strip().splitlines()) == 1
    assert [p.name for p in tiny_disk.iterdir()] == ["filler"]
