"""The output folder of a whole-scene inference: maps, images, ENVI classification, metrics, manifest.

Everything is written into a staging folder beside ``out`` (:mod:`hsi.transaction`; the
``.npy`` maps are memory-mapped there from the start) and moved into ``out`` only when
the run has finished, the manifest last. Files:

- ``"npy"``: ``labels.npy`` ``(H, W)`` class ids ``1..K`` (0 at no-data pixels and where
  ``mask_unlabeled`` masked the ground truth's unlabeled pixels), ``confidence.npy`` ``(H, W)``
  float32 (0 at no-data), ``probabilities.npy`` ``(H, W, K)`` float16 (optional);
- ``"gtiff"``, each with the cube's CRS and transform: ``labels.tif`` (Cloud-Optimized GeoTIFF,
  nodata 0, colour table, class names as GDAL category names in ``labels.tif.aux.xml`` and as
  a band tag), ``confidence.tif`` and ``probabilities.tif`` (float32 COGs with overviews, nodata
  NaN at no-data pixels; named bands: :data:`CONFIDENCE_BAND`, one per class);
- ``map.png`` (legend of class names, the scene's palette, ground-truth background dimmed
  or masked), ``false_color.png``, ``confidence.png``;
- ``"envi"``: ``classification.img`` + ``.hdr`` (ENVI Classification with names and colours,
  ``map info`` and ``coordinate system string`` from the cube's georeference);
- ``metrics.json`` when ground truth exists; ``inference.json``, the manifest of what was
  written (each file's size and SHA-256). Only files listed in an earlier manifest are ever
  replaced (``overwrite=True``), and the earlier run's outputs go as a whole.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from hsi import transaction
from hsi._atomic import is_disk_full, write_bytes_atomic
from hsi.errors import DiskFullError, OptionError
from hsi.infer.options import OUTPUT_FORMATS

__all__ = ["FORMATS", "FORMAT_FILES", "MANIFEST", "OUTPUT_FILES", "abandon_folder", "check_space", "discard_folder", "prepare_folder", "write_folder"]

MANIFEST = "inference.json"
#: every file an inference run may write into its folder
OUTPUT_FILES = ("labels.npy", "confidence.npy", "probabilities.npy", "labels.tif", "labels.tif.aux.xml",
                "confidence.tif", "probabilities.tif", "map.png", "false_color.png", "confidence.png",
                "classification.img", "classification.hdr", "metrics.json", MANIFEST)
#: what ``formats`` of :func:`write_folder` choose from (``InferOptions.format``; PNGs and JSON are always written)
FORMATS = OUTPUT_FORMATS
#: the maps each format writes
FORMAT_FILES = {"npy": ("labels.npy", "confidence.npy", "probabilities.npy"),
                "envi": ("classification.img", "classification.hdr"),
                "gtiff": ("labels.tif", "labels.tif.aux.xml", "confidence.tif", "probabilities.tif")}


#: description of the one band of ``confidence.tif`` (``labels.tif``'s is "class")
CONFIDENCE_BAND = "confidence (largest class probability)"

#: carries rank 0's staging folder to the DDP ranks Lightning starts, so every rank maps the same files
STAGING_ENV = "HSI_INFER_STAGING"
COMMAND = "hsi infer"


def prepare_folder(out: str | Path, overwrite: bool) -> Path:
    """Check ``out`` (before any compute) and create the staging folder the run writes into; returns it.

    :func:`write_folder` commits the staging folder into ``out``; :func:`discard_folder`
    removes it after a failure. On a DDP rank started by Lightning the staging folder of
    rank 0 (``$HSI_INFER_STAGING``) is returned instead.

    Raises
    ------
    RunOutputError
        ``out`` is a file, or an output file exists and ``overwrite`` is False.
    OverwriteError
        An output file exists, ``overwrite`` is True, but no earlier manifest of this
        folder lists it (hsi did not write it).
    """
    inherited = os.environ.get(STAGING_ENV)
    if inherited and os.environ.get("LOCAL_RANK", "0") != "0":
        staging = transaction.Staging.from_path(inherited, MANIFEST, COMMAND)
        if staging.target == Path(os.path.abspath(out)):
            return staging.path
    staging = transaction.begin(out, manifest=MANIFEST, outputs=OUTPUT_FILES, overwrite=overwrite, command=COMMAND)
    os.environ[STAGING_ENV] = str(staging.path)
    return staging.path


def discard_folder(folder: Path) -> None:
    """Remove the staging folder of :func:`prepare_folder` (the run failed); ``out`` is left as it was."""
    transaction.Staging.from_path(folder, MANIFEST, COMMAND).abort()


def check_space(folder: Path, shape: tuple[int, int], num_classes: int, probabilities: bool, rgb: bool,
                formats: tuple[str, ...] = FORMATS) -> int:
    """The bytes the outputs need, checked free beside ``out``; returns them.

    The memory-mapped maps and the ENVI copy (:func:`hsi.infer.arrays.output_bytes`), plus,
    with "gtiff" among ``formats``, the GeoTIFFs uncompressed and the largest of their
    scratch copies (each is written, then copied as a COG, one file at a time).

    Raises
    ------
    DiskFullError
        Less than that is free on the filesystem of the staging folder (before any compute).
    """
    from hsi.infer.arrays import label_dtype, output_bytes

    needed = output_bytes(shape, num_classes, probabilities, rgb)
    if "gtiff" in formats:
        pixels = int(shape[0]) * int(shape[1])
        per_file = [label_dtype(num_classes).itemsize, 4] + ([4 * num_classes] if probabilities else [])
        needed += pixels * (sum(per_file) + max(per_file))
    transaction.require_free_space(_target(folder), needed, f"the {COMMAND} outputs of a {shape[0]} x {shape[1]} map")
    return needed


def abandon_folder(folder: Path, err: BaseException, needed: int | None) -> None:
    """After a failure: remove the staging folder; a full disk is raised as one :class:`~hsi.errors.DiskFullError`."""
    discard_folder(folder)
    if not isinstance(err, DiskFullError) and is_disk_full(err):
        raise transaction.disk_full_error(_target(folder), needed, f"the {COMMAND} outputs") from err


def _target(folder: Path) -> Path:
    return transaction.Staging.from_path(folder, MANIFEST, COMMAND).target


def _json_bytes(obj: Any) -> bytes:
    def default(o: Any) -> Any:
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
        return str(o)

    return (json.dumps(obj, indent=1, default=default, allow_nan=True) + "\n").encode("utf-8")


def write_folder(folder: Path, results: Any, *, class_names: list[str], palette: np.ndarray,
                 background: np.ndarray | None, metrics: dict[str, Any] | None, source_header: Path | None = None,
                 nodata: np.ndarray | None = None, georef: Any = None, formats: tuple[str, ...] = FORMATS,
                 manifest: dict[str, Any], rgb_title: str) -> dict[str, Path]:
    """Write every output of a finished run into ``folder``; returns ``{name: path}``.

    Parameters
    ----------
    folder : Path
        The staging folder of :func:`prepare_folder`; committed into the output folder here.
    results : hsi.infer.arrays.ResultArrays
        Finished maps (still under temporary names in ``folder``; committed here).
    class_names, palette : list[str], (K + 1, 3) uint8
    background : (H, W) bool or None
        Ground-truth background to draw dimmed (None when masked or without ground truth).
    metrics : dict or None
        Written as ``metrics.json``.
    source_header : Path or None
        ENVI header of the cube, whose map info is copied into the ENVI classification when
        ``georef`` is None.
    nodata : (H, W) bool or None
        No-data pixels (label 0), drawn in the map's no-data colour and NaN in the float GeoTIFFs.
    georef : hsi.io.georef.GeoRef or None
        The cube's georeference: CRS and transform of the GeoTIFFs, map info of the ENVI file.
    formats : tuple of {"npy", "envi", "gtiff"}
        Which maps to write (:data:`FORMAT_FILES`); without "npy" the memory-mapped maps are
        not kept. The PNGs, ``metrics.json`` and the manifest are always written.
    manifest : dict
        Run description stored in ``inference.json`` (the files with sizes and SHA-256 are added).
    rgb_title : str
        Title of the false-colour image (names the bands).

    Returns
    -------
    dict
        ``{name: path}`` of every file in the output folder, the manifest included.
    """
    from concurrent.futures import ThreadPoolExecutor

    from hsi.viz import figure_name

    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise OptionError("format", unknown[0], f"one or more of {', '.join(FORMATS)}")
    names = ["Unclassified", *class_names]
    # The map files (GDAL's compression and numpy's copies release the GIL) are written by a
    # second thread while this one draws the PNGs (matplotlib), so both cores work.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hsi-infer-write") as pool:
        maps = pool.submit(_write_maps, folder, results, names, palette, georef, nodata, source_header, manifest,
                           formats)
        title = f"{figure_name(manifest.get('cube', 'scene'))}: predicted classes"  # the file's name, not its folder
        _draw_previews(folder, results, class_names, palette, background, nodata, georef, title,
                       rgb_title)  # on error, the pool waits
        maps.result()  # the writer's error, if any
    if metrics is not None:
        write_bytes_atomic(folder / "metrics.json", _json_bytes(metrics))
    committed = results.commit()  # the maps get their names inside the staging folder
    if "npy" not in formats:
        for path in committed.values():
            path.unlink()
    # into place, the manifest last (an earlier run's outputs that this one did not write go with it)
    return transaction.Staging.from_path(folder, MANIFEST, COMMAND).commit(manifest)


def _draw_previews(folder: Path, results: Any, class_names: list[str], palette: np.ndarray,
                   background: np.ndarray | None, nodata: np.ndarray | None, georef: Any, title: str,
                   rgb_title: str) -> None:
    """``map.png``, ``false_color.png`` (when the run kept the bands) and ``confidence.png``.

    They are previews: each is drawn from the map decimated to the figure's own pixels
    (:func:`hsi.viz.plot_class_map`), while the ``.npy``, ENVI and GeoTIFF maps keep every pixel.
    """
    from hsi.viz import plot_class_map, plot_confidence, plot_false_color

    plot_class_map(results.labels, class_names, palette, folder / "map.png", background=background,
                   nodata=nodata, title=title, georef=georef)
    if results.rgb is not None:
        plot_false_color(results.rgb, folder / "false_color.png", title=rgb_title, georef=georef,
                         shape=results.shape)
    plot_confidence(results.confidence, folder / "confidence.png", georef=georef)


def _write_maps(folder: Path, results: Any, names: list[str], palette: np.ndarray, georef: Any,
                nodata: np.ndarray | None, source_header: Path | None, manifest: dict[str, Any],
                formats: tuple[str, ...]) -> None:
    """The full-resolution map files of ``formats`` other than "npy" (the memory-mapped maps are already there)."""
    if "envi" in formats:
        _write_envi(folder, results.labels, names, palette, georef, source_header, manifest)
    if "gtiff" in formats:
        _write_gtiff(folder, results, names, palette, georef, nodata)


def _write_envi(folder: Path, labels: np.ndarray, names: list[str], palette: np.ndarray, georef: Any,
                source_header: Path | None, manifest: dict[str, Any]) -> None:
    """``classification.img`` + ``.hdr``: map info from ``georef`` (the source header's only without one)."""
    from hsi.io.envi_write import write_classification

    write_classification(folder / "classification", labels, names, palette, georef=georef,
                         source_header=source_header if georef is None else None,
                         description=f"hsi infer {manifest.get('checkpoint', '')}")


def _write_gtiff(folder: Path, results: Any, names: list[str], palette: np.ndarray, georef: Any,
                 nodata: np.ndarray | None) -> None:
    """``labels.tif`` (+ ``.aux.xml``), ``confidence.tif`` and, when kept, ``probabilities.tif``."""
    from hsi.io.geotiff_write import write_float_tif, write_label_cog

    write_label_cog(folder / "labels.tif", results.labels, names, palette, georef)
    write_float_tif(folder / "confidence.tif", results.confidence, georef, nodata_mask=nodata,
                    band_names=(CONFIDENCE_BAND,))
    if results.probabilities is not None:
        write_float_tif(folder / "probabilities.tif", results.probabilities, georef, nodata_mask=nodata,
                        band_names=names[1:])
