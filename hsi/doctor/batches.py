"""Check 1: one batch per split has the shape, dtype and value range the model expects; the file its scale.

The scale of the file itself is judged on the scene as read (after the reader divided by
any ``reflectance scale factor``): integer values whose 0.1st percentile is near zero
and whose 99.9th percentile lies between 2000 and 16000 are reflectance times 10000 left
undivided. The preprocessing may hide it from the network (min-max scaling is blind to a
constant factor), but unscaled values break everything that reads units: ``scaling=None``,
models shared between files, reflectance thresholds. Only a user's file (``cube_path``) is
judged: a registry scene is the file everyone uses, in the units its distributors chose.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from hsi.doctor.result import CheckResult, first_batch, save_figure

__all__ = ["check_batches", "expected_range", "scale_problem"]

#: how far (in spans of the expected range) values may stray before the range fails:
#: pixels of val/test and of patch borders were not used to fit the scaling
RANGE_SLACK = 1.0
#: reflectance x 10000 left undivided: integer values, low percentile in this range...
UNSCALED_LOW = (-1000.0, 500.0)
#: ...and high percentile in this one (reflectance 0.2 to 1.6)
UNSCALED_HIGH = (2000.0, 16000.0)


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


def scale_problem(cube: np.ndarray, seed: int = 0, max_values: int = 200_000) -> tuple[str, str | None]:
    """``(evidence, problem or None)`` about the units of a scene as read (see the module docstring).

    Parameters
    ----------
    cube : (H, W, C) array
        The scene's values after the reader's scaling.
    seed : int
        Seed of the value sample.
    max_values : int
        Values sampled.

    Returns
    -------
    tuple
        One line of evidence, and the problem when the values look like undivided reflectance.
    """
    flat = cube.reshape(-1)
    sample = flat[np.random.default_rng(seed).choice(flat.size, min(max_values, flat.size), replace=False)]
    sample = sample[np.isfinite(sample)].astype(np.float64)
    if not sample.size:
        return "file values: none finite", None
    low, high = (float(v) for v in np.percentile(sample, [0.1, 99.9]))
    integers = bool(np.all(sample == np.round(sample)))
    line = (f"file values (as read): 0.1-99.9th percentile {low:.4g}..{high:.4g}, "
            f"{'all integers' if integers else 'not integers'}")
    unscaled = (integers and UNSCALED_LOW[0] <= low <= UNSCALED_LOW[1]
                and UNSCALED_HIGH[0] <= high <= UNSCALED_HIGH[1])
    if not unscaled:
        return line + " - not undivided reflectance x 10000", None
    return line, (f"the file's values look like reflectance x 10000 that was never divided by its scale (integers "
                  f"from about 0 to {high:.0f}, no reflectance scale factor applied): add 'reflectance scale factor "
                  f"= 10000' to the ENVI header or store reflectance (0..1); if these are raw counts or radiance, "
                  f"not reflectance, ignore this")


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


def _file_scale(datamodule: Any, problems: list[str]) -> str:
    """The evidence line of :func:`scale_problem` on the scene re-read; its problem appended to ``problems``."""
    from hsi.data.scene_source import load_source

    line, problem = scale_problem(load_source(datamodule.source).cube)
    if problem is not None and datamodule.source.kind != "files":
        # a registry scene comes in the units its distributors chose (Pavia University and Salinas
        # are scaled integers): that is the scene as everyone uses it, not a fault of this copy
        return line + f" - the units in which registry scene {datamodule.source.name!r} is distributed"
    if problem is not None:
        problems.append(problem)
    return line


def check_batches(datamodule: Any, out: str | Path | None = None) -> CheckResult:
    """One batch of each split: shape ``(B, C, P, P)``, float32, 0-based int64 labels, finite, in range; file scale.

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

    h = datamodule.preprocessing
    c, p, k = int(datamodule.num_bands), int(datamodule.patch_size), int(datamodule.num_classes)
    bounds = expected_range(h["scaling"], h["pca"])
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
              else f"{h['scaling']} scaling: expected {bounds[0]:g}..{bounds[1]:g} (dashed), "
                   f"failing beyond {RANGE_SLACK:g} span outside")
    evidence.insert(0, f"expected (B, {c}, {p}, {p}) float32; {expect}")
    evidence.append(_file_scale(datamodule, problems))
    fig.tight_layout()
    return CheckResult("batches", not problems, evidence + problems, save_figure(fig, out, "batches"),
                       {"ranges": ranges, "problems": problems})
