"""Self-supervised pretraining on unlabelled pixels: masked centre modelling.

The method masks a pixel's own spectrum (and a random share of its neighbours') and trains the
network's encoder, with a linear decoder, to reconstruct the masked spectrum from what is left
of its window. It is masked image modelling (He, K. et al. (2022), "Masked autoencoders are
scalable vision learners", CVPR) read at the pixel a patch classifier labels, as masked
spectral-spatial modelling is applied to hyperspectral patches (Ibanez, D. et al. (2022),
"Masked auto-encoding spectral-spatial transformer for hyperspectral image classification",
IEEE TGRS 60); the zeroed mask token of convolutional masked modelling (Tian, K. et al. (2023),
"Designing BERT for convolutional networks", ICLR) replaces the transformer's learnt one. The
encoder learns how a pixel's neighbourhood predicts its spectrum: what the context branch of a
spectral-spatial network has to learn from few labels otherwise.

It reads only spectra: the windows of :func:`hsi.data.unlabelled.pretext_centres`, never a
label. :func:`pretrain_encoder` runs it on a network with an :meth:`encoder`;
the functions of :mod:`hsi.training.encoder_file` carry the learnt weights from ``hsi pretrain``
to ``hsi train --init``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from hsi._progress import phase_bar
from hsi.errors import NonFiniteLossError

log = logging.getLogger("hsi.training")

__all__ = ["METHOD", "SelfSupervisedReport", "gather_windows", "mask_windows", "pretrain_encoder", "start_encoder"]

#: the pretext task's name in reports
METHOD = "masked-centre"
#: share of a window's other pixels masked besides its centre
MASK_RATIO = 0.5
#: windows per optimisation step
BATCH_SIZE = 256


@dataclass
class SelfSupervisedReport:
    """What self-supervised pretraining did, for ``metrics.json`` and the checkpoint.

    Attributes
    ----------
    applied : bool
        The encoder was pretrained (or loaded from ``init``).
    reason : str
        Why not, when it was not; else where the weights came from.
    method : str
        The pretext task.
    pixels : int
        Unlabelled pixels (window centres) it could draw from.
    exclude_test : bool
        Whether windows reaching a test block were left out.
    steps : int
        Optimisation steps.
    loss_start, loss_end : float or None
        Reconstruction loss (mean squared error per band, in preprocessed units) over the first and the last
        tenth of the steps; ``loss_end / loss_start`` says how much it learnt.
    seconds : float
        Time it took.
    """

    applied: bool
    reason: str
    method: str = METHOD
    pixels: int = 0
    exclude_test: bool = False
    steps: int = 0
    loss_start: float | None = None
    loss_end: float | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able fields."""
        return asdict(self)


def gather_windows(cubes: list[torch.Tensor], centres: torch.Tensor, pad: int, size: int) -> torch.Tensor:
    """Windows ``(B, C, size, size)`` around ``centres`` ``(B, 3)`` ``(scene, row, col)``.

    ``cubes`` are the scenes' padded ``(H + 2 pad, W + 2 pad, C)`` cubes; ``size <= 2 pad + 1``.
    """
    offsets = torch.arange(size, device=centres.device) - size // 2 + pad
    out = []
    for scene in torch.unique(centres[:, 0]).tolist():
        own = centres[centres[:, 0] == scene]
        rows = (own[:, 1:2] + offsets)[:, :, None]
        cols = (own[:, 2:3] + offsets)[:, None, :]
        out.append(cubes[scene][rows, cols])  # (b, size, size, C)
    order = torch.argsort(torch.argsort(centres[:, 0], stable=True))  # back to the batch's order
    return torch.cat(out)[order].permute(0, 3, 1, 2).contiguous()


