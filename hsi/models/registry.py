"""Models by name: ``register_model`` adds one, ``build_model`` builds one.

The registry maps a short name (``"hybridsn"``) to a class whose constructor takes
``num_bands``, ``num_classes``, ``patch_size`` and then only explicit, type-hinted keyword
hyperparameters, so a training task can save ``(name, kwargs)`` in a checkpoint and rebuild
the same model from it. Models of installed packages (entry points ``hsi.models``,
:mod:`hsi.plugins`) join the registry the first time it is asked.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TypeVar

from torch import nn

from hsi._checks import not_an_option
from hsi._registry import add_unique
from hsi.errors import UnknownModelError  # noqa: F401 - re-exported
from hsi.plugins import load_plugins

__all__ = [
    "DEFAULT_MODEL",
    "UnknownModelError",
    "build_error",
    "build_model",
    "check_option_values",
    "get_model_class",
    "list_models",
    "model_options",
    "recommended_patch_size",
    "recommended_pca",
    "recommended_scaling",
    "register_model",
    "wavelength_models",
]

DEFAULT_MODEL = "ssnet"
"""The model a run uses when none is named (chosen from the accuracy benchmark, docs/benchmarks.md)."""

_REGISTRY: dict[str, type[nn.Module]] = {}

_ModelT = TypeVar("_ModelT", bound=type[nn.Module])


def register_model(name: str) -> Callable[[_ModelT], _ModelT]:
    """Class decorator: make ``cls`` buildable as ``build_model(name, ...)``.

    Raises ``ValueError`` if ``name`` is already taken by another class.
    """
    key = name.lower()

    def decorator(cls: _ModelT) -> _ModelT:
        add_unique(_REGISTRY, key, cls, "register_model")
        return cls

    return decorator


def _models() -> dict[str, type[nn.Module]]:
    """The registry, once the installed packages' ``hsi.models`` plug-ins are in it (:mod:`hsi.plugins`)."""
    load_plugins("hsi.models", _register_plugin, lambda name: name.lower() in _REGISTRY)
    return _REGISTRY


def _register_plugin(name: str, cls: type) -> None:
    """Register an ``hsi.models`` entry point's class under its name, once it is an ``nn.Module``."""
    if not issubclass(cls, nn.Module):
        raise TypeError(f"{cls.__module__}.{cls.__qualname__} is not a torch.nn.Module subclass")
    register_model(name)(cls)


def list_models() -> list[str]:
    """Registered model names, sorted."""
    return sorted(_models())


def wavelength_models() -> list[str]:
    """Registered models whose network reads each band's wavelength (``takes_wavelengths``), sorted: PCA
    components have none, so these refuse PCA."""
    return [name for name in list_models() if getattr(_REGISTRY[name], "takes_wavelengths", False)]


def get_model_class(name: str) -> type[nn.Module]:
    """The class registered under ``name`` (case-insensitive).

    Raises
    ------
    UnknownModelError
        If ``name`` is not registered; the message lists the known names.
    """
    try:
        return _models()[name.lower()]
    except (KeyError, AttributeError):
        raise UnknownModelError(
            f"unknown model {name!r}; known models: {', '.join(list_models())}"
        ) from None


def build_model(
    name: str, num_bands: int, num_classes: int, patch_size: int, **kwargs: object
) -> nn.Module:
    """Build the model registered as ``name`` for ``(B, num_bands, patch_size, patch_size)`` input.

    ``kwargs`` are the architecture's keyword hyperparameters (see its class docstring).
    The model's parameters are initialised from torch's global RNG: call
    ``torch.manual_seed`` first for a reproducible model.

    Raises
    ------
    UnknownModelError
        Unknown ``name`` (the message lists the known names).
    hsi.models.base.ModelSizeError
        A size the architecture cannot use (the message names the argument and minimum).
    TypeError
        A keyword the architecture does not take (the message lists those it does).
    """
    cls = get_model_class(name)
    accepted = model_options(name)
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        raise TypeError(f"build_model({name!r}): {unknown[0]!r}: {not_an_option(unknown[0], accepted, name)}")
    return cls(num_bands=num_bands, num_classes=num_classes, patch_size=patch_size, **kwargs)


