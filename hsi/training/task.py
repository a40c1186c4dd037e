"""``HSIClassifier``: the LightningModule that trains any registry model on patches.

Every constructor argument is a plain, type-hinted value (str, int, float, list, dict)
described in the numpydoc docstring, so a YAML file can express it and ``LightningCLI``
drives the class unchanged. The shape of the data (band count, classes, class names,
patch size) and the schedule length need not be given: when they are None they are taken
from the trainer's DataModule and the trainer in ``setup``, the network is built then,
and the values are recorded in ``hparams`` so ``load_from_checkpoint`` rebuilds it alone.
"""

from __future__ import annotations

import inspect
import math
from typing import Annotated, Any, Literal

import lightning as L
import numpy as np
import torch
import torch.nn.functional as F
from torchmetrics.classification import MulticlassConfusionMatrix

from hsi._checks import boolean, integer, not_an_option, number
from hsi._roles import Role, check_declared, roles
from hsi.data.build import IGNORE_INDEX  # unlabeled pixels: never in the loss or the metrics
from hsi.errors import NonFiniteLossError, OptionError
from hsi.models import DEFAULT_MODEL, build_model, channels_last_weights, list_models
from hsi.models.registry import check_option_values
from hsi.models.registry import get_model_class, model_options
from hsi.training.metrics import scores_from_confusion
from hsi.training.progress import shows_progress


ModelName = Literal[tuple(list_models())]  # type: ignore[valid-type]
"""The registry's built-in network names (``hsi.models.list_models()``)."""

#: hyperparameters that describe the data; None means "from the DataModule in setup"
DATA_SHAPE_KEYS = ("num_bands", "num_classes", "patch_size", "class_names")

FROM_DATA = integer(1, optional=True, none_means=" (from the DataModule)")
FROM_TRAINER = integer(1, optional=True, none_means=" (the trainer's max_epochs)")


def training_defaults() -> dict[str, Any]:
    """The training-recipe arguments of :class:`HSIClassifier` that have a default, and their defaults.

    What a run that gives none of them trains with: a finished run recorded without one of
    these (an older recipe) or with another value was trained otherwise.
    """
    params = inspect.signature(HSIClassifier.__init__).parameters
    return {name: params[name].default for name, role in roles(HSIClassifier).items()
            if role.kind == "training" and params[name].default is not None}


def _check_model(name: str, value: Any) -> None:
    """A network of the registry (models registered after import count too)."""
    if value not in list_models():
        raise OptionError(name, value, "one of " + ", ".join(list_models()))


