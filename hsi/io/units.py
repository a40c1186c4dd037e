"""What a cube's values are (reflectance, radiance or unknown), and where that came from.

Every cube :func:`hsi.io.read_cube` returns carries ``meta["units"]``, a small JSON-able dict
with exactly the keys of :data:`UNIT_KEYS`:

- ``kind``: ``"reflectance"`` (0-1 once any declared scale factor was applied), ``"radiance"``
  or ``"unknown"`` (:data:`UNIT_KINDS`);
- ``scale``: the factor the stored values were divided by on reading, or None;
- ``source``: where the kind came from (:data:`UNIT_SOURCES`): ``"header"`` (the file declares
  it), ``"registry"`` (a registry scene's declaration), ``"user"`` (``read_cube(units=...)``) or
  ``"rule"`` (the undeclared rule of :func:`infer_units`);
- ``note``: one short sentence for people.

Declarations come from the file (:func:`file_declaration`: ENVI ``reflectance scale factor`` and
``data units``, GDAL band scale/offset and units, HDF5 attributes), from a registry scene or the
caller (:func:`declared_units`, :func:`apply_declaration`). :func:`level_problem` says when values
said to be reflectance (or multiplied by a file's scale > 1) are implausibly large, from the
:func:`typical_level` of a sample. Nothing here reads a file.
"""

from __future__ import annotations

import math
import re
import typing
from numbers import Real
from typing import Any, Literal

from hsi.errors import OptionError

__all__ = ["FLOAT_NOTE", "INTEGER_NOTE", "REFLECTANCE_RANGE", "UNIT_KEYS", "UNIT_KINDS", "UNIT_SOURCES", "UnitKind",
           "UnitSource", "apply_declaration", "check_units", "check_units_option", "declared_units", "file_declaration",
           "infer_units", "level_problem", "make_units", "parse_units_text", "typical_level"]

UnitKind = Literal["reflectance", "radiance", "unknown"]
"""What the values of a cube are."""
UNIT_KINDS: tuple[str, ...] = typing.get_args(UnitKind)
UnitSource = Literal["header", "registry", "user", "rule"]
"""Where the kind of a cube's values came from."""
UNIT_SOURCES: tuple[str, ...] = typing.get_args(UnitSource)
#: the keys of ``meta["units"]``, in order
UNIT_KEYS: tuple[str, ...] = ("kind", "scale", "source", "note")
#: undeclared float values whose finite values all lie in this closed range are taken as reflectance
REFLECTANCE_RANGE: tuple[float, float] = (-0.5, 2.0)
#: values said to be reflectance whose typical level (:func:`typical_level`) is above this are not 0-1 reflectance
REFLECTANCE_LEVEL_MAX = 1.5
#: a typical level above this, after a scale that multiplies, is no reflectance nor radiance in any usual unit
MULTIPLIED_LEVEL_MAX = 1e5
#: the notes of the undeclared rule's first two cases (:func:`infer_units`)
INTEGER_NOTE = "integer values with no declared scale: kept as stored"
FLOAT_NOTE = "float values within 0-1: taken as reflectance"

_WATT = re.compile(r"(?<![a-z])(?:[uµμmn]?w|(?:micro|milli|nano)?watts?)(?![a-z])")
_STERADIAN = re.compile(r"(?<![a-z])(?:sr|steradians?)(?![a-z])")
_BLANK = frozenset({"", "unknown", "none", "n/a", "na", "unspecified"})


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def check_units_option(value: object) -> str | None:
    """``read_cube(units=...)`` checked: None, or one of :data:`UNIT_KINDS` (case-insensitive).

    Raises
    ------
    OptionError
        Naming ``units``, the value and the choices.
    """
    if value is None:
        return None
    text = value.strip().lower() if isinstance(value, str) else None
    if text not in UNIT_KINDS:
        raise OptionError("units", value, f"one of {', '.join(map(repr, UNIT_KINDS))} (what the cube's values "
                                          f"are), or None to take them from the file")
    return text


def make_units(kind: str, scale: float | None, source: str, note: str) -> dict[str, Any]:
    """A ``meta["units"]`` dict, checked (kind, source and a finite non-zero scale or None)."""
    check_units_option(kind)
    if source not in UNIT_SOURCES:
        raise OptionError("units source", source, f"one of {', '.join(map(repr, UNIT_SOURCES))}")
    if scale is not None:
        if isinstance(scale, bool) or not isinstance(scale, Real) \
                or not math.isfinite(scale) or scale == 0:
            raise OptionError("units scale", scale, "None or a finite non-zero number (the divisor applied on reading)")
        scale = float(f"{float(scale):.12g}")  # 1 / 1e-4 reads 10000, not 10000.000000000002
    return {"kind": kind.strip().lower(), "scale": scale, "source": source, "note": str(note)}


