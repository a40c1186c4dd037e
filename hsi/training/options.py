"""``RunOptions``: the settings of a training run that belong to neither the data nor the model.

The data settings are the arguments of :class:`hsi.data.HSIDataModule` and the model
settings those of :class:`hsi.training.HSIClassifier`; this dataclass holds the rest
(schedule length, early stopping, seed, devices, output folder, resume). Each field is
defined once here, with its description, and ``hsi train`` builds its flags from it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Any, Literal

from hsi import _checks
from hsi._checks import (boolean, integer, logger_available, parse_devices, strategy_runs_here,
                         tensorboard_available)
from hsi._roles import check_declared

__all__ = ["PER_INVOCATION", "RunOptions", "parse_devices", "tensorboard_available"]

#: the options of one invocation of ``hsi train``, never restored by ``--resume`` (where this command writes and
#: shows; a resumed run takes every other option from its checkpoint unless given again)
PER_INVOCATION = ("out", "overwrite", "resume", "progress")


@dataclass
class RunOptions:
    """How one training run is driven.

    Parameters
    ----------
    epochs : int
        Maximum number of epochs; early stopping on validation OA may end sooner.
    patience : int
        Epochs without a better validation OA before early stopping (0 stops at the first epoch that does not
        improve); the best checkpoint is kept either way.
    refit : bool
        After training, refit the classifier layer of the best checkpoint on the training pixels (full-batch
        L-BFGS on its features, the weight decay as L2 penalty): minibatches stop short of that layer's optimum
        on small training sets (hsi.training.refit). The refit layer is kept unless it gets more than one
        validation pixel fewer right; metrics.json records which layer was kept and why.
    threads : int | None
        CPU threads of torch in this process (None: torch's choice). One is fastest for the default model on
        CPU, whose convolutions are too small to split; give more for large 3-D models.
    seed : int
        Seed of the split, the initialisation, the data order and augmentation: the same seed gives the same metrics.
    accelerator : str
        Lightning accelerator: cpu, gpu, cuda, mps or auto.
    devices : str
        Number of devices, a comma list of device ids, or auto (Lightning).
    strategy : str
        Lightning strategy: auto, ddp, fsdp, ... (not ddp_spawn: a spawned process's network never returns).
    num_nodes : int
        Machines of a multi-node run (Lightning's num_nodes; launch one process per device on every node with
        torchrun or srun, devices counting those of one node).
    precision : Literal["32-true", "bf16-mixed", "16-mixed"]
        Lightning precision of the fit: 32-true (float32), bf16-mixed (bfloat16 autocast: about half the activation
        memory and more throughput on current GPUs; also on the CPU) or 16-mixed (float16 autocast with loss scaling;
        GPU only). Refit and test predictions run in float32 either way.
    compile : bool
        Compile the network with torch.compile for the fit (the first steps are slower while it compiles; checkpoints
        hold the uncompiled weights, so they load anywhere). Needs a C++ compiler on the CPU.
    accumulate_grad_batches : int
        Batches whose gradients are summed before each optimizer step (Lightning's accumulate_grad_batches): the
        step sees batch_size x this many patches at the memory of one batch.
    out : str | None
        Output folder. None: a new folder runs/<scene>-<model>-seed<seed>-<time> for every run.
    overwrite : bool
        Let a run replace the outputs of an earlier run in --out (files the package did not write are never touched).
    resume : str | None
        Checkpoint to continue training from (e.g. <out>/last.ckpt): the run continues with the data, model and
        run settings it recorded (epochs, patience, ...); options given again override those that may change.
    progress : bool
        Show progress on stderr (rank 0 only) for the pretraining, the epochs and the refit: bars on a terminal; when
        piped, a line per tenth of a phase, one per epoch and one every 20 s within a long epoch.
    logger : Literal["csv", "tensorboard", "wandb", "mlflow"]
        Training logs in <out>/logs: csv (metrics.csv), tensorboard (TensorBoard event files in logs/tensorboard),
        wandb (an offline Weights & Biases run in logs/wandb; wandb sync uploads it) or mlflow (an MLflow file store
        in logs/mlruns; mlflow ui --backend-store-uri reads it); the last three beside the CSV logs that curves.png
        is drawn from, each needing its extra (pip install "hsi-lightning[wandb]").
    """

    # each field's range check is the rule annotated beside its type (hsi._checks; the command line applies the
    # same rules, from its option table, before importing torch)
    epochs: Annotated[int, integer(1)] = 20
    patience: Annotated[int, integer(0)] = 20
    refit: bool = True
    threads: Annotated[int | None, integer(1, optional=True, none_means=" (torch's choice)")] = 1
    seed: Annotated[int, integer(0, maximum=2**32 - 1)] = 0
    accelerator: str = "auto"
    devices: Annotated[str, _checks.lightning_devices] = "auto"  # (the name of a property below)
    strategy: Annotated[str, strategy_runs_here] = "auto"
    num_nodes: Annotated[int, integer(1)] = 1
    precision: Literal["32-true", "bf16-mixed", "16-mixed"] = "32-true"
    compile: Annotated[bool, boolean] = False
    accumulate_grad_batches: Annotated[int, integer(1)] = 1
    out: str | None = None
    overwrite: bool = False
    resume: str | None = None
    progress: bool = True
    logger: Annotated[Literal["csv", "tensorboard", "wandb", "mlflow"], logger_available] = "csv"

    def __post_init__(self) -> None:
        check_declared(RunOptions, asdict(self))

    @property
    def lightning_devices(self) -> int | str | list[int]:
        """``devices`` as Lightning takes it."""
        return parse_devices(self.devices)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-able dict."""
        return asdict(self)
