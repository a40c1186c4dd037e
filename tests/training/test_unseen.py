"""Scores that leave out classes no training scene had."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score

from hsi.errors import OptionError
from hsi.training.results import score
from hsi.training.unseen import score_seen, unseen_message

NAMES = ["water", "trees", "soil", "roofs"]


@pytest.fixture
def predictions() -> tuple[np.ndarray, np.ndarray]:
    """True / predicted 0-based labels; class 3 ('roofs') is never trained."""
    rng = np.random.default_rng(0)
    y_true = np.repeat([0, 1, 2, 3], [50, 30, 20, 40])
    y_pred = y_true.copy()
    wrong = rng.random(y_true.size) < 0.2
    y_pred[wrong] = rng.integers(0, 3, wrong.sum())
    y_pred[y_true == 3] = np.repeat([1, 2, 0], [25, 10, 5])  # the model cannot say "roofs"
    return y_true, y_pred


def test_unseen_pixels_are_left_out_of_oa_aa_and_kappa(predictions):
    y_true, y_pred = predictions
    result = score_seen(y_true, y_pred, NAMES, trained=["water", "trees", "soil"])
    seen = y_true != 3
    assert result["oa"] == pytest.approx(np.mean(y_true[seen] == y_pred[seen]))
    assert result["aa"] == pytest.approx(balanced_accuracy_score(y_true[seen], y_pred[seen]))
    assert result["kappa"] == pytest.approx(cohen_kappa_score(y_true[seen], y_pred[seen]))
    assert result["oa"] > score(y_true, y_pred, 4)["oa"]  # counted as usual, roofs drag it down
    for key in ("oa", "aa", "kappa", "per_class", "support", "confusion"):
        assert result[key] == score(y_true[seen], y_pred[seen], 4)[key]
    assert result["per_class"][3] is None and result["support"][3] == 0
    assert result["confusion"][3] == [0, 0, 0, 0]
    assert result["scored_classes"] == ["water", "trees", "soil"]


def test_unseen_classes_are_reported_with_what_they_were_predicted_as(predictions):
    y_true, y_pred = predictions
    result = score_seen(y_true, y_pred, NAMES, trained=["water", "trees", "soil"])
    assert result["unseen_classes"] == {"roofs": {"pixels": 40, "predicted_as": {"trees": 25, "soil": 10, "water": 5}}}
    assert list(result["unseen_classes"]["roofs"]["predicted_as"]) == ["trees", "soil", "water"]  # most first
    json.dumps(result)


def test_all_classes_trained_equals_score(predictions):
    y_true, y_pred = predictions
    assert {k: v for k, v in score_seen(y_true, y_pred, NAMES, trained=NAMES).items()
            if k not in ("scored_classes", "unseen_classes")} == score(y_true, y_pred, 4)
    result = score_seen(y_true, y_pred, NAMES, trained=list(reversed(NAMES)))
    assert result["unseen_classes"] == {} and result["scored_classes"] == NAMES


def test_a_trained_class_without_test_pixels_is_not_averaged(predictions):
    y_true, y_pred = predictions
    keep = y_true != 2
    result = score_seen(y_true[keep], y_pred[keep], NAMES, trained=["water", "trees", "soil"])
    seen = (y_true[keep] != 3)
    t, p = y_true[keep][seen], y_pred[keep][seen]
    assert result["aa"] == pytest.approx(np.mean([np.mean(p[t == k] == k) for k in (0, 1)]))
    assert result["per_class"][2] is None


def test_an_unseen_class_without_test_pixels_is_not_reported(predictions):
    y_true, y_pred = predictions
    keep = y_true != 3
    result = score_seen(y_true[keep], y_pred[keep], NAMES, trained=["water", "trees", "soil"])
    assert result["unseen_classes"] == {}
    assert unseen_message(result["unseen_classes"]) is None


def test_bad_arguments_name_the_problem():
    with pytest.raises(OptionError, match="trained.*'lava'"):
        score_seen([0], [0], NAMES, trained=["lava"])
    with pytest.raises(OptionError, match="y_pred"):
        score_seen([0, 1], [0, 4], NAMES, trained=NAMES)


def test_message_names_the_classes_and_pixel_counts(predictions):
    y_true, y_pred = predictions
    unseen = score_seen(y_true, y_pred, NAMES, trained=["water", "soil"])["unseen_classes"]
    message = unseen_message(unseen)
    assert message is not None and "\n" not in message
    assert "2 test classes" in message
    assert "'trees' (30 pixels" in message and "'roofs' (40 pixels, mostly predicted as 'trees')" in message
    assert "OA, AA and kappa" in message


def test_a_run_whose_test_pixels_are_all_unseen_writes_strict_json_with_null_and_a_reason(tmp_path, capsys):
    """Held-out scene ``south`` named with classes no training scene has: nothing can be scored (no bare NaN)."""
    import yaml

    from tests.collection.conftest import TRAIN
    from tests.collection.data import make_files
    from tests.helpers import run_hsi_in

    files = make_files(tmp_path / "data")
    doc = yaml.safe_load(files["scene"].read_text())
    south = next(s for s in doc["scenes"] if s["name"] == "south")
    south["classes"] = {f"class_{k}": f"south-only-{k}" for k in range(1, 5)}
    (tmp_path / "data" / "unseen.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))

    def refuse(name):
        raise AssertionError(f"metrics.json holds the non-JSON constant {name}")

    out = tmp_path / "run"
    assert run_hsi_in(["train", "--scenes", "unseen.yaml", *TRAIN, "--out", str(out)], tmp_path / "data") == 0
    metrics = json.loads((out / "metrics.json").read_text(), parse_constant=refuse)
    for key in ("oa", "aa", "kappa"):
        assert metrics[key] is None and metrics[f"{key}_reason"] == "no test pixel of a class the model was trained on"
    assert metrics["scenes"]["south"]["oa"] is None and "scene south" in metrics["scenes"]["south"]["oa_reason"]
    assert set(metrics["unseen_classes"]) == {f"south-only-{k}" for k in range(1, 5)}
    assert "OA, AA and kappa: n/a, no test pixel of a class the model was trained on" in capsys.readouterr().out
