"""Train a hyperspectral classifier on a scene and report OA / AA / kappa.

Examples:
  hsi train --scene indian_pines
  hsi train --scene synthetic --model hybridsn --pca 30 --epochs 20
  hsi train --cube my_cube.hdr --labels my_gt.mat --labels-key gt
  hsi train --scene samson --root data/samson --scene-options purity=0.8
  hsi train --config experiment.yaml --seed 3
  hsi train --resume runs/<run>/last.ckpt --epochs 60

Every option can also be set in the YAML file of --config (names with _ or -); the command
line wins. The flags are generated from the arguments of hsi.data.HSIDataModule (data),
hsi.training.HSIClassifier (model) and hsi.training.options.RunOptions (run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from hsi.cli.options import OptionSpec, add_options

HELP = "train a model on a scene; writes checkpoints, metrics.json and figures"

EPILOG = ("Writes into --out: best.ckpt, last.ckpt, metrics.json, predictions.npz, confusion.png, curves.png, "
          "split.png, logs/ and run.json (the manifest, written last). A value 'none' sets an option to None.")


def option_groups() -> dict[str, list[OptionSpec]]:
    """The options of ``hsi train``, by what they configure (``data``, ``model``, ``run``).

    Read from the checked-in table (:mod:`hsi.cli.table`), which imports neither torch nor
    Lightning; a test keeps the table equal to the signatures (:func:`hsi.cli.table.live_specs`).
    """
    from hsi.cli.table import table_specs

    return {group: table_specs(f"train.{group}") for group in ("data", "model", "run")}


def FLAGS() -> dict[str, str]:  # noqa: N802 - read by hsi.cli.run_command
    """Python argument name -> flag, for error messages."""
    return {spec.param: spec.flag for specs in option_groups().values() for spec in specs}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every option of ``hsi train``, plus ``--config``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = __doc__.split("\n\nEvery")[0]
    parser.epilog = EPILOG
    parser.add_argument("--config", type=Path, default=argparse.SUPPRESS,
                        help="YAML file with any of the options below (names with _ or -)")
    titles = {"data": "data (HSIDataModule)", "model": "model (HSIClassifier)", "run": "run"}
    for group, specs in option_groups().items():
        add_options(parser.add_argument_group(titles[group]), specs)


def checked_values(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The given options by group (``data``, ``model``, ``run``; ``--config`` underneath the command line), each
    value checked by its declared rule, the data options' combinations and every input file checked too.

    Imports no torch: ``hsi train --patch-size 4`` or a missing ``--cube`` fails here, at once, with the
    library's own message.
    """
    from hsi.cli.early import check_data, check_files, check_models_pca, given_values
    from hsi.cli.options import check_values

    groups = option_groups()
    specs = {s.name: s for group in groups.values() for s in group}
    given, from_config = given_values(args, specs)
    check_values(groups["model"] + groups["run"], given)
    check_data(groups["data"], given, resuming=given.get("resume") is not None)
    check_files(given, specs, from_config, getattr(args, "config", None))
    check_models_pca([given.get("model")], given.get("pca"))
    return {group: {s.param: given[s.name] for s in group_specs if s.name in given}
            for group, group_specs in groups.items()}


def make_config(args: argparse.Namespace):
    """The :class:`TrainConfig` of the parsed arguments (YAML file underneath, command line on top), checked first
    (:func:`checked_values`, before torch is imported)."""
    parts = checked_values(args)
    from hsi.training.config import TrainConfig
    from hsi.training.options import RunOptions

    return TrainConfig(data=parts["data"], model=parts["model"], run=RunOptions(**parts["run"]),
                       given_run=set(parts["run"]))


def run(args: argparse.Namespace) -> int:
    """Train, then print the per-class table and where the outputs are."""
    cfg = make_config(args)
    from hsi.errors import DatasetNotFoundError
    from hsi.training.run import run_training

    try:
        metrics = run_training(cfg)
    except DatasetNotFoundError as err:  # a registry scene's files: the fix in this command's words (--download)
        command_line = getattr(err, "command_line", None)  # the user's own files have no other words
        if command_line is None:
            raise
        raise DatasetNotFoundError(command_line) from err
    if metrics:
        print()
        print(metrics["summary"])
        fit = metrics.get("timing", {}).get("fit_s")
        best = f"best epoch {metrics['best_epoch']}, " if metrics.get("best_epoch") is not None else ""
        pretrain, refit, ssl = metrics.get("pretrain") or {}, metrics.get("refit") or {}, metrics.get("ssl") or {}
        if ssl.get("applied"):
            best += (f"encoder {ssl['reason']}, " if ssl.get("steps") == 0 else
                     f"encoder pretrained self-supervised ({ssl['steps']} steps, loss {ssl['loss_start']:.3g} -> "
                     f"{ssl['loss_end']:.3g}, {ssl['seconds']:.0f} s), ")
        if pretrain.get("applied"):
            best += f"spectral path started from a per-pixel fit (train OA {100 * pretrain['train_oa']:.2f} %), "
        if refit.get("val_oa_before") is not None:  # a refit was made and judged: say which layer was kept
            change = f"val OA {100 * refit['val_oa_before']:.2f} -> {100 * refit['val_oa_after']:.2f} %"
            best += (f"classifier layer refit ({change}), " if refit.get("kept", "refit") == "refit" else
                     f"classifier layer refit not kept ({change}; trained layer kept), ")
        print(f"\n{best}fit {fit:.1f} s; outputs in {metrics['out']}" if fit is not None else f"\noutputs in {metrics['out']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``hsi train ...`` (what ``scripts/train.py`` runs)."""
    from hsi.cli import script_main

    return script_main("train", argv)


if __name__ == "__main__":
    sys.exit(main())
