"""The training loader never yields a lone final batch; evaluation loaders keep every pixel."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DistributedSampler, SequentialSampler, TensorDataset

from hsi.data import EpochShuffleSampler, HSIDataLoader
from hsi.data.loader import LoneTailMergingBatchSampler
from hsi.errors import SplitError


def _ids(n: int) -> TensorDataset:
    return TensorDataset(torch.arange(n))


@pytest.mark.parametrize(("n", "batch_size"), [(33, 32), (65, 32), (64, 32), (70, 32), (1, 32), (5, 1), (2, 2)])
def test_merging_batch_sampler_yields_every_index_once_without_a_lone_tail(n, batch_size):
    sampler = LoneTailMergingBatchSampler(SequentialSampler(range(n)), batch_size, drop_last=False)
    batches = list(sampler)
    assert sorted(i for b in batches for i in b) == list(range(n))
    assert len(sampler) == len(batches)
    if n > 1 and batch_size > 1:
        assert min(map(len, batches)) > 1
    assert max(map(len, batches)) <= batch_size + 1


@pytest.mark.parametrize("workers", [0, 2])
def test_train_style_loader_covers_each_index_once_per_epoch(workers):
    n, batch_size = 97, 32  # 97 = 3 * 32 + 1: a lone final batch without the merge
    ds = _ids(n)
    loader = HSIDataLoader(ds, batch_size=batch_size, sampler=EpochShuffleSampler(ds, seed=0),
                           num_workers=workers, merge_lone_tail=True)
    assert isinstance(loader.sampler, EpochShuffleSampler)  # what Lightning inspects is unchanged
    for epoch in (0, 1):
        loader.set_epoch(epoch)
        batches = [b[0].tolist() for b in loader]
        assert [len(b) for b in batches] == [32, 32, 33]
        assert sorted(i for b in batches for i in b) == list(range(n))
        assert len(loader) == 3


def test_without_the_flag_the_loader_is_plain():
    loader = HSIDataLoader(_ids(33), batch_size=32)
    assert [len(b[0]) for b in loader] == [32, 1] and len(loader) == 2


@pytest.mark.parametrize("in_hook", [False, True])
def test_lightning_injected_distributed_sampler_keeps_the_merge(in_hook):
    """Lightning re-creates the loader around its sampler, from saved arguments (in a hook) or attributes."""
    from contextlib import nullcontext

    from lightning.fabric.utilities.data import _replace_dunder_methods, _update_dataloader
    from torch.utils.data import BatchSampler, DataLoader

    n, world = 130, 2  # 65 per rank = 2 * 32 + 1
    ds = _ids(n)
    hook = _replace_dunder_methods(DataLoader, "dataset") if in_hook else nullcontext()
    with hook, (_replace_dunder_methods(BatchSampler) if in_hook else nullcontext()):
        loader = HSIDataLoader(ds, batch_size=32, sampler=EpochShuffleSampler(ds, seed=0), merge_lone_tail=True)
    assert hasattr(loader, "__pl_saved_kwargs") == in_hook
    seen: list[int] = []
    for rank in range(world):
        injected = _update_dataloader(loader, DistributedSampler(ds, num_replicas=world, rank=rank, seed=0))
        assert isinstance(injected, HSIDataLoader) and isinstance(injected.sampler, DistributedSampler)
        batches = [b[0].tolist() for b in injected]
        assert [len(b) for b in batches] == [32, 33] and len(injected) == 2
        seen += [i for b in batches for i in b]
    assert sorted(seen) == list(range(n))


def test_datamodule_train_loader_merges_and_eval_loaders_keep_every_pixel(make_dm):
    dm = make_dm()
    dm.setup("fit")
    n = len(dm.train_dataset)
    batch_size = n - 1  # batches of n - 1 and 1: the lone one is merged
    dm = make_dm(batch_size=batch_size)
    dm.setup("fit")
    train = dm.train_dataloader()
    sizes = [len(y) for _, y in train]
    assert sizes == [n] and len(train) == 1
    for name in ("val", "test"):
        ds = getattr(dm, f"{name}_dataset")
        loader = getattr(dm, f"{name}_dataloader")()
        assert sum(len(y) for _, y in loader) == len(ds)  # no pixel left out of evaluation
    dm.hparams.predict_on = "labeled"
    predict = dm.predict_dataloader()
    assert sum(len(c) for _, _, c in predict) == len(dm.predict_dataset)


def test_a_training_split_of_one_pixel_is_a_clear_error():
    from hsi.data.datamodule import check_trainable_size

    with pytest.raises(SplitError, match=r"holds 1 labelled pixel.*at least 2.*batch normalisation"):
        check_trainable_size(1)
    with pytest.raises(SplitError, match=r"at least 4 \(2 processes"):
        check_trainable_size(3, num_replicas=2)
    check_trainable_size(2)
