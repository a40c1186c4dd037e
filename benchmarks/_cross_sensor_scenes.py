"""What ``bench_cross_sensor.py`` trains on: one synthetic landscape seen by three simulated sensors.

The landscape is :func:`hsi.scenes.synthetic.make_synthetic_scene` at 2 nm (1051 band centres,
400-2500 nm), wider than any sensor's view: each sensor sees its own crop (the full height,
:data:`VIEW` of the width, the crops overlapping and shifted left to right), so the class
proportions differ a little from sensor to sensor. A sensor integrates the fine spectrum under
Gaussian band responses (:func:`hsi.preprocess.response.response_matrix` /
:func:`~hsi.preprocess.response.apply_response`), turns reflectance into its stored units,
adds its noise and writes an HDF5 file with :func:`hsi.io.write_h5` (datasets ``cube`` and
``labels``, the landscape's class names), then declares on the ``cube`` dataset what it
declares (the ``fwhm`` and ``units`` attributes):

========  ==========  ============  ===========  =================================  ==================
sensor    bands       centres (nm)  FWHM (nm)    stored values                      declares
========  ==========  ============  ===========  =================================  ==================
A         199         420-2400      10           float32 reflectance 0-1            units, fwhm
B         77          450-2350      30           int16 reflectance x 10000          fwhm (no scale)
C         137         405-2445      15           float32 g(l) reflectance + o(l)    units, fwhm
========  ==========  ============  ===========  =================================  ==================

C is radiance-like: a per-band gain ``g`` (a 5800 K Planck curve scaled to 30-150, the shape of
the solar irradiance) and offset ``o`` (a path radiance falling as the fourth power of the
wavelength, 0.2-2.5 % of ``g``). Noise is white, per band, relative to the signal
(:attr:`Sensor.noise`), from a generator seeded by the seed and the sensor's position in
:data:`SENSORS`. :func:`sensor_values` is the noise-free part alone (a flat reflectance ``r``
gives ``r``, ``10000 r`` and ``g r + o`` per band), :func:`render_sensors` writes the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: the landscape: 2 nm band centres from 400 to 2500 nm
FINE_BANDS = 1051
#: (height, width) of the landscape of the benchmark
SIZE = (96, 160)
#: share of the landscape's width each sensor sees
VIEW = 0.6
#: classes the landscape is generated with (make_synthetic_scene's 16)
N_CLASSES = 16
#: the classes labelled in the sensors' files (the others stay in the cube, unlabelled): one of each tillage
#: pair of NEAR_IDENTICAL_PAIRS (within one sensor they are told apart by a 1 % shape difference, which no
#: change of sensor leaves intact, and the benchmark is about the sensors), and none of the single-parcel
#: classes (one field cannot be in every sensor's view)
KEPT_CLASSES = (2, 4, 5, 6, 8, 11, 14, 15)
#: arguments of make_synthetic_scene: smaller fields than its default (every class in every view), and low
#: noise at 2 nm (each sensor adds its own)
LANDSCAPE = {"parcel_size": 14.0, "road_spacing": 40.0, "noise": 0.002}


@dataclass(frozen=True)
class Sensor:
    """One simulated sensor: its bands, what it stores and what its file declares.

    Attributes
    ----------
    name : str
        Scene name in the collection files.
    first, last, step : float
        Band centres ``first, first + step, ... last`` (nm).
    fwhm : float
        Width of every band's Gaussian response (nm).
    storage : {"reflectance", "reflectance_x10000", "radiance"}
        float32 reflectance 0-1; int16 reflectance x 10000 (rounded, clipped to int16);
        float32 ``g(l) * reflectance + o(l)``.
    noise : float
        Std of the white noise relative to the noise-free value of each pixel and band.
    declares : tuple of str
        Attributes written on the ``cube`` dataset: ``"units"``, ``"fwhm"``.
    description : str
        One line for tables.
    """

    name: str
    first: float
    last: float
    step: float
    fwhm: float
    storage: str
    noise: float
    declares: tuple[str, ...]
    description: str

    @property
    def wavelengths(self) -> np.ndarray:
        """(C,) float64 band centres (nm)."""
        n = int(round((self.last - self.first) / self.step)) + 1
        return self.first + self.step * np.arange(n, dtype=np.float64)

    @property
    def widths(self) -> np.ndarray:
        """(C,) float64 band widths (nm)."""
        return np.full(self.wavelengths.shape, float(self.fwhm))

    @property
    def units(self) -> str:
        """The ``units`` attribute it writes when it declares units."""
        return "radiance" if self.storage == "radiance" else "reflectance"


#: the sensors, in order (the order seeds their noise)
SENSORS: dict[str, Sensor] = {s.name: s for s in (
    Sensor("A", 420.0, 2400.0, 10.0, 10.0, "reflectance", 0.005, ("units", "fwhm"),
           "hyperspectral VNIR-SWIR, float reflectance 0-1"),
    Sensor("B", 450.0, 2350.0, 25.0, 30.0, "reflectance_x10000", 0.01, ("fwhm",),
           "coarse bands, int16 reflectance x 10000, no scale factor declared"),
    Sensor("C", 405.0, 2445.0, 15.0, 15.0, "radiance", 0.007, ("units", "fwhm"),
           "radiance-like, per-band gain and offset, float32"),
)}


def fine_wavelengths() -> np.ndarray:
    """(1051,) the landscape's band centres: 400, 402, ... 2500 nm."""
    return np.linspace(400.0, 2500.0, FINE_BANDS)