def check_units(units: object, where: str = "units") -> dict[str, Any]:
    """A complete units dict (exactly :data:`UNIT_KEYS`, valid values), returned as a fresh dict.

    Raises
    ------
    OptionError
        Not a dict, other keys, or a bad kind, scale or source; ``where`` names it.
    """
    if not isinstance(units, dict) or tuple(sorted(units)) != tuple(sorted(UNIT_KEYS)):
        found = sorted(units) if isinstance(units, dict) else type(units).__name__
        raise OptionError(where, found, f"a dict with exactly the keys {', '.join(UNIT_KEYS)}")
    return make_units(units["kind"], units["scale"], units["source"], units["note"])


def declared_units(kind: str, scale: float | None = None, note: str | None = None, *,
                   source: str = "registry") -> dict[str, Any]:
    """A declaration made outside the file: by a registry scene (default) or by the caller.

    Parameters
    ----------
    kind : one of :data:`UNIT_KINDS`.
    scale : the divisor the reader applies to the stored values (e.g. an ENVI
        ``reflectance scale factor``), or None; a declaration never adds a divisor of its own.
    note : one short sentence (what the stored numbers are); default "declared by the <source>".
    source : "registry" or "user".
    """
    if source not in ("registry", "user"):
        raise OptionError("source", source, "'registry' or 'user' (a file's own declaration is read, not declared)")
    return make_units(kind, scale, source, note or f"declared by the {source}")


def parse_units_text(text: str | None) -> str | None:
    """The kind a data-units string declares: "reflectance", "radiance", "unknown" or None.

    None: no declaration (missing, blank or "unknown"). "reflectance": the text says
    reflectance. "radiance": it says radiance, or is a radiance unit (a watt and a steradian:
    "W/(m2 sr um)", "uW/cm2/sr/nm", "mW m-2 sr-1 nm-1"). Any other text ("DN", "counts"), or
    one that says both, is a declaration of something else: "unknown".
    """
    if text is None:
        return None
    key = str(text).strip().lower()
    if key in _BLANK:
        return None
    reflectance = "reflect" in key
    radiance = "radiance" in key or bool(_WATT.search(key) and _STERADIAN.search(key))
    if reflectance != radiance:
        return "reflectance" if reflectance else "radiance"
    return "unknown"  # neither, or both (bands that disagree)


def _join(*parts: str | None) -> str:
    return "; ".join(p for p in parts if p)


def _in_range(finite_min: float | None, finite_max: float | None) -> bool | None:
    """Whether the finite values lie in :data:`REFLECTANCE_RANGE`; None when the range is unknown."""
    if finite_min is None or finite_max is None or not (math.isfinite(finite_min) and math.isfinite(finite_max)):
        return None
    return REFLECTANCE_RANGE[0] <= finite_min and finite_max <= REFLECTANCE_RANGE[1]


def infer_units(dtype: Any, finite_min: float | None, finite_max: float | None,
                declared: dict[str, Any] | None = None) -> dict[str, Any]:
    """The units of a cube, from a declaration or from the undeclared rule.

    ``dtype`` is the dtype of the values as read (the stored dtype, or float when a scale or
    offset was applied); ``finite_min``/``finite_max`` their finite range (None: not scanned);
    ``declared`` a partial units dict (``kind``, ``scale``, ``source``, ``note``), or None.

    A declared ``kind`` is kept, except that a file's "reflectance" of integers that no scale
    divides becomes "unknown" (reflectance means 0-1; "data units = reflectance" on int16
    data with no ``reflectance scale factor`` is reflectance x some factor nobody stated).

    **The undeclared rule** (no kind declared):

    1. integer data with no declared scale keeps its stored values (nothing is ever divided)
       and is "unknown": "integer values with no declared scale: kept as stored";
    2. float data (or integers a declared scale or offset turned into floats) whose finite
       values all lie within [-0.5, 2.0] is "reflectance": "float values within 0-1: taken
       as reflectance";
    3. other float data is "unknown", as is float data whose range was not scanned
       (:func:`hsi.io.open_cube` reads no values ahead) or that has no finite value.
    """
    import numpy as np

    declared = dict(declared or {})
    scale, prefix = declared.get("scale"), declared.get("note")
    integers = np.issubdtype(np.dtype(dtype), np.integer) and scale is None
    if declared.get("kind") is not None:
        kind, source = declared["kind"], declared.get("source", "header")
        if kind == "reflectance" and source == "header" and integers:
            return make_units("unknown", None, source, _join(
                prefix, "declared reflectance, but integer values with no scale are not 0-1: kept as stored"))
        return make_units(kind, scale, source, prefix or f"declared by the {source}")
    in_range = _in_range(finite_min, finite_max)
    if integers:
        return make_units("unknown", None, "rule", _join(prefix, INTEGER_NOTE))
    if in_range:
        return make_units("reflectance", scale, "rule", _join(prefix, FLOAT_NOTE))
    if in_range is False:
        why = f"float values {_fmt(finite_min)} to {_fmt(finite_max)}, not within -0.5 to 2: kept as stored"
    elif finite_min is None:
        why = "float values not scanned (open_cube reads none ahead; read_cube applies the range rule)"
    else:
        why = "no finite value to judge the units by"
    return make_units("unknown", scale, "rule", _join(prefix, why))


