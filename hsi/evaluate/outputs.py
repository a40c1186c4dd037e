"""The files of an evaluation, written into a staging folder and committed together, ``evaluate.json`` last.

In the evaluation's folder:

- ``leaderboard.json`` (:mod:`hsi.evaluate.leaderboard`), ``leaderboard.md``, ``leaderboard.csv``
  and ``leaderboard.tex`` (a LaTeX ``tabular``);
- ``comparison.json`` and ``comparison.md``: every model against the best (:mod:`hsi.evaluate.stats`);
- ``per_class.png``: per-class accuracy, mean over the fold runs with std error bars;
- ``runs/``: the fold runs, each an ``hsi train`` folder with its own ``run.json``;
- ``evaluate.json``: the manifest of the files above (not of ``runs/``), written last.

The folder may be given again (that resumes): the files an earlier evaluation wrote there
are replaced, a file hsi did not write is refused (:mod:`hsi.transaction`).
"""

from __future__ import annotations

import csv
import io
import os
import time
from pathlib import Path
from typing import Any

from hsi import transaction
from hsi._atomic import null_nonfinite, write_json_atomic

__all__ = ["EVALUATE_MANIFEST", "EVALUATE_OUTPUTS", "check_out", "default_out", "markdown_table", "per_class_table",
           "write_outputs"]

EVALUATE_MANIFEST = "evaluate.json"
EVALUATE_OUTPUTS = ("leaderboard.json", "leaderboard.md", "leaderboard.csv", "leaderboard.tex", "comparison.json",
                    "comparison.md", "per_class.png", EVALUATE_MANIFEST)
COMMAND = "hsi evaluate"


def default_out(scene: str) -> str:
    """``evaluations/<scene>-<YYYYmmdd-HHMMSS>``."""
    return os.path.join("evaluations", f"{scene}-{time.strftime('%Y%m%d-%H%M%S')}")


def check_out(out: str | Path) -> Path:
    """The absolute output folder, checked before any work (a file in the way, a file hsi did not write)."""
    return transaction.check_target(out, manifest=EVALUATE_MANIFEST, outputs=EVALUATE_OUTPUTS, overwrite=True,
                                    command=COMMAND)


def _pm(stats: dict[str, Any], key: str) -> str:
    if stats[f"{key}_mean"] is None:  # a fold run scored no test pixel (null in leaderboard.json, with the reason)
        return "n/a"
    if key == "kappa":
        return f"{stats['kappa_mean']:.3f} ± {stats['kappa_std']:.3f}"
    return f"{100 * stats[f'{key}_mean']:.1f} ± {100 * stats[f'{key}_std']:.1f}"


def _maybe(value: float | None, spec: str) -> str:
    """``value`` formatted by ``spec``; blank for none (what a model has not: a classical one's parameters)."""
    return "" if value is None else format(value, spec)


def per_class_table(board: dict[str, Any]) -> str:
    """Each class, by the scene's name for it, and its accuracy % per model (mean ± std over the fold runs whose
    test split holds it; blank where none does)."""
    rows = board["rows"]
    lines = ["| class | " + " | ".join(row["model"] for row in rows) + " |", "|" + "---|" * (len(rows) + 1)]
    for name in board["class_names"]:
        cells = ["" if row["per_class"].get(name) is None else
                 f"{100 * row['per_class'][name]:.1f} ± {100 * (row['per_class_std'].get(name) or 0.0):.1f}"
                 for row in rows]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown_table(board: dict[str, Any]) -> str:
    """The leaderboard as a Markdown table (what ``hsi evaluate`` prints at the end)."""
    random = any("random" in row for row in board["rows"])
    head = ["model", "OA %", "AA %", "kappa", "leak", "params", "s/epoch", "test px/s", "s/fold"] + (
        ["random OA % (leaky)"] if random else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in board["rows"]:
        cells = [row["model"], _pm(row, "oa"), _pm(row, "aa"), _pm(row, "kappa"), str(row["leak"]),
                 _maybe(row.get("parameters"), ","), _maybe(row.get("epoch_s"), ".2f"), _maybe(row.get("pixels_per_s"), ",.0f"),
                 f"{row['seconds']:.1f}"]
        if random:
            cells.append(_pm(row["random"], "oa") if "random" in row else "")
        lines.append("| " + " | ".join(cells) + " |")
    runs = len(board["rows"][0]["folds"])
    buffer = "" if board.get("buffer") is None else f" with a {board['buffer']} px buffer shared by every model"
    note = (f"{board['scene']}: {board['n_folds']}-fold spatial cross-validation over {board['block_size']} px "
            f"blocks{buffer}{_budget_note(board)}, seeds {', '.join(map(str, board['seeds']))}: mean ± std over {runs} fold runs per model; leak = test "
            "pixels inside training patches (largest over the folds); params = trainable parameters; s/epoch = fit "
            "seconds per epoch; test px/s = test pixels classified per second (one process).")
    skipped = "".join(f"\n\nskipped, cannot run on this scene: {model}: {why}"
                      for model, why in (board.get("skipped") or {}).items())
    return "\n".join(lines) + "\n\n" + per_class_table(board) + "\n\n" + note + skipped


def _budget_note(board: dict[str, Any]) -> str:
    """``, 10 training pixels per class`` for a board run at a label budget (blank without one)."""
    data = (board.get("settings") or {}).get("data") or {}
    if data.get("train_per_class") is not None:
        budget = f"{data['train_per_class']} training pixels per class"
    elif data.get("train_fraction") is not None:
        budget = f"{data['train_fraction']:g} of each class's training pixels"
    else:
        return ""
    return f", {budget} (validation: {data.get('val_budget') or 'same'})"


def csv_text(board: dict[str, Any]) -> str:
    """One line per model: the means and stds, seconds, leak, then each class's mean accuracy."""
    names = board["class_names"]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["model", "oa_mean", "oa_std", "aa_mean", "aa_std", "kappa_mean", "kappa_std", "seconds", "leak",
                     "parameters", "epoch_s", "pixels_per_s", *names])
    for row in board["rows"]:
        writer.writerow([row["model"], *(_maybe(row[k], ".6f") for k in ("oa_mean", "oa_std", "aa_mean", "aa_std",
                                                                     "kappa_mean", "kappa_std")),
                         f"{row['seconds']:.3f}", row["leak"], _maybe(row.get("parameters"), "d"),
                         _maybe(row.get("epoch_s"), ".4f"), _maybe(row.get("pixels_per_s"), ".1f"), *("" if row["per_class"][n] is None else f"{row['per_class'][n]:.6f}" for n in names)])
    return buf.getvalue()


