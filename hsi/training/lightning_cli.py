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

import copy
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
    """``LightningCLI(HSIClassifier, HSIDataModule)`` whose ``--ckpt_path`` also restores the DataModule's arguments.

    Built on LightningCLI's public hooks only: :meth:`parse_arguments` reads the checkpoint
    (so a file that is not an hsi checkpoint is refused with hsi's message, before Lightning
    opens it) and works out the ``model`` and ``data`` arguments by the rule of
    ``hsi train --resume``; :meth:`before_instantiate_classes` puts them in the config,
    over whatever Lightning itself restored from ``--ckpt_path`` meanwhile (its rule lets the
    checkpoint's model arguments win over every given one and leaves the data's alone).
    ``ckpt_path`` stays in the config, so the trainer loads the weights as usual.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("model_class", HSIClassifier)
        kwargs.setdefault("datamodule_class", HSIDataModule)
        super().__init__(*args, **kwargs)

    def parse_arguments(self, parser: Any, args: Any) -> None:
        """Parse, then work out the ``model``/``data`` arguments a ``--ckpt_path`` restores (:attr:`hsi_restored`)."""
        super().parse_arguments(parser, args)
        given = given_arguments(sys.argv[1:] if args is None else args)
        subcommand = self.config.get("subcommand")
        ckpt_path = self.config[subcommand].get("ckpt_path") if subcommand else None
        self.hsi_restored: dict[str, dict[str, Any]] = {}
        if ckpt_path and Path(str(ckpt_path)).is_file():
            self.hsi_restored = restored_arguments(self.config[subcommand], given, str(ckpt_path))

    def before_instantiate_classes(self) -> None:
        """Set the ``model`` and ``data`` arguments restored from ``--ckpt_path`` (see :func:`restored_arguments`)."""
        subcommand = self.config.get("subcommand")
        for group, arguments in getattr(self, "hsi_restored", {}).items():
            for name, value in arguments.items():
                self.config[subcommand][group][name] = value


def restored_arguments(config: Any, given: dict[str, set[str]], ckpt_path: str) -> dict[str, dict[str, Any]]:
    """``{"model": {...}, "data": {...}}``: every argument of the two groups, restored from ``ckpt_path``.

    Both follow :func:`hsi._roles.restore`: a given value that contradicts the checkpoint in a
    fixed argument (model, PCA, patch size, scene, ...) is an error naming both values, any
    other given value wins, and a default never overrides the checkpoint.

    Raises
    ------
    CheckpointError
        ``ckpt_path`` is not an hsi checkpoint, or a given fixed argument contradicts it.
    """
    ckpt = read_checkpoint(ckpt_path, "ckpt_path")
    out = {}
    for group, cls, key in (("model", HSIClassifier, "hyper_parameters"),
                            ("data", HSIDataModule, "datamodule_hyper_parameters")):
        parsed = {name: copy.deepcopy(value) for name, value in dict(config[group]).items()}
        saved = {k: v for k, v in (ckpt.get(key) or {}).items() if k in parsed}
        chosen = {k: parsed[k] for k in given[group] if k in parsed}
        restored = restore(saved, chosen, fixed_on_resume(cls), f"ckpt_path: {ckpt_path}")
        out[group] = {name: restored.get(name, value) for name, value in parsed.items()}
    return out


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
