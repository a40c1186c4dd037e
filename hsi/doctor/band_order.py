"""Are the file's bands in the order of its wavelengths? Evidence from the physics of spectra.

Two tests on the scene as read (before preprocessing), neither of which compares the
file with itself:

- **Smoothness.** Reflectance and radiance spectra of real surfaces change slowly from
  one narrow band to the next. The roughness of the class-mean spectra (mean absolute
  second difference, each spectrum standardised) in the given band order is compared
  with their roughness in random band orders: real spectra are many times smoother
  (Samson 0.02, AVIRIS 0.04 of the shuffled roughness), shuffled bands are not. Bands
  wider apart than :data:`MAX_STEP_NM` are not expected to be smooth: no verdict.
- **Red edge.** A reversed band axis is as smooth as the right one, so the second test
  uses vegetation: reflectance low in the red (~670 nm), high in the near infrared
  (~820 nm), a green bump above the red. The share of pixels with that signature is
  measured in the given band order and with the bands reversed; a scene whose reversed
  bands look far more like vegetation was stored reversed. It needs bands near 550, 670
  and 820 nm and some vegetation; without them there is no verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BandOrder", "band_order_problems", "check_band_order", "class_means", "red_edge_shares",
           "roughness_ratio"]

#: given-order roughness over random-order roughness above this: not smooth, bands out of order
MAX_ROUGHNESS = 0.4
#: median band step above this (nm): spectra need not be smooth band to band, no verdict
MAX_STEP_NM = 30.0
#: without wavelengths, the smoothness test needs at least this many bands
MIN_BANDS = 50
#: red-edge windows: (centre, half width) in nm
GREEN, RED, NIR = (550.0, 20.0), (670.0, 20.0), (820.0, 50.0)
#: a pixel is vegetation when (NIR - red) / (NIR + red) exceeds this, with green above red
MIN_NDVI = 0.4
#: below this share of vegetation pixels in both orders: no verdict
MIN_VEGETATION = 0.01
#: reversed order with this many times the vegetation share of the given order: reversed
REVERSED_FACTOR = 3.0


@dataclass
class BandOrder:
    """The band-order evidence of a scene (None where a test could not decide)."""

    roughness: float | None
    vegetation: tuple[float, float] | None
    note_smooth: str = ""
    note_edge: str = ""


def _roughness(spectra: np.ndarray) -> float:
    """Mean absolute second difference of each spectrum standardised to zero mean, unit deviation."""
    z = (spectra - spectra.mean(axis=1, keepdims=True)) / (spectra.std(axis=1, keepdims=True) + 1e-12)
    return float(np.abs(np.diff(z, n=2, axis=1)).mean())


def roughness_ratio(spectra: np.ndarray, seed: int = 0, n_orders: int = 20) -> float:
    """Roughness of ``spectra`` (M, C) in the given band order over its median in ``n_orders`` random orders."""
    rng = np.random.default_rng(seed)
    shuffled = [_roughness(spectra[:, rng.permutation(spectra.shape[1])]) for _ in range(n_orders)]
    return _roughness(spectra) / max(float(np.median(shuffled)), 1e-12)


def _window(wavelengths: np.ndarray, centre: float, half: float) -> np.ndarray:
    """Bands within ``half`` nm of ``centre``; else the nearest one if within ``2 * half``; else none."""
    inside = np.flatnonzero(np.abs(wavelengths - centre) <= half)
    if inside.size:
        return inside
    nearest = int(np.argmin(np.abs(wavelengths - centre)))
    return np.array([nearest]) if abs(wavelengths[nearest] - centre) <= 2 * half else inside


def red_edge_shares(pixels: np.ndarray, wavelengths: np.ndarray) -> tuple[float, float] | None:
    """Share of ``pixels`` (N, C) with a vegetation red edge, bands as given and reversed; None if not covered."""
    windows = [_window(wavelengths, *w) for w in (GREEN, RED, NIR)]
    if any(w.size == 0 for w in windows):
        return None
    c = pixels.shape[1]
    shares = []
    for green, red, nir in (windows, [c - 1 - w for w in windows]):
        g, r, n = (pixels[:, w].mean(axis=1) for w in (green, red, nir))
        ndvi = (n - r) / (np.abs(n) + np.abs(r) + 1e-12)
        shares.append(float(np.mean((ndvi > MIN_NDVI) & (g > r) & (r > 0))))
    return shares[0], shares[1]


def class_means(cube: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(K + 1, C) mean spectrum of each labelled class and of the whole scene (finite pixels only)."""
    pixels = cube.reshape(-1, cube.shape[-1]).astype(np.float64)
    flat = labels.ravel()
    finite = np.isfinite(pixels).all(axis=1)
    rows = [pixels[finite & (flat == k)].mean(axis=0) for k in np.unique(flat[finite & (flat > 0)])]
    return np.stack(rows + [pixels[finite].mean(axis=0)])


