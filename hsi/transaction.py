"""Output folders written as transactions: staging beside the target, commit, manifest last.

One policy for every command that writes a folder of outputs (``hsi infer``, ``hsi train``,
``hsi convert --to npy``, ``hsi evaluate``), used as one context manager, :func:`staged`::

    with transaction.staged(out, manifest="inference.json", outputs=("labels.npy", "metrics.json"),
                            overwrite=overwrite, command="hsi infer") as txn:
        txn.require_space(needed)  # once the size is known; or staged(..., needed=...) up front
        ...  # write into txn.path
        txn.commit({...})  # explicit; leaving the block without it discards what was staged

The rules it applies:

- **Checks before any work** (:func:`check_target`): the target is a folder or absent; a
  folder that holds outputs is refused unless ``overwrite``; with ``overwrite`` only files
  listed in the folder's manifest (hsi wrote them) are replaced, and a file hsi did not
  write raises :class:`~hsi.errors.OverwriteError`. Other files in the folder are never
  touched.
- **Staging**: the run writes into ``<parent>/.<name>.staging-<pid>``, beside the target
  (same filesystem, so every move is a rename).
- **Commit** (:meth:`Staging.commit`), in this order: checksums of the staged files; the
  old manifest removed; the staged files renamed into place and the old listed files that
  this run did not write removed; the new manifest (each file's size and SHA-256, and the versions
  the run used: :func:`hsi._versions.package_versions`) written atomically, last; the staging folder removed. A journal ``.<manifest>.commit`` written
  before the old manifest goes names every file the commit touches, so the files of a
  commit that was killed are still known as hsi's (``--overwrite`` replaces them). Whenever the process dies, the folder
  either has the old manifest and the old files, or no manifest; a manifest never lists a
  file whose checksum differs (:func:`verify_manifest`).
- **Leftovers** (:func:`remove_leftovers`): the next run that opens a target removes
  staging folders beside it whose process is gone, ``.<name>.tmp-<pid>-`` files of dead
  writers, and ``.partial`` maps left inside it by earlier versions; a killed training run's
  staging folder that holds its ``last.ckpt`` is kept as ``<name>.killed-<pid>`` instead, with
  a warning that says how to continue it (:func:`keep_killed`).
- **Disk space**: :func:`require_free_space` before starting (``needed=``, or
  :meth:`Transaction.require_space` once the size is known) and :func:`disk_full_as_error`
  around the writes turn a full disk into one :class:`~hsi.errors.DiskFullError` naming the
  folder and the bytes needed.
- **Failure**: any error inside the block removes the staging folder (and an output folder
  the caller created for this run, if still empty); the target is left as it was. Ctrl-C
  may instead keep part of the work (``on_interrupt``: training commits its resumable state).
- **Other processes** (DDP ranks other than 0) write into the owner's staging folder
  (``inherited=``) and never check, commit or remove anything.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hsi._atomic import (
    fsync_dir,
    is_disk_full,
    move_into_place,
    pid_alive,
    remove_stale_temporaries,
    write_json_atomic,
)
from hsi._identity import full_sha256
from hsi._versions import package_versions
from hsi.errors import DiskFullError, OverwriteError, RunOutputError

__all__ = ["MANIFEST_FORMAT", "Staging", "Transaction", "begin", "check_target", "disk_full_as_error",
           "disk_full_error", "file_record", "finished_outputs", "keep_killed", "listed", "read_manifest",
           "remove_leftovers",
           "remove_listed", "require_free_space", "staged", "verify_manifest"]

#: ``format`` of every manifest written here
MANIFEST_FORMAT = "hsi.outputs"
#: ``.<name>.staging-<pid>``
STAGING_RE = re.compile(r"^\.(?P<name>.+)\.staging-(?P<pid>\d+)$")
#: memory-mapped maps of earlier versions, written inside the output folder
_LEGACY_PARTIAL_RE = re.compile(r"^\..+\.npy\.partial$")


def _absolute(out: str | Path) -> Path:
    return Path(os.path.abspath(os.fspath(out)))


def file_record(path: Path) -> dict[str, Any]:
    """``{"size": bytes, "sha256": hex}`` of one file."""
    return {"size": path.stat().st_size, "sha256": full_sha256(path)}


def read_manifest(folder: Path, manifest: str) -> dict[str, Any] | None:
    """The manifest ``folder/manifest`` as a dict, or None when absent or not one of ours."""
    try:
        data = json.loads((folder / manifest).read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("files"), (dict, list)):
        return None
    return data


def _journal(folder: Path, manifest: str) -> Path:
    return folder / f".{manifest}.commit"


def listed(folder: Path, manifest: str) -> set[str]:
    """Names (relative paths) the manifest of ``folder`` lists: the files hsi wrote there.

    A manifest of an earlier version (a list of names, the manifest among them) counts too,
    and so do the names in the journal of a commit that was interrupted (``.<manifest>.commit``):
    its files are hsi's even though no manifest vouches for them.
    """
    names: set[str] = set()
    for path in (folder / manifest, _journal(folder, manifest)):
        data = read_manifest(path.parent, path.name)
        if data is not None:
            names |= set(data["files"])
    return names | {manifest}


def _ours(name: str, ours: set[str]) -> bool:
    """A name is hsi's when the manifest lists it, or (a folder such as ``logs``) only files under it."""
    return name in ours or any(n.startswith(name + "/") for n in ours)


