"""Does a checkpoint's ``state_dict`` fit the network it is about to be loaded into?

torch's own answer is a multi-page ``Missing key(s) in state_dict`` dump. Checked before
the load (``HSIClassifier.on_load_checkpoint``, which Lightning calls before
``load_state_dict`` in ``load_from_checkpoint`` and in ``Trainer.fit/test/predict(ckpt_path=)``),
the answer here is one line naming the model the weights belong to and the one they were
meant for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from hsi.errors import CheckpointError

__all__ = ["check_weights_fit", "expected_weights", "guess_model", "weights_mismatch"]

_PREFIX = "net."  # HSIClassifier keeps its network as ``self.net``


def weights_mismatch(expected: Mapping[str, torch.Tensor], given: Mapping[str, Any]) -> str | None:
    """The first difference between two state dicts, in words (None when keys and shapes agree)."""
    missing = [k for k in expected if k not in given]
    unexpected = [k for k in given if k not in expected]
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"{len(missing)} of the model's {len(expected)} tensors missing, e.g. {missing[0]!r}")
        if unexpected:
            parts.append(f"{len(unexpected)} it does not have, e.g. {unexpected[0]!r}")
        return "; ".join(parts)
    for key, tensor in expected.items():
        shape = tuple(getattr(given[key], "shape", ()))
        if shape != tuple(tensor.shape):
            return f"{key!r} is {shape} in the checkpoint but {tuple(tensor.shape)} in the model"
    return None


def guess_model(given: Mapping[str, Any], hparams: Mapping[str, Any]) -> str | None:
    """The registry model (default options) whose tensor names are exactly those of ``given``, if one is."""
    from hsi.models import build_model, list_models

    names = {k.removeprefix(_PREFIX) for k in given}
    sizes = {k: hparams.get(k) for k in ("num_bands", "num_classes", "patch_size")}
    if None in sizes.values():
        return None
    for name in list_models():
        try:
            net = build_model(name, **sizes)
        except (ValueError, TypeError):  # a model that cannot take these sizes
            continue
        if set(net.state_dict()) == names:
            return name
    return None


def expected_weights(hparams: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    """The ``state_dict`` an ``HSIClassifier`` with these hyperparameters has (its network's, under ``net.``)."""
    from hsi.models import build_model

    net = build_model(hparams["model"], num_bands=hparams["num_bands"], num_classes=hparams["num_classes"],
                      patch_size=hparams["patch_size"], **(hparams.get("model_options") or {}))
    return {_PREFIX + k: v for k, v in net.state_dict().items()}


def check_weights_fit(
    expected: Mapping[str, torch.Tensor], checkpoint: Mapping[str, Any], ours: Mapping[str, Any], where: str
) -> None:
    """Raise a one-line :class:`CheckpointError` unless ``checkpoint["state_dict"]`` fits ``expected``.

    Parameters
    ----------
    expected : the ``state_dict()`` of the task the weights are for
    checkpoint : the checkpoint's contents
    ours : the task's hyperparameters (``model``, ``model_options``, sizes)
    where : how the message names the checkpoint ("checkpoint runs/x/best.ckpt")
    """
    given = checkpoint.get("state_dict")
    if not isinstance(given, Mapping):
        raise CheckpointError(f"{where}: not a checkpoint written by hsi (no 'state_dict')")
    problem = weights_mismatch(expected, given)
    if problem is None:
        return
    model = ours.get("model")
    theirs = (checkpoint.get("hyper_parameters") or {}).get("model")
    if theirs is not None and theirs != model:
        raise CheckpointError(
            f"{where} holds weights of model {theirs!r}, which cannot be loaded into model {model!r} "
            f"({problem}); use model {theirs!r} with this checkpoint, or a checkpoint of {model!r}"
        )
    guessed = guess_model(given, checkpoint.get("hyper_parameters") or ours)
    if guessed is not None and guessed != model:
        raise CheckpointError(
            f"{where}: its settings say model {model!r} but its weights are those of model {guessed!r} "
            f"({problem}); the file was not written as one hsi run: use the run's own best.ckpt or last.ckpt"
        )
    options = ours.get("model_options") or {}
    raise CheckpointError(
        f"{where}: its weights do not fit model {model!r} with model_options {options} ({problem}); "
        "use the checkpoint with the settings it was trained with"
    )
