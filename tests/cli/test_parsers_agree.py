"""``hsi train``'s generated flags and LightningCLI's jsonargparse read the same values from the same signatures.

The flag generator (:mod:`hsi.cli.options`) stays beside jsonargparse: ``hsi`` must start and
report option errors without jsonargparse or a Lightning import per flag. Its rules must be
LightningCLI's: for each option a sample value is given to both, and both must give the
constructors the same Python value; a value outside a ``Literal`` is refused by both.
"""

from __future__ import annotations

import argparse
import typing

import pytest

from hsi.cli.options import add_options, option_specs
from hsi.data import HSIDataModule
from hsi.training import HSIClassifier

jsonargparse = pytest.importorskip("jsonargparse")

#: option -> (words for hsi's flag, the value for jsonargparse's ``--group.option``)
SAMPLES = {
    "scene": (["samson"], "samson"),
    "root": (["data/x"], "data/x"),
    "download": (["--download"], "true"),
    "cube_path": (["c.h5"], "c.h5"),
    "layout": (["CHW"], "CHW"),
    "scene_options": (["height=24", "purity=0.8", "name=x"], '{"height": 24, "purity": 0.8, "name": "x"}'),
    "scaling": (["none"], "null"),
    "pca": (["0.95"], "0.95"),
    "remove_bands": (["1", "2"], "[1, 2]"),
    "split": (["random"], "random"),
    "block_size": (["8"], "8"),
    "buffer": (["none"], "null"),
    "fractions": (["0.5", "0.25", "0.25"], "[0.5, 0.25, 0.25]"),
    "patch_size": (["7"], "7"),
    "padding": (["edge"], "edge"),
    "batch_size": (["32"], "32"),
    "augment": (["--no-augment"], "false"),
    "cache": (["patches"], "patches"),
    "predict_on": (["all"], "all"),
    "model": (["fcn"], "fcn"),
    "model_options": (["width=16"], '{"width": 16}'),
    "lr": (["0.003"], "0.003"),
    "optimizer": (["sgd"], "sgd"),
    "class_weights": (["1", "2.5"], "[1, 2.5]"),
    "label_smoothing": (["0.1"], "0.1"),
}


def _ours(cls: type, name: str, words: list[str]) -> object:
    spec = next(s for s in option_specs(cls) if s.param == name)
    parser = argparse.ArgumentParser()
    add_options(parser, [spec])
    argv = words if words[0].startswith("--") else [spec.flag, *words]
    return getattr(parser.parse_args(argv), spec.name)


def _theirs(cls: type, name: str, text: str) -> object:
    parser = jsonargparse.ArgumentParser(exit_on_error=False)
    parser.add_class_arguments(cls, "group")
    return parser.parse_args([f"--group.{name}", text])["group"][name]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_both_parsers_give_the_same_value(name):
    cls = HSIClassifier if name in {s.param for s in option_specs(HSIClassifier)} else HSIDataModule
    words, text = SAMPLES[name]
    ours, theirs = _ours(cls, name, words), _theirs(cls, name, text)
    assert ours == theirs and type(ours) is type(theirs), (ours, theirs)


def test_every_kind_of_annotation_is_sampled():
    """A new kind of type hint in either signature needs a sample here."""
    def kind(annotation: object) -> str:
        return repr(typing.get_origin(annotation) or annotation).split("[")[0]

    sampled = {kind(s.annotation) for cls in (HSIDataModule, HSIClassifier) for s in option_specs(cls)
               if s.param in SAMPLES}
    every = {kind(s.annotation) for cls in (HSIDataModule, HSIClassifier) for s in option_specs(cls)}
    assert every <= sampled


@pytest.mark.parametrize(("cls", "name", "bad"), [(HSIDataModule, "padding", "mirror"), (HSIDataModule, "cache", "disk"),
                                                  (HSIClassifier, "scheduler", "step")])
def test_both_parsers_refuse_a_value_outside_the_choices(cls, name, bad):
    with pytest.raises(SystemExit):
        _ours(cls, name, [bad])
    with pytest.raises(jsonargparse.ArgumentError):
        _theirs(cls, name, bad)
