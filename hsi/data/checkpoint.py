"""Checkpoints: reading one, and the ``HSIDataModule`` state that ``state_dict`` writes into it.

The state is JSON only (:func:`make_state`), so a checkpoint reproduces the data without refitting anything; an
earlier single-scene state loads as its collection of one (:func:`saved_collection`). :func:`read_checkpoint` is the
one reader of checkpoint files (resume, inference, ``HSICLI``, evaluation): tensors and plain values only
(``weights_only=True``), so loading a file runs none of its code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hsi.errors import CheckpointError

__all__ = ["STATE_FORMAT", "STATE_VERSION", "check_state", "fold_counted_from_one", "make_state", "read_checkpoint",
           "saved_collection"]

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


def make_state(state: dict[str, Any], *, name: str, num_bands: int, patch_size: int, padding: str) -> dict[str, Any]:
    """The checkpoint state of the DataModule's scenes (one or several): the keys of one scene (the first scene's
    split and shape, for readers of one scene) plus ``collection``, the whole shared state (grid, classes, scenes,
    splits, pipelines)."""
    first, grid, names = state["scenes"][0], state["grid"], list(state["class_names"])
    return {
        "format": STATE_FORMAT, "format_version": STATE_VERSION, "scene_name": name, "class_names": names,
        "palette": state["palette"], "label_values": list(state.get("label_values") or range(1, len(names) + 1)),
        "wavelengths": grid, "grid_fwhm": state.get("grid_fwhm"), "georef": state.get("georef"),
        "num_bands_in": len(grid) if grid is not None else int(first["n_bands"]),
        "num_bands": num_bands, "num_classes": len(names), "image_shape": list(first["shape"]),
        "patch_size": patch_size, "padding": padding, "split": state["splits"][0],
        "pipeline": state["pipeline"], "collection": state,
    }


def saved_collection(state_dict: dict[str, Any]) -> dict[str, Any]:
    """The ``collection`` state of a checkpoint's DataModule state, with its top-level ``split`` (the first scene's)
    and ``pipeline`` (what a reader of one scene edits); an earlier hsi's single-scene state as its collection of one,
    whose scene facts are read from the scene again."""
    s = state_dict
    if isinstance(s.get("collection"), dict):
        col = s["collection"]
        return {**col, "splits": [s["split"], *col["splits"][1:]], "pipeline": s["pipeline"]}
    return {"grid": s.get("wavelengths"), "grid_fwhm": s.get("grid_fwhm"), "class_names": list(s["class_names"]),
            "palette": s.get("palette"), "label_values": s.get("label_values"), "georef": s.get("georef"),
            "scenes": None, "splits": [s["split"]], "pipeline": s["pipeline"], "pipelines": None}


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
