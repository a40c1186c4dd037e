"""What a file holds, told by its content: the identity that decides whether an earlier output may be reused.

:func:`file_identity` gives ``{path, size, mtime_ns, sha256}``. Files up to
:data:`FULL_HASH_LIMIT` (256 MiB) are hashed whole. Above it, reading the whole file for
every re-run would cost more than the work it saves, so ``sha256`` is the hash of the size
and of :data:`SAMPLE_CHUNKS` chunks of :data:`SAMPLE_CHUNK` bytes spread evenly over the
file (the first at the start, the last at the end), and the identity says so with
``"hash": "sampled"``. A sampled hash misses an edit between the chunks that keeps the size,
so for such files the modification time counts too (:func:`identity_change`).

Hashes are remembered per process, keyed by path, size, mtime, inode, device and ctime: a
rewrite that keeps the size and restores the mtime (``os.utime``) still changes the ctime,
and a file replaced by rename has a new inode, so the hash is computed again.

This module imports neither torch nor numpy.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

__all__ = ["FULL_HASH_LIMIT", "SAMPLE_CHUNK", "SAMPLE_CHUNKS", "file_identity", "first_change", "full_sha256",
           "identity_change"]

#: files up to this many bytes are hashed whole; larger ones by :data:`SAMPLE_CHUNKS` sampled chunks
FULL_HASH_LIMIT = 256 * 1024 * 1024
#: chunks read from a file above :data:`FULL_HASH_LIMIT`
SAMPLE_CHUNKS = 64
#: bytes of one sampled chunk
SAMPLE_CHUNK = 1024 * 1024

_MEMO: dict[tuple[str, int, int, int, int, int], str] = {}
_BLOCK = 1 << 20


def file_identity(path: str | Path) -> dict[str, Any]:
    """``{path, size, mtime_ns, sha256}`` of a file, with ``hash: "sampled"`` above :data:`FULL_HASH_LIMIT`.

    Parameters
    ----------
    path : str or Path
        The file (``~`` expanded; recorded resolved).

    Returns
    -------
    dict
        ``path`` (absolute), ``size`` (bytes), ``mtime_ns``, ``sha256`` (hex) and, for a
        sampled hash only, ``hash``.

    Raises
    ------
    CubeFormatError
        ``path`` is a folder.
    FileAccessError, DatasetNotFoundError
        The file cannot be read (:func:`hsi._paths.user_path` names it).
    """
    from hsi._paths import user_path

    p = Path(path).expanduser().resolve()
    with user_path(path, "read"):
        st = p.stat()
        if p.is_dir():
            from hsi.errors import CubeFormatError

            raise CubeFormatError(f"{p}: is a directory, expected a file (a cube or label map)")
        key = (str(p), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, st.st_ctime_ns)
        sampled = st.st_size > FULL_HASH_LIMIT
        digest = _MEMO.get(key)
        if digest is None:
            digest = _MEMO[key] = _sampled_sha256(p, st.st_size) if sampled else full_sha256(p)
    identity = {"path": str(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
    return {**identity, "hash": "sampled"} if sampled else identity


def full_sha256(path: str | Path) -> str:
    """Hex SHA-256 of the whole file at ``path``, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def _sampled_sha256(path: Path, size: int) -> str:
    """SHA-256 of the size and :data:`SAMPLE_CHUNKS` chunks at evenly spread offsets (first and last included)."""
    h = hashlib.sha256(f"size={size};chunks={SAMPLE_CHUNKS}x{SAMPLE_CHUNK}".encode())
    last = size - SAMPLE_CHUNK
    with open(path, "rb") as f:
        for i in range(SAMPLE_CHUNKS):
            f.seek(last * i // (SAMPLE_CHUNKS - 1))
            h.update(f.read(SAMPLE_CHUNK))
    return h.hexdigest()


def identity_change(recorded: Any, current: dict[str, Any]) -> str | None:
    """What differs between a recorded :func:`file_identity` and the current one (None: the same content).

    Content decides: the size and the hash; for a sampled hash the modification time too.
    The path does not count (a moved file holds the same data), nor, for a whole-file hash,
    the mtime (a ``touch`` changes nothing).
    """
    if not isinstance(recorded, dict):
        return "no identity recorded"
    if recorded.get("size") != current["size"]:
        return f"size {recorded.get('size')} -> {current['size']} bytes"
    if recorded.get("sha256") != current["sha256"]:
        return f"SHA-256 {str(recorded.get('sha256'))[:12]}... -> {current['sha256'][:12]}..."
    if current.get("hash") == "sampled" and recorded.get("mtime_ns") != current["mtime_ns"]:
        return "modification time (a file above the whole-hash limit is judged by sampled chunks and its mtime)"
    return None


def first_change(recorded: Any, current: Any, where: str = "input") -> str | None:
    """The first difference between two JSON records of inputs (None: the same), in words.

    A dict with ``sha256`` and ``size`` is a :func:`file_identity`, compared by
    :func:`identity_change` and named by its path; a list of them (the files one input is
    read from) that was recorded otherwise, or with another length (an older hsi recorded one
    dict per input), counts as changed; other values are compared as they are, named by
    their key path (``where``).
    """
    if isinstance(current, dict) and "sha256" in current and "size" in current:
        change = identity_change(recorded, current)
        return None if change is None else f"the input {current.get('path', where)} changed ({change})"
    if isinstance(current, dict) and isinstance(recorded, dict):
        for key in sorted(set(current) | set(recorded), key=str):
            found = first_change(recorded.get(key), current.get(key), f"{where}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(current, list) and isinstance(recorded, list) and len(current) == len(recorded):
        for i, (old, new) in enumerate(zip(recorded, current)):
            found = first_change(old, new, f"{where}[{i}]")
            if found is not None:
                return found
        return None
    if isinstance(current, list) and any(isinstance(c, dict) and "sha256" in c for c in current):
        # the files a path stands for, recorded as other files (or as one, by an older hsi)
        paths = ", ".join(str(c.get("path")) for c in current if isinstance(c, dict))
        return f"{where} is now read from other files ({paths})"
    return None if recorded == current else f"{where} changed ({recorded!r} -> {current!r})"
