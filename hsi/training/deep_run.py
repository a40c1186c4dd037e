"""The deep networks as a :class:`~hsi.training.backend.RunBackend`: Lightning fit, best checkpoint, refit, test.

:class:`DeepBackend` builds the :class:`~hsi.training.task.HSIClassifier` and checks the
devices before the output folder is opened, fits with early stopping on validation OA (the
network's per-pixel path started from a full-batch fit first, :mod:`hsi.training.pretrain`) and
``best.ckpt`` / ``last.ckpt`` checkpoints (``last.ckpt`` at the end of every epoch, for ``--resume``: an
interrupt keeps the one of the last finished epoch, never a state saved mid-epoch or mid-validation,
which Lightning cannot resume),
refits the classifier layer of ``best.ckpt`` on the training pixels (``RunOptions.refit``,
:mod:`hsi.training.refit`), then predicts the test pixels with it in this process alone. The registry's
recommended PCA (3-D models on many bands) and patch size (the window a model reads) are
applied here when none was given.
"""

from __future__ import annotations

import inspect
import logging
import os
import shutil
import signal
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback, EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger, Logger

from hsi.data import HSIDataModule
from hsi.errors import OptionError
from hsi.training.backend import Fitted, Settings
from hsi.training.best_checkpoint import BestCheckpoint
from hsi.training.config import TrainConfig
from hsi.training.outputs import final_path
from hsi.training.progress import progress_setup
from hsi.training.refit import refit_checkpoint
from hsi.training.results import evaluate
from hsi.training.resume import EpochSeed, RunRecord
from hsi.training.task import HSIClassifier

__all__ = ["CompileNetwork", "DeepBackend", "apply_recommended_patch_size", "apply_recommended_pca", "apply_recommended_scaling", "check_devices", "make_trainer"]

log = logging.getLogger("hsi.training")


def raw_band_count(data: dict[str, Any]) -> int:
    """Bands of the run's cube before preprocessing (within its ``wavelength_range``); read from the header where the
    format allows."""
    from hsi.data.scene_source import load_source
    from hsi.scenes.synthetic import make_synthetic_scene

    probe = HSIDataModule(**data)
    source = probe.source
    if len(probe.collection.entries) > 1:  # the collection's common band grid
        return probe.raw_band_count()
    if source.wavelength_range is not None:  # the bands within the range: known once the scene's are read
        return int(load_source(source).cube.shape[2])
    if source.kind == "files":
        from hsi.io import open_cube

        with open_cube(source.cube_path, key=source.cube_key, layout=source.layout) as cube:
            return int(cube.shape[2])
    if source.kind == "synthetic":
        default = inspect.signature(make_synthetic_scene).parameters["bands"].default
        return int(source.scene_options.get("bands", default))
    return int(load_source(source).cube.shape[2])


def apply_recommended_pca(data: dict[str, Any], model: str, notes: list[str] | None = None) -> dict[str, Any]:
    """``data`` with the registry's recommended PCA for ``model`` (3-D models on many raw bands), said on stderr (or
    added to ``notes``, to be said when training starts)."""
    from hsi.models import get_model_class, recommended_pca

    if getattr(get_model_class(model), "RECOMMENDED_PCA", None) is None:
        return data
    bands = raw_band_count(data)
    components = recommended_pca(model, bands)
    if components is None:
        return data
    _say(f"{model} on {bands} raw bands: applying PCA to {components} components fitted on the training pixels, as "
         "the model registry recommends (3-D convolutions over every band are slow); give --pca none to keep them all",
         notes)
    return {**data, "pca": components}


def apply_recommended_patch_size(data: dict[str, Any], model: str, notes: list[str] | None = None) -> dict[str, Any]:
    """``data`` with the registry's patch size for ``model`` (the window it reads, e.g. 1 for spectral1d), said on stderr
    (or added to ``notes``, to be said when training starts)."""
    from hsi.models import recommended_patch_size

    size = recommended_patch_size(model)
    if size is None:
        return data
    _say(f"{model} reads {size}x{size} patches: using patch size {size} (and its split buffer) as the model registry "
         "recommends; give --patch-size to change it", notes)
    return {**data, "patch_size": size}


def apply_recommended_scaling(data: dict[str, Any], model: str, notes: list[str] | None = None) -> dict[str, Any]:
    """``data`` with the registry's per-band scaling for ``model`` (anyband: standardize), said on stderr (or added to
    ``notes``, to be said when training starts)."""
    from hsi.models import recommended_scaling

    scaling = recommended_scaling(model)
    if scaling is None:
        return data
    _say(f"{model}: scaling each band by {scaling} as the model registry recommends; give --scaling to change it",
         notes)
    return {**data, "scaling": scaling}


