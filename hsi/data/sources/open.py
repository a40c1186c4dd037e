"""What a DataModule opens (a single scene is a collection of one): the JSON state the scenes share
(:func:`hsi.data.sources.build.collection_state`, or a checkpoint's; kept beside the caches when the inputs allow,
:func:`hsi.data.sources.build.memo_path`) and one cache entry per scene (:func:`hsi.data.sources.build.open_entries`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hsi.data.cache import CacheEntry
from hsi.data.sources.records import Collection

__all__ = ["OpenedSources", "open_sources"]

logger = logging.getLogger("hsi.data")


@dataclass
class OpenedSources:
    """The scenes of a DataModule, opened.

    Attributes
    ----------
    state : dict
        JSON: ``grid`` (band centres or None), ``class_names``, ``palette``, ``label_values``, ``scenes`` (per scene:
        name, n_bands, shape, wavelengths, class_names, classes, georef, excluded_nonfinite), ``splits`` (one split
        state per scene), ``pipeline`` (and ``pipelines``, per scene or None).
    entries : list of CacheEntry
        One per scene, in collection order.
    """

    state: dict[str, Any]
    entries: list[CacheEntry]


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


def _collection_state(collection: Collection, source: Any, values: dict[str, Any], load: Any,
                      saved: dict[str, Any] | None, cache_dir: str | None) -> dict[str, Any]:
    """The state of the scenes: a checkpoint's, the one kept in the cache folder, or made (and kept) now."""
    from hsi.data.sources.build import collection_state, memo_path

    memo = None if (saved is not None or cache_dir is None) else memo_path(collection, source, values, cache_dir)
    state = _read_memo(memo)  # made by an earlier run (or by prepare_data on rank 0)
    if state is None:
        state = collection_state(collection, values, load, saved)
        if memo is not None:
            from hsi._atomic import write_json_atomic
            from hsi.data.cache import make_cache_dir

            make_cache_dir(memo.parent)
            write_json_atomic(memo, state, newline=False)
    return state


def _reader(source: Any) -> Callable[[int], Any]:
    """``source.read``, keeping the last scene read: a scene read in turn for its facts, its fit and its cache is
    read once (a lone scene), and never more than one is kept."""
    last: dict[int, Any] = {}

    def load(i: int) -> Any:
        if i not in last:
            last.clear()
            last[i] = source.read(i)
        return last[i]

    return load


def open_sources(collection: Collection, source: Any, values: dict[str, Any], *, saved: dict[str, Any] | None,
                 cache_dir: str | None) -> OpenedSources:
    """Open (or build) the cache entries of the DataModule's scenes and the state they share.

    Parameters
    ----------
    collection : Collection
        The scenes (one entry for a single scene).
    source : SourceSpec or CollectionSource
        How each scene is read (``read(i)``) and known (``known_identity(i)``).
    values : dict
        The resolved recipe arguments (:class:`~hsi.data.build.CacheRecipe`).
    saved : dict, optional
        A loaded ``collection`` state to reuse (:func:`hsi.data.checkpoint.saved_collection`).
    cache_dir : str, optional
        The cache folder (None: in memory).
    """
    from hsi.data.sources.build import open_entries

    load = _reader(source)
    state = _collection_state(collection, source, values, load, saved, cache_dir)
    return OpenedSources(state, open_entries(collection, source, state, values, load, cache_dir))
