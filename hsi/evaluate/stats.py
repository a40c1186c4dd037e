"""The paired comparison of every model with the best one of the leaderboard.

For each model the fold runs are paired with the best model's by (seed, fold): the same test
pixels. Two tests, both two-sided:

- **Wilcoxon signed-rank** (``scipy.stats.wilcoxon``) on the per-fold OA differences. With n
  pairs its smallest possible p-value is ``2 / 2**n``, so with fewer than :data:`MIN_PAIRS` (6)
  pairs it cannot reach 0.05: then it is not run and the verdict says the folds are too few to
  conclude.
- **McNemar** (exact binomial form, ``scipy.stats.binomtest``) on the pooled test pixels of every
  fold: ``b`` pixels only the best model gets right, ``c`` only the other. Neighbouring pixels are
  correlated, so its p-value overstates the evidence; read it beside the Wilcoxon verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["ALPHA", "MIN_PAIRS", "compare", "paired"]

#: significance level of the verdicts
ALPHA = 0.05
#: fewest pairs with which a two-sided Wilcoxon signed-rank test can reach p < 0.05 (2 / 2**6 = 0.031)
MIN_PAIRS = 6


def _correct(out: Path, entry: dict[str, Any]) -> dict[tuple[int, int], bool]:
    """``{(row, col): predicted right}`` of one fold run's test pixels (its ``predictions.npz``)."""
    with np.load(out / entry["run"] / "predictions.npz") as npz:
        right = npz["y_true"] == npz["y_pred"]
        return dict(zip(zip(npz["rows"].tolist(), npz["cols"].tolist()), right.tolist()))


def _mcnemar(out: Path, best: list[dict[str, Any]], other: list[dict[str, Any]]) -> dict[str, Any]:
    from scipy.stats import binomtest

    b = c = 0
    for eb, eo in zip(best, other):
        rb, ro = _correct(out, eb), _correct(out, eo)
        for pixel, right in rb.items():
            if pixel in ro:
                b += int(right and not ro[pixel])
                c += int(ro[pixel] and not right)
    p = 1.0 if b + c == 0 else float(binomtest(min(b, c), b + c, 0.5).pvalue)
    return {"only_best_right": b, "only_model_right": c, "p": p}


def _wilcoxon(diffs: np.ndarray) -> dict[str, Any]:
    from scipy.stats import wilcoxon

    n = int(diffs.size)
    if n < MIN_PAIRS:
        return {"p": None, "note": f"too few folds to conclude: {n} paired fold runs; a two-sided Wilcoxon "
                                   f"signed-rank test needs at least {MIN_PAIRS} to reach p < {ALPHA}"}
    if not np.any(diffs):
        return {"p": 1.0, "note": "every fold gives the same OA"}
    return {"p": float(wilcoxon(diffs).pvalue), "note": ""}


def _verdict(name: str, best: str, wil: dict[str, Any], mean_diff: float) -> str:
    if wil["p"] is None:
        return f"{best} vs {name}: {wil['note']}"
    if wil["p"] < ALPHA:
        return f"{best} is better than {name} (Wilcoxon p = {wil['p']:.3g}, mean OA difference {100 * mean_diff:.2f} points)"
    return f"no significant difference between {best} and {name} (Wilcoxon p = {wil['p']:.3g})"


def paired(out: Path, best: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """The comparison of ``row`` with the ``best`` row: per-fold differences, Wilcoxon, McNemar, verdict."""
    by_key = {(e["seed"], e["fold"]): e for e in best["folds"]}
    # the same test pixels, each scored (a fold run that scored none has OA null: nothing to compare)
    pairs = [(by_key[(e["seed"], e["fold"])], e) for e in row["folds"] if (e["seed"], e["fold"]) in by_key
             and e["oa"] is not None and by_key[(e["seed"], e["fold"])]["oa"] is not None]
    diffs = np.array([eo["oa"] - eb["oa"] for eb, eo in pairs], dtype=np.float64)
    wil = _wilcoxon(-diffs)
    return {
        "model": row["model"], "best": best["model"],
        "differences": [{"seed": eo["seed"], "fold": eo["fold"], "oa_difference": float(d)}
                        for (_, eo), d in zip(pairs, diffs)],
        "mean_oa_difference": float(diffs.mean()) if diffs.size else 0.0,
        "folds_better_than_best": int((diffs > 0).sum()), "folds_worse_than_best": int((diffs < 0).sum()),
        "wilcoxon": wil,
        "mcnemar": _mcnemar(out, [eb for eb, _ in pairs], [eo for _, eo in pairs]),
        "verdict": _verdict(row["model"], best["model"], wil, float(-diffs.mean()) if diffs.size else 0.0),
    }


def compare(out: Path, board: dict[str, Any]) -> dict[str, Any]:
    """Every row of ``board`` but the best, compared with the best (``out``: the evaluation's folder)."""
    rows = board["rows"]
    return {"best": rows[0]["model"], "alpha": ALPHA,
            "comparisons": [paired(out, rows[0], row) for row in rows[1:]]}