def check_target(out: str | Path, *, manifest: str, outputs: Iterable[str], overwrite: bool, command: str) -> Path:
    """The absolute target folder, after checking that writing there replaces nothing it should not.

    Raises
    ------
    RunOutputError
        ``out`` is a file, or it holds outputs and ``overwrite`` is False.
    OverwriteError
        ``overwrite`` is True but an output name exists that no manifest there lists.
    """
    target = _absolute(out)
    if target.exists() and not target.is_dir():
        raise RunOutputError(f"{target}: exists and is not a folder; {command} writes a folder of outputs there")
    if not target.is_dir():
        return target
    ours = listed(target, manifest)
    names = sorted({*outputs, manifest, *(n.split("/")[0] for n in ours)})
    present = [n for n in names if (target / n).exists()]
    if present and not overwrite:
        raise RunOutputError(
            f"{target}: already holds {', '.join(present)}; choose another folder, or pass --overwrite "
            f"(overwrite=True) to replace the files an earlier {command} run wrote there (files it did not write "
            "are never touched)"
        )
    foreign = [n for n in present if not _ours(n, ours)]
    if foreign:
        raise OverwriteError(
            f"{target / foreign[0]}: exists but was not written by {command} (not listed in {target / manifest}); "
            "move it away or choose another folder"
        )
    return target