def gain(wl: np.ndarray) -> np.ndarray:
    """(C,) the radiance-like gain: a 5800 K Planck curve (solar-irradiance-like) scaled to 30-150 over 400-2500 nm."""
    wl = np.asarray(wl, dtype=np.float64)
    lo, hi = 400.0, 2500.0

    def planck(x):
        m = x * 1e-9
        return 1.0 / (m**5 * (np.exp(1.4388e-2 / (m * 5800.0)) - 1.0))

    grid = np.linspace(lo, hi, 2101)
    p, curve = planck(wl), planck(grid)
    return 30.0 + 120.0 * (p - curve.min()) / (curve.max() - curve.min())


def offset(wl: np.ndarray) -> np.ndarray:
    """(C,) the radiance-like offset: path radiance, ``g (0.002 + 0.005 (500 / l)^4)``."""
    wl = np.asarray(wl, dtype=np.float64)
    return gain(wl) * (0.002 + 0.005 * (500.0 / wl) ** 4)


def sensor_values(sensor: Sensor, reflectance: np.ndarray, wl_fine: np.ndarray | None = None,
                  rng: np.random.Generator | None = None) -> np.ndarray:
    """What ``sensor`` stores for fine-resolution ``reflectance`` (..., 1051): its dtype, its units.

    Parameters
    ----------
    sensor : Sensor
    reflectance : (..., C_fine) array
        Reflectance 0-1 at the band centres ``wl_fine``.
    wl_fine : (C_fine,) array or None
        Its band centres (None: :func:`fine_wavelengths`).
    rng : numpy Generator or None
        Draws the noise; None: no noise.

    Returns
    -------
    (..., C) float32 or int16 array
    """
    from hsi.preprocess.response import apply_response, response_matrix

    wl_fine = fine_wavelengths() if wl_fine is None else np.asarray(wl_fine, dtype=np.float64)
    wl = sensor.wavelengths
    band = apply_response(np.asarray(reflectance, dtype=np.float32), response_matrix(wl_fine, wl, sensor.widths))
    value = band.astype(np.float64)
    if sensor.storage == "radiance":
        value = gain(wl) * value + offset(wl)
    elif sensor.storage == "reflectance_x10000":
        value = value * 10000.0
    if rng is not None and sensor.noise > 0:
        value = value + sensor.noise * np.abs(value) * rng.standard_normal(value.shape)
    if sensor.storage == "reflectance_x10000":
        info = np.iinfo(np.int16)
        return np.clip(np.rint(value), info.min, info.max).astype(np.int16)
    return value.astype(np.float32)


