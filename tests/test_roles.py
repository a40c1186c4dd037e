"""Each option declared once: every constructor argument has a role, and the cache key, the resume rules
and the command-line names all come from the roles; ``hsi train --resume`` and ``HSICLI`` share one rule."""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import pytest

from hsi._roles import KINDS, fixed_on_resume, restore, roles
from hsi.data import HSIDataModule
from hsi.data.build import CacheRecipe
from hsi.data.cache import description_key
from hsi.errors import CheckpointError
from hsi.preprocess import PreprocessSpec
from hsi.training import HSIClassifier
from tests.helpers import TINY_SCENE, quiet_datamodule, train_checkpoint

SCENE = dict(TINY_SCENE)

#: another valid value of every recipe argument (the test below fails for a recipe argument missing here); a
#: preprocessing option's is its example in PreprocessSpec
OTHER_VALUE = {
    **{f.name: f.metadata["example"] for f in dataclasses.fields(PreprocessSpec) if f.metadata.get("option")},
    "split": "random", "block_size": 8, "buffer": 1, "fractions": (0.5, 0.25, 0.25), "split_seed": 7, "patch_size": 7,
    "padding": "edge", "cache": "patches", "folds": 3, "fold": 2, "wavelength_range": (500.0, 1500.0),
    "train_per_class": 5, "train_fraction": 0.5, "val_budget": "none",
}
#: arguments valid only with another one (cross-validation folds: both or neither; a validation rule needs a budget)
PARTNER = {"folds": {"fold": 1}, "fold": {"folds": 3}, "val_budget": {"train_per_class": 5}}


@pytest.mark.parametrize("cls", [HSIDataModule, HSIClassifier])
def test_every_argument_has_a_role(cls):
    params = [n for n in inspect.signature(cls.__init__).parameters if n != "self"]
    declared = roles(cls)
    assert [n for n in params if n not in declared] == []
    assert all(role.kind in KINDS for role in declared.values())


#: the split and pipeline a cache is built with, the same for every key compared here (the arguments alone differ)
NO_STATE = {"split": {}, "pipeline": {}}


def _key(**overrides) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dm = HSIDataModule(**{"scene": "synthetic", "scene_options": SCENE, "block_size": 6, "patch_size": 5,
                              **overrides})
    return description_key(CacheRecipe(dm._recipe(), NO_STATE).description(dm.source.identity()))


def test_every_recipe_argument_changes_the_cache_key():
    recipe = {name for name, role in roles(HSIDataModule).items() if role.kind == "recipe"}
    assert recipe == set(OTHER_VALUE)
    base = _key()
    for name, value in OTHER_VALUE.items():
        assert _key(**{**PARTNER.get(name, {}), name: value}) != base, name
    assert _key(folds=3, fold=2) != _key(folds=3, fold=1)
    assert _key(train_per_class=5, val_budget="none") != _key(train_per_class=5)


def test_source_and_seed_change_the_cache_key_and_loader_arguments_do_not():
    base = _key()
    assert _key(scene_options={**SCENE, "seed": 2}) != base
    assert _key(seed=3) != base  # the split's seed when split_seed is not given
    assert _key(seed=3, split_seed=0) == base
    for name, value in {"batch_size": 7, "num_workers": 1, "augment": False, "channels_last": False}.items():
        assert roles(HSIDataModule)[name].kind == "loader"
        assert _key(**{name: value}) == base, name


def test_resume_keeps_exactly_the_fixed_arguments():
    data_fixed = set(fixed_on_resume(HSIDataModule))
    assert {"scene", "cube_path", "scaling", "pca", "patch_size", "split", "seed"} <= data_fixed
    assert not {"batch_size", "num_workers", "cache_dir", "augment", "cache"} & data_fixed
    assert set(fixed_on_resume(HSIClassifier)) == {"model", "model_options", "num_bands", "num_classes", "patch_size"}


def test_restore_rule():
    saved = {"pca": 4, "scaling": "standardize", "batch_size": 16}
    assert restore(saved, {"batch_size": 8}, ("pca", "scaling"), "w") == {**saved, "batch_size": 8}
    assert restore(saved, {"pca": 4.0}, ("pca",), "w")["pca"] == 4.0  # the same value is no conflict
    with pytest.raises(CheckpointError, match=r"w: scaling: 'minmax' was given, .*scaling='standardize'"):
        restore(saved, {"scaling": "minmax"}, ("pca", "scaling"), "w")


# ------------------------------------------------------------------ both command lines, one rule
@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A one-step checkpoint trained with scaling=standardize and pca=4 (DataModule arguments inside)."""
    dm = quiet_datamodule(scene="synthetic", scene_options=SCENE, block_size=6, patch_size=5, pca=4,
                          scaling="standardize")
    return train_checkpoint(tmp_path_factory.mktemp("ckpt") / "model.ckpt", dm, "spectral1d", shape_from_data=True,
                            batches=1)


def _hsi_cli(args):
    from hsi.training.lightning_cli import HSICLI

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return HSICLI(args=args)


QUIET = ["--trainer.logger", "false", "--trainer.enable_progress_bar", "false",
         "--trainer.enable_model_summary", "false"]


@pytest.mark.parametrize(("flag", "value", "cli_value"), [("pca", "8", "8"), ("scaling", "minmax", "minmax")])
def test_a_contradicting_value_is_refused_by_both_clis(checkpoint, tmp_path, monkeypatch, capsys, flag, value,
                                                      cli_value):
    """``minmax`` is the default: HSICLI used to overwrite it with the checkpoint's value silently."""
    pytest.importorskip("jsonargparse")
    from hsi.cli import main

    monkeypatch.chdir(tmp_path)
    status = main(["train", "--resume", str(checkpoint), f"--{flag}", value, "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2 and f"{flag}: " in err and "was given" in err
    trained = {"pca": "4", "scaling": "'standardize'"}[flag]
    assert f"{flag}={trained}" in err
    with pytest.raises(CheckpointError, match=rf"{flag}: .* was given, .*{flag}={trained}"):
        _hsi_cli(["test", "--ckpt_path", str(checkpoint), f"--data.{flag}", cli_value, *QUIET])


def test_hsicli_restores_what_was_not_given(checkpoint, tmp_path, monkeypatch):
    pytest.importorskip("jsonargparse")
    monkeypatch.chdir(tmp_path)
    cli = _hsi_cli(["test", "--ckpt_path", str(checkpoint), "--data.batch_size", "8", *QUIET])
    h = cli.datamodule.hparams
    assert (h.pca, h.scaling, h.patch_size, h.batch_size) == (4, "standardize", 5, 8)
    assert h.scene_options == SCENE
    assert cli.model.hparams.model == "spectral1d"


def test_given_arguments_reads_flags_and_files(tmp_path):
    from hsi.training.lightning_cli import given_arguments

    config = tmp_path / "run.yaml"
    config.write_text("data:\n  pca: 3\nmodel:\n  lr: 0.1\ntrainer:\n  max_epochs: 2\n")
    given = given_arguments(["test", "--config", str(config), "--data.scene_options.height=4", "--model.model",
                             "fcn"])
    assert given == {"data": {"pca", "scene_options"}, "model": {"lr", "model"}}
