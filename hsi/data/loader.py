"""``HSIDataLoader``: a ``DataLoader`` that keeps the dataset's augmentation epoch in sync.

Each time an epoch's iterator is created, the dataset's epoch is set from the sampler's
``epoch`` (our samplers, Lightning's injected ``DistributedSampler`` and its wrapper all
have one; Lightning calls their ``set_epoch`` before creating the iterator). The dataset
keeps the epoch in shared memory, so persistent workers see it as well. Augmentation
randomness is ``f(seed, epoch, index)``: the same batches for any ``num_workers``.

``merge_lone_tail=True`` (the DataModule's training loader) folds a final batch of one
sample into the batch before it (:class:`LoneTailMergingBatchSampler`): batch
normalisation cannot train on a batch of one (``Expected more than 1 value per channel
when training``), and dropping it would leave a pixel out of the epoch. ``loader.sampler``
and ``loader.batch_sampler`` stay what torch built, so Lightning still injects its
``DistributedSampler`` (the merge then applies to each rank's shard) and still keeps ours.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torch.utils.data import BatchSampler, DataLoader, Dataset

__all__ = ["HSIDataLoader", "LoneTailMergingBatchSampler", "sampler_epoch"]


def sampler_epoch(loader: DataLoader) -> int | None:
    """The ``epoch`` of the loader's sampler (or batch sampler's sampler), if it has one."""
    for s in (getattr(getattr(loader, "batch_sampler", None), "sampler", None), getattr(loader, "sampler", None)):
        epoch = getattr(s, "epoch", None)
        if isinstance(epoch, int):
            return epoch
    return None


class LoneTailMergingBatchSampler(BatchSampler):
    """``BatchSampler`` whose final batch of one sample joins the batch before it.

    Every index of ``sampler`` is still yielded once per epoch; only the last two batches
    become one of ``batch_size + 1``. A sampler of one index yields that lone batch (there
    is nothing to merge it with). Same signature as ``BatchSampler``, so Lightning can
    rebuild it around an injected sampler.
    """

    def __iter__(self) -> Iterator[list[int]]:
        previous: list[int] | None = None
        for batch in super().__iter__():
            if previous is not None and len(batch) == 1 < self.batch_size:
                batch = list(previous) + list(batch)  # the last batch: merge, yield below
            elif previous is not None:
                yield previous
            previous = batch
        if previous is not None:
            yield previous

    def __len__(self) -> int:
        full, rest = divmod(len(self.sampler), self.batch_size)  # type: ignore[arg-type]
        if self.drop_last or rest == 0:
            return full
        return full if rest == 1 and full > 0 else full + 1


class HSIDataLoader(DataLoader):
    """``DataLoader`` whose ``__iter__`` sets ``dataset.set_epoch(sampler.epoch)`` first.

    Parameters
    ----------
    dataset, *args, **kwargs : as for ``DataLoader``
    merge_lone_tail : bool
        Fold a final batch of one sample into the previous batch (for training loaders:
        batch normalisation needs more than one sample). Needs ``batch_size`` (not a
        ``batch_sampler``).
    """

    def __init__(self, dataset: Dataset, *args: Any, merge_lone_tail: bool = False, **kwargs: Any) -> None:
        super().__init__(dataset, *args, **kwargs)
        # An attribute named as the argument: Lightning re-creates loaders from those.
        self.merge_lone_tail = bool(merge_lone_tail)

    @property
    def _index_sampler(self) -> Any:
        # What torch's iterators and ``__len__`` draw batches from. Overridden here rather
        # than passing ``batch_sampler=``, which would make ``self.sampler`` a
        # SequentialSampler and let Lightning replace our DistributedSampler subclass.
        index_sampler = super()._index_sampler
        if getattr(self, "merge_lone_tail", False) and type(index_sampler) is BatchSampler:
            s = index_sampler
            return LoneTailMergingBatchSampler(s.sampler, s.batch_size, s.drop_last)
        return index_sampler

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
