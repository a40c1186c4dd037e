"""``hsi evaluate --train-per-class N M``: the whole board at each label budget, and the learning curve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SCENE = ["--scene-options", "height=30", "width=30", "bands=8", "n_classes=3", "seed=1", "--patch-size", "5",
         "--block-size", "6", "--no-progress"]
#: the budgets given out of order: the outputs sort them
CURVE = ["evaluate", *SCENE, "--models", "spectral1d", "svm", "--folds", "3", "--epochs", "1",
         "--train-per-class", "10", "5"]
CLASSES = 3


@pytest.fixture(scope="module")
def curve(tmp_path_factory) -> tuple[Path, str]:
    """A learning curve of spectral1d and svm at 5 and 10 pixels per class: its folder and stderr."""
    import contextlib
    import io

    from hsi.cli import main

    folder = tmp_path_factory.mktemp("curve") / "lc"
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert main([*CURVE, "--out", str(folder)]) == 0, err.getvalue()[-3000:]
    return folder, err.getvalue()


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def test_two_budgets_make_two_boards_and_a_curve_of_their_means(curve):
    folder, _ = curve
    lc = _json(folder / "learning_curve.json")
    assert lc["budget"] == "train_per_class" and lc["budgets"] == [5, 10]
    assert lc["boards"] == {"5": "per_class_5", "10": "per_class_10"}
    assert sorted(lc["models"]) == ["spectral1d", "svm"]
    for budget in (5, 10):
        board = _json(folder / f"per_class_{budget}" / "leaderboard.json")
        assert board["settings"]["data"]["train_per_class"] == budget
        assert (folder / f"per_class_{budget}" / "comparison.json").is_file()
        for row in board["rows"]:
            point = lc["models"][row["model"]][str(budget)]
            assert point["oa_mean"] == pytest.approx(sum(f["oa"] for f in row["folds"]) / 3)
            assert (point["oa_mean"], point["oa_std"], point["runs"]) == (row["oa_mean"], row["oa_std"], 3)
            assert point["train_pixels_per_class"] == budget
            cell = f"{100 * row['oa_mean']:.1f} ± {100 * row['oa_std']:.1f}"
            line = next(t for t in (folder / "learning_curve.md").read_text().splitlines()
                        if t.startswith(f"| {row['model']} |"))
            assert line.split(" | ")[[5, 10].index(budget) + 1].strip(" |") == cell
    assert (folder / "learning_curve.md").read_text().startswith("| model | 5 | 10 |")
    rows = (folder / "learning_curve.csv").read_text().splitlines()
    assert rows[0] == "model,train_per_class,oa_mean,oa_std,runs,train_pixels,train_pixels_per_class" and len(rows) == 5


def test_every_model_of_a_fold_trains_on_the_budget_times_the_classes(curve):
    folder, _ = curve
    for budget in (5, 10):
        board = _json(folder / f"per_class_{budget}" / "leaderboard.json")
        counts = {r["model"]: [(f["fold"], f["train_pixels"], f["val_pixels"], f["test_pixels"]) for f in r["folds"]]
                  for r in board["rows"]}
        assert counts["svm"] == counts["spectral1d"]
        assert [c[1] for c in counts["svm"]] == [budget * CLASSES] * 3
        assert [c[2] for c in counts["svm"]] == [budget * CLASSES] * 3  # val_budget same
        run = folder / f"per_class_{budget}" / board["rows"][0]["folds"][0]["run"]
        assert _json(run / "metrics.json")["config"]["data"]["train_per_class"] == budget


def test_the_plot_is_a_png_of_the_curve(curve):
    from matplotlib.image import imread

    png = curve[0] / "learning_curve.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    height, width = imread(png).shape[:2]
    assert width > height > 200


def test_the_same_command_reuses_every_fold(curve, tmp_path):
    import contextlib
    import io
    import shutil

    from hsi.cli import main

    folder = tmp_path / "lc"
    shutil.copytree(curve[0], folder)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert main([*CURVE, "--out", str(folder)]) == 0
    assert err.getvalue().count("(reused)") == 12  # 2 models x 3 folds x 2 budgets
    assert _json(folder / "learning_curve.json")["models"] == _json(curve[0] / "learning_curve.json")["models"]


def test_one_budget_is_the_plain_board_with_the_budget(hsi_main, tmp_path):
    status, _, err = hsi_main(["evaluate", *SCENE, "--models", "svm", "--folds", "3", "--train-per-class", "4",
                               "--val-budget", "all", "--out", str(tmp_path / "ev")], tmp_path)
    assert status == 0, err
    board = _json(tmp_path / "ev" / "leaderboard.json")
    assert board["settings"]["data"]["train_per_class"] == 4 and board["settings"]["data"]["val_budget"] == "all"
    assert [f["train_pixels"] for f in board["rows"][0]["folds"]] == [4 * CLASSES] * 3
    assert all(f["val_pixels"] > 4 * CLASSES for f in board["rows"][0]["folds"])  # every validation pixel
    assert not (tmp_path / "ev" / "learning_curve.json").exists()
    assert ", 4 training pixels per class (validation: all), seeds 0" in (tmp_path / "ev" / "leaderboard.md").read_text()


@pytest.mark.parametrize("args, message", [
    (["--train-per-class", "5", "0"], "--train-per-class: [5, 0]: one or more distinct integers >= 1"),
    (["--train-per-class", "5", "5"], "--train-per-class: [5, 5]: one or more distinct integers >= 1"),
    (["--train-per-class", "x"], "--train-per-class: 'x': expected an integer"),
    (["--train-fraction", "0.5", "1.5"], "--train-fraction: [0.5, 1.5]: one or more distinct numbers in (0, 1]"),
    (["--train-per-class", "5", "--train-fraction", "0.5"], "--train-fraction: [0.5]: none when train_per_class"),
])
def test_a_bad_budget_is_one_error_line_before_any_work(tmp_path, args, message):
    import subprocess
    import sys

    from tests.helpers import CHILD_TIMEOUT

    code = ("import sys; from hsi.cli import main; status = main(sys.argv[1:]); "
            "print(status, 'torch' in sys.modules, file=sys.stdout)")
    done = subprocess.run([sys.executable, "-c", code, "evaluate", "--models", "svm", *args, "--out",
                           str(tmp_path / "ev")], check=False, capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.split() == ["2", "False"], done.stderr
    assert done.stderr == f"error: {message}" + done.stderr.split(message, 1)[1] and done.stderr.count("\n") == 1
    assert not (tmp_path / "ev").exists()


def test_budgets_are_checked_and_sorted():
    from hsi.errors import OptionError
    from hsi.evaluate.curve import budget_folder, check_budgets

    assert check_budgets({}) == (None, ())
    assert check_budgets({"train_per_class": (20, 5, 10)}) == ("train_per_class", (5, 10, 20))
    assert check_budgets({"train_fraction": 0.1}) == ("train_fraction", (0.1,))
    with pytest.raises(OptionError, match="integers >= 1"):
        check_budgets({"train_per_class": (5, True)})
    assert budget_folder("train_per_class", 5) == "per_class_5" and budget_folder("train_fraction", 0.1) == "fraction_0.1"


@pytest.mark.parametrize("data", [{"train_per_class": [5, 10]}, {"train_fraction": (0.1,)}])
def test_run_evaluation_given_a_list_of_budgets_points_to_the_learning_curve(data, tmp_path):
    from hsi.errors import OptionError
    from hsi.evaluate.options import EvaluateOptions
    from hsi.evaluate.running import EvaluationConfig, run_evaluation

    config = EvaluationConfig(data={"scene": "synthetic", **data},
                              options=EvaluateOptions(models=("svm",), out=str(tmp_path / "ev")))
    with pytest.raises(OptionError, match=r"a list of budgets makes a learning curve: .*run_learning_curve"):
        run_evaluation(config, log=lambda line: None)
    assert not (tmp_path / "ev").exists()
