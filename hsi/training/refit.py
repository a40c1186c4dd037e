"""Refit the classifier layer of a trained network on its training pixels, to the optimum minibatches stop short of.

Minibatch AdamW over a few thousand training pixels ends with a last layer that is still
short of its optimum: on Samson's folds the default's training accuracy was 98.6-99.4 %
where a logistic regression on the raw spectra reaches 99.5 %, and the test pixels it
lost sat on class borders. With the rest of the network frozen, the last layer is a
multinomial logistic regression on the features it receives: a convex problem that
full-batch L-BFGS solves to its optimum in a few hundred cheap steps (the features are
computed once). Measured over 5 spatial folds of Samson and of the synthetic scene
(accuracy benchmark, docs/benchmarks.md).

The rule that keeps it (:func:`keep_refit`): the refit layer replaces the trained one unless
it gets more than one validation pixel fewer right, in which case ``best.ckpt`` keeps the
trained layer. One pixel of slack, not none: the best checkpoint was chosen as the epoch of
the highest validation OA, a maximum over noisy epochs that any later change is compared
against unfairly (on Samson's fold 4 a one-pixel validation drop came with 12 more test
pixels right); more than that is a real loss (a one-epoch cnn2d went from 22.4 % to 8.3 %
validation OA, its layer fitted to features still far from useful).

:func:`refit_checkpoint` does this to ``best.ckpt`` after training (``hsi train``,
``RunOptions.refit``), so the checkpoint that inference reads holds the layer that was kept;
its :class:`RefitReport` (``metrics.json``'s ``"refit"``) says which and why.
"""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass
from typing import Any, Iterator

import torch
import torch.nn.functional as F
from torch import nn

from hsi._progress import finish, phase_bar
from hsi.data.build import IGNORE_INDEX

__all__ = ["REFIT_MAX_ITER", "RefitReport", "classifier_layer", "keep_refit", "refit_checkpoint", "refit_device",
           "refit_layer"]

#: L-BFGS iterations of a refit at most (it stops earlier once the gradient vanishes)
REFIT_MAX_ITER = 300


@dataclass
class RefitReport:
    """What a refit did, for ``metrics.json``.

    Attributes
    ----------
    applied : bool
        The checkpoint now holds the refit layer (``kept == "refit"``).
    kept : {"refit", "trained"}
        Which classifier layer ``best.ckpt`` holds.
    reason : str
        Why (the validation pixels each layer got right, or why no refit was made).
    val_oa_before, val_oa_after : float or None
        Validation OA with the trained and the refit layer (None when no refit was made).
    train_pixels, val_pixels : int
        Pixels it was fitted on and judged on.
    """

    applied: bool
    reason: str
    val_oa_before: float | None = None
    val_oa_after: float | None = None
    train_pixels: int = 0
    val_pixels: int = 0
    kept: str = "trained"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able fields."""
        return asdict(self)


def classifier_layer(net: nn.Module, num_classes: int) -> nn.Module | None:
    """The network's last ``Linear`` or 1x1 ``Conv2d`` layer with ``num_classes`` outputs, or None."""
    last = None
    for module in net.modules():
        if isinstance(module, nn.Linear) and module.out_features == num_classes:
            last = module
        elif isinstance(module, nn.Conv2d) and module.out_channels == num_classes and module.kernel_size == (1, 1) \
                and module.groups == 1:
            last = module
    return last


