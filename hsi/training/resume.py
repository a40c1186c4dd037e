"""Resuming a run: the resumed run is the run it continues, unless an option given again says otherwise.

A checkpoint written by a run holds the DataModule's arguments
(``datamodule_hyper_parameters``), the task's (``hyper_parameters``), the DataModule's
state (split, fitted pipeline, classes) and the run's own options (``hsi_run_options``,
written by :class:`RunRecord`: epochs, patience, refit, threads, devices, logger, ...).
:func:`reconcile` starts from the data and model arguments: an option the user gave that
would change what the checkpoint learned from (an argument whose role in the signature is
``resume="fixed"``, :mod:`hsi._roles`) is an error naming both values, while the others
(lr, batch size, ...) are applied. :func:`restore_run` does the same for the run options:
the checkpoint's, with the ones given again on the command line on top; the run says which
(:func:`resume_line`) and ``metrics.json`` records it. Only the options of one invocation
(:data:`hsi.training.options.PER_INVOCATION`: ``out``, ``overwrite``, ``resume``,
``progress``) are never restored.

A resumed run equals the uninterrupted one epoch for epoch: the data order and the
augmentation are functions of ``(seed, epoch)``, and :class:`EpochSeed` draws the global
random state (dropout) from them before every epoch's first step, which Lightning does not
restore from a checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch
from lightning.pytorch.callbacks import Callback

from hsi._roles import fixed_on_resume, restore, same_value
from hsi.data import HSIDataModule
from hsi.data.checkpoint import read_checkpoint
from hsi.errors import CheckpointError
from hsi.training.options import PER_INVOCATION, RunOptions
from hsi.training.progress import epoch_number
from hsi.training.task import HSIClassifier

__all__ = [
    "EpochSeed",
    "RUN_OPTIONS_KEY",
    "ResumeState",
    "RunRecord",
    "epoch_seed",
    "load_resume_state",
    "reconcile",
    "restore_run",
    "resume_line",
]

DATAMODULE_KEY = "HSIDataModule"
#: the checkpoint key of the run's own options (:class:`RunRecord`)
RUN_OPTIONS_KEY = "hsi_run_options"


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
    run : dict
        The run options it recorded (:class:`RunRecord`); a checkpoint of an earlier release
        recorded none, and only its ``epochs`` (the schedule's length) and ``patience`` (early
        stopping's state) are read from it.
    given_run : list of str
        The run options given explicitly to the run that wrote it (and to the runs it continued).
    run_recorded : bool
        Whether it recorded its run options (False: a checkpoint of an earlier release).
    """

    path: str
    data: dict[str, Any]
    model: dict[str, Any]
    datamodule_state: dict[str, Any] | None
    epochs_done: int
    run: dict[str, Any] = field(default_factory=dict)
    given_run: list[str] = field(default_factory=list)
    run_recorded: bool = False


def load_resume_state(path: str) -> ResumeState:
    """Read the settings of a checkpoint (:class:`CheckpointError` if it is missing, not one of ours, or a state
    saved in the middle of a validation)."""
    ckpt = read_checkpoint(path, "resume")
    if "hyper_parameters" not in ckpt or "datamodule_hyper_parameters" not in ckpt:
        raise CheckpointError(f"resume: {path!r} was not written by an hsi training run (no model/data settings in it)")
    check_not_mid_validation(ckpt, str(path))
    recorded = ckpt.get(RUN_OPTIONS_KEY) or {}
    return ResumeState(
        path=str(path),
        data=without_unused_strengths(dict(ckpt["datamodule_hyper_parameters"])),
        model=dict(ckpt["hyper_parameters"]),
        datamodule_state=ckpt.get(DATAMODULE_KEY),
        epochs_done=epoch_number(int(ckpt.get("epoch", -1))),
        run=dict(recorded.get("options") or earlier_release_options(ckpt)),
        given_run=list(recorded.get("given", [])),
        run_recorded=bool(recorded),
    )


