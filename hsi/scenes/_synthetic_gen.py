"""The numerical part of :mod:`hsi.scenes.synthetic`: the class table and the generator, numpy and scipy.

Kept apart so that :mod:`hsi.scenes.synthetic` (its registry entry, and the arguments of
:func:`~hsi.scenes.synthetic.make_synthetic_scene` the command line checks ``--scene-options``
against) imports without numpy or scipy; they are imported when a scene is generated.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import ndimage
from scipy.spatial import cKDTree

from hsi.errors import OptionError

# The classes (label k <-> _CLASSES[k - 1]), modelled on Indian Pines' 16 but named as
# synthetic ("S-" and letters, so a table of them cannot pass for a real survey): name,
# cover fractions (green vegetation, soil, residue, dark), a crop id whose smooth spectral
# signature all its tillage variants share, and a relative abundance weight (the larger
# classes get more parcels; weight 0 = exactly one parcel). Row crop A and B are modelled on
# corn and soybean, cereal A and B on oats and wheat, the legume on alfalfa.
_CLASSES: tuple[tuple[str, tuple[float, float, float, float], str, float], ...] = (
    ("S-legume", (0.78, 0.14, 0.05, 0.03), "alfalfa", 0.0),
    ("S-row-A-notill", (0.42, 0.18, 0.37, 0.03), "corn", 3.0),
    ("S-row-A-mintill", (0.42, 0.26, 0.29, 0.03), "corn", 2.0),
    ("S-row-A", (0.40, 0.36, 0.21, 0.03), "corn", 1.0),
    ("S-pasture", (0.62, 0.18, 0.17, 0.03), "grass", 1.0),
    ("S-grass-trees", (0.68, 0.12, 0.08, 0.12), "trees", 1.5),
    ("S-pasture-mowed", (0.52, 0.22, 0.23, 0.03), "grass", 0.0),
    ("S-hay", (0.25, 0.12, 0.60, 0.03), "hay", 1.0),
    ("S-cereal-A", (0.50, 0.30, 0.17, 0.03), "oats", 0.0),
    ("S-row-B-notill", (0.38, 0.20, 0.39, 0.03), "soybean", 2.0),
    ("S-row-B-mintill", (0.38, 0.28, 0.31, 0.03), "soybean", 4.0),
    ("S-row-B-clean", (0.36, 0.38, 0.23, 0.03), "soybean", 1.0),
    ("S-cereal-B", (0.76, 0.17, 0.04, 0.03), "wheat", 0.5),
    ("S-woods", (0.64, 0.06, 0.05, 0.25), "trees", 2.5),
    ("S-built-up", (0.30, 0.34, 0.10, 0.26), "urban", 1.0),
    ("S-stone-steel", (0.06, 0.44, 0.06, 0.44), "towers", 0.0),
)

_N_BUMPS = 12  # smooth Gaussian bumps of the perturbation basis


def _gauss(wl: np.ndarray, centre: float, width: float) -> np.ndarray:
    return np.exp(-0.5 * ((wl - centre) / width) ** 2)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _endmembers(wl: np.ndarray) -> np.ndarray:
    """(4, C) reflectance of green vegetation, soil, crop residue and dark surfaces."""
    veg = (
        0.035
        + 0.055 * _gauss(wl, 550, 35)
        + 0.42 * _sigmoid((wl - 715) / 14)
        - 0.22 * _sigmoid((wl - 1330) / 45)
        + 0.07 * _gauss(wl, 1660, 110)
        - 0.10 * _sigmoid((wl - 1850) / 40)
        + 0.03 * _gauss(wl, 2210, 90)
    )
    soil = 0.07 + 0.30 * _sigmoid((wl - 900) / 450) - 0.03 * _gauss(wl, 2200, 40) - 0.02 * _gauss(wl, 900, 80)
    residue = 0.10 + 0.30 * _sigmoid((wl - 650) / 180) - 0.07 * _gauss(wl, 2100, 60) - 0.03 * _gauss(wl, 1730, 40)
    dark = 0.015 + 0.045 * np.exp(-(wl - 400) / 500)
    return np.stack([veg, soil, residue, dark])


def _transmission(wl: np.ndarray) -> np.ndarray:
    """(C,) atmospheric water-vapour transmission: dips at 940, 1130, 1400 and 1900 nm."""
    return (
        1.0
        - 0.30 * _gauss(wl, 940, 25)
        - 0.30 * _gauss(wl, 1130, 30)
        - 0.92 * _gauss(wl, 1395, 45)
        - 0.95 * _gauss(wl, 1890, 55)
        - 0.30 * _gauss(wl, 2500, 60)
    ).clip(0.02, 1.0)


def _smooth_field(rng: np.random.Generator, shape: tuple[int, int], sigma: float, n: int = 1) -> np.ndarray:
    """(H, W, n) float32 Gaussian-filtered white noise, scaled to unit std per channel."""
    h, w = shape
    # Work at a coarser grid for large sigmas (cheap), then upsample bilinearly.
    step = max(1, int(sigma // 3))
    hs, ws = -(-h // step) + 2, -(-w // step) + 2
    noise = rng.standard_normal((hs, ws, n), dtype=np.float32)
    field = ndimage.gaussian_filter(noise, sigma=(sigma / step, sigma / step, 0), mode="wrap")
    if step > 1:
        yy = np.arange(h, dtype=np.float32) / step
        xx = np.arange(w, dtype=np.float32) / step
        y0 = np.floor(yy).astype(np.intp)
        x0 = np.floor(xx).astype(np.intp)
        fy = (yy - y0)[:, None, None]
        fx = (xx - x0)[None, :, None]
        f00 = field[y0][:, x0]
        f01 = field[y0][:, x0 + 1]
        f10 = field[y0 + 1][:, x0]
        f11 = field[y0 + 1][:, x0 + 1]
        field = (f00 * (1 - fy) * (1 - fx) + f01 * (1 - fy) * fx + f10 * fy * (1 - fx) + f11 * fy * fx)
    field = field[:h, :w]
    std = field.reshape(-1, n).std(axis=0)
    field /= np.where(std > 0, std, 1.0).astype(np.float32)
    return np.ascontiguousarray(field, dtype=np.float32)


def _class_table(n_classes: int, rng: np.random.Generator) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Names, (K, 4) cover fractions, crop ids and parcel weights for ``n_classes`` classes."""
    names, fractions, crops, weights = [], [], [], []
    for k in range(n_classes):
        if k < len(_CLASSES):
            name, frac, crop, weight = _CLASSES[k]
        else:
            name = f"S-class-{k + 1}"
            frac = tuple(rng.dirichlet(np.full(4, 1.5)))
            crop, weight = f"class-{k + 1}", 1.0  # the crop id orders the RNG draws: keep it
        names.append(name)
        fractions.append(frac)
        crops.append(crop)
        weights.append(weight)
    return names, np.asarray(fractions, dtype=np.float64), crops, np.asarray(weights, dtype=np.float64)


