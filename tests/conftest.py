"""Fixtures shared by the whole suite.

Real data lives in ``../shared/data`` beside the checkout (or wherever
``HSI_SHARED_DATA`` points). Tests that need it take the ``shared_data`` fixture and
are skipped cleanly when it is absent, as on a user's fresh clone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def _shared_data_dir() -> Path:
    override = os.environ.get("HSI_SHARED_DATA")
    if override:
        return Path(override)
    return REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real public files; skips the test when it is not there."""
    root = _shared_data_dir()
    if not (root / "README.md").is_file():
        pytest.skip(f"real data not found at {root} (set HSI_SHARED_DATA to point elsewhere)")
    return root


@pytest.fixture
def hsi_main(monkeypatch, capsys):
    """``hsi_main(args, cwd) -> (exit status, stdout, stderr)``, the real command in this process."""
    from hsi.cli import main

    def call(args: list[str], cwd: Path) -> tuple[int, str, str]:
        monkeypatch.chdir(cwd)
        status = main(list(args))
        out, err = capsys.readouterr()
        return status, out, err

    return call


@pytest.fixture(autouse=True)
def _few_threads(monkeypatch):
    """Keep BLAS/torch from oversubscribing the two cores of CI machines."""
    import torch

    torch.set_num_threads(min(2, torch.get_num_threads()))
    yield
