"""The DataModule's arguments checked and resolved once (:func:`resolve_arguments`), and the typed view of them
the other parts read (:class:`DataOptions`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from hsi._roles import check_declared, roles
from hsi.data.arguments import check_combinations, integral_pca
from hsi.data.scene_source import SourceSpec
from hsi.data.sources.arguments import resolve_defaults, sources_of

if TYPE_CHECKING:
    from hsi.data.sources.records import Collection
    from hsi.data.sources.arguments import CollectionSource

__all__ = ["DataOptions", "resolve_arguments"]

_CASTS = {"int": int, "float": float, "bool": bool}


def resolve_arguments(cls: type, given: Mapping[str, Any]
                      ) -> tuple[dict[str, Any], Collection, SourceSpec | CollectionSource]:
    """``(arguments as they run, collection, source)`` of the ``given`` arguments of a DataModule of type ``cls``;
    :class:`~hsi.errors.OptionError` for the first argument not allowed (alone or with the others)."""
    # LightningCLI hands "--data.pca 4" over as 4.0: a whole number of components, not a variance fraction
    values = {**given, "pca": integral_pca(given["pca"])}
    check_declared(cls, values)
    check_combinations(dict(values))
    named = {n: values[n] for n, role in roles(cls).items() if role.kind == "source" and n != "scenes"}
    spec = SourceSpec(**{**named, "scene_options": dict(values["scene_options"] or {})},
                      download=bool(values["download"]), wavelength_range=values["wavelength_range"])
    # a single scene is a collection of one; ``source`` names the run (and says where a lone scene's files are)
    collection, source = sources_of(dict(values), spec)
    # "auto" and None resolved by the scene count: what runs is what is recorded (checkpoints, reports, resume)
    return {**values, **resolve_defaults(values, len(collection.entries))}, collection, source


@dataclass(frozen=True)
class DataOptions:
    """The DataModule's arguments as its parts read them, typed (``HSIDataModule`` says what each means); ``recipe``
    holds every argument that changes the cached arrays, the split seed resolved."""

    recipe: Mapping[str, Any]
    cache_dir: str | None
    cache: str
    download: bool
    ignore_georef: bool
    batch_size: int
    num_workers: int
    pin_memory: bool
    persistent_workers: bool
    augment: bool
    spectral_scale: float
    spectral_noise: float
    gather_on_device: bool
    balanced_sampling: bool
    predict_on: str
    seed: int
    channels_last: bool

    @classmethod
    def of(cls, module_type: type, hparams: Mapping[str, Any]) -> DataOptions:
        """The options of a DataModule of type ``module_type`` with these (resolved) hyperparameters."""
        recipe = {name: hparams[name] for name in _recipe_names(module_type)}
        recipe["split_seed"] = hparams["seed"] if hparams["split_seed"] is None else hparams["split_seed"]
        typed = {f.name: _CASTS.get(str(f.type), lambda v: v)(hparams[f.name]) for f in fields(cls) if f.name != "recipe"}
        return cls(recipe=recipe, **typed)

    @property
    def in_memory(self) -> bool:
        """True when nothing is written to disk (``cache_dir=None`` or ``cache="memory"``)."""
        return self.cache_dir is None or self.cache == "memory"


@functools.cache
def _recipe_names(cls: type) -> tuple[str, ...]:
    """The ``recipe`` arguments of ``cls`` (those that change the cached arrays), in signature order."""
    return tuple(name for name, role in roles(cls).items() if role.kind == "recipe")