def layer_inputs(net: nn.Module, layer: nn.Module, loader: Any) -> tuple[torch.Tensor, torch.Tensor] | None:
    """``(features (N, D), labels (N,))``: what ``layer`` receives for each sample of ``loader``, in eval mode.

    A convolution run densely over the patch (``fcn``) gives the network's output at the
    centre pixel: the features are then its input there. None when ``layer``'s output is
    not the network's output (something comes after it), so a refit of it could not be
    judged by the features alone.
    """
    captured: list[torch.Tensor] = []

    def keep(_module: nn.Module, args: tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
        captured.append(args[0].detach())
        captured.append(output.detach())

    feats, labels = [], []
    handle = layer.register_forward_hook(keep)
    device = next(net.parameters()).device
    try:
        with torch.no_grad():
            for batch in loader:
                captured.clear()
                logits = net(batch[0].to(device))
                found = _at_output(captured, logits)
                if found is None:
                    return None
                feats.append(found)
                labels.append(batch[1].to(device))
    finally:
        handle.remove()
    return torch.cat(feats), torch.cat(labels)


def _at_output(captured: list[torch.Tensor], logits: torch.Tensor) -> torch.Tensor | None:
    """The ``(B, D)`` layer input that gives ``logits``: the whole input, or its centre pixel; None when neither."""
    if len(captured) != 2:
        return None
    inputs, output = captured
    if output.numel() == logits.numel() and torch.equal(output.reshape(logits.shape), logits):
        return inputs.reshape(len(logits), -1).float()
    if output.dim() == 4 and inputs.dim() == 4:
        ci, cj = output.shape[2] // 2, output.shape[3] // 2
        if torch.equal(output[:, :, ci, cj], logits):
            return inputs[:, :, ci, cj].float()
    return None


def _weights(layer: nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The layer as a ``(K, D)`` matrix and its bias (a 1x1 convolution flattened)."""
    return layer.weight.detach().reshape(layer.weight.shape[0], -1).clone(), \
        None if layer.bias is None else layer.bias.detach().clone()


def refit_layer(weight: torch.Tensor, bias: torch.Tensor | None, features: torch.Tensor, labels: torch.Tensor,
                weight_decay: float, class_weights: torch.Tensor | None = None, label_smoothing: float = 0.0,
                max_iter: int = REFIT_MAX_ITER, progress: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The weights minimising the training loss plus ``weight_decay * |W|^2``, by full-batch L-BFGS from ``weight``.

    The loss is the one the network was trained with (cross-entropy with its class weights
    and label smoothing, unlabeled samples ignored), on every sample at once: a convex
    problem in ``(W, b)``, solved from the trained weights. ``progress`` counts the loss evaluations on stderr.
    """
    w = weight.clone().requires_grad_(True)
    b = None if bias is None else bias.clone().requires_grad_(True)
    params = [w] if b is None else [w, b]
    optimizer = torch.optim.LBFGS(params, lr=1.0, max_iter=int(max_iter), history_size=20,
                                  line_search_fn="strong_wolfe", tolerance_grad=1e-9, tolerance_change=1e-12)
    bar = phase_bar(optimizer.param_groups[0]["max_eval"], "refit", "eval", progress)

    def closure() -> torch.Tensor:
        bar.update(1)
        optimizer.zero_grad()
        logits = features @ w.T + (0 if b is None else b)
        loss = F.cross_entropy(logits, labels, weight=class_weights, ignore_index=IGNORE_INDEX,
                               label_smoothing=label_smoothing) + weight_decay * (w * w).sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    finish(bar)  # L-BFGS stops once converged, mostly before its limit
    return w.detach(), None if b is None else b.detach()


def _right(weight: torch.Tensor, bias: torch.Tensor | None, features: torch.Tensor, labels: torch.Tensor) -> int:
    """Labelled samples the layer ``(weight, bias)`` classifies right."""
    labeled = labels != IGNORE_INDEX
    logits = features[labeled] @ weight.T + (0 if bias is None else bias)
    return int((logits.argmax(1) == labels[labeled]).sum())


def keep_refit(right_before: int, right_after: int, val_pixels: int) -> tuple[bool, str]:
    """Whether the refit layer replaces the trained one, and why: not when it gets more than one of the
    ``val_pixels`` validation pixels fewer right (with none to judge by, it is kept)."""
    if val_pixels == 0:
        return True, "no validation pixels to judge it by"
    said = f"{right_before} -> {right_after} of {val_pixels} validation pixels right"
    if right_after >= right_before - 1:
        return True, f"{said} (kept: at most one fewer)"
    return False, f"{said} (more than one fewer: the trained layer is kept)"


def refit_device(accelerator: str) -> torch.device:
    """Where the features are computed and the layer refit: the run's GPU when it trained on one, else the CPU."""
    wants_gpu = str(accelerator).lower() in ("auto", "gpu", "cuda")
    return torch.device("cuda" if wants_gpu and torch.cuda.is_available() else "cpu")


def refit_checkpoint(path: str, datamodule: Any, accelerator: str = "cpu", progress: bool = False) -> RefitReport:
    """Refit the classifier layer of the checkpoint at ``path`` on ``datamodule``'s training pixels, in the file.

    The training patches are read in their stored order without augmentation
    (``datamodule.fixed_dataloader("train")``); the refit layer is written only when
    :func:`keep_refit` keeps it (the file replaced atomically), else the file is left as it is.
    The validation OA with either layer is reported. Networks whose
    output is not a final ``Linear`` or 1x1 ``Conv2d`` layer are left as they are. The work
    runs on :func:`refit_device` of the run's ``accelerator``; ``progress`` shows the fit's progress on stderr.
    """
    from hsi.training.task import HSIClassifier

    device = refit_device(accelerator)
    task = HSIClassifier.load_from_checkpoint(path, map_location="cpu", weights_only=False).to(device)
    net = task.net.eval()
    layer = classifier_layer(net, int(task.hparams.num_classes))
    if layer is None:
        return RefitReport(False, "no final Linear or 1x1 Conv2d layer with one output per class")
    train = layer_inputs(net, layer, _patches(datamodule, datamodule.fixed_dataloader("train"), device))
    val_loader = datamodule.val_dataloader()
    if len(val_loader.dataset) == 0:  # no validation pixel (val_budget="none"): nothing to judge by, none to read
        val = None if train is None else (train[0][:0], train[1][:0])
    else:
        val = layer_inputs(net, layer, _patches(datamodule, val_loader, device))
    if train is None or val is None:
        return RefitReport(False, "the network's output is not its last layer's")
    weight, bias = _weights(layer)
    new_weight, new_bias = refit_layer(weight, bias, *train, float(task.hparams.weight_decay),
                                       getattr(task, "class_weights", None), float(task.hparams.label_smoothing),
                                       progress=progress)
    report = _judged(weight, bias, new_weight, new_bias, val, int(len(train[1])))
    if report.applied:
        _write_layer(path, task, layer, new_weight, new_bias)
    return report


def _judged(weight: torch.Tensor, bias: torch.Tensor | None, new_weight: torch.Tensor, new_bias: torch.Tensor | None,
            val: tuple[torch.Tensor, torch.Tensor], train_pixels: int) -> RefitReport:
    """The report of a refit, judged on the validation features ``val`` (:func:`keep_refit`)."""
    val_pixels = int((val[1] != IGNORE_INDEX).sum())
    before, after = _right(weight, bias, *val), _right(new_weight, new_bias, *val)
    keep, reason = keep_refit(before, after, val_pixels)
    oa_before, oa_after = (before / val_pixels, after / val_pixels) if val_pixels else (None, None)
    return RefitReport(keep, reason, oa_before, oa_after, train_pixels, val_pixels, "refit" if keep else "trained")


def _write_layer(path: str, task: Any, layer: nn.Module, new_weight: torch.Tensor, new_bias: torch.Tensor | None) -> None:
    """Put the refit ``layer``'s weights into the checkpoint at ``path`` (replaced atomically)."""
    from hsi._atomic import write_bytes_atomic
    from hsi.data.checkpoint import read_checkpoint

    checkpoint = read_checkpoint(path)
    prefix = next(name for name, module in task.named_modules() if module is layer)
    state = checkpoint["state_dict"]
    old = state[f"{prefix}.weight"]
    state[f"{prefix}.weight"] = new_weight.reshape(layer.weight.shape).to("cpu", old.dtype) \
        .contiguous(memory_format=_memory_format(old))
    if new_bias is not None:
        state[f"{prefix}.bias"] = new_bias.to("cpu", state[f"{prefix}.bias"].dtype)
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    write_bytes_atomic(path, buffer.getvalue())


def _patches(datamodule: Any, loader: Any, device: torch.device) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """``(patches, labels)`` on ``device`` from ``loader``, index batches gathered as training gathers them.

    With ``gather_on_device`` the loader gives indices, which the DataModule's
    ``on_after_batch_transfer`` turns into patches on the device.
    """
    for batch in loader:
        if isinstance(batch, dict):
            moved = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
            batch = datamodule.on_after_batch_transfer(moved, 0)
        yield batch[0].to(device), batch[1].to(device)


def _memory_format(tensor: torch.Tensor) -> torch.memory_format:
    """channels_last for a 4-D weight stored so (:func:`hsi.models.channels_last_weights`), else contiguous."""
    if tensor.dim() == 4 and tensor.is_contiguous(memory_format=torch.channels_last) and not tensor.is_contiguous():
        return torch.channels_last
    return torch.contiguous_format
