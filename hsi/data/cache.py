"""On-disk patch caches: ``.npy`` files + ``meta.json``, keyed by what made them.

Layout (one folder per cache, under ``cache_dir``)::

    <cache_dir>/<scene>-<key16>/
        meta.json          # description, per-file records, creation info (written last)
        state.json         # JSON payload (split, fitted pipeline, scene info)
        cube.npy ...       # arrays, memory-mapped read-only on use
    <cache_dir>/<scene>-<key16>.lock

``key = sha256(canonical JSON of the description)``. The description records everything
that made the arrays (source identity, preprocessing, split, patch size, padding, dtype,
strategy, package version), so any change gives a new folder and an identical run finds
the old one.

Verification on open (cheap; no full read): ``meta.json`` parses and its description
equals the expected one; every file exists with the recorded byte size; its ``.npy``
header (read through ``np.load(mmap_mode="r")``) has the recorded shape and dtype; and a
BLAKE2b digest of 17 evenly spaced 64 kB chunks (always including the first and last)
matches. That catches truncation, a replaced or partially rewritten file and an edited
``meta.json``; ``state.json`` is hashed in full (it is small). A cache that fails is
logged on the ``hsi.data`` logger and rebuilt, never used.

Writes are atomic: each file goes to a temporary name in the same folder and is moved in
place with ``os.replace``; ``meta.json`` is written last, so a cache without it is
incomplete. Building holds an exclusive ``fcntl.flock`` on the ``.lock`` file, and
re-verifies after acquiring it: two processes (DDP ranks) asking for the same cache
serialize — the first builds, the second waits and then finds it valid.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hsi._atomic import write_bytes_atomic
from hsi.errors import CacheError

try:  # POSIX only; elsewhere builds are not serialized across processes
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CACHE_FORMAT",
    "ArraySpec",
    "CacheEntry",
    "PatchCache",
    "canonical_json",
    "description_key",
    "file_digest",
    "json_roundtrip",
]

logger = logging.getLogger("hsi.data")

#: bump when the folder layout or the meaning of a file changes
CACHE_FORMAT = 1
_CHUNK = 1 << 16
_N_CHUNKS = 17


def canonical_json(obj: Any) -> str:
    """Deterministic JSON text (sorted keys, no spaces; tuples become lists)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)


def json_roundtrip(obj: Any) -> Any:
    """The object as it reads back from JSON (tuples -> lists, numpy scalars rejected)."""
    return json.loads(json.dumps(obj))


