"""The roles and checks of ``HSIDataModule``'s arguments, and the checks that span several of them.

Each argument's :class:`hsi._roles.Role` (``SOURCE``, ``recipe(...)``, ``loader(...)``) sits in
the DataModule's signature; the checks below are the ones those roles name, plus
:func:`check_combinations` for what only several arguments together decide (a cube needs
labels, a fixed split a test map, the fractions depend on the split). Each bad value raises
:class:`hsi.errors.OptionError` naming the argument, the value and what is allowed, so a
script, LightningCLI and ``hsi train`` all report it the same way and before any file is
opened. What needs the data (a PCA larger than the band count, a patch larger than the
scene) is checked when the scene is loaded.
"""

from __future__ import annotations

import math
from typing import Any

from hsi._checks import integer, is_int, not_an_option, number, odd_integer
from hsi._roles import Role
from hsi.errors import OptionError
from hsi.preprocess.pca import check_components

__all__ = ["check_combinations", "check_pca", "integral_pca", "check_remove_bands", "loader", "recipe", "source"]


def recipe(check: Any = None, *, resume: str = "fixed") -> Role:
    """The role of an argument that changes the cached arrays (it is part of the cache key)."""
    return Role("recipe", resume, check)  # type: ignore[arg-type]


def loader(check: Any = None, *, resume: str = "free") -> Role:
    """The role of an argument that only changes how batches are served (a resumed run may change it)."""
    return Role("loader", resume, check)  # type: ignore[arg-type]


def source(flag: str | None = None) -> Role:
    """The role of an argument that names the scene (part of the cache's source identity, kept on resume).

    ``flag`` is its command-line name where the Python one reads badly (``cube_path`` is ``--cube``).
    """
    return Role("source", "fixed", None, flag)


#: the checks the signature's roles name
PATCH_SIZE = odd_integer(1, "the patch is centred on its pixel")
AT_LEAST_ONE = integer(1)
AT_LEAST_ZERO = integer(0)
BUFFER = integer(0, optional=True, none_means=" (patch_size // 2)")
SPLIT_SEED = integer(0, optional=True, none_means=" (the seed)")
FOLDS = integer(2, optional=True, none_means=" (no cross-validation folds)")
FOLD = integer(0, optional=True, none_means=" (no cross-validation folds)")
SPECTRAL_SCALE = number(0.0, 1.0, optional=True, none_means=" (0 for one scene, more for several)")
SPECTRAL_NOISE = number(0.0, optional=True, none_means=" (0 for one scene, more for several)")


def check_remove_bands(name: str, value: Any) -> None:
    """A list of band indices >= 0, or None."""
    if value is not None and not all(is_int(b) and b >= 0 for b in value):
        raise OptionError(name, value, "a list of band indices >= 0")


def integral_pca(pca: Any) -> Any:
    """``4.0`` -> ``4``: a whole float >= 1 is a number of components (LightningCLI hands ``--data.pca 4`` over as 4.0)."""
    if isinstance(pca, float) and pca >= 1 and pca.is_integer():
        return int(pca)
    return pca


def check_pca(name: str, pca: Any) -> None:
    """The PCA rule of :func:`hsi.preprocess.pca.check_components`, or None (no PCA)."""
    if pca is not None:
        try:
            check_components(name, pca)
        except OptionError as err:
            raise OptionError(name, pca, f"{err.allowed}, or none") from None


def _check_fractions(fractions: Any, split: str) -> None:
    """Three shares summing to 1; a fixed split takes its test pixels from the test map, so its test share may be 0."""
    needs_test = split != "fixed"
    allowed = ("three fractions train val test, each >= 0, train" + (" and test" if needs_test else "")
               + " > 0, summing to 1")
    try:
        values = [float(f) for f in fractions]
    except (TypeError, ValueError):
        raise OptionError("fractions", fractions, allowed) from None
    if (len(values) != 3 or min(values) < 0 or values[0] <= 0 or (needs_test and values[2] <= 0)
            or abs(sum(values) - 1.0) > 1e-6):
        raise OptionError("fractions", tuple(fractions), allowed)


