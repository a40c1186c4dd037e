"""Every YAML a run writes (Lightning's ``hparams.yaml``, LightningCLI's ``config.yaml``) reads back with
``yaml.safe_load``; the run's split figure takes the scene's palette."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

TINY = ["--scene", "synthetic", "--scene-options", "height=24", "width=24", "bands=8", "n_classes=3", "seed=1",
        "--model", "spectral1d", "--block-size", "6", "--epochs", "1", "--no-progress"]


def _safe_loaded(folder: Path, name: str) -> list[dict]:
    files = sorted(folder.rglob(name))
    assert files, f"no {name} under {folder}"
    return [yaml.safe_load(path.read_text(encoding="utf-8")) for path in files]


def test_datamodule_keeps_fractions_as_a_list():
    from hsi.data import HSIDataModule

    dm = HSIDataModule(scene="synthetic", fractions=(0.5, 0.25, 0.25))
    assert dm.hparams["fractions"] == [0.5, 0.25, 0.25]
    assert yaml.safe_load(yaml.dump(dict(dm.hparams)))["fractions"] == [0.5, 0.25, 0.25]


def test_hsi_train_writes_a_safe_loadable_hparams_yaml(tmp_path, monkeypatch, capsys):
    import hsi.viz
    from hsi.cli import main
    from hsi.scenes import make_synthetic_scene

    drawn = []  # the run's report draws split.png in the scene's palette (the one map.png uses)
    plot_split = hsi.viz.plot_split
    monkeypatch.setattr(hsi.viz, "plot_split", lambda *a, **kw: drawn.append(kw) or plot_split(*a, **kw))
    monkeypatch.chdir(tmp_path)
    assert main(["train", *TINY, "--fractions", "0.5", "0.25", "0.25", "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    (hparams,) = _safe_loaded(tmp_path / "run" / "logs", "hparams.yaml")
    assert hparams["fractions"] == [0.5, 0.25, 0.25]
    assert hparams["scene"] == "synthetic" and hparams["model"] == "spectral1d"
    scene = make_synthetic_scene(height=24, width=24, bands=8, n_classes=3, seed=1)
    assert len(drawn) == 1 and (drawn[0]["palette"] == scene.palette).all()


CONFIG = textwrap.dedent(
    """
    data:
      scene: synthetic
      scene_options: {height: 24, width: 24, bands: 8, n_classes: 3, seed: 1}
      patch_size: 3
      block_size: 6
    trainer:
      max_epochs: 1
      default_root_dir: out
      enable_progress_bar: false
      enable_model_summary: false
      logger:
        class_path: lightning.pytorch.loggers.CSVLogger
        init_args: {save_dir: out}
    """
)


def test_lightning_cli_config_and_hparams_are_safe_loadable(tmp_path, monkeypatch):
    pytest.importorskip("jsonargparse")
    from hsi.training.lightning_cli import HSICLI

    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text(CONFIG)
    HSICLI(args=["fit", "--config", "run.yaml"])
    (config,) = _safe_loaded(tmp_path / "out", "config.yaml")
    (hparams,) = _safe_loaded(tmp_path / "out", "hparams.yaml")
    assert list(config["data"]["fractions"]) == [0.6, 0.2, 0.2]
    assert hparams["fractions"] == [0.6, 0.2, 0.2]
