"""Block, random and fixed splits: structure, stratification, determinism, bad input."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from hsi.errors import LeakageWarning, ShapeMismatchError, SplitError
from hsi.preprocess import (
    Split,
    StateFormatError,
    StratificationWarning,
    block_split,
    fixed_split,
    random_split,
)
from hsi.preprocess.leakage import square_dilate


def _check_structure(split: Split, labels: np.ndarray) -> None:
    masks = [split.train, split.val, split.test, split.buffer]
    for m in masks:
        assert m.dtype == bool and m.shape == labels.shape
        assert not (m & (labels == 0)).any()  # labeled pixels only
    assert (np.sum(masks, axis=0) <= 1).all()  # mutually exclusive
    k = int(labels.max())
    for j, m in enumerate(masks):
        np.testing.assert_array_equal(split.counts.values[:, j],
                                      np.bincount(labels[m], minlength=k + 1)[1:])


def test_block_split_structure_and_buffer(parcels):
    sp = block_split(parcels, block_size=16, fractions=(0.6, 0.2, 0.2), buffer=3, seed=0)
    _check_structure(sp, parcels)
    # every labeled pixel of a train block is in train or buffer; blocks are whole
    bs = 16
    blocks = (np.arange(parcels.shape[0]) // bs)[:, None] * 100 + \
        (np.arange(parcels.shape[1]) // bs)[None, :]
    for name in ("val", "test"):
        ids = np.unique(blocks[getattr(sp, name)])
        inside = np.isin(blocks, ids) & (parcels > 0)
        np.testing.assert_array_equal(inside, getattr(sp, name))
    # buffer = training candidates within 3 px (Chebyshev) of a val/test block
    held_blocks = np.isin(blocks, np.unique(blocks[sp.val | sp.test]))
    near = square_dilate(held_blocks, 3)
    assert not (sp.train & near).any()
    assert (sp.buffer == ((sp.train | sp.buffer) & near)).all()
    assert sp.buffer.any()
    assert sp.params["method"] == "block" and sp.params["buffer"] == 3
    assert sp.matches(parcels) and not sp.matches(parcels[::-1])


def test_block_split_stratifies_parcels(parcels):
    sp = block_split(parcels, block_size=8, buffer=0, seed=1)
    assert sp.unrepresented == [] and sp.warnings == []
    pre = sp.counts.values[:, :3].astype(float)
    pre[:, 0] += sp.counts["buffer"]
    share = pre / pre.sum(1, keepdims=True)
    assert np.abs(share - [0.6, 0.2, 0.2]).max() < 0.12
    assert (sp.counts["train"] > 0).all() and (sp.counts["val"] > 0).all() \
        and (sp.counts["test"] > 0).all()


def test_same_seed_same_split_different_seed_differs(parcels):
    a = block_split(parcels, 8, buffer=2, seed=3)
    b = block_split(parcels, 8, buffer=2, seed=3)
    c = block_split(parcels, 8, buffer=2, seed=4)
    for name in ("train", "val", "test", "buffer"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.test, c.test)
    with pytest.warns(LeakageWarning):
        r1, r2, r3 = (random_split(parcels, seed=s) for s in (0, 0, 1))
    np.testing.assert_array_equal(r1.train, r2.train)
    assert not np.array_equal(r1.train, r3.train)
    tr, te = parcels.copy(), parcels.copy()
    tr[:, 40:] = 0
    te[:, :40] = 0
    f1, f2, f3 = (fixed_split(tr, te, 0.3, seed=s) for s in (0, 0, 1))
    np.testing.assert_array_equal(f1.val, f2.val)
    assert not np.array_equal(f1.val, f3.val)


def test_class_in_one_block_is_reported_not_dropped(parcel_map):
    lab = parcel_map(64, 64, n_classes=3, seed=2)
    lab[lab == 3] = 1
    lab[2:6, 2:6] = 3  # class 3: 16 pixels inside a single 16x16 block
    with pytest.warns(StratificationWarning, match=r"class 3 \(16 labeled pixels\).*one 16x16 block"):
        sp = block_split(lab, block_size=16, buffer=2, seed=0)
    assert sp.unrepresented == [3]
    assert "use a smaller block_size" in sp.warnings[0]
    assert sp.counts.values[2, :3].sum() + sp.counts["buffer"][2] == 16  # still counted


def test_state_round_trip(parcels):
    sp = block_split(parcels, 16, buffer=3, seed=5)
    state = json.loads(json.dumps(sp.to_state()))
    back = Split.from_state(state)
    for name in ("train", "val", "test", "buffer"):
        np.testing.assert_array_equal(getattr(back, name), getattr(sp, name))
    np.testing.assert_array_equal(back.counts.values, sp.counts.values)
    assert back.params == sp.params and back.unrepresented == sp.unrepresented
    state["format_version"] = 7
    with pytest.raises(StateFormatError, match="unsupported format_version 7"):
        Split.from_state(state)


def test_counts_table_prints(parcels):
    sp = block_split(parcels, 16, buffer=3)
    text = str(sp.counts)
    lines = text.splitlines()
    assert lines[0].split() == ["class", "train", "val", "test", "buffer"]
    assert len(lines) == 2 + 6 + 2  # header, rule, 6 classes, rule, total
    assert lines[-1].split()[1:] == [str(v) for v in sp.counts.values.sum(0)]
    named = sp.format_counts([f"crop{k}" for k in range(1, 7)])
    assert "3 crop3" in named
    assert sp.counts.to_dict()[2]["test"] == sp.counts["test"][1]


def test_random_split_by_fraction_and_count(parcels):
    with pytest.warns(LeakageWarning, match="neighbouring pixels"):
        sp = random_split(parcels, fractions=(0.5, 0.25, 0.25), seed=0)
    _check_structure(sp, parcels)
    total = np.bincount(parcels.ravel())[1:]
    np.testing.assert_allclose(sp.counts["train"] / total, 0.5, atol=0.01)
    assert not sp.buffer.any()
    with pytest.warns(LeakageWarning):
        sp = random_split(parcels, fractions=(0.6, 0.2, 0.2), train_per_class=10, seed=0)
    assert (sp.counts["train"] == 10).all()
    np.testing.assert_allclose(sp.counts["val"], sp.counts["test"], atol=1)
    with pytest.warns(LeakageWarning):
        sp = random_split(parcels, train_per_class=0.1, seed=0)
    np.testing.assert_allclose(sp.counts["train"], np.round(0.1 * total))


def test_fixed_split(parcels):
    tr = parcels.copy()
    tr[:, 40:] = 0
    te = parcels.copy()
    te[:, :40] = 0
    assert set(np.unique(tr)) == set(np.unique(te)) == set(range(7))
    sp = fixed_split(tr, te, val_fraction=0.25, seed=0)
    _check_structure(sp, parcels)
    np.testing.assert_array_equal(sp.train | sp.val, tr > 0)
    np.testing.assert_array_equal(sp.test, te > 0)
    n = np.bincount(tr.ravel(), minlength=7)[1:]
    np.testing.assert_array_equal(sp.counts["val"], np.round(0.25 * n))
    assert sp.unrepresented == [] and not sp.buffer.any()
    # a class missing from the test map is reported
    te6 = np.where(te == 6, 0, te)
    with pytest.warns(StratificationWarning, match=r"class 6 \(\d+ labeled pixels\) has no test"):
        assert fixed_split(tr, te6).unrepresented == [6]
    with pytest.raises(ShapeMismatchError, match=r"train_labels has shape \(96, 80\).*\(80, 96\)"):
        fixed_split(tr, te.T)
    with pytest.raises(SplitError, match=r"pixels are labeled in both train_labels and test_labels"):
        fixed_split(tr, parcels)
    with pytest.raises(SplitError, match=r"val_fraction must be in \[0, 1\), found 1.5"):
        fixed_split(tr, te, val_fraction=1.5)


# ---------------------------------------------------------------------------- bad input
def test_bad_fractions(parcels):
    with pytest.raises(SplitError, match=r"fractions must sum to 1.*sum 0.9"):
        block_split(parcels, fractions=(0.5, 0.2, 0.2))
    with pytest.raises(SplitError, match="fractions must be non-negative"):
        block_split(parcels, fractions=(1.2, -0.2, 0.0))
    with pytest.raises(SplitError, match="fractions must be 3"):
        random_split(parcels, fractions=(0.5, 0.5))
    with pytest.raises(SplitError, match="train and test a positive share"):
        block_split(parcels, fractions=(0.8, 0.2, 0.0))


def test_bad_labels():
    with pytest.raises(ShapeMismatchError, match=r"labels must be a 2-D \(H, W\) label map.*\(4, 4, 2\)"):
        block_split(np.zeros((4, 4, 2), dtype=int))
    with pytest.raises(SplitError, match="integer label map.*float64"):
        block_split(np.ones((8, 8)))
    with pytest.raises(SplitError, match="negative values"):
        random_split(-np.ones((8, 8), dtype=int))
    with pytest.raises(SplitError, match="no labeled pixel"):
        block_split(np.zeros((8, 8), dtype=int))


def test_block_size_or_buffer_that_empties_a_split(parcels):
    with pytest.raises(SplitError, match=r"only 1 block\(s\) of 128x128.*3 splits.*smaller block_size"):
        block_split(parcels, block_size=128)
    # two rows of blocks: at most 2 labeled blocks can't feed 3 splits
    with pytest.raises(SplitError, match=r"use a smaller block_size"):
        block_split(parcels[:40, :40], block_size=40)
    # a buffer wider than the scene clears every training pixel
    with pytest.raises(SplitError, match=r"the train split is empty.*buffer=200.*smaller buffer"):
        block_split(parcels, block_size=16, buffer=200)
    with pytest.raises(SplitError, match=r"block_size must be an int >= 1, found 0"):
        block_split(parcels, block_size=0)
    with pytest.raises(SplitError, match=r"buffer must be an int >= 0, found -1"):
        block_split(parcels, buffer=-1)


def test_val_fraction_zero_gives_empty_val(parcels):
    with warnings.catch_warnings():
        warnings.simplefilter("error", StratificationWarning)
        sp = block_split(parcels, 16, fractions=(0.7, 0.0, 0.3), buffer=2, seed=0)
    assert not sp.val.any() and sp.train.any() and sp.test.any()


# ------------------------------------------------------------------------- real scenes
@pytest.mark.shared
@pytest.mark.parametrize("scene", ["indian_pines", "pavia_university", "salinas", "salinas_a"])
def test_real_scenes_stratified(real_labels, scene):
    lab = real_labels[scene]
    bs = 16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StratificationWarning)
        sp = block_split(lab, block_size=bs, buffer=5, seed=0)
    _check_structure(sp, lab)
    n = np.bincount(lab.ravel())[1:]
    # A class with more than block_size**2 pixels cannot fit in one block, so it can
    # reach two splits; with buffer 5 every such class must have train and test pixels.
    big = n > bs * bs
    assert (sp.counts["train"][big] > 0).all() and (sp.counts["test"][big] > 0).all()
    lacking = [k + 1 for k in range(len(n))
               if n[k] > 0 and (sp.counts["train"][k] == 0 or sp.counts["test"][k] == 0)]
    assert sp.unrepresented == lacking
    print(f"\n{scene}\n{sp.counts}")
