"""A collection's state (grid, classes, split, pipeline) and its per-scene cache entries.

:func:`collection_state` reads every scene once for its bands, classes and labels and makes
the common grid (:mod:`hsi.data.sources.bands`), the union of classes
(:mod:`hsi.data.sources.classes`) and the split (:mod:`hsi.data.sources.split`); it then fits
the preprocessing once on the training pixels of all training scenes, after resampling,
reading one scene at a time (only training pixels are gathered, as a single scene's fit
does). A checkpoint's state is used instead when given (nothing refitted).

:func:`open_entries` then builds (or reopens) one cache entry per scene with the
single-scene machinery (:class:`hsi.data.build.CacheRecipe` with the collection's split and
pipeline injected as its ``checkpoint``), one scene in memory at a time; the cache key
holds the scene's identity, the grid, the classes and the digests of split and pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hsi.data.sources.bands import coarsest_scene, common_grid, grid_fwhm, resampling_record
from hsi.data.sources.classes import present_classes, renumber, union_classes
from hsi.data.sources.entries import Collection
from hsi.data.sources.load import prepare, scene_facts
from hsi.data.sources.split import collection_split
from hsi.data.build import budget_of
from hsi.data.cache import CacheEntry, PatchCache, json_roundtrip, materialize
from hsi.errors import CheckpointError, OptionError
from hsi.preprocess._base import nodata_mask
from hsi.preprocess.budget import apply_budget

__all__ = ["STATE_FORMAT", "collection_state", "entry_identities", "memo_path", "open_entries"]

STATE_FORMAT = "hsi.collection"
STATE_VERSION = 3

Loader = Callable[[int], Any]


def _palette(names: list[str]) -> np.ndarray:
    from hsi.scenes.palette import scene_palette

    return np.asarray(scene_palette(names), dtype=np.uint8)


def _fitted(values: dict[str, Any], x: np.ndarray, grid: np.ndarray | None) -> Any:
    """A pipeline of the recipe's steps fitted on the ``(N, C)`` training spectra ``x``."""
    from hsi.preprocess import make_pipeline

    pca, remove = values["pca"], values["remove_bands"]
    kept = x.shape[1] - len(set(remove or ()))
    if isinstance(pca, int) and not isinstance(pca, bool) and pca > kept:
        raise OptionError("pca", pca, f"at most {kept}, the number of bands of the collection's grid")
    pipe = make_pipeline(scaling=values["scaling"], pca=pca, remove_bands=remove, fill_nonfinite="median",
                         normalize=values.get("normalize"))
    return pipe.fit(x, None, wavelengths=grid)


def _fit_pixels(col: Collection, load: Loader, prepared: Callable[[Any, int], Any], splits: list[Any]
                ) -> list[np.ndarray | None]:
    """Each scene's ``(N, C)`` fitting spectra (after resampling), one scene in memory at a time, or None.

    Training pixels, except under ``split: scene`` with ``preprocess: scene``, where every scene is scaled on its
    own valid pixels (labels never read: the held-out scenes too, unsupervised).
    """
    unsupervised = col.preprocess == "scene" and col.split == "scene"
    pixels: list[np.ndarray | None] = []
    for i in range(len(col.entries)):
        if not unsupervised and not splits[i].train.any():
            pixels.append(None)
            continue
        src = prepared(load(i), i)
        mask = ~nodata_mask_or_none(src.cube) if unsupervised else splits[i].train
        pixels.append(np.asarray(src.cube[mask], dtype=np.float32))
        del src
    return pixels


def nodata_mask_or_none(cube: np.ndarray) -> np.ndarray:
    """The no-data pixels of ``cube`` as a boolean map (all False when there are none)."""
    nodata = nodata_mask(cube)
    return np.zeros(cube.shape[:2], dtype=bool) if nodata is None else nodata


