"""Samplers whose order is a pure function of ``(seed, epoch)``, with ``set_epoch``.

- :class:`EpochShuffleSampler` — the single-process training sampler: a fresh permutation
  each epoch. It subclasses ``RandomSampler``, so under DDP Lightning replaces it with its
  own ``DistributedSampler`` (``use_distributed_sampler=True``, the default), whose
  shuffle seed is Lightning's (``PL_GLOBAL_SEED``, set by ``seed_everything``).
- :class:`ClassBalancedSampler` — a distributed-aware class-balanced sampler. It
  subclasses ``DistributedSampler``, so Lightning keeps it as is under DDP (Lightning only
  injects a sampler when the loader's sampler is not already a ``DistributedSampler``) and
  calls its ``set_epoch`` every epoch. All ranks build the same global draw for the epoch
  and take disjoint, interleaved shards of it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch
from torch.utils.data import DistributedSampler, RandomSampler

from hsi.errors import OptionError, SplitError

__all__ = ["EpochShuffleSampler", "ClassBalancedSampler", "distributed_context", "trainer_epoch"]


def distributed_context(trainer: object | None = None) -> tuple[int, int]:
    """``(num_replicas, rank)`` from a Lightning trainer, else ``torch.distributed``, else ``(1, 0)``."""
    kwargs = getattr(trainer, "distributed_sampler_kwargs", None) if trainer is not None else None
    if kwargs:
        return int(kwargs.get("num_replicas", 1)), int(kwargs.get("rank", 0))
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_world_size(), torch.distributed.get_rank()
    return 1, 0


def trainer_epoch(trainer: object | None = None) -> int:
    """The epoch a training loader built now serves first: the one Lightning's fit loop sets on its samplers.

    Lightning builds a resumed run's training loader, and creates its first iterator (whose
    creation copies the sampler's epoch into the dataset, :class:`hsi.data.HSIDataLoader`), before
    it sets the samplers' epoch: a sampler starting at 0 would give that epoch the augmentation of
    epoch 0 (and, with workers, its order). 0 without a fitting trainer.
    """
    progress = getattr(getattr(trainer, "fit_loop", None), "epoch_progress", None) if trainer is not None else None
    return int(progress.current.processed) if progress is not None else 0


class EpochShuffleSampler(RandomSampler):
    """A permutation of ``range(len(data_source))`` drawn from ``default_rng([seed, epoch])``.

    Parameters
    ----------
    data_source : a sized dataset
    seed : shuffle seed

    Call ``set_epoch(epoch)`` before each epoch (Lightning does) for a new order.
    """

    def __init__(self, data_source, seed: int = 0) -> None:  # noqa: ANN001
        super().__init__(data_source)
        self.seed = int(seed)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return len(self.data_source)

    def __iter__(self) -> Iterator[int]:
        perm = np.random.default_rng([self.seed, self.epoch]).permutation(len(self.data_source))
        return iter(perm.tolist())


class ClassBalancedSampler(DistributedSampler):
    """Class-balanced sampling, sharded disjointly over ranks, reshuffled each epoch.

    Each epoch draws ``num_samples_total`` (default: the dataset size) positions so that every
    class present gets the same share: a class with at least its share contributes
    distinct samples (a fresh random subset each epoch); a smaller class is repeated
    (whole permutations, then a random part of one). The global draw is shuffled with
    ``default_rng([seed, epoch])`` — identical on every rank — padded by wrapping to a
    multiple of ``num_replicas`` (or truncated with ``drop_last``), and rank ``r`` takes
    positions ``r, r + R, r + 2R, ...``: the shards are disjoint and together are the draw.

    Parameters
    ----------
    labels : (N,) int class index per dataset sample (negative = never drawn)
    num_replicas, rank : the shard; default from ``torch.distributed`` when initialized, else 1 and 0
    seed : draw seed
    num_samples_total : size of one epoch's global draw (default N labeled samples)
    drop_last : drop the tail instead of padding
    """

    def __init__(self, labels: np.ndarray, num_replicas: int | None = None, rank: int | None = None, seed: int = 0,
                 num_samples_total: int | None = None, drop_last: bool = False) -> None:
        labels = np.asarray(labels, dtype=np.int64).reshape(-1)
        if num_replicas is None or rank is None:
            r, k = distributed_context()
            num_replicas = r if num_replicas is None else num_replicas
            rank = k if rank is None else rank
        if not 0 <= rank < num_replicas:
            raise OptionError("rank", rank, f"an integer in [0, num_replicas={num_replicas})")
        self.labels = labels
        self.num_replicas = int(num_replicas)
        self.rank = int(rank)
        self.seed = int(seed)
        self.epoch = 0
        self.shuffle = True
        self.drop_last = bool(drop_last)
        self.dataset = labels  # for code that reads sampler.dataset
        self.classes = np.unique(labels[labels >= 0])
        if self.classes.size == 0:
            raise SplitError("ClassBalancedSampler needs at least one labeled sample (labels >= 0)")
        self.total_draw = int(num_samples_total) if num_samples_total is not None else int((labels >= 0).sum())
        if self.drop_last:
            self.num_samples = self.total_draw // self.num_replicas
        else:
            self.num_samples = -(-self.total_draw // self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def global_draw(self, epoch: int | None = None) -> np.ndarray:
        """The epoch's global draw (all ranks), before padding: ``(num_samples_total,)`` indices."""
        rng = np.random.default_rng([self.seed, self.epoch if epoch is None else int(epoch)])
        k = self.classes.size
        quota = np.full(k, self.total_draw // k)
        quota[rng.permutation(k)[: self.total_draw % k]] += 1
        parts = []
        for c, q in zip(self.classes, quota):
            members = np.flatnonzero(self.labels == c)
            reps = -(-int(q) // members.size)
            stream = np.concatenate([rng.permutation(members) for _ in range(max(reps, 1))])
            parts.append(stream[:q])
        draw = np.concatenate(parts)
        return draw[rng.permutation(draw.size)]

    def __iter__(self) -> Iterator[int]:
        draw = self.global_draw()
        if self.drop_last:
            draw = draw[: self.total_size]
        elif draw.size < self.total_size:
            draw = np.resize(draw, self.total_size)  # wraps around, like DistributedSampler
        return iter(draw[self.rank : self.total_size : self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.num_samples
