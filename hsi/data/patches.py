"""Padding and vectorized window gathering.

Patches are ``P x P`` windows (``P`` odd) centred on pixels of a cube. The cube is
padded once by ``r = P // 2`` on both spatial axes, so the window centred on image pixel
``(y, x)`` starts at padded pixel ``(y, x)``. Windows are then cut for a whole batch of
centres with ONE gather over a strided window view (no per-item Python):

- numpy: ``sliding_window_view(padded, (P, P), axis=(0, 1))[ys, xs]``
- torch: the same view built with ``Tensor.as_strided``, then advanced indexing — the same
  code runs on CPU and on a GPU (the device-resident path).

Layout: the padded cube is stored **HWC** (``(H + 2r, W + 2r, C)``). A window is then
``P`` rows of ``P * C`` contiguous floats (8.8 kB for P = 11, C = 200), so the gather
reads long contiguous runs; in CHW layout every window is ``C * P`` runs of only ``P``
floats (44 bytes) and the same gather measured 5x slower.

Memory format: the output has shape ``(N, C, P, P)``; by default (``channels_last=True``)
its memory is ``(N, P, P, C)`` — PyTorch's ``channels_last`` format, which every conv
layer accepts — because that is what a gather from an HWC cube writes at memory speed.
A standard C-contiguous result costs a transposition (measured ~7x slower on one core
for 145 x 145 x 200, P = 11); ask for it with ``channels_last=False``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["PADDING_MODES", "pad_cube", "gather_windows", "extract_patches", "window_view"]

#: padding modes accepted by :func:`pad_cube` (``numpy.pad`` names; "zeros" = "constant").
PADDING_MODES = ("reflect", "symmetric", "edge", "constant", "zeros", "wrap")


def check_patch_size(patch_size: int) -> int:
    """Return ``patch_size`` as an int after checking it is a positive odd integer."""
    if isinstance(patch_size, bool) or int(patch_size) != patch_size or patch_size < 1 or patch_size % 2 == 0:
        raise ValueError(f"patch_size must be a positive odd integer (a window centred on a pixel), got {patch_size!r}")
    return int(patch_size)


def pad_cube(cube: np.ndarray, patch_size: int, mode: str = "reflect") -> np.ndarray:
    """Pad an ``(H, W, C)`` cube by ``patch_size // 2`` on both spatial axes.

    Parameters
    ----------
    cube : (H, W, C) array
    patch_size : odd window size ``P``
    mode : one of :data:`PADDING_MODES` ("reflect" mirrors without repeating the edge pixel;
        "zeros"/"constant" pads with 0).

    Returns
    -------
    (H + 2r, W + 2r, C) C-contiguous array of the same dtype, ``r = patch_size // 2``.
    """
    patch_size = check_patch_size(patch_size)
    if cube.ndim != 3:
        raise ValueError(f"cube must be (H, W, C), got shape {cube.shape}")
    if mode not in PADDING_MODES:
        raise ValueError(f"padding must be one of {PADDING_MODES}, got {mode!r}")
    r = patch_size // 2
    height, width = cube.shape[:2]
    if mode == "reflect" and r >= min(height, width):
        raise ValueError(
            f"padding='reflect' needs patch_size // 2 = {r} < min(H, W) = {min(height, width)}; "
            "use a smaller patch_size or padding='symmetric'/'zeros'"
        )
    np_mode = "constant" if mode == "zeros" else mode
    if r == 0:
        return np.ascontiguousarray(cube)
    return np.ascontiguousarray(np.pad(cube, ((r, r), (r, r), (0, 0)), mode=np_mode))


def window_view(padded: Any, patch_size: int, channels_last: bool = False) -> Any:
    """A zero-copy view of all windows of a padded HWC cube.

    Shape ``(H, W, C, P, P)`` (``view[y, x]`` is the ``(C, P, P)`` window centred on image
    pixel ``(y, x)``), or ``(H, W, P, P, C)`` with ``channels_last=True``. Works for numpy
    arrays (including read-only memory maps) and torch tensors on any device.
    """
    p = check_patch_size(patch_size)
    if padded.ndim != 3:
        raise ValueError(f"padded cube must be (H + 2r, W + 2r, C), got shape {tuple(padded.shape)}")
    if isinstance(padded, torch.Tensor):
        hp, wp, c = padded.shape
        s0, s1, s2 = padded.stride()
        view = padded.as_strided((hp - p + 1, wp - p + 1, p, p, c), (s0, s1, s0, s1, s2), padded.storage_offset())
        return view if channels_last else view.permute(0, 1, 4, 2, 3)
    view = np.lib.stride_tricks.sliding_window_view(padded, (p, p), axis=(0, 1))  # (H, W, C, P, P)
    return view.transpose(0, 1, 3, 4, 2) if channels_last else view


def gather_rows(padded: np.ndarray, rows: np.ndarray, cols: np.ndarray, patch_size: int) -> np.ndarray:
    """Fresh C-contiguous ``(N, P, P, C)`` windows of a padded HWC numpy cube at ``(rows, cols)``.

    In an HWC cube each window row (``P`` pixels x ``C`` bands) is one contiguous run, so
    indexing a view whose last axis is that run copies ``P`` blocks of ``P * C`` values per
    window instead of ``P * P`` blocks of ``C`` (about 15 % faster at P=11, C=200).
    """
    p = check_patch_size(patch_size)
    hp, wp, c = padded.shape
    s0, s1, s2 = padded.strides
    if s2 == padded.itemsize and s1 == c * s2:
        runs = np.lib.stride_tricks.as_strided(padded, (hp - p + 1, wp - p + 1, p, p * c), (s0, s1, s0, s2), writeable=False)
        return runs[rows, cols].reshape(-1, p, p, c)
    return np.ascontiguousarray(window_view(padded, p, channels_last=True)[rows, cols])


def gather_windows(padded: Any, coords: Any, patch_size: int, channels_last: bool = True) -> Any:
    """Cut the ``(C, P, P)`` windows centred on ``coords`` in one vectorized gather.

    Parameters
    ----------
    padded : (H + 2r, W + 2r, C) numpy array / memory map, or torch tensor on any device
        (as made by :func:`pad_cube`).
    coords : (N, 2) integer ``(row, col)`` centres in *unpadded* image coordinates; a numpy
        array for a numpy cube, a tensor (same device) or array for a torch cube.
    patch_size : odd ``P``.
    channels_last : memory format of the result (see the module docstring).

    Returns
    -------
    (N, C, P, P) array (numpy in, numpy out; torch in, torch out), fresh memory laid out
    ``(N, P, P, C)`` when ``channels_last`` else C-contiguous.
    """
    if isinstance(padded, torch.Tensor):
        view = window_view(padded, patch_size, channels_last=True)
        coords_t = torch.as_tensor(coords, device=padded.device).long()
        if coords_t.ndim != 2 or coords_t.shape[1] != 2:
            raise ValueError(f"coords must be (N, 2), got shape {tuple(coords_t.shape)}")
        out = view[coords_t[:, 0], coords_t[:, 1]].contiguous().permute(0, 3, 1, 2)
        return out if channels_last else out.contiguous()
    coords = np.asarray(coords)
    if coords.ndim != 2 or coords.shape[1] != 2:
        raise ValueError(f"coords must be (N, 2), got shape {coords.shape}")
    out = gather_rows(padded, coords[:, 0], coords[:, 1], patch_size).transpose(0, 3, 1, 2)
    return out if channels_last else np.ascontiguousarray(out)


def extract_patches(
    cube: np.ndarray, coords: np.ndarray, patch_size: int, padding: str = "reflect", channels_last: bool = True
) -> np.ndarray:
    """Pad an unpadded ``(H, W, C)`` cube and gather windows: ``(N, C, P, P)`` float array."""
    return gather_windows(pad_cube(cube, patch_size, padding), coords, patch_size, channels_last)
