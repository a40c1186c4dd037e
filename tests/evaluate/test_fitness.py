"""Models that cannot run on the scene are found before any fold runs: skipped under ``all``, refused when named."""

from __future__ import annotations

import json

import pytest

from hsi.errors import OptionError
from hsi.evaluate.fitness import input_bands, runnable_models, unfit_reason

#: an 8-band scene: too few bands for hybridsn (13)
SCENE = ["--scene-options", "height=24", "width=24", "bands=8", "n_classes=3", "seed=1", "--patch-size", "5",
         "--block-size", "6", "--no-progress"]


def test_the_bands_a_network_reads_follow_removal_derivative_and_pca():
    assert input_bands({}, 20) == 20
    assert input_bands({"remove_bands": [0, 1, 1], "normalize": "derivative+l2"}, 20) == 17
    assert input_bands({"pca": 5}, 20) == 5 and input_bands({"pca": 0.99}, 20) == 20  # a fraction: not known yet


def test_a_network_too_big_for_the_scene_says_why_and_the_others_fit():
    why = unfit_reason("hybridsn", {"patch_size": 5}, {}, raw_bands=8, num_classes=3)
    assert why is not None and "HybridSN" in why and "num_bands" in why and "13" in why and "\n" not in why
    assert unfit_reason("spectral1d", {"patch_size": 5}, {}, raw_bands=8, num_classes=3) is None
    assert unfit_reason("svm", {}, {}, raw_bands=1, num_classes=3) is None
    assert unfit_reason("hybridsn", {"patch_size": 5}, {}, raw_bands=200, num_classes=3) is not None  # 9x9 at least
    assert unfit_reason("default", {}, {"model": "hybridsn"}, raw_bands=8, num_classes=3) is not None


def test_all_skips_the_unfit_in_one_warning_and_a_named_one_is_an_error():
    lines: list[str] = []
    reason = {"hybridsn": "HybridSN: num_bands must be >= 13", "cnn3d": "CNN3D: patch_size too small"}.get
    kept, skipped = runnable_models(("all",), ["spectral1d", "hybridsn", "cnn3d", "svm"], reason, lines.append)
    assert kept == ("spectral1d", "svm") and skipped == {"hybridsn": reason("hybridsn"), "cnn3d": reason("cnn3d")}
    assert lines == ["warning: --models all: 2 model(s) cannot run on this scene and are skipped: hybridsn "
                     "(HybridSN: num_bands must be >= 13); cnn3d (CNN3D: patch_size too small)"]
    with pytest.raises(OptionError, match=r"models: 'hybridsn': a model that can run on this scene: HybridSN"):
        runnable_models(("hybridsn", "all"), ["spectral1d", "hybridsn"], reason, lines.append)
    assert runnable_models(("svm",), ["svm"], reason, lines.append) == (("svm",), {})


def test_a_named_model_that_cannot_run_is_refused_before_any_fold(hsi_main, tmp_path):
    out = tmp_path / "ev"
    status, _, err = hsi_main(["evaluate", *SCENE, "--models", "svm", "hybridsn", "--folds", "2", "--out", str(out)],
                              tmp_path)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1, err
    assert lines[0].startswith("error: --models: hybridsn: a model that can run on this scene: HybridSN: num_bands")
    assert not (out / "runs").exists()


def test_all_on_a_scene_of_few_bands_skips_and_records_the_unfit_models(hsi_main, tmp_path, monkeypatch):
    import hsi.evaluate.running

    monkeypatch.setattr(hsi.evaluate.running, "known_models", lambda: ["spectral1d", "hybridsn"])  # a short "all"
    out = tmp_path / "ev"
    status, stdout, err = hsi_main(["evaluate", *SCENE, "--models", "all", "--folds", "2", "--epochs", "1",
                                    "--out", str(out)], tmp_path)
    assert status == 0, err
    warned = [line for line in err.splitlines() if line.startswith("warning: --models all")]
    assert len(warned) == 1 and "skipped: hybridsn (HybridSN: num_bands" in warned[0]
    assert "hybridsn seed" not in err  # no fold of it ran
    board = json.loads((out / "leaderboard.json").read_text())
    assert [row["model"] for row in board["rows"]] == ["spectral1d"]
    assert list(board["skipped"]) == ["hybridsn"] and "13" in board["skipped"]["hybridsn"]
    assert "skipped, cannot run on this scene: hybridsn: HybridSN" in (out / "leaderboard.md").read_text()


def test_a_fold_that_scored_nothing_gives_null_means_with_a_reason_and_readable_tables(tmp_path):
    """The evaluation side of a fold run whose test pixels were all of untrained classes (``oa`` null)."""
    import math

    from hsi._atomic import null_nonfinite, write_json_atomic
    from hsi.evaluate.leaderboard import summarize
    from hsi.evaluate.outputs import csv_text, markdown_table

    def fold(seed, k, oa):
        return {"seed": seed, "fold": k, "oa": oa, "aa": oa, "kappa": oa, "leak": 0, "per_class": {"a": oa},
                "seconds": 1.0, "run": f"runs/m/seed{seed}/fold{k}"}

    folds = [fold(0, 1, 0.9), fold(0, 2, None)]
    stats = summarize(folds)
    assert math.isnan(stats["oa_mean"]) and stats["per_class"] == {"a": 0.9}
    row = {"model": "m", **stats, "folds": folds}
    board = null_nonfinite({"scene": "s", "n_folds": 2, "block_size": 6, "seeds": [0], "class_names": ["a"],
                            "rows": [row]}, "a fold run scored no test pixel")
    assert board["rows"][0]["oa_mean"] is None and board["rows"][0]["oa_mean_reason"] == "a fold run scored no test pixel"
    assert "| m | n/a | n/a | n/a |" in markdown_table(board) and csv_text(board).startswith("model,")
    write_json_atomic(tmp_path / "leaderboard.json", board)  # strict JSON: would raise on a NaN
