"""ENVI classification images: a single-band class map with class names and colours.

The header follows the ENVI format description (``file type = ENVI Classification``,
``classes``, ``class names``, ``class lookup``), which ENVI and QGIS (GDAL's ENVI driver)
show as a named, coloured classification; ``map info`` and ``coordinate system string``
come from the cube's georeference (:meth:`hsi.io.georef.GeoRef.envi_fields`, built from its
CRS) or, without one, are copied from the source cube's header, so the map lands where the
scene does.
Both files are written atomically (binary first, header last). :func:`read_class_info`
reads names and colours back; the map itself reads back with :func:`hsi.io.read_labels`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hsi._atomic import atomic_path, write_bytes_atomic
from hsi._pages import release_mapped, row_strips
from hsi.errors import CubeFormatError, ShapeMismatchError

__all__ = ["CARRIED_FIELDS", "read_class_info", "write_classification"]

#: georeferencing fields copied from a source header when present
CARRIED_FIELDS = ("map info", "coordinate system string")
_DATA_TYPES = {np.dtype(np.uint8): 1, np.dtype(np.uint16): 12}


def _clean_name(name: str) -> str:
    """A class name safe inside ``{a, b}``: braces and commas replaced, whitespace collapsed."""
    out = str(name).replace(",", ";").replace("{", "(").replace("}", ")")
    return " ".join(out.split()) or "unnamed"


def write_classification(path: str | Path, labels: Any, class_names: Sequence[str], lookup: Any, *,
                         georef: Any = None, source_header: str | Path | None = None,
                         description: str = "hsi classification") -> Path:
    """Write ``labels`` as an ENVI classification image ``<path>.img`` + ``<path>.hdr``.

    Parameters
    ----------
    path : str or Path
        Base path; a ``.hdr`` or ``.img`` suffix is replaced.
    labels : (H, W) integer array
        Class ids ``0..K``, 0 = unclassified.
    class_names : sequence of str
        ``K + 1`` names, the first for id 0 (e.g. "Unclassified"). Commas and braces,
        which the header syntax reserves, become ";" and "()".
    lookup : (K + 1, 3) array
        RGB colour (0-255) of each id.
    georef : hsi.io.georef.GeoRef, optional
        Where the map lies: gives ``map info`` and, when the CRS is known, ``coordinate
        system string`` (built from the CRS, so any source format can give them).
    source_header : str or Path, optional
        ENVI header whose :data:`CARRIED_FIELDS` are copied when ``georef`` is None.
    description : str
        Header description.

    Returns
    -------
    Path
        The header written.

    Raises
    ------
    ShapeMismatchError
        ``labels`` is not 2-D, or names / lookup do not have ``K + 1`` entries for the ids found.
    """
    labels = labels if isinstance(labels, np.ndarray) else np.asarray(labels)  # a memory map stays one
    if labels.ndim != 2 or not np.issubdtype(labels.dtype, np.integer):
        raise ShapeMismatchError(f"write_classification: labels must be a 2-D integer map; found {labels.dtype} {labels.shape}")
    names = [_clean_name(n) for n in class_names]
    table = np.asarray(lookup, dtype=np.int64)
    n_classes = len(names)
    if table.shape != (n_classes, 3):
        raise ShapeMismatchError(f"write_classification: lookup must be ({n_classes}, 3) for {n_classes} names; found {table.shape}")
    low, top = _id_range(labels)
    if top >= n_classes or low < 0:
        raise ShapeMismatchError(
            f"write_classification: label ids must lie in 0..{n_classes - 1} ({n_classes} names); found "
            f"{low}..{top}"
        )
    dtype = np.dtype(np.uint8) if n_classes <= 256 else np.dtype(np.uint16)
    base = Path(path)
    if base.suffix.lower() in (".hdr", ".img"):
        base = base.with_suffix("")
    fields: dict[str, str] = {
        "description": "{" + _clean_name(description) + "}",
        "samples": str(labels.shape[1]),
        "lines": str(labels.shape[0]),
        "bands": "1",
        "header offset": "0",
        "file type": "ENVI Classification",
        "data type": str(_DATA_TYPES[dtype]),
        "interleave": "bsq",
        "byte order": "0",
        "classes": str(n_classes),
        "class names": "{" + ", ".join(names) + "}",
        "class lookup": "{" + ", ".join(str(int(v)) for v in np.clip(table, 0, 255).ravel()) + "}",
        "band names": "{classification}",
        "data ignore value": "0",  # id 0: unclassified (no-data or masked), as GIS tools should show it
    }
    if georef is not None:
        fields.update(georef.envi_fields())
    elif source_header is not None:
        fields.update(_carried(Path(source_header)))
    header_text = "ENVI\n" + "".join(f"{k} = {v}\n" for k, v in fields.items())
    _write_rows(Path(f"{base}.img"), labels, dtype.newbyteorder("<"))
    header = Path(f"{base}.hdr")
    write_bytes_atomic(header, header_text.encode("utf-8"))
    return header


#: bytes of a map read at a time: a memory-mapped map is never copied whole, nor kept resident
#: (1 MB: a 1024^2 class map's size, so no larger map holds more; as fast as 4 MB)
_STRIP_BYTES = 1 << 20


def _strips(labels: np.ndarray) -> Iterator[slice]:
    """Rows of ``labels`` in strips of about :data:`_STRIP_BYTES`."""
    return row_strips(labels.shape[0], labels.shape[1] * labels.itemsize, _STRIP_BYTES)


def _id_range(labels: np.ndarray) -> tuple[int, int]:
    """The smallest and largest id of ``labels`` ((0, 0) when empty), strip by strip."""
    low, top = 0, 0
    for i, rows in enumerate(_strips(labels)):
        part = labels[rows]
        if part.size:
            low = int(part.min()) if i == 0 else min(low, int(part.min()))
            top = max(top, int(part.max()))
        release_mapped(labels, (rows.start, rows.stop))
    return low, top


def _write_rows(path: Path, labels: np.ndarray, dtype: np.dtype) -> None:
    """``labels`` as ``dtype``, row after row, into ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as out:
        for rows in _strips(labels):
            np.ascontiguousarray(labels[rows], dtype=dtype).tofile(out)
            release_mapped(labels, (rows.start, rows.stop))


