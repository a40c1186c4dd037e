"""Training progress: Lightning's bar on a terminal, one short line per epoch when piped.

A TQDM bar redrawn every batch is unreadable in a log file (and large: a 20-epoch run wrote
half a megabyte); :class:`EpochLines` prints one line per epoch instead, on stderr.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from lightning.pytorch.callbacks import Callback

from hsi._progress import is_terminal

__all__ = ["EpochLines", "progress_setup"]

#: metrics shown on an epoch line, in order, when logged
SHOWN = ("train_loss", "val_loss", "val_oa")


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
        line = f"epoch {trainer.current_epoch + 1}/{trainer.max_epochs}: {shown} ({time.perf_counter() - self.started:.1f} s)"
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
