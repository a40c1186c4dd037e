"""The MATLAB reader: .mat v5 (scipy) and v7.3 (HDF5, put back in MATLAB's orientation); see :mod:`hsi.io.matlab`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hsi.io.discovery import ArrayInfo
from hsi.io.readers.registry import Reader, register_reader
from hsi.io.source import RawSource


@register_reader
class MatlabReader(Reader):
    """MATLAB ``.mat`` files: variables chosen by ``key``, no georeference."""

    name = "mat"
    description = ".mat (MATLAB v5 or v7.3)"
    suffixes = frozenset({".mat"})
    keyed = True

    def open(self, path: Path, key: str | None, georef: str) -> RawSource:
        from hsi.io.matlab import open_mat

        return open_mat(path, key)

    def list_arrays(self, path: Path) -> list[ArrayInfo]:
        from hsi.io.hdf5 import open_file, walk
        from hsi.io.matlab import is_v73, matlab_marks, v5_infos

        if not is_v73(path):
            return v5_infos(path)
        with open_file(path) as handle:
            return walk(handle, matlab=matlab_marks(path) is not None)[0]

    def label_array(self, path: Path, key: str | None, prefer: Callable[[ArrayInfo], bool]
                    ) -> tuple[str | None, Any, int | None]:
        from hsi.io.matlab import load_label_array

        name, array = load_label_array(path, key, prefer)
        return name, array, None
