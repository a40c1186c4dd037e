"""The output folder of a run: unique by default, never silently reused, removed if the run fails.

Rules:

- no ``--out``: a new folder ``runs/<scene>-<model>-seed<seed>-<YYYYmmdd-HHMMSS>`` (a
  ``-2``, ``-3`` ... suffix if that exists), so two runs never share one;
- an explicit folder that already holds any file a run writes (:data:`RUN_OUTPUTS`) is
  refused unless ``overwrite``; then those files alone are removed before the run, and
  every other file in the folder is left as it is;
- a folder the run created is removed again when the run fails (not when it is
  interrupted: ``last.ckpt`` is kept for ``--resume``).
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from hsi.errors import OptionError, RunOutputError

__all__ = ["RUN_OUTPUTS", "RunFolder", "open_run_folder"]

#: the names a training run writes into its folder
RUN_OUTPUTS = (
    "best.ckpt", "last.ckpt", "metrics.json", "predictions.npz", "confusion.png", "curves.png", "split.png",
    "logs", "model.npz", "model.json",
)


@dataclass
class RunFolder:
    """A run's output folder and whether this run created it."""

    path: Path
    created: bool

    def discard(self) -> None:
        """Remove the folder if this run created it (after a failure)."""
        if self.created and self.path.is_dir():
            shutil.rmtree(self.path, ignore_errors=True)


def default_name(scene: str, model: str, seed: int) -> str:
    """``<scene>-<model>-seed<seed>-<time>``."""
    return f"{scene}-{model}-seed{seed}-{time.strftime('%Y%m%d-%H%M%S')}"


def check_out(out: str | Path, overwrite: bool) -> list[Path]:
    """The earlier outputs in ``out`` that a run would replace; refuse them unless ``overwrite``.

    Raises
    ------
    OptionError
        ``out`` is a file.
    RunOutputError
        ``out`` holds outputs of a run and ``overwrite`` is False.
    """
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise OptionError("out", str(out), "a folder (this path is a file)")
    existing = [path / name for name in RUN_OUTPUTS if (path / name).exists()] if path.is_dir() else []
    if existing and not overwrite:
        names = ", ".join(p.name for p in existing)
        raise RunOutputError(
            f"out: {str(out)!r} already holds {names}; choose another --out, or pass --overwrite to replace "
            f"those files (other files in it are never touched)"
        )
    return existing


def open_run_folder(out: str | None, overwrite: bool, *, scene: str, model: str, seed: int,
                    runs_dir: str | Path = "runs") -> RunFolder:
    """Create (or, with ``overwrite``, clear the earlier outputs of) the run's folder."""
    if out is None:
        base = Path(runs_dir) / default_name(scene, model, seed)
        path, n = base, 1
        while True:
            try:
                path.mkdir(parents=True, exist_ok=False)
                return RunFolder(path, True)
            except FileExistsError:
                n += 1
                path = base.with_name(f"{base.name}-{n}")
    path = Path(out)
    for old in check_out(path, overwrite):
        if old.is_dir():
            shutil.rmtree(old)
        else:
            old.unlink()
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    return RunFolder(path, created)
