"""One error policy: an ``HSIError`` is one ``error:`` line and exit 2; anything else is a bug (traceback, exit 1).

In process, :func:`hsi.cli.main` lets a bug's exception propagate (so ``python -m hsi`` and
the ``hsi`` script exit 1 with Python's traceback); expected failures return 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hsi.errors import CheckpointError, FileAccessError, HSIError

from tests.helpers import CHILD_TIMEOUT

TINY = ["--scene", "synthetic", "--scene-options", "height=24", "width=24", "bands=8", "n_classes=3",
        "--patch-size", "5", "--block-size", "6", "--model", "spectral1d", "--no-progress", "--epochs", "1"]


def _boom(*args, **kwargs):
    raise ValueError("boom")


@pytest.fixture
def cube(tmp_path) -> Path:
    """A tiny HDF5 cube with labels."""
    from hsi.io import write_h5

    path = tmp_path / "cube.h5"
    write_h5(path, np.random.default_rng(0).random((8, 8, 4), dtype=np.float32), labels=np.ones((8, 8), np.int64))
    return path


def _one_error_line(status: int, err: str) -> str:
    assert status == 2, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "\n" not in lines[0], err[-3000:]
    return lines[0]


# ------------------------------------------------------------------ bugs: traceback, exit 1
def test_internal_value_error_propagates_in_process(cube, monkeypatch, capsys):
    import hsi.io
    from hsi.cli import main

    monkeypatch.setattr(hsi.io, "list_arrays", _boom)  # a bug deep inside `hsi inspect`
    with pytest.raises(ValueError, match="boom"):
        main(["inspect", str(cube)])
    assert "error:" not in capsys.readouterr().err


def test_internal_os_error_propagates_in_process(cube, monkeypatch):
    import hsi.io
    from hsi.cli import main

    def broken(*args, **kwargs):
        raise OSError("an OSError that is no user's file")

    monkeypatch.setattr(hsi.io, "list_arrays", broken)
    with pytest.raises(OSError, match="no user's file"):
        main(["inspect", str(cube)])


_INJECT = """
import runpy, sys
import hsi.io
def boom(*args, **kwargs):
    raise ValueError("boom")
