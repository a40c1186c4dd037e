"""Helpers for the command-line tests: a tiny scene, in-process and subprocess runs of ``hsi``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: a synthetic scene small enough that a one-epoch spectral1d run takes a few seconds
TINY = ["--scene-options", "height=24", "width=24", "bands=8", "n_classes=3", "seed=1",
        "--patch-size", "5", "--block-size", "6", "--model", "spectral1d", "--no-progress"]


def env() -> dict[str, str]:
    """Environment of child processes: one thread each, unbuffered output."""
    return dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1", MPLBACKEND="Agg")


def run_hsi(args: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """``python -m hsi ARGS`` in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "hsi", *args], cwd=cwd, env=env(), capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="session")
def tiny() -> list[str]:
    """Options of a tiny, fast ``hsi train`` run (add ``--epochs`` and ``--out``)."""
    return list(TINY)


@pytest.fixture(scope="session")
def hsi_subprocess():
    """``hsi_subprocess(args, cwd)``: ``python -m hsi ARGS`` in a child process."""
    return run_hsi


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """The folder of a finished one-epoch tiny run (best.ckpt, last.ckpt, metrics.json ...)."""
    work = tmp_path_factory.mktemp("trained")
    proc = run_hsi(["train", *TINY, "--epochs", "1", "--out", str(work / "run")], cwd=work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work / "run"
