"""Learning curves: the whole board at each of several label budgets, and OA against the budget.

``hsi evaluate --train-per-class 5 10 20 50`` (or ``--train-fraction 0.01 0.05``) runs the
evaluation once per budget, every model x fold x seed, each into its own folder
``<out>/per_class_<N>`` (``<out>/fraction_<F>``): a complete evaluation with its leaderboard,
paired tests and fold runs, whose ``metrics.json`` record the budget, so an interrupted curve
resumes fold by fold. Then, in ``<out>``:

- ``learning_curve.json``: per model, per budget, the mean and std OA over its fold runs
  (folds x seeds, the leaderboard's numbers), the number of runs and the mean training pixels
  (in all and per class);
- ``learning_curve.md`` and ``learning_curve.csv``: a row per model, a column per budget;
- ``learning_curve.png``: OA against the budget, a line per model, std as error bars;
- ``evaluate.json``: the manifest of these files, written last.

Budgets are positive and distinct, and sorted ascending everywhere.
"""

from __future__ import annotations

import csv
import io
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from hsi._checks import is_int
from hsi.errors import OptionError

__all__ = ["BUDGET_OPTIONS", "CURVE_OUTPUTS", "budget_folder", "check_budgets", "curve_csv", "curve_markdown",
           "learning_curve", "plot_learning_curve", "run_learning_curve"]

#: the DataModule arguments that set a label budget, and what each value means on the curve's axis
BUDGET_OPTIONS = {"train_per_class": "labelled training pixels per class",
                  "train_fraction": "share of each class's training pixels"}
#: the files of a learning curve's folder (each budget's evaluation in its own sub-folder)
CURVE_OUTPUTS = ("learning_curve.json", "learning_curve.md", "learning_curve.csv", "learning_curve.png",
                 "evaluate.json")
CURVE_FORMAT = "hsi.learning_curve"


def _valid(name: str, value: Any) -> bool:
    if name == "train_per_class":
        return is_int(value) and value >= 1
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 < value <= 1


def check_budgets(data: dict[str, Any]) -> tuple[str | None, tuple[Any, ...]]:
    """``(option, budgets)``: the budget option the DataModule arguments ``data`` give one or more values of (a
    single value or a sequence), and its values sorted ascending; ``(None, ())`` without a budget.

    Raises
    ------
    OptionError
        Both options are given, a value is not a positive integer (a share in (0, 1]), or one is repeated.
    """
    given = [k for k in BUDGET_OPTIONS if data.get(k) is not None]
    if not given:
        return None, ()
    if len(given) > 1:
        fraction = data["train_fraction"]
        raise OptionError("train_fraction", list(fraction) if isinstance(fraction, (list, tuple)) else fraction, "none when train_per_class is given (the two "
                          "budgets are exclusive)")
    name = given[0]
    raw = data[name]
    values = tuple(raw) if isinstance(raw, (list, tuple)) else (raw,)
    expected = ("one or more distinct integers >= 1" if name == "train_per_class"
                else "one or more distinct numbers in (0, 1]")
    if not values or not all(_valid(name, v) for v in values) or len(set(values)) != len(values):
        raise OptionError(name, list(values), expected)
    return name, tuple(sorted(values))


def budget_folder(name: str, value: Any) -> str:
    """The sub-folder of one budget's evaluation: ``per_class_5``, ``fraction_0.1``."""
    return f"per_class_{value}" if name == "train_per_class" else f"fraction_{value:g}"


def _point(row: dict[str, Any], n_classes: int) -> dict[str, Any]:
    """One model's point of the curve at one budget: its leaderboard row's OA and the training pixels of its runs."""
    train = [f["train_pixels"] for f in row["folds"]]
    mean_train = sum(train) / len(train)
    return {"oa_mean": row["oa_mean"], "oa_std": row["oa_std"], "aa_mean": row["aa_mean"],
            "kappa_mean": row["kappa_mean"], "runs": len(row["folds"]), "train_pixels": mean_train,
            "train_pixels_per_class": mean_train / n_classes}


def learning_curve(name: str, budgets: dict[Any, dict[str, Any]]) -> dict[str, Any]:
    """``learning_curve.json`` of the leaderboards ``budgets`` (budget value -> ``leaderboard.json``) of option
    ``name``: per model, a point per budget (ascending; a model absent from a board has none there)."""
    values = sorted(budgets)
    first = budgets[values[0]]
    models = list(dict.fromkeys(row["model"] for v in values for row in budgets[v]["rows"]))
    curves = {m: {} for m in models}
    for value in values:
        board = budgets[value]
        for row in board["rows"]:
            curves[row["model"]][str(value)] = {"budget": value, **_point(row, len(board["class_names"]))}
    return {"format": CURVE_FORMAT, "format_version": 1, "scene": first["scene"], "budget": name,
            "axis": BUDGET_OPTIONS[name], "budgets": values, "n_folds": first["n_folds"], "seeds": first["seeds"],
            "buffers": {str(v): budgets[v].get("buffer") for v in values},
            "boards": {str(v): budget_folder(name, v) for v in values}, "models": curves}


def _cell(point: dict[str, Any] | None) -> str:
    if point is None or point["oa_mean"] is None:
        return "n/a"
    return f"{100 * point['oa_mean']:.1f} ± {100 * point['oa_std']:.1f}"


