"""``RunOptions``: the settings of a training run that belong to neither the data nor the model.

The data settings are the arguments of :class:`hsi.data.HSIDataModule` and the model
settings those of :class:`hsi.training.HSIClassifier`; this dataclass holds the rest
(schedule length, early stopping, seed, devices, output folder, resume). Each field is
defined once here, with its description, and ``hsi train`` builds its flags from it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass
from typing import Any, Literal

from hsi._checks import check_int, is_int
from hsi.errors import OptionError

__all__ = ["RunOptions", "parse_devices", "tensorboard_available"]

#: What ``--logger`` accepts.
LOGGERS = ("csv", "tensorboard")


def tensorboard_available() -> bool:
    """True when Lightning's ``TensorBoardLogger`` can write: ``tensorboard`` or ``tensorboardX`` is installed."""
    return any(importlib.util.find_spec(name) is not None for name in ("tensorboard", "tensorboardX"))


def parse_devices(value: str | int | list[int]) -> int | str | list[int]:
    """Lightning's ``devices`` from text: ``"auto"``, a count (``"2"``) or a comma list of ids (``"0,1"``)."""
    if is_int(value):
        if value < 1:
            raise OptionError("devices", value, "a number of devices >= 1, a comma list of device ids, or auto")
        return value
    if isinstance(value, list):
        return [int(v) for v in value]
    text = str(value).strip()
    if text == "auto":
        return text
    if text.isdigit() and int(text) >= 1:
        return int(text)
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if "," in text and parts and all(p.isdigit() for p in parts):
        return [int(p) for p in parts]
    raise OptionError("devices", value, "a number of devices >= 1, a comma list of device ids such as 0,1, or auto")


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
        on small training sets (hsi.training.refit; metrics.json records the validation OA before and after).
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
        Lightning strategy: auto, ddp, ddp_spawn, ...
    num_nodes : int
        Machines of a multi-node run (Lightning's num_nodes; launch one process per device on every node with
        torchrun or srun, devices counting those of one node).
    out : str | None
        Output folder. None: a new folder runs/<scene>-<model>-seed<seed>-<time> for every run.
    overwrite : bool
        Let a run replace the outputs of an earlier run in --out (files the package did not write are never touched).
    resume : str | None
        Checkpoint to continue training from (e.g. <out>/last.ckpt); data and model settings come from it.
    progress : bool
        Show progress: the bar on a terminal, one line per epoch on stderr when piped.
    logger : Literal["csv", "tensorboard"]
        Training logs in <out>/logs: csv (metrics.csv), or tensorboard (TensorBoard event files in
        logs/tensorboard, beside the CSV logs that curves.png is drawn from; needs the tensorboard extra).
    """

    epochs: int = 20
    patience: int = 20
    refit: bool = True
    threads: int | None = 1
    seed: int = 0
    accelerator: str = "auto"
    devices: str = "auto"
    strategy: str = "auto"
    num_nodes: int = 1
    out: str | None = None
    overwrite: bool = False
    resume: str | None = None
    progress: bool = True
    logger: Literal["csv", "tensorboard"] = "csv"

    def __post_init__(self) -> None:
        check_int("epochs", self.epochs, 1)
        check_int("patience", self.patience, 0)
        check_int("num_nodes", self.num_nodes, 1)
        if self.threads is not None and (not is_int(self.threads) or self.threads < 1):
            raise OptionError("threads", self.threads, "an integer >= 1, or none (torch's choice)")
        if not is_int(self.seed) or not 0 <= self.seed < 2**32:
            raise OptionError("seed", self.seed, "an integer from 0 to 2**32 - 1")
        parse_devices(self.devices)
        if self.logger not in LOGGERS:
            raise OptionError("logger", self.logger, "one of " + ", ".join(LOGGERS))
        if self.logger == "tensorboard" and not tensorboard_available():
            raise OptionError("logger", self.logger, 'TensorBoard is not installed: pip install '
                              '"hsi-lightning[tensorboard]" (or use --logger csv)')

    @property
    def lightning_devices(self) -> int | str | list[int]:
        """``devices`` as Lightning takes it."""
        return parse_devices(self.devices)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-able dict."""
        return asdict(self)
