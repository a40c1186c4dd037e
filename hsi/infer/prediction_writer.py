"""``ClassMapWriter``: a Lightning prediction writer that paints predict-loader outputs into a map.

For ``Trainer.predict`` / ``LightningCLI predict`` with :class:`hsi.data.HSIDataModule`
(``predict_on="all"`` gives the whole scene): every batch's class probabilities are
written at their pixel coordinates into ``labels.npy`` (``(H, W)``, classes ``1..K``, 0
where nothing was predicted) and ``confidence.npy`` in ``output_dir``, memory-mapped, so
the map equals the one :func:`hsi.infer.infer_scene` makes for a patch-centre model. Under
DDP every rank writes its own pixels into the same files (rank 0 creates them first).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from lightning.pytorch.callbacks import BasePredictionWriter

from hsi.errors import OptionError
from hsi.infer.arrays import ResultArrays

__all__ = ["ClassMapWriter"]


class ClassMapWriter(BasePredictionWriter):
    """Write predicted classes per pixel while predicting.

    Parameters
    ----------
    output_dir : str
        Folder of ``labels.npy`` and ``confidence.npy`` (created).
    """

    def __init__(self, output_dir: str) -> None:
        super().__init__(write_interval="batch")
        self.output_dir = Path(output_dir)
        self.results: ResultArrays | None = None

    def on_predict_start(self, trainer: Any, pl_module: Any) -> None:
        dm = trainer.datamodule
        if dm is None or not hasattr(dm, "image_shape"):
            raise OptionError("datamodule", None if dm is None else type(dm).__name__,
                              "an HSIDataModule (ClassMapWriter needs the scene's size and classes)")
        args = (dm.image_shape, dm.num_classes, False, self.output_dir)
        if trainer.global_rank == 0:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            self.results = ResultArrays(*args, create=True)
        trainer.strategy.barrier("hsi-map-writer-create")
        if trainer.global_rank != 0:
            self.results = ResultArrays(*args, create=False)

    def write_on_batch_end(self, trainer: Any, pl_module: Any, prediction: Any, batch_indices: Any, batch: Any,
                           batch_idx: int, dataloader_idx: int) -> None:
        """Paint the batch's pixels: ``prediction`` is ``{"probs", "coords"}`` or the probabilities alone."""
        if isinstance(prediction, dict):
            probs, coords = prediction["probs"], prediction["coords"]
        else:
            probs, coords = prediction, batch[2]
        probs = probs.detach().float().cpu().numpy()
        coords = np.asarray(coords.detach().cpu().numpy() if hasattr(coords, "detach") else coords, dtype=np.int64)
        rows, cols = coords[:, 0], coords[:, 1]
        self.results.labels[rows, cols] = probs.argmax(1) + 1
        self.results.confidence[rows, cols] = probs.max(1)

    def on_predict_end(self, trainer: Any, pl_module: Any) -> None:
        self.results.flush()
        trainer.strategy.barrier("hsi-map-writer-done")
        if trainer.global_rank == 0:
            self.results.commit()
        self.results = None
