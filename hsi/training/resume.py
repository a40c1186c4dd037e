"""Resuming a run: the checkpoint decides the data and the model; the options may change the rest.

A checkpoint written by a run holds the DataModule's arguments
(``datamodule_hyper_parameters``), the task's (``hyper_parameters``) and the DataModule's
state (split, fitted pipeline, classes). :func:`reconcile` starts from those; an option the
user gave that would change what the checkpoint learned from (:data:`DATA_FIXED`,
:data:`MODEL_FIXED`) is an error naming both values, while the others (epochs, lr,
batch size, devices, out, ...) are applied and so recorded in ``metrics.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hsi.data.checkpoint import read_checkpoint
from hsi.errors import CheckpointError

__all__ = ["DATA_FIXED", "MODEL_FIXED", "ResumeState", "load_resume_state", "reconcile"]

DATAMODULE_KEY = "HSIDataModule"

#: DataModule arguments that decide the data a checkpoint learned from
DATA_FIXED = (
    "scene", "root", "cube_path", "labels_path", "cube_key", "labels_key", "layout", "scene_options", "scaling", "pca",
    "remove_bands", "split", "test_labels_path", "test_labels_key", "block_size", "buffer", "fractions",
    "split_seed", "patch_size", "padding", "seed",
)
#: task arguments that decide the network a checkpoint holds
MODEL_FIXED = ("model", "model_options", "num_bands", "num_classes", "patch_size")


@dataclass
class ResumeState:
    """What a checkpoint says about the run that wrote it."""

    path: str
    data: dict[str, Any]
    model: dict[str, Any]
    datamodule_state: dict[str, Any] | None
    epoch: int


def load_resume_state(path: str) -> ResumeState:
    """Read the settings of a checkpoint (:class:`CheckpointError` if it is missing or not one of ours)."""
    ckpt = read_checkpoint(path, "resume")
    if "hyper_parameters" not in ckpt or "datamodule_hyper_parameters" not in ckpt:
        raise CheckpointError(f"resume: {path!r} was not written by an hsi training run (no model/data settings in it)")
    return ResumeState(
        path=str(path),
        data=dict(ckpt["datamodule_hyper_parameters"]),
        model=dict(ckpt["hyper_parameters"]),
        datamodule_state=ckpt.get(DATAMODULE_KEY),
        epoch=int(ckpt.get("epoch", -1)),
    )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def _conflicts(given: dict[str, Any], trained: dict[str, Any], fixed: tuple[str, ...]) -> list[str]:
    return [k for k in fixed if k in given and k in trained and not _same(given[k], trained[k])]


def reconcile(state: ResumeState, data: dict[str, Any], model: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The DataModule and task arguments of the resumed run.

    Parameters
    ----------
    state : ResumeState
        The checkpoint's settings.
    data, model : dict
        The arguments the user gave (explicitly: defaults are not in them).

    Raises
    ------
    CheckpointError
        A given argument differs from the checkpoint's in a setting that cannot change.
    """
    for given, trained, fixed in ((data, state.data, DATA_FIXED), (model, state.model, MODEL_FIXED)):
        clash = _conflicts(given, trained, fixed)
        if clash:
            key = clash[0]
            raise CheckpointError(
                f"resume: {key}: {given[key]!r} was given, but {state.path} was trained with {key}={trained[key]!r}; "
                f"a resumed run keeps the checkpoint's data and model settings (drop the option, or train anew)"
            )
    return {**state.data, **data}, {**state.model, **model}
