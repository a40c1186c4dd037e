"""Spatial k-fold cross-validation: compare models on a scene and write a leaderboard.

Examples:
  hsi evaluate --scene synthetic --out eval/synthetic
  hsi evaluate --scene samson --root data/samson --models default svm --folds 5 --seeds 0 1 2 --out eval/samson
  hsi evaluate --scene indian_pines --models default cnn2d svm --epochs 30 --random --out eval/ip
  hsi evaluate --scene indian_pines --models default svm --train-per-class 5 10 20 50 --out eval/ip-curve

Each labelled block of the block split is test exactly once: fold k of K is the run
`hsi train --folds K --fold k --buffer B` (its own validation blocks, preprocessing fitted on
its own training pixels). Every model trains, validates and is tested on the same pixels:
the buffer B is the one --buffer gives, else the largest any compared model needs (half the
widest patch read; svm and rf read one pixel), recorded in leaderboard.json. The data, model and run options are those of `hsi train` (model
options go to the networks, not to svm/rf). Run the same command again to resume an
interrupted evaluation: finished folds are reused, judged by their run.json manifests.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hsi.cli.options import OptionSpec, add_options

HELP = "spatial k-fold cross-validation of models on a scene; writes a leaderboard"

EPILOG = ("Writes into --out: leaderboard.json, leaderboard.md, leaderboard.csv, leaderboard.tex, comparison.json, "
          "comparison.md, per_class.png, runs/<model>/seed<s>/fold<k>/ (one hsi train folder per fold run) and "
          "evaluate.json (the manifest, written last). Several --train-per-class (or --train-fraction) values make a "
          "learning curve: the whole evaluation at each budget, in --out/per_class_<N>/ (fraction_<F>/), then "
          "learning_curve.json, .md, .csv and .png in --out. A value 'none' sets an option to None.")

#: options of ``hsi train`` an evaluation sets itself
_DATA_SET = ("fold",)
_MODEL_SET = ("model",)
_RUN_SET = ("seed", "out", "overwrite", "resume")


def option_groups() -> dict[str, list[OptionSpec]]:
    """The options of ``hsi evaluate``: those of ``hsi train`` it passes on, and its own (``evaluate``)."""
    from hsi.cli.options import option_specs
    from hsi.cli.table import table_specs
    from hsi.evaluate.options import EvaluateOptions

    return {
        "evaluate": option_specs(EvaluateOptions),
        "data": [_budgets_spec(s) for s in table_specs("train.data") if s.param not in _DATA_SET],
        "model": [s for s in table_specs("train.model") if s.param not in _MODEL_SET],
        "run": [s for s in table_specs("train.run") if s.param not in _RUN_SET],
    }


def _budgets_spec(spec: OptionSpec) -> OptionSpec:
    """A label budget's option takes one or more values here: several make a learning curve
    (:mod:`hsi.evaluate.curve`); any other option as ``hsi train`` has it."""
    from dataclasses import replace

    element = {"train_per_class": int, "train_fraction": float}.get(spec.param)
    if element is None:
        return spec
    return replace(spec, annotation=tuple[element, ...] | None,
                   help=spec.help + " Several values: a learning curve, the whole evaluation at each budget.")


def FLAGS() -> dict[str, str]:  # noqa: N802 - read by hsi.cli.run_command
    """Python argument name -> flag, for error messages."""
    return {spec.param: spec.flag for specs in option_groups().values() for spec in specs}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every option of ``hsi evaluate``."""
    from hsi.evaluate.options import DEFAULT_FOLDS

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = __doc__.split("\n\nEach")[0]
    parser.epilog = EPILOG
    titles = {"evaluate": "evaluation", "data": "data (HSIDataModule)", "model": "model (HSIClassifier, networks only)",
              "run": "run (each fold run)"}
    for group, specs in option_groups().items():
        add_options(parser.add_argument_group(titles[group]), specs, defaults={"folds": DEFAULT_FOLDS})


def checked_parts(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The given options by group, checked before torch is imported: the evaluation's own options (the model names
    against the option table's list), each data, model and run value's declared rule, the data options' combinations (with the folds the evaluation runs) and the
    input files (:mod:`hsi.cli.early`)."""
    from hsi.cli.early import check_data, check_files
    from hsi.cli.names import model_names
    from hsi.cli.options import check_values
    from hsi.evaluate.curve import check_budgets
    from hsi.evaluate.folds import check_models
    from hsi.evaluate.options import DEFAULT_FOLDS, EvaluateOptions, check_split

    given = vars(args)
    groups = option_groups()
    parts = {group: {s.param: given[s.name] for s in specs if s.name in given} for group, specs in groups.items()}
    options = EvaluateOptions(**parts["evaluate"])
    check_models(options.model_names, model_names(classical=True))
    check_split(parts["data"])
    check_values(groups["model"] + groups["run"], given)
    folds = parts["data"].get("folds")
    budget, values = check_budgets(parts["data"])
    if budget is not None:  # the rules and combinations judged at one budget; a curve runs each
        given = {**given, budget: values[0]}
        parts["data"][budget] = values if len(values) > 1 else values[0]
    check_data(groups["data"], given, set_here={"folds": DEFAULT_FOLDS if folds is None else folds, "fold": 1})
    check_files({k: v for k, v in given.items() if k in {s.name for s in groups["data"]}},
                {s.name: s for s in groups["data"]})
    return parts


def make_config(args: argparse.Namespace):
    """The :class:`~hsi.evaluate.running.EvaluationConfig` of the parsed arguments (checked first, without torch)."""
    parts = checked_parts(args)
    from hsi.evaluate.options import EvaluateOptions
    from hsi.evaluate.running import EvaluationConfig

    return EvaluationConfig(data=parts["data"], model=parts["model"], run=parts["run"],
                            options=EvaluateOptions(**parts["evaluate"]))


def run(args: argparse.Namespace) -> int:
    """Run the evaluation, then print the leaderboard and where the outputs are."""
    config = make_config(args)
    from hsi.evaluate.curve import check_budgets, curve_markdown, run_learning_curve
    from hsi.evaluate.outputs import markdown_table
    from hsi.evaluate.running import run_evaluation

    if len(check_budgets(config.data)[1]) > 1:
        curve = run_learning_curve(config)
        print()
        print(curve_markdown(curve))
        print(f"outputs in {curve['out']} (each budget's leaderboard in its folder there)")
        return 0
    board = run_evaluation(config)
    print()
    print(markdown_table(board))
    print(f"\noutputs in {board['out']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``hsi evaluate ...``."""
    from hsi.cli import script_main

    return script_main("evaluate", argv)


if __name__ == "__main__":
    sys.exit(main())