class HSIClassifier(L.LightningModule):
    """Patch classifier with cross-entropy training and OA / AA / kappa evaluation.

    Parameters
    ----------
    model : ModelName
        Network from the model registry (hsi.models.list_models()); the default, ssnet, was chosen from the
        accuracy benchmark (docs/benchmarks.md).
    num_bands : int | None
        Input bands after preprocessing (None: from the DataModule).
    num_classes : int | None
        Number of classes (None: from the DataModule).
    patch_size : int | None
        Side of the input patches (None: from the DataModule).
    model_options : dict[str, Any] | None
        Keyword arguments of the network's constructor (see its docstring), e.g. width=32; a wavelength-aware
        network's wavelengths are taken from the DataModule when not given.
    lr : float
        Learning rate.
    weight_decay : float
        Weight decay of the optimizer.
    optimizer : Literal["adamw", "adam", "sgd"]
        Optimizer (sgd: momentum 0.9, Nesterov).
    scheduler : Literal["cosine", "plateau", "none"]
        Learning-rate schedule: cosine annealing over max_epochs, halving on a validation OA plateau, or none.
    max_epochs : int | None
        Horizon of the cosine schedule (None: the trainer's max_epochs).
    class_weights : list[float] | None
        Per-class loss weights, one per class.
    label_smoothing : float
        Cross-entropy label smoothing, in [0, 1).
    class_names : list[str] | None
        Names of the classes in reports (None: from the DataModule, else class_1 ... class_K).
    pretrain : bool
        When fitting starts, start the network's per-pixel spectral path (ssnet's stem) from a per-pixel network
        fitted to the training pixels by full-batch L-BFGS, with this loss and weight decay (hsi.training.pretrain);
        networks without such a path, and resumed runs, are left as they are.
    ssl : bool
        When fitting starts, pretrain the network's encoder self-supervised (masked centre modelling,
        hsi.training.selfsup) on every pixel of the scenes, labelled or not, before any label is read; networks
        without an encoder, and resumed runs, are left as they are.
    ssl_steps : int
        Steps of the self-supervised pretraining (256 windows each).
    ssl_exclude_test : bool
        Leave out of the self-supervised pretraining every pixel whose window reaches a test block (the published
        protocols use the test area's unlabelled spectra; its labels are never read either way).
    init : str | None
        An encoder file written by hsi pretrain: the network's encoder starts from it (instead of ssl).

    Attributes
    ----------
    net : torch.nn.Module
        The network built from the registry (after ``setup`` when the data shape came from the DataModule).
    test_scores : dict | None
        OA, AA, kappa, per-class accuracy and confusion matrix, set by ``trainer.test``.
    pretrain_report : PretrainReport | None
        What the start of the pixel path did in this fit (None before fitting starts).
    ssl_report : SelfSupervisedReport | None
        What self-supervised pretraining (or ``init``) did in this fit (None before fitting starts).
    """

    def __init__(
        self,
        model: Annotated[ModelName, Role("network", "fixed", _check_model)] = DEFAULT_MODEL,
        num_bands: Annotated[int | None, Role("shape", "fixed", FROM_DATA)] = None,
        num_classes: Annotated[int | None, Role("shape", "fixed", FROM_DATA)] = None,
        patch_size: Annotated[int | None, Role("shape", "fixed", FROM_DATA)] = None,
        model_options: Annotated[dict[str, Any] | None, Role("network", "fixed")] = None,
        lr: Annotated[float, Role("training", "free", number(0.0, low_open=True))] = 1e-3,
        weight_decay: Annotated[float, Role("training", "free", number(0.0))] = 1e-4,
        optimizer: Annotated[Literal["adamw", "adam", "sgd"], Role("training", "free")] = "adamw",
        scheduler: Annotated[Literal["cosine", "plateau", "none"], Role("training", "free")] = "cosine",
        max_epochs: Annotated[int | None, Role("training", "free", FROM_TRAINER)] = None,
        class_weights: Annotated[list[float] | None, Role("training", "free")] = None,
        label_smoothing: Annotated[float, Role("training", "free", number(0.0, 1.0))] = 0.0,
        class_names: Annotated[list[str] | None, Role("shape", "free")] = None,
        pretrain: Annotated[bool, Role("training", "free", boolean)] = True,
        ssl: Annotated[bool, Role("training", "free", boolean)] = False,
        ssl_steps: Annotated[int, Role("training", "free", integer(1))] = 300,
        ssl_exclude_test: Annotated[bool, Role("training", "free", boolean)] = False,
        init: Annotated[str | None, Role("training", "free")] = None,
    ) -> None:
        super().__init__()
        self.save_hyperparameters()
        check_task_arguments(dict(self.hparams))
        self.net: torch.nn.Module | None = None
        self.test_scores: dict[str, Any] | None = None
        self.pretrain_report: Any = None
        self.ssl_report: Any = None
        self._trained_lr: float | None = None
        if init is not None:  # a wrong or missing encoder file fails now, before the scene is read
            from hsi.training.encoder_file import check_encoder_model, load_encoder

            check_encoder_model(load_encoder(init), init, model)
        if num_bands is not None and num_classes is not None and patch_size is not None:
            self._build()
        else:  # built in setup(), once the data is read: a bad option value is refused now, not after that
            check_option_values(model, model_options, patch_size)

    # ---------------------------------------------------------------- building
    def _build(self) -> None:
        hp = self.hparams
        check_task_arguments(dict(hp))
        # channels-last weights, as the DataModule's batches are: a contiguous weight would
        # copy every batch back to contiguous inside the convolution
        self.net = channels_last_weights(_build_network(hp))
        weights = torch.tensor(hp.class_weights, dtype=torch.float32) if hp.class_weights is not None else None
        self.register_buffer("class_weights", weights, persistent=False)
        self.val_confusion = MulticlassConfusionMatrix(hp.num_classes, ignore_index=IGNORE_INDEX)
        self.test_confusion = MulticlassConfusionMatrix(hp.num_classes, ignore_index=IGNORE_INDEX)

    def setup(self, stage: str) -> None:
        """Take the data shape from the DataModule and the schedule length from the trainer, then build the net."""
        trainer = self._attached_trainer()
        datamodule = getattr(trainer, "datamodule", None)
        filled = {key: getattr(datamodule, key) for key in DATA_SHAPE_KEYS
                  if self.hparams[key] is None and datamodule is not None and hasattr(datamodule, key)}
        if "class_names" in filled:
            filled["class_names"] = list(filled["class_names"])
        if self.hparams.max_epochs is None and trainer is not None and trainer.max_epochs not in (None, -1):
            filled["max_epochs"] = int(trainer.max_epochs)
        hp = self.hparams
        centres = band_centres(hp.model, hp.model_options, datamodule) if self.net is None else None
        if centres is not None:
            filled["model_options"] = {**dict(self.hparams.model_options or {}), "wavelengths": centres}
        if filled:  # recorded as hyperparameters, so the checkpoint rebuilds the net by itself
            self.save_hyperparameters({**dict(self.hparams), **filled})
        if self.net is None:
            missing = [k for k in ("num_bands", "num_classes", "patch_size") if self.hparams[k] is None]
            if missing:
                raise OptionError(missing[0], None, "a value, or a DataModule that knows it (e.g. HSIDataModule)")
            self._build()
        elif datamodule is not None and hasattr(datamodule, "num_bands"):
            check_matches_data(dict(self.hparams), datamodule)
        if stage == "fit" and datamodule is not None:
            check_batch_size(self.hparams.model, self.net, getattr(getattr(datamodule, "hparams", {}), "batch_size", None))

    def teardown(self, stage: str) -> None:
        """End of a stage: free a DDP process group before the interpreter exits (see :mod:`hsi._distributed`)."""
        from hsi._distributed import release_at_exit

        release_at_exit()

    @property
    def class_names(self) -> list[str]:
        """Names of classes 1..K (``class_1 ...`` when none were given)."""
        names = self.hparams.class_names
        return list(names) if names else [f"class_{k + 1}" for k in range(self.hparams.num_classes or 0)]

    # ---------------------------------------------------------------- steps
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` for patches ``(B, C, P, P)``."""
        if self.net is None:
            raise RuntimeError("HSIClassifier: the network is built in setup() when num_bands/num_classes/patch_size are None")
        return self.net(x)

    def _loss(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, weight=self.class_weights, ignore_index=IGNORE_INDEX,
                               label_smoothing=self.hparams.label_smoothing)

    def training_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> torch.Tensor:
        """Cross-entropy on one batch; a non-finite loss stops the run (:class:`NonFiniteLossError`)."""
        x, y = batch[0], batch[1]
        logits = self(x)
        loss = self._loss(logits, y)
        if not torch.isfinite(loss):
            bad_inputs = int((~torch.isfinite(x)).sum())
            raise NonFiniteLossError(
                f"training loss is {float(loss.detach())} at epoch {self.current_epoch}, batch {batch_idx} "
                f"({bad_inputs} non-finite input values in the batch); the run is stopped rather than "
                f"training a model of NaNs (lower --lr, or check the cube with `hsi inspect`)"
            )
        labeled = y != IGNORE_INDEX
        acc = (logits.argmax(1)[labeled] == y[labeled]).float().mean()
        self.log("train_loss", loss, on_step=False, on_epoch=True, prog_bar=True, batch_size=len(y), sync_dist=True)
        self.log("train_acc", acc, on_step=False, on_epoch=True, batch_size=len(y), sync_dist=True)
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> None:
        """Validation loss and confusion matrix."""
        x, y = batch[0], batch[1]
        logits = self(x)
        self.log("val_loss", self._loss(logits, y), on_epoch=True, prog_bar=False, batch_size=len(y), sync_dist=True)
        self.val_confusion.update(logits.argmax(1), y)

    def on_validation_epoch_end(self) -> None:
        """Log OA / AA / kappa of the epoch (identical on every rank: the confusion matrix is synchronized)."""
        scores = scores_from_confusion(self.val_confusion.compute().cpu().numpy())
        self.val_confusion.reset()
        for name in ("oa", "aa", "kappa"):
            self.log(f"val_{name}", float(np.nan_to_num(scores[name])), prog_bar=name == "oa", sync_dist=True)

    def test_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> None:
        """Accumulate the test confusion matrix."""
        x, y = batch[0], batch[1]
        self.test_confusion.update(self(x).argmax(1), y)

    def on_test_epoch_end(self) -> None:
        """Scores of the whole test set into :attr:`test_scores` (and the logs)."""
        confusion = self.test_confusion.compute().cpu().numpy()
        self.test_confusion.reset()
        scores = scores_from_confusion(confusion)
        scores["confusion"] = confusion.astype(int).tolist()
        self.test_scores = scores
        for name in ("oa", "aa", "kappa"):
            self.log(f"test_{name}", float(np.nan_to_num(scores[name])), sync_dist=True)

    def predict_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int, dataloader_idx: int = 0) -> Any:
        """Class probabilities ``(B, K)``; with a batch that carries coordinates, ``{"probs", "coords", "labels"}``."""
        probs = torch.softmax(self(batch[0]), dim=1)
        if len(batch) >= 3:
            return {"probs": probs, "coords": batch[2], "labels": batch[1]}
        return probs

    # ---------------------------------------------------------------- optimisation
    def configure_optimizers(self) -> Any:
        """The optimizer and schedule named by the hyperparameters."""
        hp = self.hparams
        params = self.net.parameters()
        if hp.optimizer == "adamw":
            opt = torch.optim.AdamW(params, lr=hp.lr, weight_decay=hp.weight_decay)
        elif hp.optimizer == "adam":
            opt = torch.optim.Adam(params, lr=hp.lr, weight_decay=hp.weight_decay)
        else:
            opt = torch.optim.SGD(params, lr=hp.lr, weight_decay=hp.weight_decay, momentum=0.9, nesterov=True)
        if hp.scheduler == "none":
            return opt
        if hp.scheduler == "cosine":
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, int(hp.max_epochs or 1)))
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "epoch"}}
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=5)
        # not strict: with no validation pixel (val_budget="none") the rate is never lowered
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "monitor": "val_oa", "strict": False}}

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Check the weights fit this network, and remember the learning rate they were trained with.

        Lightning calls this before ``load_state_dict``: weights of another model end in one
        line naming both models (:func:`hsi.training.weights.check_weights_fit`), not torch's
        list of missing keys. A resumed run may change the learning rate (``on_train_start``).
        """
        if self.net is not None:
            from hsi.training.weights import check_weights_fit

            path = getattr(self._attached_trainer(), "ckpt_path", None)
            where = f"checkpoint {path}" if path else "checkpoint"
            check_weights_fit(self.state_dict(), checkpoint, dict(self.hparams), where)
        self._trained_lr = checkpoint.get("hyper_parameters", {}).get("lr")

    def on_fit_start(self) -> None:
        """Pretrain the encoder (``ssl`` / ``init``), then start the pixel path from the per-pixel fit (``pretrain``),
        the same on every rank; neither on a resumed run."""
        from hsi.training.pretrain import PretrainReport, pretrain_pixel_path

        datamodule = getattr(self.trainer, "datamodule", None)
        self._start_encoder(datamodule)
        if not self.hparams.pretrain:
            self.pretrain_report = PretrainReport(False, "pretrain=False")
        elif self.trainer.ckpt_path is not None:
            self.pretrain_report = PretrainReport(False, "resumed from a checkpoint")
        elif not hasattr(datamodule, "pixel_spectra"):
            self.pretrain_report = PretrainReport(False, "the DataModule has no pixel_spectra() to fit on")
        else:
            spectra, labels, _ = datamodule.pixel_spectra("train")
            self.pretrain_report = pretrain_pixel_path(self.net, spectra, labels, float(self.hparams.weight_decay),
                                                       self.class_weights, float(self.hparams.label_smoothing),
                                                       seed=torch.initial_seed(), progress=shows_progress(self.trainer))
        if (self.pretrain_report.applied or self.ssl_report.applied) and self.trainer.world_size > 1:
            # every rank starts from rank 0's weights, whatever each device's summation order gave
            state = self.trainer.strategy.broadcast({k: v.cpu() for k, v in self.net.state_dict().items()}, src=0)
            self.net.load_state_dict(state)

    def _start_encoder(self, datamodule: Any) -> None:
        """Self-supervised pretraining of the encoder (``ssl``), or its weights from ``init``; not on a resumed run."""
        from hsi.training.selfsup import SelfSupervisedReport, start_encoder

        hp = self.hparams
        if self.trainer.ckpt_path is not None:
            self.ssl_report = SelfSupervisedReport(False, "resumed from a checkpoint")
        elif hp.init is None and not hp.ssl:
            self.ssl_report = SelfSupervisedReport(False, "ssl=False")
        else:
            self.ssl_report = start_encoder(self.net, datamodule, hp.init, int(hp.ssl_steps), bool(hp.ssl_exclude_test),
                                            seed=torch.initial_seed(), model=hp.model,
                                            progress=shows_progress(self.trainer))

    def on_train_start(self) -> None:
        """On a resumed run, apply a changed learning rate and schedule length to the restored optimizer."""
        if self._trained_lr is None or self._attached_trainer() is None:
            return
        for config in self.trainer.lr_scheduler_configs:
            scheduler = config.scheduler
            if isinstance(scheduler, torch.optim.lr_scheduler.CosineAnnealingLR):
                scheduler.T_max = max(1, int(self.hparams.max_epochs or self.trainer.max_epochs))
                scheduler.base_lrs = [float(self.hparams.lr)] * len(scheduler.base_lrs)
        for optimizer in self.trainer.optimizers:
            for group in optimizer.param_groups:
                group["initial_lr"] = float(self.hparams.lr)
                group["lr"] = self._lr_at(self.current_epoch) if float(self.hparams.lr) != self._trained_lr else group["lr"]
        self._trained_lr = None

    def _attached_trainer(self) -> L.Trainer | None:
        """The Trainer running this module, or None when it is used on its own (``self.trainer`` raises then)."""
        try:
            return self.trainer
        except RuntimeError:  # Lightning's "not attached to a `Trainer`"
            return None

    def _lr_at(self, epoch: int) -> float:
        """The scheduled learning rate at ``epoch`` for the current lr and horizon (closed form)."""
        lr = float(self.hparams.lr)
        if self.hparams.scheduler != "cosine":
            return lr
        horizon = max(1, int(self.hparams.max_epochs or 1))
        return lr * (1 + math.cos(math.pi * min(epoch, horizon) / horizon)) / 2


def check_task_arguments(h: dict[str, Any]) -> None:
    """Raise :class:`OptionError` for the first ``HSIClassifier`` argument that is not allowed.

    Each argument's own check comes from its role in the signature; what depends on two
    arguments (the network's options, one weight and one name per class) is checked here.
    """
    check_declared(HSIClassifier, h)
    _check_model_options(h["model"], h["model_options"])
    k = h["num_classes"]
    for name in ("class_weights", "class_names"):
        if h[name] is not None and k is not None and len(h[name]) != k:
            raise OptionError(name, h[name], f"{k} entries, one per class (num_classes={k})")


def _check_model_options(model: str, options: Any) -> None:
    """``model_options`` must be a mapping of the network's own keywords (a typo names the closest)."""
    if options is None:
        return
    if not isinstance(options, dict):
        raise OptionError("model_options", options, "a mapping of option names to values, e.g. width=32")
    accepted = model_options(model)
    for key in options:
        if key not in accepted:
            raise OptionError("model_options", key, not_an_option(key, accepted, model))


def check_matches_data(h: dict[str, Any], datamodule: Any) -> None:
    """Raise :class:`OptionError` when a task built for one data shape meets a DataModule of another."""
    for key in ("num_bands", "num_classes", "patch_size"):
        have = int(getattr(datamodule, key))
        if h[key] is not None and int(h[key]) != have:
            raise OptionError(key, h[key], f"{have}, the value of the DataModule this model is trained on")


def check_batch_size(model: str, net: torch.nn.Module, batch_size: Any) -> None:
    """Refuse training batches of one sample for a network with batch normalisation (it cannot normalise one).

    A lone *last* batch is merged into the one before it by the training loader; this is
    ``batch_size=1`` itself, where every batch is a batch of one.
    """
    has_norm = any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in net.modules())
    if has_norm and batch_size is not None and int(batch_size) < 2:
        raise OptionError("batch_size", batch_size, f"at least 2: {model} uses batch normalisation, which cannot "
                          "train on a batch of one sample")


def band_centres(model: str, model_options: dict[str, Any] | None, datamodule: Any) -> list[float] | None:
    """The band centres (nm) the wavelength-aware network ``model`` reads, after ``datamodule``'s preprocessing.

    None for other networks, when ``model_options`` gives them, or when the data have no
    wavelengths (the network then takes its bands as evenly spaced).

    Raises
    ------
    OptionError
        The preprocessing ends in PCA components, which have no wavelength.
    """
    if not getattr(get_model_class(model), "takes_wavelengths", False) or datamodule is None:
        return None
    if "wavelengths" in (model_options or {}) or getattr(datamodule, "wavelengths", None) is None:
        return None
    centres = datamodule.pipeline.wavelengths_out(datamodule.wavelengths)
    if centres is None:
        from hsi._combinations import refuse_pca

        refuse_pca(model, getattr(getattr(datamodule, "hparams", {}), "pca", None))
    return [round(float(c), 6) for c in centres]


def _build_network(hp: Any) -> torch.nn.Module:
    """The registry network of the hyperparameters; a bad network option is reported as ``model_options``."""
    options = dict(hp.model_options or {})
    try:
        return build_model(hp.model, num_bands=hp.num_bands, num_classes=hp.num_classes, patch_size=hp.patch_size,
                           **options)
    except OptionError as err:
        if err.option not in options:
            raise
        raise OptionError("model_options", f"{err.option}={err.value!r}", err.allowed) from err
