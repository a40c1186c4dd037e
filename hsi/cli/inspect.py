"""Describe a hyperspectral file: the first thing to run on an unknown cube or label map.

Prints the arrays found (shapes, dtypes), the chosen key, shape, the layout decision and its
reason, the interleave, wavelength range and order, any scale applied, NaN/Inf and negative
counts, constant bands and a per-band min/max summary. A 2-D label map is summarised by
class counts instead.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from hsi.io.layout import LAYOUTS

HELP = "describe a cube or label map file (keys, shape, layout, wavelengths, NaNs, ranges)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``FILE [--key K] [--layout L]``."""
    parser.add_argument("file", help=".mat, .h5/.hdf5, ENVI .hdr (or its binary), ERDAS .lan/.gis")
    parser.add_argument("--key", default=None, help="MATLAB variable or HDF5 dataset to read (default: discovered)")
    parser.add_argument("--layout", default=None, choices=LAYOUTS,
                        help="axis order of the stored array (default: decided from wavelengths and shape)")


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


def _describe(path: str, key: str | None, layout: str | None, out) -> None:
    from hsi.errors import CubeFormatError, HSIError
    from hsi.io import list_arrays, read_cube, read_labels
    from hsi.io.describe import describe_cube, describe_labels

    arrays = list_arrays(path)
    print(f"file: {path}", file=out)
    print(f"arrays found ({len(arrays)}):", file=out)
    for info in arrays:
        print(f"  {info.describe()}{'' if info.numeric else ' [not numeric]'}", file=out)
    label_like = [a for a in arrays if len(a.shape) == 2]
    try:
        cube = read_cube(path, key=key, layout=layout)
    except CubeFormatError as cube_err:
        if not label_like and key is None:
            raise
        try:
            labels = read_labels(path, key=key)
        except HSIError as label_err:
            # a 2-D array that fails as a label map: its own problem is the one to report
            raise (label_err if label_like else cube_err) from None
        describe_labels(labels, out, _label_key(arrays, key, path))
        return
    describe_cube(cube, out)
    if cube.n_bands == 1 and np.issubdtype(np.dtype(cube.meta["original_dtype"]), np.integer):
        describe_labels(read_labels(path, key=key), out)  # single-band class map


def run(args: argparse.Namespace) -> int:
    """Print the facts about ``args.file``."""
    _describe(args.file, args.key, args.layout, sys.stdout)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``hsi inspect ...`` (what ``scripts/inspect.py`` runs)."""
    from hsi.cli import script_main

    return script_main("inspect", argv)
