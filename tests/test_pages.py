"""Reading a memory-mapped map through (writers, legend counts, previews) keeps only a strip resident."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from hsi._pages import release_mapped

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RssFile of /proc/self/status")

ROWS, COLS = 3072, 8192  # 24 MB as uint8, 96 MB as float32


def _rss_file_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssFile:"):
            return int(line.split()[1]) / 1024.0
    pytest.skip("no RssFile in /proc/self/status")


def _mapped(folder: Path, dtype) -> np.memmap:
    """A map on disk, opened as a run opens its maps, with none of its pages resident."""
    path = folder / f"map_{np.dtype(dtype).name}.npy"
    if not path.exists():
        out = np.lib.format.open_memmap(path, "w+", dtype, (ROWS, COLS))
        for start in range(0, ROWS, 256):
            out[start : start + 256] = (np.arange(256 * COLS).reshape(256, COLS) % 7 + 1).astype(dtype)
            release_mapped(out, (start, start + 256))
        out.flush()
        del out
    array = np.load(path, mmap_mode="r")
    release_mapped(array)
    return array


def _envi(array, folder):
    from hsi.io.writers.envi import write_classification

    write_classification(folder / "c", array, [f"c{i}" for i in range(8)], np.zeros((8, 3), np.uint8))


def _label_tif(array, folder):
    from hsi.io.writers.geotiff import write_label_cog

    write_label_cog(folder / "l.tif", array, [f"c{i}" for i in range(8)], np.zeros((8, 3), np.uint8))


def _float_tif(array, folder):
    from hsi.io.writers.geotiff import write_float_tif

    write_float_tif(folder / "f.tif", array)


def _counts(array, folder):
    from hsi.viz import _class_counts

    assert _class_counts(array, 8)[1:].sum() == array.size


def _mean(array, folder):
    from hsi.viz import _nan_mean

    assert _nan_mean(array) > 1


def _preview(array, folder):
    from hsi.viz import _decimate, preview_step

    step = preview_step(array.shape)
    np.testing.assert_array_equal(_decimate(array)[:3, :3], np.asarray(array[: 3 * step : step, : 3 * step : step]))


@pytest.mark.parametrize(("read", "dtype"), [(_envi, np.uint8), (_label_tif, np.uint8), (_float_tif, np.float32),
                                             (_counts, np.uint8), (_mean, np.float32), (_preview, np.float32)])
def test_a_memory_mapped_map_read_through_stays_out_of_the_resident_set(read, dtype, tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    array = _mapped(folder, dtype)
    read(array[:64, :64].copy(), folder)  # libraries and their files loaded before measuring
    before = _rss_file_mb()
    read(array, folder)
    grown = _rss_file_mb() - before
    assert grown < array.nbytes / 4 / 2**20, f"{read.__name__}: {grown:.0f} MB of the {array.nbytes / 2**20:.0f} MB map stayed resident"


def test_rows_released_are_read_back_unchanged(tmp_path):
    array = np.lib.format.open_memmap(tmp_path / "m.npy", "w+", np.float32, (100, 1000))
    array[:] = np.arange(100 * 1000, dtype=np.float32).reshape(100, 1000)
    release_mapped(array, (10, 60))  # written pages: they reach the file, not lost
    release_mapped(array[5:], (0, 10))  # a view lets go of every page
    np.testing.assert_array_equal(array, np.arange(100 * 1000, dtype=np.float32).reshape(100, 1000))
    release_mapped(np.zeros(3), (0, 1))  # not a memory map: nothing to do


@pytest.mark.parametrize(("height", "row_size", "budget", "multiple"),
                         [(100, 10, 95, 1), (100, 10, 95, 4), (7, 1000, 10, 3), (0, 5, 50, 1), (64, 8, 512, 16)])
def test_row_strips_cover_every_row_once_in_whole_multiples_within_the_budget(height, row_size, budget, multiple):
    from hsi._pages import row_strips

    strips = list(row_strips(height, row_size, budget, multiple))
    covered = [r for s in strips for r in range(s.start, s.stop)]
    assert covered == list(range(height))  # in order, each row once
    for s in strips[:-1]:
        n = s.stop - s.start
        assert n % multiple == 0
        assert n * row_size <= budget or n == multiple  # over the budget only when one step is already over it
