"""``hsi train --logger csv|tensorboard``: CSV logs by default, TensorBoard event files on request."""

from __future__ import annotations

import pytest

import hsi._checks
from hsi.errors import OptionError
from hsi.training.options import RunOptions, tensorboard_available

#: the tiny run of the brief: a 24 x 24 x 8 synthetic scene, spectral1d, one epoch
TINY_RUN = ["train", "--scene", "synthetic", "--scene-options", "height=24", "width=24", "bands=8", "n_classes=3",
            "seed=1", "--model", "spectral1d", "--block-size", "6", "--epochs", "1", "--no-progress"]


@pytest.fixture
def no_scene_reads(monkeypatch):
    """Fail the test if any scene is loaded."""
    import hsi.data.scene_source

    def refuse(*args, **kwargs):
        raise AssertionError("a scene was loaded before the options were checked")

    monkeypatch.setattr(hsi.data.scene_source, "load_source", refuse)


def test_default_logger_is_csv():
    assert RunOptions().logger == "csv"


def test_csv_logger_writes_metrics_csv(hsi_main, tmp_path):
    status, _, err = hsi_main([*TINY_RUN, "--logger", "csv", "--out", str(tmp_path / "run")], tmp_path)
    assert status == 0, err
    logs = tmp_path / "run" / "logs"
    assert list(logs.glob("version_*/metrics.csv"))
    assert not list(logs.glob("**/events.out.tfevents.*"))


@pytest.mark.skipif(not tensorboard_available(), reason="neither tensorboard nor tensorboardX is installed")
def test_tensorboard_logger_writes_event_files(hsi_main, tmp_path):
    status, _, err = hsi_main([*TINY_RUN, "--logger", "tensorboard", "--out", str(tmp_path / "run")], tmp_path)
    assert status == 0, err
    logs = tmp_path / "run" / "logs"
    assert list((logs / "tensorboard").glob("version_*/events.out.tfevents.*"))
    assert list(logs.glob("version_*/metrics.csv"))  # curves.png is drawn from these
    assert (tmp_path / "run" / "curves.png").is_file()


def test_tensorboard_missing_is_one_line_naming_the_extra(hsi_main, tmp_path, monkeypatch, no_scene_reads):
    monkeypatch.setattr(hsi._checks, "tensorboard_available", lambda: False)
    status, out, err = hsi_main([*TINY_RUN, "--logger", "tensorboard", "--out", str(tmp_path / "run")], tmp_path)
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: --logger"), err
    assert 'pip install "hsi-lightning[tensorboard]"' in lines[0]
    assert list(tmp_path.iterdir()) == []  # nothing read, nothing written


def test_tensorboard_missing_in_the_library(monkeypatch):
    monkeypatch.setattr(hsi._checks, "tensorboard_available", lambda: False)
    with pytest.raises(OptionError, match=r"hsi-lightning\[tensorboard\]"):
        RunOptions(logger="tensorboard")


def test_unknown_logger_is_one_error_line(hsi_main, tmp_path, no_scene_reads):
    status, _, err = hsi_main([*TINY_RUN, "--logger", "wandb"], tmp_path)
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: --logger"), err
    assert "csv" in lines[0] and "tensorboard" in lines[0]
    with pytest.raises(OptionError):
        RunOptions(logger="wandb")  # type: ignore[arg-type]