def description_key(description: Mapping[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of ``description``."""
    return hashlib.sha256(canonical_json(description).encode()).hexdigest()


def file_digest(path: str | Path, size: int | None = None) -> str:
    """BLAKE2b of the file size and 17 evenly spaced 64 kB chunks (first and last included)."""
    path = Path(path)
    size = path.stat().st_size if size is None else size
    h = hashlib.blake2b(str(size).encode(), digest_size=16)
    with open(path, "rb") as f:
        if size <= _CHUNK * _N_CHUNKS:
            h.update(f.read())
        else:
            for off in np.linspace(0, size - _CHUNK, _N_CHUNKS).astype(np.int64):
                f.seek(int(off))
                h.update(f.read(_CHUNK))
    return h.hexdigest()


@dataclass
class ArraySpec:
    """An array to be written by filling it in place (avoids holding large arrays twice).

    ``fill(out)`` receives a writable ``shape``/``dtype`` array (a memory map when on disk).
    """

    shape: tuple[int, ...]
    dtype: str
    fill: Callable[[np.ndarray], None]


@dataclass
class CacheEntry:
    """A verified cache (or an in-memory equivalent when ``path`` is None).

    Attributes
    ----------
    arrays : name -> ``.npy`` Path (on disk) or ndarray (in memory)
    state : the JSON payload the builder returned
    path : cache folder, or None
    built : True when this call built it, False when it was reused
    """

    arrays: dict[str, Path | np.ndarray]
    state: dict[str, Any]
    path: Path | None = None
    built: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    def load(self, name: str, mmap: bool = True) -> np.ndarray:
        """Array ``name`` (memory-mapped read-only from disk, or the in-memory array)."""
        a = self.arrays[name]
        if isinstance(a, np.ndarray):
            return a
        return np.load(a, mmap_mode="r" if mmap else None, allow_pickle=False)


Builder = Callable[[], tuple[dict[str, np.ndarray | ArraySpec], dict[str, Any]]]


def _atomic_save_array(path: Path, value: np.ndarray | ArraySpec) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        if isinstance(value, ArraySpec):
            out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.dtype(value.dtype), shape=tuple(value.shape))
            value.fill(out)
            out.flush()
            del out
        else:
            with open(tmp, "wb") as f:
                np.save(f, np.ascontiguousarray(value), allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def materialize(value: np.ndarray | ArraySpec) -> np.ndarray:
    """An in-memory array from an ndarray or an :class:`ArraySpec`."""
    if isinstance(value, ArraySpec):
        out = np.empty(value.shape, dtype=np.dtype(value.dtype))
        value.fill(out)
        return out
    return value


class PatchCache:
    """One cache folder identified by ``description``.

    Parameters
    ----------
    root : cache directory (created if missing)
    description : JSON-able dict of everything that determines the contents
    prefix : human-readable folder prefix (e.g. the scene name)
    """

    def __init__(self, root: str | Path, description: Mapping[str, Any], prefix: str = "cache") -> None:
        self.root = Path(root).expanduser()
        self.description = json.loads(canonical_json(description))  # normalized (tuples -> lists)
        self.key = description_key(self.description)
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in prefix) or "cache"
        self.path = self.root / f"{safe}-{self.key[:16]}"
        self.lock_path = self.root / f"{self.path.name}.lock"

    # ------------------------------------------------------------------ verify
    def verify(self) -> tuple[CacheEntry | None, str | None]:
        """``(entry, None)`` when valid; ``(None, reason)`` otherwise (reason None = absent)."""
        meta_path = self.path / "meta.json"
        if not self.path.exists():
            return None, None
        if not meta_path.is_file():
            return None, f"{meta_path} is missing (incomplete build)"
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError) as err:
            return None, f"{meta_path} is unreadable: {err}"
        if meta.get("format") != CACHE_FORMAT:
            return None, f"{meta_path} has format {meta.get('format')!r}, expected {CACHE_FORMAT}"
        if canonical_json(meta.get("description")) != canonical_json(self.description):
            return None, f"{meta_path} describes different inputs than expected (stale or edited)"
        arrays: dict[str, Path | np.ndarray] = {}
        for name, rec in meta.get("files", {}).items():
            p = self.path / f"{name}.npy"
            try:
                size = p.stat().st_size
            except OSError:
                return None, f"{p} is missing"
            if size != rec["nbytes"]:
                return None, f"{p} has {size} bytes, expected {rec['nbytes']} (truncated or replaced)"
            try:
                arr = np.load(p, mmap_mode="r", allow_pickle=False)
            except (OSError, ValueError) as err:
                return None, f"{p} is not a readable .npy file: {err}"
            if list(arr.shape) != rec["shape"] or arr.dtype.str != rec["dtype"]:
                return None, f"{p} holds {arr.shape} {arr.dtype.str}, expected {tuple(rec['shape'])} {rec['dtype']}"
            del arr
            if file_digest(p, size) != rec["digest"]:
                return None, f"{p} content checksum differs from meta.json (corrupt)"
            arrays[name] = p
        state_path = self.path / "state.json"
        try:
            state_bytes = state_path.read_bytes()
        except OSError:
            return None, f"{state_path} is missing"
        if hashlib.sha256(state_bytes).hexdigest() != meta.get("state_sha256"):
            return None, f"{state_path} checksum differs from meta.json (corrupt)"
        return CacheEntry(arrays, json.loads(state_bytes), self.path, False, meta), None

    # ------------------------------------------------------------------ build
    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        if fcntl is None:  # pragma: no cover
            yield
            return
        with open(self.lock_path, "a+") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _write(self, arrays: dict[str, np.ndarray | ArraySpec], state: dict[str, Any]) -> CacheEntry:
        self.path.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            (self.path / "meta.json").unlink()  # invalidate first: a crash leaves no valid meta
        files = {}
        for name, value in arrays.items():
            p = self.path / f"{name}.npy"
            _atomic_save_array(p, value)
            arr = np.load(p, mmap_mode="r", allow_pickle=False)
            size = p.stat().st_size
            files[name] = {"shape": list(arr.shape), "dtype": arr.dtype.str, "nbytes": size, "digest": file_digest(p, size)}
            del arr
        state_bytes = canonical_json(state).encode()
        write_bytes_atomic(self.path / "state.json", state_bytes)
        from hsi import __version__

        meta = {
            "format": CACHE_FORMAT,
            "key": self.key,
            "description": self.description,
            "files": files,
            "state_sha256": hashlib.sha256(state_bytes).hexdigest(),
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "created_by_pid": os.getpid(),
            "hsi_version": __version__,
        }
        write_bytes_atomic(self.path / "meta.json", json.dumps(meta, indent=1, sort_keys=True).encode())
        return CacheEntry({n: self.path / f"{n}.npy" for n in files}, json.loads(state_bytes), self.path, True, meta)

    def open_or_build(self, builder: Builder) -> CacheEntry:
        """Return the verified cache, building it (under the lock) when absent or invalid."""
        entry, reason = self.verify()
        if entry is not None:
            logger.debug("patch cache %s reused", self.path)
            return entry
        with self._locked():
            entry, reason = self.verify()  # another process may have built it meanwhile
            if entry is not None:
                logger.info("patch cache %s built by another process; reusing", self.path)
                return entry
            if reason is not None:
                logger.warning("patch cache %s is invalid: %s; rebuilding", self.path, reason)
            else:
                logger.info("building patch cache %s", self.path)
            try:
                arrays, state = builder()
                return self._write(arrays, state)
            except OSError as err:
                raise CacheError(f"could not write patch cache {self.path}: {err}") from err
