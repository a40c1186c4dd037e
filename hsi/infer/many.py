"""``infer_scenes``: one checkpoint, many scenes; ``out/<name>/`` per scene and one summary table.

What :func:`hsi.infer.infer` (the entry for one scene or many, what ``hsi infer`` calls) does
with several scenes: ``infer(checkpoint, scenes=..., out=...)`` or ``infer(checkpoint,
[cube, ...], out=...)``; called directly it gives the same maps bit for bit.

Each scene is mapped by :func:`hsi.infer.infer_scene` into ``out/<name>/`` (the usual
outputs and manifest ``inference.json``), its cube brought onto the checkpoint's band grid
first when the checkpoint was trained on a collection (:mod:`hsi.data.sources.bands`).

Sharding: the scenes are dealt over the processes, scene ``i`` to rank ``i % world_size``
(ranks from an initialised ``torch.distributed`` group, else ``RANK`` / ``WORLD_SIZE`` as
``torchrun`` sets them, else ``SLURM_PROCID`` / ``SLURM_NTASKS``); each rank maps its own
scenes in one process on its own device. A single large scene is still sharded by tile
rows with ``devices > 1`` (:func:`hsi.infer.infer_scene`); every process then takes every
scene in turn, as Lightning's ranks of one tile pass.

Reuse: a scene is skipped only when its folder's manifest (``inference.json``) is complete,
every file it lists still matches its recorded size and SHA-256, and its ``inputs`` record
matches this run: the checkpoint's content (:func:`hsi._identity.file_identity`), the
scene's files (every file its cube, labels and pack are read from: an ENVI header and
binary, an ``.npy`` scene's ``meta.json`` and arrays; a collection entry's settings) and every
option in :data:`OUTPUT_OPTIONS`. Otherwise the scene is mapped again and one line says why
(which input or option changed, which output was edited or deleted); the folder's earlier
outputs are the package's and are replaced, while a file hsi did not write there is never
replaced (:class:`~hsi.errors.OverwriteError` naming the change). An interrupted scene left
no committed outputs (the single-scene transaction) and is mapped again.

The summary (``summary.json``, ``summary.md``) is written from the scenes' manifests and
metrics once every scene is complete (by rank 0 after a barrier in a process group, else
by the rank that completes the last scene), so it is the same whoever writes it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hsi.errors import CollectionError, OverwriteError

__all__ = ["OUTPUT_OPTIONS", "SUMMARY_FILES", "infer_scenes", "reuse_check", "scene_inputs", "shard_context"]

SUMMARY_FILES = ("summary.json", "summary.md")
#: the InferOptions fields that change what a scene's folder holds; the others (batch_size, accelerator,
#: devices, strategy, progress, overwrite) change how fast or where the same maps are made
OUTPUT_OPTIONS = ("tile", "overlap", "blend", "tta", "probabilities", "format", "mask_unlabeled")


@dataclass(frozen=True)
class _Item:
    """A scene to map: its name, the cube (path or loaded cube) and its ground truth (union ids) or None."""

    name: str
    entry: Any = None  # SceneEntry, or None for a bare cube path
    cube: Any = None


def shard_context(rank: int | None = None, world_size: int | None = None) -> tuple[int, int]:
    """``(rank, world_size)``: the arguments, the process group's, ``RANK``/``WORLD_SIZE``, or SLURM's."""
    import torch.distributed as dist

    if rank is not None and world_size is not None:
        return int(rank), int(world_size)
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    for r, w in (("RANK", "WORLD_SIZE"), ("SLURM_PROCID", "SLURM_NTASKS")):
        if os.environ.get(r) is not None and os.environ.get(w) is not None:
            return int(os.environ[r]), int(os.environ[w])
    return 0, 1


def _items(scenes: Any) -> list[_Item]:
    """The scenes: a list of cube paths (named by their stems), or a collection (YAML, pack, entries)."""
    from hsi.data.sources.entries import read_collection

    if isinstance(scenes, (list, tuple)) and all(isinstance(s, (str, Path)) for s in scenes):
        items = [_Item(Path(s).stem, None, str(s)) for s in scenes]
    else:
        col = read_collection(scenes, need_labels=False)
        items = [_Item(e.name, e, e.cube) for e in col.entries]
    names = [i.name for i in items]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise CollectionError(f"infer: several cubes would be mapped into the same folder {twice}: give each scene a "
                              "unique name (a collection file with name: per scene)")
    return items


def _in_union(own: np.ndarray, names: list[str], entry: Any, union: list[str]) -> np.ndarray:
    """Labels ``1..K`` of ``names`` (after the entry's mapping) in the checkpoint's ids; 0 for classes it lacks."""
    from hsi.data.sources.classes import mapped_names

    names = mapped_names(names, entry.classes, entry.name)
    lut = np.array([0] + [union.index(n) + 1 if n in union else 0 for n in names], dtype=np.int64)
    return lut[own]


def _file_truth(entry: Any, union: list[str]) -> np.ndarray | None:
    """A file entry's ground truth in the checkpoint's ids (classes ``class_<id>`` as training names them), or None."""
    if entry is None or entry.labels is None:
        return None
    from hsi.io import read_labels

    raw = read_labels(entry.labels, key=entry.labels_key)
    values = sorted(int(v) for v in np.unique(raw[raw > 0]))
    own = np.zeros(raw.shape, dtype=np.int64)
    for k, v in enumerate(values, start=1):
        own[raw == v] = k
    return _in_union(own, [f"class_{v}" for v in values], entry, union)


def _scene_input(item: _Item, union: list[str]) -> tuple[Any, np.ndarray | None]:
    """What :func:`infer_scene` reads and the ground truth: a file path (read window by window) and its labels
    file, or a registry / pack scene loaded once for both."""
    if item.entry is None or item.entry.kind == "files":
        return item.cube, _file_truth(item.entry, union)
    from hsi.data.sources.load import load_entry
    from hsi.io import Cube

    src = load_entry(item.entry)
    cube = Cube(src.cube, src.wavelengths, {"source": f"scene {item.name!r}", "georef": src.georef})
    return cube, _in_union(src.labels, list(src.class_names), item.entry, union)


def _cube_files(path: str | Path) -> list[Path]:
    """The files a cube or label path stands for (its reader's :meth:`~hsi.io.readers.Reader.files`): the file,
    an ENVI image's header and binary, an ``.npy`` scene's ``meta.json``, ``cube.npy`` and ``labels.npy``."""
    from hsi.io.readers import files_of

    return files_of(path)


def scene_inputs(checkpoint: Any, item: _Item, opts: Any) -> dict[str, Any]:
    """What a scene's maps are made from: ``{"checkpoint", "scene", "options"}``, compared by :func:`reuse_check`.

    ``checkpoint`` is the checkpoint's :func:`~hsi._identity.file_identity`; the scene is
    the identities of every file it is read from (:func:`_cube_files` of its cube, labels
    and pack: an ENVI header and binary, an ``.npy`` scene's arrays) and, for a collection entry,
    the entry's settings; a registry scene other than the synthetic one is loaded to learn
    its files. ``options`` holds the fields of :data:`OUTPUT_OPTIONS`, and ``precision`` when it is a mixed one.
    """
    from hsi._identity import file_identity

    entry = item.entry
    if entry is None:
        scene: dict[str, Any] = {"files": {str(p): file_identity(p) for p in _cube_files(item.cube)}}
    elif entry.kind == "registry" and entry.scene != "synthetic":
        from hsi.data.sources.load import load_entry

        scene = {"entry": entry.to_dict(), "source": load_entry(entry).identity.get("source")}
    else:
        paths = [f for p in (entry.cube, entry.labels, entry.pack) if p for f in _cube_files(p)]
        scene = {"entry": entry.to_dict(), "files": {str(p): file_identity(p) for p in paths}}
    values = {k: getattr(opts, k) for k in OUTPUT_OPTIONS}
    if getattr(opts, "precision", "32-true") != "32-true":  # a mixed precision's maps differ in a few pixels (recorded
        values["precision"] = opts.precision  # only then, so folders of float32 maps made before it stay reusable)
    return json.loads(json.dumps({"checkpoint": checkpoint, "scene": scene, "options": values}, default=str))


def reuse_check(folder: Path, inputs: dict[str, Any]) -> tuple[bool, str | None]:
    """``(complete, why)``: whether ``folder`` holds the finished maps of ``inputs``, and if not, why not.

    ``why`` is None when there is nothing to reuse (no complete manifest: a new or interrupted
    scene); otherwise it names the output that was edited or deleted, or the input or option
    that changed since the folder was written.
    """
    from hsi.infer.write import MANIFEST
    from hsi.transaction import finished_outputs

    data, why = finished_outputs(folder, MANIFEST)
    if data is None:
        return False, why
    changed = _changed_input(data.get("inputs"), inputs)
    return changed is None, changed


def _changed_input(recorded: Any, current: dict[str, Any]) -> str | None:
    """The first input or option that differs from the record (None: the same)."""
    from hsi._identity import identity_change

    if not isinstance(recorded, dict):
        return "its inference.json records no inputs (written by an older hsi)"
    change = identity_change(recorded.get("checkpoint"), current["checkpoint"])
    if change is not None:
        return f"the checkpoint {current['checkpoint']['path']} changed ({change})"
    old, new = recorded.get("scene") or {}, current["scene"]
    if old.get("entry") != new.get("entry"):
        return f"the collection entry changed ({old.get('entry')} -> {new.get('entry')})"
    if old.get("source") != new.get("source"):
        return "the registry scene's files changed"
    old_files, new_files = old.get("files") or {}, new.get("files") or {}
    for path, identity in new_files.items():
        change = identity_change(old_files.get(path), identity)
        if change is not None:
            return f"the input {path} changed ({change})" if path in old_files else f"the input is now {path}"
    for name in OUTPUT_OPTIONS:
        was, now = (recorded.get("options") or {}).get(name), current["options"][name]
        if was != now:
            return f"the option {name} changed ({was!r} -> {now!r})"
    return None


def _collection_state(checkpoint: Any) -> dict[str, Any] | None:
    """The ``collection`` part of the DataModule state of a checkpoint (or a classical run's model file), or None."""
    from hsi.data.checkpoint import read_checkpoint
    from hsi.infer.classical import is_classical_file, read_classical_run

    path = Path(str(checkpoint))
    if path.is_file() and is_classical_file(path):
        return read_classical_run(path)[1].get("collection")
    return (read_checkpoint(path).get("HSIDataModule") or {}).get("collection")


def _scene_model(model: Any, state: dict[str, Any] | None, name: str) -> Any:
    """The model with scene ``name``'s own split (test-pixel metrics) when the checkpoint's collection had it."""
    split, pipeline, own = None, model.pipeline, False
    names = [] if state is None else [s["name"] for s in state["scenes"]]
    if name in names:
        split = state["splits"][names.index(name)]
        if state.get("pipelines"):  # preprocess: scene: the scene's own pipeline
            from hsi.preprocess import Pipeline

            pipeline, own = Pipeline.from_state(state["pipelines"][names.index(name)]), True
    # the checkpoint's georeference is its scene's when it has one scene, else None: kept as it is
    return dataclasses.replace(model, split_state=split, scene_name=name, pipeline=pipeline,
                               fit_per_scene=model.fit_per_scene and not own)


def _map_one(model: Any, item: _Item, out: Path, opts: Any, union: list[str]) -> Any:
    from hsi.infer.api import infer_scene
    from hsi.infer.truth import LabelMap

    entry = item.entry
    cube, truth = _scene_input(item, union)
    labels = None if truth is None else LabelMap(truth, dict(enumerate(union, start=1)), f"labels of {item.name!r}")
    return infer_scene(model, cube, cube_key=getattr(entry, "cube_key", None), layout=getattr(entry, "layout", None),
                       labels=labels, out=out / item.name, options=opts)


def _record_inputs(folder: Path, inputs: dict[str, Any]) -> None:
    """Add ``inputs`` to the scene's freshly committed manifest (atomically; without it the scene is mapped again)."""
    from hsi._atomic import write_json_atomic
    from hsi.infer.write import MANIFEST
    from hsi.transaction import read_manifest

    data = read_manifest(folder, MANIFEST)
    if data is not None:
        write_json_atomic(folder / MANIFEST, {**data, "inputs": inputs}, indent=1)


def _map_again(model: Any, item: _Item, out: Path, opts: Any, union: list[str], inputs: dict[str, Any],
               why: str | None) -> None:
    """Map one scene; a scene whose earlier maps are stale replaces them (files hsi did not write are refused)."""
    if why is not None:
        opts = dataclasses.replace(opts, overwrite=True)  # the earlier outputs are the package's: they go
    try:
        result = _map_one(model, item, out, opts, union)
    except OverwriteError as err:
        if why is None:
            raise
        raise OverwriteError(f"scene {item.name}: {why}, so it must be mapped again, but {err}") from err
    if getattr(result, "rank", 0) == 0:
        _record_inputs(out / item.name, inputs)


def infer_scenes(checkpoint: str | Path, scenes: Any, out: str | Path, *, options: Any = None, rank: int | None = None,
                 world_size: int | None = None, log: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Map every scene of ``scenes`` with ``checkpoint`` into ``out/<name>/``.

    :func:`hsi.infer.infer` with several scenes (it calls this): ``infer(checkpoint,
    scenes=scenes, out=out)``.

    Parameters
    ----------
    checkpoint : str or Path
        What ``hsi train`` wrote (``best.ckpt`` or a classical ``model.npz``).
    scenes : list of cube paths, or a collection
        Cube files (each named by its file stem), or anything
        :func:`hsi.collection.read_collection` reads (YAML, pack ``.h5``, entries); entries
        with labels are scored.
    out : str or Path
        The folder of the per-scene folders and of the summary.
    options : InferOptions, optional
        As for :func:`hsi.infer.infer_scene`; ``**kwargs`` override fields.
    rank, world_size : int, optional
        This process's share (default: :func:`shard_context`).
    log : callable, optional
        ``log(line)`` receives one line per scene mapped again and why (default: stderr).

    Returns
    -------
    dict
        ``mapped`` and ``skipped`` (this rank's scene names), ``redone`` (``{name: why}`` of
        the mapped scenes whose earlier maps were stale), ``rank``, ``world_size`` and
        ``summary`` (the path, when this process wrote it).
    """
    from hsi._identity import file_identity
    from hsi.infer.checkpoint import load_checkpoint
    from hsi.infer.options import InferOptions

    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    opts = InferOptions.from_kwargs(options, **kwargs)
    items = _items(scenes)
    r, world = shard_context(rank, world_size)
    if opts.devices > 1:  # each scene's tile rows over the devices (hsi.infer.distributed): every process, every scene
        r, world = 0, 1
    model = load_checkpoint(checkpoint)
    state = _collection_state(checkpoint)
    ckpt = file_identity(model.source)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _pick_device(opts)
    mapped, skipped, redone, known = [], [], {}, {}
    for item in items[r::world]:
        inputs = known[item.name] = scene_inputs(ckpt, item, opts)
        complete, why = reuse_check(out / item.name, inputs)
        if complete:
            skipped.append(item.name)
            continue
        if why is not None:
            log(f"{item.name}: mapped again: {why}")
            redone[item.name] = why
        _map_again(_scene_model(model, state, item.name), item, out, opts, list(model.class_names), inputs, why)
        mapped.append(item.name)
    lightning_child = opts.devices > 1 and os.environ.get("LOCAL_RANK", "0") != "0"
    summary = None if lightning_child else _finish(out, items, model.source, r,
                                                     lambda i: known.get(i.name) or scene_inputs(ckpt, i, opts))
    return {"mapped": mapped, "skipped": skipped, "redone": redone, "rank": r, "world_size": world,
            "summary": summary}


def _pick_device(opts: Any) -> None:
    """On a GPU node, each local rank on its own device."""
    import torch

    local = os.environ.get("LOCAL_RANK") or os.environ.get("SLURM_LOCALID")
    if local is not None and opts.accelerator in ("auto", "gpu", "cuda") and torch.cuda.is_available():
        torch.cuda.set_device(int(local) % torch.cuda.device_count())


def _finish(out: Path, items: Sequence[_Item], checkpoint: str, rank: int, inputs_of: Any) -> Path | None:
    """Write the summary when every scene is complete with this run's inputs (``inputs_of(item)``; rank 0 after a
    barrier in a process group)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        if rank != 0:
            return None
    if not all(reuse_check(out / i.name, inputs_of(i))[0] for i in items):
        return None
    return write_summary(out, [i.name for i in items], checkpoint)


def _row(folder: Path, name: str) -> dict[str, Any]:
    from hsi.infer.write import MANIFEST

    manifest = json.loads((folder / MANIFEST).read_text())
    row: dict[str, Any] = {"name": name, "folder": name, "shape": manifest.get("shape"),
                           "nodata_pixels": manifest.get("nodata_pixels"), "tiles_seconds": manifest.get("tiles_seconds")}
    metrics = json.loads((folder / "metrics.json").read_text()) if (folder / "metrics.json").is_file() else {}
    for part in ("test", "labeled"):
        scores = metrics.get(part)
        if isinstance(scores, dict) and "oa" in scores:
            row[part] = {k: scores.get(k) for k in ("oa", "aa", "kappa", "pixels")}
    return row


def _pct(value: Any, scale: float = 100.0, fmt: str = ".2f%") -> str:
    """A score as table text; blank when there is none (no test pixel in that scene)."""
    if value is None or value != value:
        return ""
    return f"{scale * value:{fmt.rstrip('%')}}" + ("%" if fmt.endswith("%") else "")


def write_summary(out: Path, names: Sequence[str], checkpoint: str) -> Path:
    """``summary.json`` and ``summary.md`` of the scenes' folders (atomically); returns the JSON's path."""
    from hsi._atomic import write_bytes_atomic, write_json_atomic

    rows = [_row(out / n, n) for n in names]
    payload = {"checkpoint": str(checkpoint), "scenes": rows}
    lines = ["| scene | shape | no-data px | test OA | test AA | test kappa | labelled OA |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        test, lab = row.get("test") or {}, row.get("labeled") or {}
        lines.append(f"| {row['name']} | {' x '.join(map(str, row['shape'] or []))} | {row['nodata_pixels']} | "
                     f"{_pct(test.get('oa'))} | {_pct(test.get('aa'))} | {_pct(test.get('kappa'), 1, '.4f')} | "
                     f"{_pct(lab.get('oa'))} |")
    write_bytes_atomic(out / "summary.md", ("\n".join(lines) + "\n").encode())
    write_json_atomic(out / "summary.json", payload, indent=2)
    return out / "summary.json"
