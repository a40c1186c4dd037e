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

import yaml

from hsi._checks import did_you_mean
from hsi.cli.options import OptionSpec, add_options, yaml_value

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


def read_config(path: Path, specs: dict[str, OptionSpec]) -> dict[str, Any]:
    """Option values from a YAML file, checked and converted like the command line's."""
    from hsi.cli import UsageError

    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except FileNotFoundError:
        raise UsageError(f"--config: {str(path)!r}: file not found") from None
    except (OSError, yaml.YAMLError) as err:
        raise UsageError(f"--config: {str(path)!r}: not a readable YAML file ({err})") from None
    if not isinstance(data, dict):
        raise UsageError(f"--config: {str(path)!r}: expected a mapping of option names to values, found {type(data).__name__}")
    by_param = {s.param: s for s in specs.values()}
    values = {}
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        spec = specs.get(key) or by_param.get(key)
        if spec is None:
            hint = did_you_mean(key, sorted(specs))
            raise UsageError(f"--config: {str(path)!r}: unknown option {raw_key!r}{hint} (options: {', '.join(sorted(specs))})")
        try:
            values[spec.name] = yaml_value(spec, value)
        except argparse.ArgumentTypeError as err:
            raise UsageError(f"{path}: {spec.name}: {err}") from None
    return values


def make_config(args: argparse.Namespace):
    """The :class:`TrainConfig` of the parsed arguments (YAML file underneath, command line on top)."""
    from hsi.training.config import TrainConfig
    from hsi.training.options import RunOptions

    groups = option_groups()
    specs = {s.name: s for group in groups.values() for s in group}
    given = {k: v for k, v in vars(args).items() if k in specs}
    if getattr(args, "config", None) is not None:
        given = {**read_config(args.config, specs), **given}
    parts: dict[str, dict[str, Any]] = {}
    for group, group_specs in groups.items():
        parts[group] = {s.param: given[s.name] for s in group_specs if s.name in given}
    return TrainConfig(data=parts["data"], model=parts["model"], run=RunOptions(**parts["run"]),
                       given_run=set(parts["run"]))


def run(args: argparse.Namespace) -> int:
    """Train, then print the per-class table and where the outputs are."""
    from hsi.errors import DatasetNotFoundError
    from hsi.training.run import run_training

    cfg = make_config(args)
    try:
        metrics = run_training(cfg)
    except DatasetNotFoundError as err:
        if cfg.data.get("download") or cfg.data.get("cube_path"):  # --download cannot fetch the user's own files
            raise
        raise DatasetNotFoundError(f"{err} (add --download to fetch them)") from err
    if metrics:
        print()
        print(metrics["summary"])
        fit = metrics.get("timing", {}).get("fit_s")
        best = f"best epoch {metrics['best_epoch']}, " if metrics.get("best_epoch") is not None else ""
        pretrain, refit = metrics.get("pretrain") or {}, metrics.get("refit") or {}
        if pretrain.get("applied"):
            best += f"spectral path started from a per-pixel fit (train OA {100 * pretrain['train_oa']:.2f} %), "
        if refit.get("applied"):
            best += (f"classifier layer refit (val OA {100 * refit['val_oa_before']:.2f} -> "
                     f"{100 * refit['val_oa_after']:.2f} %), ")
        print(f"\n{best}fit {fit:.1f} s; outputs in {metrics['out']}" if fit is not None else f"\noutputs in {metrics['out']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``hsi train ...`` (what ``scripts/train.py`` runs)."""
    from hsi.cli import script_main

    return script_main("train", argv)


if __name__ == "__main__":
    sys.exit(main())
