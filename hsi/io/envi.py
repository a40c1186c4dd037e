"""ENVI images (.hdr text header + raw binary) through ``spectral``, memory-mapped.

Parsed in stages: find the header/binary pair, read the header text to a dict, check the
required fields and that the binary's size matches them, then memory-map through
``spectral.envi.open`` and collect optional metadata (wavelengths and units, fwhm, ``bbl``,
``data ignore value``, ``reflectance scale factor``, ``data units`` / ``units``). Malformed
optional metadata warns (:class:`hsi.errors.DataQualityWarning`) and is ignored.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import spectral.io.envi as spy_envi
from spectral.io.bilfile import BilFile
from spectral.io.bipfile import BipFile
from spectral.io.bsqfile import BsqFile
from spectral.utilities.errors import SpyException

from hsi.errors import CubeFormatError, DataQualityWarning, DatasetNotFoundError, WavelengthError
from hsi.io.source import RawSource

_BINARY_EXTS = (".img", ".dat", ".raw", ".bsq", ".bil", ".bip", ".bin")
_REQUIRED = ("samples", "lines", "bands", "data type", "interleave", "byte order")
_INTERLEAVES = {"bsq": BsqFile, "bil": BilFile, "bip": BipFile}
_ERRORS = (SpyException, OSError, ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError)


def find_header(binary: Path) -> Path | None:
    """The header of ``binary``: ``image.img.hdr`` (Samson style) or ``image.hdr``."""
    for cand in (Path(f"{binary}.hdr"), Path(f"{binary}.HDR"), binary.with_suffix(".hdr"), binary.with_suffix(".HDR")):
        if cand != binary and cand.is_file():
            return cand
    return None


def binary_candidates(header: Path) -> list[Path]:
    base = header.with_suffix("")
    cands = [base]
    for ext in _BINARY_EXTS:
        cands += [Path(f"{base}{ext}"), Path(f"{base}{ext.upper()}")]
    return cands


def find_pair(path: Path) -> tuple[Path, Path]:
    """``(header, binary)`` given either of them."""
    if path.suffix.lower() == ".hdr":
        cands = binary_candidates(path)
        for cand in cands:
            if cand.is_file():
                return path, cand
        tried = ", ".join(c.name for c in cands[:4])
        raise DatasetNotFoundError(f"{path}: ENVI header found but no binary image beside it (tried {tried}, ...)")
    header = find_header(path)
    if header is None:
        raise DatasetNotFoundError(f"{path}: no ENVI header found (tried {path.name}.hdr and {path.stem}.hdr)")
    return header, path


def read_header(header: Path) -> dict:
    """Header text -> dict of strings/lists; required fields checked."""
    try:
        fields = spy_envi.read_envi_header(str(header))
    except _ERRORS as err:
        raise CubeFormatError(f"{header}: not a valid ENVI header ({type(err).__name__}: {err})") from err
    missing = [f for f in _REQUIRED if f not in fields]
    if missing:
        raise CubeFormatError(f"{header}: ENVI header lacks required field(s) {missing}")
    # spectral compares these case-sensitively and silently falls back (an interleave of
    # "Bil" is read as BSQ, a byte order of 2 as big-endian), so check and normalise them.
    interleave = str(fields["interleave"]).strip().lower()
    if interleave not in _INTERLEAVES:
        raise CubeFormatError(
            f"{header}: ENVI interleave {fields.get('interleave')!r} is not one of bsq, bil, bip"
        )
    fields["interleave"] = interleave
    byte_order = str(fields["byte order"]).strip()
    if byte_order not in ("0", "1"):
        raise CubeFormatError(
            f"{header}: ENVI byte order {fields.get('byte order')!r} is not 0 (little-endian) or 1 (big-endian)"
        )
    fields["byte order"] = byte_order
    if "spectral library" in str(fields.get("file type", "")).lower():
        raise CubeFormatError(
            f"{header}: an ENVI spectral library (file type {fields['file type']!r}) holds spectra, "
            f"not an image cube; read it with spectral.envi.open"
        )
    return fields


def _dtype(fields: dict, header: Path) -> np.dtype:
    code = str(fields["data type"]).strip()
    if code not in spy_envi.envi_to_dtype:
        raise CubeFormatError(f"{header}: unsupported ENVI data type {code!r}")
    dtype = np.dtype(spy_envi.envi_to_dtype[code])
    if dtype.kind == "c":
        raise CubeFormatError(f"{header}: complex ENVI data (data type {code}) is not a reflectance cube")
    return dtype


def check_size(fields: dict, header: Path, binary: Path) -> None:
    """Raise when the binary is not exactly offset + lines x samples x bands x item size bytes."""
    try:
        lines, samples, bands = (int(fields[k]) for k in ("lines", "samples", "bands"))
        offset = int(fields.get("header offset", 0))
    except (TypeError, ValueError) as err:
        raise CubeFormatError(f"{header}: non-integer size fields in ENVI header ({err})") from err
    itemsize = _dtype(fields, header).itemsize
    expected = offset + lines * samples * bands * itemsize
    actual = binary.stat().st_size
    if actual != expected:
        raise CubeFormatError(
            f"{binary}: file is {actual} bytes but header {header.name} declares {expected} bytes "
            f"({lines} lines x {samples} samples x {bands} bands x {itemsize} bytes + {offset} offset)"
            + ("; the binary is truncated" if actual < expected else "")
        )


def _floats(fields: dict, name: str, header: Path, required: bool = False) -> np.ndarray | None:
    if name not in fields:
        return None
    value = fields[name]
    try:
        return np.array([float(v) for v in (value if isinstance(value, list) else [value])], dtype=np.float64)
    except (TypeError, ValueError) as err:
        if required:
            raise WavelengthError(f"{header}: malformed {name!r} in ENVI header ({err})") from err
        warnings.warn(f"{header}: malformed {name!r} in ENVI header ignored ({err})", DataQualityWarning,
                      stacklevel=3)
        return None


def _scalar(fields: dict, name: str, header: Path) -> float | None:
    values = _floats(fields, name, header)
    if values is None or values.size == 0:
        return None
    return float(values[0])


#: header fields that may say what the values are ("W/(m2 sr um)", "reflectance"), in order of preference
DATA_UNITS_FIELDS = ("data units", "units")


def data_units(fields: dict, header: Path) -> tuple[str | None, str | None]:
    """``(text, where)`` of the first of :data:`DATA_UNITS_FIELDS` the header has, or ``(None, None)``."""
    for name in DATA_UNITS_FIELDS:
        value = fields.get(name)
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        if value is not None and str(value).strip():
            return str(value).strip(), f"ENVI header {header.name} field {name!r}"
    return None, None


def open_envi(path: Path, georef: str = "check") -> RawSource:
    """Raw HWC memory map of an ENVI image, with its header metadata (``georef="ignore"``: no georeference)."""
    from hsi.io.georef import from_envi

    header, binary = find_pair(path)
    fields = read_header(header)
    geo = None if georef == "ignore" else from_envi(fields, str(header))
    check_size(fields, header, binary)
    try:
        spy_envi.check_compatibility(fields)
        params = spy_envi.gen_params(fields)
        params.filename = str(binary)
        image = _INTERLEAVES[fields["interleave"]](params, fields)
        array = image.open_memmap(interleave="bip", writable=False)
    except _ERRORS as err:
        raise CubeFormatError(f"{binary}: could not open ENVI image ({type(err).__name__}: {err})") from err
    bbl = _floats(fields, "bbl", header)
    units_text, units_origin = data_units(fields, header)
    source = RawSource(
        binary, "envi", array, layout="HWC",
        wavelengths=_floats(fields, "wavelength", header, required=True),
        wavelength_units=fields.get("wavelength units"),
        wavelength_source=f"ENVI header {header.name}",
        fwhm=_floats(fields, "fwhm", header),
        bbl=None if bbl is None else (bbl != 0).astype(np.int64),
        ignore_value=_scalar(fields, "data ignore value", header),
        scale_factor=_scalar(fields, "reflectance scale factor", header),
        scale_factor_origin=f"ENVI header {header.name} field 'reflectance scale factor'",
        data_units=units_text,
        data_units_origin=units_origin,
        extra={
            "header": str(header),
            "interleave": fields["interleave"],
            "byte_order": int(fields["byte order"]),
            "header_offset": int(fields.get("header offset", 0)),
            "georef": geo,
        },
    )
    return source
