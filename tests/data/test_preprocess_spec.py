"""Every preprocessing option reaches every path: one scene, a collection, inference, the doctor.

The options are read from :class:`hsi.preprocess.PreprocessSpec` (each with its example value), so
a new option is tested here without editing this file, and a DataModule argument that changes the
cached arrays but is neither a spec field nor a known non-preprocessing argument fails: an option
cannot be dropped silently on its way to the fitted pipeline.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from hsi._roles import roles
from hsi.preprocess import PreprocessSpec
from tests.data.conftest import SMALL
from tests.helpers import ready_datamodule, train_checkpoint

#: recipe arguments of the DataModule that are not preprocessing, each with where it acts instead
NOT_PREPROCESSING = {
    "split": "the split", "block_size": "the split", "buffer": "the split", "fractions": "the split",
    "split_seed": "the split", "folds": "the split", "fold": "the split", "train_per_class": "the label budget",
    "train_fraction": "the label budget", "val_budget": "the label budget", "patch_size": "the windows",
    "padding": "the windows", "cache": "the storage", "wavelength_range": "the bands read (before any fit)",
}

OPTIONS = PreprocessSpec.option_names()
EXAMPLES = {f.name: f.metadata["example"] for f in dataclasses.fields(PreprocessSpec) if f.name in OPTIONS}
SINGLE = dict(scene="synthetic", scene_options=dict(SMALL), block_size=8, patch_size=5, batch_size=16, seed=0)
COLLECTION = dict(scenes=[{"name": "a", "scene": "synthetic", "scene_options": SMALL},
                          {"name": "b", "scene": "synthetic", "scene_options": {**SMALL, "seed": 4}}],
                  block_size=8, patch_size=5, batch_size=16, seed=0)


def _steps(pipeline) -> str:
    """The steps' classes and parameters (tuples and lists alike: a loaded state holds lists)."""
    return json.dumps([(type(step).__name__, step.get_params(deep=False)) for step in pipeline.steps], sort_keys=True)


def test_every_recipe_argument_is_a_preprocessing_option_or_known_to_act_elsewhere():
    from hsi.data import HSIDataModule

    recipe = {name for name, role in roles(HSIDataModule).items() if role.kind == "recipe"}
    unknown = recipe - set(OPTIONS) - set(NOT_PREPROCESSING)
    assert not unknown, (f"DataModule arguments {sorted(unknown)} change the cache but are not fields of "
                         "PreprocessSpec: they would never reach the fitted pipeline")
    assert set(OPTIONS) <= recipe, "a PreprocessSpec option without its HSIDataModule argument"


def test_every_option_has_an_example_other_than_its_default():
    defaults = PreprocessSpec()
    for name, example in EXAMPLES.items():
        assert PreprocessSpec(**{name: example}) != defaults, name


@pytest.mark.parametrize("name", OPTIONS)
@pytest.mark.parametrize("arguments", [SINGLE, COLLECTION], ids=["single", "collection"])
def test_an_option_reaches_the_fitted_pipeline_and_the_record(name, arguments):
    default = ready_datamodule(**arguments)
    changed = ready_datamodule(**arguments, **{name: EXAMPLES[name]})
    spec = PreprocessSpec.from_options(changed.preprocessing)
    assert getattr(spec, name) == getattr(PreprocessSpec(**{name: EXAMPLES[name]}), name)  # recorded as given
    assert _steps(changed.pipeline) == _steps(spec.pipeline())  # what runs is what is recorded
    assert _steps(changed.pipeline) != _steps(default.pipeline)


@pytest.mark.parametrize("name", OPTIONS)
def test_an_option_reaches_inference_through_the_checkpoint(name, tmp_path):
    from hsi.infer.checkpoint import load_checkpoint

    dm = ready_datamodule(**SINGLE, **{name: EXAMPLES[name]})
    model = load_checkpoint(train_checkpoint(tmp_path / "m.ckpt", dm, "cnn2d", batches=1))
    assert model.pipeline.to_state() == dm.pipeline.to_state()
    assert _steps(model.pipeline) == _steps(PreprocessSpec.from_options(dm.preprocessing).pipeline())


@pytest.mark.parametrize("name", OPTIONS)
def test_the_doctors_refit_uses_the_option(name):
    from hsi.doctor.normalization import REFIT_TOLERANCE, check_normalization

    dm = ready_datamodule(**SINGLE, **{name: EXAMPLES[name]})
    result = check_normalization(dm)
    assert result.values["refit_difference"] <= REFIT_TOLERANCE
