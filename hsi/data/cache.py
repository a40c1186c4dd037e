"""On-disk patch caches: ``.npy`` files + ``meta.json``, keyed by what made them.

Layout (one folder per cache, under ``cache_dir``)::

    <cache_dir>/<scene>-<key16>/
        meta.json          # description, per-file records, creation info (written last)
        state.json         # JSON payload (split, fitted pipeline, scene info)
        cube.npy ...       # arrays, memory-mapped read-only on use
    <cache_dir>/<scene>-<key16>.lock

``key = sha256(canonical JSON of the description)``. The description records everything
that made the arrays (source identity, preprocessing, split, patch size, padding, dtype,
strategy, package version and :data:`hsi.data.build.PREPROCESS_SEMANTICS`, the version of
what the build does to the data), so any change gives a new folder and an identical run
finds the old one.

Verification (every byte is covered, and checked before it is used): ``meta.json``
parses and its description equals the expected one; every file exists with the recorded
byte size; its ``.npy`` header has the recorded shape and dtype; and the SHA-256 of each
16 MiB chunk of the file matches the list in ``meta.json``. When the arrays total at most
:data:`FULL_CHECK_BYTES` (256 MiB) every chunk of every file is checked on open (:func:`chunk_digests` measured
2.3 s per GB on a busy 2-core machine: at most about 0.6 s per open). Larger caches are checked per file on first
touch: the first ``entry.arrays[name]`` (or ``entry.load(name)``) in a process hashes that file's chunks before
handing out its path. ``state.json`` is hashed in full. A cache that fails on open is logged on the ``hsi.data``
logger and rebuilt, never used.

A file found corrupt on first touch is repaired the same way, in place: the cache is
invalidated, rebuilt once under the lock (or taken from another process that rebuilt it
meanwhile), a one-line warning on the ``hsi.data`` logger says which file was corrupt, and
the path handed out is the rebuilt file's. The rebuild must reproduce the files already
handed out (the build is deterministic; a difference raises :class:`~hsi.errors.CacheError`
rather than mixing two builds), and a rebuilt file that is corrupt again raises
:class:`~hsi.errors.CacheError` naming the file, the cache folder and the fix (a failing
disk, or a folder something else writes into).

Leftovers: temporary files (``.<name>.tmp-<pid>...``) of builders whose process is gone
and lock files nobody holds are removed on the next open.

Writes are atomic: each file goes to a temporary name in the same folder and is moved in
place with ``os.replace``; ``meta.json`` is written last, so a cache without it is
incomplete. Building holds the ``.lock`` file's lock (:class:`filelock.FileLock`), and
re-verifies after acquiring it: two processes (DDP ranks) asking for the same cache
serialize — the first builds, the second waits and then finds it valid.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from filelock import FileLock, Timeout

from hsi._atomic import atomic_path, preallocate, remove_stale_temporaries, write_bytes_atomic, write_json_atomic
from hsi.errors import CacheError

__all__ = ["CACHE_FORMAT", "CHUNK_BYTES", "FULL_CHECK_BYTES", "ArraySpec", "CacheEntry", "CheckedArrays", "PatchCache",
           "canonical_json", "description_key", "json_roundtrip", "make_cache_dir"]

logger = logging.getLogger("hsi.data")

#: bump when the folder layout or the meaning of a file changes
CACHE_FORMAT = 2
#: bytes per checksummed chunk
CHUNK_BYTES = 16 << 20
#: caches whose arrays total at most this are verified in full on open; larger ones per file on first touch
FULL_CHECK_BYTES = 256 << 20
_CACHE_DIR_RE = re.compile(r"^.+-[0-9a-f]{16}$")


def canonical_json(obj: Any) -> str:
    """Deterministic JSON text (sorted keys, no spaces; tuples become lists)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)


def json_roundtrip(obj: Any) -> Any:
    """The object as it reads back from JSON (tuples -> lists, numpy scalars rejected)."""
    return json.loads(json.dumps(obj))


