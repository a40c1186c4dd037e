"""Checkpoints: reading one, and the ``HSIDataModule`` state that ``state_dict`` writes into it.

The state is JSON only: scene name, class names, palette, label mapping, wavelengths, band
counts, image shape, patch size, padding, and the split and fitted pipeline, so a
checkpoint reproduces the data without refitting anything. :func:`read_checkpoint` is the
one reader of checkpoint files (resume, inference, ``HSICLI``, evaluation): tensors and
plain values only (``weights_only=True``), so loading a file runs none of its code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hsi.errors import CheckpointError

__all__ = ["STATE_FORMAT", "STATE_VERSION", "check_state", "make_state", "read_checkpoint"]

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
        No such file, or a file that is not a readable checkpoint (truncated, foreign).
    """
    import torch

    if not Path(path).is_file():
        raise CheckpointError(f"{option}: {str(path)!r}: no such checkpoint file")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # a truncated or foreign file
        raise CheckpointError(f"{option}: {str(path)!r} is not a readable Lightning checkpoint ({err})") from err
    if not isinstance(ckpt, dict):
        raise CheckpointError(f"{option}: {str(path)!r} holds a {type(ckpt).__name__}, not a Lightning checkpoint")
    return ckpt


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
        "num_bands_in": int(scene["num_bands_in"]),
        "num_bands": num_bands,
        "num_classes": len(scene["class_names"]),
        "image_shape": list(image_shape),
        "patch_size": patch_size,
        "padding": padding,
        "split": cache_state["split"],
        "pipeline": cache_state["pipeline"],
    }


def check_state(state_dict: Any) -> None:
    """Raise ``ValueError`` unless ``state_dict`` is a state of this format and version with the needed keys."""
    if not isinstance(state_dict, dict) or state_dict.get("format") != STATE_FORMAT:
        raise ValueError(
            f"HSIDataModule.load_state_dict: expected a state with format {STATE_FORMAT!r}, "
            f"found {state_dict.get('format') if isinstance(state_dict, dict) else type(state_dict).__name__!r}"
        )
    if state_dict.get("format_version") != STATE_VERSION:
        raise ValueError(
            f"HSIDataModule.load_state_dict: unsupported format_version {state_dict.get('format_version')!r}, "
            f"this version reads {STATE_VERSION}"
        )
    missing = [k for k in _REQUIRED if k not in state_dict]
    if missing:
        raise ValueError(f"HSIDataModule.load_state_dict: state lacks keys {missing}")
