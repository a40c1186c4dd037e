"""The transformer baselines and anyband through LightningCLI and a two-process DDP run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from tests.helpers import CHILD_TIMEOUT

pytest.importorskip("jsonargparse")

SCENE = {"height": 32, "width": 32, "bands": 12, "n_classes": 3, "seed": 1}


# ssftt and spectralformer_pixel differ from these two only in layers: hsi train runs every model (train = infer)
@pytest.mark.parametrize(("model", "patch"), [("spectralformer", 5), ("anyband", 5)])
def test_lightning_cli_fits_each_new_model_with_the_shape_from_the_data(model, patch, tmp_path):
    from lightning.pytorch.cli import LightningCLI

    from hsi.data import HSIDataModule
    from hsi.training import HSIClassifier

    config = {"model": {"model": model},
              "data": {"scene": "synthetic", "scene_options": SCENE, "patch_size": patch, "block_size": 8,
                       "cache_dir": str(tmp_path / "cache")},
              "trainer": {"max_epochs": 1, "limit_train_batches": 2, "limit_val_batches": 1, "logger": False,
                          "enable_checkpointing": False, "enable_progress_bar": False, "enable_model_summary": False,
                          "default_root_dir": str(tmp_path)}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    torch.manual_seed(0)
    cli = LightningCLI(HSIClassifier, HSIDataModule, args=["fit", "--config", str(path)], save_config_callback=None)
    assert cli.trainer.state.finished and cli.trainer.global_step == 2
    assert cli.model.hparams.num_bands == 12 and cli.model.net.patch_size == patch
    wavelengths = (cli.model.hparams.model_options or {}).get("wavelengths")
    assert (wavelengths is not None) == (model == "anyband")  # only the wavelength-aware network gets them


@pytest.mark.slow
def test_a_two_process_ddp_run_of_anyband_builds_the_same_network_on_both_ranks(tmp_path):
    out = tmp_path / "ddp"
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    args = ["train", "--scene", "synthetic", "--scene-options", *(f"{k}={v}" for k, v in SCENE.items()),
            "--model", "anyband", "--block-size", "8", "--epochs", "1", "--no-progress", "--accelerator", "cpu",
            "--devices", "2", "--strategy", "ddp", "--out", str(out)]
    proc = subprocess.run([sys.executable, "-m", "hsi", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    saved = torch.load(out / "best.ckpt", weights_only=False)["hyper_parameters"]["model_options"]
    assert len(saved["wavelengths"]) == 12 and metrics["model"] == "anyband"
    assert metrics["config"]["data"]["scaling"] == "standardize"  # the registry's recommendation
    assert Path(out / "predictions.npz").is_file()
