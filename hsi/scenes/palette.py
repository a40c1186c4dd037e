"""Fixed class colours for label maps.

Row 0 (unlabeled) is black. Classes 1..20 take matplotlib's ``tab20`` colours, the ten
strong ones (``tab10``) first, then their ten light companions, so neighbouring class ids
get clearly different colours. Beyond 20 classes, hues follow the golden-ratio sequence
(deterministic, saturated, never black).

:func:`scene_palette` is what scenes use: class names that name a material get the colour
people expect (water blue, trees and grass green, soil brown, roads and roofs grey...),
several classes of one material get distinct shades of it, and the other classes take the
colours above, skipping any too close to a material colour, to black or to the magenta of
no-data pixels.
"""

from __future__ import annotations

import colorsys
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from hsi.errors import OptionError

if TYPE_CHECKING:  # for annotations only: the scene registry imports this module without numpy
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
    import numpy as np

    if num_classes < 0:
        raise OptionError("num_classes", num_classes, "an integer >= 0")
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


#: Material families: the words (lower case, singular) that name them and their shades, in order of use.
MATERIALS: dict[str, tuple[tuple[str, ...], tuple[tuple[int, int, int], ...]]] = {
    "water": (("water", "river", "lake", "sea", "ocean", "pond", "reservoir"),
              ((30, 100, 200), (100, 165, 235), (20, 50, 135), (150, 205, 245))),
    "trees": (("tree", "wood", "woods", "forest", "woodland", "pine", "oak"),
              ((30, 110, 45), (15, 65, 25), (75, 150, 70), (95, 125, 45))),
    "vegetation": (("vegetation", "grass", "grassland", "meadow", "pasture", "lawn", "crop", "weed", "shrub",
                    "shrubland", "scrub"),
                   ((125, 195, 70), (175, 225, 115), (95, 170, 35), (150, 205, 165), (200, 235, 70),
                    (70, 200, 125))),
    "soil": (("soil", "dirt", "bare", "earth", "mud", "fallow", "clay"),
             ((140, 90, 50), (190, 130, 75), (100, 60, 30), (165, 105, 95), (215, 160, 110))),
    "rock": (("rock", "stone", "gravel", "cliff"),
             ((155, 128, 100), (120, 100, 80), (185, 160, 135))),
    "urban": (("road", "asphalt", "roof", "metal", "building", "urban", "concrete", "steel", "built", "street",
               "pavement", "parking", "bitumen", "tar"),
              ((128, 128, 128), (175, 175, 180), (85, 85, 90), (215, 215, 215), (105, 115, 140))),
    "shadow": (("shadow", "shade"), ((45, 45, 65), (75, 60, 95))),
    "sand": (("sand", "sandy", "beach", "dune", "straw", "hay", "stubble"),
             ((215, 190, 135), (240, 220, 170), (195, 165, 95))),
    "brick": (("brick", "tile"), ((180, 75, 55), (215, 120, 90), (135, 45, 40))),
    "snow": (("snow", "ice"), ((235, 240, 250),)),
}

#: RGB of no-data pixels in class maps (``hsi.viz.NODATA_COLOR``); no class gets a colour near it.
NODATA_RGB = (255, 0, 255)

#: Least RGB distance of an other class's colour from a material colour, from another class, and of
#: any class from black (row 0) and from :data:`NODATA_RGB`.
MATERIAL_GAP, CLASS_GAP, RESERVED_GAP = 60.0, 25.0, 50.0

_KEYWORDS = {word: family for family, (words, _) in MATERIALS.items() for word in words}


def material_of(name: str) -> str | None:
    """The material family a class name names (first matching word, any case), or None.

    ``"Bare Soil"`` -> ``"soil"``, ``"Grass-trees"`` -> ``"vegetation"``, ``"Trees"`` ->
    ``"trees"``, ``"Alfalfa"`` -> None. Words are runs of letters; a plural ``-s``/``-es``
    is dropped when the singular is a keyword.
    """
    for word in re.findall(r"[a-z]+", name.lower()):
        for form in (word, word[:-1] if word.endswith("s") else "", word[:-2] if word.endswith("es") else ""):
            if form in _KEYWORDS:
                return _KEYWORDS[form]
    return None


