"""The DataModule's typed options: every field an argument of it, the recipe every recipe argument, the values
those the DataModule runs with (resolved, cast, and read again after a change to the hyperparameters)."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from hsi._roles import roles
from hsi.data import HSIDataModule
from hsi.data.module.options import DataOptions
from hsi.errors import OptionError


def test_every_field_is_an_argument_and_the_recipe_holds_every_recipe_argument():
    arguments = set(inspect.signature(HSIDataModule.__init__).parameters) - {"self"}
    fields = {f.name for f in dataclasses.fields(DataOptions)} - {"recipe"}
    assert fields <= arguments
    options = HSIDataModule(scene="synthetic").options
    assert list(options.recipe) == [n for n, role in roles(HSIDataModule).items() if role.kind == "recipe"]


def test_the_options_are_the_resolved_arguments_cast_to_their_types():
    dm = HSIDataModule(scene="synthetic", seed=3, batch_size=8, pca=4.0, augment=False)
    options = dm.options
    assert options.recipe["split_seed"] == 3 and options.recipe["pca"] == 4 and isinstance(options.recipe["pca"], int)
    assert options.spectral_scale == 0.0 and isinstance(options.spectral_scale, float)  # None resolved: augment off
    assert options.batch_size == 8 and options.in_memory
    dm.hparams.predict_on = "labeled"  # read again, not frozen at construction
    assert dm.options.predict_on == "labeled"
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 1  # type: ignore[misc]


def test_a_bad_argument_is_refused_before_anything_is_opened():
    with pytest.raises(OptionError, match="batch_size"):
        HSIDataModule(scene="synthetic", batch_size=0)
