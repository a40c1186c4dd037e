"""Check 3: the labels belong to the patches and to the cube, and a network learns them.

Three pieces of evidence:

- **Alignment.** The fixed batch's labels are compared with the scene's label map at
  the patches' centres (an exact test of patch / label pairing in the pipeline).
- **Registration.** The label map itself may be misregistered with the cube (shifted,
  flipped, transposed) in the file; :mod:`hsi.doctor.registration` judges it with a
  per-pixel classifier, labels as given against the same map moved. When the evidence
  cannot tell (too few labelled pixels; a square map that scores alike transposed) the
  check is UNDECIDED unless something else fails it.
- **Learning against a control.** One fixed batch of 64 training patches, fetched anew
  at every step with the epoch advanced (so augmentation is exercised), is fitted until
  its loss is near zero. Any network memorises a small batch whatever its labels, so the
  same training (same initial weights, same steps) is repeated with the labels permuted
  among the patches (seeded): labels that carry the patches' content are learned far
  faster than permuted ones. The check fails when the loss does not reach its target
  (labels that change between fetches, a frozen or NaN network, inputs without signal)
  or when a permuted control gets within :data:`CONTROL_RATIO` of the true labels' loss
  in the same number of steps (labels no more related to the patches than random ones).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
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
#: after as many steps as the true labels needed, every permuted control's loss must be this many times theirs
CONTROL_RATIO = 3.0
#: permuted-label controls
CONTROLS = 3


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


def _train(net: torch.nn.Module, dataset: Any, index: np.ndarray, steps: int, lr: float,
           labels: torch.Tensor | None = None, stop: bool = True) -> list[float]:
    """Adam on the fixed batch for ``steps`` (until the loss target when ``stop``); ``labels`` replace the batch's."""
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    net.train()
    losses = []
    for step in range(steps):
        batch = _fetch(dataset, index, step)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(batch.patches), batch.labels if labels is None else labels)
        if not bool(torch.isfinite(loss)):
            losses.append(float("nan"))
            break
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
        if stop and losses[-1] < TARGET_LOSS:
            break
    return losses


def _steps_to_target(losses: list[float]) -> int | None:
    """Steps until the loss first fell below :data:`TARGET_LOSS`, or None."""
    return next((i + 1 for i, v in enumerate(losses) if v < TARGET_LOSS), None)


def _controls(factory: ModelFactory, shape: tuple[int, int, int], dataset: Any, index: np.ndarray,
              labels: torch.Tensor, steps: int, lr: float, seed: int) -> tuple[list[list[float]], float]:
    """Loss curves of :data:`CONTROLS` runs (same weights and steps) with the labels permuted; the share changed."""
    curves, changed = [], []
    for c in range(CONTROLS):
        permuted = labels[torch.as_tensor(np.random.default_rng([seed, c]).permutation(len(labels)))]
        changed.append(float((permuted != labels).float().mean()))
        torch.manual_seed(seed)
        curves.append(_train(factory(*shape), dataset, index, steps, lr, labels=permuted, stop=False))
    return curves, float(np.mean(changed))


def _learning_problems(losses: list[float], controls: list[list[float]], changed: float,
                       steps: int) -> tuple[list[str], list[str]]:
    """``(evidence, problems)`` of the true-label run against its permuted controls."""
    reached = _steps_to_target(losses)
    evidence = [f"true labels: loss {losses[0]:.3g} -> {losses[-1]:.3g} in {len(losses)} steps"]
    if reached is None:
        return evidence, [f"the loss did not fall below {TARGET_LOSS:g} within {steps} steps: labels that change "
                          f"between fetches (misaligned), inputs without signal, or a learning rate too low"]
    if not controls or changed < 0.2:
        return evidence + [f"permuted control: not run (the permutations change {changed:.0%} of the labels: "
                           f"too few classes in the batch)"], []
    finals = [curve[-1] for curve in controls]
    line = (f"{len(controls)} controls with the labels permuted ({changed:.0%} changed): loss "
            f"{min(finals):.3g}..{max(finals):.3g} after the same {reached} steps, "
            f"{min(finals) / losses[-1]:.1f} x the true labels' (at least {CONTROL_RATIO:g} x required)")
    if min(finals) < CONTROL_RATIO * losses[-1]:
        return evidence, [line + ": the network learns random labels about as fast, so the labels carry little "
                                 "of the patches' content (misaligned patches and labels, or labels of another scene)"]
    return evidence + [line], []


