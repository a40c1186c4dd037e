"""Start a network's per-pixel spectral path from a full-batch fit on the training pixels.

Minibatch AdamW over a few thousand training pixels leaves the spectral path of the
default network short of what the spectra alone can do. On Samson's five spatial folds a
per-pixel network of the same shape as ``ssnet``'s stem (two 64-wide ReLU layers and a
linear classifier), fitted to the training spectra by full-batch L-BFGS with the run's
loss and weight decay, reached 99.6 % test OA, above the RBF-SVM's 99.4 %, where the
AdamW-trained default reached 99.1 %. Its stem is therefore started there: the fitted
per-pixel network is written into the network's :class:`~hsi.models.base.PixelPath` so
that, in eval mode, the path computes it exactly, with each batch norm folded in (its
running statistics are the training pixels' and its affine part undoes them), and the
classifier starts with the per-pixel network's output layer on the path's inputs and zero
weight on the others (the context). Minibatch training then goes on from there with
every weight free: the context is learnt as what the spectrum alone gets wrong.

:func:`pretrain_pixel_path` does this; :class:`hsi.training.task.HSIClassifier` calls it
when fitting starts (``pretrain=True``, the default), and networks without a pixel path
are left as built.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from hsi._progress import finish, phase_bar
from hsi.data.build import IGNORE_INDEX
from hsi.models.base import PixelPath

__all__ = ["PRETRAIN_MAX_ITER", "PretrainReport", "fit_pixel_network", "pretrain_pixel_path", "write_pixel_path"]

#: L-BFGS iterations of the per-pixel fit at most (it stops earlier once the gradient vanishes)
PRETRAIN_MAX_ITER = 500


@dataclass
class PretrainReport:
    """What the start of the pixel path did, for ``metrics.json``.

    Attributes
    ----------
    applied : bool
        The network's pixel path was started from the per-pixel fit.
    reason : str
        Why not, when it was not (else "pretrained").
    train_oa : float or None
        Accuracy of the per-pixel fit on the training pixels.
    train_pixels : int
        Pixels it was fitted on.
    seconds : float
        Time of the fit.
    """

    applied: bool
    reason: str
    train_oa: float | None = None
    train_pixels: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able fields."""
        return asdict(self)


def _init_linear(fan_in: int, fan_out: int, generator: torch.Generator, device: torch.device) -> list[torch.Tensor]:
    """Weight ``(fan_out, fan_in)`` and bias drawn as ``nn.Linear`` draws them, from ``generator``."""
    bound = 1.0 / math.sqrt(fan_in)
    weight = (torch.rand(fan_out, fan_in, generator=generator) * 2 - 1) * bound
    bias = (torch.rand(fan_out, generator=generator) * 2 - 1) * bound
    return [weight.to(device).requires_grad_(True), bias.to(device).requires_grad_(True)]


