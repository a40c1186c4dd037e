"""Convert any readable cube to a chunked HDF5 file, ``.npy`` + ``meta.json`` or a GeoTIFF, then verify it.

What is written is what :func:`hsi.io.read_cube` returns for the input: float32
``H x W x C``, ascending nm wavelengths, the file's scale factor applied and its ignore
value as NaN, so every reader of the output sees exactly the values training would see.
The input is read in blocks of rows (a scene larger than memory is never loaded whole) and
the output appears under its final name only once it is complete:

- ``to="h5"``: one file (:func:`hsi.io.writers.hdf5.open_h5_writer`) that ``read_cube`` reads
  with no key;
- ``to="npy"``: a folder holding ``cube.npy``, ``labels.npy`` (when labels are given) and
  ``meta.json`` (shape, wavelengths, source, what the reader did, and each file's size and
  SHA-256), staged beside it and committed with ``meta.json`` last (:mod:`hsi.transaction`);
- ``to="gtiff"``: one tiled, deflated GeoTIFF (:func:`hsi.io.writers.geotiff.write_cube_gtiff`)
  with the GDAL band metadata ``wavelength`` / ``wavelength_units``, nodata NaN.

The georeference of the input (``meta["georef"]``: CRS and transform) is kept by every
route: HDF5 attributes ``crs`` / ``transform`` / ``pixel_is``, ``meta.json``'s ``georef``,
the GeoTIFF's own CRS and transform; verification compares it too.

``bands=`` (0-based indices and inclusive ranges, ``"0-99,120,130-140"``) or
``wavelength_range=`` (MIN, MAX nm: the bands whose centre lies within) writes only those
bands (:meth:`hsi.io.LazyCube.select_bands`), with their wavelengths and band widths (HDF5
attribute ``fwhm``, ``meta.json``'s ``fwhm``), the selection recorded (``band_selection``);
verification compares the output with the same bands of the source.

Free space for the uncompressed output is checked before starting, and a disk that fills
up while writing ends in one :class:`~hsi.errors.DiskFullError`, the partial output removed.

:func:`hsi.io.verify.verify_conversion` then re-opens the output with :func:`hsi.io.open_cube`
(an ``.npy`` folder through its reader, :mod:`hsi.io.readers.npy_scene`) and compares a seeded
sample of windows with the source, exactly.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from hsi._pages import row_strips
from hsi.errors import IntegrityError, OptionError, OverwriteError
from hsi.io.readers.npy_scene import NPY_FORMAT

__all__ = ["ConvertReport", "convert"]
#: Bytes of cube read per block while converting.
BLOCK_BYTES = 64 << 20
#: the files of an ``.npy`` output folder (``meta.json`` is its manifest, written last)
NPY_FILES = ("cube.npy", "labels.npy", "meta.json")
COMMAND = "hsi convert"

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ConvertReport:
    """What :func:`convert` did.

    Parameters
    ----------
    out : Path
        The file (h5) or folder (npy) written.
    to : str
        ``"h5"``, ``"npy"`` or ``"gtiff"``.
    shape : tuple of int
        ``(H, W, C)`` written.
    input_bytes : int
        Size of the input file(s) on disk.
    output_bytes : int
        Size of the output on disk.
    seconds : float
        Time taken by conversion and verification.
    windows_checked : int
        Windows compared with the source after writing.
    windows_total : int
        Windows the scene divides into (all are checked when few).
    """

    out: Path
    to: str
    shape: tuple[int, int, int]
    input_bytes: int
    output_bytes: int
    seconds: float
    windows_checked: int
    windows_total: int

    def summary(self) -> str:
        """Two lines: what was written (sizes, time) and what the verification compared."""
        mb = 1 / (1 << 20)
        h, w, c = self.shape
        return (f"wrote {self.out} ({self.to}, {h} x {w} x {c} float32): {self.input_bytes * mb:.1f} MiB in -> "
                f"{self.output_bytes * mb:.1f} MiB out, {self.seconds:.2f} s\n"
                f"verified: {self.windows_checked} of {self.windows_total} windows identical to the source")


def _size_on_disk(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


def _input_files(path: Path, read_from: str | None) -> set[Path]:
    """The input and the file the reader actually read (an ENVI header's binary), for the size report."""
    return {path} | ({Path(read_from)} if read_from else set())


def _row_blocks(shape: tuple[int, int, int], block_bytes: int = BLOCK_BYTES) -> Iterator[slice]:
    """Rows of a float32 ``(H, W, C)`` cube in blocks of about ``block_bytes``."""
    h, w, c = shape
    return row_strips(h, w * c * 4, block_bytes)


def _is_hsi_h5(path: Path) -> bool:
    import h5py

    try:
        with h5py.File(path, "r") as handle:
            return handle.attrs.get("hsi_format") == "hsi-h5"
    except (OSError, ValueError):
        return False


def _is_hsi_gtiff(path: Path) -> bool:
    """Whether ``path`` is a GeoTIFF cube that :func:`convert` wrote (its ``HSI_FORMAT`` tag)."""
    import rasterio

    from hsi.io.geotiff import FORMAT_TAG

    try:
        with rasterio.Env(), rasterio.open(path) as src:
            return src.tags().get(FORMAT_TAG) == "hsi-cube"
    except rasterio.errors.RasterioError:
        return False


def _check_out_name(out: Path, to: str) -> None:
    """Refuse an output name whose suffix says another format than ``to`` (before any work: it is read back by it)."""
    from hsi.io.readers import get_reader, known_suffixes
    from hsi.io.readers.envi import BINARY_EXT

    tiff_ext, h5_ext = get_reader("geotiff").suffixes, get_reader("hdf5").suffixes
    suffix = out.suffix.lower()
    if to == "gtiff" and suffix not in tiff_ext:
        raise OptionError("out", str(out), "a .tif or .tiff file name with to='gtiff' (--to gtiff), so readers know it")
    if to == "h5" and suffix not in h5_ext:
        raise OptionError("out", str(out), f"a file name ending in {'/'.join(sorted(h5_ext))} with to='h5' "
                                           f"(--to h5), so readers know it (a {suffix or 'name without suffix'} "
                                           f"output would not be read back as HDF5)")
    file_suffixes = known_suffixes() | BINARY_EXT | {".npz"}
    if to == "npy" and suffix in file_suffixes:
        raise OptionError("out", str(out), f"a folder name with to='npy' (--to npy writes a folder of .npy files "
                                           f"and meta.json); {suffix} names a file format")


def _check_target(out: Path, to: str, overwrite: bool) -> None:
    """Refuse a target that exists (unless ``overwrite``) or that hsi did not write; clean leftovers beside it."""
    from hsi import transaction

    if to not in ("h5", "npy", "gtiff"):
        raise OptionError("to", to, "'h5' (one chunked HDF5 file), 'npy' (a folder of .npy files + meta.json) or "
                                    "'gtiff' (one tiled GeoTIFF)")
    _check_out_name(out, to)
    if out.exists() and not overwrite:
        raise OverwriteError(f"{out}: already exists; pass overwrite=True (--overwrite) to replace it")
    if to == "npy":
        transaction.check_target(out, manifest="meta.json", outputs=NPY_FILES, overwrite=overwrite, command=COMMAND)
    elif to == "gtiff":
        if out.is_dir() or (out.exists() and not _is_hsi_gtiff(out)):
            raise OverwriteError(f"{out}: exists but is not a GeoTIFF cube written by hsi (no HSI_FORMAT tag); "
                                 "refusing to replace it; move it away or choose another name")
    elif out.is_dir() or (out.exists() and not _is_hsi_h5(out)):
        raise OverwriteError(f"{out}: exists but is not an HDF5 file written by hsi (no hsi_format attribute); "
                             "refusing to replace it; move it away or choose another name")
    transaction.remove_leftovers(out)


def _meta(lazy: Any, labels: np.ndarray | None, input_path: Path) -> dict[str, Any]:
    read = {k: _json_number(v) for k, v in lazy.meta.items() if isinstance(v, (str, int, float, bool, type(None)))}
    return {
        "format": NPY_FORMAT,
        "version": 1,
        "shape": list(lazy.shape),
        "dtype": "float32",
        "layout": "HWC",
        "wavelengths": None if lazy.wavelengths is None else [float(x) for x in lazy.wavelengths],
        "wavelength_units": "nm",
        "labels": None if labels is None else "labels.npy",
        "source": str(input_path),
        "read": read,
        "georef": None if lazy.meta.get("georef") is None else lazy.meta["georef"].to_dict(),
        "fwhm": lazy.meta.get("fwhm"),
        "band_selection": lazy.meta.get("band_selection"),
    }


def _json_number(value: Any) -> Any:
    """``value``, with NaN and the infinities as the strings ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no such
    numbers: a no-data value of NaN is recorded as ``"nan"``)."""
    return str(value) if isinstance(value, float) and not np.isfinite(value) else value


class RowProgress:
    """``progress(rows_done, rows_total)`` drawn as a tqdm bar of rows on stderr (:func:`hsi._progress.progress_bar`)."""

    def __init__(self) -> None:
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        from hsi._progress import progress_bar

        if self.bar is None:
            self.bar = progress_bar(total, "rows written", "row")
        self.bar.update(done - self.bar.n)
        if done >= total:
            self.bar.close()


def _copy_blocks(lazy: Any, target: Any, progress: Progress | None) -> None:
    h = lazy.shape[0]
    for rows in _row_blocks(lazy.shape):
        target[rows] = lazy.read_window(rows, slice(None))
        if progress is not None:
            progress(rows.stop, h)


def _write_h5(lazy: Any, labels: np.ndarray | None, out: Path, input_path: Path, progress: Progress | None,
              overwrite: bool, h5_options: dict[str, Any]) -> None:
    from hsi.io.writers.hdf5 import open_h5_writer

    meta = _meta(lazy, labels, input_path)
    with open_h5_writer(out, lazy.shape, np.float32, label_dtype=None if labels is None else labels.dtype,
                        wavelengths=lazy.wavelengths, source=str(input_path), preprocessing={"read": meta["read"]},
                        overwrite=overwrite, georef=lazy.meta.get("georef"), **h5_options) as handle:
        if lazy.meta.get("fwhm") is not None:  # read back by the HDF5 reader (the wavelengths' unit: nm)
            handle["cube"].attrs["fwhm"] = np.asarray(lazy.meta["fwhm"], dtype=np.float64)
        if lazy.meta.get("band_selection") is not None:
            handle["cube"].attrs["band_selection"] = np.asarray(lazy.meta["band_selection"], dtype=np.int64)
        _copy_blocks(lazy, handle["cube"], progress)
        if labels is not None:
            handle["labels"][...] = labels


def _write_npy(lazy: Any, labels: np.ndarray | None, out: Path, input_path: Path, progress: Progress | None,
               overwrite: bool) -> None:
    """``cube.npy`` (+ ``labels.npy``) in a staging folder, committed into ``out`` with ``meta.json`` last."""
    from hsi import transaction
    from hsi._atomic import preallocate

    # a full disk is named as for every format of convert: the folder ``out`` is written in, the bytes needed
    full_disk = transaction.disk_full_as_error(out.parent, _output_bytes(lazy.shape, labels), f"{out}")
    with transaction.staged(out, manifest="meta.json", outputs=NPY_FILES, overwrite=overwrite,
                            command=COMMAND) as staging, full_disk:
        cube = np.lib.format.open_memmap(staging.path / "cube.npy", mode="w+", dtype=np.float32, shape=lazy.shape)
        preallocate(staging.path / "cube.npy")  # a full disk fails here, not as SIGBUS on a page write
        _copy_blocks(lazy, cube, progress)
        cube.flush()
        del cube
        if labels is not None:
            np.save(staging.path / "labels.npy", labels)
        staging.commit(_meta(lazy, labels, input_path))


def _output_bytes(shape: tuple[int, ...], labels: np.ndarray | None) -> int:
    """Bytes of the uncompressed output: the float32 cube, the labels, 1 MiB for headers and metadata."""
    return int(np.prod(shape)) * 4 + (0 if labels is None else int(labels.nbytes)) + (1 << 20)


def _check_options(to: str, labels_path: Any, compression: str | None, chunks: Any, n_windows: int) -> None:
    """Refuse options that do not go with the output format, and too few verification windows (:class:`OptionError`)."""
    if to == "gtiff" and labels_path is not None:
        raise OptionError("labels_path", str(labels_path), "None with to='gtiff': a GeoTIFF holds the cube alone; "
                                                             "convert to h5 or npy to keep labels with the cube")
    if to != "h5" and (compression is not None or chunks != "auto"):
        raise OptionError("compression" if compression is not None else "chunks",
                          compression if compression is not None else chunks, "only with to='h5'")
    if int(n_windows) < 4:
        raise OptionError("n_windows", n_windows, "an integer >= 4 (the four corners are always compared)")


def convert(
    input_path: str | Path,
    out: str | Path,
    to: Literal["h5", "npy", "gtiff"] = "h5",
    *,
    labels_path: str | Path | None = None,
    key: str | None = None,
    labels_key: str | None = None,
    layout: str | None = None,
    compression: str | None = None,
    chunks: Any = "auto",
    overwrite: bool = False,
    n_windows: int = 32,
    progress: Progress | bool | None = None,
    bands: str | Sequence[int] | None = None,
    wavelength_range: tuple[float, float] | None = None,
) -> ConvertReport:
    """Convert a cube file (and its labels) to HDF5, ``.npy`` + ``meta.json`` or GeoTIFF, then verify the output.

    Parameters
    ----------
    input_path : str or Path
        Any file :func:`hsi.io.read_cube` reads: a format of a registered reader (:func:`hsi.io.readers.list_readers`).
    out : str or Path
        The ``.h5`` file (``to="h5"``), the folder (``to="npy"``) or the ``.tif`` (``to="gtiff"``) to write.
    to : {"h5", "npy", "gtiff"}
        Output format.
    labels_path : str or Path, optional
        Label map to store beside the cube (may be ``input_path`` itself); not with ``to="gtiff"``
        (a GeoTIFF holds one raster).
    key : str, optional
        Cube variable / dataset in the input (None: discovered).
    labels_key : str, optional
        Label variable / dataset (None: discovered).
    layout : str, optional
        Axis order of the stored input array (None: detected).
    compression : {None, "gzip", "lzf"}
        HDF5 chunk compression (h5 only).
    chunks : "auto" or (int, int, int)
        HDF5 chunk shape (h5 only).
    overwrite : bool
        Replace an existing output.
    n_windows : int
        Windows compared with the source after writing (see :func:`hsi.io.verify.verify_conversion`).
    progress : bool or callable, optional
        True: a tqdm bar of the rows written on stderr (one line per 10 % when stderr is not a
        terminal); a callable is called as ``progress(rows_done, rows_total)`` after each block of rows.
    bands : str or sequence of int, optional
        Write only these bands: 0-based indices of the cube as read (ascending nm), as a spec of
        indices and inclusive ranges (``"0-99,120,130-140"``) or a sequence (None: every band).
    wavelength_range : (float, float), optional
        Write only the bands whose centre lies within ``MIN <= nm <= MAX``; not with ``bands``.

    Raises
    ------
    OptionError
        A bad ``bands`` spec or index, a ``wavelength_range`` with ``MIN >= MAX``, holding no band, or on a cube
        without wavelengths, or both given (each naming the option, what was expected and what was found).

    Returns
    -------
    ConvertReport
        Sizes, time and what was verified.
    """
    from hsi.io import open_cube, read_labels
    from hsi.io.verify import verify_conversion
    from hsi.transaction import disk_full_as_error, require_free_space

    input_path, out = Path(input_path), Path(out)
    progress = RowProgress() if progress is True else (progress or None)
    _check_target(out, to, overwrite)
    _check_options(to, labels_path, compression, chunks, n_windows)
    _check_band_options(bands, wavelength_range)
    started = time.perf_counter()
    with open_cube(input_path, key, layout) as whole:
        selection = _selection(whole, bands, wavelength_range, str(input_path))
        lazy = whole if selection is None else whole.select_bands(selection)
        labels = None
        if labels_path is not None:
            labels = read_labels(labels_path, key=labels_key)
            if labels.shape != lazy.shape[:2]:
                from hsi.errors import ShapeMismatchError

                raise ShapeMismatchError(f"{labels_path}: labels have shape {labels.shape}, the cube "
                                         f"{input_path} is {lazy.shape[0]} x {lazy.shape[1]}")
        needed = _output_bytes(lazy.shape, labels)
        require_free_space(out.parent, needed, f"{out} ({to}, {' x '.join(str(n) for n in lazy.shape)} float32)")
        with disk_full_as_error(out.parent, needed, f"{out}"):
            if to == "h5":
                _write_h5(lazy, labels, out, input_path, progress, overwrite,
                          {"compression": compression, "chunks": chunks})
            elif to == "gtiff":
                from hsi.io.writers.geotiff import write_cube_gtiff

                write_cube_gtiff(out, lazy, lazy.wavelengths, lazy.meta.get("georef"), progress=progress)
            else:
                _write_npy(lazy, labels, out, input_path, progress, overwrite)
    try:
        checked, total = verify_conversion(input_path, out, key=key, layout=layout, labels_path=labels_path,
                                           labels_key=labels_key, n_windows=n_windows, bands=selection)
    except IntegrityError as err:
        _remove(out)  # a written output that does not match its source is not left behind
        raise IntegrityError(f"{err}; {out} was removed") from err
    return ConvertReport(out, to, tuple(int(s) for s in lazy.shape),  # type: ignore[arg-type]
                         sum(_size_on_disk(p) for p in _input_files(input_path, lazy.meta.get("source"))),
                         _size_on_disk(out),
                         time.perf_counter() - started, checked, total)


def _check_band_options(bands: Any, wavelength_range: Any) -> None:
    """Refuse ``bands`` with ``wavelength_range``, and a range that is not ``MIN < MAX`` (before any file is read)."""
    from hsi._checks import wavelength_range as check_range

    if bands is not None and wavelength_range is not None:
        raise OptionError("bands", bands, "bands by index or by wavelength_range, not both")
    check_range("wavelength_range", wavelength_range)


def _selection(lazy: Any, bands: Any, wavelength_range: Any, where: str) -> np.ndarray | None:
    """The 0-based indices of the bands to write, or None for every band."""
    from hsi.io.bands import bands_in_range, parse_band_spec

    if bands is not None:
        return parse_band_spec(bands, lazy.shape[2])
    if wavelength_range is not None:
        return bands_in_range(lazy.wavelengths, wavelength_range, where)
    return None


def _remove(out: Path) -> None:
    if out.is_dir():  # the files hsi wrote, the manifest first; nothing else in the folder
        from hsi.transaction import remove_listed

        remove_listed(out, "meta.json")
    else:
        with contextlib.suppress(OSError):
            out.unlink()
