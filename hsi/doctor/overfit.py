"""Check 3: one fixed batch of 16 training patches is fitted to a loss near zero, and its labels are its own.

The same 16 dataset indices are fetched again at every step, with the epoch advanced, so
the pipeline's own randomness (augmentation, any per-fetch ordering) is exercised: a
pipeline that cannot drive the loss of 16 samples close to zero in 200 steps is broken
(labels paired with other patches at each fetch, labels out of range, a frozen or NaN
network, inputs without signal). A fixed, consistent mislabelling would still be
memorised, so the batch's labels are also compared with the scene's label map at the
patches' centres (an exact test of patch / label alignment).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from hsi.doctor.result import CheckResult, save_figure

__all__ = ["ModelFactory", "check_overfit", "default_model_factory", "fixed_batch"]

#: ``factory(num_bands, num_classes, patch_size) -> torch.nn.Module`` returning logits ``(B, K)``
ModelFactory = Callable[[int, int, int], torch.nn.Module]

#: loss that counts as "close to zero"
TARGET_LOSS = 0.05


def default_model_factory(model: str = "cnn2d", **options: Any) -> ModelFactory:
    """A factory of ``hsi.models`` networks by registry name.

    Parameters
    ----------
    model : str
        Registry name (``cnn2d``, ``fcn``, ``spectral1d``...).
    **options
        Keyword arguments of the network.

    Returns
    -------
    ModelFactory
    """
    from hsi.models import build_model

    def factory(num_bands: int, num_classes: int, patch_size: int) -> torch.nn.Module:
        return build_model(model, num_bands=num_bands, num_classes=num_classes, patch_size=patch_size, **options)

    return factory


def fixed_batch(datamodule: Any, size: int = 16, seed: int = 0) -> np.ndarray:
    """Dataset indices of ``size`` training patches, classes as balanced as the training set allows (seeded).

    Parameters
    ----------
    datamodule : HSIDataModule
        Set up for ``fit``.
    size : int
        Patches in the batch.
    seed : int
        Seed of the choice.

    Returns
    -------
    ndarray of int
        Sorted indices into ``datamodule.train_dataset``.
    """
    labels = np.asarray(datamodule.train_dataset.labels)
    rng = np.random.default_rng(seed)
    by_class = [rng.permutation(np.flatnonzero(labels == k)).tolist() for k in np.unique(labels)]
    chosen: list[int] = []
    while len(chosen) < min(size, len(labels)):  # round robin over classes
        for members in by_class:
            if members and len(chosen) < size:
                chosen.append(members.pop())
    return np.asarray(sorted(chosen), dtype=np.int64)


def _fetch(dataset: Any, index: np.ndarray, epoch: int) -> Any:
    dataset.set_epoch(epoch)
    return dataset.__getitems__(index.tolist())


def _train(net: torch.nn.Module, dataset: Any, index: np.ndarray, steps: int, lr: float) -> list[float]:
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    net.train()
    losses = []
    for step in range(steps):
        batch = _fetch(dataset, index, step)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(batch.patches), batch.labels)
        if not bool(torch.isfinite(loss)):
            losses.append(float("nan"))
            break
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
        if losses[-1] < TARGET_LOSS:
            break
    return losses


def _steps_to_target(losses: list[float]) -> int | None:
    return next((i + 1 for i, v in enumerate(losses) if v < TARGET_LOSS), None)


def _alignment_problems(datamodule: Any, batch: Any) -> list[str]:
    """Labels of the batch that differ from the scene's label map at their centres."""
    label_map = datamodule.labels
    coords = batch.coords.numpy()
    expected = label_map[coords[:, 0], coords[:, 1]] - 1
    wrong = np.flatnonzero(expected != batch.labels.numpy())
    if not wrong.size:
        return []
    first = int(wrong[0])
    return [f"{wrong.size} of {len(expected)} labels differ from the label map at their patch centres (first: "
            f"centre {tuple(int(v) for v in coords[first])} has class {int(expected[first])}, the batch says "
            f"{int(batch.labels[first])}): patches and labels are misaligned"]


def check_overfit(datamodule: Any, model_factory: ModelFactory | None = None, out: str | Path | None = None, *,
                  steps: int = 200, lr: float = 3e-3, seed: int = 0, size: int = 16) -> CheckResult:
    """Fit one fixed batch, fetched anew at each step, to a loss near zero; check its labels against the map.

    Parameters
    ----------
    datamodule : HSIDataModule
        Set up for ``fit``.
    model_factory : ModelFactory, optional
        Builds a fresh network; default ``cnn2d``.
    out : str or Path, optional
        Folder of ``overfit.png`` (the loss curve).
    steps : int
        Optimisation steps at most.
    lr : float
        Adam learning rate.
    seed : int
        Seed of the network initialisation and of the batch choice.
    size : int
        Patches in the fixed batch.

    Returns
    -------
    CheckResult
    """
    factory = model_factory or default_model_factory()
    dataset = datamodule.train_dataset
    index = fixed_batch(datamodule, size, seed)
    epoch = dataset.epoch
    try:
        first = _fetch(dataset, index, 0)
        problems = _alignment_problems(datamodule, first)
        torch.manual_seed(seed)
        net = factory(int(first.patches.shape[1]), int(datamodule.num_classes), int(first.patches.shape[-1]))
        losses = _train(net, dataset, index, steps, lr)
    finally:
        dataset.set_epoch(epoch)
    reached = next((i + 1 for i, v in enumerate(losses) if v < TARGET_LOSS), None)
    evidence = [f"batch of {len(index)} training patches, {len(np.unique(first.labels.numpy()))} classes, "
                f"fetched anew at each step (epoch = step)",
                f"loss {losses[0]:.3g} -> {losses[-1]:.3g} in {len(losses)} steps"]
    if not problems:
        evidence.append("labels equal the label map at every patch centre")
    if reached is None:
        problems.append(f"the loss did not fall below {TARGET_LOSS:g} within {steps} steps: labels that change "
                        f"between fetches (misaligned), inputs without signal, or a learning rate too low")
    else:
        evidence.append(f"loss < {TARGET_LOSS:g} after {reached} steps")
    png = save_figure(_figure(losses), out, "overfit")
    return CheckResult("overfit", not problems, evidence + problems, png,
                       {"steps": reached, "final_loss": losses[-1], "losses": losses})


def _figure(losses: list[float]):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.5), dpi=100)
    ax = fig.subplots()
    ax.semilogy(np.arange(1, len(losses) + 1), losses, label="fixed batch")
    ax.axhline(TARGET_LOSS, color="black", linewidth=0.8, linestyle=":", label=f"target {TARGET_LOSS:g}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy loss")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
