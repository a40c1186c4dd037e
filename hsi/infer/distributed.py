"""Several devices: the tile pass sharded over processes by Lightning's ``Trainer.predict``.

Each rank takes a contiguous shard of tile rows (:meth:`hsi.infer.engine.TileJob.shard`),
runs the same loop as one process and writes its own rows of the shared memory-mapped
maps; rank 0 creates the files before the others open them. With the ``ddp`` strategy
Lightning starts the other ranks by running the calling script again, so
:func:`run_distributed` is called on every rank; it returns the rank, and only rank 0
goes on to write the outputs. The process group is closed before returning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, Dataset

from hsi.infer.arrays import ResultArrays
from hsi.infer.engine import TileJob, add_tile, maps_only
from hsi.infer.predict import TilePredictor

__all__ = ["TileInferenceModule", "run_distributed"]


class _TileIndices(Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        return i


class TileInferenceModule(pl.LightningModule):
    """A LightningModule whose predict loop is this rank's share of the tile pass.

    Parameters
    ----------
    job : TileJob
    folder : Path
        Where the shared ``.partial`` maps live.
    probabilities : bool
        Keep the per-class probabilities.
    batch_size : int
        Windows per forward pass (patch-centre models).
    tta : bool
        Test-time augmentation.
    progress : bool
        Progress bar on rank 0.
    precision : str
        Precision of the forward passes (:class:`~hsi.infer.predict.TilePredictor`).
    """

    def __init__(self, job: TileJob, folder: Path, *, probabilities: bool, batch_size: int, tta: bool,
                 progress: bool, precision: str = "32-true") -> None:
        super().__init__()
        self.net = job.model.net
        self.job = job
        self.folder = Path(folder)
        self.keep_probabilities = probabilities
        self.window_batch = batch_size
        self.tta = tta
        self.show_progress = progress
        self.precision_name = precision
        self.tiles: list[tuple[int, int]] = []
        self.owned = (0, 0)
        self.results: ResultArrays | None = None

    def setup(self, stage: str) -> None:
        """This rank's tiles and owned rows."""
        self.tiles, self.owned = self.job.shard(self.trainer.global_rank, self.trainer.world_size)

    def predict_dataloader(self) -> DataLoader:
        """Tile indices of this rank, in row order (no sampler: the shard is already disjoint)."""
        return DataLoader(_TileIndices(len(self.tiles)), batch_size=None, shuffle=False)

    def on_predict_start(self) -> None:
        g, model = self.job.grid, self.job.model
        args = ((g.height, g.width), model.num_classes, self.keep_probabilities, self.folder)
        rgb = self.job.rgb_bands is not None
        if self.trainer.global_rank == 0:
            self.results = ResultArrays(*args, create=True, rgb=rgb)
        self.trainer.strategy.barrier("hsi-infer-create")
        if self.trainer.global_rank != 0:
            self.results = ResultArrays(*args, create=False, rgb=rgb)
        self.predictor = TilePredictor(self.net, dense=model.dense, halo=model.halo, patch_size=model.patch_size,
                                       device=self.device, batch_size=self.window_batch, tta=self.tta,
                                       precision=self.precision_name)
        self.blender = self.job.blender(self.results, self.owned)
        self.maps = maps_only(self.results, self.blender)
        self.buffer = self.job.block_buffer(self.device)
        from hsi._progress import progress_bar

        self.bar = progress_bar(len(self.tiles), "tiles", "tile", leave=False,
                                show=self.show_progress and self.trainer.global_rank == 0)

    def predict_step(self, batch: Any, batch_idx: int) -> None:
        """Compute and blend one tile (``batch`` is its index in this rank's list)."""
        y, x = self.tiles[int(batch)]
        # read in this step, so torch's intra-op threads are free for the scaling and the maps
        scale_on = self.predictor.device if self.predictor.scales_on_device else None
        block, nodata = self.job.load(y, x, self.results, self.owned, self.buffer, threads=True, device=scale_on)
        add_tile(self.predictor, self.blender, self.maps, y, x, block, nodata, threads=True)
        self.bar.update(1)

    def on_predict_end(self) -> None:
        self.blender.finish(self.job.grid.height)
        self.bar.close()
        self.results.flush()
        self.trainer.strategy.barrier("hsi-infer-done")


def _leave_process_group() -> None:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


def run_distributed(job: TileJob, folder: Path, *, accelerator: str, devices: int, strategy: str,
                    probabilities: bool, batch_size: int, tta: bool, progress: bool,
                    precision: str = "32-true") -> tuple[int, ResultArrays]:
    """Run the tile pass through ``Trainer.predict``; returns ``(global_rank, results)``.

    On rank 0 ``results`` holds every row once all ranks are done (the maps are still
    under their temporary names: commit them after writing the other outputs).
    """
    module = TileInferenceModule(job, folder, probabilities=probabilities, batch_size=batch_size, tta=tta,
                                 progress=progress, precision=precision)
    trainer = pl.Trainer(accelerator=accelerator, devices=devices, strategy=strategy, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         use_distributed_sampler=False, inference_mode=True)
    try:
        trainer.predict(module, return_predictions=False)
        rank = int(trainer.global_rank)
    except BaseException:
        if module.results is not None and trainer.global_rank == 0:
            module.results.discard()  # no half-written map left under a temporary name
        raise
    finally:
        _leave_process_group()
    return rank, module.results
