"""Describe a hyperspectral file: the first thing to run on an unknown cube or label map.

Usage: ``python scripts/inspect.py FILE [--key K] [--layout L]``

Prints the arrays found (shapes, dtypes), the chosen key, shape, dtype, the layout decision
and its reason, wavelength range and order, NaN/Inf counts, constant bands and a per-band
min/max summary. A 2-D label map is summarised by class counts instead. Bad input prints a
one-line error on stderr and exits with status 2.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # This file is named like the stdlib ``inspect`` module; when run as a script its folder
    # is sys.path[0] and would shadow it for every later import (dataclasses, numpy...).
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

import argparse  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _band_stats(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN bands -> NaN, reported as such
        flat = data.reshape(-1, data.shape[-1])
        finite = np.where(np.isfinite(flat), flat, np.nan)
        return np.nanmin(finite, axis=0), np.nanmax(finite, axis=0)


def describe_cube(cube, out) -> None:
    """Print the facts about a :class:`hsi.io.Cube` to ``out``."""
    meta, data = cube.meta, cube.data
    h, w, c = cube.shape
    print(f"chosen key: {meta.get('key')}", file=out)
    print(f"shape (H x W x C): {h} x {w} x {c}  (float32; original dtype {meta['original_dtype']}, "
          f"original shape {' x '.join(map(str, meta['original_shape']))})", file=out)
    print(f"layout: {meta['original_layout']} -> HWC ({meta['layout_reason']})", file=out)
    wl = cube.wavelengths
    if wl is None:
        print("wavelengths: none found", file=out)
    else:
        print(f"wavelengths: {_fmt(wl[0])} - {_fmt(wl[-1])} nm, {wl.size} bands, ascending; file order: "
              f"{meta['band_order']} ({meta['wavelength_source']}; {meta['wavelength_units']})", file=out)
    if meta.get("ignored_wavelength_vectors"):
        print(f"wavelength vectors not used (length differs from the band count): "
              f"{', '.join(meta['ignored_wavelength_vectors'])}", file=out)
    if meta.get("bbl") is not None:
        bad = [i for i, v in enumerate(meta["bbl"]) if v == 0]
        print(f"bad bands (bbl): {len(bad)} {bad[:20]}", file=out)
    print(f"scale factor: {meta.get('scale_factor') or 'none'}", file=out)
    n_nan, n_inf = int(np.isnan(data).sum()), int(np.isinf(data).sum())
    print(f"NaN: {n_nan}  Inf: {n_inf}  (ignored values -> NaN: {meta.get('n_ignored', 0)})", file=out)
    bmin, bmax = _band_stats(data)
    constant = np.flatnonzero(bmin == bmax).tolist()
    print(f"constant bands: {len(constant)}" + (f" {constant[:20]}" if constant else ""), file=out)
    qs = (0, 25, 50, 75, 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        qmin, qmax = np.nanpercentile(bmin, qs), np.nanpercentile(bmax, qs)
    print("per-band min, quantiles 0/25/50/75/100%: " + " / ".join(_fmt(v) for v in qmin), file=out)
    print("per-band max, quantiles 0/25/50/75/100%: " + " / ".join(_fmt(v) for v in qmax), file=out)
    shown = sorted(set(range(min(3, c))) | set(range(max(0, c - 3), c)))
    for b in shown:
        where = f" {_fmt(wl[b])} nm" if wl is not None else ""
        print(f"  band {b}{where}: min {_fmt(bmin[b])} max {_fmt(bmax[b])}", file=out)


#: Per-class counts printed for at most this many classes; more distinct values than
#: ``MAX_CLASSES`` suggest a 2-D data matrix (e.g. an unmixing ``Y``), not a label map.
MAX_SHOWN = 30
MAX_CLASSES = 255


def describe_labels(labels: np.ndarray, out, key: str | None = None) -> None:
    """Print the facts about an (H, W) label map (chosen ``key`` if known)."""
    if key is not None:
        print(f"chosen key: {key}", file=out)
    values, counts = np.unique(labels[labels != 0], return_counts=True)
    print(f"label map: {labels.shape[0]} x {labels.shape[1]}, {values.size} classes, "
          f"{int(counts.sum())} labeled pixels, {int((labels == 0).sum())} unlabeled", file=out)
    pairs = [f"{v}: {n}" for v, n in zip(values[:MAX_SHOWN].tolist(), counts[:MAX_SHOWN].tolist())]
    more = f", ... ({values.size - MAX_SHOWN} more)" if values.size > MAX_SHOWN else ""
    print("per class: " + ", ".join(pairs) + more, file=out)
    if values.size > MAX_CLASSES:
        print(f"warning: {values.size} distinct values is too many for a label map; this 2-D array is "
              f"probably data (e.g. a bands x pixels matrix), not classes", file=out)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Describe a hyperspectral cube or label map.")
    parser.add_argument("file", help=".mat, .h5/.hdf5, ENVI .hdr (or its binary), ERDAS .lan/.gis")
    parser.add_argument("--key", default=None, help="MATLAB variable or HDF5 dataset to read")
    parser.add_argument("--layout", default=None, help="axis order of the stored array, e.g. HWC or CHW")
    args = parser.parse_args(argv)

    from hsi.errors import CubeFormatError, HSIError
    from hsi.io import list_arrays, read_cube, read_labels

    out = sys.stdout
    try:
        arrays = list_arrays(args.file)
        print(f"file: {args.file}", file=out)
        print(f"arrays found ({len(arrays)}):", file=out)
        for info in arrays:
            print(f"  {info.describe()}{'' if info.numeric else ' [not numeric]'}", file=out)
        try:
            cube = read_cube(args.file, key=args.key, layout=args.layout)
        except CubeFormatError as cube_err:
            try:
                labels = read_labels(args.file, key=args.key)
            except HSIError:
                raise cube_err from None
            describe_labels(labels, out, _label_key(arrays, args.key, args.file))
        else:
            describe_cube(cube, out)
            if cube.n_bands == 1 and np.issubdtype(np.dtype(cube.meta["original_dtype"]), np.integer):
                describe_labels(read_labels(args.file, key=args.key), out)  # single-band class map
    except (HSIError, OSError) as err:
        message = " ".join(str(err).split())
        print(f"inspect.py: error: {message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
