from __future__ import annotations

import numpy as np
import pytest
import torch

from hsi.data.patches import extract_patches, gather_windows, pad_cube


def _by_hand(cube, y, x, p, mode="reflect"):
    r = p // 2
    padded = np.pad(cube, ((r, r), (r, r), (0, 0)), mode=mode)
    return padded[y : y + p, x : x + p].transpose(2, 0, 1)


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "edge", "constant"])
def test_gather_matches_hand_cut_windows_including_borders(mode):
    rng = np.random.default_rng(0)
    cube = rng.random((9, 7, 4), dtype=np.float32)
    coords = np.array([[y, x] for y in range(9) for x in range(7)])  # every pixel, all borders
    out = extract_patches(cube, coords, 5, mode)
    assert out.shape == (63, 4, 5, 5) and out.dtype == np.float32
    assert out.transpose(0, 2, 3, 1).flags["C_CONTIGUOUS"]  # channels-last memory by default
    assert extract_patches(cube, coords, 5, mode, channels_last=False).flags["C_CONTIGUOUS"]
    for i, (y, x) in enumerate(coords):
        np.testing.assert_array_equal(out[i], _by_hand(cube, y, x, 5, mode))
    # the centre of each window is the pixel itself
    np.testing.assert_array_equal(out[:, :, 2, 2], cube[coords[:, 0], coords[:, 1]])


def test_torch_gather_equals_numpy_gather():
    rng = np.random.default_rng(1)
    padded = pad_cube(rng.random((12, 10, 6), dtype=np.float32), 7)
    coords = rng.integers(0, [12, 10], size=(50, 2))
    ref = gather_windows(padded, coords, 7)
    got = gather_windows(torch.from_numpy(padded), torch.from_numpy(coords), 7)
    assert isinstance(got, torch.Tensor) and got.is_contiguous(memory_format=torch.channels_last)
    np.testing.assert_array_equal(got.numpy(), ref)


def test_gather_works_on_read_only_memmap(tmp_path):
    rng = np.random.default_rng(2)
    padded = pad_cube(rng.random((8, 8, 3), dtype=np.float32), 3)
    np.save(tmp_path / "c.npy", padded)
    mm = np.load(tmp_path / "c.npy", mmap_mode="r")
    coords = np.array([[0, 0], [7, 7], [3, 4]])
    np.testing.assert_array_equal(gather_windows(mm, coords, 3), gather_windows(padded, coords, 3))


def test_bad_arguments_raise_clear_errors():
    cube = np.zeros((4, 4, 2), np.float32)
    with pytest.raises(ValueError, match="odd"):
        pad_cube(cube, 4)
    with pytest.raises(ValueError, match="reflect"):
        pad_cube(cube, 9, "reflect")
    with pytest.raises(ValueError, match="padding"):
        pad_cube(cube, 3, "mirror")
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        gather_windows(pad_cube(cube, 3), np.zeros((3,), int), 3)


def test_gather_rows_matches_hand_cut_windows_for_contiguous_and_strided_cubes(tmp_path):
    from hsi.data.patches import gather_rows

    rng = np.random.default_rng(7)
    padded = rng.random((19, 23, 6), dtype=np.float32)
    p = 5
    rows = rng.integers(0, 19 - p + 1, 40)
    cols = rng.integers(0, 23 - p + 1, 40)
    np.save(tmp_path / "cube.npy", padded)
    mapped = np.load(tmp_path / "cube.npy", mmap_mode="r")
    strided = padded[:, :, ::2]  # bands not contiguous: the general path
    for cube in (padded, mapped, strided):
        out = gather_rows(cube, rows, cols, p)
        assert out.shape == (40, p, p, cube.shape[2]) and out.flags.c_contiguous
        for i, (r, c) in enumerate(zip(rows, cols)):
            np.testing.assert_array_equal(out[i], cube[r : r + p, c : c + p])
