"""Resuming a run: the checkpoint decides the data and the model; the options may change the rest.

A checkpoint written by a run holds the DataModule's arguments
(``datamodule_hyper_parameters``), the task's (``hyper_parameters``) and the DataModule's
state (split, fitted pipeline, classes). :func:`reconcile` starts from those; an option the
user gave that would change what the checkpoint learned from (an argument whose role in
the signature is ``resume="fixed"``, :mod:`hsi._roles`) is an error naming both values,
while the others (epochs, lr, batch size, devices, out, ...) are applied and so recorded
in ``metrics.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hsi._roles import fixed_on_resume, restore
from hsi.data import HSIDataModule
from hsi.data.checkpoint import read_checkpoint
from hsi.errors import CheckpointError
from hsi.training.progress import epoch_number
from hsi.training.task import HSIClassifier

__all__ = ["ResumeState", "load_resume_state", "reconcile"]

DATAMODULE_KEY = "HSIDataModule"


@dataclass
class ResumeState:
    """What a checkpoint says about the run that wrote it.

    Attributes
    ----------
    path : str
        The checkpoint.
    data, model : dict
        The DataModule's and the task's arguments.
    datamodule_state : dict or None
        The DataModule's state (split, fitted pipeline, classes).
    epochs_done : int
        Epochs it finished (it was written at the end of epoch ``epochs_done``, numbered
        from 1; the resumed run trains epoch ``epochs_done + 1`` next); 0 when it says none.
    """

    path: str
    data: dict[str, Any]
    model: dict[str, Any]
    datamodule_state: dict[str, Any] | None
    epochs_done: int


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
        epochs_done=epoch_number(int(ckpt.get("epoch", -1))),
    )


def reconcile(state: ResumeState, data: dict[str, Any], model: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The DataModule and task arguments of the resumed run (:func:`hsi._roles.restore` for each).

    Parameters
    ----------
    state : ResumeState
        The checkpoint's settings.
    data, model : dict
        The arguments the user gave (explicitly: defaults are not in them).

    Raises
    ------
    CheckpointError
        A given argument differs from the checkpoint's in a setting that cannot change
        (its role in the signature says ``resume="fixed"``).
    """
    where = f"resume: {state.path}"
    return (restore(state.data, data, fixed_on_resume(HSIDataModule), where),
            restore(state.model, model, fixed_on_resume(HSIClassifier), where))
