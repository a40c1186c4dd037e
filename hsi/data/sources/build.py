"""A collection's state (grid, classes, split, pipeline) and its per-scene cache entries; a single scene is a
collection of one, which keeps its scene's own label ids, colours, georeference, band widths and split.

:func:`collection_state` reads every scene once (one at a time) for the common grid, the union of classes and the
split, then fits the preprocessing once on the training pixels of all training scenes (a checkpoint's state instead
when given: nothing refitted); :func:`open_entries` builds or reopens one cache entry per scene
(:class:`hsi.data.build.CacheRecipe`).
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


def _fitted(values: dict[str, Any], x: np.ndarray, grid: np.ndarray | None, of: str = "the collection's grid") -> Any:
    """A pipeline of the recipe's steps fitted on the ``(N, C)`` training spectra ``x`` (bands ``of``: messages)."""
    from hsi.preprocess import PreprocessSpec

    return PreprocessSpec.from_options(values).fit(x, None, wavelengths=grid, of=of)


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
    of = f"scene {col.names[0]!r}" if len(col.entries) == 1 else "the collection's grid"
    return _fitted(values, np.concatenate([x for x in pixels if x is not None]), grid, of), None


def _read_scene(src: Any, entry: Any, patch_size: int) -> tuple[dict[str, Any], np.ndarray, np.ndarray | None]:
    """A scene's facts (with its own label ids and colours, and the labeled pixels left out for a non-finite
    spectrum) and its labels and test labels with those pixels unlabeled, as the build unlabels them; a scene
    smaller than a patch, or with nothing to learn from, is refused before any split is made."""
    from hsi.data.build import check_cube_values, check_scene_fits_patch, exclude_nonfinite

    check_scene_fits_patch(src, patch_size)
    check_cube_values(src.cube, src.name)
    src, excluded = exclude_nonfinite(src, ~nodata_mask_or_none(src.cube))
    fact = {**scene_facts(src, entry), "excluded_nonfinite": excluded, "label_values": [int(v) for v in
            src.label_values], "palette": np.asarray(src.palette).astype(int).tolist()}
    fact["classes"] = present_classes(_with_test(src.labels, src.test_labels), fact["class_names"])  # union order below
    return fact, src.labels, src.test_labels


def _with_test(labels: np.ndarray, test: np.ndarray | None) -> np.ndarray:
    """The labels with a fixed split's test pixels taking their class from the test map (as the cache holds them)."""
    return labels if test is None else np.where(test > 0, test, labels)