def curve_markdown(curve: dict[str, Any]) -> str:
    """The curve as a Markdown table: a row per model, a column per budget, OA % mean ± std."""
    values = curve["budgets"]
    lines = ["| model | " + " | ".join(str(v) for v in values) + " |", "|" + "---|" * (len(values) + 1)]
    for model, points in curve["models"].items():
        lines.append(f"| {model} | " + " | ".join(_cell(points.get(str(v))) for v in values) + " |")
    runs = max((p["runs"] for points in curve["models"].values() for p in points.values()), default=0)
    note = (f"{curve['scene']}: OA % (mean ± std over {runs} fold runs: {curve['n_folds']} folds x seeds "
            f"{', '.join(map(str, curve['seeds']))}) at each budget of {curve['budget']} ({curve['axis']}); each "
            "column is the leaderboard in its folder (" + ", ".join(curve["boards"].values()) + ").")
    return "\n".join(lines) + "\n\n" + note + "\n"


def curve_csv(curve: dict[str, Any]) -> str:
    """One line per model and budget: the OA mean and std, runs and training pixels."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["model", curve["budget"], "oa_mean", "oa_std", "runs", "train_pixels", "train_pixels_per_class"])
    for model, points in curve["models"].items():
        for p in points.values():
            writer.writerow([model, p["budget"], "" if p["oa_mean"] is None else f"{p['oa_mean']:.6f}",
                             "" if p["oa_std"] is None else f"{p['oa_std']:.6f}", p["runs"],
                             f"{p['train_pixels']:.2f}", f"{p['train_pixels_per_class']:.2f}"])
    return buf.getvalue()


def plot_learning_curve(curve: dict[str, Any], path: str | Path) -> Any:
    """``learning_curve.png``: OA % against the budget, a line per model, the std over its fold runs as error bars
    (a logarithmic axis: budgets usually grow geometrically), saved atomically."""
    from matplotlib.figure import Figure

    from hsi.training.report import save_figure_atomic

    fig = Figure(figsize=(7.5, 4), layout="constrained")
    ax = fig.add_subplot()
    for model, points in curve["models"].items():
        shown = [p for p in points.values() if p["oa_mean"] is not None]
        ax.errorbar([p["budget"] for p in shown], [100 * p["oa_mean"] for p in shown],
                    yerr=[100 * p["oa_std"] for p in shown], marker="o", capsize=3, label=model)
    ax.set_xscale("log")
    ax.set_xticks(curve["budgets"], [f"{v:g}" for v in curve["budgets"]])
    ax.minorticks_off()
    ax.set_xlabel(curve["axis"])
    ax.set_ylabel("OA % (mean ± std over fold runs)")
    ax.set_title(f"{curve['scene']}: learning curve, {curve['n_folds']}-fold spatial cross-validation")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, title="model")
    save_figure_atomic(fig, path)
    return fig


def _write_curve(out: Path, curve: dict[str, Any]) -> None:
    """Every learning-curve file, staged and committed into ``out`` (``evaluate.json`` last)."""
    from hsi import transaction
    from hsi._atomic import null_nonfinite, write_json_atomic
    from hsi.evaluate.outputs import COMMAND, EVALUATE_MANIFEST

    curve = null_nonfinite(curve, "a fold run scored no test pixel (its metrics.json says why)")
    with transaction.staged(out, manifest=EVALUATE_MANIFEST, outputs=CURVE_OUTPUTS, overwrite=True,
                            command=COMMAND) as staging:
        write_json_atomic(staging.path / "learning_curve.json", curve, indent=2)
        (staging.path / "learning_curve.md").write_text(curve_markdown(curve), encoding="utf-8")
        (staging.path / "learning_curve.csv").write_text(curve_csv(curve), encoding="utf-8")
        plot_learning_curve(curve, staging.path / "learning_curve.png")
        staging.commit({"scene": curve["scene"], "learning_curve": curve["budget"],
                        "boards": sorted(curve["boards"].values())})


def _budget_configs(config: Any, out: Path) -> tuple[str, list[tuple[Any, Any]]]:
    """The budget option and ``(value, EvaluationConfig)`` of each budget's evaluation (its data given that one
    value, its folder under ``out``), each folder checked before any work."""
    from hsi.evaluate.outputs import check_out

    name, values = check_budgets(config.data)
    configs = []
    for value in values:
        folder = out / budget_folder(name, value)
        check_out(folder)
        configs.append((value, replace(config, data={**config.data, name: value},
                                       options=replace(config.options, out=str(folder)))))
    return name, configs


def run_learning_curve(config: Any, log: Any = None) -> dict[str, Any]:
    """Run (or reuse) the evaluation ``config`` (:class:`~hsi.evaluate.running.EvaluationConfig`) at each budget its
    ``data`` gives (``train_per_class`` or ``train_fraction``: a sequence), then write the learning curve; returns
    it, with ``out`` and each budget's leaderboard under ``leaderboards``."""
    from hsi.evaluate.outputs import COMMAND, EVALUATE_MANIFEST
    from hsi.evaluate.running import check_config, run_evaluation
    from hsi.transaction import check_target

    name, values = check_budgets(config.data)
    if name is None:
        raise OptionError("train_per_class", None, "one or more label budgets for a learning curve")
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    # every option checked (at the first budget) before any folder is made; without --out, the default folder
    first = check_config(replace(config, data={**config.data, name: values[0]}))
    out = check_target(config.options.out or first, manifest=EVALUATE_MANIFEST, outputs=CURVE_OUTPUTS,
                       overwrite=True, command=COMMAND)
    name, configs = _budget_configs(config, out)
    boards = {}
    for value, sub in configs:
        log(f"label budget {name}={value:g}: {sub.options.out}")
        boards[value] = run_evaluation(sub, log)
    curve = learning_curve(name, boards)
    _write_curve(out, curve)
    return {**curve, "out": str(out), "leaderboards": boards}
