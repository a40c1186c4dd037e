"""Label maps: (H, W) int64 with 0 = unlabeled, from the same formats as cubes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hsi.errors import CubeFormatError, OptionError
from hsi.io.discovery import integer_like, is_numeric
from hsi.io.georef import GeoRef
from hsi.io.readers import Reader, find_reader


#: More distinct classes than this and an array is refused as a label map (a data matrix,
#: a band, a mis-keyed variable); ``read_labels(max_classes=...)`` raises the limit, and a
#: GeoTIFF that declares itself a class map (:func:`hsi.io.geotiff.declares_classes`) is
#: read up to the most classes its dtype holds (65535 for the uint16 maps of ``hsi infer``).
MAX_CLASSES = 255


def _squeeze(array: np.ndarray) -> np.ndarray:
    """Drop singleton axes of a 3-D array with exactly two axes longer than 1 ((H, W, 1) -> (H, W))."""
    if array.ndim > 2 and sum(s > 1 for s in array.shape) == 2:
        return array.reshape([s for s in array.shape if s > 1])
    return array


def _as_integers(array: np.ndarray, source: str) -> np.ndarray:
    """The array as int64; floats must hold whole finite numbers, anything else is refused."""
    if array.dtype == np.bool_ or np.issubdtype(array.dtype, np.integer):
        return np.ascontiguousarray(array, dtype=np.int64)
    if not np.issubdtype(array.dtype, np.floating):
        raise CubeFormatError(f"{source}: label dtype {array.dtype} is not a real number type; labels must be integers")
    finite = np.isfinite(array)
    if not finite.all():
        first = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise CubeFormatError(
            f"{source}: {int((~finite).sum())} non-finite label value(s), first at (row, col) {first}; "
            f"labels must be integers"
        )
    fractional = array != np.round(array)
    if fractional.any():
        first = tuple(int(i) for i in np.argwhere(fractional)[0])
        raise CubeFormatError(
            f"{source}: {int(fractional.sum())} non-integral label value(s), first {array[first]!r} at {first}; "
            f"labels must be whole numbers"
        )
    return np.ascontiguousarray(array, dtype=np.int64)


def _check_values(labels: np.ndarray, source: str, max_classes: int) -> None:
    """Refuse negative ids (no silent 'unlabeled') and more classes than a label map can hold."""
    negative = labels < 0
    if negative.any():
        first = tuple(int(i) for i in np.argwhere(negative)[0])
        raise CubeFormatError(
            f"{source}: {int(negative.sum())} negative label value(s) (values "
            f"{sorted(int(v) for v in np.unique(labels[negative])[:5])}), first at (row, col) {first}; "
            f"labels must be >= 0 with 0 = unlabeled. Map them explicitly first, e.g. "
            f"labels[labels < 0] = 0 if they mean 'unlabeled'"
        )
    n_classes = int(np.unique(labels[labels > 0]).size)
    if n_classes > max_classes:
        raise CubeFormatError(
            f"{source}: {n_classes} distinct label values in a {labels.shape[0]} x {labels.shape[1]} array, more "
            f"than max_classes={max_classes}; this looks like data (a band or a data matrix), not a label map. "
            f"Check the file and key; if it really has that many classes, store it as a GeoTIFF class map with a "
            f"colour table (as hsi infer writes its maps), which is read up to its dtype's range, or call "
            f"read_labels(..., max_classes=N) from Python"
        )


def to_label_map(array: np.ndarray, source: str, max_classes: int = MAX_CLASSES) -> np.ndarray:
    """Check a label array and return it as C-contiguous (H, W) int64.

    Parameters
    ----------
    array : ndarray
        (H, W), or (H, W, 1) / (1, H, W) single-band images (squeezed).
    source : str
        File (and key) named in error messages.
    max_classes : int
        Refuse arrays with more distinct positive values than this.

    Raises
    ------
    CubeFormatError
        Empty, not 2-D, not integral, non-finite, negative values, or too many classes.
    """
    array = np.asarray(array)
    if array.size == 0:
        raise CubeFormatError(f"{source}: an empty array (shape {array.shape}); a label map needs pixels")
    array = _squeeze(array)
    if array.ndim != 2:
        raise CubeFormatError(
            f"{source}: shape {array.shape} is {array.ndim}-D; a label map must be 2-D (H x W) "
            f"(use read_cube for cubes)"
        )
    labels = _as_integers(array, source)
    _check_values(labels, source, max_classes)
    return labels


def read_labels(path: str | Path, key: str | None = None, *, max_classes: int | None = None) -> np.ndarray:
    """Read a label map as (H, W) int64, 0 = unlabeled.

    Formats as :func:`hsi.io.read_cube`. With ``key=None`` the only 2-D array is chosen
    (integer arrays first when there are several; (H, W, 1) arrays count as 2-D); MATLAB
    v7.3 maps come out in MATLAB's orientation (PaviaU: 610 x 340). ENVI and ERDAS
    single-band images are read whole, as is a single-band GeoTIFF (its nodata pixels become
    0, unlabeled). No georeference is read here: see :func:`read_label_georef`; nor class
    names: see :func:`hsi.io.readers.class_names_of` (a names file beside the map, an HDF5
    dataset's ``class_names``, a GeoTIFF's category names, attribute table or tag).

    Parameters
    ----------
    path : str or Path
        The file.
    key : str or None
        Variable / dataset name; None = discover.
    max_classes : int or None
        An array with more distinct positive values is refused (it is data, not labels).
        None: :data:`MAX_CLASSES` (255), or for a GeoTIFF that declares itself a class map
        (a colour table or hsi's map tag, as ``hsi infer`` writes) the largest value of its
        dtype (65535 for uint16), so the maps ``hsi infer`` writes read back as labels.

    Raises
    ------
    CubeFormatError
        Negative values (with their count and first position), non-integral or non-finite
        values, more than ``max_classes`` classes, or an array that is not 2-D.
    """
    if max_classes is not None and (isinstance(max_classes, bool) or not isinstance(max_classes, int)
                                    or max_classes < 1):
        raise OptionError("max_classes", max_classes, "a positive integer, or None")
    limit = MAX_CLASSES if max_classes is None else max_classes
    p = Path(path)
    reader = find_reader(p)
    _no_key(p, key, reader)
    name, array, found_limit = _label_result(reader, p, reader.label_array(p, key, integer_like))
    if max_classes is None and found_limit is not None:
        limit = max(MAX_CLASSES, found_limit)
    where = f"{p} key {name!r}" if name else str(p)
    return to_label_map(array, where, limit)


def _label_result(reader: Reader, path: Path, result: Any) -> tuple[str | None, np.ndarray, int | None]:
    """What :meth:`Reader.label_array` returned, checked: ``(name or None, real non-empty array, limit or None)``.

    A plug-in reader's mistake is one :class:`CubeFormatError` naming the file and the reader,
    not a numpy error from deep inside :func:`to_label_map`.
    """
    where = f"{path}: the {reader.name!r} reader's label_array"
    if not isinstance(result, tuple) or len(result) != 3:
        raise CubeFormatError(f"{where} returned {type(result).__name__}, expected (name or None, array, "
                              f"class limit or None)")
    name, array, limit = result
    try:
        array = np.asarray(array)
    except (TypeError, ValueError) as err:
        raise CubeFormatError(f"{where} returned {type(result[1]).__name__}, not an array ({err})") from err
    if not is_numeric(array.dtype):
        raise CubeFormatError(f"{where} returned an array of dtype {array.dtype}, expected integers")
    if array.size == 0:
        raise CubeFormatError(f"{where} returned an empty array (shape {array.shape}); the file holds no pixels")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1):
        raise CubeFormatError(f"{where} returned the class limit {limit!r}, expected a positive integer or None")
    if name is not None and not isinstance(name, str):
        raise CubeFormatError(f"{where} returned the array name {name!r}, expected a string or None")
    return name, array, None if limit is None else int(limit)


def _no_key(path: Path, key: str | None, reader: Reader) -> None:
    """Refuse a ``key`` for a format that holds one image."""
    if key is not None and not reader.keyed:
        raise CubeFormatError(f"{path}: a {reader.name} file holds one image; key={key!r} does not apply")


def read_label_georef(path: str | Path, key: str | None = None, georef: str = "check") -> GeoRef | None:
    """The georeference of a label map file, to compare with its cube's (:func:`hsi.io.georef.check_same_grid`).

    Read without the pixels: a GeoTIFF's CRS and transform, an ENVI header's ``map info``,
    or the ``crs``/``transform`` attributes of the HDF5 label dataset (the one
    :func:`read_labels` picks for ``key``), an ``.npy`` scene's ``meta.json`` (its cube's grid);
    formats that carry none (MATLAB, ERDAS, a lone ``.npy``) give None.

    Parameters
    ----------
    path : str or Path
        The label file.
    key : str or None
        HDF5 dataset name; None = the one :func:`read_labels` would choose.
    georef : {"check", "ignore"}
        "ignore" returns None without reading anything, so a broken georeference cannot raise.

    Raises
    ------
    GeoRefError
        A georeference that cannot be used (transform without CRS, rotated grid...).
    """
    from hsi.io.georef import check_policy

    if check_policy(georef) == "ignore":
        return None
    p = Path(path)
    reader = find_reader(p)
    if reader.carries_georef:
        _no_key(p, key, reader)
    return reader.label_georef(p, key)
