"""hsi.infer.truth: a label map's classes matched to a checkpoint's by name, whatever their order or set."""

from __future__ import annotations

import numpy as np
import pytest

from hsi._checks import parse_class_mapping
from hsi.errors import ClassMatchError, OptionError
from hsi.infer.metrics import map_metrics
from hsi.infer.truth import match_classes

CHECKPOINT = ["Tree", "Water", "Soil"]


def _raw(ids, shape=(6, 6), seed=0):
    """A label map drawing from ``ids`` (0 included: unlabelled pixels)."""
    return np.random.default_rng(seed).choice([0, *ids], size=shape)


def test_shuffled_names_are_matched_by_name_not_position():
    raw = _raw([1, 2, 3])
    names = {1: "Soil", 2: "Tree", 3: "Water"}  # another order than the checkpoint's
    matched = match_classes(raw, names, CHECKPOINT, [1, 2, 3], "labels x")
    expected = np.select([raw == 1, raw == 2, raw == 3], [3, 1, 2], 0)
    np.testing.assert_array_equal(matched.labels, expected)
    assert matched.record["method"] == "name" and matched.record["unknown"] == [] and matched.record["absent"] == []
    assert matched.class_names == CHECKPOINT


def test_extra_classes_come_after_the_checkpoints_and_missing_ones_are_listed():
    raw = _raw([4, 7, 9])
    names = {4: "Water", 7: "Rock", 9: "Road"}
    matched = match_classes(raw, names, CHECKPOINT, [1, 2, 3], "labels x")
    assert matched.class_names == ["Tree", "Water", "Soil", "Rock", "Road"]
    np.testing.assert_array_equal(matched.labels, np.select([raw == 4, raw == 7, raw == 9], [2, 4, 5], 0))
    assert matched.record["unknown"] == ["Rock", "Road"] and matched.record["absent"] == ["Tree", "Soil"]
    assert matched.record["matched"] == {"Water": "Water"}


def test_scores_cover_shared_classes_and_report_the_others_without_a_crash():
    """Ids past the checkpoint's count (the crash of 'cannot reshape array of size 48 into shape (3,3)')."""
    truth = np.array([[1, 2, 7, 9], [1, 2, 7, 9]])
    matched = match_classes(truth, {1: "Tree", 2: "Water", 7: "Rock", 9: "Road"}, CHECKPOINT, [1, 2, 3], "t")
    predicted = np.array([[1, 1, 2, 3], [1, 2, 2, 3]])  # the checkpoint's ids 1..3
    metrics = map_metrics(matched.labels, predicted, matched.class_names, None, CHECKPOINT)
    scores = metrics["labeled"]
    assert scores["pixels"] == 4  # the 4 pixels of Tree and Water
    assert scores["per_class"]["Tree"] == 1.0 and scores["per_class"]["Water"] == 0.5
    assert scores["per_class"]["Rock"] is None and scores["unseen_pixels"] == 4
    assert scores["unseen_classes"] == {"Rock": {"pixels": 2, "predicted_as": {"Water": 2}},
                                        "Road": {"pixels": 2, "predicted_as": {"Soil": 2}}}
    assert scores["oa"] == pytest.approx(3 / 4)


def test_unnamed_classes_match_by_id_only_when_the_counts_agree():
    raw = _raw([1, 2, 3])
    matched = match_classes(raw, None, CHECKPOINT, [1, 2, 3], "labels gt.mat")
    np.testing.assert_array_equal(matched.labels, raw)
    assert matched.record["method"] == "id" and "by id" in matched.record["note"]
    # the checkpoint's own ids in its training file (label values 10, 20, 30)
    raw10 = raw * 10
    np.testing.assert_array_equal(match_classes(raw10, None, CHECKPOINT, [10, 20, 30], "g").labels, raw)
    with pytest.raises(ClassMatchError) as caught:
        match_classes(_raw([1, 2, 3, 4]), None, CHECKPOINT, [1, 2, 3], "labels gt.mat")
    message = str(caught.value)
    assert "labels gt.mat names none of its 4 classes" in message and "Tree, Water, Soil" in message
    assert "--classes class_1=Tree class_2=Water class_3=Soil" in message


def test_a_checkpoints_own_unnamed_file_matches_itself_by_name():
    """Training calls the classes of a file without names class_<id>: the same file matches by name."""
    raw = _raw([2, 5])
    matched = match_classes(raw, None, ["class_2", "class_5"], [2, 5], "gt.mat")
    assert matched.record["method"] == "name"
    np.testing.assert_array_equal(matched.labels, np.select([raw == 2, raw == 5], [1, 2], 0))


def test_named_classes_sharing_nothing_are_refused_with_both_lists():
    with pytest.raises(ClassMatchError, match=r"none of the classes of scene 'x' \(Rock, Road\) is one of the "
                                              r"checkpoint's \(Tree, Water, Soil\)"):
        match_classes(_raw([1, 2]), {1: "Rock", 2: "Road"}, CHECKPOINT, [1, 2, 3], "scene 'x'")


def test_a_mapping_renames_and_merges_before_matching():
    raw = _raw([1, 2, 3, 4])
    names = {1: "oak", 2: "pine", 3: "lake", 4: "Rock"}
    mapping = parse_class_mapping(["oak=Tree", "pine=Tree", "lake=Water"])
    matched = match_classes(raw, names, CHECKPOINT, [1, 2, 3], "l", mapping)
    np.testing.assert_array_equal(matched.labels, np.select([raw == 1, raw == 2, raw == 3, raw == 4], [1, 1, 2, 4], 0))
    assert matched.class_names == ["Tree", "Water", "Soil", "Rock"]
    # an unnamed file is named through its class_<id> names
    unnamed = match_classes(raw, None, CHECKPOINT, [1, 2, 3], "l", {"class_4": "Soil"})
    assert unnamed.record["matched"] == {"class_4": "Soil"}


@pytest.mark.parametrize("items, message", [
    (["oak"], "THEIRS=OURS"), (["=Tree"], "THEIRS=OURS"), (["a=Tree", "a=Soil"], "given twice")])
def test_malformed_mappings_are_refused(items, message):
    with pytest.raises(OptionError, match=message):
        parse_class_mapping(items)


def test_a_mapping_naming_a_class_neither_side_has_is_refused():
    raw = _raw([1, 2])
    with pytest.raises(OptionError, match=r"did you mean 'oak'"):
        match_classes(raw, {1: "oak", 2: "lake"}, CHECKPOINT, [1, 2, 3], "l", {"oaks": "Tree"})
    with pytest.raises(OptionError, match=r"one of the checkpoint's classes on the right; did you mean 'Tree'"):
        match_classes(raw, {1: "oak", 2: "lake"}, CHECKPOINT, [1, 2, 3], "l", {"oak": "Trees"})
