"""Atomic file writes: a temporary file in the target folder, flushed, then renamed into place.

Readers never see a half-written file, and a failed write leaves nothing behind; a writer
killed mid-write leaves ``.<name>.tmp-<pid>-...``, which :func:`remove_stale_temporaries`
(called by :mod:`hsi.transaction` and :func:`hsi.data.cache.remove_leftovers`) removes once
that process is gone. This is the one rename-into-place of the package: files
(:func:`write_bytes_atomic`, :func:`atomic_path`), JSON files (:func:`write_json_atomic`, the one
way the package writes a ``.json`` file: strict JSON, never a bare ``NaN``; :func:`null_nonfinite` turns a
value that could not be computed into ``null`` and a reason) and moves (:func:`move_into_place`);
:mod:`hsi.transaction` builds output folders on it. :func:`preallocate` reserves a memory
map's blocks so a full disk fails at allocation rather than as SIGBUS on a page write.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import numbers
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: ``.<name>.tmp-<pid>[-<anything>]``: a temporary file or folder of process ``pid``
TMP_RE = re.compile(r"^\..+\.tmp-(\d+)(-.*)?$")


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically, with the permissions a plain ``open`` would give."""
    path = Path(path)
    # ".<name>.tmp-<pid>-<random>": the pid lets a later run remove what a killed writer left
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-{os.getpid()}-")
    try:
        os.chmod(tmp, 0o666 & ~_current_umask())  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def json_default(obj: Any) -> Any:
    """What JSON cannot hold as such: numpy scalars as Python numbers, arrays (numpy's, torch's) as lists, the rest
    (paths, dtypes) as its text."""
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray) or hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)


def _is_nonfinite(obj: Any) -> bool:
    """NaN or an infinity, as a Python or a numpy float."""
    return isinstance(obj, numbers.Real) and not isinstance(obj, numbers.Integral) and not math.isfinite(obj)


def nonfinite_key(obj: Any, where: str = "") -> str | None:
    """The first key path (``scenes.south.oa``, ``rows[0].oa_mean``) in ``obj`` holding NaN or an infinity;
    None when there is none."""
    if _is_nonfinite(obj):
        return where or "the value"
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, (list, tuple)) else ()
    for key, value in items:
        found = nonfinite_key(value, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}".lstrip("."))
        if found is not None:
            return found
    return None


def null_nonfinite(obj: Any, reason: str) -> Any:
    """``obj`` (dicts and lists, copied) with each NaN or infinite float as None, so that it is strict JSON.

    A dict entry ``key`` made None gets ``<key>_reason`` set to ``reason`` beside it (why the
    value could not be computed: ``"oa": null, "oa_reason": "..."``); in a list the None stands alone.
    """
    if _is_nonfinite(obj):
        return None
    if isinstance(obj, (list, tuple)):
        return [null_nonfinite(v, reason) for v in obj]
    if not isinstance(obj, dict):
        return obj
    out: dict[Any, Any] = {}
    for key, value in obj.items():
        out[key] = null_nonfinite(value, reason)
        if _is_nonfinite(value):
            out.setdefault(f"{key}_reason", reason)
    return out


def write_json_atomic(path: str | Path, obj: Any, *, indent: int | None = None, sort_keys: bool = False,
                      allow_nan: bool = False, default: Callable[[Any], Any] | None = json_default,
                      newline: bool = True) -> None:
    """Replace ``path`` with ``obj`` as UTF-8 JSON, atomically (:func:`write_bytes_atomic`).

    Parameters
    ----------
    indent, sort_keys
        As :func:`json.dumps`; each file keeps its own layout so its bytes do not change.
    allow_nan : bool
        False (strict JSON, which every reader accepts): NaN or an infinity raises ``ValueError``
        naming the file and the key; give what could not be computed as None (:func:`null_nonfinite`).
    default : callable or None
        Turns what JSON cannot hold into what it can (:func:`json_default`: numpy values,
        paths); None raises ``TypeError`` on such a value instead.
    newline : bool
        End the file with a newline.
    """
    if not allow_nan:
        bad = nonfinite_key(obj)
        if bad is not None:
            raise ValueError(f"cannot write {path}: {bad} is not a finite number, and JSON has no NaN or infinity; "
                             "write null and say why (hsi._atomic.null_nonfinite)")
    text = json.dumps(obj, indent=indent, sort_keys=sort_keys, allow_nan=allow_nan, default=default)
    write_bytes_atomic(path, (text + ("\n" if newline else "")).encode("utf-8"))


def tmp_prefix(path: Path) -> str:
    """``.<name>.tmp-<pid>-``: the prefix of this process's temporary names beside ``path``."""
    return f".{path.name}.tmp-{os.getpid()}-"


def fsync_dir(folder: str | Path) -> None:
    """Flush a folder's entries (renames into it) to disk; ignored where folders cannot be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | Path, suffix: str = "") -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; moved to ``path`` when the block ends without error.

    The temporary file exists (empty) when the block starts; on an error or interrupt it is
    removed and ``path`` is left as it was.
    """
    path = Path(path)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=tmp_prefix(path), suffix=suffix)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_current_umask())
        _fsync_file(tmp)
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def move_into_place(src: str | Path, dst: str | Path) -> None:
    """Rename ``src`` to ``dst`` (same filesystem), replacing a file there, and flush the folder entry."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.replace(src, dst)
    fsync_dir(dst.parent)


def preallocate(path: str | Path) -> None:
    """Reserve disk blocks for the whole of ``path`` (a sparse memory map) so later page writes cannot fail.

    Uses ``os.posix_fallocate`` where the platform has it; elsewhere the zeros are written
    out. A full disk raises ``OSError(ENOSPC)`` here, not SIGBUS when a page is written.
    """
    with open(path, "r+b") as fh:
        size = os.fstat(fh.fileno()).st_size
        if hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(fh.fileno(), 0, size)
                return
            except OSError as err:
                if err.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                    raise
        block = bytes(1 << 20)
        # zeros over zeros: the file's content is unchanged, its blocks become real
        for start in range(0, size, len(block)):
            fh.seek(start)
            fh.write(block[: min(len(block), size - start)])
        fh.flush()
        os.fsync(fh.fileno())


def is_disk_full(err: BaseException | None) -> bool:
    """True when ``err`` (or an error it was raised from) is a full disk or an exceeded quota.

    Covers ``OSError`` with ``errno`` ENOSPC / EDQUOT and HDF5's errors, which carry
    "No space left" in their text (as ``OSError`` or ``RuntimeError``).
    """
    seen = 0
    while err is not None and seen < 10:
        if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(err, (OSError, RuntimeError)) and "No space left" in str(err):
            return True
        err, seen = err.__cause__ or err.__context__, seen + 1
    return False


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (someone else's counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Remove ``.<name>.tmp-<pid>...`` files and folders in ``folder`` whose process is gone; returns them."""
    folder = Path(folder)
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = TMP_RE.match(name)
        if not m or int(m.group(1)) == os.getpid() or pid_alive(int(m.group(1))):
            continue
        path = folder / name
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(path)
    return removed