hsi.io.list_arrays = boom
sys.argv = ["hsi", "inspect", sys.argv[1]]
runpy.run_module("hsi", run_name="__main__", alter_sys=True)
"""


def test_python_m_hsi_exits_1_with_the_traceback(cube):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("HSI_TRACEBACK", None)
    proc = subprocess.run([sys.executable, "-c", _INJECT, str(cube)], capture_output=True, text=True, env=env,
                          timeout=CHILD_TIMEOUT)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" in proc.stderr and "ValueError: boom" in proc.stderr
    assert "error:" not in proc.stderr


def test_hsi_traceback_shows_the_traceback_behind_an_error_line(tmp_path, monkeypatch):
    from hsi.cli import main

    monkeypatch.setenv("HSI_TRACEBACK", "1")
    with pytest.raises(HSIError, match="no such file"):
        main(["inspect", str(tmp_path / "missing.h5")])


def test_lightning_cli_main_same_policy(monkeypatch, capsys):
    from hsi.training import lightning_cli

    monkeypatch.delenv("HSI_TRACEBACK", raising=False)
    monkeypatch.setattr(lightning_cli, "HSICLI", _boom)
    with pytest.raises(ValueError, match="boom"):
        lightning_cli.main(["fit"])

    def expected(*args, **kwargs):
        raise CheckpointError("x.ckpt: not a checkpoint")

    monkeypatch.setattr(lightning_cli, "HSICLI", expected)
    with pytest.raises(SystemExit) as info:
        lightning_cli.main(["fit"])
    assert info.value.code == 2
    assert capsys.readouterr().err.strip() == "error: x.ckpt: not a checkpoint"


# ------------------------------------------------------------------ expected failures: one line, exit 2
def _cases(tmp: Path, cube: Path) -> dict[str, tuple[list[str], str]]:
    a_file = tmp / "a_file"
    a_file.write_text("not a cube\n")
    (tmp / "a_dir").mkdir()
    return {
        "inspect-missing": (["inspect", str(tmp / "missing.h5")], "no such file"),
        "inspect-directory": (["inspect", str(tmp / "a_dir")], "is a directory"),
        "inspect-not-a-cube": (["inspect", str(a_file)], "unsupported file type"),
        "inspect-not-hdf5": (["inspect", str(_write(tmp / "fake.h5", "text"))], "not an HDF5 file"),
        "train-missing-files": (["train", "--cube", str(tmp / "missing.h5"), "--labels", str(tmp / "missing.mat"),
                                 "--out", str(tmp / "r1")], "no such file"),
        "train-cube-directory": (["train", "--cube", str(tmp / "a_dir"), "--labels", str(cube),
                                  "--out", str(tmp / "r2")], "is a directory"),
        "train-out-is-a-file": (["train", *TINY, "--out", str(a_file)], "this path is a file"),
        "train-out-under-a-file": (["train", *TINY, "--out", str(a_file / "run")], "is a file, not a folder"),
        "train-config-missing": (["train", "--config", str(tmp / "missing.yaml")], "no such file"),
        "train-accelerator-tpu": (["train", *TINY, "--accelerator", "tpu", "--out", str(tmp / "r3")],
                                  "--accelerator: tpu"),
        "train-devices-0": (["train", *TINY, "--devices", "0", "--out", str(tmp / "r4")], "--devices: 0"),
        "train-scene-too-small": (["train", *TINY, "--scene-options", "height=4", "--out", str(tmp / "r5")],
                                  "--scene-options: height=4"),
        "infer-missing-checkpoint": (["infer", "--checkpoint", str(tmp / "missing.ckpt"), "--scene", "synthetic",
                                      "--out", str(tmp / "m1")], "no such checkpoint file"),
        "infer-checkpoint-directory": (["infer", "--checkpoint", str(tmp / "a_dir"), "--scene", "synthetic",
                                        "--out", str(tmp / "m2")], "is a folder"),
        "convert-under-a-file": (["convert", str(cube), "--to", "h5", str(a_file / "x.h5")], "is a file, not a folder"),
        "convert-npy-under-a-file": (["convert", str(cube), "--to", "npy", str(a_file / "x")],
                                     "is a file, not a folder"),
        "convert-missing-input": (["convert", str(tmp / "missing.h5"), "--to", "h5", str(tmp / "o.h5")],
                                  "no such file"),
    }


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


CASES = ["inspect-missing", "inspect-directory", "inspect-not-a-cube", "inspect-not-hdf5", "train-missing-files",
         "train-cube-directory", "train-out-is-a-file", "train-out-under-a-file", "train-config-missing",
         "train-accelerator-tpu", "train-devices-0", "train-scene-too-small", "infer-missing-checkpoint",
         "infer-checkpoint-directory", "convert-under-a-file", "convert-npy-under-a-file", "convert-missing-input"]


@pytest.mark.parametrize("case", CASES)
def test_expected_failure_is_one_error_line(case, tmp_path, cube, hsi_main, monkeypatch):
    monkeypatch.delenv("HSI_TRACEBACK", raising=False)
    args, expected = _cases(tmp_path, cube)[case]
    status, _, err = hsi_main(args, tmp_path)
    assert expected in _one_error_line(status, err)


def test_permission_denied_on_a_users_file_is_one_error_line(tmp_path, cube, hsi_main, monkeypatch):
    """Running as root, chmod cannot deny a read: the denial is injected where the cube file is opened."""
    import hsi._identity as identity

    def denied(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(identity, "open", denied, raising=False)
    status, _, err = hsi_main(["train", "--cube", str(cube), "--labels", str(cube), "--out", str(tmp_path / "r")],
                              tmp_path)
    line = _one_error_line(status, err)
    assert "Permission denied" in line and "cube.h5" in line


# ------------------------------------------------------------------ the raises behind them
def test_check_state_raises_checkpoint_error():
    from hsi.data.checkpoint import STATE_FORMAT, check_state

    with pytest.raises(CheckpointError, match="expected a state with format"):
        check_state({"format": "something else"})
    with pytest.raises(CheckpointError, match="format_version"):
        check_state({"format": STATE_FORMAT, "format_version": 99})
    with pytest.raises(CheckpointError, match="lacks keys"):
        check_state({"format": STATE_FORMAT, "format_version": 1})
    assert issubclass(CheckpointError, ValueError)


def test_make_folder_names_the_file_in_the_way(tmp_path):
    from hsi._paths import make_folder

    (tmp_path / "f").write_text("x")
    with pytest.raises(FileAccessError, match=r"f/sub/deeper: cannot write the output folder: .*/f is a file"):
        make_folder(tmp_path / "f" / "sub" / "deeper")
    assert make_folder(tmp_path / "new" / "sub").is_dir()
