"""Fixtures of the collection tests: the tiny files of :mod:`data`, and one trained run on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.collection.data import make_files
from tests.helpers import quiet_datamodule, run_hsi_in

#: DataModule arguments of a fast collection (patch 5, blocks of 8 on scenes of 24-36 pixels)
FAST = {"patch_size": 5, "block_size": 8, "batch_size": 32}
#: options of a one-epoch ``hsi train`` run on the collection
TRAIN = ["--epochs", "1", "--patch-size", "5", "--block-size", "8", "--batch-size", "64", "--model", "spectral1d",
         "--no-progress", "--accelerator", "cpu"]


@pytest.fixture(scope="session")
def files(tmp_path_factory) -> dict[str, Path]:
    """The collection's files and YAML files (``block``: block split; ``scene``: south held out)."""
    return make_files(tmp_path_factory.mktemp("collection"))


@pytest.fixture
def make_dm():
    """``make_dm(scenes, **overrides)`` -> an HSIDataModule over a collection, in memory."""
    def factory(scenes, **kw):
        return quiet_datamodule(scenes=scenes, **{**FAST, **kw})

    return factory


@pytest.fixture(scope="session")
def trained(files, tmp_path_factory) -> Path:
    """A one-epoch run of ``hsi train --scenes`` on the held-out-scene collection (south never trained on)."""
    out = tmp_path_factory.mktemp("trained") / "run"
    assert run_hsi_in(["train", "--scenes", str(files["scene"]), *TRAIN, "--out", str(out)], files["scene"].parent) == 0
    return out
