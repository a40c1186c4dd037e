"""Helpers for the command-line tests: a tiny scene, in-process and subprocess runs of ``hsi``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import CHILD_TIMEOUT, TINY_TRAIN, child_env

REPO = Path(__file__).resolve().parents[2]

def run_hsi(args: list[str], cwd: Path, timeout: int = CHILD_TIMEOUT) -> subprocess.CompletedProcess:
    """``python -m hsi ARGS`` in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "hsi", *args], cwd=cwd, env=child_env(), capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="session")
def tiny() -> list[str]:
    """Options of a tiny, fast ``hsi train`` run (add ``--epochs`` and ``--out``)."""
    return list(TINY_TRAIN)


@pytest.fixture(scope="session")
def hsi_subprocess():
    """``hsi_subprocess(args, cwd)``: ``python -m hsi ARGS`` in a child process."""
    return run_hsi


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """The folder of a finished one-epoch tiny run (best.ckpt, last.ckpt, metrics.json ...)."""
    work = tmp_path_factory.mktemp("trained")
    proc = run_hsi(["train", *TINY_TRAIN, "--epochs", "1", "--out", str(work / "run")], cwd=work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work / "run"
