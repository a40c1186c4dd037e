"""The label budget: N pixels (or a fraction) per class drawn from the training blocks only, seeded, nested."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hsi.errors import LabelBudgetWarning, OptionError
from hsi.preprocess import block_split
from hsi.preprocess.budget import Budget, apply_budget


@pytest.fixture
def split_of(parcels):
    """``(labels, split)``: a block split with a buffer of the default parcel map."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return parcels, block_split(parcels, block_size=16, fractions=(0.6, 0.2, 0.2), buffer=2, seed=0)


def budgeted(labels, split, **budget):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabelBudgetWarning)
        return apply_budget([labels], [split], Budget(**budget))[0]


def per_class(labels, mask):
    return np.bincount(labels[mask], minlength=labels.max() + 1)[1:]


def test_each_class_keeps_exactly_n_or_all_it_has(split_of):
    labels, split = split_of
    out = budgeted(labels, split, per_class=20, seed=3)
    available = per_class(labels, split.train)
    assert available.max() > 20  # the budget cuts some class ...
    np.testing.assert_array_equal(per_class(labels, out.train), np.minimum(available, 20))
    np.testing.assert_array_equal(out.counts["train"], np.minimum(available, 20))
    record = out.params["budget"]
    assert record["train_per_class"] == 20 and record["seed"] == 3
    assert [(r["class"], r["available"], r["kept"]) for r in record["train"]] == [
        (k + 1, int(a), int(min(a, 20))) for k, a in enumerate(available) if a]


def test_drawn_pixels_lie_in_the_training_blocks_and_test_is_untouched(split_of):
    labels, split = split_of
    out = budgeted(labels, split, per_class=5, seed=1)
    assert out.train.any() and not (out.train & ~split.train).any()  # never from val/test blocks or the buffer
    assert not (out.train & split.buffer).any()
    np.testing.assert_array_equal(out.test, split.test)
    np.testing.assert_array_equal(out.buffer, split.buffer)


def test_the_same_seed_gives_the_same_pixels_another_seed_others(split_of):
    labels, split = split_of
    a, b = budgeted(labels, split, per_class=5, seed=7), budgeted(labels, split, per_class=5, seed=7)
    c = budgeted(labels, split, per_class=5, seed=8)
    np.testing.assert_array_equal(a.train, b.train)
    np.testing.assert_array_equal(a.val, b.val)
    assert (a.train != c.train).any()
    np.testing.assert_array_equal(per_class(labels, a.train), per_class(labels, c.train))


def test_smaller_budgets_are_nested_in_larger_ones(split_of):
    labels, split = split_of
    small, large = budgeted(labels, split, per_class=5, seed=2), budgeted(labels, split, per_class=15, seed=2)
    assert not (small.train & ~large.train).any()


def test_validation_gets_the_same_budget_by_default(split_of):
    labels, split = split_of
    out = budgeted(labels, split, per_class=4, seed=0)
    np.testing.assert_array_equal(per_class(labels, out.val), np.minimum(per_class(labels, split.val), 4))
    assert not (out.val & ~split.val).any()
    assert out.params["budget"]["val_budget"] == "same"
    assert [r["kept"] for r in out.params["budget"]["val"]] == [min(r["available"], 4)
                                                             for r in out.params["budget"]["val"]]


def test_validation_all_keeps_every_val_pixel_and_none_keeps_none(split_of):
    labels, split = split_of
    every = budgeted(labels, split, per_class=4, val="all")
    none = budgeted(labels, split, per_class=4, val="none")
    np.testing.assert_array_equal(every.val, split.val)
    assert not none.val.any() and none.counts["val"].sum() == 0
    np.testing.assert_array_equal(every.train, none.train)  # the training draw does not depend on the val rule
    assert none.params["budget"]["val"] is None


def test_a_fraction_keeps_that_share_of_each_class_rounded_at_least_one(split_of):
    labels, split = split_of
    out = budgeted(labels, split, fraction=0.1, seed=0)
    available = per_class(labels, split.train)
    expected = np.where(available > 0, np.maximum(1, np.floor(0.1 * available + 0.5)), 0).astype(int)
    np.testing.assert_array_equal(per_class(labels, out.train), expected)
    np.testing.assert_array_equal(budgeted(labels, split, fraction=1.0).train, split.train)


def test_short_classes_are_named_in_one_warning(split_of):
    labels, split = split_of
    available = per_class(labels, split.train)
    n = int(np.sort(available[available > 0])[1]) + 1  # more than the two smallest classes have
    with pytest.warns(LabelBudgetWarning) as caught:
        apply_budget([labels], [split], Budget(per_class=n, val="none"))
    assert len(caught) == 1
    short = [k + 1 for k, a in enumerate(available) if 0 < a < n]
    assert len(short) >= 2 and all(f"class {k} ({available[k - 1]})" in str(caught[0].message) for k in short)


def test_no_budget_changes_nothing(split_of):
    labels, split = split_of
    (out,) = apply_budget([labels], [split], Budget())
    assert out is split


def test_a_collection_is_budgeted_per_class_over_all_its_scenes(split_of):
    labels, split = split_of
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = block_split(labels[::-1].copy(), block_size=16, fractions=(0.6, 0.2, 0.2), buffer=2, seed=1)
    a, b = apply_budget([labels, labels[::-1].copy()], [split, other], Budget(per_class=6, seed=0))
    both = per_class(labels, a.train) + per_class(labels[::-1].copy(), b.train)
    np.testing.assert_array_equal(both, 6)  # every class has more than 6 training pixels over the two scenes
    assert not (a.train & ~split.train).any() and not (b.train & ~other.train).any()
    assert a.params["budget"] == b.params["budget"]


def test_a_wider_buffer_changes_the_draw_only_where_it_took_pixels(split_of):
    labels, split = split_of
    narrow = budgeted(labels, split, per_class=5, seed=4)
    kept = narrow.train.copy()
    lost = np.zeros_like(kept)
    lost[np.argwhere(kept)[0][0], np.argwhere(kept)[0][1]] = True  # one drawn pixel falls into the buffer
    moved = type(split)(train=split.train & ~lost, val=split.val, test=split.test, buffer=split.buffer | lost,
                        counts=split.counts, params=split.params)
    wide = budgeted(labels, moved, per_class=5, seed=4)
    assert (narrow.train & ~wide.train).sum() == 1 and (wide.train & ~narrow.train).sum() == 1


@pytest.mark.parametrize(("arguments", "option"), [
    ({"per_class": 0}, "train_per_class"), ({"per_class": -5}, "train_per_class"),
    ({"per_class": 2.5}, "train_per_class"), ({"fraction": 0.0}, "train_fraction"),
    ({"fraction": 1.5}, "train_fraction"), ({"fraction": -0.1}, "train_fraction"),
    ({"per_class": 5, "fraction": 0.1}, "train_fraction"), ({"per_class": 5, "val": "half"}, "val_budget"),
])
def test_bad_budgets_are_refused_naming_the_option(arguments, option):
    with pytest.raises(OptionError, match=option):
        Budget(**arguments)
