"""A quiet console: the package's own lines, once, without Lightning's banners, tips and deprecation warnings.

``hsi train``, ``hsi infer``, ``hsi evaluate`` and ``hsi doctor`` call :func:`quiet_lightning`
before any work unless ``--verbose`` is given. It sets levels and filters by logger name and
warning text, so it imports neither torch nor Lightning and may run before they are imported.
DDP ranks other than 0 (the processes Lightning starts run the same command) say nothing
but errors: what they would say, rank 0 says. Every command shows each warning once per
process (:func:`one_line_warnings`), however often a file is read again.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

__all__ = ["LIGHTNING_LOGGERS", "NOISE", "one_line_warnings", "quiet_lightning"]

#: the loggers of Lightning's information lines: ``rank_zero_info`` ("GPU available: ...",
#: "`Trainer.fit` stopped ...", tips, "distributed_backend=...") and every rank's "Initializing
#: distributed: GLOBAL_RANK: ..."
LIGHTNING_LOGGERS = ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero",
                     "lightning.fabric.utilities.distributed")

#: warnings that are about Lightning or torch, not about the user's run (regular expressions of their text)
NOISE = (
    r".*LeafSpec.*is deprecated",  # torch's pytree, through Lightning
    r".*smaller than the logging interval",  # tiny epochs: Lightning's log_every_n_steps advice
    r".*does not have many workers",  # num_workers advice; hsi's loaders are in-process by design
    r".*Tip:",
    r".*litlogger",
    # a resumed run: hsi writes into a new staging folder, so the checkpoint's is always another
    r".*The dirpath has changed from",
    # a resumed run from a checkpoint saved mid-epoch (Ctrl-C): the epoch restarts from its beginning
    r".*resuming from a checkpoint that ended before the epoch ended",
    # DDP on the CPU: torch's note that a gradient's memory layout differs from its bucket's (speed, not results)
    r".*Grad strides do not match bucket view strides",
)


class _NoTips(logging.Filter):
    """Drops Lightning's advertising lines ("💡 Tip: ... litlogger")."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = str(record.msg)
        return "Tip:" not in text and "litlogger" not in text


def quiet_lightning(verbose: bool = False, ranks_repeat: bool = True) -> None:
    """Keep Lightning to its warnings and errors, and drop its banners, tips and deprecation warnings.

    Parameters
    ----------
    verbose : bool
        True: change nothing (every Lightning line and warning is shown).
    ranks_repeat : bool
        The ranks other than 0 repeat rank 0's work (DDP training, one scene's tiles over
        devices), so they say nothing but errors; False where each rank has work of its own
        (many-scene inference deals scenes out), whose warnings only it can give.
    """
    if verbose:
        return
    from hsi._distributed import is_rank_zero

    if ranks_repeat and not is_rank_zero():  # a DDP rank started for rank 0's run: rank 0 says it all
        logging.getLogger("hsi").setLevel(logging.ERROR)
        warnings.filterwarnings("ignore")
    for name in LIGHTNING_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(logging.WARNING)
        if not any(isinstance(f, _NoTips) for f in logger.filters):
            logger.addFilter(_NoTips())
    for pattern in NOISE:
        warnings.filterwarnings("ignore", message=pattern)
    for category in (DeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category, module=r"(lightning|torch|torchmetrics)(\.|$)")


def one_line_warnings() -> None:
    """Show the package's own warnings as one line ``warning: ...``, and every warning once per process.

    Python's format names the file and line inside ``hsi`` that raised the warning and
    prints that source line: noise to a user of the command, who needs only the message
    (other warnings keep Python's format). Python's own "once per location" rule does not
    hold in a run: every ``warnings.catch_warnings`` block (there are some in the readers,
    and in Lightning) resets it, so a file read again warned again. A warning is therefore
    shown only the first time its category and text occur in the process; the DataLoader
    workers forked later inherit what was shown.
    """
    import hsi.errors

    _show_once()
    previous = warnings.formatwarning
    if getattr(previous, "_hsi_one_line", False):
        return
    own = tuple(v for v in vars(hsi.errors).values() if isinstance(v, type) and issubclass(v, Warning))

    def format_warning(message: Any, category: type[Warning], filename: str, lineno: int, line: str | None = None) -> str:
        if issubclass(category, own):
            return "warning: " + " ".join(str(message).split()) + "\n"
        return previous(message, category, filename, lineno, line)

    format_warning._hsi_one_line = True  # type: ignore[attr-defined]
    warnings.formatwarning = format_warning


def _show_once() -> None:
    """Wrap ``warnings.showwarning`` so that a warning already shown (same category and text) is not shown again."""
    previous = warnings.showwarning
    if getattr(previous, "_hsi_once", False):
        return
    shown: set[tuple[type[Warning], str]] = set()

    def show_warning(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
                     line: str | None = None) -> None:
        key = (category, " ".join(str(message).split()))
        if key in shown:
            return
        shown.add(key)
        previous(message, category, filename, lineno, file, line)

    show_warning._hsi_once = True  # type: ignore[attr-defined]
    warnings.showwarning = show_warning
