"""``infer_scenes``: one checkpoint, many scenes; ``out/<name>/`` per scene and one summary table.

Each scene is mapped by :func:`hsi.infer.infer_scene` into ``out/<name>/`` (the usual
outputs and manifest ``inference.json``), its cube brought onto the checkpoint's band grid
first when the checkpoint was trained on a collection (:mod:`hsi.data.sources.bands`).

Sharding: the scenes are dealt over the processes, scene ``i`` to rank ``i % world_size``
(ranks from an initialised ``torch.distributed`` group, else ``RANK`` / ``WORLD_SIZE`` as
``torchrun`` sets them, else ``SLURM_PROCID`` / ``SLURM_NTASKS``); each rank maps its own
scenes in one process on its own device. A single large scene is still sharded by tile
rows with ``devices > 1`` (:func:`hsi.infer.infer_scene`); every process then takes every
scene in turn, as Lightning's ranks of one tile pass.

Resuming: a scene whose folder holds a complete manifest of the same checkpoint, every
file it lists matching its recorded size and SHA-256, is skipped; an interrupted scene
left no committed outputs (the single-scene transaction) and is mapped again.

The summary (``summary.json``, ``summary.md``) is written from the scenes' manifests and
metrics once every scene is complete (by rank 0 after a barrier in a process group, else
by the rank that completes the last scene), so it is the same whoever writes it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hsi.errors import CollectionError

__all__ = ["SUMMARY_FILES", "infer_scenes", "scene_complete", "shard_context"]

SUMMARY_FILES = ("summary.json", "summary.md")


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


def scene_complete(folder: Path, checkpoint: str) -> bool:
    """True when ``folder`` holds a complete map of ``checkpoint``: manifest complete, every listed file intact."""
    from hsi.infer.write import MANIFEST
    from hsi.transaction import read_manifest, verify_manifest

    data = read_manifest(folder, MANIFEST)
    if data is None or data.get("status") != "complete" or data.get("checkpoint") != str(checkpoint):
        return False
    return not verify_manifest(folder, MANIFEST)


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
    return dataclasses.replace(model, split_state=split, scene_name=name, georef=None, pipeline=pipeline,
                               fit_per_scene=model.fit_per_scene and not own)


def _map_one(model: Any, item: _Item, out: Path, opts: Any, union: list[str]) -> None:
    from hsi.infer.api import infer_scene

    entry = item.entry
    cube, truth = _scene_input(item, union)
    infer_scene(model, cube, cube_key=getattr(entry, "cube_key", None), layout=getattr(entry, "layout", None),
                labels=truth, out=out / item.name, options=opts)


def infer_scenes(checkpoint: str | Path, scenes: Any, out: str | Path, *, options: Any = None, rank: int | None = None,
                 world_size: int | None = None, **kwargs: Any) -> dict[str, Any]:
    """Map every scene of ``scenes`` with ``checkpoint`` into ``out/<name>/``.

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

    Returns
    -------
    dict
        ``mapped`` and ``skipped`` (this rank's scene names), ``rank``, ``world_size`` and
        ``summary`` (the path, when this process wrote it).
    """
    from hsi.infer.checkpoint import load_checkpoint
    from hsi.infer.options import InferOptions

    opts = InferOptions.from_kwargs(options, **kwargs)
    items = _items(scenes)
    r, world = shard_context(rank, world_size)
    if opts.devices > 1:  # each scene's tile rows over the devices (hsi.infer.distributed): every process, every scene
        r, world = 0, 1
    model = load_checkpoint(checkpoint)
    state = _collection_state(checkpoint)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _pick_device(opts)
    mapped, skipped = [], []
    for item in items[r::world]:
        if scene_complete(out / item.name, model.source):
            skipped.append(item.name)
            continue
        _map_one(_scene_model(model, state, item.name), item, out, opts, list(model.class_names))
        mapped.append(item.name)
    lightning_child = opts.devices > 1 and os.environ.get("LOCAL_RANK", "0") != "0"
    summary = None if lightning_child else _finish(out, items, model.source, r)
    return {"mapped": mapped, "skipped": skipped, "rank": r, "world_size": world, "summary": summary}


def _pick_device(opts: Any) -> None:
    """On a GPU node, each local rank on its own device."""
    import torch

    local = os.environ.get("LOCAL_RANK") or os.environ.get("SLURM_LOCALID")
    if local is not None and opts.accelerator in ("auto", "gpu", "cuda") and torch.cuda.is_available():
        torch.cuda.set_device(int(local) % torch.cuda.device_count())


def _finish(out: Path, items: Sequence[_Item], checkpoint: str, rank: int) -> Path | None:
    """Write the summary when every scene is complete (rank 0 after a barrier in a process group)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        if rank != 0:
            return None
    if not all(scene_complete(out / i.name, checkpoint) for i in items):
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
    from hsi._atomic import write_bytes_atomic

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
    write_bytes_atomic(out / "summary.json", (json.dumps(payload, indent=2) + "\n").encode())
    return out / "summary.json"
