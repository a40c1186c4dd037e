"""Pack a scene into one chunked HDF5 file that :func:`hsi.io.read_cube` reads back with no key.

Layout of a file written by :func:`write_h5`:

- ``cube``: (H, W, C) in the cube's own dtype, chunked in spatial tiles holding every band
  (a patch or tile read touches few chunks), optionally gzip/lzf-compressed, resizable
  along rows so further scenes can be appended (:func:`append_h5`). Attributes:
  ``wavelengths`` and ``wavelength_units`` (``"nm"``) when known, ``layout`` (``"HWC"``), and
  with a georeference ``crs`` (WKT), ``transform`` (6 numbers, rasterio's order) and
  ``pixel_is`` (:meth:`hsi.io.georef.GeoRef.h5_attrs`; the HDF5 reader reads them back).
- ``labels``: (H, W) integer map (0 = unlabeled), chunked and resizable like the cube;
  attribute ``class_names`` (names of classes 1..K) when given.
- ``patches`` / ``patch_labels`` (optional, :func:`append_patches`): (N, C, P, P) windows and
  their (N,) labels, resizable along N, one patch per chunk row; the reader's discovery never
  picks them (neither is 3-D or 2-D).
- file attributes: ``hsi_format`` (``"hsi-h5"``), ``hsi_format_version``, ``source``,
  ``preprocessing`` (JSON text) and ``scene_rows`` (first row of every appended scene,
  then the total row count).

The reader's discovery picks ``cube`` as the only 3-D numeric dataset, ``labels`` as the
only 2-D one, and the wavelengths from the cube's ``wavelengths`` attribute.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hsi._atomic import atomic_path, is_disk_full
from hsi._paths import check_output, make_folder
from hsi.errors import OptionError, OverwriteError, ShapeMismatchError, WavelengthError

__all__ = ["CHUNK_BYTES", "FORMAT_NAME", "append_h5", "append_patches", "chunk_shape", "open_h5_writer", "write_h5"]

#: Target size in bytes of one cube chunk chosen by :func:`chunk_shape`.
CHUNK_BYTES = 1 << 20
#: Smallest cube chunk accepted from a caller: the low end of h5py's advice (chunks of 10 KiB
#: to 1 MiB). A whole cube smaller than this may be one chunk.
MIN_CHUNK_BYTES = 10 << 10
#: Value of the ``hsi_format`` file attribute.
FORMAT_NAME = "hsi-h5"
FORMAT_VERSION = 1
_COMPRESSIONS = (None, "gzip", "lzf")


def chunk_shape(shape: Sequence[int], itemsize: int, target_bytes: int = CHUNK_BYTES) -> tuple[int, int, int]:
    """Chunk of an (H, W, C) cube: an ``s x s`` spatial tile holding every band, about ``target_bytes``.

    Parameters
    ----------
    shape : sequence of int
        ``(H, W, C)`` of the cube.
    itemsize : int
        Bytes per value.
    target_bytes : int
        Wanted chunk size; the side ``s`` is kept between 8 and 512 pixels and within the scene.

    Returns
    -------
    tuple of int
        ``(s_rows, s_cols, C)``.
    """
    h, w, c = (int(s) for s in shape)
    side = int(math.sqrt(max(target_bytes, 1) / max(c * itemsize, 1)))
    side = min(max(side, 8), 512)
    return max(1, min(side, h)), max(1, min(side, w)), max(1, c)


def _check_compression(compression: str | None, compression_opts: int | None) -> None:
    if compression not in _COMPRESSIONS:
        raise OptionError("compression", compression, "None, 'gzip' or 'lzf'")
    if compression_opts is not None:
        if compression != "gzip":
            raise OptionError("compression_opts", compression_opts, "only for compression='gzip' (a level 0-9)")
        if not isinstance(compression_opts, (int, np.integer)) or not 0 <= int(compression_opts) <= 9:
            raise OptionError("compression_opts", compression_opts, "a gzip level, an integer from 0 to 9")


def _check_cube(cube: Any) -> np.ndarray:
    array = np.asarray(cube)
    if array.ndim != 3 or min(array.shape) < 1:
        raise ShapeMismatchError(f"write_h5: cube has shape {array.shape}; expected a 3-D (H, W, C) array")
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise OptionError("cube", str(array.dtype), "an integer or floating-point array")
    return array


def _check_labels(labels: Any, hw: tuple[int, int]) -> np.ndarray:
    array = np.asarray(labels)
    if array.shape != hw:
        raise ShapeMismatchError(f"write_h5: labels have shape {array.shape}, the cube's rows x columns are {hw}")
    if not np.issubdtype(array.dtype, np.integer):
        raise OptionError("labels", str(array.dtype), "an integer (H, W) class map, 0 = unlabeled")
    if array.size and int(array.min()) < 0:
        raise OptionError("labels", int(array.min()), "class ids >= 0 (0 = unlabeled)")
    return array


def _check_wavelengths(wavelengths: Any, n_bands: int) -> np.ndarray:
    wl = np.asarray(wavelengths, dtype=np.float64).ravel()
    if wl.size != n_bands:
        raise WavelengthError(f"write_h5: {wl.size} wavelengths for a cube of {n_bands} bands")
    if not np.isfinite(wl).all():
        raise WavelengthError(f"write_h5: wavelengths hold {int((~np.isfinite(wl)).sum())} non-finite value(s)")
    step = np.diff(wl)
    if wl.size > 1 and not ((step > 0).all() or (step < 0).all()):
        raise WavelengthError("write_h5: wavelengths are not strictly monotonic (in nm, one per band)")
    return wl


def _check_chunks(chunks: Any, shape: tuple[int, int, int], itemsize: int) -> tuple[int, int, int]:
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        return chunk_shape(shape, itemsize)
    try:
        values = tuple(int(c) for c in chunks)
    except (TypeError, ValueError):
        values = ()
    if len(values) != 3 or min(values) < 1:
        raise OptionError("chunks", chunks, "'auto' or three positive integers (rows, cols, bands)")
    # rows may grow (appending); columns and bands are fixed, so a chunk cannot exceed them
    chunk = values[0], min(values[1], shape[1]), min(values[2], shape[2])
    _check_chunk_size(chunk, shape, itemsize)
    return chunk


def _check_chunk_size(chunk: tuple[int, int, int], shape: tuple[int, int, int], itemsize: int) -> None:
    """Refuse chunks under :data:`MIN_CHUNK_BYTES` (or the whole cube, when that is smaller).

    Every chunk costs an index entry, its own read and its own compression call: a 64 x 64
    window of a 200-band cube in 1 x 1 x 1 chunks is 819,200 reads, and the index can
    outgrow the data. The rule is on bytes, not sides, so a many-band cube may still use
    narrow spatial chunks.
    """
    nbytes = min(chunk[0], shape[0]) * chunk[1] * chunk[2] * itemsize
    floor = min(MIN_CHUNK_BYTES, math.prod(shape) * itemsize)
    if nbytes < floor:
        rows, cols, bands = chunk
        raise OptionError(
            "chunks", f"{rows},{cols},{bands}",
            f"a chunk of at least {MIN_CHUNK_BYTES // 1024} KiB (this one holds {nbytes} bytes), since every chunk "
            f"costs an index entry and a read of its own: tiny chunks make the file larger and window reads slow; "
            f"e.g. 64,64,{shape[2]} (spatial tiles with every band), or leave --chunks out for ~1 MiB tiles",
        )


def _create_datasets(handle: h5py.File, shape: tuple[int, int, int], dtype: np.dtype, label_dtype: np.dtype | None,
                     chunks: tuple[int, int, int], compression: str | None, compression_opts: int | None) -> None:
    """Empty ``cube`` (and ``labels``) datasets, chunked, resizable along rows."""
    h, w, c = shape
    common = {"compression": compression, "compression_opts": compression_opts, "shuffle": compression is not None}
    handle.create_dataset("cube", shape=shape, dtype=dtype, chunks=chunks, maxshape=(None, w, c), **common)
    if label_dtype is not None:
        handle.create_dataset("labels", shape=(h, w), dtype=label_dtype, chunks=chunks[:2], maxshape=(None, w), **common)


@contextlib.contextmanager
def open_h5_writer(
    path: str | Path,
    shape: Sequence[int],
    dtype: Any,
    *,
    label_dtype: Any | None = None,
    wavelengths: Any | None = None,
    class_names: Sequence[str] | None = None,
    chunks: Any = "auto",
    compression: str | None = None,
    compression_opts: int | None = None,
    source: str | None = None,
    preprocessing: dict[str, Any] | None = None,
    overwrite: bool = False,
    georef: Any | None = None,
) -> Iterator[h5py.File]:
    """An open file with empty ``cube`` / ``labels`` datasets to fill block by block (``with`` block).

    The file appears at ``path`` only when the ``with`` block ends without an error; the
    arguments are those of :func:`write_h5`, with the cube's ``shape`` and ``dtype`` (and
    ``label_dtype`` when labels will be written) instead of the arrays.

    Parameters
    ----------
    path : str or Path
        The ``.h5`` file to write.
    shape : sequence of int
        ``(H, W, C)`` of the cube.
    dtype : numpy dtype
        The cube's stored dtype.
    label_dtype : numpy dtype, optional
        Integer dtype of the ``labels`` dataset; None: no labels.
    wavelengths, class_names, chunks, compression, compression_opts, source, preprocessing, overwrite, georef
        As for :func:`write_h5` (``class_names`` are checked against the labels by the caller).

    Yields
    ------
    h5py.File
        Open for writing; fill ``handle["cube"]`` and ``handle["labels"]``.
    """
    path = Path(path)
    shape = tuple(int(s) for s in shape)
    dtype = np.dtype(dtype)
    wl = None if wavelengths is None else _check_wavelengths(wavelengths, shape[2])
    _check_compression(compression, compression_opts)
    chunk = _check_chunks(chunks, shape, dtype.itemsize)
    try:
        prep_text = None if preprocessing is None else json.dumps(preprocessing, sort_keys=True)
    except (TypeError, ValueError) as err:
        raise OptionError("preprocessing", type(preprocessing).__name__, f"a JSON-serialisable dict ({err})") from err
    if path.exists() and not overwrite:
        raise OverwriteError(f"{path}: already exists; pass overwrite=True to replace it")
    make_folder(check_output(path, "HDF5 file").parent, "folder of the HDF5 file")
    with _atomic_h5(path) as handle:
        _create_datasets(handle, shape, dtype, None if label_dtype is None else np.dtype(label_dtype), chunk,
                         compression, compression_opts)
        dset = handle["cube"]
        dset.attrs["layout"] = "HWC"
        if wl is not None:
            dset.attrs["wavelengths"] = wl
            dset.attrs["wavelength_units"] = "nm"
        if georef is not None:
            dset.attrs.update(georef.h5_attrs())
        if class_names is not None and label_dtype is not None:
            handle["labels"].attrs["class_names"] = np.array([str(n) for n in class_names], dtype=h5py.string_dtype())
        handle.attrs["hsi_format"] = FORMAT_NAME
        handle.attrs["hsi_format_version"] = FORMAT_VERSION
        handle.attrs["scene_rows"] = np.array([0, shape[0]], dtype=np.int64)
        if source is not None:
            handle.attrs["source"] = str(source)
        if prep_text is not None:
            handle.attrs["preprocessing"] = prep_text
        yield handle


def write_h5(
    path: str | Path,
    cube: Any,
    labels: Any | None = None,
    wavelengths: Any | None = None,
    class_names: Sequence[str] | None = None,
    *,
    chunks: Any = "auto",
    compression: str | None = None,
    compression_opts: int | None = None,
    source: str | None = None,
    preprocessing: dict[str, Any] | None = None,
    overwrite: bool = False,
    georef: Any | None = None,
) -> Path:
    """Write a cube (and its labels) as a chunked, appendable HDF5 file, atomically.

    Parameters
    ----------
    path : str or Path
        The ``.h5`` file to write; it appears only once complete (temporary file + rename).
    cube : (H, W, C) array or hsi.io.Cube
        Stored in its own dtype (a :class:`~hsi.io.Cube` gives its data, and its
        wavelengths unless ``wavelengths`` is given).
    labels : (H, W) int array, optional
        Class map, 0 = unlabeled.
    wavelengths : (C,) array, optional
        Band centres in nm, strictly monotonic.
    class_names : sequence of str, optional
        Names of classes 1..K (at least as many as the largest label).
    chunks : "auto" or (int, int, int)
        Cube chunk shape; "auto" is :func:`chunk_shape` (spatial tiles of about 1 MiB
        holding every band, for patch and tile reads). A given shape must hold at least
        :data:`MIN_CHUNK_BYTES` (10 KiB), or the whole cube when that is smaller.
    compression : {None, "gzip", "lzf"}
        Chunk compression (with byte shuffling).
    compression_opts : int, optional
        gzip level 0-9 (h5py's default 4 when None).
    source : str, optional
        Where the data came from (stored as the ``source`` attribute).
    preprocessing : dict, optional
        What was done to the data (JSON-serialisable; stored as JSON text).
    overwrite : bool
        Replace an existing ``path``; otherwise an existing file raises :class:`OverwriteError`.
    georef : hsi.io.georef.GeoRef, optional
        Where the cube lies (CRS and transform), stored as attributes of ``cube``; a
        :class:`~hsi.io.Cube` gives its ``meta["georef"]`` when this is None.

    Returns
    -------
    Path
        ``path``.
    """
    if not isinstance(cube, np.ndarray) and hasattr(cube, "data"):
        wavelengths = getattr(cube, "wavelengths", None) if wavelengths is None else wavelengths
        georef = (getattr(cube, "meta", None) or {}).get("georef") if georef is None else georef
        cube = cube.data
    array = _check_cube(cube)
    label_map = None if labels is None else _check_labels(labels, array.shape[:2])
    names = _check_class_names(class_names, label_map)
    with open_h5_writer(path, array.shape, array.dtype, label_dtype=None if label_map is None else label_map.dtype,
                        wavelengths=wavelengths, class_names=names, chunks=chunks, compression=compression,
                        compression_opts=compression_opts, source=source, preprocessing=preprocessing,
                        overwrite=overwrite, georef=georef) as handle:
        handle["cube"][...] = array
        if label_map is not None:
            handle["labels"][...] = label_map
    return Path(path)


def _check_class_names(class_names: Sequence[str] | None, labels: np.ndarray | None) -> list[str] | None:
    if class_names is None:
        return None
    if isinstance(class_names, str):
        raise OptionError("class_names", class_names, "a list of names (one per class 1..K), not one string")
    names = [str(n) for n in class_names]
    if labels is None:
        raise OptionError("class_names", names, "given only with labels (they name the label ids 1..K)")
    k = int(labels.max()) if labels.size else 0
    if len(names) < k:
        raise OptionError("class_names", f"{len(names)} names", f"at least {k}, one per class id 1..{k} in labels")
    return names


class _FullDiskGuard(io.FileIO):
    """A file for h5py's ``fileobj`` driver that keeps HDF5 away from a full disk.

    HDF5 cannot recover from a failed write: the file stays open inside the library, and
    its flush at interpreter exit crashes the process. So the first ENOSPC is recorded
    and every later write is discarded (the file is garbage and gets removed);
    :func:`_atomic_h5` raises the recorded error once HDF5 has closed the file.
    """

    disk_full: OSError | None = None

    def write(self, data: Any) -> int:  # type: ignore[override]
        view = memoryview(data).cast("B")
        if self.disk_full is None:
            done = 0
            try:
                while done < len(view):
                    done += super().write(view[done:]) or 0
            except OSError as err:
                if not is_disk_full(err):
                    raise
                self.disk_full = err
        return len(view)


@contextlib.contextmanager
def _atomic_h5(path: Path):
    """An ``h5py.File`` open on a temporary file beside ``path``, renamed to ``path`` on success.

    A full disk raises ``OSError(ENOSPC)`` after the file is closed (and removed).
    """
    with atomic_path(path, suffix=".h5") as tmp:
        raw = _FullDiskGuard(tmp, "r+")
        try:
            with h5py.File(raw, "w") as handle:
                yield handle
        finally:
            raw.close()
        if raw.disk_full is not None:
            raise raw.disk_full


def append_h5(path: str | Path, cube: Any, labels: Any | None = None) -> tuple[int, int]:
    """Append a scene below the ones in a :func:`write_h5` file (same width and band count).

    The datasets grow along rows in place; if writing fails they are shrunk back to their
    former size, so the file holds either the old scenes or all of them.

    Parameters
    ----------
    path : str or Path
        A file written by :func:`write_h5`.
    cube : (h, W, C) array
        The scene to append, in a dtype the file's cube can hold without change.
    labels : (h, W) int array, optional
        Required exactly when the file has labels.

    Returns
    -------
    tuple of int
        ``(first_row, stop_row)`` of the appended scene in the file's cube.
    """
    path = Path(path)
    array = _check_cube(cube)
    with h5py.File(path, "r+") as handle:
        if handle.attrs.get("hsi_format") != FORMAT_NAME or "cube" not in handle:
            raise OptionError("path", str(path), f"a file written by hsi.io.write_h5 (attribute hsi_format={FORMAT_NAME!r})")
        dset = handle["cube"]
        if array.shape[1:] != dset.shape[1:]:
            raise ShapeMismatchError(f"{path}: appending a {array.shape} cube to one of {dset.shape}; "
                                     f"widths and band counts must match")
        if not np.can_cast(array.dtype, dset.dtype, casting="safe"):
            raise OptionError("cube", str(array.dtype), f"a dtype the file's cube ({dset.dtype}) holds exactly")
        has_labels = "labels" in handle
        if has_labels != (labels is not None):
            raise OptionError("labels", "given" if labels is not None else None,
                              f"{'a label map' if has_labels else 'None'}: {path} {'has' if has_labels else 'has no'} labels")
        label_map = None if labels is None else _check_labels(labels, array.shape[:2])
        start = int(dset.shape[0])
        stop = start + array.shape[0]
        targets = [(dset, array)] + ([] if label_map is None else [(handle["labels"], label_map)])
        try:
            for target, values in targets:
                target.resize(stop, axis=0)
                target[start:stop] = values
            rows = np.asarray(handle.attrs.get("scene_rows", [0, start]), dtype=np.int64)
            handle.attrs["scene_rows"] = np.append(rows, stop)
        except BaseException:
            for target, _ in targets:
                target.resize(start, axis=0)
            raise
    return start, stop


def append_patches(path: str | Path, patches: Any, labels: Any) -> tuple[int, int]:
    """Append ``(N, C, P, P)`` patches and their labels to a :func:`write_h5` file (created on first use).

    Parameters
    ----------
    path : str or Path
        A file written by :func:`write_h5`.
    patches : (N, C, P, P) array
        Windows; ``C`` must be the cube's band count, ``C x P x P`` the same at every call.
    labels : (N,) int array
        Class per patch (0-based or 1-based, as the caller uses them).

    Returns
    -------
    tuple of int
        ``(first, stop)`` indices of the appended patches in ``patches``.
    """
    path = Path(path)
    array = np.asarray(patches)
    if array.ndim != 4 or array.shape[2] != array.shape[3]:
        raise ShapeMismatchError(f"append_patches: patches have shape {array.shape}; expected (N, C, P, P)")
    ids = np.asarray(labels)
    if ids.shape != (array.shape[0],) or not np.issubdtype(ids.dtype, np.integer):
        raise ShapeMismatchError(f"append_patches: labels {ids.shape} {ids.dtype}, expected ({array.shape[0]},) integers")
    with h5py.File(path, "r+") as handle:
        if handle.attrs.get("hsi_format") != FORMAT_NAME or "cube" not in handle:
            raise OptionError("path", str(path), f"a file written by hsi.io.write_h5 (attribute hsi_format={FORMAT_NAME!r})")
        if array.shape[1] != handle["cube"].shape[2]:
            raise ShapeMismatchError(f"{path}: patches of {array.shape[1]} bands for a cube of {handle['cube'].shape[2]}")
        if "patches" not in handle:
            handle.create_dataset("patches", shape=(0, *array.shape[1:]), dtype=array.dtype,
                                  chunks=(1, *array.shape[1:]), maxshape=(None, *array.shape[1:]))
            handle.create_dataset("patch_labels", shape=(0,), dtype=np.int64, chunks=(4096,), maxshape=(None,))
        store, store_labels = handle["patches"], handle["patch_labels"]
        if store.shape[1:] != array.shape[1:]:
            raise ShapeMismatchError(f"{path}: appending patches {array.shape[1:]} to patches {store.shape[1:]}")
        start = int(store.shape[0])
        stop = start + array.shape[0]
        try:
            for target, values in ((store, array), (store_labels, ids)):
                target.resize(stop, axis=0)
                target[start:stop] = values
        except BaseException:
            for target in (store, store_labels):
                target.resize(start, axis=0)
            raise
    return start, stop
