from __future__ import annotations

import numpy as np
import pytest

from hsi.data import ClassBalancedSampler, EpochShuffleSampler


def test_balanced_sampler_shards_are_disjoint_and_cover_the_draw():
    labels = np.repeat(np.arange(4), [300, 100, 50, 25])
    labels = np.concatenate([labels, [-1] * 10])  # unlabeled samples are never drawn
    world = 3
    samplers = [ClassBalancedSampler(labels, num_replicas=world, rank=r, seed=1) for r in range(world)]
    for epoch in (0, 1):
        for s in samplers:
            s.set_epoch(epoch)
        shards = [list(s) for s in samplers]
        assert all(len(sh) == len(samplers[0]) for sh in shards)
        draw = samplers[0].global_draw()
        total = samplers[0].total_size
        # positions r, r + R, ... : interleaving the shards gives back the padded draw exactly
        interleaved = np.empty(total, dtype=np.int64)
        for r, sh in enumerate(shards):
            interleaved[r::world] = sh
        np.testing.assert_array_equal(interleaved, np.resize(draw, total))
        assert total - len(draw) < world
        counts = np.bincount(labels[draw], minlength=4)
        assert counts.max() - counts.min() <= 1  # balanced classes
        assert (labels[draw] >= 0).all()
    # reshuffled per epoch
    samplers[0].set_epoch(0)
    e0 = list(samplers[0])
    samplers[0].set_epoch(1)
    assert list(samplers[0]) != e0


def test_balanced_sampler_with_equal_classes_is_a_partition():
    labels = np.repeat(np.arange(3), 20)
    shards = [set(ClassBalancedSampler(labels, num_replicas=2, rank=r, seed=0)) for r in range(2)]
    assert not shards[0] & shards[1]
    assert shards[0] | shards[1] == set(range(60))


def test_balanced_sampler_is_a_distributed_sampler_and_checks_rank():
    from torch.utils.data import DistributedSampler

    assert isinstance(ClassBalancedSampler(np.zeros(4, int), 1, 0), DistributedSampler)  # Lightning keeps it
    with pytest.raises(ValueError, match="rank"):
        ClassBalancedSampler(np.zeros(4, int), num_replicas=2, rank=2)


def test_epoch_shuffle_sampler():
    s = EpochShuffleSampler(range(50), seed=3)
    a = list(s)
    assert sorted(a) == list(range(50)) and a == list(s)
    s.set_epoch(1)
    assert list(s) != a and sorted(s) == list(range(50))
