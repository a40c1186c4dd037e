"""Progress on stderr: a tqdm bar on a terminal, a few short lines when piped.

:func:`progress_bar` is the one way the package shows progress (inference tiles, cache
builds, conversions): on a terminal it is a ``tqdm`` bar that redraws in place; piped to a
file it is a ``tqdm`` line with a newline every ``every`` of the total (10 % by default), so a
long job writes at most a dozen short lines instead of a bar redrawn thousands of times.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from tqdm import tqdm

__all__ = ["PHASE_DELAY", "LineProgress", "finish", "is_terminal", "phase_bar", "progress_bar"]

#: seconds a phase of training (pretraining, refit) runs before its progress shows: a quick one stays silent
PHASE_DELAY = 2.0


def is_terminal(stream: IO[str] | None = None) -> bool:
    """True when ``stream`` (default: stderr) is an interactive terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or file-like stream without isatty
        return False


class LineProgress:
    """A ``tqdm``-like counter that prints one tqdm-formatted line per ``every`` of ``total``.

    Parameters
    ----------
    total : int
        Steps in all.
    desc : str
        What is counted ("tiles").
    unit : str
        Name of one step.
    every : float
        Fraction of ``total`` between two lines (the last step always prints one).
    stream : file, optional
        Where the lines go (default: stderr).
    delay : float
        Seconds from the start before any line is printed (tqdm's ``delay``).
    """

    def __init__(self, total: int, desc: str = "", unit: str = "it", every: float = 0.1,
                 stream: IO[str] | None = None, delay: float = 0.0) -> None:
        self.desc, self.unit, self.n, self.every, self.delay = desc, unit, 0, every, delay
        self.total = total  # sets the step between two lines
        self.stream = sys.stderr if stream is None else stream
        self.started = time.perf_counter()
        self.shown = -1  # the count of the last line printed

    @property
    def total(self) -> int:
        """Steps in all; may be set once known (a download's length), as on a tqdm bar."""
        return self._total

    @total.setter
    def total(self, value: int) -> None:
        self._total = int(value)
        self.step = max(1, int(round(self._total * self.every)))
        self._next = self.n + self.step

    def reset(self) -> None:
        """Back to step 0, the total kept (tqdm's ``reset``)."""
        self.n, self._next = 0, self.step

    def update(self, n: int = 1) -> None:
        """Count ``n`` more steps; print a line when the next ``every`` of the total is reached."""
        self.n += n
        if self.n >= self._next or self.n >= self.total:
            while self._next <= self.n:
                self._next += self.step
            if time.perf_counter() - self.started >= self.delay:
                self._print()

    def _print(self) -> None:
        """One tqdm-formatted line of the count now."""
        meter = tqdm.format_meter(self.n, self.total, time.perf_counter() - self.started, ncols=80,
                                  prefix=self.desc, unit=self.unit, ascii=True)  # any log encoding
        print(meter, file=self.stream, flush=True)
        self.shown = self.n

    def close(self) -> None:
        """Nothing to clear (the lines stay)."""

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def finish(bar: tqdm | LineProgress) -> None:
    """End ``bar`` at the count reached, as 100 %: a phase that stopped before its limit (an optimiser that converged)
    still ends with a last line (or a full bar) saying so, and only one."""
    bar.total = bar.n
    if isinstance(bar, LineProgress):
        if bar.shown != bar.n and time.perf_counter() - bar.started >= bar.delay:
            bar._print()
    else:
        bar.refresh()
    bar.close()


def phase_bar(total: int, desc: str, unit: str, show: bool) -> tqdm | LineProgress:
    """:func:`progress_bar` of a phase of training (pretraining, refit): silent for its first :data:`PHASE_DELAY`
    seconds, the bar cleared at the end (the lines of a log stay)."""
    return progress_bar(total, desc, unit, show=show, delay=PHASE_DELAY, leave=False)


def progress_bar(total: int, desc: str, unit: str = "it", show: bool = True, terminal: bool | None = None,
                 delay: float = 0.0, **kwargs: Any) -> tqdm | LineProgress:
    """A progress counter over ``total`` steps on stderr (``update(n)``, ``close()``).

    Parameters
    ----------
    total : int
        Steps in all.
    desc, unit : str
        Label and step name.
    show : bool
        False: a disabled bar that prints nothing.
    terminal : bool, optional
        True: a redrawn tqdm bar; False: :class:`LineProgress` lines (None: decided by whether stderr is a terminal).
    delay : float
        Seconds before anything shows (a quick job stays silent).
    **kwargs
        Passed to ``tqdm`` (e.g. ``leave=False``).
    """
    if show and not (is_terminal() if terminal is None else terminal):
        return LineProgress(total, desc, unit, delay=delay)
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not show, dynamic_ncols=True, delay=delay,
                **kwargs)
