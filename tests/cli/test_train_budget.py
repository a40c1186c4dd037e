"""``hsi train --train-per-class / --train-fraction / --val-budget``: refused when bad, recorded when run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cli.test_train_errors import no_scene_reads  # noqa: F401  (fixture)

BAD = [
    (["--train-per-class", "0"], "--train-per-class"),
    (["--train-per-class", "-4"], "--train-per-class"),
    (["--train-per-class", "2.5"], "--train-per-class"),
    (["--train-fraction", "0"], "--train-fraction"),
    (["--train-fraction", "-0.2"], "--train-fraction"),
    (["--train-fraction", "1.5"], "--train-fraction"),
    (["--train-per-class", "5", "--train-fraction", "0.1"], "--train-fraction"),
    (["--val-budget", "none"], "--val-budget"),  # a validation rule with no budget to apply it to
    (["--train-per-class", "5", "--val-budget", "half"], "--val-budget"),
]


@pytest.mark.parametrize(("args", "flag"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_bad_budget_is_one_error_line_naming_the_option(args, flag, hsi_main, tmp_path, no_scene_reads):  # noqa: F811
    status, _, err = hsi_main(["train", "--scene", "indian_pines", "--root", str(tmp_path), *args], tmp_path)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith(f"error: {flag}"), err
    assert list(tmp_path.iterdir()) == []


def _budget(out):
    return json.loads((out / "metrics.json").read_text())["split"]


def test_a_budgeted_run_records_the_budget_and_the_drawn_counts(hsi_main, tmp_path, tiny):
    status, _, err = hsi_main(["train", *tiny, "--epochs", "1", "--train-per-class", "5", "--out", "run"], tmp_path)
    assert status == 0, err
    split = _budget(tmp_path / "run")
    budget = split["budget"]
    assert budget["train_per_class"] == 5 and budget["val_budget"] == "same" and budget["seed"] == 0
    kept = [r["kept"] for r in budget["train"]]
    assert kept == [min(5, r["available"]) for r in budget["train"]] and split["train_pixels"] == sum(kept)
    assert split["val_pixels"] == sum(r["kept"] for r in budget["val"])
    status, _, err = hsi_main(["train", *tiny, "--epochs", "1", "--out", "whole"], tmp_path)
    whole = _budget(tmp_path / "whole")
    assert "budget" not in whole and whole["test_pixels"] == split["test_pixels"]  # the test blocks stay whole
    assert whole["train_pixels"] == sum(r["available"] for r in budget["train"])  # drawn from these, after the buffer


def test_no_validation_budget_keeps_the_last_epoch(hsi_main, tmp_path, tiny):
    status, _, err = hsi_main(["train", *tiny, "--epochs", "2", "--train-fraction", "0.1", "--val-budget", "none",
                               "--out", "run"], tmp_path)
    assert status == 0, err
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["split"]["val_pixels"] == 0 and metrics["split"]["budget"]["val"] is None
    assert metrics["best_epoch"] == metrics["epochs_trained"] == 2 and metrics["best_val_oa"] is None
    assert np.isfinite(metrics["oa"]) and metrics["refit"]["val_pixels"] == 0
