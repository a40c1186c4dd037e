"""Fixed class colours for label maps.

Row 0 (unlabeled) is black. Classes 1..20 take matplotlib's ``tab20`` colours, the ten
strong ones (``tab10``) first, then their ten light companions, so neighbouring class ids
get clearly different colours. Beyond 20 classes, hues follow the golden-ratio sequence
(deterministic, saturated, never black).
"""

from __future__ import annotations

import colorsys

import numpy as np

# matplotlib tab20, reordered: tab10 (dark) colours, then the light ones.
_TAB20_REORDERED = (
    "1f77b4", "ff7f0e", "2ca02c", "d62728", "9467bd",
    "8c564b", "e377c2", "7f7f7f", "bcbd22", "17becf",
    "aec7e8", "ffbb78", "98df8a", "ff9896", "c5b0d5",
    "c49c94", "f7b6d2", "c7c7c7", "dbdb8d", "9edae5",
)


def _hex_to_rgb(code: str) -> tuple[int, int, int]:
    return int(code[0:2], 16), int(code[2:4], 16), int(code[4:6], 16)


def make_palette(num_classes: int) -> np.ndarray:
    """Colours for a label map with classes ``1..num_classes``.

    Returns
    -------
    np.ndarray
        ``(num_classes + 1, 3)`` uint8; row 0 is black (unlabeled).
    """
    if num_classes < 0:
        raise ValueError(f"num_classes must be >= 0; found {num_classes}")
    rows = [(0, 0, 0)]
    for k in range(num_classes):
        if k < len(_TAB20_REORDERED):
            rows.append(_hex_to_rgb(_TAB20_REORDERED[k]))
        else:
            j = k - len(_TAB20_REORDERED)
            hue = (0.11 + j * 0.618033988749895) % 1.0
            sat = (0.95, 0.6, 0.8)[j % 3]
            val = (0.85, 0.95, 0.7)[(j // 3) % 3]
            r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
            rows.append((round(r * 255), round(g * 255), round(b * 255)))
    return np.asarray(rows, dtype=np.uint8)
