"""Where scene files live, how they are found, and how they are downloaded and verified.

Layout (see ``hsi scenes --guide``): ``<root>/<scene_name>/<file>``, or the file directly in
``<root>``. ``root`` is the ``root=`` argument, else ``$HSI_DATA_DIR``, else
``~/.cache/hsi``. No scene file is ever written below ``root`` except by a download, which
writes to a temporary file in the target folder and renames it into place only after the
checksum (or size) matched (the one other file, the checked-files stamp below, lands in
``root`` only when ``root`` is the default ``~/.cache/hsi``).

What is checked, and when (:func:`verify_file`). A file found under its registry name is
checked against the registry's reference, where one is known, on every load: its size
(a ``stat``, free), then its SHA-256. The SHA-256 of a file is computed once per file
identity (device, inode, size, modification and change times) and remembered in
:func:`checked_files_path` (``$XDG_CACHE_HOME/hsi/checked-files.json``, default
``~/.cache/hsi/checked-files.json``; never beside the data, which may be read-only), so a
later run re-hashes a file only when it was written, replaced or copied since. Any write
changes the change time, which no user call can set back, so a changed file is always
hashed again. Files found under an alternative name (another form of the data) have no
reference and are not checked; nor are any with ``checksum=False`` (a scene option, for a
deliberate re-save under the registry name). Either way the shapes are checked after
loading. Downloads are always verified before they are placed (:func:`fetch`, with pooch's
downloaders; the SHA-256 is :func:`sha256sum`'s, as for a file already present).
"""

from __future__ import annotations

import ftplib
import json
import logging
import os
import shutil
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from hsi._atomic import atomic_path, write_json_atomic
from hsi._identity import full_sha256
from hsi._progress import progress_bar
from hsi.errors import DatasetNotFoundError, IntegrityError

ENV_VAR = "HSI_DATA_DIR"
DEFAULT_ROOT = Path("~/.cache/hsi")
DOC = "`hsi scenes --guide`"
_CHUNK = 1 << 20
#: at most this many files are remembered in the checked-files stamp (the least recently checked go first)
STAMP_FILES = 1000

logger = logging.getLogger("hsi.scenes")


@dataclass(frozen=True)
class RemoteFile:
    """One file a scene needs.

    Attributes
    ----------
    filename : name the file is looked for (and saved) under.
    url : public download URL, or None when there is no stable direct link.
    sha256 : hex digest of the original file, or None when no reference is known (then the
        size, if given, and the array shapes after loading are what is verified).
    size : size in bytes, or None.
    alternatives : other accepted names for the same content (first match wins, after
        ``filename``); not checksummed (their bytes differ from the reference).
    note : extra advice shown in the "not found" message (companion files, forms).
    """

    filename: str
    url: str | None = None
    sha256: str | None = None
    size: int | None = None
    alternatives: tuple[str, ...] = ()
    note: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.filename, *self.alternatives)


def resolve_root(root: str | os.PathLike | None = None) -> Path:
    """``root`` if given, else ``$HSI_DATA_DIR``, else ``~/.cache/hsi`` (expanded, not created)."""
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return DEFAULT_ROOT.expanduser()


def search_dirs(root: Path, scene: str) -> list[Path]:
    """Folders searched for a scene's files, in order: ``<root>/<scene>``, then ``<root>``."""
    return [root / scene, root]


def locate(root: Path, scene: str, names: Sequence[str]) -> Path | None:
    """First existing file among ``names`` in :func:`search_dirs` (all names in a folder
    before the next folder), or None."""
    for folder in search_dirs(root, scene):
        for name in names:
            path = folder / name
            if path.is_file():
                return path
    return None


