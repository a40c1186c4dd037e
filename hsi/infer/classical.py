"""The ``model.npz`` of an ``hsi train --model svm|rf`` run, read as something the tile engine can run.

A classical model classifies one pixel's preprocessed spectrum. :class:`ClassicalNet` wraps
it as a parameter-free :class:`torch.nn.Module` that maps ``(B, C, P, P)`` windows to the
``(B, K)`` class probabilities of their centre pixels, so whole-scene maps go through the
same tile pass as the networks' (:mod:`hsi.infer.engine`, patch-centre path): the same
fitted pipeline window by window, the same no-data handling, the same outputs. Inference
uses ``1 x 1`` windows (the state's patch size is set to 1: the model reads no
neighbours), so each map pixel is the model's prediction on that pixel's spectrum after
the fitted pipeline, as ``hsi train`` predicted the test pixels.

The confidence of a map pixel is the classifier's own ``predict_proba``: for the SVM the
share of one-vs-one votes won by the chosen class, for the random forest the mean of the
trees' leaf class fractions.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hsi.classical import CLASSICAL_RUN_FORMAT, ClassicalModel, load_classical_run
from hsi.errors import CheckpointError, ModelFileError

__all__ = ["ClassicalNet", "is_classical_file", "read_classical_run"]


class ClassicalNet(torch.nn.Module):
    """A fitted classical model behind the network interface of :class:`hsi.infer.predict.TilePredictor`.

    Parameters
    ----------
    model : hsi.classical.ClassicalModel
        The fitted SVM or random forest.

    Attributes
    ----------
    num_classes : int
        ``K``, the columns of the probabilities.
    dense : bool
        False: windows are classified by their centre pixel.
    returns_probabilities : bool
        True: the outputs are probabilities already (no softmax).
    """

    dense = False
    returns_probabilities = True

    def __init__(self, model: ClassicalModel) -> None:
        super().__init__()
        self.model = model
        self.num_classes = int(model.num_classes_)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, K)`` float32 probabilities of the centre pixels of ``(B, C, P, P)`` windows (on ``x``'s device)."""
        flat = x.detach().to("cpu", torch.float32).reshape(x.shape[0], x.shape[1], -1)
        centre = flat[:, :, flat.shape[2] // 2].numpy()
        probs = self.model.predict_proba(centre).astype(np.float32)
        return torch.from_numpy(probs).to(x.device)


def is_classical_file(path: str | Path) -> bool:
    """True for a ``.npz`` path, or a zip archive with a ``meta`` entry (a classical model file, whatever its name)."""
    path = Path(path)
    if path.suffix.lower() == ".npz":
        return True
    try:
        with zipfile.ZipFile(path) as archive:
            return "meta.npy" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def read_classical_run(path: str | Path) -> tuple[ClassicalNet, dict[str, Any], dict[str, Any]]:
    """The network wrapper, the DataModule state (patch size 1) and the DataModule arguments of a ``model.npz``.

    Raises
    ------
    CheckpointError
        No such file, not a classical model file, or one saved without the run's data
        state (not written by ``hsi train``); one line naming the file.
    """
    try:
        model, run = load_classical_run(path)
    except (FileNotFoundError, ModelFileError) as err:
        detail = str(err).removeprefix(f"{path}: ")
        raise CheckpointError(
            f"checkpoint {path}: neither a deep checkpoint (best.ckpt) nor the model.npz of an svm/rf run: {detail}"
        ) from err
    state = (run or {}).get("HSIDataModule")
    if not run or run.get("format") != CLASSICAL_RUN_FORMAT or not isinstance(state, dict) or "pipeline" not in state:
        raise CheckpointError(
            f"checkpoint {path}: a {model.kind} model without the run's data state (fitted preprocessing, classes, "
            "split); use the model.npz that `hsi train --model svm|rf` writes"
        )
    state = {**state, "patch_size": 1}  # the model reads the centre pixel alone: no neighbours, no padding
    from hsi.data.checkpoint import fold_counted_from_one

    return ClassicalNet(model), state, fold_counted_from_one(dict(run.get("datamodule_hyper_parameters") or {}), state)
