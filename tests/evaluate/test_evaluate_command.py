"""``hsi evaluate`` end to end on a tiny synthetic scene (spectral1d, one epoch, and svm; 3 folds)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hsi.evaluate.outputs import EVALUATE_MANIFEST, EVALUATE_OUTPUTS

SCENE = ["--scene-options", "height=24", "width=24", "bands=8", "n_classes=3", "seed=1", "--patch-size", "5",
         "--block-size", "6", "--no-progress"]
EVALUATE = ["evaluate", *SCENE, "--models", "spectral1d", "svm", "--folds", "3", "--epochs", "1"]


#: the entries that are wall times (or speeds measured from them)
TIMES = ("seconds", "epoch_s", "pixels_per_s")


def _without_seconds(value):
    """``value`` with every wall-time entry (:data:`TIMES`) removed."""
    if isinstance(value, dict):
        return {k: _without_seconds(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [_without_seconds(v) for v in value]
    return value


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> tuple[Path, str, str]:
    """An uninterrupted evaluation: its folder, stdout and stderr."""
    import contextlib
    import io

    from hsi.cli import main

    work = tmp_path_factory.mktemp("evaluate")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main([*EVALUATE, "--out", str(work / "ev")]) == 0, err.getvalue()[-3000:]
    return work / "ev", out.getvalue(), err.getvalue()


def _board(folder: Path) -> dict:
    return json.loads((folder / "leaderboard.json").read_text())


def test_writes_every_output_with_a_row_per_model_and_no_leak(evaluated):
    from hsi.transaction import read_manifest, verify_manifest

    folder, stdout, stderr = evaluated
    assert all((folder / name).is_file() for name in EVALUATE_OUTPUTS)
    assert read_manifest(folder, EVALUATE_MANIFEST)["status"] == "complete" and not verify_manifest(folder, EVALUATE_MANIFEST)
    board = _board(folder)
    assert sorted(r["model"] for r in board["rows"]) == ["spectral1d", "svm"]
    for row in board["rows"]:
        assert [(f["seed"], f["fold"]) for f in row["folds"]] == [(0, 1), (0, 2), (0, 3)]
        assert all(f["leak"] == 0 for f in row["folds"])
        assert row["oa_mean"] == pytest.approx(sum(f["oa"] for f in row["folds"]) / 3)
        assert set(row) >= {"oa_std", "aa_mean", "aa_std", "kappa_mean", "kappa_std", "per_class", "seconds"}
    from hsi.scenes.synthetic import make_synthetic_scene

    labelled = int((make_synthetic_scene(height=24, width=24, bands=8, n_classes=3, seed=1).labels > 0).sum())
    for row in board["rows"]:  # the folds' test splits cover the labelled pixels once
        assert sum(f["test_pixels"] for f in row["folds"]) == labelled
    assert stderr.count("fold ") >= 6 and "| model |" in stdout
    assert "too few folds to conclude" in (folder / "comparison.md").read_text()


def test_each_row_gives_parameters_time_per_epoch_and_inference_speed(evaluated):
    from hsi.models import build_model

    folder, stdout, _ = evaluated
    rows = {r["model"]: r for r in _board(folder)["rows"]}
    net = build_model("spectral1d", 8, 3, 5)
    assert rows["spectral1d"]["parameters"] == sum(p.numel() for p in net.parameters() if p.requires_grad)
    for fold in rows["spectral1d"]["folds"]:
        metrics = json.loads((folder / fold["run"] / "metrics.json").read_text())
        timing = metrics["timing"]
        assert fold["epoch_s"] == timing["epoch_s"] == pytest.approx(timing["fit_s"] / metrics["epochs_trained"], abs=1e-3)
        assert fold["pixels_per_s"] == timing["pixels_per_s"] > 0
    assert rows["spectral1d"]["epoch_s"] == pytest.approx(sum(f["epoch_s"] for f in rows["spectral1d"]["folds"]) / 3)
    assert rows["svm"]["parameters"] is None and rows["svm"]["epoch_s"] is None and rows["svm"]["pixels_per_s"] > 0
    assert "| params | s/epoch | test px/s |" in stdout and f"| {rows['spectral1d']['parameters']:,} |" in stdout


def test_all_means_every_registry_network_then_the_classical_models():
    from hsi.classical import CLASSICAL_MODELS
    from hsi.evaluate.folds import check_models, expand_models
    from hsi.evaluate.running import known_models
    from hsi.models import list_models

    known = known_models()
    assert known == [*list_models(), *CLASSICAL_MODELS]
    check_models(("all", "default"), known)
    assert expand_models(("default", "all", "svm"), known) == ("default", *list_models(), *CLASSICAL_MODELS)


def test_the_table_equals_hsi_train_on_the_same_fold(evaluated, hsi_main, tmp_path):
    folder = evaluated[0]
    status, _, err = hsi_main(["train", *SCENE, "--model", "svm", "--folds", "3", "--fold", "1",
                               "--out", str(tmp_path / "run")], tmp_path)
    assert status == 0, err
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    svm = next(r for r in _board(folder)["rows"] if r["model"] == "svm")
    fold = next(f for f in svm["folds"] if f["fold"] == 1)
    assert (fold["oa"], fold["aa"], fold["kappa"]) == (metrics["oa"], metrics["aa"], metrics["kappa"])
    assert fold["test_pixels"] == metrics["split"]["test_pixels"]


def test_a_resumed_evaluation_equals_an_uninterrupted_one(evaluated, hsi_main, tmp_path, monkeypatch):
    import hsi.training.run as training_run

    real, calls = training_run.run_backend, []

    def interrupting(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(training_run, "run_backend", interrupting)
    args = [*EVALUATE, "--out", str(tmp_path / "ev")]
    status, _, err = hsi_main(args, tmp_path)
    assert status == 130 and "run the same command again to resume" in err
    assert not (tmp_path / "ev" / "leaderboard.json").exists()
    status, _, err = hsi_main(args, tmp_path)
    assert status == 0, err
    assert err.count("(reused)") == 2 and len(calls) == 3 + 4
    # fresh runs with the same seed (the same table) and reused ones give the uninterrupted evaluation's table
    assert _without_seconds(_board(tmp_path / "ev"))["rows"] == _without_seconds(_board(evaluated[0]))["rows"]


@pytest.mark.parametrize("change, named", [(["--epochs", "2"], "epochs=1"), (["--no-refit"], "refit=True"),
                                           (["--no-pretrain"], "pretrain=True"),
                                           (["--precision", "bf16-mixed"], "precision='32-true'"),
                                           (["--accumulate-grad-batches", "2"], "accumulate_grad_batches=1")])
def test_a_finished_fold_made_with_other_settings_is_refused(evaluated, hsi_main, tmp_path, change, named):
    folder = evaluated[0]
    before = (folder / "leaderboard.json").read_bytes()
    status, _, err = hsi_main([*EVALUATE, *change, "--out", str(folder)], tmp_path)
    assert status == 2 and err.startswith("error: ") and named in err and "--overwrite" in err
    assert (folder / "leaderboard.json").read_bytes() == before


@pytest.mark.parametrize("args, message", [
    (["--models", "nope"], "--models: nope: default, all or one of"),
    (["--models", "all", "--pca", "5"], "--pca: 5: none: anyband reads each band with its wavelength"),
    (["--split", "random"], "--split: random: block"),
    (["--folds", "1"], "--folds: 1: an integer >= 2"),
    (["--seeds", "1", "1"], "--seeds"),
    (["--accelerator", "cpu", "--precision", "16-mixed"], "--precision: 16-mixed: 32-true or bf16-mixed on the CPU"),
    (["--accumulate-grad-batches", "0"], "--accumulate-grad-batches: 0: an integer >= 1"),
])
def test_bad_options_give_one_error_line_before_any_work(hsi_main, tmp_path, args, message):
    status, out, err = hsi_main(["evaluate", *args, "--out", str(tmp_path / "ev")], tmp_path)
    assert status == 2 and err.startswith(f"error: {message}") and err.count("\n") == 1
    assert not (tmp_path / "ev").exists()


def test_parsing_the_options_imports_neither_torch_nor_lightning():
    import subprocess
    import sys

    code = ("import sys; from hsi.cli import build_parser; build_parser('evaluate').parse_args(['evaluate', '--folds', '3',"
            " '--models', 'svm']); print('torch' in sys.modules, 'lightning' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[2]).stdout.split() == ["False", "False"]
