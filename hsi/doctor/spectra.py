"""Check 2: the band order, of the file and of the pipeline.

The file: its bands must follow its wavelengths. A file cannot be checked against
itself, so the evidence is physical (:mod:`hsi.doctor.band_order`): spectra in the
stored order are far smoother than in random orders (catches shuffled bands), and
vegetation shows its red edge as stored, not with the bands reversed (catches a
reversed axis when the wavelengths cover 550-820 nm and some pixels are vegetated).

The pipeline: the centre pixel of every training patch is what the model sees of that
pixel's spectrum. Its class means are compared with the scene read again by its reader
and transformed by the fitted pipeline at the same training pixels. A band axis reversed
or shuffled on the way to the batches shows up as a mismatch (the reversed reference is
tried to name it) and as jumps between neighbouring bands that the reference lacks.

The batches are the training patches with augmentation off (``fixed_dataloader("train")``:
the training split cut by the same dataset and gather as the training loader, in stored
order). The doctor checks the data pipeline, not the random brightness and per-band noise
of spectral augmentation (``spectral_scale``, ``spectral_noise``; on by default for a
collection of several scenes), which move every class mean by design; flips and quarter
turns leave the centre pixel in place either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hsi.doctor.band_order import GREEN, NIR, RED, band_order_problems, check_band_order, class_means
from hsi.doctor.result import CheckResult, centre_spectra, save_figure

__all__ = ["band_jumps", "check_spectra", "reference_spectra"]

#: a step between neighbouring bands over this many times the reference's step there (plus
#: ``JUMP_FRACTION`` of the spectrum's span) is a jump (see :func:`band_jumps`)
JUMP_RATIO = 3.0
JUMP_FRACTION = 0.05
#: class means may differ from the reference by this fraction of the spectra's span
MATCH_TOLERANCE = 1e-3


def band_jumps(means: np.ndarray, reference: np.ndarray | None = None) -> np.ndarray:
    """Indices ``i`` where the step from band ``i`` to ``i + 1`` is a jump in most class means.

    Parameters
    ----------
    means : (K, C) array
        Class-mean spectra.
    reference : (K, C) array, optional
        Spectra in the right band order: a step is then a jump when it is more than
        ``JUMP_RATIO`` times the reference's step there (plus ``JUMP_FRACTION`` of the
        span), so the scene's own edges (a red edge, a detector seam) are not jumps.
        Without it, the median step of each class mean stands in for the reference's step.

    Returns
    -------
    ndarray of int
        Band indices ``i`` (the jump lies between bands ``i`` and ``i + 1``).
    """
    if means.shape[1] < 3:
        return np.zeros(0, dtype=np.int64)
    steps = np.abs(np.diff(means, axis=1))
    span = np.ptp(means, axis=1, keepdims=True) + 1e-12
    if reference is not None and reference.shape == means.shape:
        expected = np.abs(np.diff(reference, axis=1))
    else:
        expected = np.median(steps, axis=1, keepdims=True)
    jump = steps > JUMP_RATIO * expected + JUMP_FRACTION * span
    return np.flatnonzero(jump.sum(axis=0) * 2 > means.shape[0])


def _batch_means(datamodule: Any, k: int, max_samples: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-class sums of the training patches' centre spectra, augmentation off: ``(sums (K, C), counts (K,), seen)``."""
    sums, counts, seen = None, np.zeros(k, dtype=np.int64), 0
    for batch in datamodule.fixed_dataloader("train"):
        x, y = batch[0], batch[1].numpy()
        spectra = centre_spectra(x)
        if sums is None:
            sums = np.zeros((k, spectra.shape[1]))
        np.add.at(sums, y, spectra)
        counts += np.bincount(y, minlength=k)
        seen += len(y)
        if seen >= max_samples:
            break
    return sums, counts, seen


def _augmentation_text(datamodule: Any) -> str:
    """What the batches read leave out: the training loader's spectral augmentation, when it has any."""
    h = datamodule.hparams
    scale, noise = float(h.get("spectral_scale") or 0.0), float(h.get("spectral_noise") or 0.0)
    if not h.get("augment") or (scale <= 0 and noise <= 0):
        return "read without augmentation"
    return (f"read without augmentation (training adds brightness x U(1 +- {scale:g}) and per-band noise sigma "
            f"{noise:g}: random by design, not compared)")