def sha256sum(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file (:func:`hsi._identity.full_sha256`)."""
    return full_sha256(path)


def checked_files_path() -> Path:
    """Where the SHA-256 of checked files is remembered: ``$XDG_CACHE_HOME/hsi/checked-files.json``.

    ``$XDG_CACHE_HOME`` defaults to ``~/.cache``. Never beside the data (which may be read-only).
    """
    base = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "hsi" / "checked-files.json"


def _identity(st: os.stat_result) -> list[int]:
    """What says a file is unchanged: device, inode, size, modification and change times (ns)."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _read_stamp(stamp: Path) -> dict[str, dict]:
    """The remembered ``{path: {"identity": [...], "sha256": hex}}``; empty when absent or unreadable."""
    try:
        files = json.loads(stamp.read_text()).get("files")
    except (OSError, ValueError, AttributeError):
        return {}
    return files if isinstance(files, dict) else {}


def _remember(stamp: Path, key: str, record: dict) -> None:
    """Add ``record`` under ``key`` to the stamp (atomically; a stamp that cannot be written only costs a re-hash)."""
    files = _read_stamp(stamp)
    files.pop(key, None)
    files[key] = record  # last: the most recently checked
    files = dict(list(files.items())[-STAMP_FILES:])
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(stamp, {"format": 1, "files": files}, indent=0, newline=False)
    except OSError as err:
        logger.debug("could not remember the checksum of %s in %s: %s", key, stamp, err)


def file_sha256(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file, computed once per file identity (see the module docstring) and remembered.

    Kept by hand (pooch re-hashes a present file on every call): hashing runs at about
    0.7 s per GB (measured on the 2-core development machine, a 256 MiB file in the page
    cache: 0.66 s/GB with :func:`sha256sum`, the package's one file hash, also used for
    downloads; 0.71 s/GB with ``pooch.file_hash``), which is 4 ms for the largest checksummed
    registry file (6 MB) but seconds on every load for a registered scene of several GB;
    remembered, a file already checked costs a ``stat``.
    """
    p = Path(path).resolve()
    identity = _identity(p.stat())
    stamp = checked_files_path()
    known = _read_stamp(stamp).get(str(p))
    if isinstance(known, dict) and known.get("identity") == identity and isinstance(known.get("sha256"), str):
        return known["sha256"]
    digest = sha256sum(p)
    if _identity(p.stat()) == identity:  # unchanged while it was read
        _remember(stamp, str(p), {"identity": identity, "sha256": digest})
    return digest


def verify_file(path: Path, spec: RemoteFile) -> None:
    """Raise :class:`IntegrityError` if ``path`` does not have ``spec``'s size or SHA-256 (those known).

    The size is compared first (no read); the SHA-256 is :func:`file_sha256`'s, computed once
    per file identity. The message names the file, what was expected, what was found and the fix.
    """
    fix = (f"the file is damaged or a different version: replace it with the original (see {DOC}), or, "
           f"for a deliberate re-save of the same data, pass the scene option checksum=False "
           f"(--scene-options checksum=false)")
    if spec.size is not None:
        size = path.stat().st_size
        if size != spec.size:
            raise IntegrityError(f"{path}: size {size} bytes, expected {spec.size} bytes for {spec.filename}; {fix}")
    if spec.sha256 is not None:
        found = file_sha256(path)
        if found != spec.sha256.lower():
            raise IntegrityError(f"{path}: SHA-256 {found}, expected {spec.sha256.lower()} for {spec.filename}; {fix}")


def _pooch() -> Any:
    """pooch, imported when a file is fetched: its import pulls in ``tqdm.auto``, which warns in a notebook kernel
    without ipywidgets (hsi draws its own progress, so that warning is about nothing hsi shows)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        import pooch
    return pooch


def _copy_file_url(url: str, output_file: str, pooch_: object = None) -> None:
    """Copy a ``file://`` URL (a mirror on a local or shared disk) to ``output_file``.

    Kept by hand because pooch has no downloader for ``file://`` (its downloaders cover
    http(s), ftp, sftp and DOIs); the ``pooch_`` argument is the downloader signature's.
    """
    shutil.copyfile(urllib.request.url2pathname(urllib.parse.urlsplit(url).path), output_file)


def _downloader(url: str, bar: Any, timeout: float) -> Callable[..., object]:
    """The pooch downloader for ``url``'s scheme, showing its bytes on ``bar`` (False: no progress)."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme == "file":
        return _copy_file_url
    if scheme not in ("http", "https", "ftp"):
        raise ValueError(f"{url}: unsupported URL scheme {scheme!r} (http, https, ftp or file)")
    if scheme == "ftp":
        return _pooch().FTPDownloader(progressbar=bar, chunk_size=_CHUNK, timeout=timeout)
    return _pooch().HTTPDownloader(progressbar=bar, chunk_size=_CHUNK, timeout=timeout,
                                headers={"User-Agent": "hsi-downloader"})


def _check_download(url: str, tmp: Path, dest: Path, spec: RemoteFile | None) -> None:
    """Raise :class:`IntegrityError` unless the downloaded ``tmp`` has ``spec``'s size and SHA-256 (those known)."""
    if spec is None:
        return
    n_bytes = tmp.stat().st_size
    if spec.size is not None and n_bytes != spec.size:
        raise IntegrityError(f"download of {url}: got {n_bytes} bytes, expected {spec.size} for {spec.filename}; "
                             f"nothing was saved to {dest}")
    if spec.sha256 is not None:
        found = sha256sum(tmp)
        if found != spec.sha256.lower():
            raise IntegrityError(f"download of {url}: SHA-256 {found}, expected {spec.sha256} for "
                                 f"{spec.filename}; nothing was saved to {dest}")


def fetch(
    url: str, dest: Path, spec: RemoteFile | None = None, *, progress: bool = True, timeout: float = 60.0
) -> Path:
    """Download ``url`` to ``dest`` atomically and verify it.

    pooch's downloaders fetch the bytes (http, https, ftp; ``file://`` is copied) into a
    temporary file in ``dest``'s folder (:func:`hsi._atomic.atomic_path`), with a progress
    bar of the package's own (:func:`hsi._progress.progress_bar`: a bar on a terminal, a few
    lines when piped); :func:`sha256sum` computes its SHA-256. Only when the size and
    SHA-256 (those of ``spec`` that are known) match is it renamed to ``dest``; on any
    failure the temporary file is removed and nothing is left at ``dest``.
    ``pooch.retrieve`` is not used: it re-downloads a present file whose hash differs, where
    hsi refuses it and says what to do (:func:`verify_file`), and it would place the file
    without the size check.

    Raises
    ------
    IntegrityError
        Size or checksum mismatch.
    OSError (requests.RequestException, FileNotFoundError...), ValueError, ftplib.Error
        Network or file-system failure, or a URL of an unsupported scheme, unchanged.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    # ".<name>.tmp-<pid>-...part", renamed to dest only once verified; removed on any failure
    local = urllib.parse.urlsplit(url).scheme.lower() == "file"
    # pooch sets the total from the server's Content-Length; not 0 before: a tqdm bar of total 0 is falsy,
    # and pooch would skip it
    total = spec.size if spec is not None and spec.size else 1
    bar = progress_bar(total, dest.name, unit="B", unit_scale=True, unit_divisor=1024, leave=False) \
        if progress and not local else False
    try:
        with atomic_path(dest, suffix=".part") as tmp:
            _downloader(url, bar, timeout)(url, str(tmp), None)
            _check_download(url, tmp, dest, spec)
    finally:
        if bar is not False:
            bar.close()  # pooch closes it only after a complete download
    return dest


def not_found(
    scene: str, root: Path, missing: Sequence[RemoteFile], reason: str = "", page: str | None = None
) -> DatasetNotFoundError:
    """The :class:`DatasetNotFoundError` that says which files to place where, and how.

    Its message speaks to a script (``download=True``, ``root=``); its ``command_line`` attribute is
    the same message in the words of the ``hsi`` commands (``--download``, ``--root``), which they
    show instead, so neither mixes the two.
    """
    files = []
    for spec in missing:
        alt = f" (or {', '.join(spec.alternatives)})" if spec.alternatives else ""
        alt += f" [{spec.note}]" if spec.note else ""
        src = spec.url or (f"no direct link; get it from {page}" if page else "no direct link known")
        files.append(f"  {spec.filename}{alt}  <-  {src}")
    fetchable = any(spec.url for spec in missing) and reason in ("", "download=False")  # not when a download failed

    def message(download: str, download_off: str, root_option: str) -> str:
        why = download_off if reason == "download=False" else reason
        lines = [f"scene {scene!r}: file(s) not found" + (f" ({why})." if why else "."),
                 f"Place these files in {root / scene} (or directly in {root}):", *files]
        if fetchable:
            lines.append(f"or {download} to fetch them.")
        lines.append(f"root is {root_option}, else ${ENV_VAR}, else {DEFAULT_ROOT}; see {DOC}.")
        return "\n".join(lines)

    err = DatasetNotFoundError(message("pass download=True", "download=False", "the root= argument"))
    err.command_line = message("add --download", "no --download", "--root FOLDER")  # type: ignore[attr-defined]
    return err


def ensure_files(
    scene: str,
    files: Sequence[RemoteFile],
    root: Path,
    download: bool = False,
    *,
    checksum: bool = True,
    page: str | None = None,
) -> dict[str, Path]:
    """Paths of ``files`` (keyed by ``filename``), downloading missing ones if asked.

    Placed files found under their registry name are checked against its size and SHA-256,
    where known (:func:`verify_file`, hashed once per file identity), unless
    ``checksum=False``. Downloaded files are always verified. Missing files without
    ``download=True``, or whose download fails, raise :class:`DatasetNotFoundError` naming
    every missing file.
    """
    found: dict[str, Path] = {}
    missing: list[RemoteFile] = []
    for spec in files:
        path = locate(root, scene, spec.names)
        if path is None:
            missing.append(spec)
            continue
        if checksum and path.name == spec.filename:
            verify_file(path, spec)
        found[spec.filename] = path
    if not missing:
        return found
    if not download:
        raise not_found(scene, root, missing, "download=False", page)
    no_url = [spec for spec in missing if not spec.url]
    if no_url:
        raise not_found(scene, root, missing, "no download URL for " + ", ".join(s.filename for s in no_url), page)
    for spec in missing:
        dest = root / scene / spec.filename
        try:
            found[spec.filename] = fetch(spec.url, dest, spec)  # type: ignore[arg-type]
        except IntegrityError:
            raise
        except (ValueError, *ftplib.all_errors) as err:  # offline, HTTP or FTP error, bad URL
            raise not_found(scene, root, missing, f"download of {spec.url} failed ({err})", page) from err
    return found
