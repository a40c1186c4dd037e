"""Atomic file writes: a temporary file in the target folder, flushed, then renamed into place.

Readers never see a half-written file, and a failed write leaves nothing behind; a writer
killed mid-write leaves ``.<name>.tmp-<pid>-...``, which :func:`hsi.data.cache.remove_leftovers`
removes once that process is gone.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


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
