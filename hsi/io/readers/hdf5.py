"""The HDF5 reader: datasets chosen by ``key``, georeference from attributes; see :mod:`hsi.io.hdf5`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hsi.io.discovery import ArrayInfo
from hsi.io.readers.registry import Reader, register_reader
from hsi.io.source import RawSource


@register_reader
class HDF5Reader(Reader):
    """HDF5 files (.h5/.hdf5/.he5/.hdf): datasets chosen by ``key``; ``crs``/``transform`` attributes."""

    name = "hdf5"
    description = ".h5/.hdf5/.he5 (HDF5)"
    suffixes = frozenset({".h5", ".hdf5", ".he5", ".hdf"})
    keyed = True
    carries_georef = True

    def open(self, path: Path, key: str | None, georef: str) -> RawSource:
        from hsi.io.hdf5 import open_hdf5

        return open_hdf5(path, key, matlab=False, georef=georef)

    def list_arrays(self, path: Path) -> list[ArrayInfo]:
        from hsi.io.hdf5 import open_file, walk

        with open_file(path) as handle:
            return walk(handle, matlab=False)[0]

    def label_array(self, path: Path, key: str | None, prefer: Callable[[ArrayInfo], bool]
                    ) -> tuple[str | None, Any, int | None]:
        from hsi.io.hdf5 import load_label_array

        name, array = load_label_array(path, key, matlab=False, prefer=prefer)
        return name, array, None

    def class_names(self, path: Path, key: str | None) -> list[str] | None:
        """``class_names`` of the label dataset ``key`` (or "labels"), as :func:`hsi.io.write_h5` writes them."""
        import h5py

        with h5py.File(path, "r") as handle:
            dataset = handle.get(key or "labels")
            names = None if dataset is None else dataset.attrs.get("class_names")
            return None if names is None else [n.decode() if isinstance(n, bytes) else str(n) for n in names]

    def label_georef(self, path: Path, key: str | None) -> Any:
        from hsi.io.discovery import choose, integer_like
        from hsi.io.georef import from_h5_attrs
        from hsi.io.hdf5 import open_file, walk

        with open_file(path) as handle:
            infos, datasets = walk(handle, matlab=False)
            info = choose(infos, key, 2, str(path), "label map", prefer=integer_like)
            return from_h5_attrs(datasets[info.name].attrs, f"{path} dataset {info.name!r}")