def _distinct_colours() -> Iterator[tuple[int, int, int]]:
    """The :func:`make_palette` sequence, without end: tab20 reordered, then golden-ratio hues."""
    for code in _TAB20_REORDERED:
        yield _hex_to_rgb(code)
    j = 0
    while True:
        r, g, b = colorsys.hsv_to_rgb((0.11 + j * 0.618033988749895) % 1.0, (0.95, 0.6, 0.8)[j % 3],
                                      (0.85, 0.95, 0.7)[(j // 3) % 3])
        yield round(r * 255), round(g * 255), round(b * 255)
        j += 1


def _clear(rgb: Sequence[int], taken: Iterable[tuple[tuple[int, int, int], float]]) -> bool:
    """Whether ``rgb`` is at least each taken colour's gap away from it."""
    import numpy as np

    c = np.asarray(rgb, dtype=np.float64)
    return all(np.linalg.norm(c - np.asarray(t, dtype=np.float64)) >= gap for t, gap in taken)


_RESERVED = (((0, 0, 0), RESERVED_GAP), (NODATA_RGB, RESERVED_GAP))


def _material_rows(class_names: Sequence[str]) -> list[tuple[int, int, int] | None]:
    """Each class's material shade (its family's next shade clear of those used), or None."""
    rows: list[tuple[int, int, int] | None] = []
    used: dict[str, int] = {}
    for name in class_names:
        family = material_of(str(name))
        shades = MATERIALS[family][1] if family else ()
        taken = [*_RESERVED, *((row, CLASS_GAP) for row in rows if row is not None)]
        row = None
        while family and row is None and used.get(family, 0) < len(shades):
            shade = shades[used.get(family, 0)]
            used[family] = used.get(family, 0) + 1
            row = shade if _clear(shade, taken) else None
        rows.append(row)
    return rows


def _fill_others(rows: list[tuple[int, int, int] | None]) -> list[tuple[int, int, int]]:
    """Give the classes without a colour the next :func:`_distinct_colours` clear of all others."""
    taken = [*_RESERVED, *((row, MATERIAL_GAP) for row in rows if row is not None)]
    others = _distinct_colours()
    out, misses = [], 0
    for row in rows:
        while row is None:
            candidate = next(others)
            # past ~100 classes the gaps cannot all hold: then any colour not yet used will do
            gaps = taken if misses < 2000 else [(t, gap if gap == RESERVED_GAP else 1.0) for t, gap in taken]
            if _clear(candidate, gaps):
                row = candidate
                taken.append((candidate, CLASS_GAP))
            else:
                misses += 1
        out.append(row)
    return out


def scene_palette(class_names: Sequence[str]) -> np.ndarray:
    """Colours for a scene's classes ``1..K``, chosen from their names.

    Material names get their family's shades (:data:`MATERIALS`, matched by
    :func:`material_of`), one shade per class in class order; the other classes take the
    :func:`make_palette` sequence, skipping colours within :data:`MATERIAL_GAP` of a
    material colour used here, within :data:`CLASS_GAP` of another class, or within
    :data:`RESERVED_GAP` of black and magenta. Names that name no material (``class_3``)
    therefore get exactly :func:`make_palette`'s first 20 colours.

    Parameters
    ----------
    class_names : sequence of str
        ``K`` names of classes ``1..K``.

    Returns
    -------
    np.ndarray
        ``(K + 1, 3)`` uint8; row 0 is black (unlabeled).
    """
    import numpy as np

    rows = _fill_others(_material_rows(class_names))
    return np.asarray([(0, 0, 0), *rows], dtype=np.uint8).reshape(len(rows) + 1, 3)