def _grid(col: Collection, values: dict[str, Any], facts: list[dict[str, Any]]
          ) -> tuple[np.ndarray | None, np.ndarray | None, str | None, int]:
    """The common grid (within ``wavelength_range``), its band widths and where they come from (one scene's own
    only: none estimated), and the scene it is taken from."""
    names, wavelengths = col.names, [f["wavelengths"] for f in facts]
    first = coarsest_scene(wavelengths, [f["fwhm"] for f in facts], names.index(col.train_names[0]))
    grid = _within_range(common_grid(wavelengths, [f["n_bands"] for f in facts], names, first),
                         values.get("wavelength_range"), names)
    if len(facts) == 1 and facts[0]["fwhm"] is None:
        return grid, None, None, first
    widths, widths_from = grid_fwhm(facts[first]["wavelengths"], facts[first]["fwhm"], grid)
    return grid, widths, widths_from, first


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
    patch = int(values["patch_size"])
    read = [_read_scene(load(i), entry, patch) for i, entry in enumerate(col.entries)]  # one cube at a time
    facts = [r[0] for r in read]
    if checkpoint is not None:
        return _reuse(checkpoint, col, facts)
    grid, widths, widths_from, first = _grid(col, values, facts)
    _record_resampling(facts, grid, widths)
    union = union_classes([f["class_names"] for f in facts])
    one = facts[0] if len(facts) == 1 else None  # a collection of one keeps its scene's ids, colours, georeference
    from hsi.scenes.palette import scene_palette

    palette = np.asarray(one["palette"] if one else scene_palette(union), dtype=np.uint8)

    def prepared(src: Any, i: int) -> Any:
        return prepare(src, col.entries[i], grid, union, palette, widths)

    labels = [renumber(lab, f["class_names"], union) for (_, lab, _), f in zip(read, facts)]
    test = read[0][2] if one else None  # split="fixed" (one scene): its test map
    test = None if test is None else renumber(test, one["class_names"], union)
    splits = apply_budget(labels, collection_split(labels, col, values, test), budget_of(values))  # pooled
    pipeline, own = _fit_pipelines(values, col, load, prepared, splits, grid)
    for f, lab in zip(facts, labels):
        f["classes"] = present_classes(_with_test(lab, test), union)  # test: one scene's only
    ids = one["label_values"] if one and len(one["label_values"]) == len(union) else list(range(1, len(union) + 1))
    return json_roundtrip({
        "format": STATE_FORMAT, "format_version": STATE_VERSION,
        "collection": col.to_dict(), "grid": None if grid is None else grid.tolist(),
        "grid_fwhm": None if widths is None else widths.tolist(), "grid_fwhm_from": widths_from,
        "grid_from": col.names[first], "class_names": union, "palette": palette.astype(int).tolist(),
        "label_values": ids, "georef": one["georef"] if one else None, "scenes": facts,
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
    """A checkpoint's collection state, checked against the scenes given (names of several, shapes; one scene is
    known by its split's label digest, checked by the build); a state without its scenes' facts (a single-scene
    checkpoint of an earlier hsi, :func:`hsi.data.checkpoint.saved_collection`) takes them from the scenes now."""
    if len(state["splits"]) != len(col.entries):
        raise CheckpointError(f"HSIDataModule.load_state_dict: the checkpoint was trained on {len(state['splits'])} "
                              f"scene(s), the DataModule has {len(col.entries)} ({', '.join(col.names)})")
    scenes = state.get("scenes") or facts
    saved = [s["name"] for s in scenes]
    if len(saved) > 1 and saved != col.names:
        raise CheckpointError(f"HSIDataModule.load_state_dict: the checkpoint's scenes {saved} differ from the "
                              f"collection's {col.names}")
    for old, new in zip(scenes, facts):
        if list(old["shape"]) != list(new["shape"]):
            raise CheckpointError(f"HSIDataModule.load_state_dict: scene {new['name']!r} is {new['shape']}, the "
                                  f"checkpoint's was {old['shape']}")
    return json_roundtrip({**state, "scenes": scenes})


def open_entries(col: Collection, source: Any, state: dict[str, Any], values: dict[str, Any], load: Loader,
                 cache_dir: str | None) -> list[CacheEntry]:
    """One cache entry per scene (built one scene at a time, or reopened), with the collection's split and pipeline;
    ``source.known_identity(i)`` is scene ``i``'s identity when known without reading it."""
    from hsi.data.build import CacheRecipe

    grid = None if state["grid"] is None else np.asarray(state["grid"], dtype=np.float64)
    widths = None if state.get("grid_fwhm") is None else np.asarray(state["grid_fwhm"], dtype=np.float64)
    union, palette = list(state["class_names"]), np.asarray(state["palette"], dtype=np.uint8)
    entries = []
    for i, entry in enumerate(col.entries):
        pipeline = state["pipelines"][i] if state.get("pipelines") else state["pipeline"]
        recipe = CacheRecipe(values, checkpoint={"split": state["splits"][i], "pipeline": pipeline})
        identity = {"collection_scene": entry.to_dict(), "grid": state["grid"], "classes": union}
        src, known = None, source.known_identity(i)
        if known is None:  # registry or pack: the files are known once loaded
            src = load(i)
        identity["source"] = known if known is not None else src.identity

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


def memo_path(col: Collection, source: Any, values: dict[str, Any], cache_dir: str | None) -> Any:
    """Where the collection's state is kept in ``cache_dir`` (None: not kept).

    The key is the collection, the recipe values and the identity of every file the entries
    read (``source.known_identity``, else :func:`entry_identities`: size, mtime and SHA-256), so
    a changed file or option gives a new state. Only collections of
    files, packs and the synthetic scene are kept: a registry scene's files are known only
    once it is loaded.
    """
    from pathlib import Path

    from hsi.data.build import PREPROCESS_SEMANTICS
    from hsi.data.cache import description_key

    if cache_dir is None:
        return None
    files = []
    for i, e in enumerate(col.entries):
        known = source.known_identity(i)
        if known is None and e.kind == "registry" and e.scene != "synthetic":
            return None
        files.append(entry_identities(e) if known is None else known)
    key = description_key({"format": STATE_FORMAT, "version": STATE_VERSION, "semantics": PREPROCESS_SEMANTICS,
                           "collection": {**col.to_dict(), "source": None}, "files": files,
                           "values": json_roundtrip({k: v for k, v in values.items() if k != "cache"})})
    return Path(cache_dir) / f"collection-{key[:16]}.json"

