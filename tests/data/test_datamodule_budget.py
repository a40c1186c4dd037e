"""The DataModule's label budget: drawn after the split and buffer, the same pixels for every patch size given one
split, its own cache, the test pixels whole."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.errors import OptionError
from tests.helpers import TINY_SCENE, quiet_datamodule, ready_datamodule

TINY = {"scene_options": dict(TINY_SCENE), "block_size": 6}


def test_the_budget_draws_from_the_training_pixels_and_leaves_test_whole():
    whole = ready_datamodule(**TINY, patch_size=5)
    dm = ready_datamodule(**TINY, patch_size=5, train_per_class=3)
    base, split = whole.split, dm.split
    assert not (split.train & ~base.train).any() and split.train.sum() < base.train.sum()
    np.testing.assert_array_equal(split.test, base.test)
    counts = np.bincount(dm.labels[split.train], minlength=TINY_SCENE["n_classes"] + 1)[1:]
    available = np.bincount(dm.labels[base.train], minlength=TINY_SCENE["n_classes"] + 1)[1:]
    np.testing.assert_array_equal(counts, np.minimum(available, 3))
    assert len(dm.train_dataset) == int(counts.sum())  # the loaders serve the budget, not the blocks
    assert len(dm.test_dataset) == len(whole.test_dataset)


@pytest.mark.filterwarnings("ignore::hsi.errors.LabelBudgetWarning")  # class 1 has 3 training pixels
def test_one_split_gives_the_same_pixels_for_every_patch_size():
    small = ready_datamodule(**TINY, patch_size=3, buffer=3, train_per_class=4, seed=2)
    large = ready_datamodule(**TINY, patch_size=7, buffer=3, train_per_class=4, seed=2)
    np.testing.assert_array_equal(small.split.train, large.split.train)
    np.testing.assert_array_equal(small.split.val, large.split.val)
    other = ready_datamodule(**TINY, patch_size=3, buffer=3, train_per_class=4, seed=5)
    assert (other.split.train != small.split.train).any()


def test_a_budget_has_its_own_cache(tmp_path):
    args = {**TINY, "patch_size": 3, "cache_dir": str(tmp_path)}
    plain = ready_datamodule(**args)
    five = ready_datamodule(**args, train_per_class=5)
    tenth = ready_datamodule(**args, train_fraction=0.1)
    paths = {plain.cache_path, five.cache_path, tenth.cache_path}
    assert len(paths) == 3 and None not in paths
    again = ready_datamodule(**args, train_per_class=5)  # reopened, the same pixels
    assert again.cache_path == five.cache_path
    np.testing.assert_array_equal(again.split.train, five.split.train)


def test_the_checkpoint_state_carries_the_budgeted_split():
    dm = ready_datamodule(**TINY, patch_size=3, train_per_class=2)
    fresh = quiet_datamodule(**TINY, patch_size=3, train_per_class=2)
    fresh.load_state_dict(dm.state_dict())
    fresh.prepare_data()
    fresh.setup("fit")
    np.testing.assert_array_equal(fresh.split.train, dm.split.train)
    assert fresh.split_summary()["budget"]["train_per_class"] == 2


@pytest.mark.parametrize("arguments", [{"train_per_class": 0}, {"train_fraction": 0.0},
                                       {"train_per_class": 3, "train_fraction": 0.5}, {"val_budget": "all"}])
def test_bad_budgets_are_refused_before_any_scene_is_read(arguments):
    with pytest.raises(OptionError):
        quiet_datamodule(**TINY, **arguments)
