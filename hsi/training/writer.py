"""``PredictionWriter``: what ``trainer.predict`` (and ``LightningCLI predict``) writes to disk.

``HSIClassifier.predict_step`` returns the probabilities and the centre coordinates of
every patch; this callback collects them and writes, atomically, into ``output_dir``:

- ``predictions.npz``: ``rows``, ``cols``, ``y_pred`` and ``labels`` (the truth) numbered as the
  maps number classes (``1..K``, 0 unlabelled; ``label_convention`` says so), ``class_names``
  when the task knows them and, with ``probabilities=True``, ``probs`` ``(N, K)``;
- ``labels.npy``: the ``H x W`` map of predicted classes ``1..K`` (0 where nothing was
  predicted), when the DataModule knows the scene's size. With ``predict_on="all"`` this
  is the whole-scene map.

Under DDP each rank writes its own shard (``predictions-rank<r>.npz``, ``labels-rank<r>.npy``).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import torch
from lightning.pytorch.callbacks import BasePredictionWriter

from hsi._atomic import write_bytes_atomic
from hsi.training.report import prediction_arrays

__all__ = ["PredictionWriter"]


class PredictionWriter(BasePredictionWriter):
    """Write per-pixel predictions with coordinates at the end of ``predict``.

    Parameters
    ----------
    output_dir : str
        Folder the files are written into (created if missing).
    probabilities : bool
        Also store the class probabilities ``(N, K)`` in ``predictions.npz``.
    """

    def __init__(self, output_dir: str = "predictions", probabilities: bool = True) -> None:
        super().__init__(write_interval="epoch")
        self.output_dir = output_dir
        self.probabilities = probabilities

    def _suffix(self, trainer: Any) -> str:
        return f"-rank{trainer.global_rank}" if trainer.world_size > 1 else ""

    def write_on_epoch_end(self, trainer: Any, pl_module: Any, predictions: Any, batch_indices: Any) -> None:
        """Gather the batches of every predict loader and write the files."""
        batches = [b for group in (predictions if predictions and isinstance(predictions[0], list) else [predictions])
                   for b in group]
        if not batches or not isinstance(batches[0], dict):
            raise ValueError("PredictionWriter: predict_step must return dicts with 'probs' and 'coords' "
                             "(HSIClassifier does when the predict batches carry coordinates)")
        probs = torch.cat([b["probs"].float().cpu() for b in batches]).numpy()
        coords = torch.cat([b["coords"].cpu() for b in batches]).numpy().astype(np.int64)
        labels = torch.cat([b["labels"].cpu() for b in batches]).numpy().astype(np.int64)
        out = Path(self.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        suffix = self._suffix(trainer)
        names = getattr(pl_module, "hparams", {}).get("class_names")
        arrays = {"rows": coords[:, 0], "cols": coords[:, 1],
                  **prediction_arrays(names, y_pred=probs.argmax(axis=1), labels=labels)}
        if self.probabilities:
            arrays["probs"] = probs.astype(np.float32)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        write_bytes_atomic(out / f"predictions{suffix}.npz", buffer.getvalue())
        shape = getattr(trainer.datamodule, "image_shape", None) if trainer.datamodule is not None else None
        if shape is not None:
            class_map = np.zeros(tuple(shape), dtype=np.int32)
            class_map[coords[:, 0], coords[:, 1]] = arrays["y_pred"]
            buffer = io.BytesIO()
            np.save(buffer, class_map)
            write_bytes_atomic(out / f"labels{suffix}.npy", buffer.getvalue())