def _tex(text: str) -> str:
    return "".join("\\" + ch if ch in "&%$#_{}" else ch for ch in str(text))


def latex_table(board: dict[str, Any]) -> str:
    """A LaTeX ``tabular`` of OA, AA and kappa (mean $\\pm$ std), the best row in bold."""
    lines = ["\\begin{tabular}{lccc}", "\\hline", "Model & OA (\\%) & AA (\\%) & $\\kappa$ \\\\", "\\hline"]
    for i, row in enumerate(board["rows"]):
        cells = [_pm(row, k).replace("±", "$\\pm$") for k in ("oa", "aa", "kappa")]
        if i == 0:
            cells = [f"\\textbf{{{c}}}" for c in cells]
        lines.append(" & ".join([_tex(row["model"]), *cells]) + " \\\\")
    lines += ["\\hline", "\\end{tabular}", ""]
    caption = (f"% {board['scene']}: {board['n_folds']}-fold spatial cross-validation, seeds "
               f"{', '.join(map(str, board['seeds']))}; written by hsi evaluate")
    return caption + "\n" + "\n".join(lines)


def comparison_markdown(comparison: dict[str, Any]) -> str:
    """The verdicts and per-fold OA differences, one section per model."""
    lines = [f"# Paired comparison with the best model: {comparison['best']}", ""]
    if not comparison["comparisons"]:
        lines.append("Only one model: nothing to compare.")
    for c in comparison["comparisons"]:
        diffs = ", ".join(f"{100 * d['oa_difference']:+.2f}" for d in c["differences"])
        mc = c["mcnemar"]
        lines += [f"## {c['model']}", "", f"- {c['verdict']}",
                  f"- OA difference per fold run (points, {c['model']} minus {c['best']}): {diffs}; mean "
                  f"{100 * c['mean_oa_difference']:+.2f}",
                  f"- McNemar on the pooled test pixels: {mc['only_best_right']} right only with {c['best']}, "
                  f"{mc['only_model_right']} only with {c['model']}, p = {mc['p']:.3g} (pixels are spatially "
                  "correlated: this p-value overstates the evidence)", ""]
    return "\n".join(lines)


def write_outputs(out: Path, board: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    """Write every leaderboard file into a staging folder and commit it into ``out``; returns the comparison."""
    from hsi.evaluate.stats import compare
    from hsi.training.report import plot_per_class

    # a mean over a fold run that scored no test pixel is null, with the reason beside it: strict JSON
    board = null_nonfinite(board, "a fold run scored no test pixel (its metrics.json says why)")
    comparison = compare(out, board)
    with transaction.staged(out, manifest=EVALUATE_MANIFEST, outputs=EVALUATE_OUTPUTS, overwrite=True,
                            command=COMMAND) as staging:
        write_json_atomic(staging.path / "leaderboard.json", board, indent=2)
        write_json_atomic(staging.path / "comparison.json", comparison, indent=2)
        texts = {"leaderboard.md": markdown_table(board) + "\n", "leaderboard.csv": csv_text(board),
                 "leaderboard.tex": latex_table(board), "comparison.md": comparison_markdown(comparison)}
        for name, text in texts.items():
            (staging.path / name).write_text(text, encoding="utf-8")
        plot_per_class(board, staging.path / "per_class.png")
        staging.commit({"scene": board["scene"], "models": [r["model"] for r in board["rows"]],
                        "runs": sorted({r.job.folder.as_posix() for r in results})})
    return comparison
