"""The output folder of a run: unique by default, never silently reused, written as a transaction.

Rules (the transaction itself is :mod:`hsi.transaction`'s, shared with ``hsi infer`` and
``hsi convert``):

- no ``--out``: a new folder ``runs/<scene>-<model>-seed<seed>-<YYYYmmdd-HHMMSS>`` (a
  ``-2``, ``-3`` ... suffix if that exists), created empty at once so two runs never share one;
- the run writes into a staging folder beside it (``.<name>.staging-<pid>``); when it has
  finished, its files move in and ``run.json`` (every file's size and SHA-256) is written
  last, so a folder with a ``run.json`` of status ``complete`` holds a finished run;
- an explicit folder that already holds any file a run writes (:data:`RUN_OUTPUTS`) is
  refused unless ``overwrite``; then only files its ``run.json`` lists are replaced (the
  earlier run's outputs go as a whole), a file hsi did not write is refused, and every
  other file in the folder is left as it is;
- a failed run removes its staging folder (and the folder it created); an interrupted one
  (Ctrl-C) commits only ``last.ckpt`` and ``logs/``, with ``run.json`` of status
  ``interrupted``, for ``--resume``; a killed one leaves the folder as it was.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hsi import transaction
from hsi.errors import OptionError

__all__ = ["RUN_MANIFEST", "RUN_OUTPUTS", "RunFolder", "final_path", "open_run_folder", "run_in"]

#: the manifest of a run folder, written last
RUN_MANIFEST = "run.json"
#: the names a training run writes into its folder
RUN_OUTPUTS = (
    "best.ckpt", "last.ckpt", "metrics.json", "predictions.npz", "confusion.png", "curves.png", "split.png",
    "logs", "model.npz", "model.json", RUN_MANIFEST,
)
#: what an interrupted run keeps: its resumable state (best.ckpt too: the resumed run carries its best epoch over)
RESUMABLE = ("last.ckpt", "best.ckpt", "logs")
COMMAND = "hsi train"


@dataclass
class RunFolder:
    """A run's staging folder (where it writes), whether this run created the target, and the transaction.

    Attributes
    ----------
    path : Path
        Where the run writes: the staging folder beside the output folder.
    created : bool
        This run created the (empty) output folder.
    staging : hsi.transaction.Staging or None
        None on DDP ranks other than 0, which write into ``path`` and never commit.
    """

    path: Path
    created: bool
    staging: transaction.Staging | None = None

    @property
    def target(self) -> Path:
        """The output folder the run commits to."""
        return self.staging.target if self.staging is not None else final_path(self.path)

    def discard(self) -> None:
        """Remove the staging folder, and the output folder if this run created it and it is still empty."""
        if self.staging is None:
            return
        self.staging.abort()
        if self.created:
            try:
                self.target.rmdir()
            except OSError:
                pass

    def commit(self, extra: dict[str, Any] | None = None) -> dict[str, Path]:
        """Move the finished run into its folder, ``run.json`` last."""
        assert self.staging is not None
        return self.staging.commit(extra)

    def interrupted(self, err: KeyboardInterrupt) -> KeyboardInterrupt:
        """Commit the resumable state (``last.ckpt``, logs) of an interrupted run; the message says where it is."""
        if self.staging is None:
            return err
        if not (self.path / "last.ckpt").is_file():
            self.discard()
            return KeyboardInterrupt(f"training stopped before any checkpoint was saved; {self.target} is unchanged")
        done = finished_epochs(self.path / "last.ckpt")
        last = self.staging.commit({"note": "interrupted: no report; continue with --resume"}, status="interrupted",
                                   only=RESUMABLE)["last.ckpt"]
        return KeyboardInterrupt(f"training stopped after epoch {done} (an unfinished epoch is trained again); its "
                                 f"state is in {last} (continue with --resume {last})")


def finished_epochs(checkpoint: Path) -> int:
    """Epochs a checkpoint written at the end of an epoch has finished (numbered from 1, so also the last one's)."""
    from hsi.data.checkpoint import read_checkpoint
    from hsi.training.progress import epoch_number

    return epoch_number(int(read_checkpoint(checkpoint).get("epoch", -1)))


def final_path(path: str | Path) -> Path:
    """Where a path inside a staging folder ends up once the run is committed (other paths unchanged)."""
    path = Path(os.path.abspath(path))
    for parent in [path, *path.parents]:
        m = transaction.STAGING_RE.match(parent.name)
        if m:
            return parent.parent / m.group("name") / path.relative_to(parent)
    return path


def run_in(folder: RunFolder, work: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """``work(staging folder)``, then the commit; returns its result with ``out`` the output folder.

    A failure removes what the run wrote (a full disk becomes one
    :class:`~hsi.errors.DiskFullError`); Ctrl-C keeps the resumable state
    (:meth:`RunFolder.interrupted`).
    """
    try:
        with transaction.disk_full_as_error(folder.target, None, f"the {COMMAND} outputs"):
            result = work(folder.path)
            if folder.staging is None:  # a DDP rank other than 0: rank 0 commits
                return result
            folder.commit({"model": result.get("model"), "scene": result.get("scene")})
    except KeyboardInterrupt as err:
        raise folder.interrupted(err) from None
    except BaseException:
        folder.discard()
        raise
    return {**result, "out": str(folder.target)}


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
    OverwriteError
        ``overwrite`` is True but an output name exists that ``run.json`` does not list.
    """
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise OptionError("out", str(out), "a folder (this path is a file)")
    target = transaction.check_target(path, manifest=RUN_MANIFEST, outputs=RUN_OUTPUTS, overwrite=overwrite,
                                      command=COMMAND)
    return [target / name for name in RUN_OUTPUTS if (target / name).exists()]


def _new_default_folder(runs_dir: str | Path, scene: str, model: str, seed: int) -> Path:
    base = Path(os.path.abspath(runs_dir)) / default_name(scene, model, seed)
    path, n = base, 1
    while True:
        try:
            path.mkdir(parents=True, exist_ok=False)
            return path
        except FileExistsError:
            n += 1
            path = base.with_name(f"{base.name}-{n}")


def open_run_folder(out: str | None, overwrite: bool, *, scene: str, model: str, seed: int,
                    runs_dir: str | Path = "runs") -> RunFolder:
    """Check the run's folder (a new one without ``out``) and open the staging folder beside it."""
    if out is None:
        target, created = _new_default_folder(runs_dir, scene, model, seed), True
    else:
        check_out(out, overwrite)
        target, created = Path(out), False
    staging = transaction.begin(target, manifest=RUN_MANIFEST, outputs=RUN_OUTPUTS, overwrite=overwrite,
                                command=COMMAND)
    return RunFolder(staging.path, created, staging)
