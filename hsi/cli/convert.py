"""Convert a cube file to chunked HDF5, .npy + meta.json or GeoTIFF, then verify the output against it.

Examples:
  hsi convert samson_1.img.hdr --to h5 samson.h5 --compression gzip
  hsi convert Indian_pines.mat --labels Indian_pines_gt.mat --to h5 indian_pines.h5
  hsi convert scene.hdr --to npy scene_npy/
  hsi convert samson_1.img.hdr --to gtiff samson.tif      # tiled GeoTIFF with wavelengths, CRS, transform
  hsi convert --collection scenes.yaml --to h5 pack.h5    # a whole collection in one HDF5 (hsi train --scenes pack.h5)
  hsi convert scene.hdr --to h5 vnir.h5 --wavelength-range 400 1000   # only the bands within 400-1000 nm
  hsi convert scene.hdr --to npy part/ --bands 0-99,120,130-140       # only these bands (0-based, ranges inclusive)

What is written is what read_cube returns (float32 H x W x C, ascending nm, scale factor
applied, georeference kept); the output appears under its name only once complete, and is
re-opened and compared window by window with the source before the command succeeds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hsi.io.layout import LAYOUTS

HELP = "convert a cube (and labels) to chunked HDF5, .npy + meta.json or GeoTIFF, verified against the source"

#: inputs larger than this (bytes) get a progress bar on stderr
PROGRESS_BYTES = 64 << 20


def FLAGS() -> dict[str, str]:  # noqa: N802 - read by hsi.cli.run_command
    """Python argument name -> flag, for error messages."""
    return {"to": "--to", "compression": "--compression", "chunks": "--chunks", "labels_path": "--labels",
            "key": "--key", "labels_key": "--labels-key", "layout": "--layout", "n_windows": "--check-windows",
            "out": "OUT", "bands": "--bands", "wavelength_range": "--wavelength-range"}


def _chunks(text: str) -> tuple[int, int, int]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 3 or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected three positive integers ROWS,COLS,BANDS (e.g. 64,64,200)")
    return values  # type: ignore[return-value]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``INPUT --to h5|npy|gtiff OUT`` and the reading / packing options."""
    from hsi.cli.names import file_formats_text

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = __doc__.split("\n\nWhat")[0]
    parser.add_argument("input", help=f"cube file of a registered format: {file_formats_text()}")
    parser.add_argument("out", help="the .h5 file (--to h5), folder (--to npy) or .tif file (--to gtiff) to write")
    parser.add_argument("--collection", action="store_true",
                        help="INPUT is a collection of scenes (a YAML file, as hsi train --scenes reads): pack it into "
                        "one .h5 file, a group per scene (hsi.collection.pack)")
    parser.add_argument("--to", required=True, choices=["h5", "npy", "gtiff"],
                        help="output format (gtiff: tiled, deflated, with wavelength metadata, CRS and transform)")
    parser.add_argument("--labels", dest="labels_path", default=None,
                        help="label map file to store with the cube (h5 and npy only)")
    parser.add_argument("--key", default=None, help="cube variable / dataset in INPUT (default: discovered)")
    parser.add_argument("--labels-key", default=None, help="label variable / dataset (default: discovered)")
    parser.add_argument("--layout", default=None, choices=LAYOUTS,
                        help="axis order of the stored input array (default: detected)")
    parser.add_argument("--compression", default=None, choices=["gzip", "lzf"], help="HDF5 chunk compression")
    parser.add_argument("--chunks", type=_chunks, default=None,
                        help="HDF5 chunk shape ROWS,COLS,BANDS (default: ~1 MiB spatial tiles with every band)")
    parser.add_argument("--bands", default=None, metavar="SPEC",
                        help="write only these bands: 0-based indices of the cube as read (ascending nm) and inclusive "
                        "ranges, e.g. 0-99,120,130-140")
    parser.add_argument("--wavelength-range", nargs=2, type=float, default=None, metavar=("MIN", "MAX"),
                        help="write only the bands whose centre lies within MIN-MAX nm (what hsi train "
                        "--wavelength-range keeps); not with --bands")
    parser.add_argument("--check-windows", dest="n_windows", type=int, default=32,
                        help="64 x 64 windows compared with the source after writing (default 32; >= 4)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing OUT")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="tqdm bar of the rows written on stderr (a line per 10 %% when piped; default: for inputs over 64 MiB)")


def run(args: argparse.Namespace) -> int:
    """Convert, verify, print the report; a missing input is refused first, before numpy and the readers are
    imported."""
    from hsi._paths import check_input_file

    check_input_file(args.input, "hsi convert")
    if args.collection:
        return _run_collection(args)

    from hsi.io.convert import convert

    show = args.progress
    if show is None:
        given = Path(args.input)  # an ENVI header's binary sits beside it, with or without an extension
        files = {given, given.with_suffix(""), given.with_suffix(".img"), given.with_suffix(".dat")}
        show = sum(f.stat().st_size for f in files if f.is_file()) > PROGRESS_BYTES
    report = convert(
        args.input, args.out, args.to, labels_path=args.labels_path, key=args.key, labels_key=args.labels_key,
        layout=args.layout, compression=args.compression, chunks=args.chunks or "auto", overwrite=args.overwrite,
        n_windows=args.n_windows, progress=bool(show), bands=args.bands,
        wavelength_range=None if args.wavelength_range is None else tuple(args.wavelength_range),
    )
    print(report.summary())
    return 0


def _run_collection(args: argparse.Namespace) -> int:
    """``--collection FILE --to h5 PACK``: :func:`hsi.collection.pack.pack_collection`."""
    from hsi.cli import UsageError
    from hsi.collection.pack import pack_collection

    if args.to != "h5":
        raise UsageError("--collection packs into one HDF5 file: hsi convert --collection FILE.yaml --to h5 PACK.h5")
    for flag in ("labels_path", "key", "labels_key", "layout", "chunks", "compression", "bands", "wavelength_range"):
        if getattr(args, flag) is not None:
            raise UsageError(f"--{FLAGS()[flag].lstrip('-')}: not with --collection (each scene entry names its own "
                             "files and keys)")
    out = pack_collection(args.input, args.out, overwrite=args.overwrite)
    print(f"packed {args.input} into {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``hsi convert ...``."""
    from hsi.cli import script_main

    return script_main("convert", argv)


if __name__ == "__main__":
    sys.exit(main())
