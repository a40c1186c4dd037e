"""The output folder of a run: unique by default, never silently reused, written as a transaction.

Rules (the transaction itself is :func:`hsi.transaction.staged`, shared with ``hsi infer``,
``hsi convert`` and ``hsi evaluate``; :func:`run_folder` opens it):

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
  ``interrupted``, for ``--resume``; a killed one leaves the folder as it was, and the next
  run beside it keeps the killed run's staging folder, when it holds a ``last.ckpt``, as
  ``<name>.killed-<pid>`` and says how to continue it (:func:`hsi.transaction.keep_killed`).
"""

from __future__ import annotations

import os
import time
from contextlib import AbstractContextManager
from pathlib import Path

from hsi import transaction
from hsi.errors import OptionError

__all__ = ["RUN_MANIFEST", "RUN_OUTPUTS", "final_path", "keep_resumable", "run_folder"]

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


def keep_resumable(folder: transaction.Transaction, err: KeyboardInterrupt) -> KeyboardInterrupt:
    """Ctrl-C: commit the resumable state (``last.ckpt``, logs) of the run; the message says where it is.

    The ``on_interrupt`` of the run's :func:`hsi.transaction.staged`: without a checkpoint yet
    the run leaves nothing (its folder is left as it was).
    """
    if not (folder.path / "last.ckpt").is_file():
        folder.abort()
        return KeyboardInterrupt(f"training stopped before any checkpoint was saved; {folder.target} is unchanged")
    done = finished_epochs(folder.path / "last.ckpt")
    last = folder.commit({"note": "interrupted: no report; continue with --resume"}, status="interrupted",
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


def run_folder(out: str | None, overwrite: bool, *, scene: str, model: str, seed: int,
               runs_dir: str | Path = "runs", inherited: str | Path | None = None,
               ) -> AbstractContextManager[transaction.Transaction]:
    """The run's output folder as a transaction (:func:`hsi.transaction.staged`): checked, a new one without ``out``.

    Write into ``.path``, then ``.commit(...)``. A failure removes what the run wrote (and
    the new folder); Ctrl-C keeps the resumable state (:func:`keep_resumable`). ``inherited``:
    rank 0's staging folder, which a DDP rank started by Lightning writes into and never commits.
    """
    if inherited is not None:
        return transaction.staged(final_path(inherited), manifest=RUN_MANIFEST, outputs=RUN_OUTPUTS,
                                  overwrite=overwrite, command=COMMAND, inherited=inherited)
    if out is None:
        target, created = _new_default_folder(runs_dir, scene, model, seed), True
    else:
        check_out(out, overwrite)
        target, created = Path(out), False
    return transaction.staged(target, manifest=RUN_MANIFEST, outputs=RUN_OUTPUTS, overwrite=overwrite,
                              command=COMMAND, created=created, on_interrupt=keep_resumable, resumable="last.ckpt")
