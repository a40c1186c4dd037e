"""The scenes' caches, opened once per DataModule state, and the checkpoint state: a loaded one fixes the split(s),
the fitted pipeline, the patch size and the padding (never refitted) and the classes the caches must hold."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from hsi.data.cache import json_roundtrip
from hsi.data.checkpoint import check_state, make_state, saved_collection
from hsi.data.sources.open import OpenedSources, open_sources
from hsi.errors import CheckpointError

if TYPE_CHECKING:
    from hsi.data.scene_source import SourceSpec
    from hsi.data.sources.records import Collection
    from hsi.data.module.options import DataOptions
    from hsi.data.sources.arguments import CollectionSource

__all__ = ["SceneSources", "excluded_nonfinite", "label_values"]

logger = logging.getLogger("hsi.data")


class SceneSources:
    """The opened scenes of a DataModule's ``collection`` (named by ``source``) and the state they are opened with."""

    def __init__(self, collection: Collection, source: SourceSpec | CollectionSource) -> None:
        self.collection, self.source = collection, source
        self.override: dict[str, Any] | None = None  # the patch size and padding of a loaded state
        self.saved: dict[str, Any] | None = None  # the scenes' state (splits, pipeline) of a loaded state
        self.expected_classes: list[str] | None = None  # class names of a loaded state
        self.opened: OpenedSources | None = None

    def patch_size(self, options: DataOptions) -> int:
        """Window size ``P`` (a loaded state's wins over the argument)."""
        return int(self.override["patch_size"]) if self.override else int(options.recipe["patch_size"])

    def padding(self, options: DataOptions) -> str:
        """Border padding mode (a loaded state's wins over the argument)."""
        return str(self.override["padding"]) if self.override else str(options.recipe["padding"])

    def buffer(self, options: DataOptions) -> int:
        """Split buffer in pixels (``patch_size // 2`` unless given)."""
        b = options.recipe["buffer"]
        return self.patch_size(options) // 2 if b is None else int(b)

    def recipe(self, options: DataOptions) -> dict[str, Any]:
        """The cache contents the options (and any loaded state) ask for: every ``recipe`` argument, resolved."""
        resolved = {"buffer": self.buffer(options), "patch_size": self.patch_size(options),
                    "padding": self.padding(options)}
        return {**options.recipe, **resolved}

    def open(self, options: DataOptions) -> OpenedSources:
        """Open (or build) every scene's cache entry and their shared state (in memory if ``cache_dir`` is None)."""
        return open_sources(self.collection, self.source, self.recipe(options), saved=self.saved,
                            cache_dir=None if options.in_memory else options.cache_dir)

    def get(self, options: DataOptions) -> OpenedSources:
        """The opened sources, opened the first time (with a loaded state's classes, or an error)."""
        if self.opened is None:
            opened = self.open(options)
            found = list(opened.state["class_names"])
            if self.expected_classes is not None and found != self.expected_classes:
                raise CheckpointError(
                    f"HSIDataModule.load_state_dict: the checkpoint's classes {self.expected_classes} differ from "
                    f"the scene's {found}"
                )
            self.opened = opened
        return self.opened

    def load(self, state_dict: dict[str, Any], options: DataOptions) -> bool:
        """Open with a checkpoint's split(s) and fitted pipeline from now on; True if sources were open (they are
        to be opened again)."""
        check_state(state_dict)
        if int(state_dict["patch_size"]) != int(options.recipe["patch_size"]):
            logger.warning("patch_size %s from the loaded state overrides the argument patch_size=%s",
                           state_dict["patch_size"], options.recipe["patch_size"])
        self.saved = json_roundtrip(saved_collection(state_dict))
        self.override = json_roundtrip({k: state_dict[k] for k in ("patch_size", "padding")})
        self.expected_classes = list(state_dict["class_names"])  # checked whenever the caches are opened
        had, self.opened = self.opened is not None, None
        return had

    def checkpoint_state(self, options: DataOptions, name: str) -> dict[str, Any]:
        """The JSON state a checkpoint carries of the opened sources (:mod:`hsi.data.checkpoint`)."""
        opened, size, padding = self.get(options), self.patch_size(options), self.padding(options)
        num_bands = int(opened.entries[0].load("cube").shape[2])
        return make_state(opened.state, name=name, num_bands=num_bands, patch_size=size, padding=padding)


def label_values(opened: OpenedSources) -> list[int]:
    """Original label ids of classes 1..K in the source (a single scene's; 1..K for several scenes)."""
    return list(opened.state.get("label_values") or range(1, len(opened.state["class_names"]) + 1))


def excluded_nonfinite(opened: OpenedSources) -> dict[str, Any]:
    """Labeled pixels left out of every split because their spectrum holds NaN or Inf: ``pixels``, ``per_class``,
    ``first`` (the first scene's with any), ``nonfinite_pixels``, over all scenes."""
    records = [s.get("excluded_nonfinite") or {"pixels": 0} for s in opened.state["scenes"]]
    per_class: dict[str, int] = {}
    for r in records:
        for name, n in (r.get("per_class") or {}).items():
            per_class[name] = per_class.get(name, 0) + int(n)
    return {"pixels": sum(int(r["pixels"]) for r in records), "per_class": per_class,
            "first": next((r["first"] for r in records if r.get("first") is not None), None),
            "nonfinite_pixels": sum(int(r.get("nonfinite_pixels", 0)) for r in records)}