def remove_leftovers(target: Path, resumable: str | None = None, command: str = "the run") -> list[Path]:
    """Remove what interrupted runs left beside and inside ``target``; returns what was removed.

    Staging folders ``.<any>.staging-<pid>`` in the parent whose process is gone, temporary
    files ``.<name>.tmp-<pid>-...`` of dead writers in the parent and in ``target``, and
    ``.<name>.npy.partial`` maps earlier versions left in ``target``. A dead staging folder
    that holds a ``resumable`` file (a killed training run's ``last.ckpt``) is kept instead, as
    ``<parent>/<name>.killed-<pid>``, and a warning says how to continue it (:func:`keep_killed`).
    """
    removed = remove_stale_temporaries(target.parent)
    with contextlib.suppress(OSError):
        for entry in os.scandir(target.parent):
            m = STAGING_RE.match(entry.name)
            if m and int(m.group("pid")) != os.getpid() and not pid_alive(int(m.group("pid"))):
                if resumable and (Path(entry.path) / resumable).is_file():
                    keep_killed(Path(entry.path), resumable, command)
                    continue
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(Path(entry.path))
    if target.is_dir():
        removed += remove_stale_temporaries(target)
        for path in target.iterdir():
            if _LEGACY_PARTIAL_RE.match(path.name) and path.is_file():
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def keep_killed(staging: Path, resumable: str, command: str) -> Path:
    """Rename the staging folder of a killed run to ``<parent>/<name>.killed-<pid>`` (a free name) and say so.

    A run killed (SIGKILL, out of memory, a lost node) leaves its staging folder; when it holds
    resumable state, deleting it would silently throw that work away. Kept under a visible name
    that no later run removes, it can be continued (``--resume <kept>/<resumable>``) or deleted.
    """
    m = STAGING_RE.match(staging.name)
    assert m is not None, staging
    kept = staging.parent / f"{m.group('name')}.killed-{m.group('pid')}"
    n = 1
    while kept.exists():
        n += 1
        kept = staging.parent / f"{m.group('name')}.killed-{m.group('pid')}-{n}"
    staging.rename(kept)
    logging.getLogger("hsi").warning(
        f"{command} in {staging.parent / m.group('name')} (process {m.group('pid')}) was killed before it finished; "
        f"its state is kept in {kept} (continue with --resume {kept / resumable}, or delete that folder)")
    return kept


def _staged_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink())


def _prune_empty(path: Path, stop: Path) -> None:
    """Remove ``path``'s now-empty parent folders up to (not including) ``stop``."""
    parent = path.parent
    while parent != stop and stop in parent.parents:
        try:
            parent.rmdir()
        except OSError:
            return
        parent = parent.parent


def _test_hook(moment: str) -> None:
    """No-op; tests patch it to interrupt a commit at a given moment."""


@dataclass(frozen=True)
class Staging:
    """A staging folder ``<parent>/.<name>.staging-<pid>`` and the target it commits to.

    Attributes
    ----------
    target : Path
        The output folder (absolute).
    path : Path
        Where the run writes until :meth:`commit`.
    manifest : str
        Name of the manifest written last into ``target``.
    command : str
        What writes it (``"hsi infer"``), for messages and the manifest.
    """

    target: Path
    path: Path
    manifest: str
    command: str

    @classmethod
    def for_target(cls, target: Path, manifest: str, command: str, pid: int | None = None) -> Staging:
        """The staging folder of ``target`` for process ``pid`` (this one by default)."""
        target = _absolute(target)
        pid = os.getpid() if pid is None else pid
        return cls(target, target.parent / f".{target.name}.staging-{pid}", manifest, command)

    @classmethod
    def from_path(cls, path: str | Path, manifest: str, command: str) -> Staging:
        """The staging of an existing staging folder path (e.g. passed to another DDP rank)."""
        path = _absolute(path)
        m = STAGING_RE.match(path.name)
        if m is None:
            raise ValueError(f"{path}: not a staging folder (.<name>.staging-<pid>)")
        return cls(path.parent / m.group("name"), path, manifest, command)

    @property
    def owned(self) -> bool:
        """Whether this process created the staging folder (only the owner commits or removes it)."""
        return self.path.name.endswith(f".staging-{os.getpid()}")

    def abort(self) -> None:
        """Remove the staging folder (after a failure); the target is left as it was."""
        if self.owned:
            shutil.rmtree(self.path, ignore_errors=True)

    def commit(self, extra: dict[str, Any] | None = None, *, status: str = "complete",
               only: Iterable[str] | None = None) -> dict[str, Path]:
        """Move the staged files into the target and write the manifest last; returns ``{name: final path}``.

        Parameters
        ----------
        extra : dict, optional
            Run description stored in the manifest beside ``files``.
        status : str
            Recorded as the manifest's ``status`` (``"complete"``; ``"interrupted"`` for a
            run that keeps only its resumable state).
        only : iterable of str, optional
            Commit these staged names (files, or folders of files) alone; the rest is discarded.
        """
        names = _staged_files(self.path)
        if only is not None:
            keep = set(only)
            names = [n for n in names if n in keep or n.split("/")[0] in keep]
        records = {name: file_record(self.path / name) for name in names}
        old = listed(self.target, self.manifest) - {self.manifest}
        self._check_unchanged(names, old)
        self.target.mkdir(parents=True, exist_ok=True)
        # the journal names every file this commit may leave, so a killed commit's files stay hsi's
        journal = _journal(self.target, self.manifest)
        write_json_atomic(journal, {"pid": os.getpid(), "files": sorted(old | set(names))}, indent=1)
        (self.target / self.manifest).unlink(missing_ok=True)  # from here on the folder vouches for nothing
        fsync_dir(self.target)
        _test_hook("manifest-removed")
        for name in names:
            move_into_place(self.path / name, self.target / name)
            _test_hook(f"moved:{name}")
        for name in sorted(old - set(names)):  # the rest of the earlier run's outputs goes with it
            path = self.target / name
            if path.is_file() or path.is_symlink():
                path.unlink()
                _prune_empty(path, self.target)
        _test_hook("before-manifest")
        body = {"format": MANIFEST_FORMAT, "version": 1, "command": self.command, "status": status,
                "versions": package_versions(), **(extra or {}), "files": records}
        write_json_atomic(self.target / self.manifest, body, indent=1)
        journal.unlink(missing_ok=True)
        shutil.rmtree(self.path, ignore_errors=True)
        return {**{name: self.target / name for name in names}, self.manifest: self.target / self.manifest}

    def _check_unchanged(self, names: list[str], ours: set[str]) -> None:
        """Refuse to replace a file that appeared in the target since the checks and no manifest lists."""
        for name in names:
            if (self.target / name).exists() and name not in ours:
                raise OverwriteError(f"{self.target / name}: exists but was not written by {self.command} "
                                     f"(not listed in {self.target / self.manifest}); move it away or choose another "
                                     f"folder (the new outputs are in {self.path})")


