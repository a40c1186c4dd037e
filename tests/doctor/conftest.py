"""A tiny synthetic pipeline for the doctor checks, and ways to break it on purpose."""

from __future__ import annotations

from typing import Any

import pytest

from hsi.data import HSIDataModule
from tests.helpers import ready_datamodule

TINY = dict(scene="synthetic", scene_options=dict(height=32, width=32, bands=24, n_classes=4, seed=1),
            patch_size=5, block_size=8, batch_size=32)


def tiny_datamodule(**overrides: Any) -> HSIDataModule:
    """The tiny pipeline, set up for fit and test (in memory, no files)."""
    return ready_datamodule(**{**TINY, **overrides})


class BrokenLoaders:
    """A DataModule whose loaders' batches pass through ``fn(patches, labels) -> (patches, labels)``."""

    def __init__(self, datamodule: HSIDataModule, fn) -> None:
        self._dm, self._fn = datamodule, fn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dm, name)

    def _wrap(self, loader):
        for batch in loader:
            yield self._fn(batch[0], batch[1])

    def train_dataloader(self):
        return self._wrap(self._dm.train_dataloader())

    def val_dataloader(self):
        return self._wrap(self._dm.val_dataloader())

    def test_dataloader(self):
        return self._wrap(self._dm.test_dataloader())

    def fixed_dataloader(self, split: str):
        return self._wrap(self._dm.fixed_dataloader(split))


@pytest.fixture(scope="module")
def tiny_dm() -> HSIDataModule:
    return tiny_datamodule()


@pytest.fixture(autouse=True)
def _one_torch_thread(one_torch_thread):
    """The doctor's networks are tiny: one thread trains them faster than two that wait on each other."""