def _say(line: str, notes: list[str] | None) -> None:
    """A recommendation applied: on stderr now, or kept in ``notes`` for later."""
    if notes is None:
        log.warning(line)
    else:
        notes.append(line)


def check_devices(run: Any) -> None:
    """Build a bare trainer so a bad accelerator, device list, strategy, precision or compile fails before any work."""
    from lightning.fabric.utilities.exceptions import MisconfigurationException

    loggers = [logging.getLogger(n) for n in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero")]
    levels = [lg.level for lg in loggers]
    try:
        for lg in loggers:  # this trainer is a check only: no "GPU available" lines from it
            lg.setLevel(logging.WARNING)
        with warnings.catch_warnings():  # nor its fallback from 16-mixed on the CPU: check_precision refuses that
            warnings.filterwarnings("ignore", message=".*precision=.*")
            trainer = L.Trainer(accelerator=run.accelerator, devices=run.lightning_devices, strategy=run.strategy,
                                logger=False, num_nodes=run.num_nodes, precision=run.precision,
                                enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    except (MisconfigurationException, ValueError, RuntimeError, ImportError) as err:  # tpu without torch_xla
        option = "accelerator"
        text = str(err)
        if "strateg" in text.lower():
            option = "strategy"
        elif "device" in text.lower() and "accelerator" not in text.lower():
            option = "devices"
        elif "precision" in text.lower():
            option = "precision"
        value = {"accelerator": run.accelerator, "devices": run.devices, "strategy": run.strategy,
                 "precision": run.precision}[option]
        raise OptionError(option, value, " ".join(text.split())) from err
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
    check_precision(run.precision, trainer)
    if run.compile:
        check_compile(trainer)


def check_precision(precision: str, trainer: L.Trainer) -> None:
    """Refuse a precision the trainer's accelerator would run otherwise: Lightning turns 16-mixed on the CPU into
    bf16-mixed with a warning, which a run's records would then misstate."""
    if str(trainer.precision) != precision:
        device = type(trainer.accelerator).__name__.replace("Accelerator", "") or "this accelerator"
        raise OptionError("precision", precision, f"32-true or bf16-mixed on the {device} (float16 autocast needs a "
                          f"GPU; Lightning would run {trainer.precision} instead)")


def check_compile(trainer: L.Trainer) -> None:
    """Refuse ``compile`` where torch.compile cannot run: a Python or platform without TorchDynamo, or a CPU run
    without the C++ compiler its generated kernels need (which would otherwise fail at the first step)."""
    import torch._dynamo

    if not torch._dynamo.is_dynamo_supported():
        raise OptionError("compile", True, "not possible on this Python or platform (torch.compile does not run "
                          "here); train without compile")
    if type(trainer.accelerator).__name__ == "CPUAccelerator":
        from torch._inductor.cpp_builder import get_cpp_compiler

        try:
            get_cpp_compiler()
        except Exception as err:  # torch's InvalidCxxCompiler, or a broken CXX
            raise OptionError("compile", True, "needs a C++ compiler for torch.compile on the CPU (install g++ or set "
                              f"CXX, or train without compile): {' '.join(str(err).split())[:200]}") from err


def make_loggers(kind: str, out: Path) -> list[Logger]:
    """CSV logs in ``out/logs`` (``curves.png`` is drawn from them) and, beside them, the logger ``kind`` asks for:
    TensorBoard event files in ``logs/tensorboard``, an offline Weights & Biases run in ``logs/wandb`` (``wandb sync``
    uploads it), an MLflow file store in ``logs/mlruns``. Nothing leaves the machine during a run."""
    logs = out / "logs"
    loggers: list[Logger] = [CSVLogger(save_dir=out, name="logs")]
    if kind == "tensorboard":
        from lightning.pytorch.loggers import TensorBoardLogger

        loggers.append(TensorBoardLogger(save_dir=logs, name="tensorboard", default_hp_metric=False))
    elif kind == "wandb":
        import wandb
        from lightning.pytorch.loggers import WandbLogger

        logs.mkdir(parents=True, exist_ok=True)  # wandb writes into save_dir/wandb, which must exist
        loggers.append(WandbLogger(save_dir=str(logs), offline=True, project="hsi", name=Path(out).name,
                                   settings=wandb.Settings(silent=True)))
    elif kind == "mlflow":
        from lightning.pytorch.loggers import MLFlowLogger

        # MLflow 3.x refuses a file store unless allowed: the run folder's own store needs no server or database
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        loggers.append(MLFlowLogger(experiment_name="hsi", run_name=Path(out).name,
                                    tracking_uri=(logs / "mlruns").resolve().as_uri()))
    return loggers


def close_loggers(trainer: L.Trainer, out: Path) -> None:
    """End an offline wandb run (Lightning leaves it open until the process exits), so its records are complete
    before the run folder is committed, and drop wandb's links (``latest-run``, the debug logs, one of them into
    ``~/.cache``): a run folder holds plain files, each recorded with its checksum. Rank 0 only (the others log
    nothing)."""
    if not trainer.is_global_zero:
        return
    for logger in trainer.loggers:
        if type(logger).__name__ == "WandbLogger" and getattr(logger, "_experiment", None) is not None:
            logger.experiment.finish()
    folder = Path(out) / "logs" / "wandb"
    for link in [p for p in folder.rglob("*") if p.is_symlink()] if folder.is_dir() else []:
        link.unlink()


class CompileNetwork(Callback):
    """Compile the task's network with torch.compile when training starts (``RunOptions.compile``).

    ``nn.Module.compile`` compiles the module's call in place: the pretraining of the pixel path and the
    self-supervised start (which run before) stay eager, and the state dict keeps its keys (no ``_orig_mod.``), so
    checkpoints load into an uncompiled network.
    """

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Compile ``pl_module.net`` (once)."""
        net = getattr(pl_module, "net", None)
        if net is not None and getattr(net, "_compiled_call_impl", None) is None:
            net.compile()


class RunEarlyStopping(EarlyStopping):
    """Early stopping whose patience is the run's: Lightning's restores the checkpoint's patience with its state, which
    would undo a ``--patience`` given again on ``--resume``."""

    @property
    def state_key(self) -> str:
        """Lightning's key of ``EarlyStopping``, so checkpoints of earlier releases restore into this one."""
        return f"EarlyStopping{({'monitor': self.monitor, 'mode': self.mode})!r}"

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """The checkpoint's state (best score, epochs waited), this run's patience."""
        patience = self.patience
        super().load_state_dict(state_dict)
        self.patience = patience


def make_trainer(run: Any, out: Path, given: Any = ()) -> tuple[L.Trainer, ModelCheckpoint, ModelCheckpoint]:
    """The fitting trainer: early stopping on val OA, ``best.ckpt`` (carried over from a resumed run's folder,
    :mod:`hsi.training.best_checkpoint`) and ``last.ckpt`` in ``out``, the run's options in every checkpoint
    (``given``: the names given explicitly, :class:`hsi.training.resume.RunRecord`), CSV logs."""
    best = BestCheckpoint(out, earlier=Path(run.resume).parent if run.resume else None)
    last = ModelCheckpoint(dirpath=out, filename="last", monitor=None, save_top_k=1, enable_version_counter=False)
    bar, progress_callbacks = progress_setup(run.progress)  # piped: one line per epoch, no bar
    trainer = L.Trainer(
        max_epochs=run.epochs, accelerator=run.accelerator, devices=run.lightning_devices, strategy=run.strategy,
        num_nodes=run.num_nodes, precision=run.precision, accumulate_grad_batches=run.accumulate_grad_batches,
        deterministic=True, logger=make_loggers(run.logger, out), enable_progress_bar=bar,
        enable_model_summary=False, log_every_n_steps=10, num_sanity_val_steps=0,
        callbacks=[RunRecord(run, given), EpochSeed(run.seed), best, last, *([CompileNetwork()] if run.compile else []),
                   # not strict: with no validation pixel (val_budget="none") there is no val_oa and no early stop
                   RunEarlyStopping(monitor="val_oa", mode="max", patience=run.patience, strict=False),
                   *progress_callbacks],
    )
    return trainer, best, last


def _fit(trainer: L.Trainer, task: HSIClassifier, datamodule: HSIDataModule, resume: str | None, last: Path) -> float:
    started = time.perf_counter()
    handler = signal.getsignal(signal.SIGINT)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*does not have many workers.*")
        warnings.filterwarnings("ignore", message="Checkpoint directory .* exists and is not empty")
        # no validation pixel (val_budget="none"): the last epoch is kept, the learning rate follows no plateau
        warnings.filterwarnings("ignore", message=".*could not find the monitored key.*")
        warnings.filterwarnings("ignore", message="Total length of .* across ranks is zero")
        warnings.filterwarnings("ignore", message=".*conditioned on metric `val_oa` which is not available.*")
        try:
            trainer.fit(task, datamodule=datamodule, ckpt_path=resume)
        except SystemExit:  # Lightning exits on Ctrl-C; say where the state went
            if not trainer.interrupted:
                raise
        finally:  # Lightning ignores Ctrl-C from the first one on: a caller that goes on gets it back
            if handler is not None and threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, handler)
    if trainer.interrupted:
        raise KeyboardInterrupt(f"training stopped; its state is in {last} (continue with --resume {last})")
    return time.perf_counter() - started


def reported_checkpoint(best: ModelCheckpoint, last: ModelCheckpoint, out: Path, resume: str | None) -> str:
    """The checkpoint a run refits and tests: its best epoch's, written in ``out``.

    A resumed run whose checkpoint had already finished every epoch asked for trains none and
    writes no checkpoint (its best one's path, restored from the checkpoint, names the earlier
    run's folder): it reports the resumed checkpoint, copied into ``out`` as ``best.ckpt`` and
    ``last.ckpt`` (the copy is refit, never the file given to ``--resume``).
    """
    # with no validation pixel (val_budget="none") there is no best epoch: the last one's (a checkpoint without a
    # monitor records its file as its best_model_path)
    for path in (best.best_model_path, last.last_model_path, last.best_model_path):
        if path and Path(path).resolve().parent == Path(out).resolve() and Path(path).is_file():
            return str(path)
    if resume is None:
        raise RuntimeError(f"training wrote no checkpoint into {out}")
    for name in ("last.ckpt", "best.ckpt"):
        shutil.copyfile(resume, Path(out) / name)
    return str(Path(out) / "best.ckpt")


def leave_process_group() -> None:
    """End a DDP process group once fitting is over, so single-process evaluation cannot wait on other ranks."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


class DeepBackend:
    """An ``hsi.models`` network trained by Lightning (resumable; several devices through DDP)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.task: HSIClassifier | None = None
        self.notes: list[str] = []  # the recommendations applied, said by announce() once the data is set up

    def check(self, cfg: TrainConfig) -> None:
        """Every run option applies to a network; a ``model_options`` value it cannot be built with is refused now,
        before the recommendations read the scene (:func:`hsi.models.registry.check_option_values`)."""
        from hsi.models.registry import check_option_values

        check_option_values(self.model, cfg.model.get("model_options"), cfg.data.get("patch_size"))

    def recommend(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` with the registry's PCA, patch size and scaling for this network where they were not given."""
        if "pca" not in data:
            data = apply_recommended_pca(data, self.model, self.notes)
        if "patch_size" not in data:
            data = apply_recommended_patch_size(data, self.model, self.notes)
        if "scaling" not in data:
            data = apply_recommended_scaling(data, self.model, self.notes)
        return data

    def announce(self) -> None:
        """Say the recommendations :meth:`recommend` applied (once), when the data is set up and training starts:
        never before an error about something else."""
        for line in self.notes:
            log.warning(line)
        self.notes.clear()

    def build(self, settings: Settings, datamodule: HSIDataModule) -> None:
        """The task (its arguments checked) and the devices, before any file is read."""
        self.task = HSIClassifier(**settings.model)
        check_devices(settings.run)

    def fit(self, settings: Settings, datamodule: HSIDataModule, out: Path) -> Fitted | None:
        """Fit with early stopping, refit the best checkpoint's last layer, test it (rank 0 only; None on the others)."""
        run = settings.run
        assert self.task is not None, "build() comes before fit()"
        self.announce()
        trainer, best, last = make_trainer(run, out, settings.given_run)
        fit_seconds = _fit(trainer, self.task, datamodule, run.resume, out / "last.ckpt")
        close_loggers(trainer, out)
        leave_process_group()  # evaluation below runs in rank 0 alone
        if not trainer.is_global_zero:
            return None
        best_path = reported_checkpoint(best, last, out, run.resume)
        refit = refit_checkpoint(best_path, datamodule, run.accelerator, run.progress).to_dict() if run.refit else None
        evaluation = evaluate(best_path, datamodule, run.accelerator)
        evaluation.checkpoint = str(final_path(best_path))  # where it will be once the run is committed
        facts = {
            "epochs_trained": trainer.current_epoch,
            "start_epoch": settings.resume.epochs_done + 1 if settings.resume is not None else 1,
            "best_epoch": evaluation.best_epoch,
            "best_val_oa": float(best.best_model_score) if best.best_model_score is not None else None,
            "ssl": None if self.task.ssl_report is None else self.task.ssl_report.to_dict(),
            "pretrain": None if self.task.pretrain_report is None else self.task.pretrain_report.to_dict(),
            "refit": refit,
            "parameters": sum(p.numel() for p in self.task.net.parameters() if p.requires_grad),
        }
        return Fitted(evaluation, facts, fit_seconds)