def description_key(description: Mapping[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of ``description``."""
    return hashlib.sha256(canonical_json(description).encode()).hexdigest()


def chunk_digests(path: str | Path, chunk: int | None = None) -> list[str]:
    """SHA-256 hex digest of every ``chunk`` bytes (default :data:`CHUNK_BYTES`) of the file, in order."""
    chunk = chunk or CHUNK_BYTES
    out = []
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            out.append(hashlib.sha256(block).hexdigest())
    return out


def check_chunks(path: Path, recorded: list[str]) -> str | None:
    """None when every chunk of ``path`` has its recorded digest, else what differs."""
    found = chunk_digests(path)
    if len(found) != len(recorded):
        return f"{path} has {len(found)} checksummed chunks, meta.json records {len(recorded)}"
    for i, (a, b) in enumerate(zip(found, recorded)):
        if a != b:
            return f"{path} bytes {i * CHUNK_BYTES}..{(i + 1) * CHUNK_BYTES - 1} differ from their checksum (corrupt)"
    return None


def remove_leftovers(root: Path) -> list[Path]:
    """Remove temporary files of dead builders in the cache folders under ``root``; returns them.

    Only folders named like caches (``<prefix>-<16 hex digits>``) are looked into, and only
    files named ``.<name>.tmp-<pid>[-...]`` whose process no longer exists are removed.
    """
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    folders = [d for d in root.iterdir() if _CACHE_DIR_RE.match(d.name) and d.is_dir()]
    for folder in folders:
        removed += remove_stale_temporaries(folder)
    return removed


def remove_stale_locks(root: Path) -> list[Path]:
    """Remove cache lock files (``<prefix>-<16 hex>.lock``) in ``root`` that no process holds.

    filelock's :class:`~filelock.UnixFileLock` leaves its file in place on release (so that
    waiters share one inode), so without this one empty file per cache folder ever built would
    stay. A file is removed only while this process holds its lock (a non-blocking acquire
    that fails means a build is running): a process that opened the old file and waits on it
    finds, once it wins the lock, that the file was unlinked and locks the new file instead
    (filelock >= 3.20.4 re-checks the link count after ``flock``; hence that minimum).
    """
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    for path in root.glob("*.lock"):
        if not _CACHE_DIR_RE.match(path.stem):
            continue  # not one of ours
        lock = FileLock(path, blocking=False)
        try:
            with lock:
                path.unlink()
            removed.append(path)
        except (Timeout, OSError):
            continue  # held (a build is running), or already gone
    return removed


@dataclass
class ArraySpec:
    """An array to be written by filling it in place (avoids holding large arrays twice).

    ``fill(out)`` receives a writable ``shape``/``dtype`` array (a memory map when on disk).
    """

    shape: tuple[int, ...]
    dtype: str
    fill: Callable[[np.ndarray], None]


class CheckedArrays(dict):
    """``name -> Path`` of a cache's arrays; a file listed in ``pending`` is verified on first access.

    The first ``arrays[name]`` (or ``get``) hashes that file's chunks and compares them with
    ``meta.json`` before returning the path. On a mismatch ``meta.json`` is removed (so no
    process reuses the cache) and ``repair(problem)`` is called once: it rebuilds the cache
    and returns the new chunk digests of every file, and the file is checked again against
    them. Without ``repair``, or when the rebuilt file is corrupt too, :class:`CacheError`.
    """

    def __init__(self, items: Mapping[str, Path | np.ndarray], pending: Mapping[str, list[str]] | None = None,
                 meta_path: Path | None = None, repair: Callable[[str], dict[str, list[str]]] | None = None) -> None:
        super().__init__(items)
        self.pending = dict(pending or {})
        self.meta_path = meta_path
        self.repair = repair

    def __getitem__(self, name: str) -> Path | np.ndarray:
        value = super().__getitem__(name)
        recorded = self.pending.get(name)
        if recorded is not None:
            problem = check_chunks(Path(value), recorded)
            if problem is not None:
                self._invalidate()
                self._repair(name, Path(value), problem)
            self.pending.pop(name, None)
        return value

    def _invalidate(self) -> None:
        if self.meta_path is not None:
            with contextlib.suppress(OSError):
                self.meta_path.unlink()

    def _repair(self, name: str, path: Path, problem: str) -> None:
        """Rebuild once (``repair``) and check ``path`` against the rebuilt digests; CacheError otherwise."""
        repair, self.repair = self.repair, None  # once per entry
        if repair is None:
            raise CacheError(f"patch cache: {problem}; the cache was invalidated and is rebuilt on the next open")
        chunks = repair(problem)
        self.pending = {n: chunks[n] for n in self.pending if n in chunks}
        again = check_chunks(path, chunks[name])
        if again is not None:
            self._invalidate()
            raise CacheError(
                f"patch cache {path.parent}: {path.name} was corrupt, was rebuilt, and is corrupt again ({again}); "
                f"the disk or something writing into the folder damages it: check the disk, or give another "
                f"cache_dir (or cache_dir=None to keep the cache in memory)"
            )

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self else default

    def values(self):  # type: ignore[override]
        return [self[k] for k in self]

    def items(self):  # type: ignore[override]
        return [(k, self[k]) for k in self]


@dataclass
class CacheEntry:
    """A verified cache (or an in-memory equivalent when ``path`` is None).

    Attributes
    ----------
    arrays : name -> ``.npy`` Path (on disk) or ndarray (in memory); large files are
        verified on first access (:class:`CheckedArrays`)
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
    with atomic_path(path) as tmp:  # ".<name>.tmp-<pid>-...": a later open cleans up after a killed builder
        if isinstance(value, ArraySpec):
            out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.dtype(value.dtype), shape=tuple(value.shape))
            preallocate(tmp)  # a full disk fails here, not as SIGBUS while filling
            value.fill(out)
            out.flush()
            del out
        else:
            with open(tmp, "wb") as f:
                np.save(f, np.ascontiguousarray(value), allow_pickle=False)