def _registration(datamodule: Any, seed: int) -> tuple[Any, list[str], list[str], list[str]]:
    """:func:`~hsi.doctor.registration.check_registration` of the scene as read: evidence, problems, undecided."""
    from hsi.data.scene_source import load_source
    from hsi.doctor.registration import check_registration, registration_problems

    src = load_source(datamodule.source)
    result = check_registration(src.cube, src.labels, seed=seed)
    return (result, *registration_problems(result))


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
                  steps: int = 200, lr: float = 3e-3, seed: int = 0, size: int = 64) -> CheckResult:
    """Labels aligned with the patches, registered with the cube, and learned far faster than permuted ones.

    Parameters
    ----------
    datamodule : HSIDataModule
        Set up for ``fit``.
    model_factory : ModelFactory, optional
        Builds a fresh network; default ``cnn2d``.
    out : str or Path, optional
        Folder of ``overfit.png`` (loss curves; registration scores of the moved maps).
    steps : int
        Optimisation steps at most.
    lr : float
        Adam learning rate.
    seed : int
        Seed of the network initialisation, the batch choice, the permutations and the pixel samples.
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
        shape = (int(first.patches.shape[1]), int(datamodule.num_classes), int(first.patches.shape[-1]))
        torch.manual_seed(seed)
        losses = _train(factory(*shape), dataset, index, steps, lr)
        reached = _steps_to_target(losses)
        controls, changed = (([], 0.0) if reached is None
                             else _controls(factory, shape, dataset, index, first.labels, reached, lr, seed))
    finally:
        dataset.set_epoch(epoch)
    registration, reg_evidence, reg_problems, undecided = _registration(datamodule, seed)
    evidence = [f"batch of {len(index)} training patches, {len(np.unique(first.labels.numpy()))} classes, "
                f"fetched anew at each step (epoch = step)"]
    if not problems:
        evidence.append("labels equal the label map at every patch centre")
    learn_evidence, learn_problems = _learning_problems(losses, controls, changed, steps)
    problems += reg_problems + learn_problems
    png = save_figure(_figure(losses, controls, registration), out, "overfit")
    values = {"steps": reached, "final_loss": losses[-1], "losses": losses,
              "control_losses": [curve[-1] for curve in controls],
              "registration": None if registration is None else asdict(registration)}
    return CheckResult("overfit", not problems, evidence + learn_evidence + reg_evidence + problems, png, values,
                       undecided)


def _figure(losses: list[float], controls: list[list[float]], registration: Any):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 3.8), dpi=100)
    ax, reg_ax = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    ax.semilogy(np.arange(1, len(losses) + 1), losses, color="tab:blue", label="true labels")
    for i, curve in enumerate(controls):
        ax.semilogy(np.arange(1, len(curve) + 1), curve, color="tab:grey", linewidth=0.8,
                    label="labels permuted" if i == 0 else None)
    ax.axhline(TARGET_LOSS, color="black", linewidth=0.8, linestyle=":", label=f"target {TARGET_LOSS:g}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy loss")
    ax.legend(fontsize=8)
    if registration is not None and registration.candidates:
        names = list(registration.candidates)
        gains = [100 * registration.candidates[n][0] for n in names]
        reg_ax.barh(names, gains, color=["tab:red" if g > 0 else "tab:grey" for g in gains])
        reg_ax.axvline(0, color="black", linewidth=0.8)
        reg_ax.tick_params(axis="y", labelsize=7)
    reg_ax.set_xlabel("held-out accuracy of the moved map - as given (points)")
    reg_ax.set_title("label registration: as given should beat every moved map", fontsize=9)
    fig.tight_layout()
    return fig
