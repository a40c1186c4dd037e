"""``hsi train`` as a transaction: Ctrl-C keeps a resumable last.ckpt and no report; SIGKILL leaves the old run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import pytest

from hsi.transaction import read_manifest, verify_manifest
from tests.helpers import CHILD_TIMEOUT, child_env

#: the child: signals itself at one moment (SIGINT or SIGKILL at the start of epoch 1, or SIGKILL in the commit)
SIGNALLER = textwrap.dedent("""
    import os, signal, sys
    moment, argv = sys.argv[1], sys.argv[2:]
    if moment in ("epoch1", "kill-epoch1"):
        from hsi.training.task import HSIClassifier

        def on_train_epoch_start(self):
            if self.current_epoch == 1:
                os.kill(os.getpid(), signal.SIGINT if moment == "epoch1" else signal.SIGKILL)
        HSIClassifier.on_train_epoch_start = on_train_epoch_start
    else:
        from hsi import transaction

        def hook(now):
            if now == moment:
                os.kill(os.getpid(), signal.SIGKILL)
        transaction._test_hook = hook
    from hsi.cli import main
    sys.exit(main(argv))
""")


def run_child(moment: str, args: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SIGNALLER, moment, *args], cwd=cwd, env=child_env(),
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT)


def staging_left(parent) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".staging-" in p.name)


@pytest.fixture
def old_run(hsi_main, tmp_path, tiny):
    out = tmp_path / "run"
    status, _, err = hsi_main(["train", *tiny, "--epochs", "1", "--out", str(out)], tmp_path)
    assert status == 0, err
    return out, json.loads((out / "run.json").read_text())["files"]


def test_sigkill_in_the_commit_leaves_the_old_run_or_no_manifest(old_run, tmp_path, tiny, hsi_main):
    out, old = old_run
    args = ["train", *tiny, "--epochs", "1", "--pca", "4", "--out", str(out), "--overwrite"]
    for moment in ("moved:metrics.json", "before-manifest"):
        proc = run_child(moment, args, tmp_path)
        assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
        assert read_manifest(out, "run.json") is None  # the old one was removed first; the new one never came
    status, _, err = hsi_main(args, tmp_path)  # the next run cleans up and replaces the files hsi wrote
    assert status == 0, err
    assert verify_manifest(out, "run.json") == {} and json.loads((out / "run.json").read_text())["files"] != old
    assert staging_left(tmp_path) == []


def test_ctrl_c_keeps_a_resumable_last_ckpt_and_no_report(old_run, tmp_path, tiny, hsi_main):
    out, _ = old_run
    proc = run_child("epoch1", ["train", *tiny, "--epochs", "3", "--out", str(out), "--overwrite"], tmp_path)
    assert proc.returncode == 130, proc.stderr[-2000:]
    last = out / "last.ckpt"
    assert f"continue with --resume {last}" in proc.stderr
    manifest = read_manifest(out, "run.json")
    assert manifest["status"] == "interrupted" and verify_manifest(out, "run.json") == {}
    assert "last.ckpt" in manifest["files"] and not (out / "metrics.json").exists()  # no report claims a finished run
    assert staging_left(tmp_path) == []
    status, _, err = hsi_main(["train", "--resume", str(last), "--epochs", "2", "--out", str(tmp_path / "resumed")],
                              tmp_path)
    assert status == 0, err
    metrics = json.loads((tmp_path / "resumed" / "metrics.json").read_text())
    assert metrics["start_epoch"] >= 1 and metrics["config"]["resumed_from"] == str(last)
    assert metrics["best_checkpoint"] == str(tmp_path / "resumed" / "best.ckpt")  # the committed path, not the staging one


def test_a_rerun_after_sigkill_keeps_the_killed_runs_state_for_resume(tmp_path, tiny, hsi_main, caplog):
    """The killed run's staging folder holds its last finished epoch: the next run beside it keeps it aside and says
    how to continue it, instead of deleting it."""
    out = tmp_path / "run"
    args = ["train", *tiny, "--epochs", "3", "--out", str(out)]
    proc = run_child("kill-epoch1", args, tmp_path)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    pid = int(staging_left(tmp_path)[0].rsplit("-", 1)[1])
    status, _, err = hsi_main(["train", *tiny, "--epochs", "1", "--out", str(tmp_path / "other")], tmp_path)
    assert status == 0, err
    kept = tmp_path / f"run.killed-{pid}"
    assert f"continue with --resume {kept / 'last.ckpt'}" in caplog.text and staging_left(tmp_path) == []
    status, _, err = hsi_main(["train", "--resume", str(kept / "last.ckpt"), "--out", str(out)], tmp_path)
    assert status == 0, err
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["start_epoch"] == 2 and metrics["config"]["run"]["epochs"] == 3