def _forward(params: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """Logits of the per-pixel network ``params`` (weight, bias pairs; ReLU between layers)."""
    for i in range(0, len(params) - 2, 2):
        x = torch.relu(F.linear(x, params[i], params[i + 1]))
    return F.linear(x, params[-2], params[-1])


def fit_pixel_network(spectra: torch.Tensor, labels: torch.Tensor, widths: list[int], num_classes: int,
                      weight_decay: float, class_weights: torch.Tensor | None = None, label_smoothing: float = 0.0,
                      seed: int = 0, max_iter: int = PRETRAIN_MAX_ITER, progress: bool = False) -> list[torch.Tensor]:
    """A per-pixel network with ReLU layers of ``widths`` and a linear output, fitted by full-batch L-BFGS.

    The objective is the training loss (cross-entropy with the class weights and label
    smoothing, unlabeled samples ignored) plus ``weight_decay`` times the squared norm of
    every weight and bias, over all ``spectra`` ``(N, C)`` at once. Returns the
    ``[weight, bias, ...]`` of each layer, detached; the start is drawn from ``seed``. ``progress``
    counts the loss evaluations on stderr (a bar, or a line per tenth of L-BFGS's limit when piped).
    """
    generator = torch.Generator().manual_seed(int(seed))
    dims = [spectra.shape[1], *widths, num_classes]
    params: list[torch.Tensor] = []
    for fan_in, fan_out in zip(dims[:-1], dims[1:]):
        params += _init_linear(fan_in, fan_out, generator, spectra.device)
    optimizer = torch.optim.LBFGS(params, lr=1.0, max_iter=int(max_iter), history_size=50,
                                  line_search_fn="strong_wolfe")
    bar = phase_bar(optimizer.param_groups[0]["max_eval"], "per-pixel pretraining", "eval", progress)

    def closure() -> torch.Tensor:
        bar.update(1)
        optimizer.zero_grad()
        loss = F.cross_entropy(_forward(params, spectra), labels, weight=class_weights, ignore_index=IGNORE_INDEX,
                               label_smoothing=label_smoothing)
        loss = loss + weight_decay * sum((p * p).sum() for p in params)
        loss.backward()
        return loss

    optimizer.step(closure)
    finish(bar)  # L-BFGS stops once converged, mostly before its limit
    return [p.detach() for p in params]


def write_pixel_path(path: PixelPath, params: list[torch.Tensor], spectra: torch.Tensor) -> None:
    """Write the per-pixel network ``params`` into ``path``: in eval mode the path then computes it exactly.

    Each ``(conv, norm)`` pair takes the layer's weight; the norm's running mean and
    variance become those of the convolution's output over ``spectra`` and its affine
    part adds them back with the layer's bias, so ``norm(conv(x)) = W x + b``. The head's
    ``columns`` take the output layer, its other inputs zero weight, its bias the output bias.
    """
    if len(params) != 2 * len(path.layers) + 2:
        raise ValueError(f"write_pixel_path: {len(params) // 2} layers for a path of {len(path.layers)} + head")
    with torch.no_grad():
        x = spectra
        for (conv, norm), weight, bias in zip(path.layers, params[0::2], params[1::2]):
            z = x @ weight.T
            mean, var = z.mean(0), z.var(0, unbiased=False)
            conv.weight.copy_(weight.reshape(conv.weight.shape))
            norm.running_mean.copy_(mean)
            norm.running_var.copy_(var)
            norm.weight.copy_(torch.sqrt(var + norm.eps))
            norm.bias.copy_(mean + bias)
            x = torch.relu(z + bias)
        head = path.head
        head.weight.zero_()
        head.weight[:, path.columns, 0, 0] = params[-2]
        head.bias.copy_(params[-1])


def pretrain_pixel_path(net: nn.Module, spectra: np.ndarray, labels: np.ndarray, weight_decay: float,
                        class_weights: torch.Tensor | None = None, label_smoothing: float = 0.0,
                        seed: int = 0, progress: bool = False) -> PretrainReport:
    """Start ``net``'s pixel path from a per-pixel network fitted to ``spectra`` ``(N, C)`` and ``labels`` ``(N,)``.

    The fit runs on the device of ``net``'s weights. Networks without a pixel path
    (``net.pixel_path()`` missing or None) are left as they are, and so is every network
    when there are no training pixels. ``progress`` shows the fit's progress on stderr.
    """
    finder = getattr(net, "pixel_path", None)
    path = finder() if callable(finder) else None
    if path is None:
        return PretrainReport(False, "the network has no per-pixel spectral path")
    if len(labels) == 0:
        return PretrainReport(False, "no training pixels")
    started = time.perf_counter()
    device = path.head.weight.device
    x = torch.as_tensor(np.ascontiguousarray(spectra), dtype=torch.float32, device=device)
    y = torch.as_tensor(np.asarray(labels), dtype=torch.int64, device=device)
    weights = None if class_weights is None else class_weights.to(device)
    widths = [conv.out_channels for conv, _ in path.layers]
    with torch.enable_grad():
        params = fit_pixel_network(x, y, widths, path.head.out_channels, weight_decay, weights, label_smoothing, seed,
                                   progress=progress)
    write_pixel_path(path, params, x)
    labeled = y != IGNORE_INDEX
    with torch.no_grad():
        train_oa = float((_forward(params, x[labeled]).argmax(1) == y[labeled]).float().mean())
    return PretrainReport(True, "pretrained", train_oa, int(labeled.sum()), time.perf_counter() - started)
