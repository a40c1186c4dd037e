"""Training progress: Lightning's bar on a terminal, one short line per epoch when piped.

A TQDM bar redrawn every batch is unreadable in a log file (and large: a 20-epoch run wrote
half a megabyte); :class:`EpochLines` prints one line per epoch instead, on stderr.

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

__all__ = ["EpochLines", "epoch_number", "progress_setup"]

#: metrics shown on an epoch line, in order, when logged
SHOWN = ("train_loss", "val_loss", "val_oa")


def epoch_number(index: int) -> int:
    """The number people read for Lightning's 0-based epoch ``index``: the first epoch is 1.

    ``index`` is ``trainer.current_epoch`` during an epoch, a checkpoint's ``epoch`` (the
    epoch it was written at the end of) or the ``epoch`` column of Lightning's CSV log.
    """
    return int(index) + 1


class EpochLines(Callback):
    """One line per epoch on stderr: ``epoch 3/20: train_loss 0.512 val_oa 0.873 (1.2 s)`` (rank 0 only)."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream
        self.started = time.perf_counter()

    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:  # noqa: D102
        self.started = time.perf_counter()

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:  # noqa: D102
        if not trainer.is_global_zero or trainer.sanity_checking:
            return
        metrics = trainer.callback_metrics
        shown = " ".join(f"{name} {float(metrics[name]):.4g}" for name in SHOWN if name in metrics)
        line = f"epoch {epoch_number(trainer.current_epoch)}/{trainer.max_epochs}: {shown} ({time.perf_counter() - self.started:.1f} s)"
        print(line, file=self.stream or sys.stderr, flush=True)


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
