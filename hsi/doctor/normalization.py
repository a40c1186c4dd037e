"""Check 4: the preprocessing was fitted on the training pixels and the test split is transformed with it.

The DataModule's fitted pipeline is compared with one fitted afresh on the training pixels
of the scene re-read (same settings): applied to the test pixels, both must agree. The
test split's range under the training parameters is reported against the training range,
and values far outside it are flagged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hsi.doctor.result import CheckResult, save_figure

__all__ = ["check_normalization"]

#: refit and DataModule pipeline may differ by this fraction of the training span
REFIT_TOLERANCE = 1e-4
#: a test value further than this many training spans outside the training range is "far"
FAR_SPANS = 1.0
#: more than this fraction of far test values fails
FAR_FRACTION = 0.01


def check_normalization(datamodule: Any, out: str | Path | None = None) -> CheckResult:
    """Refit the preprocessing on the training pixels and compare; report the test range under it.

    Parameters
    ----------
    datamodule : HSIDataModule
        Set up for ``fit`` and ``test``.
    out : str or Path, optional
        Folder of ``normalization.png`` (per-band train and test ranges).

    Returns
    -------
    CheckResult
    """
    from hsi.data.scene_source import load_source
    from hsi.preprocess import PreprocessSpec

    h = datamodule.preprocessing
    src = load_source(datamodule.source)
    train_mask = np.asarray(datamodule.split.train) & np.isfinite(src.cube).all(axis=-1)
    test_mask = np.asarray(datamodule.split.test) & np.isfinite(src.cube).all(axis=-1)
    used = datamodule.pipeline
    refit = PreprocessSpec.from_options(h).fit(src.cube, train_mask, wavelengths=src.wavelengths,
                                               of=f"scene {src.name!r}")
    train = np.asarray(used.transform(src.cube[train_mask][None]), dtype=np.float64)[0]
    test = np.asarray(used.transform(src.cube[test_mask][None]), dtype=np.float64)[0]
    test_refit = np.asarray(refit.transform(src.cube[test_mask][None]), dtype=np.float64)[0]
    lo, hi = train.min(axis=0), train.max(axis=0)
    span = np.maximum(hi - lo, 1e-12)
    pca = "" if h["pca"] is None else f", PCA {h['pca']}"
    evidence = [f"{int(train_mask.sum())} training and {int(test_mask.sum())} test pixels; "
                f"pipeline: {h['scaling'] or 'no scaling'}{pca}",
                f"training range {lo.min():.4g}..{hi.max():.4g}; test range under the training parameters "
                f"{test.min():.4g}..{test.max():.4g}"]
    problems = []
    diff = float((np.abs(test - test_refit) / span).max()) if test.size else 0.0
    if diff > REFIT_TOLERANCE:
        problems.append(f"the pipeline in use differs from one fitted on the training pixels by up to "
                        f"{diff:.3g} training spans on the test pixels: it was fitted on other pixels")
    else:
        evidence.append(f"the pipeline in use equals a refit on the training pixels (largest difference "
                        f"{diff:.2g} spans)")
    far = (test < lo - FAR_SPANS * span) | (test > hi + FAR_SPANS * span)
    fraction = float(far.mean()) if far.size else 0.0
    bands = np.flatnonzero(far.mean(axis=0) > FAR_FRACTION) if far.size else np.zeros(0, int)
    line = (f"{fraction:.2%} of test values lie more than {FAR_SPANS:g} training span outside the training range"
            + (f" (bands {bands[:10].tolist()})" if bands.size else ""))
    (problems if fraction > FAR_FRACTION else evidence).append(line)
    png = save_figure(_figure(lo, hi, test), out, "normalization")
    return CheckResult("normalization", not problems, evidence + problems, png,
                       {"refit_difference": diff, "far_fraction": fraction})


def _figure(lo: np.ndarray, hi: np.ndarray, test: np.ndarray):
    from matplotlib.figure import Figure

    bands = np.arange(lo.size)
    fig = Figure(figsize=(8, 3.5), dpi=100)
    ax = fig.subplots()
    ax.fill_between(bands, lo, hi, color="tab:blue", alpha=0.3, label="training range")
    if test.size:
        ax.plot(bands, test.min(axis=0), color="tab:red", linewidth=0.8, label="test min / max")
        ax.plot(bands, test.max(axis=0), color="tab:red", linewidth=0.8)
    ax.set_xlabel("band (after preprocessing)")
    ax.set_ylabel("value")
    ax.set_title("test split under the training parameters", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
