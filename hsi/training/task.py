"""``HSIClassifier``: the LightningModule that trains any registry model on patches.

Every constructor argument is a plain, type-hinted value (str, int, float, list,
dict), so a YAML file can express it and ``LightningCLI`` can drive the class
unchanged; ``save_hyperparameters()`` stores them, so ``load_from_checkpoint``
rebuilds the network by itself.
"""

from __future__ import annotations

from typing import Any, Literal

import lightning as L
import numpy as np
import torch
import torch.nn.functional as F
from torchmetrics.classification import MulticlassConfusionMatrix

from hsi.models import build_model
from hsi.training.metrics import scores_from_confusion

IGNORE_INDEX = -1
"""Target value of unlabeled pixels: they never count in the loss or the metrics."""


class HSIClassifier(L.LightningModule):
    """Patch classifier with cross-entropy training and OA / AA / kappa evaluation.

    Parameters
    ----------
    model : registry name of the network (``hsi.models.list_models()``).
    num_bands, num_classes, patch_size : shape of the data; the DataModule knows them.
    model_options : extra keyword arguments of the network's constructor.
    lr, weight_decay : optimizer settings.
    optimizer : ``"adamw"``, ``"adam"`` or ``"sgd"`` (momentum 0.9, Nesterov).
    scheduler : ``"cosine"`` (annealed over ``max_epochs``), ``"plateau"`` (on val OA) or ``"none"``.
    max_epochs : horizon of the cosine schedule.
    class_weights : optional per-class loss weights (length ``num_classes``).
    label_smoothing : cross-entropy label smoothing in [0, 1).
    class_names : names used in reports; defaults to ``class_1 ... class_K``.

    Attributes
    ----------
    net : the ``torch.nn.Module`` built from the registry.
    test_scores : dict of OA, AA, kappa, per-class accuracy and confusion matrix, set by ``trainer.test``.
    """

    def __init__(
        self,
        model: str = "cnn2d",
        num_bands: int = 200,
        num_classes: int = 16,
        patch_size: int = 11,
        model_options: dict[str, Any] | None = None,
        lr: float = 1e-3,
        weight_decay: float = 1e-4,
        optimizer: Literal["adamw", "adam", "sgd"] = "adamw",
        scheduler: Literal["cosine", "plateau", "none"] = "cosine",
        max_epochs: int = 50,
        class_weights: list[float] | None = None,
        label_smoothing: float = 0.0,
        class_names: list[str] | None = None,
    ) -> None:
        super().__init__()
        if class_weights is not None and len(class_weights) != num_classes:
            raise ValueError(
                f"class_weights has {len(class_weights)} entries but num_classes is {num_classes}"
            )
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {label_smoothing}")
        if class_names is not None and len(class_names) != num_classes:
            raise ValueError(f"class_names has {len(class_names)} names but num_classes is {num_classes}")
        self.save_hyperparameters()
        self.net = build_model(model, num_bands=num_bands, num_classes=num_classes, patch_size=patch_size, **(model_options or {}))
        weights = torch.tensor(class_weights, dtype=torch.float32) if class_weights is not None else None
        self.register_buffer("class_weights", weights, persistent=False)
        self.val_confusion = MulticlassConfusionMatrix(num_classes, ignore_index=IGNORE_INDEX)
        self.test_confusion = MulticlassConfusionMatrix(num_classes, ignore_index=IGNORE_INDEX)
        self.test_scores: dict[str, Any] | None = None

    @property
    def class_names(self) -> list[str]:
        names = self.hparams.class_names
        return list(names) if names else [f"class_{k + 1}" for k in range(self.hparams.num_classes)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` for patches ``(B, C, P, P)``."""
        return self.net(x)

    def _loss(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(
            logits,
            target,
            weight=self.class_weights,
            ignore_index=IGNORE_INDEX,
            label_smoothing=self.hparams.label_smoothing,
        )

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch[0], batch[1]
        logits = self(x)
        loss = self._loss(logits, y)
        labeled = y != IGNORE_INDEX
        acc = (logits.argmax(1)[labeled] == y[labeled]).float().mean()
        self.log("train_loss", loss, on_step=False, on_epoch=True, prog_bar=True, batch_size=len(y), sync_dist=True)
        self.log("train_acc", acc, on_step=False, on_epoch=True, batch_size=len(y), sync_dist=True)
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        x, y = batch[0], batch[1]
        logits = self(x)
        self.log("val_loss", self._loss(logits, y), on_epoch=True, prog_bar=False, batch_size=len(y), sync_dist=True)
        self.val_confusion.update(logits.argmax(1), y)

    def on_validation_epoch_end(self) -> None:
        scores = scores_from_confusion(self.val_confusion.compute().cpu().numpy())
        self.val_confusion.reset()
        for name in ("oa", "aa", "kappa"):
            # Identical on every rank (the confusion matrix is synchronized); sync_dist keeps Lightning quiet.
            self.log(f"val_{name}", float(np.nan_to_num(scores[name])), prog_bar=name == "oa", sync_dist=True)

    def test_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        x, y = batch[0], batch[1]
        self.test_confusion.update(self(x).argmax(1), y)

    def on_test_epoch_end(self) -> None:
        confusion = self.test_confusion.compute().cpu().numpy()
        self.test_confusion.reset()
        scores = scores_from_confusion(confusion)
        scores["confusion"] = confusion.astype(int).tolist()
        self.test_scores = scores
        for name in ("oa", "aa", "kappa"):
            self.log(f"test_{name}", float(np.nan_to_num(scores[name])), sync_dist=True)

    def predict_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int, dataloader_idx: int = 0) -> torch.Tensor:
        """Class probabilities ``(B, K)`` for the patch-centre pixels of the batch."""
        return torch.softmax(self(batch[0]), dim=1)

    def configure_optimizers(self) -> Any:
        hp = self.hparams
        params = self.net.parameters()
        if hp.optimizer == "adamw":
            opt = torch.optim.AdamW(params, lr=hp.lr, weight_decay=hp.weight_decay)
        elif hp.optimizer == "adam":
            opt = torch.optim.Adam(params, lr=hp.lr, weight_decay=hp.weight_decay)
        elif hp.optimizer == "sgd":
            opt = torch.optim.SGD(params, lr=hp.lr, weight_decay=hp.weight_decay, momentum=0.9, nesterov=True)
        else:
            raise ValueError(f"optimizer must be 'adamw', 'adam' or 'sgd', got {hp.optimizer!r}")
        if hp.scheduler == "none":
            return opt
        if hp.scheduler == "cosine":
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, hp.max_epochs))
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "epoch"}}
        if hp.scheduler == "plateau":
            sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=5)
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "monitor": "val_oa"}}
        raise ValueError(f"scheduler must be 'cosine', 'plateau' or 'none', got {hp.scheduler!r}")
