"""The output folder of a whole-scene inference: the chosen output formats, metrics, manifest.

Everything is written into a staging folder beside ``out`` (:mod:`hsi.transaction`; the
``.npy`` maps are memory-mapped there from the start) and moved into ``out`` only when
the run has finished, the manifest last. Files:

- each format of ``InferOptions.format``, a registered sink (:mod:`hsi.sinks`): ``"npy"``
  (the run's own maps: ``labels.npy`` ``(H, W)`` class ids ``1..K``, 0 at no-data pixels and where
  ``mask_unlabeled`` masked the ground truth's unlabeled pixels, ``confidence.npy``,
  ``probabilities.npy``), ``"envi"`` (``classification.img`` + ``.hdr``), ``"gtiff"``
  (``labels.tif`` + ``.aux.xml``, ``confidence.tif``, ``probabilities.tif``) and ``"png"``
  (``map.png``, ``false_color.png``, ``confidence.png``), or a plug-in's;
- ``metrics.json`` when ground truth exists; ``inference.json``, the manifest of what was
  written (each file's size and SHA-256). Only files listed in an earlier manifest are ever
  replaced (``overwrite=True``), and the earlier run's outputs go as a whole.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from hsi import transaction
from hsi._atomic import move_into_place, write_json_atomic
from hsi.errors import PluginError
from hsi.sinks import DEFAULT_FORMATS, FinishedMaps, MapLayout, Sink, chosen_sinks, get_sink, list_sinks
from hsi.sinks.registry import check_written, declared_files, describe_sink, format_name, needed_bytes

__all__ = ["MANIFEST", "output_files", "space_needed", "staged_folder", "write_folder"]

MANIFEST = "inference.json"
#: bytes kept free for ``metrics.json`` and the manifest
JSON_BYTES = 1 << 20

#: carries rank 0's staging folder to the DDP ranks Lightning starts, so every rank maps the same files
STAGING_ENV = "HSI_INFER_STAGING"
COMMAND = "hsi infer"


def staged_folder(out: str | Path, overwrite: bool) -> AbstractContextManager[transaction.Transaction]:
    """``out`` as a transaction (:func:`hsi.transaction.staged`): checked before any compute, a staging folder to
    write into, removed on any error (``out`` is left as it was; a full disk becomes one
    :class:`~hsi.errors.DiskFullError`).

    :func:`write_folder` commits the staging folder into ``out``. On a DDP rank started by
    Lightning the block writes into rank 0's staging folder (``$HSI_INFER_STAGING``) instead,
    and never commits or removes it.

    Raises
    ------
    RunOutputError
        ``out`` is a file, or an output file exists and ``overwrite`` is False.
    OverwriteError
        An output file exists, ``overwrite`` is True, but no earlier manifest of this
        folder lists it (hsi did not write it).
    """
    inherited = os.environ.get(STAGING_ENV) if os.environ.get("LOCAL_RANK", "0") != "0" else None
    if inherited and _target(Path(inherited)) == Path(os.path.abspath(out)):  # a DDP rank started by Lightning
        return transaction.staged(out, manifest=MANIFEST, outputs=output_files(), overwrite=overwrite, command=COMMAND,
                                  inherited=inherited)
    return _announced(transaction.staged(out, manifest=MANIFEST, outputs=output_files(), overwrite=overwrite,
                                         command=COMMAND))


@contextlib.contextmanager
def _announced(opened: AbstractContextManager[transaction.Transaction]) -> Iterator[transaction.Transaction]:
    """The transaction, its staging folder put in ``$HSI_INFER_STAGING`` for the DDP ranks Lightning starts."""
    with opened as staging:
        os.environ[STAGING_ENV] = str(staging.path)
        yield staging


def output_files() -> tuple[str, ...]:
    """Every file an inference run may write into its folder: each registered format's, ``metrics.json`` and the
    manifest (only these are ever replaced by ``overwrite``).

    A format whose declared names break the contract (:func:`hsi.sinks.registry.declared_files`)
    can never have written a file, so it adds none; a run that chooses it is refused by
    :func:`space_needed`, and a broken plug-in nobody chose stops no run.
    """
    names: list[str] = []
    for fmt in list_sinks():
        try:
            names += declared_files(get_sink(fmt))
        except PluginError:
            continue
    return (*dict.fromkeys(names), "metrics.json", MANIFEST)


def space_needed(shape: tuple[int, int], num_classes: int, probabilities: bool,
                 formats: tuple[str, ...] = DEFAULT_FORMATS) -> int:
    """The bytes the outputs of an ``(H, W)`` map need, to check free before the tile pass
    (:meth:`hsi.transaction.Transaction.require_space`).

    The run's own memory-mapped maps (with the false-colour scratch when a format of ``formats``
    wants it: :func:`hsi.infer.arrays.map_specs`), :data:`JSON_BYTES`, and what each format of
    ``formats`` needs besides (:meth:`hsi.sinks.Sink.bytes_needed`: the ENVI copy of the labels,
    the GeoTIFFs and the largest of their scratch copies, 3 MiB for the PNGs).

    Raises
    ------
    OptionError
        A format that is not registered.
    PluginError
        A format whose declared file names break the contract (:func:`hsi.sinks.registry.declared_files`), or
        whose ``bytes_needed`` is not a whole number >= 0 (:func:`hsi.sinks.registry.needed_bytes`).
    """
    from hsi.infer.arrays import label_dtype, map_specs

    sinks = chosen_sinks(formats)
    layout = MapLayout((int(shape[0]), int(shape[1])), int(num_classes), label_dtype(num_classes), bool(probabilities),
                       any(sink.wants_rgb for sink in sinks))
    for sink in sinks:  # the names a chosen format will write, checked before the tile pass
        declared_files(sink, layout)
    own = map_specs(layout.shape, layout.num_classes, layout.probabilities, layout.rgb)
    needed = sum(int(np.prod(shp)) * dtype.itemsize for shp, dtype in own.values()) + JSON_BYTES
    return needed + sum(needed_bytes(sink, layout) for sink in sinks)


def _target(staging_folder: Path) -> Path:
    """The output folder a staging folder commits to (read from rank 0's path, which a DDP rank inherits)."""
    return transaction.Staging.from_path(staging_folder, MANIFEST, COMMAND).target


def write_folder(staging: transaction.Transaction, results: Any, *, class_names: list[str], palette: np.ndarray,
                 background: np.ndarray | None, metrics: dict[str, Any] | None, source_header: Path | None = None,
                 nodata: np.ndarray | None = None, georef: Any = None, formats: tuple[str, ...] = DEFAULT_FORMATS,
                 manifest: dict[str, Any], rgb_title: str) -> dict[str, Path]:
    """Write every output of a finished run into the staging folder and commit it; returns ``{name: path}``.

    Parameters
    ----------
    staging : hsi.transaction.Transaction
        The open transaction of :func:`staged_folder`: the files are written into its staging
        folder and committed into the output folder here.
    results : hsi.infer.arrays.ResultArrays
        Finished maps (still under temporary names in the staging folder; committed here).
    class_names, palette : list[str], (K + 1, 3) uint8
    background : (H, W) bool or None
        Ground-truth background to draw dimmed (None when masked or without ground truth).
    metrics : dict or None
        Written as ``metrics.json`` (None, without ground truth: no such file).
    source_header : Path or None
        ENVI header of the cube, whose map info is copied into the ENVI classification when
        ``georef`` is None.
    nodata : (H, W) bool or None
        No-data pixels (label 0), drawn in the map's no-data colour and NaN in the float GeoTIFFs.
    georef : hsi.io.georef.GeoRef or None
        The cube's georeference: CRS and transform of the GeoTIFFs, map info of the ENVI file.
    formats : tuple of str
        The output formats to write (registered sinks, :mod:`hsi.sinks`); the run's memory-mapped
        maps are kept only where one of them lists them (``"npy"``). The manifest is always
        written.
    manifest : dict
        Run description stored in ``inference.json`` (the files with sizes and SHA-256 are added).
    rgb_title : str
        Title of the false-colour image (names the bands).

    Returns
    -------
    dict
        ``{name: path}`` of every file in the output folder, the manifest included.

    Raises
    ------
    PluginError
        A format that declares a file outside the folder or another format's file, writes a file it
        did not declare (or outside its folder), or skips one it declared (:func:`_write_checked`).
    """
    from hsi.infer.arrays import SCRATCH
    from hsi.viz import figure_name

    sinks = chosen_sinks(formats)  # an unknown format is refused before any file is written
    folder = staging.path
    maps = FinishedMaps(results.labels, results.confidence, results.probabilities, results.rgb, list(class_names),
                        palette, georef=georef, nodata=nodata, background=background, source_header=source_header,
                        title=f"{figure_name(manifest.get('cube', 'scene'))}: predicted classes",  # the file's name
                        rgb_title=rgb_title, description=f"hsi infer {manifest.get('checkpoint', '')}")
    own = {f"{name}.npy" for name in results.arrays if name not in SCRATCH}  # the run's maps, not the sinks'
    kept = _write_checked(sinks, folder, maps, own)
    if metrics is not None:
        write_json_atomic(folder / "metrics.json", metrics, indent=1)
    for path in results.commit().values():  # the maps get their names inside the staging folder
        if path.name not in kept:
            path.unlink()  # no chosen format keeps this map of the run's own
    # into place, the manifest last (an earlier run's outputs that this one did not write go with it)
    return staging.commit(manifest)


def _write_checked(sinks: list[Sink], folder: Path, maps: FinishedMaps, own: set[str]) -> set[str]:
    """Each sink's files, written into a folder of its own inside ``folder``, checked, then moved into ``folder``;
    returns every name the sinks declare (``own``, the run's maps, among them where a sink keeps them).

    The sink contract is checked where the package calls it (:mod:`hsi.sinks.registry`): the declared names
    before anything is written (plain names, none another sink's, ``metrics.json`` or the manifest), then
    what each sink left in its folder, and that nothing appeared in ``folder`` itself (a write to ``../``).
    """
    declared = {id(sink): declared_files(sink, maps.layout) for sink in sinks}
    _check_no_clash(sinks, declared, own)
    before = set(os.listdir(folder))
    own_folders = {id(sink): folder / f".sink-{i}-{format_name(sink)}" for i, sink in enumerate(sinks)}
    for path in own_folders.values():
        path.mkdir()
    # The sinks that may (GDAL's compression and numpy's copies release the GIL) write one after another on a
    # second thread while this one runs the others (matplotlib draws the PNGs), so both cores work.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hsi-infer-write") as pool:
        written = pool.submit(_write_sinks, [s for s in sinks if s.thread_safe], own_folders, maps)
        _write_sinks([s for s in sinks if not s.thread_safe], own_folders, maps)  # on error, the pool waits
        written.result()  # the writer's error, if any
    stray = sorted(set(os.listdir(folder)) - before - {p.name for p in own_folders.values()})
    if stray:
        raise PluginError(f"{', '.join(map(repr, stray))} appeared outside the folders given to the output formats "
                          f"({'; '.join(describe_sink(s) for s in sinks)}): a format writes only into its folder")
    for sink in sinks:
        path = own_folders[id(sink)]
        for name in check_written(sink, path, declared[id(sink)], own):
            move_into_place(path / name, folder / name)
        path.rmdir()
    return {name for names in declared.values() for name in names}


def _check_no_clash(sinks: list[Sink], declared: dict[int, tuple[str, ...]], own: set[str]) -> None:
    """Refuse a declared name that is ``metrics.json``, the manifest, or another chosen sink's file (the run's
    own maps, ``own``, may be kept by several)."""
    owner: dict[str, Sink] = {}
    for sink in sinks:
        for name in declared[id(sink)]:
            if name in ("metrics.json", MANIFEST):
                raise PluginError(f"{describe_sink(sink)}: declares {name!r}, which hsi infer writes itself")
            if name in owner and owner[name] is not sink and name not in own:
                raise PluginError(f"{describe_sink(sink)}: declares {name!r}, which {describe_sink(owner[name])} "
                                  f"writes too; choose another file name")
            owner[name] = sink


def _write_sinks(sinks: list[Sink], folders: dict[int, Path], maps: FinishedMaps) -> None:
    """Each sink's files into its own folder, in order."""
    for sink in sinks:
        sink.write(folders[id(sink)], maps)
