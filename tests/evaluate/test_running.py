"""The console of an evaluation: what every fold would repeat is said once."""

from __future__ import annotations

import logging
import warnings

from hsi.errors import DataQualityWarning
from hsi.evaluate.running import each_warning_once


def _fold(text: str) -> None:
    """What a fold run does: its own catch_warnings() (which clears Python's "once" registries), a warning, a log line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.warn(text, DataQualityWarning, stacklevel=1)
    logging.getLogger("hsi.training").warning("ssnet reads 7x7 patches")


def test_each_package_warning_and_log_line_is_said_once_for_all_folds(caplog):
    with warnings.catch_warnings(record=True) as shown, caplog.at_level(logging.WARNING, "hsi"):
        warnings.simplefilter("default")
        with each_warning_once():
            for _ in range(3):
                _fold("header contradicts itself")
            _fold("another file's header")
            for _ in range(2):
                warnings.warn("not the package's", UserWarning, stacklevel=1)
        texts = [str(w.message) for w in shown]
        assert texts.count("header contradicts itself") == 1 and texts.count("another file's header") == 1
        assert texts.count("not the package's") == 1  # Python's own rule for others: once per place
        assert [r.getMessage() for r in caplog.records].count("ssnet reads 7x7 patches") == 1
        with each_warning_once():  # a new evaluation says them again
            _fold("header contradicts itself")
        assert [str(w.message) for w in shown].count("header contradicts itself") == 2
    assert not logging.getLogger("hsi.training").filters


def test_a_fold_recorded_before_a_recipe_default_existed_is_another_run():
    from types import SimpleNamespace

    from hsi.evaluate.running import _recipe_defaults, _same_settings

    settings = SimpleNamespace(data={"scene": "synthetic"}, model={"model": "ssnet"},
                               run=SimpleNamespace(epochs=20, patience=10, refit=True, seed=0, precision="32-true",
                                                   accumulate_grad_batches=1))
    recorded = {"data": {"scene": "synthetic"}, "model": {"model": "ssnet", **_recipe_defaults("ssnet")},
                "run": {"epochs": 20, "patience": 10, "refit": True, "seed": 0}}
    assert _same_settings(recorded, settings, _recipe_defaults("ssnet")) is None
    older = {**recorded, "model": {k: v for k, v in recorded["model"].items() if k != "pretrain"}}
    differs = _same_settings(older, settings, _recipe_defaults("ssnet"))
    assert differs == "pretrain=None where this evaluation asks for True"
    assert _recipe_defaults("svm") == {}


def test_a_fold_recorded_before_precision_existed_counts_as_float32_with_one_batch_per_step():
    from types import SimpleNamespace

    from hsi.evaluate.running import _same_settings

    def settings(**run):
        base = dict(epochs=20, patience=10, refit=True, seed=0, precision="32-true", accumulate_grad_batches=1)
        return SimpleNamespace(data={"scene": "synthetic"}, model={"model": "ssnet"},
                               run=SimpleNamespace(**{**base, **run}))

    older = {"data": {"scene": "synthetic"}, "model": {"model": "ssnet"},
             "run": {"epochs": 20, "patience": 10, "refit": True, "seed": 0}}  # no precision, no accumulation
    assert _same_settings(older, settings(), {}) is None
    assert _same_settings(older, settings(precision="bf16-mixed"), {}) == (
        "precision='32-true' where this evaluation asks for 'bf16-mixed'")
    newer = {**older, "run": {**older["run"], "precision": "bf16-mixed", "accumulate_grad_batches": 2}}
    assert _same_settings(newer, settings(precision="bf16-mixed"), {}) == (
        "accumulate_grad_batches=2 where this evaluation asks for 1")
