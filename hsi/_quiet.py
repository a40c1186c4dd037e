"""A quiet console: the package's own lines, without Lightning's banners, tips and deprecation warnings.

``hsi train``, ``hsi infer`` and ``hsi doctor`` call :func:`quiet_lightning` before any work
unless ``--verbose`` is given. It sets levels and filters by logger name and warning text,
so it imports neither torch nor Lightning and may run before they are imported.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

__all__ = ["LIGHTNING_LOGGERS", "NOISE", "quiet_lightning"]

#: the loggers of Lightning's ``rank_zero_info`` lines ("GPU available: ...", "`Trainer.fit` stopped ...", tips)
LIGHTNING_LOGGERS = ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero")

#: warnings that are about Lightning or torch, not about the user's run (regular expressions of their text)
NOISE = (
    r".*LeafSpec.*is deprecated",  # torch's pytree, through Lightning
    r".*smaller than the logging interval",  # tiny epochs: Lightning's log_every_n_steps advice
    r".*does not have many workers",  # num_workers advice; hsi's loaders are in-process by design
    r".*Tip:",
    r".*litlogger",
)


class _NoTips(logging.Filter):
    """Drops Lightning's advertising lines ("💡 Tip: ... litlogger")."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = str(record.msg)
        return "Tip:" not in text and "litlogger" not in text


def quiet_lightning(verbose: bool = False) -> None:
    """Keep Lightning to its warnings and errors, and drop its banners, tips and deprecation warnings.

    Parameters
    ----------
    verbose : bool
        True: change nothing (every Lightning line and warning is shown).
    """
    if verbose:
        return
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
    """Show the package's own warnings as one line ``warning: ...`` (other warnings keep Python's format).

    Python's format names the file and line inside ``hsi`` that raised the warning and
    prints that source line: noise to a user of the command, who needs only the message.
    """
    import hsi.errors

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