def build_error(name: str, num_bands: int, num_classes: int, patch_size: int, **options: object) -> str | None:
    """Why model ``name`` cannot be built for ``(B, num_bands, patch_size, patch_size)`` input with ``options`` (its
    constructor's one-line message), or None when it can.

    The model is built and dropped, untrained, with torch's random state left as it was: a cheap
    check of a scene's shape and the options before any fold or epoch runs.
    """
    import torch

    from hsi.errors import HSIError

    with torch.random.fork_rng(devices=[]):
        try:
            build_model(name, num_bands, num_classes, patch_size, **options)
        except (HSIError, ValueError, TypeError) as err:
            return " ".join(str(err).split())
    return None


def check_option_values(name: str, options: dict[str, object] | None, patch_size: int | None = None) -> None:
    """Refuse, before any data is read, ``options`` that model ``name`` cannot be built with on any scene.

    The model is built on a probe shape (32 bands or its minimum, 2 classes, ``patch_size`` or its recommended
    one) first without ``options`` (when that fails the probe says nothing: the scene's own shape is judged
    when it is known), then with them: what fails then is an option's value (``heads=0``, ``dim`` not a
    multiple of ``heads``), refused in the constructor's words.

    Raises
    ------
    OptionError
        On ``model_options``, naming the options given and what the network said.
    """
    if not options or not isinstance(options, dict) or set(options) - set(model_options(name)):
        return  # nothing to check, or what HSIClassifier's own check of the names refuses
    from hsi.errors import OptionError

    cls = get_model_class(name)
    bands = max(int(getattr(cls, "MIN_NUM_BANDS", 1)), 32)
    size = patch_size or recommended_patch_size(name) or max(int(getattr(cls, "MIN_PATCH_SIZE", 1)), 7)
    size = int(size) + (1 - int(size) % 2)  # odd: every network takes an odd patch
    if build_error(name, bands, 2, size) is not None:
        return
    found = build_error(name, bands, 2, size, **options)
    if found is not None:
        given = ", ".join(f"{k}={v!r}" for k, v in options.items())
        raise OptionError("model_options", given, found)


def model_options(name: str) -> list[str]:
    """The keyword hyperparameters model ``name`` takes (its ``model_options``), in signature order.

    Raises
    ------
    UnknownModelError
        If ``name`` is not registered.
    """
    params = inspect.signature(get_model_class(name).__init__).parameters
    return [p for p in params if p not in ("self", "num_bands", "num_classes", "patch_size")]


def recommended_pca(name: str, num_bands: int) -> int | None:
    """PCA components to apply before model ``name`` on a scene of ``num_bands`` raw bands.

    A run that was given no ``pca`` should use this (and say so in its log): it is the
    class's ``RECOMMENDED_PCA`` when the scene has more bands than that, else None (raw
    bands). Models whose cost grows with the band count set it (``cnn3d``, ``hybridsn``:
    on 200 raw bands a fit takes tens of minutes on a CPU instead of about one).

    Raises
    ------
    UnknownModelError
        If ``name`` is not registered.
    """
    target = getattr(get_model_class(name), "RECOMMENDED_PCA", None)
    if target is None or int(num_bands) <= int(target):
        return None
    return int(target)


def recommended_patch_size(name: str, default: int | None = None) -> int | None:
    """Patch side a run should use for model ``name`` when given no ``patch_size``; else ``default``.

    The class's ``RECOMMENDED_PATCH_SIZE``: the window it actually reads, where that is
    smaller than the DataModule's default (``spectral1d`` reads the centre pixel: 1).
    ``default=hsi.data.patches.DEFAULT_PATCH_SIZE`` gives the size ``hsi train`` uses.

    Raises
    ------
    UnknownModelError
        If ``name`` is not registered.
    """
    size = getattr(get_model_class(name), "RECOMMENDED_PATCH_SIZE", None)
    return default if size is None else int(size)


def recommended_scaling(name: str) -> str | None:
    """Per-band scaling a run should use for model ``name`` when given no ``scaling``; None: the DataModule's ``auto``.

    The class's ``RECOMMENDED_SCALING``: ``anyband`` asks for ``standardize``, whose per-band mean and deviation
    vary smoothly with wavelength (minmax's extremes do not), so that its spectra read alike on other band sets.

    Raises
    ------
    UnknownModelError
        If ``name`` is not registered.
    """
    scaling = getattr(get_model_class(name), "RECOMMENDED_SCALING", None)
    return None if scaling is None else str(scaling)
