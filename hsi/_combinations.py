"""The checks that span several options and need no data, kept free of torch so the command line runs them at parse time.

:func:`check_combinations` is ``HSIDataModule``'s (a cube needs labels, a fixed split a test map,
the fractions depend on the split, a fold needs its folds) and :func:`infer_combinations`
``InferOptions``'s (the overlap below the tile, several devices only with ddp, the formats that
can hold probabilities). The classes call them from their constructors and ``hsi train``,
``hsi evaluate``, ``hsi doctor`` and ``hsi infer`` before importing torch, so either way a bad
combination gets the same message.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from hsi._checks import not_an_option
from hsi.errors import OptionError

__all__ = ["check_combinations", "infer_combinations", "refuse_pca", "refuse_pca_for"]


def refuse_pca(model: str, pca: Any) -> None:
    """Refuse PCA for a network that reads each band's wavelength (``anyband``): components have none."""
    raise OptionError("pca", pca, f"none: {model} reads each band with its wavelength, and PCA components have none")


def refuse_pca_for(models: Iterable[Any], pca: Any, wavelength_models: Iterable[str]) -> None:
    """Refuse ``pca`` when one of ``models`` is one of ``wavelength_models``, the networks that read each band's
    wavelength (the command line passes the option table's list, which needs no torch; ``hsi evaluate`` the model
    registry's, :func:`hsi.models.registry.wavelength_models`)."""
    readers = set(wavelength_models)
    for name in models:
        if name in readers and pca is not None:
            refuse_pca(name, pca)



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


def _check_budget(h: dict[str, Any]) -> None:
    """One label budget at most: a number of pixels per class or a fraction of them, and a validation rule only with
    a budget to apply it to."""
    per_class, fraction, val = h.get("train_per_class"), h.get("train_fraction"), h.get("val_budget", "same")
    if per_class is not None and fraction is not None:
        raise OptionError("train_fraction", fraction, f"none with train_per_class={per_class} (the two label budgets "
                          "are exclusive)")
    if val not in (None, "same") and per_class is None and fraction is None:
        raise OptionError("val_budget", val, "same (the default) unless train_per_class or train_fraction sets a "
                          "label budget")


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
    """``folds`` and ``fold`` together, on a block split, with ``1 <= fold <= folds`` (folds count from 1)."""
    folds, fold = h.get("folds"), h.get("fold")
    if folds is None and fold is None:
        return
    if h["split"] != "block":
        raise OptionError("folds" if folds is not None else "fold", folds if folds is not None else fold,
                          "only with split=block (cross-validation folds are made of blocks)")
    if folds is None:
        raise OptionError("folds", None, f"a number of folds >= 2 for fold={fold}")
    if fold is None:
        raise OptionError("fold", None, f"the fold to test, from 1 to {folds} (folds={folds})")
    if fold > folds:
        raise OptionError("fold", fold, f"an integer from 1 to {folds} (folds={folds})")


def _check_augment(h: dict[str, Any]) -> None:
    """No brightness or noise strength with augmentation off: given with ``augment=False`` it would be recorded
    and never applied."""
    if h.get("augment", True):
        return
    for name in ("spectral_scale", "spectral_noise"):
        if h.get(name) not in (None, 0, 0.0):
            raise OptionError(name, h[name], "0 or unset with augment off (--no-augment): the augmentation options "
                              "have no effect without augmentation; drop one of the two")


def check_combinations(h: dict[str, Any]) -> None:
    """Raise :class:`OptionError` for the first combination of ``HSIDataModule`` arguments that is not allowed."""
    _check_fractions(h["fractions"], h["split"])
    _check_budget(h)
    _check_folds(h)
    _check_augment(h)
    _check_source(h)


def infer_combinations(h: dict[str, Any], formats: tuple[str, ...],
                       probability_formats: tuple[str, ...]) -> tuple[str, ...]:
    """Check what ``InferOptions``' fields decide together; return ``format`` normalized (see :func:`_check_formats`).

    Parameters
    ----------
    h : dict
        The fields of ``InferOptions`` (each already checked on its own).
    formats : tuple of str
        The output formats there are (:func:`hsi.sinks.list_sinks`), in the order they are written.
    probability_formats : tuple of str
        Those that write the probabilities (:func:`hsi.sinks.probability_sinks`).

    Raises
    ------
    OptionError
        An overlap not below the tile, several devices without ddp, 16-mixed on the CPU, or a format that cannot be.
    """
    if h["overlap"] >= h["tile"]:
        raise OptionError("overlap", h["overlap"], f"an integer in [0, tile) with tile={h['tile']}")
    if h["devices"] > 1 and h["strategy"] != "ddp":
        raise OptionError("devices", h["devices"], "1 unless strategy='ddp'")
    if h.get("precision") == "16-mixed" and h["accelerator"] == "cpu":
        raise OptionError("precision", "16-mixed", "32-true or bf16-mixed with accelerator='cpu' (float16 autocast "
                          "needs a GPU)")
    return _check_formats(h["format"], h["probabilities"], formats, probability_formats)


def _check_formats(value: Any, probabilities: bool, formats: tuple[str, ...],
                   probability_formats: tuple[str, ...]) -> tuple[str, ...]:
    """``format`` as a tuple of distinct ``formats`` in their order; "npy,envi" text is split.

    Raises
    ------
    OptionError
        An unknown or empty choice, or probabilities asked for with none of ``probability_formats``.
    """
    words = value.split(",") if isinstance(value, str) else value
    try:
        chosen = [str(w).strip().lower() for w in words]
    except TypeError:
        chosen = [value]  # type: ignore[list-item]
    allowed = f"one or more of {', '.join(formats)} (e.g. --format envi gtiff)"
    if not chosen or any(w not in formats for w in chosen):
        raise OptionError("format", value, allowed)
    chosen_in_order = tuple(f for f in formats if f in chosen)
    if probabilities and not set(probability_formats) & set(chosen_in_order):
        raise OptionError("format", value, f"{' or '.join(probability_formats)} among them with probabilities=True "
                                           "(--probabilities): only those formats write the probabilities")
    return chosen_in_order
