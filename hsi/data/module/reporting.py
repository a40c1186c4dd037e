"""What the DataModule reports of the data that ran: the collection record and the arguments of a report, the
common band grid, the scene shift, and the training facts a checkpoint carries for inference."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from hsi._roles import roles
from hsi.data.sources.shift import centre_pixels, scene_shift

if TYPE_CHECKING:
    from hsi.data.sources.open import OpenedSources
    from hsi.data.sources.records import Collection
    from hsi.preprocess import Split

__all__ = ["Measured", "bands_summary", "collection_record", "data_arguments"]


def collection_record(collection: Collection, scenes: list[dict[str, Any]], preprocessing: dict[str, Any]
                      ) -> dict[str, Any]:
    """:meth:`~hsi.data.datamodule.HSIDataModule.collection_record`, each scene's units read from ``scenes``."""
    col, units = collection, {s["name"]: s.get("units") for s in scenes}
    fitted = {"collection": "one pipeline fitted on the training pixels of the training scenes",
              "scene": "each scene's own, fitted on " + ("all its valid pixels (unsupervised, labels never read)"
                                                          if col.split == "scene" else "its own training pixels")}
    return {"entries": col.to_dict()["scenes"], "split": col.split, "test_scenes": list(col.test_scenes),
            "val_scenes": list(col.val_scenes), "preprocess": col.preprocess,
            "preprocess_fitted": fitted[col.preprocess], **preprocessing, "units": units}


def data_arguments(cls: type, hparams: dict[str, Any]) -> dict[str, Any]:
    """:meth:`~hsi.data.datamodule.HSIDataModule.data_arguments` of ``hparams``, the roles read from ``cls``."""
    arguments = dict(hparams)
    if arguments.get("scenes") is not None:
        for name, role in roles(cls).items():
            if (role.kind == "source" and name not in ("scenes", "ignore_georef")) or name == "split":
                arguments.pop(name, None)
    return arguments


def bands_summary(state: dict[str, Any]) -> dict[str, Any] | None:
    """:meth:`~hsi.data.datamodule.HSIDataModule.bands_summary` of the opened sources' ``state``."""
    if len(state["scenes"]) == 1:
        return None
    from hsi.preprocess.response import grid_summary

    grid = None if state["grid"] is None else {**grid_summary(state["grid"], state.get("grid_fwhm")),
                                                "from": state.get("grid_from"),
                                                "fwhm_from": state.get("grid_fwhm_from")}
    return {"grid": grid, "scenes": {s["name"]: s.get("resampling") for s in state["scenes"]}}


class Measured:
    """The band statistics of the preprocessed pixels of one opening of the sources (cubes padded for ``patch_size``),
    and the scene shift and the training facts made from them, each computed once (shift check and checkpoint share)."""

    def __init__(self, opened: OpenedSources, patch_size: int) -> None:
        self.opened, self.patch_size = opened, patch_size
        self.names = [str(s["name"]) for s in opened.state["scenes"]]
        self._stats: dict[tuple[tuple[str, ...], str], Any] = {}
        self._shift: dict[str, Any] | None = None
        self._facts: dict[str, Any] | None = None

    def band_stats(self, scenes: list[str], key: str) -> Any:
        """:func:`~hsi.preprocess.shift.band_stats` of the preprocessed ``key`` pixels ("train", "all") of ``scenes``."""
        cache_key = (tuple(scenes), key)
        if cache_key not in self._stats:
            from hsi.preprocess.shift import band_stats

            entries = self.opened.entries
            self._stats[cache_key] = band_stats([centre_pixels(entries[self.names.index(n)], key, self.patch_size)
                                                 for n in scenes])
        return self._stats[cache_key]

    def scene_shift(self, train_names: list[str]) -> dict[str, Any] | None:
        """:func:`hsi.data.sources.shift.scene_shift` of several scenes against the training ones; None for one."""
        if self._shift is None and len(self.names) > 1:
            self._shift = scene_shift(self.opened.state["scenes"], train_names, self.band_stats)
        return self._shift

    def training_facts(self, train_names: list[str], split_of: Callable[[str], Split],
                       train_labels: Callable[[], np.ndarray]) -> dict[str, Any]:
        """:meth:`~hsi.data.datamodule.HSIDataModule.state_dict`'s training facts (a cube on other bands is matched to
        ``scene_band_stats``, the training scenes' valid pixels)."""
        if self._facts is None:
            names, class_names = self.names, list(self.opened.state["class_names"])
            train = [n for n in train_names if split_of(n).train.any()] or names
            stats = self.band_stats(train, "train")
            facts = [s for s in self.opened.state["scenes"] if s["name"] in train]
            levels = [f.get("value_level") for f in facts if f.get("value_level")]
            classes = None if len(names) == 1 else [class_names[k] for k in
                                                    sorted(set(np.unique(train_labels()).tolist()))]
            self._facts = {"band_stats": stats.to_dict(), "scene_band_stats": self.band_stats(train, "all").to_dict(),
                           "training_values": {
                "names": train, "units": [(f.get("units") or {}).get("kind", "unknown") for f in facts],
                "value_level": float(np.median(levels)) if levels else None, "classes": classes}}
        return self._facts
