"""Quiet runs (no Lightning banners, tips or deprecation warnings unless --verbose) and progress that suits a pipe."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.io

from hsi._progress import LineProgress, progress_bar
from hsi.cli import main

#: the brief's tiny run, without --no-progress (progress is what is tested)
TINY_RUN = ["train", "--scene", "synthetic", "--scene-options", "height=24", "width=24", "bands=8", "n_classes=3",
            "seed=1", "--model", "spectral1d", "--block-size", "6"]
NOISE = ("GPU available", "TPU available", "Tip", "litlogger", "LeafSpec", "deprecated", "`Trainer.fit` stopped",
         "logging interval")


def test_default_run_is_quiet_and_prints_one_line_per_epoch_when_piped(tmp_path, hsi_subprocess):
    proc = hsi_subprocess([*TINY_RUN, "--epochs", "3", "--out", str(tmp_path / "run")], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not [word for word in NOISE if word in proc.stderr], proc.stderr
    assert "spectral1d reads 1x1 patches" in proc.stderr  # the package's own lines stay
    epochs = [line for line in proc.stderr.splitlines() if line.startswith("epoch ")]
    assert [line.split(":")[0] for line in epochs] == ["epoch 1/3", "epoch 2/3", "epoch 3/3"]
    assert "\r" not in proc.stderr + proc.stdout  # no redrawn bar in a pipe
    assert len(proc.stderr.encode()) < 5000 and len(proc.stdout.encode()) < 5000


def test_verbose_shows_lightning(tmp_path, hsi_subprocess):
    proc = hsi_subprocess([*TINY_RUN, "--epochs", "1", "--no-progress", "--verbose", "--out", str(tmp_path / "r")],
                          tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "GPU available" in proc.stderr
    assert not [line for line in proc.stderr.splitlines() if line.startswith("epoch ")]  # --no-progress


@pytest.mark.parametrize("command", ["train", "infer", "doctor"])
def test_verbose_is_an_option_of_the_lightning_commands(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--verbose" in capsys.readouterr().out


def test_line_progress_prints_one_line_per_tenth():
    stream = io.StringIO()
    bar = LineProgress(200, "tiles", "tile", stream=stream)
    for _ in range(200):
        bar.update(1)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10 and lines[-1].startswith("tiles: 100%") and "200/200" in lines[-1]


def test_progress_bar_is_tqdm_on_a_terminal_and_lines_in_a_pipe():
    from tqdm import tqdm

    assert isinstance(progress_bar(5, "x", terminal=True), tqdm)
    assert isinstance(progress_bar(5, "x", terminal=False), LineProgress)
    hidden = progress_bar(5, "x", show=False, terminal=False)
    assert isinstance(hidden, tqdm) and hidden.disable


@pytest.fixture
def mat_cube(tmp_path):
    path = tmp_path / "scene.mat"
    scipy.io.savemat(path, {"data": np.random.default_rng(0).random((70, 45, 9)).astype(np.float32)})
    return path


@pytest.mark.parametrize("flag", ["--progress", "--no-progress"])
def test_convert_progress_is_a_tqdm_bar_of_rows_or_nothing(mat_cube, tmp_path, capsys, flag):
    assert main(["convert", str(mat_cube), "--to", "h5", str(tmp_path / "out.h5"), "--key", "data", flag]) == 0
    err = capsys.readouterr().err
    if flag == "--progress":
        assert "rows written: 100%" in err and "70/70" in err, err
    else:
        assert err == ""


def test_cache_build_progress_only_for_large_builds(capsys):
    from hsi.data.cache import PROGRESS_BYTES, _build_progress

    with _build_progress(PROGRESS_BYTES // 2) as bar:
        bar.update(PROGRESS_BYTES >> 21)
    assert capsys.readouterr().err == ""
    with _build_progress(4 * PROGRESS_BYTES) as bar:
        bar.update(4 * PROGRESS_BYTES >> 20)
    assert "building patch cache: 100%" in capsys.readouterr().err


def test_quiet_lightning_keeps_warnings_and_verbose_changes_nothing(monkeypatch):
    import logging
    import warnings

    from hsi._quiet import LIGHTNING_LOGGERS, quiet_lightning

    logger = logging.getLogger(LIGHTNING_LOGGERS[0])
    monkeypatch.setattr(logger, "level", logging.INFO)
    with warnings.catch_warnings():
        quiet_lightning(verbose=True)
        assert logger.level == logging.INFO
        quiet_lightning()
        assert logger.level == logging.WARNING
        assert not logger.isEnabledFor(logging.INFO) and logger.isEnabledFor(logging.WARNING)


def test_package_warnings_are_one_line_on_the_console(tmp_path, hsi_subprocess):
    import h5py

    cube = np.random.default_rng(0).random((6, 5, 4)).astype(np.float32)
    cube[1, 2, 3] = np.nan  # read_cube warns (DataQualityWarning) about the non-finite value
    with h5py.File(tmp_path / "nan.h5", "w") as handle:
        handle.create_dataset("cube", data=cube).attrs["layout"] = "HWC"
    proc = hsi_subprocess(["inspect", str(tmp_path / "nan.h5")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "NaN" in line]
    assert lines and all(line.startswith("warning: ") for line in lines), proc.stderr
    assert "hsi/io" not in proc.stderr and "warnings.warn" not in proc.stderr  # no file, line or source of hsi's
