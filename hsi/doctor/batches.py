"""Check 1: one batch per split has the shape, dtype and value range the model expects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from hsi.doctor.result import CheckResult, first_batch, save_figure

__all__ = ["check_batches", "expected_range"]

#: how far (in spans of the expected range) values may stray before the range fails:
#: pixels of val/test and of patch borders were not used to fit the scaling
RANGE_SLACK = 1.0


def expected_range(scaling: str | None, pca: Any) -> tuple[float, float] | None:
    """The value range the scaling produces on its training pixels, or None when it has none (PCA, no scaling).

    Parameters
    ----------
    scaling : str or None
        The DataModule's ``scaling``.
    pca : int, float or None
        The DataModule's ``pca`` (components have no fixed range).

    Returns
    -------
    tuple of float or None
        ``(low, high)``: ``(0, 1)`` for min-max, ``(-5, 5)`` (five standard deviations) for standardize.
    """
    if pca is not None or scaling is None:
        return None
    return (0.0, 1.0) if scaling == "minmax" else (-5.0, 5.0)


def _batch_problems(name: str, x: torch.Tensor, y: torch.Tensor, c: int, p: int, k: int,
                    bounds: tuple[float, float] | None) -> list[str]:
    problems = []
    if tuple(x.shape[1:]) != (c, p, p):
        problems.append(f"{name}: patches {tuple(x.shape)}, expected (B, {c}, {p}, {p}) = (B, C, P, P)"
                        + (" - the band axis is not second (a missing transpose?)" if c in x.shape[2:] else ""))
    if x.dtype != torch.float32:
        problems.append(f"{name}: patches are {x.dtype}, expected torch.float32")
    if y.dtype != torch.int64 or y.ndim != 1 or y.shape[0] != x.shape[0]:
        problems.append(f"{name}: labels {tuple(y.shape)} {y.dtype}, expected ({x.shape[0]},) torch.int64")
    elif y.numel() and (int(y.min()) < 0 or int(y.max()) >= k):
        problems.append(f"{name}: labels {int(y.min())}..{int(y.max())}, expected 0-based classes 0..{k - 1}")
    finite = torch.isfinite(x)
    if not bool(finite.all()):
        problems.append(f"{name}: {int((~finite).sum())} NaN or infinite value(s) in the batch")
    elif bounds is not None:
        lo, hi = bounds
        slack = RANGE_SLACK * (hi - lo)
        mn, mx = float(x.min()), float(x.max())
        if mn < lo - slack or mx > hi + slack:
            problems.append(f"{name}: values {mn:.4g}..{mx:.4g}, far outside the scaling's {lo:g}..{hi:g} "
                            f"(an unapplied normalization or the wrong array?)")
    return problems


def check_batches(datamodule: Any, out: str | Path | None = None) -> CheckResult:
    """One batch of each split: shape ``(B, C, P, P)``, float32, 0-based int64 labels, finite, in range.

    Parameters
    ----------
    datamodule : HSIDataModule
        Set up for ``fit`` and ``test``.
    out : str or Path, optional
        Folder of ``batches.png`` (value histograms per split).

    Returns
    -------
    CheckResult
    """
    from matplotlib.figure import Figure

    h = datamodule.hparams
    c, p, k = int(datamodule.num_bands), int(datamodule.patch_size), int(datamodule.num_classes)
    bounds = expected_range(h.scaling, h.pca)
    evidence, problems, ranges = [], [], {}
    fig = Figure(figsize=(9, 3), dpi=100)
    axes = fig.subplots(1, 3)
    loaders = {"train": datamodule.train_dataloader, "val": datamodule.val_dataloader,
               "test": datamodule.test_dataloader}
    for ax, (name, make) in zip(axes, loaders.items()):
        x, y = first_batch(make())
        found = _batch_problems(name, x, y, c, p, k, bounds)
        problems += found
        values = x.detach().float().flatten()
        values = values[torch.isfinite(values)]
        mn, mx = (float(values.min()), float(values.max())) if values.numel() else (float("nan"),) * 2
        ranges[name] = (mn, mx)
        evidence.append(f"{name}: {tuple(x.shape)} {x.dtype}, values {mn:.4g}..{mx:.4g}, "
                        f"labels {tuple(y.shape)} {y.dtype}" + ("" if found else " - ok"))
        ax.hist(values.numpy()[:200_000], bins=60, color="tab:blue")
        ax.set_title(f"{name} {tuple(x.shape)}", fontsize=9)
        ax.set_xlabel("value")
        if bounds is not None:
            for edge in bounds:
                ax.axvline(edge, color="black", linestyle="--", linewidth=0.8)
    axes[0].set_ylabel("count")
    expect = ("no fixed range (PCA or no scaling): range reported, not checked" if bounds is None
              else f"{h.scaling} scaling: expected {bounds[0]:g}..{bounds[1]:g} (dashed), "
                   f"failing beyond {RANGE_SLACK:g} span outside")
    evidence.insert(0, f"expected (B, {c}, {p}, {p}) float32; {expect}")
    fig.tight_layout()
    return CheckResult("batches", not problems, evidence + problems, save_figure(fig, out, "batches"),
                       {"ranges": ranges, "problems": problems})
