"""Checks of ``HSIDataModule``'s arguments, made in its constructor before anything is read.

Each bad value raises :class:`hsi.errors.OptionError` naming the argument, the value and
what is allowed, so a script, LightningCLI and ``hsi train`` all report it the same way
and before any file is opened. What needs the data (a PCA larger than the band count, a
patch larger than the scene) is checked when the scene is loaded.
"""

from __future__ import annotations

import typing
from typing import Any

from hsi._checks import check_int, is_int
from hsi.errors import OptionError

__all__ = ["check_arguments"]


def _check_choice(name: str, value: Any, annotation: Any) -> None:
    members = typing.get_args(annotation) if typing.get_origin(annotation) is not typing.Literal else (annotation,)
    allowed = [a for arg in members if typing.get_origin(arg) is typing.Literal for a in typing.get_args(arg)]
    optional = type(None) in members
    if value is None and optional:
        return
    if value not in allowed:
        words = ", ".join(map(str, allowed)) + (" or None" if optional else "")
        raise OptionError(name, value, f"one of {words}")


def _check_counts(h: dict[str, Any]) -> None:
    p = h["patch_size"]
    if not is_int(p) or p < 1 or p % 2 == 0:
        raise OptionError("patch_size", p, "an odd integer >= 1 (the patch is centred on its pixel)")
    for name, low in (("batch_size", 1), ("block_size", 1), ("num_workers", 0), ("seed", 0)):
        check_int(name, h[name], low)
    for name in ("buffer", "split_seed"):
        if h[name] is not None and (not is_int(h[name]) or h[name] < 0):
            raise OptionError(name, h[name], "an integer >= 0, or none")
    if h["remove_bands"] is not None and not all(is_int(b) and b >= 0 for b in h["remove_bands"]):
        raise OptionError("remove_bands", h["remove_bands"], "a list of band indices >= 0")


def _check_pca(pca: Any) -> None:
    if pca is None:
        return
    if is_int(pca):
        if pca < 1:
            raise OptionError("pca", pca, "a number of components >= 1, a variance fraction in (0, 1), or none")
    elif isinstance(pca, float):
        if not 0.0 < pca < 1.0:
            raise OptionError("pca", pca, "a number of components >= 1 (an integer), a variance fraction in (0, 1), or none")
    else:
        raise OptionError("pca", pca, "a number of components >= 1, a variance fraction in (0, 1), or none")


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


def _check_scene(scene: str, options: dict[str, Any]) -> None:
    """A registered scene name; for the synthetic scene, options its generator takes."""
    import inspect

    from hsi.scenes import list_scenes
    from hsi.scenes.registry import normalize_name

    if normalize_name(scene) not in list_scenes():
        raise OptionError("scene", scene, "one of " + ", ".join(list_scenes()) + " (`hsi scenes` lists them)")
    if normalize_name(scene) == "synthetic":
        from hsi.scenes.synthetic import make_synthetic_scene

        accepted = [n for n in inspect.signature(make_synthetic_scene).parameters]
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            raise OptionError("scene_options", unknown[0], "an option of the synthetic scene: " + ", ".join(accepted))


def check_arguments(h: dict[str, Any]) -> None:
    """Raise :class:`OptionError` for the first argument of ``HSIDataModule`` that is not allowed."""
    from hsi.data.datamodule import HSIDataModule

    hints = typing.get_type_hints(HSIDataModule.__init__)
    for name in ("layout", "scaling", "split", "padding", "cache", "predict_on"):
        _check_choice(name, h[name], hints[name])
    _check_counts(h)
    _check_pca(h["pca"])
    _check_fractions(h["fractions"], h["split"])
    _check_source(h)
