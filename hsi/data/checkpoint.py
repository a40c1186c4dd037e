"""Checkpoints: reading one, and the ``HSIDataModule`` state that ``state_dict`` writes into it.

The state is JSON only: scene name, class names, palette, label mapping, wavelengths, the
scene's georeference (:meth:`hsi.io.georef.GeoRef.to_dict`), band counts, image shape, patch size, padding, and the split and fitted pipeline, so a
checkpoint reproduces the data without refitting anything. :func:`read_checkpoint` is the
one reader of checkpoint files (resume, inference, ``HSICLI``, evaluation): tensors and
plain values only (``weights_only=True``), so loading a file runs none of its code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hsi.errors import CheckpointError

__all__ = ["STATE_FORMAT", "STATE_VERSION", "check_state", "fold_counted_from_one", "make_collection_state",
           "make_state", "read_checkpoint"]

STATE_FORMAT = "hsi.data.HSIDataModule"
STATE_VERSION = 1
#: keys of the state that ``load_state_dict`` needs
_REQUIRED = ("split", "pipeline", "patch_size", "padding", "class_names")


def read_checkpoint(path: str | Path, option: str = "checkpoint") -> dict[str, Any]:
    """The contents of the Lightning checkpoint at ``path``.

    Parameters
    ----------
    path : str or Path
        The checkpoint file.
    option : str
        The option that named it, for the error message (``resume``, ``checkpoint``).

    Raises
    ------
    CheckpointError
        No such file, or a file that is not a checkpoint written by hsi (truncated, foreign,
        pickled objects). The message says what the file looks like instead of repeating
        torch's advice to load it with ``weights_only=False``, which would run its code.
    """
    import torch

    from hsi._paths import check_checkpoint_file

    check_checkpoint_file(path, option)
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # a truncated or foreign file; torch's message is not shown (see above)
        raise CheckpointError(
            f"{option}: {str(path)!r} is not a checkpoint written by hsi: {_what_file(path, err)}"
        ) from err
    if not isinstance(ckpt, dict) or not isinstance(ckpt.get("state_dict"), dict):
        what = "a dict without a 'state_dict'" if isinstance(ckpt, dict) else f"a {type(ckpt).__name__}"
        raise CheckpointError(
            f"{option}: {str(path)!r} is not a checkpoint written by hsi: it holds {what}, not a Lightning checkpoint"
        )
    if isinstance(ckpt.get("datamodule_hyper_parameters"), dict):
        ckpt["datamodule_hyper_parameters"] = fold_counted_from_one(ckpt["datamodule_hyper_parameters"],
                                                                    ckpt.get("HSIDataModule"))
    return ckpt


def fold_counted_from_one(hparams: dict[str, Any], state: Any) -> dict[str, Any]:
    """``hparams`` with ``fold`` counted from 1, as it is now, where the checkpoint counted it from 0.

    Earlier versions recorded the DataModule's ``fold`` from 0; the split in ``state``
    always records it from 0 (``block_split``'s ``fold``). Where the two are equal the
    checkpoint is an old one and its ``fold`` is raised by one, so it loads and gives the
    same split.
    """
    fold = hparams.get("fold")
    split = state.get("split") if isinstance(state, dict) else None
    if split is None and isinstance(state, dict) and isinstance(state.get("collection"), dict):
        split = (state["collection"].get("splits") or [None])[0]
    recorded = (split.get("params") or {}).get("fold") if isinstance(split, dict) else None
    if fold is None or recorded is None or int(fold) != int(recorded):
        return hparams
    return {**hparams, "fold": int(fold) + 1}


def _what_file(path: str | Path, err: BaseException) -> str:
    """What a file that ``torch.load(weights_only=True)`` refused looks like, in words."""
    if "Unsupported global" in str(err):
        return ("it holds pickled Python objects besides tensors and plain values, which hsi never writes "
                "and does not load (unpickling them could run code from the file)")
    with open(path, "rb") as f:
        head = f.read(4096)
    if not head:
        return "the file is empty"
    if head.startswith(b"PK"):
        return "a zip archive (e.g. a .npz) that is not a PyTorch checkpoint, or a truncated checkpoint"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "not a PyTorch file (random or truncated bytes, or another format)"
    return "a text file"


def make_state(
    cache_state: dict[str, Any],
    *,
    num_bands: int,
    image_shape: tuple[int, int],
    patch_size: int,
    padding: str,
) -> dict[str, Any]:
    """The checkpoint state from a cache's JSON state (``split``, ``pipeline``, ``scene``) and the geometry."""
    scene = cache_state["scene"]
    return {
        "format": STATE_FORMAT,
        "format_version": STATE_VERSION,
        "scene_name": scene["name"],
        "class_names": list(scene["class_names"]),
        "palette": scene["palette"],
        "label_values": list(scene["label_values"]),
        "wavelengths": scene.get("wavelengths"),
        "grid_fwhm": scene.get("fwhm"),
        "georef": scene.get("georef"),
        "num_bands_in": int(scene["num_bands_in"]),
        "num_bands": num_bands,
        "num_classes": len(scene["class_names"]),
        "image_shape": list(image_shape),
        "patch_size": patch_size,
        "padding": padding,
        "split": cache_state["split"],
        "pipeline": cache_state["pipeline"],
    }


def make_collection_state(state: dict[str, Any], *, name: str, num_bands: int, patch_size: int,
                          padding: str) -> dict[str, Any]:
    """The checkpoint state of several scenes: the single-scene keys (the first scene's split and shape, for readers
    of one scene) plus ``collection``, the whole shared state (grid, classes, scenes, splits, pipelines)."""
    first = state["scenes"][0]
    grid = state["grid"]
    return {
        "format": STATE_FORMAT, "format_version": STATE_VERSION, "scene_name": name,
        "class_names": list(state["class_names"]), "palette": state["palette"],
        "label_values": list(range(1, len(state["class_names"]) + 1)), "wavelengths": grid,
        "grid_fwhm": state.get("grid_fwhm"), "georef": None,
        "num_bands_in": len(grid) if grid is not None else int(first["n_bands"]),
        "num_bands": num_bands, "num_classes": len(state["class_names"]), "image_shape": list(first["shape"]),
        "patch_size": patch_size, "padding": padding, "split": state["splits"][0],
        "pipeline": state["pipeline"], "collection": state,
    }


def check_state(state_dict: Any) -> None:
    """Raise :class:`CheckpointError` unless ``state_dict`` is a state of this format, version and keys."""
    if not isinstance(state_dict, dict) or state_dict.get("format") != STATE_FORMAT:
        raise CheckpointError(
            f"HSIDataModule.load_state_dict: expected a state with format {STATE_FORMAT!r}, "
            f"found {state_dict.get('format') if isinstance(state_dict, dict) else type(state_dict).__name__!r}"
        )
    if state_dict.get("format_version") != STATE_VERSION:
        raise CheckpointError(
            f"HSIDataModule.load_state_dict: unsupported format_version {state_dict.get('format_version')!r}, "
            f"this version reads {STATE_VERSION}"
        )
    missing = [k for k in _REQUIRED if k not in state_dict]
    if missing:
        raise CheckpointError(f"HSIDataModule.load_state_dict: state lacks keys {missing}")