def begin(out: str | Path, *, manifest: str, outputs: Iterable[str], overwrite: bool, command: str,
          resumable: str | None = None) -> Staging:
    """Check ``out``, clean what interrupted runs left (keeping a killed run's ``resumable`` state,
    :func:`remove_leftovers`), create this process's staging folder beside it."""
    from hsi._paths import check_output, make_folder, user_path

    target = check_target(out, manifest=manifest, outputs=outputs, overwrite=overwrite, command=command)
    check_output(target, "output folder")  # a file in the way, no permission: one error line, before any work
    make_folder(target.parent, "parent folder")
    remove_leftovers(target, resumable, command)
    staging = Staging.for_target(target, manifest, command)
    if staging.path.exists():  # an earlier run of this process that did not clean up
        shutil.rmtree(staging.path)
    with user_path(staging.path, f"create the staging folder of {target}", reading=False):
        staging.path.mkdir()
    return staging


class Transaction:
    """The open transaction :func:`staged` yields: where to write, and the commit.

    Attributes
    ----------
    path : Path
        The staging folder the block writes into.
    target : Path
        The output folder a commit moves the files into.
    staging : Staging or None
        None in a process that writes into another one's staging folder (``inherited``):
        it never commits or removes anything.
    needed : int or None
        Bytes the outputs need, when known (checked free; named in a full disk's error).
    what : str
        What is written, for messages (``"the hsi infer outputs"``).
    created : bool
        The caller created ``target`` for this run: it goes again on failure while still empty.
    committed : bool
        :meth:`commit` has run.
    """

    def __init__(self, staging: Staging | None, path: Path, target: Path, *, needed: int | None, what: str,
                 created: bool) -> None:
        self.staging, self.path, self.target = staging, path, target
        self.needed, self.what, self.created = needed, what, created
        self.committed = False

    @property
    def owner(self) -> bool:
        """Whether this process opened the staging folder (only the owner commits or removes it)."""
        return self.staging is not None

    def require_space(self, needed: int, what: str | None = None) -> None:
        """Check that ``needed`` bytes are free beside the target (when the size is learnt inside the block)."""
        require_free_space(self.target, needed, what or self.what)
        self.needed = needed

    def commit(self, extra: dict[str, Any] | None = None, *, status: str = "complete",
               only: Iterable[str] | None = None) -> dict[str, Path]:
        """Move the staged files into the target, the manifest last (:meth:`Staging.commit`); ``{name: path}``."""
        if self.staging is None:
            raise RuntimeError(f"{self.path}: this process writes into another one's staging folder and cannot commit")
        files = self.staging.commit(extra, status=status, only=only)
        self.committed = True
        return files

    def abort(self) -> None:
        """Remove the staging folder, and the target when this run created it and it is still empty."""
        if self.staging is None:
            return
        self.staging.abort()
        if self.created:
            with contextlib.suppress(OSError):
                self.target.rmdir()