def check_band_order(cube: np.ndarray, labels: np.ndarray, wavelengths: np.ndarray | None, *, seed: int = 0,
                     max_pixels: int = 5000) -> BandOrder:
    """Smoothness of the class means and the red edge of a pixel sample, bands as stored.

    Parameters
    ----------
    cube : (H, W, C) array
        The scene as read (its own units).
    labels : (H, W) int array
        0 unlabelled, classes 1..K (the class means average out pixel noise).
    wavelengths : (C,) array or None
        Band centres in nm.
    seed : int
        Seed of the random band orders and the pixel sample.
    max_pixels : int
        Pixels sampled for the red edge.

    Returns
    -------
    BandOrder
    """
    c = cube.shape[-1]
    step = float(np.median(np.diff(wavelengths))) if wavelengths is not None and c > 1 else None
    result = BandOrder(None, None)
    if c < 4 or (step is None and c < MIN_BANDS):
        result.note_smooth = f"{c} bands{'' if step else ' without wavelengths'}: too few to expect smooth spectra"
    elif step is not None and step > MAX_STEP_NM:
        result.note_smooth = f"bands {step:.0f} nm apart: spectra need not be smooth band to band"
    else:
        result.roughness = roughness_ratio(class_means(cube, labels), seed)
    pixels = cube.reshape(-1, c)
    pixels = pixels[np.isfinite(pixels).all(axis=1)].astype(np.float64)
    if wavelengths is None or not len(pixels):
        result.note_edge = "no wavelengths" if wavelengths is None else "no finite pixel"
        return result
    sample = pixels[np.random.default_rng(seed).choice(len(pixels), min(max_pixels, len(pixels)), replace=False)]
    result.vegetation = red_edge_shares(sample, np.asarray(wavelengths, dtype=np.float64))
    if result.vegetation is None:
        result.note_edge = (f"wavelengths {wavelengths[0]:.0f}-{wavelengths[-1]:.0f} nm miss the green, red or "
                            f"near-infrared band")
    elif max(result.vegetation) < MIN_VEGETATION:
        result.note_edge = f"under {MIN_VEGETATION:.0%} of pixels look like vegetation in either order"
    return result


def band_order_problems(result: BandOrder) -> tuple[list[str], list[str]]:
    """``(evidence, problems)`` lines of a :class:`BandOrder`; a test without a verdict passes with a note."""
    evidence, problems = [], []
    if result.roughness is None:
        evidence.append(f"file smoothness: not checked ({result.note_smooth})")
    else:
        line = (f"file smoothness: class-mean spectra in the stored band order are {result.roughness:.2f} x as rough "
                f"as in random band orders (smooth spectra: well under {MAX_ROUGHNESS:g})")
        if result.roughness > MAX_ROUGHNESS:
            problems.append(line + ": the bands are not in wavelength order (shuffled?)")
        else:
            evidence.append(line)
    if result.vegetation is None or result.note_edge:
        evidence.append(f"red edge: not checked ({result.note_edge})")
        return evidence, problems
    given, backwards = result.vegetation
    line = (f"red edge (green bump, red trough at 670 nm, NIR at 820 nm): {given:.1%} of pixels as stored, "
            f"{backwards:.1%} with the bands reversed")
    if backwards >= MIN_VEGETATION and backwards > REVERSED_FACTOR * given:
        problems.append(line + ": the band axis is reversed against the wavelengths")
    else:
        evidence.append(line)
    return evidence, problems
