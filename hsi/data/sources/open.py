"""What a DataModule opens: one cache entry per scene, and the JSON state the scenes share.

:func:`open_sources` gives an :class:`OpenedSources` for both kinds of source:

- a single scene (a :class:`~hsi.data.scene_source.SourceSpec`) is split and fitted inside
  itself by :class:`~hsi.data.build.CacheRecipe`, exactly as a single scene always was (same
  split, same pipeline, same cache), and its state is described as a collection of one;
- several scenes share the state of :func:`hsi.data.sources.build.collection_state` (common
  grid, union of classes, split, pipeline fitted once on all training scenes), kept beside
  the caches when the inputs allow (:func:`hsi.data.sources.build.memo_path`), then one
  cache entry per scene (:func:`hsi.data.sources.build.open_entries`).

Either way the result has one entry per scene and a state with the same keys (``grid``,
``class_names``, ``palette``, ``scenes``, ``splits``, ``pipeline``, ``pipelines``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hsi.data.cache import CacheEntry
from hsi.data.scene_source import SourceSpec
from hsi.data.sources.records import Collection

__all__ = ["OpenedSources", "open_sources"]

logger = logging.getLogger("hsi.data")


@dataclass
class OpenedSources:
    """The scenes of a DataModule, opened.

    Attributes
    ----------
    state : dict
        JSON: ``grid`` (band centres or None), ``class_names``, ``palette``, ``scenes`` (per
        scene: name, n_bands, shape, wavelengths, class_names, classes, georef), ``splits``
        (one split state per scene), ``pipeline`` (and ``pipelines``, per scene or None).
    entries : list of CacheEntry
        One per scene, in collection order.
    single : bool
        True for a single scene (its entry holds the split and pipeline it was built with).
    """

    state: dict[str, Any]
    entries: list[CacheEntry]
    single: bool


def _single_state(collection: Collection, entry: CacheEntry) -> dict[str, Any]:
    """A single scene's cache state described as a collection of one."""
    from hsi.data.sources.classes import present_classes

    scene = entry.state["scene"]
    labels = entry.load("label_map")
    names = list(scene["class_names"])
    fact = {"name": scene["name"], "n_bands": int(scene["num_bands_in"]), "shape": list(labels.shape),
            "wavelengths": scene.get("wavelengths"), "class_names": names,
            "classes": present_classes(labels, names), "georef": scene.get("georef"),
            "units": scene.get("units"), "value_level": scene.get("value_level")}
    return {"collection": collection.to_dict(), "grid": scene.get("wavelengths"), "class_names": names,
            "palette": scene["palette"], "scenes": [fact], "splits": [entry.state["split"]],
            "pipeline": entry.state["pipeline"], "pipelines": None}


def _read_memo(path: Path | None) -> dict[str, Any] | None:
    """A collection state kept in the cache folder, or None (absent, unreadable, or not one)."""
    if path is None or not path.is_file():
        return None
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        logger.warning("%s: unreadable collection state; making it again", path)
        return None
    return state if isinstance(state, dict) and state.get("format") == "hsi.collection" else None


def _collection_state(collection: Collection, values: dict[str, Any], load: Any, saved: dict[str, Any] | None,
                      cache_dir: str | None) -> dict[str, Any]:
    """The state of several scenes: a checkpoint's, the one kept in the cache folder, or made (and kept) now."""
    from hsi.data.sources.build import collection_state, memo_path

    memo = None if (saved is not None or cache_dir is None) else memo_path(collection, values, cache_dir)
    state = _read_memo(memo)  # made by an earlier run (or by prepare_data on rank 0)
    if state is None:
        state = collection_state(collection, values, load, saved)
        if memo is not None:
            from hsi._atomic import write_json_atomic

            memo.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(memo, state, newline=False)
    return state


def open_sources(collection: Collection, source: Any, values: dict[str, Any], *, override: dict[str, Any] | None,
                 saved: dict[str, Any] | None, cache_dir: str | None, download: bool = False,
                 ignore_georef: bool = False) -> OpenedSources:
    """Open (or build) the cache entries of the DataModule's scenes and the state they share.

    Parameters
    ----------
    collection : Collection
        The scenes (one entry for a single scene).
    source : SourceSpec or CollectionSource
        A :class:`SourceSpec` for a single scene.
    values : dict
        The resolved recipe arguments (:class:`~hsi.data.build.CacheRecipe`).
    override : dict, optional
        A loaded single-scene state (split, pipeline, patch size, padding) to reuse.
    saved : dict, optional
        A loaded collection state to reuse.
    cache_dir : str, optional
        The cache folder (None: in memory).
    download, ignore_georef : bool
        As the DataModule's arguments.
    """
    from hsi.data.build import CacheRecipe, open_entry

    if isinstance(source, SourceSpec):
        entry = open_entry(source, CacheRecipe(values, checkpoint=override), cache_dir)
        return OpenedSources(_single_state(collection, entry), [entry], True)
    from hsi.data.sources.build import open_entries
    from hsi.data.sources.load import load_entry

    def load(i: int) -> Any:
        return load_entry(collection.entries[i], download, ignore_georef)

    state = _collection_state(collection, values, load, saved, cache_dir)
    return OpenedSources(state, open_entries(collection, state, values, load, cache_dir), False)
