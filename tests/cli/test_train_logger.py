"""``hsi train --logger csv|tensorboard|wandb|mlflow``: CSV logs by default, the others beside them on request
(wandb and mlflow offline, inside the run folder)."""

from __future__ import annotations

import sys

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
    status, _, err = hsi_main([*TINY_RUN, "--logger", "neptune"], tmp_path)
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: --logger"), err
    assert all(name in lines[0] for name in ("csv", "tensorboard", "wandb", "mlflow"))
    with pytest.raises(OptionError):
        RunOptions(logger="neptune")  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["wandb", "mlflow"])
def test_a_missing_logger_package_is_one_line_naming_the_extra(hsi_main, tmp_path, monkeypatch, no_scene_reads, kind):
    monkeypatch.setitem(sys.modules, kind, None)  # "import wandb" fails, as where it is not installed
    status, _, err = hsi_main([*TINY_RUN, "--logger", kind, "--out", str(tmp_path / "run")], tmp_path)
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith(f"error: --logger: {kind}: "), err
    assert f'pip install "hsi-lightning[{kind}]"' in lines[0]
    assert list(tmp_path.iterdir()) == []  # nothing read, nothing written
    with pytest.raises(OptionError, match=rf"hsi-lightning\[{kind}\]"):
        RunOptions(logger=kind)


def test_wandb_offline_run_writes_its_records(hsi_main, tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "elsewhere"))  # the run folder's save_dir wins over it
    monkeypatch.delenv("WANDB_MODE", raising=False)
    status, _, err = hsi_main([*TINY_RUN, "--epochs", "2", "--logger", "wandb", "--out", str(tmp_path / "run")],
                              tmp_path)
    assert status == 0, err
    logs = tmp_path / "run" / "logs"
    runs = list((logs / "wandb").glob("offline-run-*/run-*.wandb"))  # offline: nothing was sent
    assert len(runs) == 1, sorted(p.name for p in (logs / "wandb").iterdir())
    assert b"val_oa" in runs[0].read_bytes()  # the validation metrics are in the record
    assert not [p for p in (tmp_path / "run").rglob("*") if p.is_symlink()]  # plain files only (the commit hashes them)
    assert list(logs.glob("version_*/metrics.csv"))  # curves.png is drawn from these


def test_mlflow_offline_run_writes_its_records(hsi_main, tmp_path):
    pytest.importorskip("mlflow")
    status, _, err = hsi_main([*TINY_RUN, "--epochs", "2", "--logger", "mlflow", "--out", str(tmp_path / "run")],
                              tmp_path)
    assert status == 0, err
    store = tmp_path / "run" / "logs" / "mlruns"  # a file store inside the run folder: no server
    [val_oa] = list(store.glob("*/*/metrics/val_oa"))
    assert len(val_oa.read_text().splitlines()) == 2  # one value per epoch
    assert (val_oa.parent.parent / "params" / "lr").is_file()  # and the run's settings
    assert list((tmp_path / "run" / "logs").glob("version_*/metrics.csv"))