def landscape(size: tuple[int, int] = SIZE, seed: int = 0):
    """The fine-resolution landscape: a :class:`~hsi.scenes.scene.Scene` of ``size`` x 1051 bands.

    The classes of :data:`KEPT_CLASSES` are numbered ``1..K`` in their order, the others unlabelled (0);
    ``scene.class_names`` are those of the kept ones.
    """
    import dataclasses

    from hsi.scenes.synthetic import make_synthetic_scene

    scene = make_synthetic_scene(size[0], size[1], FINE_BANDS, N_CLASSES, seed, **LANDSCAPE)
    kept = list(KEPT_CLASSES)
    lut = np.zeros(N_CLASSES + 1, dtype=np.int64)
    lut[kept] = np.arange(1, len(kept) + 1)
    return dataclasses.replace(scene, labels=lut[scene.labels], class_names=[scene.class_names[k - 1] for k in kept],
                               palette=scene.palette[[0, *kept]])


def crops(width: int, n: int = len(SENSORS), view: float = VIEW) -> list[slice]:
    """Column ranges of the ``n`` sensors' views: ``view`` of ``width`` each, spread evenly left to right."""
    cols = int(round(view * width))
    starts = np.linspace(0, width - cols, n).round().astype(int)
    return [slice(int(s), int(s) + cols) for s in starts]


def _write_sensor(path: Path, sensor: Sensor, values: np.ndarray, labels: np.ndarray, names: list[str],
                  source: str) -> Path:
    """One sensor's HDF5 file (datasets ``cube`` and ``labels``), declaring what the sensor declares."""
    import h5py

    from hsi.io import write_h5

    path = write_h5(path, values, labels=labels, wavelengths=sensor.wavelengths, class_names=names, source=source,
                    overwrite=True)
    with h5py.File(path, "r+") as handle:
        attrs = handle["cube"].attrs
        if "fwhm" in sensor.declares:
            attrs["fwhm"] = sensor.widths
        if "units" in sensor.declares:
            attrs["units"] = sensor.units
    return path


def render_sensors(folder: str | Path, seed: int = 0, size: tuple[int, int] = SIZE, noise: bool = True,
                   sensors: dict[str, Sensor] | None = None, controls: bool = False) -> dict[str, Path]:
    """Write one HDF5 file per sensor (``<folder>/<name>.h5``) of the landscape ``size``; returns ``{name: path}``.

    ``controls``: also every sensor's view of every other sensor's crop, ``<folder>/<S>-on-<T>.h5`` (key
    ``"S-on-T"``): the same parcels as ``T.h5`` seen by sensor ``S``, the same-sensor control of a checkpoint
    trained on ``S`` and applied to ``T``. The same ``(seed, size, noise)`` always gives the same files; existing
    files are replaced.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    sensors = SENSORS if sensors is None else sensors
    scene = landscape(size, seed)
    fine = scene.cube.data
    names = [str(n) for n in scene.class_names]
    views = crops(size[1], len(sensors))
    paths: dict[str, Path] = {}
    for i, ((name, sensor), cols) in enumerate(zip(sensors.items(), views)):
        rng = np.random.default_rng([seed, i]) if noise else None
        values = sensor_values(sensor, fine[:, cols], scene.cube.wavelengths, rng)
        paths[name] = _write_sensor(folder / f"{name}.h5", sensor, values, scene.labels[:, cols], names,
                                    f"bench_cross_sensor sensor {name}: {sensor.description}")
    if controls:
        for i, (name, sensor) in enumerate(sensors.items()):
            for j, (other, cols) in enumerate(zip(sensors, views)):
                if other == name:
                    continue
                rng = np.random.default_rng([seed, i, 100 + j]) if noise else None
                values = sensor_values(sensor, fine[:, cols], scene.cube.wavelengths, rng)
                paths[f"{name}-on-{other}"] = _write_sensor(
                    folder / f"{name}-on-{other}.h5", sensor, values, scene.labels[:, cols], names,
                    f"bench_cross_sensor sensor {name} on the view of {other}: {sensor.description}")
    return paths