def mask_windows(windows: torch.Tensor, ratio: float, generator: torch.Generator) -> torch.Tensor:
    """``windows`` with every centre spectrum and a ``ratio`` share of the other pixels set to 0."""
    b, _, h, w = windows.shape
    masked = torch.rand(b, 1, h, w, generator=generator) < ratio
    masked[:, :, h // 2, w // 2] = True
    return windows.masked_fill(masked.to(windows.device), 0.0)


def _objective(encoder: Any, decoder: nn.Module, windows: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Mean squared error of the decoded centre spectra of the masked windows."""
    centre = windows[:, :, windows.shape[2] // 2, windows.shape[3] // 2]
    features = encoder.centre_features(mask_windows(windows, MASK_RATIO, generator))
    return F.mse_loss(decoder(features), centre)


def pretrain_encoder(net: nn.Module, cubes: list[np.ndarray], centres: np.ndarray, pad: int, patch_size: int,
                     steps: int, seed: int = 0, lr: float = 1e-3, weight_decay: float = 1e-4,
                     progress: bool = False) -> SelfSupervisedReport:
    """Train ``net``'s encoder by masked centre modelling on the windows of ``centres`` for ``steps`` steps.

    Parameters
    ----------
    net : torch.nn.Module
        A network with an ``encoder()`` (:class:`hsi.models.base.Encoder`); others are left as they are.
    cubes : list of ndarray
        The scenes' preprocessed, padded ``(H + 2 pad, W + 2 pad, C)`` cubes.
    centres : ndarray
        ``(N, 3)`` ``(scene, row, col)`` window centres (:func:`hsi.data.unlabelled.pretext_centres`).
    pad, patch_size : int
        The cubes' padding and the window side the network reads.
    steps : int
        Optimisation steps (AdamW, ``BATCH_SIZE`` windows each, drawn from ``seed``).
    progress : bool
        Count the steps on stderr (a bar, or a line per tenth of them when piped).
    """
    finder = getattr(net, "encoder", None)
    encoder = finder() if callable(finder) else None
    if encoder is None:
        return SelfSupervisedReport(False, "the network has no encoder to pretrain")
    if len(centres) == 0 or steps <= 0:
        return SelfSupervisedReport(False, "no unlabelled pixels" if len(centres) == 0 else "no steps")
    started = time.perf_counter()
    device = next(net.parameters()).device
    tensors = [torch.as_tensor(np.asarray(c, dtype=np.float32), device=device) for c in cubes]
    points = torch.as_tensor(centres, device=device)
    generator = torch.Generator().manual_seed(int(seed))
    with torch.random.fork_rng(devices=[]):  # the decoder's start from ``seed`` too, the global stream untouched
        torch.manual_seed(int(seed))
        decoder = nn.Linear(encoder.channels, tensors[0].shape[-1]).to(device)
    params = [p for m in encoder.modules.values() for p in m.parameters()] + list(decoder.parameters())
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    with phase_bar(int(steps), "self-supervised pretraining", "step", progress) as bar:
        losses = _optimise(net, encoder, decoder, optimizer, tensors, points, pad, patch_size, steps, generator, bar)
    tenth = max(1, steps // 10)
    return SelfSupervisedReport(True, "pretrained", METHOD, len(centres), False, steps, float(np.mean(losses[:tenth])),
                                float(np.mean(losses[-tenth:])), time.perf_counter() - started)


def _optimise(net: nn.Module, encoder: Any, decoder: nn.Module, optimizer: torch.optim.Optimizer,
              cubes: list[torch.Tensor], points: torch.Tensor, pad: int, patch_size: int, steps: int,
              generator: torch.Generator, bar: Any = None) -> list[float]:
    """The optimisation loop of :func:`pretrain_encoder`; the loss of every step (each counted on ``bar``)."""
    was_training = net.training
    net.train()
    losses: list[float] = []
    try:
        with torch.enable_grad():
            for step in range(int(steps)):
                pick = torch.randint(len(points), (min(BATCH_SIZE, len(points)),), generator=generator)
                windows = gather_windows(cubes, points[pick.to(points.device)], pad, patch_size)
                loss = _objective(encoder, decoder, windows, generator)
                if not torch.isfinite(loss):
                    raise NonFiniteLossError(f"self-supervised pretraining: the loss is {loss.item()} at step {step + 1}; "
                                             "check the cube for extreme values, or train with --no-ssl")
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                losses.append(float(loss.detach()))
                if bar is not None:
                    bar.update(1)
    finally:
        net.train(was_training)
    return losses


def start_encoder(net: nn.Module, datamodule: Any, init: str | None, steps: int, exclude_test: bool,
                  seed: int = 0, model: str | None = None, progress: bool = False) -> SelfSupervisedReport:
    """Start ``net``'s encoder from the encoder file ``init``, else pretrain it on ``datamodule``'s pixels.

    ``model`` is the run's registry name (checked against the file's). ``datamodule`` needs
    ``scene_names``, ``scene_shapes``, ``scene_split``, ``scene_cube`` and ``patch_size``
    (:class:`hsi.data.HSIDataModule` after ``setup``). ``progress`` counts the pretraining's steps on stderr.
    """
    if init is not None:
        from hsi.training.encoder_file import apply_encoder, load_encoder

        record = load_encoder(init)
        apply_encoder(net, record, init, datamodule, model)
        made = record["report"]  # how the file's encoder was pretrained
        return SelfSupervisedReport(True, f"loaded from {init}", made["method"], made["pixels"], made["exclude_test"])
    if not hasattr(datamodule, "scene_cube"):
        return SelfSupervisedReport(False, "the DataModule has no scene_cube() to read pixels from")
    from hsi.data.unlabelled import pretext_windows

    cubes, centres, pad = pretext_windows(datamodule, exclude_test)
    if getattr(getattr(datamodule, "trainer", None), "is_global_zero", True):
        log.warning(f"self-supervised pretraining of the encoder: {steps} steps of {BATCH_SIZE} windows drawn from "
                    f"{len(centres):,} pixels{' outside the test blocks' if exclude_test else ''} (--ssl-steps)")
    report = pretrain_encoder(net, cubes, centres, pad, int(datamodule.patch_size), steps, seed, progress=progress)
    report.exclude_test = bool(exclude_test)
    return report
