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
import contextlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from hsi.io.layout import LAYOUTS

if TYPE_CHECKING:  # numpy is imported where a file is read: `hsi inspect --help` costs none
    import numpy as np

HELP = "describe a cube or label map file (keys, shape, layout, wavelengths, units, NaNs, ranges)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``FILE [--key K] [--layout L]``; the formats FILE may have are the registered readers' (:mod:`hsi.cli.names`)."""
    from hsi.cli.names import file_formats_text

    parser.add_argument("file", help=f"a file of a registered format, {file_formats_text()}, or one a reader "
                                     "recognises by its content (an ENVI binary beside its .hdr, the folder of an "
                                     "hsi convert --to npy scene)")
    parser.add_argument("--key", default=None, help="MATLAB variable or HDF5 dataset to read (default: discovered)")
    parser.add_argument("--layout", default=None, choices=LAYOUTS,
                        help="axis order of the stored array (default: decided from wavelengths and shape)")
    parser.add_argument("--ignore-georef", action="store_true",
                        help="read no georeference (CRS, transform) at all, so a broken one cannot stop the read")


def _label_key(arrays, key: str | None, path: str) -> str | None:
    """The array ``read_labels`` picks (same discovery rule), or None for single-image formats."""
    from hsi.errors import HSIError
    from hsi.io.discovery import choose, integer_like

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
    """The label map's georeference and nodata, when its format can carry one (GeoTIFF, ENVI, HDF5, .npy scene)."""
    from hsi.errors import GeoRefError
    from hsi.io.describe import describe_georef
    from hsi.io.labels import read_label_georef
    from hsi.io.readers import find_reader

    reader = find_reader(path)
    if policy == "ignore" or not reader.carries_georef:
        return
    nodata, mask = reader.label_nodata(Path(path))
    try:
        describe_georef(read_label_georef(path, key), out, nodata)
    except GeoRefError as err:
        describe_georef(None, out, nodata, problem=str(err))
    if mask is not None:
        print(f"nodata mask: the file's {mask} (masked pixels read as 0, unlabeled)", file=out)


def _describe(path: str, key: str | None, layout: str | None, out, policy: str = "check") -> None:
    """Print the arrays of ``path``, then the facts of the cube or of the label map it holds (never both)."""
    import numpy as np

    from hsi.errors import CubeFormatError, HSIError
    from hsi.io import list_arrays, read_labels
    from hsi.io.describe import describe_cube
    from hsi.io.discovery import has_ndim

    arrays = list_arrays(path)
    print(f"file: {path}", file=out)
    print(f"arrays found ({len(arrays)}):", file=out)
    for info in arrays:
        print(f"  {info.describe()}{'' if info.numeric else ' [not numeric]'}", file=out)
    label_like = [a for a in arrays if has_ndim(a.shape, 2)]  # (H, W), and single-band (H, W, 1) images
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
        _print_label_map(labels, path, key, arrays, policy, out)
        return
    if cube.n_bands == 1 and np.issubdtype(np.dtype(cube.meta["original_dtype"]), np.integer):
        try:  # a single-band class map (ENVI, ERDAS): described as the label map it is, not as a 1-band cube
            labels = read_labels(path, key=key)
        except HSIError:
            labels = None
        if labels is not None:
            _print_label_map(labels, path, key, arrays, policy, out)
            return
    if problem is not None:
        cube.meta["georef_problem"] = str(problem)
    print(f"kind: cube ({cube.n_bands} bands)", file=out)
    describe_cube(cube, out)


def _print_label_map(labels: np.ndarray, path: str, key: str | None, arrays, policy: str, out) -> None:
    """The facts of a label map; a stored (H, W, 1) or (1, H, W) image is said to be one."""
    from hsi.io.describe import describe_labels
    from hsi.io.readers import find_reader

    chosen = _label_key(arrays, key, path) if find_reader(path).keyed else None  # the others hold one image
    stored = next((a.shape for a in arrays if a.name == chosen), None) if chosen else \
        (arrays[0].shape if len(arrays) == 1 else None)
    single = f", stored as a single-band image {' x '.join(map(str, stored))}" if stored and len(stored) == 3 else ""
    print(f"kind: label map ({labels.shape[0]} x {labels.shape[1]}{single})", file=out)
    describe_labels(labels, out, chosen)
    _describe_label_georef(path, key, policy, out)


@contextlib.contextmanager
def _warning_lines(err: IO[str]) -> Iterator[None]:
    """Show every warning raised inside as one line ``warning: <message>`` on ``err``, each message once.

    The package's own warnings, and those of the libraries under it (spectral, h5py,
    rasterio, numpy), which Python would print with a file name, a line number and a source line.
    """
    seen: set[str] = set()

    def show(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
             line: str | None = None) -> None:
        text = " ".join(str(message).split())
        if text not in seen:
            seen.add(text)
            print(f"warning: {text}", file=err, flush=True)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def run(args: argparse.Namespace) -> int:
    """Print the facts about ``args.file`` (a reader's ``OSError`` is an hsi error naming the file and the reader:
    :func:`hsi.io.readers.registry.opened`, :func:`hsi.io.list_arrays`); a missing file is refused first, before
    numpy and the readers are imported."""
    from hsi._paths import check_input_file

    check_input_file(args.file, "hsi inspect")
    with _warning_lines(sys.stderr):
        _describe(args.file, args.key, args.layout, sys.stdout, "ignore" if args.ignore_georef else "check")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``hsi inspect ...`` (what ``scripts/inspect.py`` runs)."""
    from hsi.cli import script_main

    return script_main("inspect", argv)
