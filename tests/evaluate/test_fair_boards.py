"""Every model of a leaderboard trains, validates and is tested on the same pixels: one split buffer per board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SCENE = ["--scene-options", "height=30", "width=30", "bands=8", "n_classes=3", "seed=1", "--block-size", "6",
         "--no-progress", "--folds", "3"]
#: ssnet reads 7 x 7 patches (buffer 3), the svm one pixel (buffer 0; its DataModule's default patch is 11 x 11)
MIXED = ["evaluate", *SCENE, "--models", "ssnet", "svm", "--epochs", "1", "--no-pretrain"]
SVM_ONLY = ["evaluate", *SCENE, "--models", "svm"]


def _evaluate(args: list[str], out: Path) -> tuple[Path, str]:
    import contextlib
    import io

    from hsi.cli import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert main([*args, "--out", str(out)]) == 0, err.getvalue()[-3000:]
    return out, err.getvalue()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> dict:
    """The leaderboard of ssnet and svm."""
    folder, _ = _evaluate(MIXED, tmp_path_factory.mktemp("mixed") / "ev")
    return {**json.loads((folder / "leaderboard.json").read_text()), "out": folder}


@pytest.fixture(scope="module")
def svm_only(tmp_path_factory) -> dict:
    """The leaderboard of the svm alone."""
    folder, _ = _evaluate(SVM_ONLY, tmp_path_factory.mktemp("svm") / "ev")
    return {**json.loads((folder / "leaderboard.json").read_text()), "out": folder}


def _counts(row: dict) -> dict[int, tuple[int, int, int]]:
    return {f["fold"]: (f["train_pixels"], f["val_pixels"], f["test_pixels"]) for f in row["folds"]}


def test_every_model_of_a_board_gets_the_same_pixels_on_every_fold(mixed):
    rows = {r["model"]: r for r in mixed["rows"]}
    assert mixed["buffer"] == 3  # ssnet's 7 // 2: the largest any model of the board needs
    assert _counts(rows["svm"]) == _counts(rows["ssnet"]) and sorted(_counts(rows["svm"])) == [1, 2, 3]
    for row in rows.values():
        assert all(f["buffer"] == 3 and f["leak"] == 0 for f in row["folds"])
        for fold in row["folds"]:
            metrics = json.loads((mixed["out"] / fold["run"] / "metrics.json").read_text())
            assert metrics["split"]["buffer"] == metrics["config"]["data"]["buffer"] == 3
    assert "with a 3 px buffer shared by every model" in (mixed["out"] / "leaderboard.md").read_text()


def test_a_board_of_the_svm_alone_keeps_the_buffer_of_one_pixel(svm_only, mixed):
    assert svm_only["buffer"] == 0
    (row,) = svm_only["rows"]
    assert all(f["buffer"] == 0 and f["leak"] == 0 for f in row["folds"])
    alone = _counts(row)
    beside_ssnet = _counts(next(r for r in mixed["rows"] if r["model"] == "svm"))
    # the same test blocks, and more training pixels without ssnet's buffer
    assert all(alone[k][2] == beside_ssnet[k][2] and alone[k][0] >= beside_ssnet[k][0] for k in alone)
    assert sum(c[0] for c in alone.values()) > sum(c[0] for c in beside_ssnet.values())


def test_metrics_json_numbers_the_fold_from_1(svm_only):
    for k in (1, 2, 3):
        metrics = json.loads((svm_only["out"] / "runs" / "svm" / "seed0" / f"fold{k}" / "metrics.json").read_text())
        assert metrics["split"]["fold"] == metrics["config"]["data"]["fold"] == k
        assert metrics["split"]["n_folds"] == 3


def test_a_fold_made_with_its_own_buffer_is_run_again(svm_only, tmp_path):
    import shutil

    folder = tmp_path / "ev"
    shutil.copytree(svm_only["out"], folder)
    record_path = folder / "runs" / "svm" / "seed0" / "fold2" / "evaluate-fold.json"
    record = json.loads(record_path.read_text())
    assert record["board"] == {"buffer": 0}
    record.pop("board")  # what an hsi before boards shared one buffer recorded
    record_path.write_text(json.dumps(record))
    _, err = _evaluate(SVM_ONLY, folder)
    assert err.count("(reused)") == 2
    assert ("svm seed 0 fold 2/3: OA" in err and "run again: the evaluation's buffer is 0 for every model, and its run "
            "was made with its own" in err)


def test_the_board_buffer_is_the_largest_any_model_needs_or_the_given_one():
    from hsi.evaluate.fitness import board_buffer, read_patch_size

    assert board_buffer(("svm", "rf"), {}, {}) == 0
    assert board_buffer(("svm", "ssnet"), {}, {}) == 3
    assert board_buffer(("default", "svm", "ssftt"), {}, {}) == 6  # ssftt reads 13 x 13
    assert board_buffer(("svm", "spectral1d"), {"patch_size": 9}, {}) == 4  # a given patch, for every network
    assert board_buffer(("svm", "ssnet"), {"buffer": 1}, {}) == 1  # a given buffer wins
    assert read_patch_size("svm", {"patch_size": 9}, {}) == 1 and read_patch_size("default", {}, {"model": "cnn2d"}) == 11


def test_a_fold_whose_models_got_different_pixels_is_refused():
    from hsi.errors import SplitError
    from hsi.evaluate.folds import FoldJob
    from hsi.evaluate.running import FoldResult, check_same_pixels

    def result(model: str, train: int, fold: int = 1) -> FoldResult:
        split = {"train_pixels": train, "val_pixels": 10, "test_pixels": 20}
        return FoldResult(FoldJob(model, 0, 3, fold, 3), {"split": split}, 0, False)

    check_same_pixels([result("ssnet", 100), result("svm", 100), result("svm", 90, fold=2)])
    with pytest.raises(SplitError, match=r"seed 0 fold 1/3: ssnet was given \(100, 10, 20\) .* svm \(90, 10, 20\)"):
        check_same_pixels([result("ssnet", 100), result("svm", 90)])


def test_a_fold_made_with_another_board_buffer_says_both():
    from hsi.evaluate.running import _changed_board

    assert _changed_board({"buffer": 3}, {"buffer": 3}) is None
    assert _changed_board({"buffer": 2}, {"buffer": 3}) == ("the evaluation's buffer is now 3 for every model (its "
                                                            "run was made with 2)")
    assert _changed_board(None, {}) is None  # a --random run, or a buffer the command gave: judged as a setting
