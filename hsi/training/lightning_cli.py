"""``HSICLI``: ``LightningCLI`` for ``HSIClassifier`` + ``HSIDataModule`` that restores the data from a checkpoint.

Plain ``LightningCLI(HSIClassifier, HSIDataModule)`` already fits from a YAML that sets only
``data:`` and ``trainer:`` (the task takes its data shape from the DataModule and its
schedule from the trainer), and restores the *model's* arguments from ``--ckpt_path``.
``HSICLI`` also restores the *DataModule's* arguments stored in the checkpoint, so::

    python -m hsi.training.lightning_cli fit --config run.yaml
    python -m hsi.training.lightning_cli test --ckpt_path lightning_logs/version_0/checkpoints/last.ckpt
    python -m hsi.training.lightning_cli predict --ckpt_path ... \\
        --trainer.callbacks+=hsi.training.PredictionWriter --trainer.callbacks.output_dir=preds

need nothing but the checkpoint. An argument given on the command line or in a YAML file
wins over the checkpoint's.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from lightning.pytorch.cli import LightningCLI

from hsi.data import HSIDataModule
from hsi.data.checkpoint import read_checkpoint
from hsi.training.task import HSIClassifier

__all__ = ["HSICLI", "main"]


class HSICLI(LightningCLI):
    """``LightningCLI(HSIClassifier, HSIDataModule)`` whose ``--ckpt_path`` also restores the DataModule's arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("model_class", HSIClassifier)
        kwargs.setdefault("datamodule_class", HSIDataModule)
        super().__init__(*args, **kwargs)

    def before_instantiate_classes(self) -> None:
        """Fill the ``data`` arguments left at their defaults from the checkpoint's."""
        subcommand = self.config.get("subcommand")
        if not subcommand:
            return
        config = self.config[subcommand]
        ckpt_path = config.get("ckpt_path")
        if not ckpt_path or not Path(str(ckpt_path)).is_file():
            return
        saved = read_checkpoint(ckpt_path, "ckpt_path").get("datamodule_hyper_parameters") or {}
        defaults = {k: p.default for k, p in inspect.signature(HSIDataModule.__init__).parameters.items()}
        data = config["data"]
        for key, value in saved.items():
            if key in data and data[key] == defaults.get(key):
                data[key] = value


def main() -> None:
    """``python -m hsi.training.lightning_cli {fit,validate,test,predict} ...``."""
    HSICLI()


if __name__ == "__main__":
    main()
