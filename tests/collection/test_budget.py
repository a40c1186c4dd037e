"""A label budget over a collection: N pixels per class over all its training scenes together, recorded once."""

from __future__ import annotations

import numpy as np


def _per_class(dm, mask_of):
    k = len(dm.class_names)
    return sum(np.bincount(dm.scene_labels(n)[mask_of(dm.scene_split(n))], minlength=k + 1)[1:]
               for n in dm.scene_names)


def test_the_budget_is_per_class_over_the_whole_collection(files, make_dm):
    whole, dm = make_dm(str(files["block"])), make_dm(str(files["block"]), train_per_class=3)
    for d in (whole, dm):
        d.prepare_data()
        d.setup("fit")
    available = _per_class(whole, lambda s: s.train)
    np.testing.assert_array_equal(_per_class(dm, lambda s: s.train), np.minimum(available, 3))
    for name in dm.scene_names:  # inside each scene's training pixels, its test pixels whole
        assert not (dm.scene_split(name).train & ~whole.scene_split(name).train).any()
        np.testing.assert_array_equal(dm.scene_split(name).test, whole.scene_split(name).test)
    summary = dm.split_summary()
    assert summary["budget"]["train_per_class"] == 3
    assert [r["kept"] for r in summary["budget"]["train"]] == [int(a) for a in np.minimum(available, 3) if a]
    assert summary["train_pixels"] == int(np.minimum(available, 3).sum())
