"""What several test folders need: tiny scenes, quiet DataModules and Trainers, short checkpoints, child processes.

Import them as ``from tests.helpers import ...``: with ``--import-mode=importlib`` pytest makes ``tests`` a
namespace package rooted at the repository, whichever folder or file is run. Fixtures built on them
(``one_torch_thread``, ``small_disk``) are in ``tests/conftest.py``. Each folder's conftest keeps the
scene and options its own tests are written against, and builds with these.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import os
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

#: the longest a test's child process (``python -m hsi``, a DDP run, a docs build, a notebook cell) may take: a
#: guard against a hang, not a speed check, so loose enough that a two-core machine at load 25, where a cold
#: ``import torch`` alone can take a minute, never breaks it
CHILD_TIMEOUT = 1200

#: a synthetic scene small enough that a one-epoch spectral1d run takes a few seconds
TINY_SCENE = {"height": 24, "width": 24, "bands": 8, "n_classes": 3, "seed": 1}

#: options of a tiny, fast ``hsi train`` run on :data:`TINY_SCENE` (add ``--epochs`` and ``--out``)
TINY_TRAIN = ["--scene-options", *(f"{k}={v}" for k, v in TINY_SCENE.items()),
              "--patch-size", "5", "--block-size", "6", "--model", "spectral1d", "--no-progress"]


def make_parcels(height: int = 96, width: int = 80, n_classes: int = 6, seed: int = 0,
                 parcel: int = 8) -> np.ndarray:
    """A field-like label map: rectangular parcels of random classes, with unlabeled lanes.

    Every class gets at least a quarter of the parcels' share, so all classes span many
    blocks; lanes one pixel wide between parcels stay unlabeled (0).
    """
    rng = np.random.default_rng(seed)
    rows, cols = -(-height // parcel), -(-width // parcel)
    ids = rng.permutation(np.arange(rows * cols) % n_classes) + 1
    lab = np.kron(ids.reshape(rows, cols), np.ones((parcel, parcel), dtype=np.int64))
    lab = lab[:height, :width].copy()
    lab[::parcel, :] = 0
    lab[:, ::parcel] = 0
    return lab


def child_env(**extra: str) -> dict[str, str]:
    """Environment of a child process: one BLAS thread, unbuffered output, no display; ``extra`` on top."""
    return dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1", MPLBACKEND="Agg",
                **extra)


def quiet_datamodule(**arguments: Any):
    """``HSIDataModule(**arguments)``, its warnings about tiny scenes (few blocks, small classes) silenced."""
    from hsi.data import HSIDataModule

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return HSIDataModule(**arguments)


def ready_datamodule(**arguments: Any):
    """:func:`quiet_datamodule`, prepared and set up for fit and test (what a DataModule needs without a Trainer)."""
    dm = quiet_datamodule(**arguments)
    dm.prepare_data()
    dm.setup("fit")
    dm.setup("test")
    return dm


def quiet_trainer(**options: Any):
    """A Lightning ``Trainer`` on one CPU that writes and prints nothing (no logger, checkpoints, bars, summary)."""
    import lightning.pytorch as pl

    defaults = dict(accelerator="cpu", devices=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                    enable_model_summary=False)
    return pl.Trainer(**{**defaults, **options})


def train_checkpoint(path: Path, datamodule: Any, model: str, *, shape_from_data: bool = False,
                     batches: int = 3) -> Path:
    """Fit ``model`` on ``datamodule`` for ``batches`` training batches (seed 0, no validation); save at ``path``.

    The checkpoint carries the DataModule's state, as ``hsi train``'s do. ``shape_from_data``: the task is given
    only the model and takes bands, classes and patch size from the DataModule in ``setup`` (a wavelength-aware
    network needs that to learn its bands' wavelengths); otherwise they are given from ``datamodule``.
    """
    import torch

    from hsi.training import HSIClassifier

    torch.manual_seed(0)
    dm = datamodule
    shape = {} if shape_from_data else dict(num_bands=dm.num_bands, num_classes=dm.num_classes,
                                            patch_size=dm.patch_size, class_names=dm.class_names)
    task = HSIClassifier(model=model, max_epochs=1, **shape)
    trainer = quiet_trainer(max_epochs=1, limit_train_batches=batches, limit_val_batches=0, num_sanity_val_steps=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(task, datamodule=dm)
    trainer.save_checkpoint(path)
    return Path(path)


def run_hsi_in(args: list[str], cwd: Path) -> int:
    """The ``hsi`` command run in this process from folder ``cwd`` (for session fixtures, which have no
    ``monkeypatch``); the working folder is restored after."""
    from hsi.cli import main

    here = os.getcwd()
    os.chdir(cwd)
    try:
        return main(list(args))
    finally:
        os.chdir(here)


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """Torch on one thread inside the block, restored after: many tiny networks train faster on one thread than
    on two that wait on each other on shared CI cores."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def tmpfs(mount: Path, size: str) -> Iterator[Path | None]:
    """A tmpfs of ``size`` (``"2m"``) mounted on the new folder ``mount``, unmounted after; None where mounting is
    not permitted (it needs root)."""
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
                      capture_output=True).returncode:
        yield None
        return
    try:
        yield mount
    finally:
        gc.collect()  # a failed run's memory maps, still held by its traceback, keep the mount busy
        if subprocess.run(["umount", str(mount)], capture_output=True).returncode:
            subprocess.run(["umount", "--lazy", str(mount)], check=False)  # detached once the last file closes


def load_script(path: Path, name: str) -> Any:
    """The module of a script that is not in a package (``benchmarks/tables.py``, ``scripts/readme_map.py``)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
