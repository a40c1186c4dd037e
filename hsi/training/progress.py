"""Training progress: Lightning's bar on a terminal, one short line per epoch when piped.

A TQDM bar redrawn every batch is unreadable in a log file (and large: a 20-epoch run wrote
half a megabyte); :class:`EpochLines` prints one line per epoch instead, on stderr, and a line
now and then within a long epoch. The phases of a fit outside Lightning's loops (the
pretraining at its start, the refit) show theirs with :func:`hsi._progress.phase_bar`
where :func:`shows_progress` says so: on rank 0 of a trainer that shows progress.

Epochs are numbered from 1 wherever people read them (these lines, ``metrics.json``,
``curves.png``, the summary and resume messages); Lightning counts from 0
(``current_epoch``, a checkpoint's ``epoch``, the CSV log's ``epoch`` column), and
:func:`epoch_number` is the one place that converts.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from lightning.pytorch.callbacks import Callback

from hsi._progress import is_terminal

__all__ = ["EpochLines", "epoch_number", "progress_setup", "shows_progress"]

#: metrics shown on an epoch line, in order, when logged
SHOWN = ("train_loss", "val_loss", "val_oa")


def epoch_number(index: int) -> int:
    """The number people read for Lightning's 0-based epoch ``index``: the first epoch is 1.

    ``index`` is ``trainer.current_epoch`` during an epoch, a checkpoint's ``epoch`` (the
    epoch it was written at the end of) or the ``epoch`` column of Lightning's CSV log.
    """
    return int(index) + 1


class EpochLines(Callback):
    """One line per epoch on stderr: ``epoch 3/20: train_loss 0.512 val_oa 0.873 (1.2 s)`` (rank 0 only), and within an
    epoch ``epoch 3/20: batch 120/400 (20.3 s)`` at most every ``every_seconds`` (a long epoch is not silent)."""

    #: seconds between two lines within an epoch, at least
    EVERY_SECONDS = 20.0

    def __init__(self, stream: Any = None, every_seconds: float = EVERY_SECONDS) -> None:
        self.stream = stream
        self.every_seconds = every_seconds
        self.started = self.said = time.perf_counter()

    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:  # noqa: D102
        self.started = self.said = time.perf_counter()

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,  # noqa: D102
                           batch_idx: int) -> None:
        now = time.perf_counter()
        if not trainer.is_global_zero or now - self.said < self.every_seconds:
            return
        self.said = now
        total = trainer.num_training_batches
        of = f"/{total}" if isinstance(total, int) else ""  # an iterable without a length: inf
        line = f"epoch {epoch_number(trainer.current_epoch)}/{trainer.max_epochs}: batch {batch_idx + 1}{of} ({now - self.started:.1f} s)"
        print(line, file=self.stream or sys.stderr, flush=True)

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:  # noqa: D102
        if not trainer.is_global_zero or trainer.sanity_checking:
            return
        metrics = trainer.callback_metrics
        shown = " ".join(f"{name} {float(metrics[name]):.4g}" for name in SHOWN if name in metrics)
        line = f"epoch {epoch_number(trainer.current_epoch)}/{trainer.max_epochs}: {shown} ({time.perf_counter() - self.started:.1f} s)"
        print(line, file=self.stream or sys.stderr, flush=True)


def shows_progress(trainer: Any) -> bool:
    """True on rank 0 of a ``trainer`` that shows progress (Lightning's bar or :class:`EpochLines`): the phases it runs
    outside its loops show theirs then. False on other ranks, with ``--no-progress``, and without a trainer."""
    if trainer is None or not getattr(trainer, "is_global_zero", False):
        return False
    return trainer.progress_bar_callback is not None or any(isinstance(c, EpochLines) for c in trainer.callbacks)


def progress_setup(progress: bool) -> tuple[bool, list[Callback]]:
    """``(enable_progress_bar, extra callbacks)`` of a fitting trainer.

    Lightning's bar (drawn on stdout) when ``progress`` and stdout is a terminal; otherwise
    :class:`EpochLines` when ``progress``; nothing when not.
    """
    if not progress:
        return False, []
    if is_terminal(sys.stdout):
        return True, []
    return False, [EpochLines()]