#: a cache build writing more than this (bytes) shows a progress bar over its arrays on stderr
PROGRESS_BYTES = 64 << 20


def _nbytes(value: np.ndarray | ArraySpec) -> int:
    """Bytes ``value`` takes once written."""
    if isinstance(value, ArraySpec):
        return int(np.prod(value.shape, dtype=np.int64)) * np.dtype(value.dtype).itemsize
    return int(value.nbytes)


def _build_progress(total_bytes: int) -> Any:
    """A bar in MiB over the arrays of a cache build; shown only for builds over :data:`PROGRESS_BYTES`."""
    from hsi._progress import progress_bar

    return progress_bar(total_bytes >> 20, "building patch cache", "MiB", show=total_bytes > PROGRESS_BYTES,
                        leave=False)


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
    def _read_meta(self) -> tuple[dict | None, str | None]:
        meta_path = self.path / "meta.json"
        if not meta_path.is_file():
            return None, f"{meta_path} is missing (incomplete build)"
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError) as err:
            return None, f"{meta_path} is unreadable: {err}"
        if not isinstance(meta, dict) or meta.get("format") != CACHE_FORMAT:
            found = meta.get("format") if isinstance(meta, dict) else None
            return None, f"{meta_path} has format {found!r}, expected {CACHE_FORMAT}"
        if canonical_json(meta.get("description")) != canonical_json(self.description):
            return None, f"{meta_path} describes different inputs than expected (stale or edited)"
        return meta, None

    def _check_file(self, name: str, rec: dict) -> str | None:
        """Size and ``.npy`` header of one array file (its content is checked by chunk digests)."""
        p = self.path / f"{name}.npy"
        try:
            size = p.stat().st_size
        except OSError:
            return f"{p} is missing"
        if size != rec.get("nbytes"):
            return f"{p} has {size} bytes, expected {rec.get('nbytes')} (truncated or replaced)"
        try:
            arr = np.load(p, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as err:
            return f"{p} is not a readable .npy file: {err}"
        if list(arr.shape) != rec.get("shape") or arr.dtype.str != rec.get("dtype"):
            return f"{p} holds {arr.shape} {arr.dtype.str}, expected {tuple(rec.get('shape') or ())} {rec.get('dtype')}"
        if not isinstance(rec.get("chunks"), list):
            return f"{self.path / 'meta.json'} has no chunk checksums for {p.name}"
        return None

    def verify(self) -> tuple[CacheEntry | None, str | None]:
        """``(entry, None)`` when valid; ``(None, reason)`` otherwise (reason None = absent)."""
        if not self.path.is_dir():
            return None, None
        meta, reason = self._read_meta()
        if meta is None:
            return None, reason
        files = meta.get("files", {})
        for name, rec in files.items():
            problem = self._check_file(name, rec)
            if problem is not None:
                return None, problem
        full = sum(int(rec["nbytes"]) for rec in files.values()) <= FULL_CHECK_BYTES
        pending = {}
        for name, rec in files.items():
            if full:
                problem = check_chunks(self.path / f"{name}.npy", rec["chunks"])
                if problem is not None:
                    return None, problem
            else:
                pending[name] = rec["chunks"]
        state_path = self.path / "state.json"
        try:
            state_bytes = state_path.read_bytes()
        except OSError:
            return None, f"{state_path} is missing"
        if hashlib.sha256(state_bytes).hexdigest() != meta.get("state_sha256"):
            return None, f"{state_path} checksum differs from meta.json (corrupt)"
        arrays = CheckedArrays({n: self.path / f"{n}.npy" for n in files}, pending, self.path / "meta.json")
        return CacheEntry(arrays, json.loads(state_bytes), self.path, False, meta), None

    # ------------------------------------------------------------------ build
    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the cache's lock file (:class:`filelock.FileLock`, an ``flock`` the kernel drops when the holder dies)."""
        make_cache_dir(self.root)
        lock = FileLock(self.lock_path)
        try:
            lock.acquire()
        except OSError as err:
            raise CacheError(f"cache_dir {self.root}: cannot create lock file {self.lock_path} ({err})") from err
        try:
            yield
        finally:
            lock.release()

    def _write(self, arrays: dict[str, np.ndarray | ArraySpec], state: dict[str, Any]) -> CacheEntry:
        self.path.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            (self.path / "meta.json").unlink()  # invalidate first: a crash leaves no valid meta
        files = {}
        sizes = {name: _nbytes(value) for name, value in arrays.items()}
        with _build_progress(sum(sizes.values())) as bar:
            for name, value in arrays.items():
                p = self.path / f"{name}.npy"
                _atomic_save_array(p, value)
                arr = np.load(p, mmap_mode="r", allow_pickle=False)
                files[name] = {"shape": list(arr.shape), "dtype": arr.dtype.str, "nbytes": p.stat().st_size,
                               "chunks": chunk_digests(p)}
                del arr
                bar.update(sizes[name] >> 20)
        state_bytes = canonical_json(state).encode()
        write_bytes_atomic(self.path / "state.json", state_bytes)
        from hsi import __version__

        meta = {"format": CACHE_FORMAT, "key": self.key, "description": self.description, "files": files,
                "chunk_bytes": CHUNK_BYTES, "state_sha256": hashlib.sha256(state_bytes).hexdigest(),
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "created_by_pid": os.getpid(),
                "hsi_version": __version__}
        write_json_atomic(self.path / "meta.json", meta, indent=1, sort_keys=True, newline=False)
        return CacheEntry(CheckedArrays({n: self.path / f"{n}.npy" for n in files}), json.loads(state_bytes),
                          self.path, True, meta)

    def _clean(self) -> None:
        """Remove dead builders' temporary files and unheld lock files (never fatal)."""
        try:
            for p in remove_leftovers(self.root) + remove_stale_locks(self.root):
                logger.info("removed leftover %s", p)
        except OSError as err:  # pragma: no cover - cleaning is best effort
            logger.debug("could not clean %s: %s", self.root, err)

    def open_or_build(self, builder: Builder) -> CacheEntry:
        """Return the verified cache, building it (under the lock) when absent or invalid."""
        if self.root.exists() and not self.root.is_dir():
            raise CacheError(f"cache_dir {self.root}: is a file, not a folder; give a folder as cache_dir")
        self._clean()
        entry, reason = self.verify()
        if entry is not None:
            logger.debug("patch cache %s reused", self.path)
            return self._repairable(entry, builder)
        with self._locked():
            entry, reason = self.verify()  # another process may have built it meanwhile
            if entry is not None:
                logger.info("patch cache %s built by another process; reusing", self.path)
                return self._repairable(entry, builder)
            if reason is not None:
                logger.warning("patch cache %s is invalid: %s; rebuilding", self.path, reason)
            else:
                logger.info("building patch cache %s", self.path)
            return self._build(builder)

    def _build(self, builder: Builder) -> CacheEntry:
        """Build and write the cache (under the lock)."""
        arrays, state = builder()
        try:
            return self._write(arrays, state)
        except OSError as err:
            raise CacheError(f"could not write patch cache {self.path}: {err}") from err

    def _repairable(self, entry: CacheEntry, builder: Builder) -> CacheEntry:
        """``entry`` whose files left to check on first touch are rebuilt (once) when found corrupt."""
        if isinstance(entry.arrays, CheckedArrays) and entry.arrays.pending:
            entry.arrays.repair = lambda problem: self._rebuild_in_use(entry, builder, problem)
        return entry

    def _rebuild_in_use(self, entry: CacheEntry, builder: Builder, problem: str) -> dict[str, list[str]]:
        """Rebuild the cache ``entry`` reads from (a file was corrupt); the new chunk digests of every file.

        Another process may have rebuilt it meanwhile: its valid cache is taken instead. The
        rebuilt state and every file must be the bytes ``entry`` was opened with (files already
        handed out stay in use), else :class:`CacheError`.
        """
        with self._locked():
            fresh, _ = self.verify()
            if fresh is None:
                fresh = self._build(builder)
        old, new = entry.meta.get("files", {}), fresh.meta.get("files", {})
        differ = [n for n in old if old[n]["chunks"] != new.get(n, {}).get("chunks")]
        if differ or entry.meta.get("state_sha256") != fresh.meta.get("state_sha256"):
            with contextlib.suppress(OSError):
                (self.path / "meta.json").unlink()
            what = ", ".join(f"{n}.npy" for n in differ) or "state.json"
            raise CacheError(
                f"patch cache {self.path}: {problem}; the rebuilt cache differs from the one this process opened "
                f"(in {what}), so the build is not reproducible here; run again (the next open builds afresh)"
            )
        logger.warning("patch cache %s: %s; rebuilt it", self.path, problem)
        return {n: rec["chunks"] for n, rec in new.items()}


def make_cache_dir(root: Path) -> None:
    """Create the cache folder ``root`` (:class:`CacheError` naming it when it cannot be made or written to)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CacheError(
            f"cache_dir {root}: cannot create the cache folder ({type(err).__name__}: {err}); "
            f"give a writable folder as cache_dir, or cache_dir=None to keep the cache in memory"
        ) from err
    if not os.access(root, os.W_OK | os.X_OK):
        raise CacheError(
            f"cache_dir {root}: the folder is not writable; give a writable folder as cache_dir, "
            f"or cache_dir=None to keep the cache in memory"
        )
