"""Pretrain a network's encoder self-supervised on every pixel of a scene and write it to a file.

Examples:
  hsi pretrain --scene samson --root data/samson --out samson-encoder.pt
  hsi train --scene samson --root data/samson --train-per-class 10 --init samson-encoder.pt
  hsi pretrain --scene synthetic --ssl-steps 2000 --ssl-exclude-test --out synthetic-encoder.pt

Masked centre modelling (hsi.training.selfsup): each pixel's spectrum is masked and the encoder
learns to reconstruct it from its neighbourhood; no label is read. Give hsi train --init the same
data options, so that it preprocesses the scene as the encoder saw it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from hsi.cli.options import OptionSpec, add_options

HELP = "pretrain a network's encoder on a scene's unlabelled pixels (self-supervised); writes an encoder file"

#: the options of hsi train's model and run groups that pretraining reads
MODEL_OPTIONS = ("model", "model_options", "ssl_steps", "ssl_exclude_test")
RUN_OPTIONS = ("seed", "threads", "overwrite")


def option_groups() -> dict[str, list[OptionSpec]]:
    """The options of ``hsi pretrain``: ``hsi train``'s data options and the few model and run options it reads."""
    from hsi.cli.table import table_specs

    return {"data": table_specs("train.data"),
            "model": [s for s in table_specs("train.model") if s.param in MODEL_OPTIONS],
            "run": [s for s in table_specs("train.run") if s.param in RUN_OPTIONS]}


def FLAGS() -> dict[str, str]:  # noqa: N802 - read by hsi.cli.run_command
    """Python argument name -> flag, for error messages."""
    return {spec.param: spec.flag for specs in option_groups().values() for spec in specs}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--out`` and the options of :func:`option_groups`."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = __doc__
    parser.add_argument("--out", type=Path, required=True, help="the encoder file to write (hsi train --init reads it)")
    titles = {"data": "data (as hsi train)", "model": "model", "run": "run"}
    for group, specs in option_groups().items():
        add_options(parser.add_argument_group(titles[group]), specs)


def checked_parts(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The given options by group, checked by their rules and the data options' combinations (no torch yet)."""
    from hsi.cli.early import check_data, check_files, given_values
    from hsi.cli.options import check_values

    groups = option_groups()
    specs = {s.name: s for group in groups.values() for s in group}
    given, _ = given_values(args, specs)
    check_values(groups["model"] + groups["run"], given)
    check_data(groups["data"], given)
    check_files(given, specs)
    return {group: {s.param: given[s.name] for s in group_specs if s.name in given}
            for group, group_specs in groups.items()}


def run(args: argparse.Namespace) -> int:
    """Pretrain, write the encoder file, and say what the pretraining did."""
    parts = checked_parts(args)
    from hsi.training.pretrain_run import run_pretraining

    run_opts = parts["run"]
    report = run_pretraining(parts["data"], parts["model"], args.out, seed=int(run_opts.get("seed", 0)),
                             threads=run_opts.get("threads", 1), overwrite=bool(run_opts.get("overwrite", False)))
    print(f"{report['model']} encoder pretrained by {report['method']} on {report['pixels']:,} pixels "
          f"({report['steps']} steps, reconstruction loss {report['loss_start']:.4g} -> {report['loss_end']:.4g}, "
          f"{report['seconds']:.0f} s); written to {report['out']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``hsi pretrain ...``."""
    from hsi.cli import script_main

    return script_main("pretrain", argv)


if __name__ == "__main__":
    sys.exit(main())