def _layout(
    rng: np.random.Generator,
    height: int,
    width: int,
    parcel_size: float,
    road_spacing: float,
    min_parcels: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Parcel ids (H, W) int32 (0..P-1) and a road mask (H, W) bool."""
    n_parcels = max(min_parcels, int(round(height * width / parcel_size**2)))
    size = min(parcel_size, float(np.sqrt(height * width / n_parcels)))  # smaller fields in small scenes
    seeds = rng.uniform((0.0, 0.0), (height, width), size=(n_parcels, 2))
    warp = _smooth_field(rng, (height, width), sigma=max(2.0, size / 2), n=2)
    yy, xx = np.meshgrid(np.arange(height, dtype=np.float32), np.arange(width, dtype=np.float32), indexing="ij")
    amp = 0.22 * size
    coords = np.stack([yy + amp * warp[..., 0], xx + amp * warp[..., 1]], axis=-1).reshape(-1, 2)
    _, parcel = cKDTree(seeds).query(coords, k=1, p=1)
    parcel = parcel.reshape(height, width).astype(np.int32)

    road = np.zeros((height, width), dtype=bool)
    if road_spacing > 0:
        for size, axis in ((height, 0), (width, 1)):
            pos = rng.uniform(0.3, 0.9) * road_spacing
            while pos < size - 2:
                r = int(pos)
                wdt = int(rng.integers(1, 3))
                if axis == 0:
                    road[r : r + wdt, :] = True
                else:
                    road[:, r : r + wdt] = True
                pos += road_spacing * rng.uniform(0.7, 1.3)
    return parcel, road


def _check_sizes(height: int, width: int, bands: int, n_classes: int, background_fraction: float) -> None:
    if height < 8 or width < 8:
        raise OptionError("scene_options", f"height={height}, width={width}", "height and width >= 8 (the synthetic scene's size in pixels)")
    if bands < 2:
        raise OptionError("scene_options", f"bands={bands}", "bands >= 2 (the synthetic scene's band count)")
    if n_classes < 1:
        raise OptionError("scene_options", f"n_classes={n_classes}", "n_classes >= 1 (the synthetic scene's class count)")
    if not 0.0 <= background_fraction < 1.0:
        raise OptionError("scene_options", f"background_fraction={background_fraction}", "background_fraction in [0, 1)")


def _basis(wl: np.ndarray) -> np.ndarray:
    """``(r, C)`` float32 spectra that every pixel mixes: the endmembers and the bumps, through the atmosphere."""
    bumps = np.stack([_gauss(wl, c, 110.0) for c in np.linspace(450, 2450, _N_BUMPS)])
    return (np.vstack([_endmembers(wl), 0.05 * bumps]) * _transmission(wl)).astype(np.float32)


def _class_coefficients(rng: np.random.Generator, fractions: np.ndarray, crops: list[str], r: int,
                        crop_separation: float) -> np.ndarray:
    """``(K, r)`` coefficient vectors of the classes: endmember fractions, then the crop's bump signature."""
    crop_sig = {c: rng.standard_normal(_N_BUMPS) for c in sorted(set(crops))}
    class_coef = np.zeros((len(crops), r))
    class_coef[:, :4] = fractions
    for k, crop in enumerate(crops):
        class_coef[k, 4:] = crop_separation * crop_sig[crop]
        class_coef[k, 4:] += 0.05 * crop_separation * rng.standard_normal(_N_BUMPS)
    return class_coef


def _parcel_classes(rng: np.random.Generator, parcel: np.ndarray, road: np.ndarray, n_classes: int,
                    weights: np.ndarray, background_fraction: float, where: str) -> np.ndarray:
    """Class id (0 = background) of every parcel: each class once first, then background, then drawn by weight."""
    n_parcels = int(parcel.max()) + 1
    area = np.bincount(parcel[~road], minlength=n_parcels)
    usable = np.flatnonzero(area >= 4)
    if usable.size < n_classes:
        raise OptionError(
            "scene_options", f"n_classes={n_classes}",
            f"{where} has only {usable.size} usable parcels, fewer than n_classes={n_classes}; make the scene "
            f"larger or parcel_size smaller",
        )
    order = rng.permutation(usable)
    parcel_class = np.zeros(n_parcels, dtype=np.int64)  # 0 = background
    parcel_class[order[:n_classes]] = rng.permutation(n_classes) + 1
    rest = order[n_classes:]
    n_bg = int(round(background_fraction * usable.size))
    n_bg = min(max(n_bg, 1 if rest.size else 0), rest.size)
    drawn = rest[n_bg:]
    if drawn.size:
        p = weights / weights.sum() if weights.sum() > 0 else np.full(n_classes, 1.0 / n_classes)
        parcel_class[drawn] = rng.choice(n_classes, size=drawn.size, p=p) + 1
    return parcel_class


def _parcel_coefficients(rng_spec: np.random.Generator, rng_parcel: np.random.Generator, parcel_class: np.ndarray,
                         class_coef: np.ndarray, crop_separation: float, parcel_variability: float) -> np.ndarray:
    """``(P, r)`` coefficients of every parcel: its class mean plus a per-parcel offset; background gets its own."""
    n_parcels, r = parcel_class.size, class_coef.shape[1]
    parcel_coef = np.zeros((n_parcels, r))
    labeled = parcel_class > 0
    parcel_coef[labeled] = class_coef[parcel_class[labeled] - 1]
    n_bgp = int((~labeled).sum())
    parcel_coef[~labeled, :4] = rng_spec.dirichlet(np.full(4, 1.2), size=n_bgp)
    parcel_coef[~labeled, 4:] = crop_separation * rng_spec.standard_normal((n_bgp, _N_BUMPS))
    parcel_coef[:, :3] += rng_parcel.standard_normal((n_parcels, 3)) * parcel_variability
    parcel_coef[:, 4:] += parcel_variability * rng_parcel.standard_normal((n_parcels, _N_BUMPS))
    return parcel_coef


def _pixel_coefficients(rngs: dict[str, np.random.Generator], parcel_coef: np.ndarray, parcel: np.ndarray,
                        road: np.ndarray, texture: float, texture_scale: float, pixel_variability: float,
                        mixing: float) -> np.ndarray:
    """``(H, W, r)`` float32 coefficients: parcels and roads, smooth texture, white jitter, then the sensor's blur."""
    height, width = parcel.shape
    coef = parcel_coef.astype(np.float32)[parcel]
    coef[road] = 0.0
    coef[road, :4] = (0.04, 0.45, 0.06, 0.45)
    if texture > 0:
        tex = _smooth_field(rngs["texture"], (height, width), sigma=texture_scale, n=3)
        gain = rngs["texture"].standard_normal((parcel_coef.shape[0], 3)).astype(np.float32)
        coef[..., :3] += texture * tex * gain[parcel]
    if pixel_variability > 0:
        coef[..., :3] += pixel_variability * rngs["pixel"].standard_normal((height, width, 3), dtype=np.float32)
    if mixing > 0:  # mixed pixels: a point-spread function over the coefficient image
        coef = ndimage.gaussian_filter(coef, sigma=(mixing, mixing, 0), mode="nearest")
    return coef


def _render(rngs: dict[str, np.random.Generator], coef: np.ndarray, basis: np.ndarray, illumination: float,
            noise: float) -> np.ndarray:
    """``(H, W, C)`` float32 spectra of the coefficients, with smooth illumination and white sensor noise."""
    height, width, r = coef.shape
    cube = (coef.reshape(-1, r) @ basis).reshape(height, width, basis.shape[1])
    if illumination > 0:
        cube *= np.exp(illumination * _smooth_field(rngs["illumination"], (height, width), sigma=12.0, n=1))
    if noise > 0:
        step = 256
        for r0 in range(0, height, step):
            block = cube[r0 : r0 + step]
            block += np.float32(noise) * rngs["noise"].standard_normal(block.shape, dtype=np.float32)
    return cube


def generate(
    height: int,
    width: int,
    bands: int,
    n_classes: int,
    seed: int,
    *,
    parcel_size: float,
    background_fraction: float,
    road_spacing: float,
    crop_separation: float,
    parcel_variability: float,
    texture: float,
    texture_scale: float,
    pixel_variability: float,
    mixing: float,
    illumination: float,
    noise: float,
) -> dict[str, Any]:
    """The arrays of a scene (:func:`hsi.scenes.synthetic.make_synthetic_scene` documents the arguments):
    ``data``, ``wavelengths``, ``labels``, ``class_names``, ``parcels`` and ``roads``."""
    _check_sizes(height, width, bands, n_classes, background_fraction)
    # One independent stream per ingredient, so switching one off leaves the others as they were.
    streams = np.random.SeedSequence(seed).spawn(7)
    rngs = dict(zip(("spectra", "layout", "parcel", "texture", "pixel", "illumination", "noise"),
                    (np.random.default_rng(s) for s in streams)))
    wl = np.linspace(400.0, 2500.0, bands)
    basis = _basis(wl)
    names, fractions, crops, weights = _class_table(n_classes, rngs["spectra"])
    class_coef = _class_coefficients(rngs["spectra"], fractions, crops, basis.shape[0], crop_separation)
    min_parcels = int(np.ceil(1.5 * n_classes)) + 2
    parcel, road = _layout(rngs["layout"], height, width, parcel_size, road_spacing, min_parcels)
    parcel_class = _parcel_classes(rngs["layout"], parcel, road, n_classes, weights, background_fraction,
                                   f"a {height} x {width} scene with parcel_size={parcel_size}")
    parcel_coef = _parcel_coefficients(rngs["spectra"], rngs["parcel"], parcel_class, class_coef, crop_separation,
                                       parcel_variability)
    coef = _pixel_coefficients(rngs, parcel_coef, parcel, road, texture, texture_scale, pixel_variability, mixing)
    cube = _render(rngs, coef, basis, illumination, noise)
    labels = parcel_class[parcel]
    labels[road] = 0
    return {
        "data": np.ascontiguousarray(cube, dtype=np.float32),
        "wavelengths": wl,
        "labels": labels.astype(np.int64),
        "class_names": names,
        "parcels": parcel,
        "roads": road,
    }
