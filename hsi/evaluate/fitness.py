"""Which models of an evaluation can run on its scene, judged before any fold runs.

A network that cannot take the scene's shape (hybridsn needs 13 bands, a 3-D network a
large enough patch) would otherwise fail at its first fold, after every fold of the models
before it. :func:`unfit_reason` builds each network, untrained, on the input a fold run would
give it: the scene's bands after band removal, the derivative and PCA (given, or the
registry's recommendation), the patch size (given or recommended), the class count and the
``model_options``. :func:`runnable_models` keeps the fit ones: under ``all`` an unfit network
is skipped and listed in one ``warning:`` line (and in the leaderboard's ``skipped``); one
named explicitly is an error, before any fold runs.

:func:`read_patch_size` is the window each model reads (1 for a classical model, which reads
the centre pixel) and :func:`board_buffer` the split buffer every model of one evaluation
shares: the largest any of them needs, so that all train, validate and test on the same pixels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hsi.errors import OptionError
from hsi.evaluate.folds import expand_models
from hsi.evaluate.options import ALL_MODELS, DEFAULT_ROW

__all__ = ["board_buffer", "input_bands", "read_patch_size", "runnable_models", "unfit_reason"]


def input_bands(data: dict[str, Any], raw_bands: int) -> int:
    """The bands a network of a run with DataModule arguments ``data`` reads, from the scene's ``raw_bands``.

    A PCA given as a variance fraction keeps a number of components known only once fitted: the raw
    count is taken then (the check cannot refuse what the fit may yet allow).
    """
    from hsi.preprocess.spec import PreprocessSpec

    defaults = PreprocessSpec()
    options = {name: data.get(name, getattr(defaults, name)) for name in PreprocessSpec.option_names()}
    return PreprocessSpec(**options).bands_out(raw_bands)


def _network(model: str, model_args: dict[str, Any]) -> str:
    """The model a row runs: ``default`` resolved to the package's default network (or ``model_args``' ``model``)."""
    from hsi.models.registry import DEFAULT_MODEL

    return str(model_args.get("model", DEFAULT_MODEL)) if model == DEFAULT_ROW else model


def read_patch_size(model: str, data: dict[str, Any], model_args: dict[str, Any]) -> int:
    """The side of the window ``model`` reads in a fold run with the given DataModule arguments ``data``.

    A network reads the given ``patch_size``, else the registry's recommendation, else the
    DataModule's default (what the fold run's recommendations give, :mod:`hsi.training.deep_run`);
    a classical model reads the centre pixel only: 1, whatever patch its DataModule cuts.
    """
    from hsi.classical import CLASSICAL_MODELS
    from hsi.data.patches import DEFAULT_PATCH_SIZE
    from hsi.models.registry import recommended_patch_size

    name = _network(model, model_args)
    if name in CLASSICAL_MODELS:
        return 1
    return int(data.get("patch_size") or recommended_patch_size(name) or DEFAULT_PATCH_SIZE)


def board_buffer(models: tuple[str, ...], data: dict[str, Any], model_args: dict[str, Any]) -> int:
    """The split buffer of every fold run of an evaluation of ``models``: the given ``buffer``, else the largest any
    model needs (``read_patch_size // 2``, so no training patch of any of them sees a val/test pixel).

    One buffer for the whole board gives every model the same train, val and test pixels of
    each fold; each model's own buffer would give the one reading the smaller window more
    training pixels than the others.
    """
    given = data.get("buffer")
    if given is not None:
        return int(given)
    return max((read_patch_size(m, data, model_args) // 2 for m in models), default=0)


def unfit_reason(model: str, data: dict[str, Any], model_args: dict[str, Any], raw_bands: int,
                 num_classes: int) -> str | None:
    """Why network ``model`` cannot run on the scene (its constructor's words), or None; classical models always
    can.

    Parameters
    ----------
    model : str
        A registry name, ``svm``/``rf``, or ``default`` (the package's default network, or ``model_args``'
        ``model``).
    data, model_args : dict
        The evaluation's given DataModule and ``HSIClassifier`` arguments.
    raw_bands, num_classes : int
        The scene's bands before preprocessing and its classes.
    """
    from hsi.classical import CLASSICAL_MODELS
    from hsi.models.registry import build_error, recommended_pca

    name = _network(model, model_args)
    if name in CLASSICAL_MODELS:
        return None
    given = dict(data)
    if "pca" not in given:  # what the fold run's recommendations give (hsi.training.deep_run)
        given["pca"] = recommended_pca(name, raw_bands)
    patch = read_patch_size(name, given, model_args)
    bands = input_bands(given, raw_bands)
    return build_error(name, bands, max(int(num_classes), 2), int(patch), **dict(model_args.get("model_options") or {}))


def runnable_models(models: tuple[str, ...], known: list[str], reason: Callable[[str], str | None],
                    log: Callable[[str], None]) -> tuple[tuple[str, ...], dict[str, str]]:
    """``(models to run, {skipped model: why})``: the evaluation's ``models`` (``all`` expanded over ``known``)
    without those ``reason`` finds unfit, said in one ``warning:`` line through ``log``.

    Raises
    ------
    OptionError
        On ``models``: a model named explicitly (not through ``all``) cannot run on the scene.
    """
    named = [m for m in models if m != ALL_MODELS]
    expanded = expand_models(models, known)
    skipped: dict[str, str] = {}
    for model in expanded:
        why = reason(model)
        if why is None:
            continue
        if model in named:
            raise OptionError("models", model, f"a model that can run on this scene: {why}")
        skipped[model] = why
    if skipped:
        listed = "; ".join(f"{m} ({why})" for m, why in skipped.items())
        log(f"warning: --models {ALL_MODELS}: {len(skipped)} model(s) cannot run on this scene and are skipped: "
            f"{listed}")
    return tuple(m for m in expanded if m not in skipped), skipped