def file_declaration(text: str | None, text_origin: str | None, factor: float | None, scale: bool | float,
                     applied: float | None, applied_note: str | None) -> dict[str, Any] | None:
    """The partial declaration a file makes, for :func:`infer_units`; None when it makes none.

    Parameters
    ----------
    text, text_origin : the file's data-units string and where it was found, or None.
    factor : the file's reflectance scale factor (ENVI ``reflectance scale factor``, HDF5
        ``reflectance_scale_factor``), or None.
    scale : the ``read_cube(scale=...)`` option (True: the file's scaling is applied).
    applied, applied_note : the divisor applied on reading (None if none, or if per-band
        scales differ) and a sentence saying what was applied.
    """
    kind = parse_units_text(text)
    said = f"{text_origin or 'the file'} says {text!r}"
    if factor is not None and scale is not True and kind in (None, "reflectance"):
        if scale is False:
            return {"kind": "unknown", "scale": None, "source": "header", "note": _join(
                f"reflectance scale factor {_fmt(factor)} not applied (scale=False): values are reflectance x "
                f"{_fmt(factor)} as stored")}
        instead = f"the file's reflectance scale factor {_fmt(factor)} not applied"
        return {"scale": applied, "note": _join(applied_note, instead)}
    if kind in ("reflectance", "radiance"):
        return {"kind": kind, "scale": applied, "source": "header", "note": _join(said, applied_note)}
    if factor is not None:  # applied (scale=True): the applied note names it, unless it is 1
        note = _join("reflectance scale factor 1: values are reflectance as stored" if factor == 1 else None,
                     applied_note)
        return {"kind": "reflectance", "scale": applied, "source": "header", "note": note}
    if kind == "unknown":
        return {"kind": "unknown", "scale": applied, "source": "header",
                "note": _join(f"{said}, neither reflectance nor radiance", applied_note)}
    if applied is None and applied_note is None:
        return None
    return {"scale": applied, "note": applied_note}


def apply_declaration(found: dict[str, Any], declared: dict[str, Any]) -> dict[str, Any]:
    """``found`` (what reading gave) with the kind, source and note of ``declared`` (registry or user).

    The scale stays the one applied on reading: a declaration describes the values, it never
    divides them. A user declaration's note also says what the file itself gave.
    """
    declared = check_units(declared, "declared units")
    note = declared["note"]
    if declared["source"] == "user" and found.get("kind") != declared["kind"]:
        note = _join(note, f"the file gave {found.get('kind')} ({found.get('source')})")
    return make_units(declared["kind"], found.get("scale"), declared["source"], note)


def typical_level(values: Any) -> float | None:
    """The typical size of values: the median of their finite magnitudes, or None when none is finite."""
    import numpy as np

    flat = np.abs(np.asarray(values, dtype=np.float64).ravel())
    flat = flat[np.isfinite(flat)]
    return None if flat.size == 0 else float(np.median(flat))


def level_problem(level: float | None, reflectance: str | None, multiplier: float | None = None,
                  multiplier_origin: str | None = None, divisor: float | None = None,
                  advice: str = "read with scale={0} (--scale {0})") -> str | None:
    """Why values of typical size ``level`` (after scaling) are not what they are said to be, or None.

    Parameters
    ----------
    level : :func:`typical_level` of a sample of the values as read, or None (nothing to judge).
    reflectance : who says the values are reflectance ("units='reflectance' was given"), or None.
    multiplier, multiplier_origin : the largest scale the file's own scaling multiplied the stored
        values by (HDF5 CF ``scale_factor``, GDAL band scale) and where it came from, or None.
    divisor : the divisor already applied (``scale=``, a reflectance scale factor), or None.
    advice : how to divide by a factor, ``{0}`` standing for it.

    Two cases: a multiplier > 1 that made the values implausible (above
    :data:`MULTIPLIED_LEVEL_MAX`, or above :data:`REFLECTANCE_LEVEL_MAX` when said to be
    reflectance): the file most likely meant it as a divisor; and reflectance whose level is
    above :data:`REFLECTANCE_LEVEL_MAX`: the power of ten that would bring it within 0-1 is
    suggested as the divisor.
    """
    if level is None:
        return None
    if multiplier is not None and multiplier > 1 and (
            level > MULTIPLIED_LEVEL_MAX or (reflectance is not None and level > REFLECTANCE_LEVEL_MAX)):
        return (f"the scale {_fmt(multiplier)} of {multiplier_origin or 'the file'} multiplies the stored values "
                f"(value = stored x scale + offset, the CF and GDAL convention), giving a typical value of {level:.3g}; "
                f"if the file means value = stored / {_fmt(multiplier)}, {advice.format(_fmt(multiplier))}, which "
                f"divides instead")
    if reflectance is None or level <= REFLECTANCE_LEVEL_MAX:
        return None
    factor = 10.0 ** math.ceil(math.log10(level)) * (divisor or 1.0)
    return (f"{reflectance}, but the values' typical level is {level:.4g} (median of a sample of pixels), far above "
            f"reflectance (0-1); if they are reflectance x {_fmt(factor)}, {advice.format(_fmt(factor))}")
