"""Label-map helpers shared by the scene families: id remapping and abundance -> labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hsi.errors import CubeFormatError, OptionError, ShapeMismatchError

if TYPE_CHECKING:  # for annotations only: the scene registry imports this module without numpy
    import numpy as np


def remap_labels(
    labels: np.ndarray, label_values: Sequence[int] | None = None, source: str = "labels"
) -> tuple[np.ndarray, list[int]]:
    """Map original class ids to contiguous ``1..K`` (0 stays unlabeled).

    Parameters
    ----------
    labels : (H, W) integer map.
    label_values : the K original ids, in class order (label ``k`` <- ``label_values[k-1]``);
        None = the sorted non-zero ids present.
    source : named in error messages.

    Returns
    -------
    (remapped (H, W) int64, the list of original ids). An id in the map that is not in
    ``label_values`` raises :class:`CubeFormatError`.
    """
    import numpy as np

    labels = np.asarray(labels)
    present = np.unique(labels)
    present = present[present != 0]
    if label_values is None:
        values = [int(v) for v in present]
    else:
        values = [int(v) for v in label_values]
        unknown = sorted(set(int(v) for v in present) - set(values))
        if unknown:
            raise CubeFormatError(
                f"{source}: label id(s) {unknown} are not among the expected ids {values}"
            )
    if values == list(range(1, len(values) + 1)):
        return np.ascontiguousarray(labels, dtype=np.int64), values
    lut = np.zeros(max(values + [int(labels.max(initial=0))]) + 1, dtype=np.int64)
    lut[np.asarray(values, dtype=np.int64)] = np.arange(1, len(values) + 1)
    return lut[labels.astype(np.int64)], values


def abundance_maps(abundances: np.ndarray, shape: tuple[int, int], source: str = "A") -> np.ndarray:
    """Reshape an unmixing ground truth ``A`` (K, H*W), MATLAB column-major, to (H, W, K).

    Column ``p`` of ``A`` is the pixel at row ``p % H`` and column ``p // H``
    (``../shared/data/README.md``, "Pixel ordering"); a row-major reshape would give the
    transposed map.
    """
    import numpy as np

    a = np.asarray(abundances, dtype=np.float64)
    h, w = int(shape[0]), int(shape[1])
    if a.ndim != 2 or a.shape[1] != h * w:
        raise ShapeMismatchError(
            f"{source}: abundance matrix shape {a.shape} does not have H*W = {h}*{w} = {h * w} "
            f"columns (one per pixel)"
        )
    return np.ascontiguousarray(a.reshape(a.shape[0], w, h).transpose(2, 1, 0))


def abundance_labels(
    abundances: np.ndarray, shape: tuple[int, int], purity: float = 0.5, source: str = "A"
) -> np.ndarray:
    """Label map from an abundance ground truth: argmax endmember where it is pure enough.

    Parameters
    ----------
    abundances : (K, H*W) ``A`` in MATLAB column-major pixel order.
    shape : (H, W) of the image (``nRow``, ``nCol``).
    purity : a pixel gets label ``argmax + 1`` when its largest abundance is >= purity,
        else 0 (unlabeled). 0 labels every pixel.

    Returns
    -------
    (H, W) int64 in ``0..K``.
    """
    import numpy as np

    if not 0.0 <= purity <= 1.0:
        raise OptionError("purity", purity, "a number in [0, 1] (the least abundance of a labeled pixel's main endmember)")
    maps = abundance_maps(abundances, shape, source)
    top = maps.argmax(axis=-1)
    labels = (top + 1).astype(np.int64)
    labels[maps.max(axis=-1) < purity] = 0
    return labels
