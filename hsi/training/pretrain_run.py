"""``run_pretraining``: ``hsi pretrain``, a network's encoder learnt self-supervised and written to a file.

The scene is opened with the data options ``hsi train`` takes (the same split, so the same
preprocessing fitted on the same training pixels: ``hsi train --init`` with those options reads
the numbers the encoder learnt from), the network is built as ``hsi train`` builds it, and
:func:`hsi.training.selfsup.start_encoder` learns its encoder from every pixel's spectrum (never
a label). The encoder file is written atomically (:mod:`hsi.training.encoder_file`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning as L
import torch

from hsi.data import HSIDataModule
from hsi.errors import OptionError, RunOutputError
from hsi.models import (
    DEFAULT_MODEL,
    build_model,
    channels_last_weights,
    get_model_class,
)
from hsi.models.base import PatchClassifier
from hsi.training.deep_run import DeepBackend
from hsi.training.encoder_file import encoder_record, save_encoder
from hsi.training.selfsup import start_encoder
from hsi.training.task import training_defaults

__all__ = ["check_pretrainable", "run_pretraining"]


def check_pretrainable(model: str) -> None:
    """:class:`OptionError` unless registry network ``model`` has an encoder to pretrain."""
    cls = get_model_class(model)
    if getattr(cls, "encoder", PatchClassifier.encoder) is PatchClassifier.encoder:
        raise OptionError("model", model, "a network with an encoder to pretrain (ssnet, the default); "
                                          f"{model} has none")


def check_target(out: str | Path, overwrite: bool) -> Path:
    """The encoder file's path; refuses a folder, and an existing file unless ``overwrite``."""
    path = Path(out)
    if path.is_dir():
        raise OptionError("out", str(out), "a file name for the encoder (this path is a folder)")
    if path.exists() and not overwrite:
        raise RunOutputError(f"--out {out}: the file exists; give --overwrite to replace it, or another --out")
    if not path.parent.is_dir():
        raise OptionError("out", str(out), f"a file in an existing folder ({path.parent} does not exist)")
    return path


def run_pretraining(data: dict[str, Any], model: dict[str, Any], out: str | Path, seed: int = 0,
                    threads: int | None = 1, overwrite: bool = False) -> dict[str, Any]:
    """Pretrain the encoder of network ``model["model"]`` on the scene of ``data`` and write it to ``out``.

    ``model`` holds ``model``, ``model_options``, ``ssl_steps`` and ``ssl_exclude_test`` as
    :class:`~hsi.training.task.HSIClassifier` takes them. Returns the report (what
    ``metrics.json`` records as ``ssl``) with ``out``.
    """
    name = str(model.get("model") or DEFAULT_MODEL)
    check_pretrainable(name)
    target = check_target(out, overwrite)
    if threads is not None:
        torch.set_num_threads(int(threads))
    backend = DeepBackend(name)
    data = backend.recommend({**data, "seed": seed})
    L.seed_everything(seed, workers=True, verbose=False)
    datamodule = HSIDataModule(**data)
    datamodule.prepare_data()
    datamodule.setup("fit")
    backend.announce()
    options = dict(model.get("model_options") or {})
    net = channels_last_weights(build_model(name, datamodule.num_bands, datamodule.num_classes,
                                            datamodule.patch_size, **options))
    ssl = {**training_defaults(), **model}  # the options not given: HSIClassifier's defaults, defined there only
    report = start_encoder(net, datamodule, None, int(ssl["ssl_steps"]), bool(ssl["ssl_exclude_test"]), seed=seed,
                           model=name, progress=True)  # one process: the steps counted once past a few seconds
    save_encoder(target, encoder_record(net, name, options, datamodule, report))
    return {**report.to_dict(), "out": str(target), "model": name}
