"""HSIClassifier and HSIDataModule can be driven by Lightning's own LightningCLI, unchanged."""

from __future__ import annotations

import pytest
import yaml

pytest.importorskip("jsonargparse")

from lightning.pytorch.cli import LightningCLI  # noqa: E402

from hsi.data import HSIDataModule  # noqa: E402
from hsi.training import HSIClassifier  # noqa: E402


def test_yaml_config_builds_both_classes(tmp_path):
    config = {
        "model": {"model": "fcn", "num_bands": 12, "num_classes": 4, "patch_size": 7, "lr": 0.01,
                  "model_options": {"width": 16}, "class_names": ["a", "b", "c", "d"]},
        "data": {"scene": "synthetic", "scene_options": {"height": 40, "width": 40, "bands": 12, "n_classes": 4},
                 "patch_size": 7, "block_size": 10, "fractions": [0.5, 0.25, 0.25], "cache_dir": str(tmp_path / "cache")},
        "trainer": {"max_epochs": 1, "logger": False, "enable_checkpointing": False, "default_root_dir": str(tmp_path)},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    cli = LightningCLI(HSIClassifier, HSIDataModule, run=False, args=["--config", str(path)],
                       save_config_callback=None)
    assert isinstance(cli.model, HSIClassifier) and cli.model.hparams.model == "fcn"
    assert cli.model.net.num_bands == 12 and cli.model.class_names == ["a", "b", "c", "d"]
    dm = cli.datamodule
    assert isinstance(dm, HSIDataModule)
    assert tuple(dm.hparams.fractions) == (0.5, 0.25, 0.25) and dm.hparams.scene_options["height"] == 40
    # The parsed objects are the real thing: one batch goes through the network.
    dm.prepare_data()
    dm.setup("fit")
    x, y = next(iter(dm.train_dataloader()))
    assert cli.model(x).shape == (len(y), 4)