def _carried(header: Path) -> dict[str, str]:
    """The :data:`CARRIED_FIELDS` of ``header``, copied verbatim (a WKT string must not be re-spaced)."""
    try:
        text = header.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise CubeFormatError(f"{header}: cannot read the source ENVI header to copy its map info ({err})") from err
    out = {}
    for key in CARRIED_FIELDS:
        match = re.search(r"^\s*" + re.escape(key) + r"\s*=\s*(\{[^}]*\}|[^\n]*)", text, flags=re.IGNORECASE | re.MULTILINE)
        if match:
            value = " ".join(match.group(1).split("\n")).strip()
            out[key] = value if value.startswith("{") else "{" + value + "}"
    return out


def read_class_info(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Class names and ``(classes, 3)`` uint8 colours of an ENVI classification header.

    Raises
    ------
    CubeFormatError
        The header is not an ENVI classification, or ``class names`` / ``class lookup``
        disagree with ``classes``.
    """
    import spectral.io.envi as spy_envi

    header = Path(path)
    if header.suffix.lower() != ".hdr":
        header = Path(f"{header}.hdr") if Path(f"{header}.hdr").is_file() else header.with_suffix(".hdr")
    try:
        fields = spy_envi.read_envi_header(str(header))
    except Exception as err:  # spectral raises several unrelated types for a bad header
        raise CubeFormatError(f"{header}: not a valid ENVI header ({err})") from err
    if str(fields.get("file type", "")).strip().lower() != "envi classification":
        raise CubeFormatError(f"{header}: file type is {fields.get('file type')!r}, expected 'ENVI Classification'")
    n = int(fields.get("classes", -1))
    names = [str(s).strip() for s in fields.get("class names", [])]
    lookup = np.asarray([int(float(v)) for v in fields.get("class lookup", [])], dtype=np.int64)
    if len(names) != n or lookup.size != 3 * n:
        raise CubeFormatError(
            f"{header}: classes = {n} but {len(names)} class names and {lookup.size} lookup values (expected {3 * n})"
        )
    return names, lookup.reshape(n, 3).astype(np.uint8)
