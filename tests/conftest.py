"""Fixtures shared by the whole suite (plain helpers shared by several folders are in ``tests/helpers.py``).

Real data lives in ``../shared/data`` beside the checkout (or wherever
``HSI_SHARED_DATA`` points). Tests that need it take the ``shared_data`` fixture and
are skipped cleanly when it is absent, as on a user's fresh clone.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from tests.helpers import one_torch_thread as _one_torch_thread
from tests.helpers import make_parcels, tmpfs

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
def parcels():
    """The default :func:`tests.helpers.make_parcels` label map (96 x 80, 6 classes, parcels of 8)."""
    return make_parcels()


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


def pytest_sessionstart(session):
    """The first line of the report, ``-q`` included: the versions this run tests (a failure on one machine and not
    on another often starts there)."""
    from hsi._versions import package_versions

    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("versions: " + ", ".join(f"{k} {v}" for k, v in package_versions().items()))


@pytest.fixture(autouse=True)
def _no_process_group_left():
    """A test that leaves a ``torch.distributed`` process group alive fails: its gloo threads would still run while
    the interpreter finalizes, the abort at exit that :mod:`hsi._distributed` exists to prevent."""
    yield
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        from hsi._distributed import release_process_group

        release_process_group()
        pytest.fail("the test left a torch.distributed process group alive (released now)")


@pytest.fixture(autouse=True)
def _few_threads(monkeypatch):
    """Keep BLAS/torch from oversubscribing the two cores of CI machines."""
    import torch

    torch.set_num_threads(min(2, torch.get_num_threads()))
    yield


@pytest.fixture
def one_torch_thread():
    """Torch on one thread for the test, restored after (a folder's conftest makes it autouse where its tests are
    many tiny networks)."""
    with _one_torch_thread():
        yield


@pytest.fixture
def small_disk(tmp_path):
    """``small_disk(size)`` -> a tmpfs of ``size`` (``"2m"``) under tmp_path, unmounted after the test; the test is
    skipped where mounting is not permitted (it needs root)."""
    with contextlib.ExitStack() as stack:
        made: list[Path] = []

        def make(size: str) -> Path:
            disk = stack.enter_context(tmpfs(tmp_path / f"disk{len(made) or ''}", size))
            if disk is None:
                pytest.skip("cannot mount a tmpfs here (needs root)")
            made.append(disk)
            return disk

        yield make