#: ``on_interrupt(transaction, err)``: what to keep of an interrupted run; returns the exception to raise
InterruptHook = Callable[[Transaction, KeyboardInterrupt], BaseException]


@contextlib.contextmanager
def staged(out: str | Path, *, manifest: str, outputs: Iterable[str], overwrite: bool, command: str,
           needed: int | None = None, created: bool = False, inherited: str | Path | None = None,
           on_interrupt: InterruptHook | None = None, resumable: str | None = None) -> Iterator[Transaction]:
    """Open ``out`` as a transaction: checks and a staging folder (:func:`begin`); removed again on any error.

    Parameters
    ----------
    out : str or Path
        The output folder.
    manifest, outputs, overwrite, command
        As :func:`check_target`.
    needed : int, optional
        Bytes the outputs need, checked free before the block runs.
    created : bool
        The caller created ``out`` (empty) for this run; removed on failure while still empty.
    inherited : str or Path, optional
        The staging folder of another process (rank 0 of a DDP run) to write into instead:
        nothing is checked, created, committed or removed here.
    on_interrupt : callable, optional
        Called on Ctrl-C instead of the abort; returns the exception to raise (training
        commits its resumable state there).
    resumable : str, optional
        The file that makes a killed run's staging folder worth keeping (training's
        ``last.ckpt``): such a folder is kept aside, not removed (:func:`keep_killed`).

    Yields
    ------
    Transaction
        Write into ``.path``, then call ``.commit(...)``; leaving the block without a commit
        discards what was staged (an owner's), an exception removes it and is raised again, a
        full disk as one :class:`~hsi.errors.DiskFullError` naming ``out``.
    """
    what = f"the {command} outputs"
    if inherited is not None:
        from_rank0 = Staging.from_path(inherited, manifest, command)
        txn = Transaction(None, from_rank0.path, from_rank0.target, needed=needed, what=what, created=False)
    else:
        staging = begin(out, manifest=manifest, outputs=outputs, overwrite=overwrite, command=command,
                        resumable=resumable)
        txn = Transaction(staging, staging.path, staging.target, needed=None, what=what, created=created)
    try:
        if needed is not None and txn.owner:
            txn.require_space(needed)
        yield txn
    except KeyboardInterrupt as err:
        if on_interrupt is None or not txn.owner:
            txn.abort()
            raise
        raise on_interrupt(txn, err) from None
    except BaseException as err:
        txn.abort()
        full = _as_disk_full(err, txn.target, txn.needed, what) if isinstance(err, Exception) else None
        if full is None:
            raise
        raise full from err
    if not txn.committed:
        txn.abort()


