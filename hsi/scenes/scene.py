"""The :class:`Scene` container: a cube, its label map, class names and colours."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hsi.errors import CubeFormatError, DataQualityWarning, ShapeMismatchError

if TYPE_CHECKING:  # imported for annotations only, so hsi.scenes imports without hsi.io or numpy
    import numpy as np

    from hsi.io import Cube


@dataclass
class Scene:
    """A labeled hyperspectral scene.

    Attributes
    ----------
    name : str
        Registry name (``"indian_pines"``, ``"samson"``, ``"synthetic"``...).
    cube : hsi.io.Cube
        ``cube.data`` is ``(H, W, C)`` float32; ``cube.wavelengths`` ``(C,)`` nm or ``None``.
    labels : np.ndarray
        ``(H, W)`` int64. 0 is unlabeled; classes are the contiguous ids ``1..K``.
    class_names : list[str]
        Length ``K``; ``class_names[k - 1]`` names label ``k``.
    palette : np.ndarray
        ``(K + 1, 3)`` uint8 RGB; row 0 (unlabeled) is black.
    meta : dict
        Provenance: ``'label_values'`` (the original ids of labels ``1..K`` in the source
        file), file paths, ``'purity'`` for unmixing scenes, generator parameters...
    """

    name: str
    cube: Cube
    labels: np.ndarray
    class_names: list[str]
    palette: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        import numpy as np

        labels = np.ascontiguousarray(self.labels, dtype=np.int64)
        if labels.ndim != 2:
            raise ShapeMismatchError(
                f"scene {self.name!r}: labels must be 2-D (H, W); found shape {labels.shape}"
            )
        cube_hw = tuple(self.cube.data.shape[:2])
        if labels.shape != cube_hw:
            raise ShapeMismatchError(
                f"scene {self.name!r}: labels shape {labels.shape} differs from the cube's "
                f"H x W {cube_hw}"
            )
        k = len(self.class_names)
        if labels.size and (labels.min() < 0 or labels.max() > k):
            raise CubeFormatError(
                f"scene {self.name!r}: labels must lie in 0..{k} (K = len(class_names)); "
                f"found {labels.min()}..{labels.max()}"
            )
        palette = np.asarray(self.palette, dtype=np.uint8)
        if palette.shape != (k + 1, 3):
            raise ShapeMismatchError(
                f"scene {self.name!r}: palette must be (K + 1, 3) = ({k + 1}, 3); found {palette.shape}"
            )
        self.labels = labels
        self.palette = palette
        self.class_names = list(self.class_names)

    @property
    def num_classes(self) -> int:
        """Number of classes ``K`` (label 0, unlabeled, is not counted)."""
        return len(self.class_names)

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(H, W, C)`` of the cube."""
        return tuple(self.cube.data.shape)  # type: ignore[return-value]

    def __repr__(self) -> str:
        import numpy as np

        h, w, c = self.shape
        n_lab = int(np.count_nonzero(self.labels))
        return (
            f"Scene(name={self.name!r}, shape=({h}, {w}, {c}), num_classes={self.num_classes}, "
            f"labeled={n_lab})"
        )


def with_declared_units(cube: Cube, declared: dict[str, Any] | None, scene: str) -> Cube:
    """``cube`` with a registry scene's declared units in ``meta["units"]`` (source "registry").

    A declaration describes the values and never divides them: ``scale`` stays the divisor
    applied on reading. When the declared scale is not that divisor, the file is not the one
    the registry describes (a header with another scale factor): a
    :class:`hsi.errors.DataQualityWarning` says so and the units found on reading stand.
    ``declared=None`` leaves the cube as it is.
    """
    from hsi.io.units import apply_declaration, check_units

    if declared is None:
        return cube
    declared = check_units(declared, f"scene {scene!r} units")
    found = cube.meta.get("units") or {}
    if declared["scale"] != found.get("scale"):
        warnings.warn(
            f"scene {scene!r}: {cube.meta.get('source')} was read with scale {found.get('scale')!r} but the "
            f"registry declares scale {declared['scale']!r} for it; keeping the units found on reading "
            f"({found.get('kind')}, from the {found.get('source')})", DataQualityWarning, stacklevel=3,
        )
        return cube
    cube.meta = dict(cube.meta, units=apply_declaration(found, declared))
    return cube
