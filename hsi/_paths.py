"""The user's own files and folders at the boundary: an ``OSError`` about them becomes an hsi error.

A missing input, a permission denied, a folder where a file is expected or a file in the
way of an output folder is the user's to fix, so it must reach the command line as one
``error:`` line (an :class:`~hsi.errors.HSIError`), not as a traceback. Only the calls
that touch a path the user gave are wrapped (:func:`user_path`); an ``OSError`` anywhere
else is still a bug. A full disk passes through unchanged, for the handlers that turn it
into :class:`~hsi.errors.DiskFullError` with the bytes needed and free.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from hsi.errors import CheckpointError, DatasetNotFoundError, FileAccessError, HSIError

__all__ = ["check_checkpoint_file", "check_input_file", "check_output", "make_folder", "path_error", "user_path"]

_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def path_error(path: str | Path, action: str, err: OSError, *, reading: bool = True) -> OSError:
    """The hsi error for ``err``, raised while ``action`` (``"read"``, ``"create the folder"``) on ``path``.

    A missing file that is read is a :class:`DatasetNotFoundError`; anything else (permission,
    a folder or a file in the wrong place, a missing parent of an output) a
    :class:`FileAccessError`. The message names the path, the action and the system's reason.
    """
    reason = err.strerror or str(err) or type(err).__name__
    where = f" ({err.filename})" if err.filename and str(err.filename) != str(path) else ""
    if reading and isinstance(err, FileNotFoundError):
        return DatasetNotFoundError(f"{path}: no such file{where}")
    return FileAccessError(f"{path}: cannot {action}: {reason}{where}")


@contextlib.contextmanager
def user_path(path: str | Path, action: str, *, reading: bool = True) -> Iterator[None]:
    """Within the block, an ``OSError`` about the user's ``path`` is raised as an hsi error (see :func:`path_error`).

    hsi errors, a full disk (ENOSPC, EDQUOT) and a broken pipe (the reader of stdout went away) pass through
    unchanged.
    """
    try:
        yield
    except HSIError:
        raise
    except OSError as err:
        if err.errno in _DISK_FULL or isinstance(err, BrokenPipeError):  # not the path's: stdout's reader went away
            raise
        raise path_error(path, action, err, reading=reading) from err


def check_input_file(path: str | Path, option: str) -> Path:
    """``path`` when it exists; else :class:`DatasetNotFoundError` ``OPTION: 'PATH': no such file``.

    ``option`` names where the path was given (``--cube``, ``cube_path``, a config file's key).
    What the file holds is the reader's to judge; this is the check a command runs before any import.
    """
    if not Path(path).exists():
        raise DatasetNotFoundError(f"{option}: {str(path)!r}: no such file")
    return Path(path)


def check_checkpoint_file(path: str | Path, option: str) -> Path:
    """``path`` when it is a file; a folder or nothing there raises :class:`CheckpointError` naming ``option``."""
    if Path(path).is_dir():
        raise CheckpointError(f"{option}: {str(path)!r} is a folder, expected a checkpoint file "
                              f"(such as {str(Path(path) / 'best.ckpt')!r})")
    if not Path(path).is_file():
        raise CheckpointError(f"{option}: {str(path)!r}: no such checkpoint file")
    return Path(path)


def check_output(path: str | Path, what: str = "output") -> Path:
    """``path`` when it can be written; a file in the way of its folder or no write permission there raise.

    Walks up to the nearest folder that exists: each existing ancestor must be a folder
    and the nearest one writable. Raises :class:`FileAccessError` naming ``path``, what it is
    for and the ancestor at fault, before any work is done.
    """
    path = Path(path)
    for parent in path.parents:
        if not parent.exists():
            continue
        if not parent.is_dir():
            raise FileAccessError(f"{path}: cannot write the {what}: {parent} is a file, not a folder")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise FileAccessError(f"{path}: cannot write the {what}: no write permission in {parent}")
        break
    return path


def make_folder(path: str | Path, what: str = "output folder") -> Path:
    """``mkdir -p path``; a file in the way, a permission or a read-only filesystem is a :class:`FileAccessError`."""
    path = check_output(path, what)
    if path.exists() and not path.is_dir():
        raise FileAccessError(f"{path}: cannot create the {what}: this path is a file, not a folder")
    with user_path(path, f"create the {what}", reading=False):
        path.mkdir(parents=True, exist_ok=True)
    return path
