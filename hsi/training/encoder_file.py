"""The encoder file of ``hsi pretrain``: a network's self-supervised encoder, reusable by ``hsi train --init``.

One ``torch.save`` mapping (``format: hsi-encoder``): the network it belongs to (registry name,
options, bands, patch), the data it was learnt on (scene names, preprocessing, wavelengths),
the :class:`~hsi.training.selfsup.SelfSupervisedReport`, and the weights of each encoder
module. :func:`apply_encoder` refuses another network or band count in one line and warns
when the training data is preprocessed otherwise (the encoder then reads other numbers).
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from hsi._atomic import write_bytes_atomic
from hsi.errors import CheckpointError, DataQualityWarning, MissingFileError

__all__ = ["ENCODER_FORMAT", "apply_encoder", "check_encoder_model", "encoder_record", "load_encoder", "save_encoder"]

ENCODER_FORMAT = "hsi-encoder"
ENCODER_VERSION = 1
#: what the encoder's numbers depend on, compared between the encoder file and the run that loads it
DATA_KEYS = ("preprocessing", "wavelengths")


def encoder_record(net: nn.Module, model: str, model_options: dict[str, Any] | None, datamodule: Any,
                   report: Any) -> dict[str, Any]:
    """The mapping :func:`save_encoder` writes, for ``net`` (registry name ``model``) pretrained on ``datamodule``."""
    encoder = net.encoder()
    wavelengths = getattr(datamodule, "wavelengths", None)
    return {
        "format": ENCODER_FORMAT, "format_version": ENCODER_VERSION, "model": model,
        "model_options": dict(model_options or {}), "num_bands": int(net.num_bands), "patch_size": int(net.patch_size),
        "data": {"scenes": list(datamodule.scene_names), "preprocessing": dict(datamodule.preprocessing),
                 "wavelengths": None if wavelengths is None else [float(w) for w in wavelengths]},
        "report": report.to_dict(),
        "state": {name: {k: v.detach().cpu() for k, v in module.state_dict().items()}
                  for name, module in encoder.modules.items()},
    }


def save_encoder(path: str | Path, record: dict[str, Any]) -> None:
    """Write ``record`` (:func:`encoder_record`) to ``path`` atomically."""
    buffer = io.BytesIO()
    torch.save(record, buffer)
    write_bytes_atomic(path, buffer.getvalue())


def load_encoder(path: str | Path) -> dict[str, Any]:
    """The record of encoder file ``path``; :class:`CheckpointError` when it is not one."""
    path = Path(path)
    if not path.is_file():
        raise MissingFileError(f"--init {path}: no such file (an encoder file written by hsi pretrain)")
    try:
        record = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file is one line
        raise CheckpointError(f"--init {path}: not an encoder file of hsi pretrain ({type(err).__name__}: {err})") from None
    if not isinstance(record, dict) or record.get("format") != ENCODER_FORMAT:
        raise CheckpointError(f"--init {path}: not an encoder file of hsi pretrain (no format: {ENCODER_FORMAT}); "
                              "a checkpoint of hsi train is resumed with --resume")
    if int(record.get("format_version", 0)) > ENCODER_VERSION:
        raise CheckpointError(f"--init {path}: encoder format {record['format_version']} is newer than this release "
                              f"reads ({ENCODER_VERSION}); upgrade hsi")
    return record


def apply_encoder(net: nn.Module, record: dict[str, Any], path: str | Path, datamodule: Any = None,
                  model: str | None = None) -> None:
    """Load the encoder weights of ``record`` (read from ``path``) into ``net``.

    Refuses a network of another model (``model``: the run's registry name), options or band count
    (:class:`CheckpointError`, naming both); warns (:class:`DataQualityWarning`) when ``datamodule`` preprocesses the data otherwise.
    """
    check_encoder_model(record, path, model)
    finder = getattr(net, "encoder", None)
    encoder = finder() if callable(finder) else None
    if encoder is None:
        raise CheckpointError(f"--init {path}: {type(net).__name__} has no encoder to start (the file holds "
                              f"{record['model']}'s)")
    if int(record["num_bands"]) != int(net.num_bands):
        raise CheckpointError(f"--init {path}: the encoder reads {record['num_bands']} bands, this run's data has "
                              f"{net.num_bands} after preprocessing; pretrain and train with the same data options")
    try:
        for name, state in record["state"].items():
            encoder.modules[name].load_state_dict(state)
    except (KeyError, RuntimeError) as err:
        raise CheckpointError(f"--init {path}: the encoder of {record['model']} "
                              f"{record['model_options'] or ''} does not fit this network "
                              f"({type(net).__name__}): {str(err).splitlines()[0]}") from None
    if datamodule is not None:
        _warn_other_data(record, datamodule, path)


def check_encoder_model(record: dict[str, Any], path: str | Path, model: str | None) -> None:
    """:class:`CheckpointError` when the encoder of ``record`` belongs to another network than ``model``."""
    if model is not None and model != record["model"]:
        raise CheckpointError(f"--init {path}: the encoder is {record['model']}'s, this run trains {model}; "
                              f"give --model {record['model']}")


def _warn_other_data(record: dict[str, Any], datamodule: Any, path: str | Path) -> None:
    """Warn when the run's preprocessing or wavelengths differ from the encoder's."""
    wavelengths = getattr(datamodule, "wavelengths", None)
    here = {"preprocessing": dict(getattr(datamodule, "preprocessing", {}) or {}),
            "wavelengths": None if wavelengths is None else [float(w) for w in wavelengths]}
    differ = [key for key in DATA_KEYS if record["data"].get(key) != here[key]]
    if differ:
        warnings.warn(f"--init {path}: the encoder was pretrained with other {' and '.join(differ)} than this run "
                      f"(encoder: {record['data'].get(differ[0])}; run: {here[differ[0]]}); it reads other numbers here",
                      DataQualityWarning, stacklevel=2)