def _check_source(h: dict[str, Any]) -> None:
    if h["cube_path"] is not None and h["labels_path"] is None:
        raise OptionError("labels_path", None, f"a label map file for cube_path={h['cube_path']!r}")
    if h["cube_path"] is None and h["scene"] is None:
        raise OptionError("scene", None, "a registry scene name (e.g. synthetic), or cube_path and labels_path")
    if h["split"] == "fixed" and h["test_labels_path"] is None:
        raise OptionError("test_labels_path", None, "a test ground-truth map file (split=fixed needs one)")
    if h["scene_options"] is not None and not isinstance(h["scene_options"], dict):
        raise OptionError("scene_options", h["scene_options"], "a mapping of option names to values")
    if h["cube_path"] is None:
        _check_scene(h["scene"], h["scene_options"] or {})
    for name in ("units", "scale"):  # a registry scene declares its own; a collection entry says it in the entry
        if h.get(name) is not None and (h["cube_path"] is None or h.get("scenes") is not None):
            raise OptionError(name, h[name], "none here: it declares what a cube file (cube_path=) holds; registry "
                              "scenes declare their own units, and collection entries take units: and scale:")
    scale = h.get("scale")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))
                              or not math.isfinite(scale) or scale <= 0):
        raise OptionError("scale", h["scale"], "a number > 0 the values are divided by (e.g. 10000), or none")


def _check_scene(scene: str, options: dict[str, Any]) -> None:
    """A registered scene name, and options its loader takes (a typo names the closest one)."""
    from hsi.scenes import list_scenes
    from hsi.scenes.registry import normalize_name

    if normalize_name(scene) not in list_scenes():
        raise OptionError("scene", scene, "one of " + ", ".join(list_scenes()) + " (`hsi scenes` lists them)")
    accepted = _scene_options(normalize_name(scene))
    unknown = [k for k in options if accepted is not None and k not in accepted]
    if unknown:
        raise OptionError("scene_options", unknown[0], not_an_option(unknown[0], accepted, f"scene {scene}"))


def _scene_options(name: str) -> list[str] | None:
    """The options a registered scene takes: its generator's or loader's keywords (None: unknown, any)."""
    import inspect

    from hsi.scenes.registry import get_scene_spec

    if name == "synthetic":
        from hsi.scenes.synthetic import make_synthetic_scene

        return list(inspect.signature(make_synthetic_scene).parameters)
    spec = get_scene_spec(name)
    if spec.family == "custom":  # a user's loader may pass **options on: not ours to judge
        return None
    params = inspect.signature(spec.loader).parameters.values()
    return [p.name for p in params if p.kind is p.KEYWORD_ONLY]


def _check_folds(h: dict[str, Any]) -> None:
    """``folds`` and ``fold`` together, on a block split, with ``0 <= fold < folds``."""
    folds, fold = h.get("folds"), h.get("fold")
    if folds is None and fold is None:
        return
    if h["split"] != "block":
        raise OptionError("folds" if folds is not None else "fold", folds if folds is not None else fold,
                          "only with split=block (cross-validation folds are made of blocks)")
    if folds is None:
        raise OptionError("folds", None, f"a number of folds >= 2 for fold={fold}")
    if fold is None:
        raise OptionError("fold", None, f"the fold to test, from 0 to {folds - 1} (folds={folds})")
    if fold >= folds:
        raise OptionError("fold", fold, f"an integer from 0 to {folds - 1} (folds={folds})")


def check_combinations(h: dict[str, Any]) -> None:
    """Raise :class:`OptionError` for the first combination of ``HSIDataModule`` arguments that is not allowed."""
    _check_fractions(h["fractions"], h["split"])
    _check_folds(h)
    _check_source(h)
