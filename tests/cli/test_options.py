"""One definition per option: a data option is its annotated parameter and its numpydoc entry.

The toy class follows the steps of "A data option" in ``docs/extending.md``: from the one
signature come the flag, its type, default, help and range check (:func:`hsi.cli.options.option_specs`),
and its role decides the cache key and the resume rule (:mod:`hsi._roles`).
"""

from __future__ import annotations

import argparse
import inspect
from typing import Annotated

import pytest

from hsi._roles import fixed_on_resume, roles
from hsi.cli.options import add_options, check_values, option_specs
from hsi.data.arguments import AT_LEAST_ZERO, PATCH_SIZE, loader, recipe
from hsi.errors import OptionError


class ToyDataModule:
    """A DataModule's options cut down to three, one of them new.

    Parameters
    ----------
    patch_size : int
        Side of the square patches (odd).
    smoothing : int
        Bands averaged by a moving window before the patches are cut, 0 = none.
    drop_last : bool
        Drop the last, short training batch.
    """

    def __init__(self, patch_size: Annotated[int, recipe(PATCH_SIZE)] = 7,
                 smoothing: Annotated[int, recipe(AT_LEAST_ZERO)] = 0,
                 drop_last: Annotated[bool, loader()] = False) -> None:
        self.patch_size, self.smoothing, self.drop_last = patch_size, smoothing, drop_last


def test_a_data_option_is_its_parameter_and_its_docstring_line():
    specs = {spec.param: spec for spec in option_specs(ToyDataModule)}
    new = specs["smoothing"]
    assert (new.flag, new.default, new.annotation) == ("--smoothing", 0, int)
    assert new.help == "Bands averaged by a moving window before the patches are cut, 0 = none."
    parser = argparse.ArgumentParser()
    add_options(parser, specs.values())
    assert vars(parser.parse_args(["--smoothing", "3", "--drop-last"])) == {"smoothing": 3, "drop_last": True}
    with pytest.raises(OptionError, match=r"smoothing: -1: an integer >= 0"):
        check_values(specs.values(), {"smoothing": -1})


def test_its_role_puts_it_in_the_cache_key_and_the_resume_rule():
    assert {name: role.kind for name, role in roles(ToyDataModule).items()} == {
        "patch_size": "recipe", "smoothing": "recipe", "drop_last": "loader"}
    assert set(fixed_on_resume(ToyDataModule)) == {"patch_size", "smoothing"}  # a loader option may change


def test_every_datamodule_option_is_in_the_option_table():
    """The second file an option touches: the regenerated table (``python -m hsi.cli.table``) that the commands read."""
    from hsi.cli.table import table_specs
    from hsi.data import HSIDataModule

    parameters = set(inspect.signature(HSIDataModule).parameters)
    assert {spec.param for spec in table_specs("data")} == parameters
