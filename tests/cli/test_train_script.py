"""scripts/train.py end to end on a small synthetic scene, through a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from sklearn.metrics import accuracy_score, balanced_accuracy_score, cohen_kappa_score

from tests.helpers import CHILD_TIMEOUT

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "train.py"
SMALL_SCENE = {"height": 64, "width": 64, "bands": 24, "seed": 3}


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT
    )


def _config(tmp_path: Path, **extra) -> Path:
    config = {
        "scene": "synthetic",
        "scene_options": SMALL_SCENE,
        "model": "cnn2d",
        "patch_size": 7,
        "block_size": 12,
        "batch_size": 64,
        "lr": 3e-3,
        "seed": 0,
        "progress": False,
        **extra,
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="module")
def two_epoch_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    tmp = tmp_path_factory.mktemp("train")
    out = tmp / "run"
    proc = _run(["--config", str(_config(tmp)), "--epochs", "2", "--out", str(out)], cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc


def test_run_writes_every_artefact(two_epoch_run):
    out, proc = two_epoch_run
    for name in ("best.ckpt", "last.ckpt", "metrics.json", "predictions.npz", "confusion.png", "curves.png", "split.png"):
        path = out / name
        assert path.is_file() and path.stat().st_size > 0, name
    metrics = json.loads((out / "metrics.json").read_text())
    for key in ("oa", "aa", "kappa", "per_class", "confusion", "split", "model", "seed", "timing"):
        assert key in metrics, key
    assert metrics["model"] == "cnn2d" and metrics["seed"] == 0 and metrics["epochs_trained"] == 2
    assert metrics["split"]["method"] == "block" and metrics["split"]["buffer"] == 3  # patch 7 // 2
    assert set(metrics["per_class"]) == set(metrics["class_names"])
    # The end-of-run summary table is printed.
    assert "OA" in proc.stdout and "kappa" in proc.stdout and metrics["class_names"][0] in proc.stdout


def test_metrics_agree_with_sklearn_on_saved_predictions(two_epoch_run):
    out, _ = two_epoch_run
    metrics = json.loads((out / "metrics.json").read_text())
    pred = np.load(out / "predictions.npz")
    y_true, y_pred = pred["y_true"], pred["y_pred"]
    assert (y_true >= 1).all()  # test pixels are labeled pixels (ids 1..K, as the maps number them)
    assert metrics["oa"] == pytest.approx(accuracy_score(y_true, y_pred))
    assert metrics["aa"] == pytest.approx(balanced_accuracy_score(y_true, y_pred))
    assert metrics["kappa"] == pytest.approx(cohen_kappa_score(y_true, y_pred))
    assert np.array(metrics["confusion"]).sum() == len(y_true) == metrics["split"]["test_pixels"]
    np.testing.assert_allclose(pred["probs"].sum(axis=1), 1.0, rtol=1e-5)


def test_checkpoint_carries_the_datamodule_state(two_epoch_run):
    out, _ = two_epoch_run
    ckpt = torch.load(out / "best.ckpt", map_location="cpu", weights_only=False)
    state = ckpt["HSIDataModule"]
    assert state, "the DataModule state (split, preprocessing, classes) must be in the checkpoint"
    assert ckpt["hyper_parameters"]["model"] == "cnn2d"
    metrics = json.loads((out / "metrics.json").read_text())
    assert ckpt["hyper_parameters"]["class_names"] == metrics["class_names"]


def test_resume_continues_from_the_saved_epoch(two_epoch_run, tmp_path):
    out, _ = two_epoch_run
    resumed = tmp_path / "resumed"
    proc = _run(
        ["--config", str(_config(tmp_path)), "--epochs", "3", "--out", str(resumed), "--resume", str(out / "last.ckpt")],
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((resumed / "metrics.json").read_text())
    assert metrics["start_epoch"] == 3 and metrics["epochs_trained"] == 3  # epochs numbered from 1
    # Only one epoch ran in the resumed process: its log holds epoch 2 alone.
    logged = {int(float(line.split(",")[0])) for f in (resumed / "logs").glob("**/metrics.csv")
              for line in f.read_text().splitlines()[1:] if line and line.split(",")[0]}
    assert logged == {2}


def test_same_seed_gives_same_metrics(tmp_path, monkeypatch):
    from hsi.cli import main

    monkeypatch.chdir(tmp_path)
    results = []
    for i in range(2):
        args = ["train", "--config", str(_config(tmp_path, model="spectral1d")), "--epochs", "1", "--out", str(tmp_path / f"r{i}")]
        assert main(args) == 0
        results.append(json.loads((tmp_path / f"r{i}" / "metrics.json").read_text()))
    a, b = results
    assert (a["oa"], a["aa"], a["kappa"]) == (b["oa"], b["aa"], b["kappa"])
    assert a["confusion"] == b["confusion"]
    np.testing.assert_array_equal(np.load(tmp_path / "r0" / "predictions.npz")["probs"],
                                  np.load(tmp_path / "r1" / "predictions.npz")["probs"])


def test_missing_scene_is_a_clear_message_not_a_traceback(tmp_path):
    proc = _run(["--scene", "indian_pines", "--root", str(tmp_path), "--out", str(tmp_path / "out"), "--epochs", "1"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "Indian_pines" in proc.stderr and str(tmp_path) in proc.stderr


def test_unknown_config_option_is_named(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("scene: synthetic\npatch_sise: 9\n")
    proc = _run(["--config", str(bad)], cwd=tmp_path)
    assert proc.returncode == 2 and "patch_sise" in proc.stderr


def test_ctrl_c_leaves_a_resumable_last_checkpoint(tmp_path):
    import signal
    import time

    out = tmp_path / "interrupted"
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--config", str(_config(tmp_path)), "--epochs", "200", "--out", str(out)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + CHILD_TIMEOUT
    staged = out.parent / f".{out.name}.staging-{proc.pid}" / "last.ckpt"  # moved into out when the run ends
    while not staged.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "training ended before it could be interrupted"
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=CHILD_TIMEOUT)
    assert proc.returncode == 130, stderr[-2000:]
    assert "--resume" in stderr and "last.ckpt" in stderr
    ckpt = torch.load(out / "last.ckpt", map_location="cpu", weights_only=False)
    stopped_at = int(ckpt["epoch"])
    assert stopped_at < 199 and ckpt["HSIDataModule"]
    resumed = _run(
        ["--config", str(_config(tmp_path)), "--epochs", str(stopped_at + 2), "--out", str(tmp_path / "resumed"),
         "--resume", str(out / "last.ckpt")],
        cwd=tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads((tmp_path / "resumed" / "metrics.json").read_text())["epochs_trained"] == stopped_at + 2


@pytest.mark.slow
def test_two_process_ddp_run_finishes_and_reports(tmp_path):
    # Regression: evaluation after a DDP fit used to wait forever on the finished second rank.
    out = tmp_path / "ddp"
    proc = _run(["--config", str(_config(tmp_path)), "--epochs", "1", "--out", str(out),
                 "--accelerator", "cpu", "--devices", "2", "--strategy", "ddp"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    pred = np.load(out / "predictions.npz")
    # Rank 0 evaluates every test pixel once (no DistributedSampler padding or sharding).
    assert len(pred["y_true"]) == metrics["split"]["test_pixels"] == np.array(metrics["confusion"]).sum()
    assert metrics["oa"] == pytest.approx(accuracy_score(pred["y_true"], pred["y_pred"]))
