"""LightningCLI from a YAML with only ``data:`` and ``trainer:``; test and predict from the checkpoint alone."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

pytest.importorskip("jsonargparse")

CONFIG = textwrap.dedent(
    """
    data:
      scene: synthetic
      scene_options: {height: 24, width: 24, bands: 8, n_classes: 3, seed: 1}
      patch_size: 5
      block_size: 6
      cache_dir: cache
    trainer:
      max_epochs: 1
      default_root_dir: out
      enable_progress_bar: false
      enable_model_summary: false
      logger: false
      callbacks:
        - class_path: lightning.pytorch.callbacks.ModelCheckpoint
          init_args: {dirpath: ckpt, filename: last}
    """
)


def run_cli(cwd, args, *, hsi_cli: bool, env):
    target = ("from hsi.training.lightning_cli import HSICLI as CLI" if hsi_cli else
              "from lightning.pytorch.cli import LightningCLI\n"
              "from hsi.data import HSIDataModule\nfrom hsi.training import HSIClassifier\n"
              "CLI = lambda: LightningCLI(HSIClassifier, HSIDataModule)")
    code = f"{target}\nCLI()\n"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def test_fit_then_test_and_predict_from_the_checkpoint_alone(tmp_path):
    import os

    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", MPLBACKEND="Agg")
    (tmp_path / "run.yaml").write_text(CONFIG)
    fit = run_cli(tmp_path, ["fit", "--config", "run.yaml"], hsi_cli=False, env=env)  # plain LightningCLI
    assert fit.returncode == 0, fit.stderr[-3000:]
    ckpt = tmp_path / "ckpt" / "last.ckpt"
    hparams = torch.load(ckpt, map_location="cpu", weights_only=False)["hyper_parameters"]
    # the task took its shape from the data and its schedule from the trainer, and recorded them
    assert (hparams["num_bands"], hparams["num_classes"], hparams["patch_size"], hparams["max_epochs"]) == (8, 3, 5, 1)
    assert len(hparams["class_names"]) == 3

    other = tmp_path / "elsewhere"  # no YAML, no cache: the data arguments come from the checkpoint
    other.mkdir()
    test = run_cli(other, ["test", "--ckpt_path", str(ckpt), "--trainer.logger", "false",
                           "--trainer.default_root_dir", "test"], hsi_cli=True, env=env)
    assert test.returncode == 0, test.stderr[-3000:]
    assert "test_oa" in test.stdout

    predict = run_cli(other, ["predict", "--ckpt_path", str(ckpt), "--trainer.logger", "false",
                              "--trainer.default_root_dir", "predict",
                              "--trainer.callbacks+=hsi.training.PredictionWriter",
                              "--trainer.callbacks.output_dir=preds"], hsi_cli=True, env=env)
    assert predict.returncode == 0, predict.stderr[-3000:]
    saved = np.load(other / "preds" / "predictions.npz")
    n = len(saved["rows"])
    assert n > 0 and saved["probs"].shape == (n, 3) and set(saved["y_pred"]) <= {1, 2, 3}
    assert (saved["labels"] >= 1).all()  # the test split: labeled pixels, numbered as the maps number them
    class_map = np.load(other / "preds" / "labels.npy")
    assert class_map.shape == (24, 24)
    np.testing.assert_array_equal(class_map[saved["rows"], saved["cols"]], saved["y_pred"])
