"""The reader registry: a format added from outside the package is read by every entry point.

The toy ``.csvcube`` reader below is the example of docs/extending.md ("A reader"): registered
from this file alone, it is read by ``read_cube``, ``open_cube``, ``read_labels``,
``list_arrays`` and ``hsi inspect``, and named in the "supported:" sentence of errors.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hsi.errors import CubeFormatError
from hsi.io import list_arrays, open_cube, read_cube, read_labels
from hsi.io.readers import (Reader, find_reader, get_reader, list_readers, register_reader, supported,
                             unregister_reader)
from hsi.io.source import RawSource

from tests.helpers import CHILD_TIMEOUT

REPO = Path(__file__).resolve().parents[3]


class CsvCubeReader(Reader):
    """A text cube: the first line ``H W C``, then one pixel per line, C comma-separated values."""

    name = "csvcube"
    description = "toy .csvcube text cubes"
    suffixes = frozenset({".csvcube"})

    def open(self, path: Path, key: str | None, georef: str) -> RawSource:
        with open(path) as handle:
            h, w, c = (int(v) for v in handle.readline().split())
        values = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float32, ndmin=2)
        return RawSource(path, self.name, values.reshape(h, w, c), layout="HWC")


@pytest.fixture
def csvcube():
    """The toy reader registered for one test, and forgotten after it."""
    register_reader(CsvCubeReader)
    yield CsvCubeReader
    unregister_reader(CsvCubeReader.name)


def write_csvcube(path: Path, cube: np.ndarray) -> Path:
    h, w, c = cube.shape
    rows = "\n".join(",".join(f"{v:g}" for v in pixel) for pixel in cube.reshape(-1, c))
    path.write_text(f"{h} {w} {c}\n{rows}\n")
    return path


def _cube(shape=(4, 3, 5)) -> np.ndarray:
    return (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) % 7) / 8


def test_a_toy_reader_registered_from_outside_is_read_everywhere(csvcube, tmp_path, capsys):
    from hsi.cli import main

    cube = _cube()
    path = write_csvcube(tmp_path / "toy.csvcube", cube)
    read = read_cube(path)
    np.testing.assert_array_equal(read.data, cube)
    assert read.meta["format"] == "csvcube" and read.meta["layout_reason"] == "fixed by the csvcube format"
    with open_cube(path) as lazy:
        np.testing.assert_array_equal(lazy.read_window(slice(1, 3), slice(0, 2)), cube[1:3, 0:2])
    assert [(a.name, a.shape, a.dtype) for a in list_arrays(path)] == [("toy.csvcube", (4, 3, 5), "float32")]
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "kind: cube (5 bands)" in out and "shape (H x W x C): 4 x 3 x 5" in out
    labels = write_csvcube(tmp_path / "gt.csvcube", np.array([[0, 1], [2, 2]], np.float32)[..., None])
    np.testing.assert_array_equal(read_labels(labels), [[0, 1], [2, 2]])
    with pytest.raises(CubeFormatError, match="csvcube file holds one image; key='x'"):
        read_cube(path, key="x")


def test_the_supported_sentence_and_the_lookup_follow_the_registry(csvcube, tmp_path):
    assert "toy .csvcube text cubes" in supported() and list_readers()[-1] == "csvcube"
    other = tmp_path / "cube.xyz"
    other.write_text("1 1 1\n0\n")
    with pytest.raises(CubeFormatError, match="toy .csvcube text cubes"):
        read_cube(other)
    unregister_reader("csvcube")
    path = write_csvcube(tmp_path / "toy.csvcube", _cube())
    with pytest.raises(CubeFormatError, match="unsupported file type '.csvcube'"):
        find_reader(path)
    assert "csvcube" not in supported()


def test_a_name_or_a_suffix_taken_is_refused(csvcube):
    class Again(CsvCubeReader):
        pass

    class SameSuffix(Reader):
        name = "other"
        suffixes = frozenset({".csvcube"})

    with pytest.raises(ValueError, match="already registered"):
        register_reader(Again)
    with pytest.raises(ValueError, match="already read by 'csvcube'"):
        register_reader(SameSuffix)
    with pytest.raises(TypeError, match="not a Reader subclass"):
        register_reader(object)  # type: ignore[arg-type]
    assert "other" not in list_readers()


def _imported_reader_modules() -> list[str]:
    """The reader modules ``hsi/io/readers/__init__.py`` imports to register them, in its order."""
    import ast

    import hsi.io.readers as package

    tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
    return [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module == "hsi.io.readers" for alias in node.names]


def test_the_built_in_readers_are_asked_in_a_fixed_order():
    """In the order the package imports their modules (one reader each), MATLAB first: a v7.3 .mat is HDF5 inside."""
    modules = _imported_reader_modules()
    owners = [type(get_reader(name)).__module__.rpartition(".")[2] for name in list_readers()]
    assert owners[:len(modules)] == modules and len(set(modules)) == len(modules) >= 6
    assert list_readers()[0] == "mat"
    assert supported().startswith(".mat (MATLAB v5 or v7.3), .h5/.hdf5/.he5 (HDF5), ENVI (.hdr header + binary")


def test_the_readers_import_no_torch_and_no_format_library():
    """The command line's early checks import the registry: it must stay light."""
    code = ("import sys, hsi.io.readers; "
            "print(sorted(m for m in ('torch', 'rasterio', 'spectral', 'scipy.io') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=CHILD_TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_identities_of_covers_every_file_a_path_stands_for(tmp_path):
    """ENVI: header and binary, whichever is named; GeoTIFF: its ``.aux.xml`` sidecar when there is one."""
    from spectral.io import envi

    from hsi._identity import file_identity
    from hsi.io.readers import files_of, identities_of

    envi.save_image(str(tmp_path / "s.hdr"), np.zeros((2, 3, 4), np.float32), ext=".img")
    header, binary = tmp_path / "s.hdr", tmp_path / "s.img"
    assert files_of(header) == [header, binary] and files_of(binary) == [binary, header]
    assert identities_of(header) == [file_identity(header), file_identity(binary)]
    tif = tmp_path / "m.tif"
    tif.write_bytes(b"II*\0")
    assert files_of(tif) == [tif]
    Path(f"{tif}.aux.xml").write_text("<PAMDataset/>")
    assert files_of(tif) == [tif, Path(f"{tif}.aux.xml")]