def reference_spectra(datamodule: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(class means (K, C), counts (K,))`` of the training pixels, from the scene re-read and the fitted pipeline.

    Parameters
    ----------
    datamodule : HSIDataModule
        Set up for ``fit``.

    Returns
    -------
    tuple of ndarray
        Class means over every training centre, and the pixel count per class.
    """
    from hsi.data.scene_source import load_source

    ds = datamodule.train_dataset
    rows, cols = ds.coords[:, 0], ds.coords[:, 1]
    src = load_source(datamodule.source)
    pixels = np.asarray(datamodule.pipeline.transform(src.cube[rows, cols][None]), dtype=np.float64)[0]
    k = int(datamodule.num_classes)
    sums = np.zeros((k, pixels.shape[1]))
    np.add.at(sums, ds.labels, pixels)
    counts = np.bincount(ds.labels, minlength=k)
    return sums / np.maximum(counts, 1)[:, None], counts


def _pipeline_problems(means: np.ndarray, ref: np.ndarray, full: bool,
                       evidence: list[str]) -> tuple[list[str], dict[str, float]]:
    """Batches' class means against the reference: equal, or reversed / shuffled on the way to the batches."""
    span = float(np.ptp(ref)) + 1e-12
    values = {"error": float("inf"), "reversed_error": float("inf"), "span": span}
    if means.shape != ref.shape:
        return [f"batches carry {means.shape[1]} bands, the reference {ref.shape[1]}"], values
    tolerance = MATCH_TOLERANCE * span if full else 0.05 * span
    error = values["error"] = float(np.abs(means - ref).max())
    reversed_error = values["reversed_error"] = float(np.abs(means - ref[:, ::-1]).max())
    evidence.append(f"pipeline: largest difference of the batches from the reference {error:.3g} "
                    f"({error / span:.2%} of the span; allowed {tolerance / span:.2%})")
    if error <= tolerance:
        return [], values
    why = ("the band axis is reversed" if reversed_error <= tolerance
           else "bands shuffled, misplaced or transformed differently")
    return [f"class-mean spectra of the batches differ from the reference: {why} "
            f"(reversed reference differs by {reversed_error / span:.2%})"], values


def check_spectra(datamodule: Any, out: str | Path | None = None, max_samples: int = 200_000) -> CheckResult:
    """Band order of the file (smooth spectra, a red edge where it belongs) and of the pipeline (batches = reference).

    Parameters
    ----------
    datamodule : HSIDataModule
        Set up for ``fit``.
    out : str or Path, optional
        Folder of ``spectra.png``.
    max_samples : int
        Training patches read at most (one epoch when fewer; a sample is then compared
        with a tolerance for its sampling error).

    Returns
    -------
    CheckResult
    """
    from hsi.data.scene_source import load_source

    k = int(datamodule.num_classes)
    sums, counts, seen = _batch_means(datamodule, k, max_samples)
    present = counts > 0
    means = sums[present] / counts[present][:, None]
    ref_all, ref_counts = reference_spectra(datamodule)
    ref = ref_all[present]
    src = load_source(datamodule.source)
    order = check_band_order(src.cube, src.labels, src.wavelengths)
    file_evidence, file_problems = band_order_problems(order)
    evidence = [f"{seen} training patches, {int(present.sum())} classes, {_augmentation_text(datamodule)}; pipeline "
                f"reference: the scene re-read, fitted pipeline, {int(ref_counts.sum())} training pixels (tests the "
                f"pipeline, not the file)"]
    problems, values = _pipeline_problems(means, ref, seen >= len(datamodule.train_dataset), evidence)
    jumps = band_jumps(means, ref)
    wl = datamodule.wavelengths
    axis = wl if wl is not None and len(wl) == means.shape[1] else np.arange(means.shape[1], dtype=float)
    unit = "nm" if axis is wl else "band"
    if jumps.size:
        where = ", ".join(f"{axis[i]:.0f}-{axis[i + 1]:.0f} {unit}" for i in jumps[:8])
        problems.append(f"{jumps.size} jump(s) between neighbouring bands in most class means, absent from the "
                        f"reference ({where}): a reversed or shuffled band axis?")
    else:
        evidence.append(f"pipeline: no band-order jumps (a step > {JUMP_RATIO:g} x the reference's step there)")
    fig = _figure(axis, unit, means, ref, jumps, np.flatnonzero(present), datamodule.class_names, src)
    png = save_figure(fig, out, "spectra")
    values.update(jumps=jumps.tolist(), roughness=order.roughness, vegetation=order.vegetation)
    return CheckResult("spectra", not (problems or file_problems), file_evidence + evidence + file_problems + problems,
                       png, values)


def _figure(axis, unit, means, ref, jumps, classes, names, src):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 4), dpi=100)
    raw_ax, ax = fig.subplots(1, 2)
    table = np.asarray(src.palette, dtype=np.float64) / 255  # the scene's class colours, as in its maps
    raw = class_means(src.cube, src.labels)[:-1]
    wl = src.wavelengths if src.wavelengths is not None else np.arange(raw.shape[1], dtype=float)
    for row, values in enumerate(raw):
        raw_ax.plot(wl, values, color=table[min(row + 1, len(table) - 1)], linewidth=1.0)
    if src.wavelengths is not None:
        for centre, half in (GREEN, RED, NIR):
            raw_ax.axvspan(centre - half, centre + half, color="grey", alpha=0.15)
    raw_ax.set_xlabel("wavelength (nm)" if src.wavelengths is not None else "band")
    raw_ax.set_ylabel("value as read")
    raw_ax.set_title("file: class means as stored (grey: green, red, NIR windows)", fontsize=9)
    for row, k in enumerate(classes):
        colour = table[min(int(k) + 1, len(table) - 1)]
        label = names[k] if k < len(names) else f"class {k + 1}"
        ax.plot(axis, means[row], color=colour, linewidth=1.2, label=label)
        if ref.shape == means.shape:
            ax.plot(axis, ref[row], color=colour, linewidth=0.8, linestyle="--")
    for i in jumps:
        ax.axvline((axis[i] + axis[i + 1]) / 2, color="red", linewidth=0.8)
    ax.set_xlabel("wavelength (nm)" if unit == "nm" else "band (after preprocessing)")
    ax.set_ylabel("value after preprocessing")
    ax.set_title("pipeline: batches (solid), reference (dashed), jumps (red)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig
