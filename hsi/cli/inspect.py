"""Describe a hyperspectral file: the first thing to run on an unknown cube or label map.

Prints the arrays found (shapes, dtypes), the chosen key, shape, the layout decision and its
reason, the interleave, wavelength range and order, any scale applied, the units (a line
``units: <kind>[, scale <s>] (<source>: <note>)``), the band widths (``fwhm:`` range in nm or
"unknown"), the georeference (CRS, transform) and nodata value, NaN/Inf and negative counts,
constant bands and a per-band min/max summary. A 2-D label map is summarised by class counts
(and its georeference) instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from hsi.io.layout import LAYOUTS

HELP = "describe a cube or label map file (keys, shape, layout, wavelengths, units, NaNs, ranges)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``FILE [--key K] [--layout L]``."""
    parser.add_argument("file", help=".mat, .h5/.hdf5, ENVI .hdr (or its binary), ERDAS .lan/.gis, GeoTIFF .tif")
    parser.add_argument("--key", default=None, help="MATLAB variable or HDF5 dataset to read (default: discovered)")
    parser.add_argument("--layout", default=None, choices=LAYOUTS,
                        help="axis order of the stored array (default: decided from wavelengths and shape)")
    parser.add_argument("--ignore-georef", action="store_true",
                        help="read no georeference (CRS, transform) at all, so a broken one cannot stop the read")


def _label_key(arrays, key: str | None, path: str) -> str | None:
    """The array ``read_labels`` picks (same discovery rule), or None for single-image formats."""
    from hsi.errors import HSIError
    from hsi.io.discovery import choose

    def integer_like(info) -> bool:
        return info.dtype == "bool" or np.issubdtype(np.dtype(info.dtype), np.integer)

    try:
        return choose(arrays, key, 2, path, "label map", prefer=integer_like).name
    except (HSIError, TypeError):
        return key


def _read_cube(path: str, key: str | None, layout: str | None, policy: str):
    """``(cube, georeference problem or None)``: a broken georeference is reported, not fatal, here."""
    from hsi.errors import GeoRefError
    from hsi.io import read_cube

    try:
        return read_cube(path, key=key, layout=layout, georef=policy), None
    except GeoRefError as err:
        return read_cube(path, key=key, layout=layout, georef="ignore"), err


def _describe_label_georef(path: str, key: str | None, policy: str, out) -> None:
    """The label map's georeference (GeoTIFF, ENVI, HDF5 attributes) and nodata, when it can have one."""
    from hsi.errors import GeoRefError
    from hsi.io.describe import describe_georef
    from hsi.io.dispatch import file_kind
    from hsi.io.labels import read_label_georef

    kind = file_kind(path)
    if policy == "ignore" or kind not in ("geotiff", "envi", "hdf5"):
        return
    nodata = None
    if kind == "geotiff":
        from hsi.io.geotiff import geotiff_info

        nodata = geotiff_info(Path(path), georef="ignore")["nodata"]
    try:
        describe_georef(read_label_georef(path, key), out, nodata)
    except GeoRefError as err:
        describe_georef(None, out, nodata, problem=str(err))


def _arrays(path: str):
    """What the file holds; a GeoTIFF is one array ((H, W) for a single-band label map)."""
    from hsi.io import list_arrays
    from hsi.io.discovery import ArrayInfo
    from hsi.io.dispatch import file_kind

    if file_kind(path) == "geotiff":
        from hsi.io.geotiff import geotiff_info

        info = geotiff_info(Path(path), georef="ignore")
        return [ArrayInfo(Path(path).name, info["shape"], info["dtype"])]
    return list_arrays(path)


def _describe(path: str, key: str | None, layout: str | None, out, policy: str = "check") -> None:
    from hsi.errors import CubeFormatError, HSIError
    from hsi.io import read_labels
    from hsi.io.describe import describe_cube, describe_labels

    arrays = _arrays(path)
    print(f"file: {path}", file=out)
    print(f"arrays found ({len(arrays)}):", file=out)
    for info in arrays:
        print(f"  {info.describe()}{'' if info.numeric else ' [not numeric]'}", file=out)
    label_like = [a for a in arrays if len(a.shape) == 2]
    try:
        cube, problem = _read_cube(path, key, layout, policy)
    except CubeFormatError as cube_err:
        if not label_like and key is None:
            raise
        try:
            labels = read_labels(path, key=key)
        except HSIError as label_err:
            # a 2-D array that fails as a label map: its own problem is the one to report
            raise (label_err if label_like else cube_err) from None
        describe_labels(labels, out, _label_key(arrays, key, path))
        _describe_label_georef(path, key, policy, out)
        return
    if problem is not None:
        cube.meta["georef_problem"] = str(problem)
    describe_cube(cube, out)
    if cube.n_bands == 1 and np.issubdtype(np.dtype(cube.meta["original_dtype"]), np.integer):
        describe_labels(read_labels(path, key=key), out)  # single-band class map


def run(args: argparse.Namespace) -> int:
    """Print the facts about ``args.file``."""
    _describe(args.file, args.key, args.layout, sys.stdout, "ignore" if args.ignore_georef else "check")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``hsi inspect ...`` (what ``scripts/inspect.py`` runs)."""
    from hsi.cli import script_main

    return script_main("inspect", argv)