def _fit_pipelines(values: dict[str, Any], col: Collection, load: Loader, prepared: Callable[[Any, int], Any],
                   splits: list[Any], grid: np.ndarray | None) -> tuple[Any, list[Any] | None]:
    """The pipeline fitted on the training pixels of every training scene (after resampling); with
    ``preprocess="scene"`` also each scene's own (the first training scene's is the main one)."""
    if col.preprocess == "scene" and col.split == "scene" and values.get("pca") is not None:
        raise OptionError("pca", values["pca"], "none with preprocess: scene and split: scene (a PCA fitted on each "
                          "scene alone gives each scene other axes); use preprocess: collection for PCA")
    pixels = _fit_pixels(col, load, prepared, splits)
    if col.preprocess == "scene":
        own = [None if x is None else _fitted(values, x, grid) for x in pixels]
        main = own[col.names.index(col.train_names[0])]
        return main, own
    return _fitted(values, np.concatenate([x for x in pixels if x is not None]), grid), None


def collection_state(col: Collection, values: dict[str, Any], load: Loader,
                     checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON state of the collection: grid, classes, per-scene facts and splits, and the fitted pipeline.

    Parameters
    ----------
    col : Collection
    values : dict
        The DataModule's resolved recipe values (``block_size``, ``buffer``, ``fractions``,
        ``split_seed``, ``scaling``, ``pca``, ``remove_bands``, ``wavelength_range``: the grid keeps only the bands
        within it).
    load : callable
        ``load(i)`` -> the :class:`~hsi.data.scene_source.LoadedSource` of scene ``i`` as read.
    checkpoint : dict, optional
        A saved ``collection`` state whose grid, classes, splits and pipeline are reused.
    """
    facts, raw = [], []
    for i, entry in enumerate(col.entries):
        src = load(i)
        facts.append(scene_facts(src, entry))
        nodata = nodata_mask(src.cube)
        raw.append(src.labels if nodata is None else np.where(nodata, 0, src.labels))  # as the build unlabels them
        del src
    names = col.names
    if checkpoint is not None:
        return _reuse(checkpoint, col, facts)
    wavelengths = [f["wavelengths"] for f in facts]
    first = coarsest_scene(wavelengths, [f["fwhm"] for f in facts], names.index(col.train_names[0]))
    grid = _within_range(common_grid(wavelengths, [f["n_bands"] for f in facts], names, first),
                         values.get("wavelength_range"), names)
    widths, widths_from = grid_fwhm(facts[first]["wavelengths"], facts[first]["fwhm"], grid)
    _record_resampling(facts, grid, widths)
    union = union_classes([f["class_names"] for f in facts])
    palette = _palette(union)

    def prepared(src: Any, i: int) -> Any:
        return prepare(src, col.entries[i], grid, union, palette, widths)

    labels = [renumber(lab, f["class_names"], union) for lab, f in zip(raw, facts)]
    splits = apply_budget(labels, collection_split(labels, col, values), budget_of(values))  # pooled over scenes
    pipeline, own = _fit_pipelines(values, col, load, prepared, splits, grid)
    for f, lab in zip(facts, labels):
        f["classes"] = present_classes(lab, union)
    return json_roundtrip({
        "format": STATE_FORMAT, "format_version": STATE_VERSION,
        "collection": col.to_dict(), "grid": None if grid is None else grid.tolist(),
        "grid_fwhm": None if widths is None else widths.tolist(), "grid_fwhm_from": widths_from,
        "grid_from": names[first], "class_names": union, "palette": palette.astype(int).tolist(), "scenes": facts,
        "splits": [s.to_state() for s in splits], "pipeline": pipeline.to_state(),
        "pipelines": None if own is None else [p.to_state() for p in own],
    })


def _within_range(grid: np.ndarray | None, wavelength_range: Any, names: list[str]) -> np.ndarray | None:
    """The grid's bands within ``wavelength_range`` (None: the whole grid); every scene is resampled onto these."""
    if wavelength_range is None:
        return grid
    from hsi.io.bands import bands_in_range

    return grid[bands_in_range(grid, wavelength_range, f"the common grid of scenes {', '.join(names)}")]


def _record_resampling(facts: list[dict[str, Any]], grid: np.ndarray | None, widths: np.ndarray | None) -> None:
    """Each scene's ``resampling`` fact: how it comes onto the grid (method, source bands dropped)."""
    for f in facts:
        if grid is None or f["wavelengths"] is None:
            f["resampling"] = {"method": "identity", "dropped": 0, "dropped_nm": []}
        else:
            f["resampling"] = resampling_record(f["wavelengths"], grid, fwhm_from=f["fwhm"], fwhm_to=widths)


