"""``HSICLI``: ``LightningCLI`` for ``HSIClassifier`` + ``HSIDataModule`` that restores the data from a checkpoint.

Plain ``LightningCLI(HSIClassifier, HSIDataModule)`` already fits from a YAML that sets only
``data:`` and ``trainer:`` (the task takes its data shape from the DataModule and its
schedule from the trainer), and restores the *model's* arguments from ``--ckpt_path``.
``HSICLI`` also restores the *DataModule's* arguments stored in the checkpoint, so::

    python -m hsi.training.lightning_cli fit --config run.yaml
    python -m hsi.training.lightning_cli test --ckpt_path lightning_logs/version_0/checkpoints/last.ckpt
    python -m hsi.training.lightning_cli predict --ckpt_path ... \\
        --trainer.callbacks+=hsi.training.PredictionWriter --trainer.callbacks.output_dir=preds

need nothing but the checkpoint. The rule is that of ``hsi train --resume``
(:func:`hsi._roles.restore`): a given argument that changes what the checkpoint learned
from (its model, PCA, patch size, scene, ...) is an error naming both values, any other
given argument wins over the checkpoint's, and defaults never override it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import yaml
from lightning.pytorch.cli import LightningCLI

from hsi._roles import fixed_on_resume, restore
from hsi.data import HSIDataModule
from hsi.data.checkpoint import read_checkpoint
from hsi.errors import HSIError
from hsi.training.task import HSIClassifier

__all__ = ["HSICLI", "main"]


class HSICLI(LightningCLI):
    """``LightningCLI(HSIClassifier, HSIDataModule)`` whose ``--ckpt_path`` also restores the DataModule's arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("model_class", HSIClassifier)
        kwargs.setdefault("datamodule_class", HSIDataModule)
        super().__init__(*args, **kwargs)

    def parse_arguments(self, parser: Any, args: Any) -> None:
        """Parse, remembering which ``model``/``data`` arguments the user gave (on the command line or in a file)."""
        super().parse_arguments(parser, args)
        self._given = given_arguments(sys.argv[1:] if args is None else args)

    def _parse_ckpt_path(self) -> None:
        """Restore the ``model`` and ``data`` arguments from ``--ckpt_path`` by the rule of ``hsi train --resume``.

        Lightning's own version lets the checkpoint's model arguments win over every given
        one and leaves the data's alone; here both follow :func:`hsi._roles.restore`: a given
        value that contradicts the checkpoint in a fixed argument (model, PCA, patch size,
        scene, ...) is an error naming both values, and a default never overrides the checkpoint.
        """
        subcommand = self.config.get("subcommand")
        ckpt_path = self.config[subcommand].get("ckpt_path") if subcommand else None
        if not ckpt_path or not Path(str(ckpt_path)).is_file():
            return
        ckpt = read_checkpoint(ckpt_path, "ckpt_path")
        config = self.config[subcommand]
        for group, cls, key in (("model", HSIClassifier, "hyper_parameters"),
                                ("data", HSIDataModule, "datamodule_hyper_parameters")):
            current = config[group]
            saved = {k: v for k, v in (ckpt.get(key) or {}).items() if k in current}
            given = {k: current[k] for k in getattr(self, "_given", {}).get(group, ()) if k in current}
            for name, value in restore(saved, given, fixed_on_resume(cls), f"ckpt_path: {ckpt_path}").items():
                current[name] = value


def given_arguments(args: list[str]) -> dict[str, set[str]]:
    """``{"model": {...}, "data": {...}}``: the arguments named in ``args`` (``--data.pca 8``) or their config files.

    Config files (``--config``/``-c`` at any level, ``--data FILE``, ``--model FILE``) count
    with every key they set, so only what nobody wrote is taken from the checkpoint.
    """
    given: dict[str, set[str]] = {"model": set(), "data": set()}
    words = [str(a) for a in args]
    for i, word in enumerate(words):
        flag, _, inline = word.partition("=")
        value = inline or (words[i + 1] if i + 1 < len(words) else "")
        group, _, name = flag.lstrip("-").partition(".")
        if word.startswith("--") and group in given and name:
            given[group].add(name.split(".")[0])
        elif word.startswith("--") and group in given and value:
            given[group] |= set(_yaml_mapping(value))
        elif flag in ("--config", "-c") and value:
            config = _yaml_mapping(value)
            sections = [config, *(v for v in config.values() if isinstance(v, dict))]
            for section in sections:
                for group_name in given:
                    if isinstance(section.get(group_name), dict):
                        given[group_name] |= set(section[group_name])
    return given


def _yaml_mapping(path: str) -> dict[str, Any]:
    """The mapping in a YAML file (empty when it is not a readable file of one)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, ValueError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def main(args: list[str] | None = None) -> None:
    """``python -m hsi.training.lightning_cli {fit,validate,test,predict} ...`` (``args``: instead of ``sys.argv``).

    An expected failure (an ``HSIError``: a file that is not a checkpoint, another model's
    weights, ...) ends in one ``error:`` line and exit status 2, like ``hsi``'s commands.
    """
    try:
        HSICLI(args=args)
    except HSIError as err:
        if os.environ.get("HSI_TRACEBACK"):
            raise
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
