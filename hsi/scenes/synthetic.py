"""A procedural, Indian-Pines-like scene generated on the fly (no files, no network).

The scene is built in a low-rank spectral space: every pixel is a coefficient vector over
a small basis (four "endmember" spectra — green vegetation, soil, crop residue, dark
surfaces — plus smooth Gaussian bumps), and the cube is one matrix product of the
coefficients with the basis at the end. All spatial work (parcels, texture, border
mixing) happens on ``(H, W, r)`` coefficient images with ``r`` about 16, so a
1024 x 1024 x 200 scene takes a few seconds and 145 x 145 x 200 a few tens of ms.

Ingredients, in the order they are applied:

1. **Parcels.** Manhattan-metric Voronoi cells on domain-warped coordinates, so fields
   are roughly rectangular with irregular edges; a grid of roads (label 0) crosses them.
   A share of the parcels is unlabeled background with its own random spectra; every class
   gets at least one parcel, the rest are drawn with Indian-Pines-like unbalanced weights.
2. **Class spectra.** Mixtures of the endmembers plus a crop-specific smooth perturbation.
   Tillage variants of one crop (S-row-A-notill / S-row-A-mintill, S-row-B-notill /
   S-row-B-mintill, modelled on Indian Pines' corn and soybean) differ only by a few
   percent of residue vs soil cover, so their mean spectra are nearly identical (correlation > 0.998, shape difference about 1 %).
3. **Variability.** A per-parcel offset (each field differs), a smooth within-parcel
   texture field (Gaussian-filtered noise, scale ``texture_scale`` px, its sign and
   strength drawn per parcel) and a spatially white per-pixel jitter, all in
   endmember-fraction space.
4. **Mixed pixels.** A Gaussian point-spread function (``mixing`` px) blurs the
   coefficient image, blending spectra across parcel borders and roads.
5. **Illumination.** A smooth multiplicative brightness field (about ``illumination``
   relative std).
6. **Sensor noise.** White Gaussian noise of std ``noise`` (reflectance units) per band;
   bands inside the 1400 nm and 1900 nm water-absorption dips are therefore noisy, as
   in a real uncorrected cube.

Units: the values are reflectance 0-1 (:data:`UNITS`, ``cube.meta["units"]`` with source
"registry"). Spectra are evaluated at the band centres, with no band response, so the
generator knows no band widths: ``cube.meta["fwhm"]`` is None.

The numerical part (class table, basis, layout, rendering) is in ``hsi.scenes._synthetic_gen``,
imported when a scene is generated: this module, its registry entry and the arguments of
:func:`make_synthetic_scene` (the scene's options) import without numpy or scipy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hsi.scenes.registry import SceneSpec

if TYPE_CHECKING:  # for annotations only: importing this module costs no numpy (the command line checks options)
    from hsi.scenes.scene import Scene

#: Pairs of class labels (1-based, default 16-class scene) whose mean spectra are
#: near-identical by construction (tillage variants of one crop).
NEAR_IDENTICAL_PAIRS: tuple[tuple[int, int], ...] = ((2, 3), (10, 11))


#: What the values are: a ``meta["units"]`` dict (see :mod:`hsi.io.units`), written out so that
#: importing :mod:`hsi.scenes` does not import :mod:`hsi.io`; the scene tests check it with
#: :func:`hsi.io.units.check_units`.
UNITS: dict[str, Any] = {
    "kind": "reflectance", "scale": None, "source": "registry",
    "note": "synthetic reflectance 0-1 (endmember mixtures through an atmosphere, plus sensor noise)",
}


def make_synthetic_scene(
    height: int = 145,
    width: int = 145,
    bands: int = 200,
    n_classes: int = 16,
    seed: int = 0,
    *,
    parcel_size: float = 24.0,
    background_fraction: float = 0.2,
    road_spacing: float = 60.0,
    crop_separation: float = 0.1,
    parcel_variability: float = 0.005,
    texture: float = 0.02,
    texture_scale: float = 4.0,
    pixel_variability: float = 0.12,
    mixing: float = 0.5,
    illumination: float = 0.03,
    noise: float = 0.01,
) -> Scene:
    """Generate a deterministic, Indian-Pines-like labeled scene.

    Parameters
    ----------
    height, width, bands : int
        Cube size ``(height, width, bands)``; bands sample 400-2500 nm evenly.
    n_classes : int
        Number of classes ``K``. The first 16 carry Indian Pines' cover mixtures under
        synthetic names (``S-legume``, ``S-row-A-notill``... ``S-stone-steel``); more get
        random mixtures and names ``S-class-17``...
    seed : int
        Everything is drawn from ``np.random.default_rng`` children of this seed; the same
        arguments always give the same arrays.
    parcel_size : float
        Typical field side in pixels.
    background_fraction : float
        Share of the parcels left unlabeled (label 0), in addition to the roads.
    road_spacing : float
        Mean distance between roads in pixels; 0 for no roads.
    crop_separation : float
        Strength of the crop-specific spectral signature (weight of the smooth bumps).
    parcel_variability, texture, pixel_variability : float
        Std, in cover-fraction units, of the per-parcel offset, the smooth within-parcel
        texture field and the spatially white per-pixel jitter.
    texture_scale : float
        Correlation length (Gaussian sigma, px) of the texture field.
    mixing : float
        Point-spread-function sigma (px) that blends spectra across borders.
    illumination : float
        Relative std of the smooth multiplicative brightness field.
    noise : float
        Std of white sensor noise, in reflectance units.

    Returns
    -------
    Scene
        ``cube.data`` ``(height, width, bands)`` float32 C-contiguous, ``cube.wavelengths``
        ascending nm, ``labels`` int64 in ``0..K`` with every class present.
        ``meta`` holds ``'parcels'`` (field ids, int32), ``'roads'`` (bool),
        ``'near_identical_pairs'`` and the generator parameters. ``cube.meta["units"]`` is
        :data:`UNITS` (reflectance, source "registry"); ``cube.meta["fwhm"]`` is None.

    Notes
    -----
    Calibration, measured with the defaults above (145 x 145 x 200, 16 classes) by
    ``python benchmarks/calibrate_synthetic.py --seeds 0 1 2 3 4`` (about 20 s on 2 cores):
    ``hsi.preprocess.block_split(labels, block_size=16, fractions=(0.6, 0.2, 0.2),
    buffer=5, seed=s)`` for scene seed ``s``, per-band standardization fitted on the
    training pixels, ``sklearn.svm.SVC(kernel="rbf", C=100, gamma="scale")`` trained on
    2500 randomly drawn training pixels, overall accuracy on the test blocks:

    ========================  =====  =====  =====  =====  =====  =====
    features                  s=0    s=1    s=2    s=3    s=4    mean
    ========================  =====  =====  =====  =====  =====  =====
    pixel spectrum            0.666  0.652  0.713  0.685  0.698  0.683
    5 x 5 mean spectrum       0.842  0.829  0.797  0.864  0.851  0.836
    7 x 7 mean spectrum       0.854  0.806  0.763  0.840  0.834  0.819
    pixel + 5 x 5 mean        0.807  0.774  0.797  0.826  0.804  0.802
    pixel + 7 x 7 mean        0.822  0.794  0.788  0.812  0.797  0.803
    ========================  =====  =====  =====  =====  =====  =====

    So a per-pixel RBF-SVM lands at about 68 % (65-71 %) and the same SVM with
    neighbourhood context at about 80-84 %. The remaining errors come from the tillage
    classes, from fields of a class that fall only in test blocks, and from border pixels.
    """
    from hsi.io import Cube
    from hsi.scenes._synthetic_gen import generate
    from hsi.scenes.palette import scene_palette
    from hsi.scenes.scene import Scene

    params = dict(
        parcel_size=parcel_size,
        background_fraction=background_fraction,
        road_spacing=road_spacing,
        crop_separation=crop_separation,
        parcel_variability=parcel_variability,
        texture=texture,
        texture_scale=texture_scale,
        pixel_variability=pixel_variability,
        mixing=mixing,
        illumination=illumination,
        noise=noise,
    )
    out = generate(height, width, bands, n_classes, seed, **params)
    cube = Cube(
        data=out["data"],
        wavelengths=out["wavelengths"],
        meta={"source": "synthetic", "seed": seed, "generator": "hsi.scenes.synthetic", "units": dict(UNITS),
              "fwhm": None},
    )
    pairs = [p for p in NEAR_IDENTICAL_PAIRS if max(p) <= n_classes]
    meta = {
        "label_values": list(range(1, n_classes + 1)),
        "seed": seed,
        "params": {"height": height, "width": width, "bands": bands, "n_classes": n_classes, **params},
        "near_identical_pairs": pairs,
        "parcels": out["parcels"],
        "roads": out["roads"],
    }
    return Scene(
        name="synthetic",
        cube=cube,
        labels=out["labels"],
        class_names=out["class_names"],
        palette=scene_palette(out["class_names"]),
        meta=meta,
    )


def _load(root, download: bool = False, **options: Any) -> Scene:
    """Registry loader: ignores ``root``/``download`` (nothing to read), forwards options."""
    return make_synthetic_scene(**options)



#: Registered by :mod:`hsi.scenes.registry` on first use.
SPECS: tuple[SceneSpec, ...] = (
    SceneSpec(
        name="synthetic",
        loader=_load,
        description="procedural Indian-Pines-like scene, 145 x 145 x 200, 16 classes (no files; "
        "options: make_synthetic_scene arguments)",
        family="synthetic",
        units={"generated": UNITS},
    ),
)