def without_unused_strengths(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with brightness and noise strengths of 0 when augmentation was off.

    Earlier releases recorded a collection's default strengths even with ``augment=False``,
    where they were never applied; the DataModule now refuses that combination, so such a
    checkpoint is read as what its run did.
    """
    if data.get("augment", True) is False:
        return {**data, **{k: 0.0 for k in ("spectral_scale", "spectral_noise") if data.get(k)}}
    return data


def check_not_mid_validation(ckpt: dict[str, Any], path: str) -> None:
    """Refuse a state saved while a validation was running (earlier releases saved ``last.ckpt`` on Ctrl-C).

    Lightning restores such a state without the rest of that validation, so the epoch's
    validation OA is never logged and early stopping or the best checkpoint fail later, deep
    inside the fit; this release writes ``last.ckpt`` at epoch ends only.
    """
    fit_loop = (ckpt.get("loops") or {}).get("fit_loop") or {}
    batches = (fit_loop.get("epoch_loop.val_loop.batch_progress") or {}).get("current") or {}
    if batches.get("started", 0) != batches.get("completed", 0):
        epoch = epoch_number(int(ckpt.get("epoch", -1)))
        raise CheckpointError(
            f"resume: {path} was saved in the middle of epoch {epoch}'s validation (by an earlier hsi release, on "
            "Ctrl-C), a state Lightning cannot resume; train anew with the same options (this release keeps the "
            "last finished epoch on Ctrl-C)")


def earlier_release_options(ckpt: dict[str, Any]) -> dict[str, Any]:
    """The run options a checkpoint without :data:`RUN_OPTIONS_KEY` still tells: ``epochs`` (the task's
    ``max_epochs``, filled from the trainer) and ``patience`` (the state of its early stopping)."""
    found: dict[str, Any] = {}
    epochs = (ckpt.get("hyper_parameters") or {}).get("max_epochs")
    if epochs is not None:
        found["epochs"] = int(epochs)
    for key, state in (ckpt.get("callbacks") or {}).items():
        if str(key).startswith("EarlyStopping") and isinstance(state, dict) and "patience" in state:
            found["patience"] = int(state["patience"])
    return found


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


def restore_run(state: ResumeState, run: RunOptions, given: set[str]) -> tuple[RunOptions, dict[str, Any]]:
    """The run options of the resumed run: the checkpoint's, with the ``given`` ones of ``run`` on top.

    Parameters
    ----------
    state : ResumeState
        The checkpoint's settings (``state.run``: the options it recorded).
    run : RunOptions
        This command's options (defaults where nothing was given).
    given : set of str
        The names of the options given explicitly on this command (``TrainConfig.given_run``).

    Returns
    -------
    RunOptions, dict
        The options, and what was done (``metrics.json``'s ``config.resume``): ``restored``
        (name: value taken from the checkpoint), ``overridden`` (name: ``{"checkpoint": ...,
        "given": ...}``), ``recorded`` (False for a checkpoint of an earlier release).
    """
    fields = run.to_dict()
    restored = {k: v for k, v in state.run.items() if k in fields and k not in PER_INVOCATION and k not in given}
    overridden = {k: {"checkpoint": state.run[k], "given": fields[k]} for k in sorted(given)
                  if k in state.run and k not in PER_INVOCATION and not same_value(state.run[k], fields[k])}
    record = {"from": state.path, "recorded": state.run_recorded, "restored": restored, "overridden": overridden}
    return replace(run, **restored), record


def resume_line(record: dict[str, Any]) -> str:
    """One line saying which run options a resumed run took from its checkpoint and which were given again."""
    restored = ", ".join(f"{k}={v!r}" for k, v in record["restored"].items()) or "none"
    line = f"resume: {record['from']}: continuing its run with its own options ({restored})"
    if record["overridden"]:
        line += "; given again, overriding it: " + ", ".join(
            f"{k}={c['given']!r} (it had {c['checkpoint']!r})" for k, c in record["overridden"].items())
    if not record["recorded"]:
        line += ("; this checkpoint of an earlier release records only epochs and patience, the other options are "
                 "this command's")
    return line


def epoch_seed(seed: int, epoch: int) -> int:
    """The global random seed of epoch ``epoch`` (0-based) of a run seeded ``seed``: a function of both alone."""
    return int(np.random.SeedSequence([int(seed), int(epoch)]).generate_state(1, np.uint64)[0] >> 1)


class RunRecord(Callback):
    """Write the run's own options into every checkpoint, so that ``--resume`` continues the same run.

    ``hsi_run_options`` holds ``options`` (every :class:`~hsi.training.options.RunOptions`
    field but those of one invocation) and ``given`` (the names given explicitly), read back by
    :func:`load_resume_state` and applied by :func:`restore_run`.

    Parameters
    ----------
    run : RunOptions
        The options the run uses.
    given : iterable of str
        The names of the options given explicitly (restored ones included).
    """

    def __init__(self, run: RunOptions, given: Any = ()) -> None:
        self.options = {k: v for k, v in run.to_dict().items() if k not in PER_INVOCATION}
        self.given = sorted(set(given) - set(PER_INVOCATION))

    def on_save_checkpoint(self, trainer: Any, pl_module: Any, checkpoint: dict[str, Any]) -> None:
        """Add ``hsi_run_options`` to the checkpoint."""
        checkpoint[RUN_OPTIONS_KEY] = {"options": dict(self.options), "given": list(self.given)}


class EpochSeed(Callback):
    """Seed the global random state (dropout, any random layer) of every epoch from ``(seed, epoch)``.

    Lightning does not restore torch's global random state from a checkpoint, so a resumed run
    would otherwise draw other dropout masks than the run it continues (:func:`epoch_seed`).

    Parameters
    ----------
    seed : int
        The run's seed.
    """

    def __init__(self, seed: int) -> None:
        self.seed = int(seed)

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int) -> None:
        """Before an epoch's first step, seed the global random state from ``(seed, epoch)`` (torch's CPU and CUDA
        generators); later than the epoch's start, after which a resumed run's first epoch draws more than others."""
        if batch_idx == 0:
            torch.manual_seed(epoch_seed(self.seed, trainer.current_epoch))