def remove_listed(folder: str | Path, manifest: str) -> None:
    """Remove the outputs a folder's manifest lists, the manifest first; other files stay."""
    folder = _absolute(folder)
    names = listed(folder, manifest) - {manifest}
    (folder / manifest).unlink(missing_ok=True)
    for name in sorted(names):
        path = folder / name
        if path.is_file() or path.is_symlink():
            path.unlink()
            _prune_empty(path, folder)
    _journal(folder, manifest).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        folder.rmdir()  # only when nothing else is in it


def verify_manifest(folder: str | Path, manifest: str) -> dict[str, str]:
    """Files the manifest lists whose size or SHA-256 differs, or that are missing: ``{name: what}``.

    Empty when every listed file matches (or there is no manifest: the folder vouches for nothing).
    """
    folder = Path(folder)
    data = read_manifest(folder, manifest)
    problems: dict[str, str] = {}
    if data is None or not isinstance(data["files"], dict):
        return problems
    for name, record in data["files"].items():
        path = folder / name
        if not path.is_file():
            problems[name] = "missing"
            continue
        found = file_record(path)
        if found != {"size": record.get("size"), "sha256": record.get("sha256")}:
            problems[name] = f"size {found['size']} sha256 {found['sha256'][:12]}..., manifest says " \
                             f"size {record.get('size')} sha256 {str(record.get('sha256'))[:12]}..."
    return problems


def finished_outputs(folder: Path, manifest: str) -> tuple[dict[str, Any] | None, str | None]:
    """``(manifest, why)``: the manifest of ``folder`` when it vouches for finished, intact outputs.

    ``(None, None)``: nothing finished to reuse (no manifest, or one of an interrupted run);
    ``(None, why)``: ``why`` names the listed file that was edited or deleted since it was
    written; otherwise ``(manifest, None)``.
    """
    data = read_manifest(folder, manifest)
    if data is None or data.get("status") != "complete":
        return None, None
    broken = verify_manifest(folder, manifest)
    if broken:
        name, what = next(iter(broken.items()))
        return None, f"{folder / name} was {'deleted' if what == 'missing' else 'edited'} since it was written"
    return data, None


def _mib(n: int) -> str:
    return f"{n} bytes ({n / (1 << 20):.1f} MiB)"


def _free_bytes(folder: Path) -> int:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def require_free_space(folder: str | Path, needed: int, what: str) -> None:
    """Raise :class:`DiskFullError` before any work when ``folder``'s filesystem has less than ``needed`` bytes free."""
    folder = Path(folder)
    free = _free_bytes(folder)
    if free < needed:
        raise DiskFullError(f"{folder}: {what} need {_mib(needed)}, only {_mib(free)} free on that filesystem; "
                            "free some space or choose another folder")


def disk_full_error(folder: str | Path, needed: int | None, what: str) -> DiskFullError:
    """The :class:`DiskFullError` of a write into ``folder`` that ran out of space."""
    size = f"about {_mib(needed)} needed, " if needed else ""
    return DiskFullError(f"{folder}: no space left on the device while writing {what} ({size}"
                         f"{_mib(_free_bytes(Path(folder)))} free); what was written is removed; free some space "
                         "or choose another folder")


@contextlib.contextmanager
def disk_full_as_error(folder: str | Path, needed: int | None, what: str) -> Iterator[None]:
    """Turn a full disk inside the block (ENOSPC, HDF5's "No space left") into one :class:`DiskFullError`."""
    try:
        yield
    except (OSError, RuntimeError) as err:
        full = _as_disk_full(err, folder, needed, what)
        if full is None:
            raise
        raise full from err


def _as_disk_full(err: BaseException, folder: str | Path, needed: int | None, what: str) -> DiskFullError | None:
    """The one :class:`DiskFullError` for ``err`` when it is a full disk (:func:`hsi._atomic.is_disk_full`) not yet
    said as one; None otherwise."""
    if isinstance(err, DiskFullError) or not is_disk_full(err):
        return None
    return disk_full_error(folder, needed, what)
