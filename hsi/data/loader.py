"""``HSIDataLoader``: a ``DataLoader`` that keeps the dataset's augmentation epoch in sync.

Each time an epoch's iterator is created, the dataset's epoch is set from the sampler's
``epoch`` (our samplers, Lightning's injected ``DistributedSampler`` and its wrapper all
have one; Lightning calls their ``set_epoch`` before creating the iterator). The dataset
keeps the epoch in shared memory, so persistent workers see it as well. Augmentation
randomness is ``f(seed, epoch, index)``: the same batches for any ``num_workers``.
"""

from __future__ import annotations

from typing import Any

from torch.utils.data import DataLoader

__all__ = ["HSIDataLoader", "sampler_epoch"]


def sampler_epoch(loader: DataLoader) -> int | None:
    """The ``epoch`` of the loader's sampler (or batch sampler's sampler), if it has one."""
    for s in (getattr(getattr(loader, "batch_sampler", None), "sampler", None), getattr(loader, "sampler", None)):
        epoch = getattr(s, "epoch", None)
        if isinstance(epoch, int):
            return epoch
    return None


class HSIDataLoader(DataLoader):
    """``DataLoader`` whose ``__iter__`` sets ``dataset.set_epoch(sampler.epoch)`` first."""

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch of the sampler (shuffle) and of the dataset (augmentation)."""
        for s in {id(x): x for x in (self.sampler, getattr(self.batch_sampler, "sampler", None)) if x is not None}.values():
            if callable(getattr(s, "set_epoch", None)):
                s.set_epoch(epoch)
        if callable(getattr(self.dataset, "set_epoch", None)):
            self.dataset.set_epoch(epoch)

    def __iter__(self) -> Any:
        epoch = sampler_epoch(self)
        if epoch is not None and callable(getattr(self.dataset, "set_epoch", None)):
            self.dataset.set_epoch(epoch)
        return super().__iter__()