def _reuse(state: dict[str, Any], col: Collection, facts: list[dict[str, Any]]) -> dict[str, Any]:
    """A checkpoint's collection state, checked against the scenes given (names and shapes)."""
    saved = [s["name"] for s in state["scenes"]]
    if saved != col.names:
        raise CheckpointError(f"HSIDataModule.load_state_dict: the checkpoint's scenes {saved} differ from the "
                              f"collection's {col.names}")
    for old, new in zip(state["scenes"], facts):
        if list(old["shape"]) != list(new["shape"]):
            raise CheckpointError(f"HSIDataModule.load_state_dict: scene {new['name']!r} is {new['shape']}, the "
                                  f"checkpoint's was {old['shape']}")
    return json_roundtrip(state)


def open_entries(col: Collection, state: dict[str, Any], values: dict[str, Any], load: Loader,
                 cache_dir: str | None) -> list[CacheEntry]:
    """One cache entry per scene (built one scene at a time, or reopened), with the collection's split and pipeline."""
    from hsi.data.build import CacheRecipe

    grid = None if state["grid"] is None else np.asarray(state["grid"], dtype=np.float64)
    widths = None if state.get("grid_fwhm") is None else np.asarray(state["grid_fwhm"], dtype=np.float64)
    union, palette = list(state["class_names"]), np.asarray(state["palette"], dtype=np.uint8)
    entries = []
    for i, entry in enumerate(col.entries):
        pipeline = state["pipelines"][i] if state.get("pipelines") else state["pipeline"]
        recipe = CacheRecipe(values, checkpoint={"split": state["splits"][i], "pipeline": pipeline})
        identity = {"collection_scene": entry.to_dict(), "grid": state["grid"], "classes": union}
        src = None
        if entry.kind == "files":
            identity["files"] = entry_identities(entry)
        else:  # registry or pack: the files are known once loaded
            src = load(i)
            identity["source"] = src.identity

        def build(i: int = i, entry: Any = entry, recipe: Any = recipe, src: Any = src) -> Any:
            return recipe.build(prepare(src if src is not None else load(i), entry, grid, union, palette, widths))

        description = recipe.description(identity)
        if cache_dir is None:
            arrays, st = build()
            entries.append(CacheEntry({k: materialize(v) for k, v in arrays.items()}, json_roundtrip(st), None, True,
                                      {"description": description}))
        else:
            entries.append(PatchCache(cache_dir, description, prefix=entry.name).open_or_build(build))
        del src, build
    return entries


def entry_identities(entry: Any) -> list[dict[str, Any]]:
    """The content identity of every file a collection entry reads: each file its cube, labels and pack paths
    stand for (:func:`hsi.io.readers.identities_of`: an ENVI binary with its header, an ``.npy`` scene's arrays)."""
    from hsi.io.readers import identities_of

    return [i for p in (entry.cube, entry.labels, entry.pack) if p for i in identities_of(p)]


def memo_path(col: Collection, values: dict[str, Any], cache_dir: str | None) -> Any:
    """Where the collection's state is kept in ``cache_dir`` (None: not kept).

    The key is the collection, the recipe values and the identity of every file the entries
    read (:func:`entry_identities`: size, mtime and SHA-256), so a changed file or option
    gives a new state. Only collections of
    files, packs and the synthetic scene are kept: a registry scene's files are known only
    once it is loaded.
    """
    from pathlib import Path

    from hsi.data.build import PREPROCESS_SEMANTICS
    from hsi.data.cache import description_key

    if cache_dir is None:
        return None
    files = []
    for e in col.entries:
        if e.kind == "registry" and e.scene != "synthetic":
            return None
        files.append(entry_identities(e))
    key = description_key({"format": STATE_FORMAT, "version": STATE_VERSION, "semantics": PREPROCESS_SEMANTICS,
                           "collection": {**col.to_dict(), "source": None}, "files": files,
                           "values": json_roundtrip({k: v for k, v in values.items() if k != "cache"})})
    return Path(cache_dir) / f"collection-{key[:16]}.json"

