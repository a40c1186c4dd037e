"""The classic classification benchmarks, as distributed by the EHU GIC group.

Indian Pines, Salinas, Salinas-A, Pavia University, Pavia Centre, Kennedy Space Center
and Botswana: one ``<Name>.mat`` cube and one ``<Name>_gt.mat`` label map each, from
http://www.ehu.eus/ccwintco/index.php/Hyperspectral_Remote_Sensing_Scenes. Place them in
``<root>/<scene_name>/`` (or directly in ``<root>``), or pass ``download=True``.

Verification: SHA-256 and size are checked where a reference is known (Indian Pines and
Salinas-A, from the reference list in ``../shared/data/README.md``): on download, and for a
placed file on every load, the SHA-256 computed once per file identity
(:func:`hsi.scenes.files.verify_file`; ``checksum=False`` skips it for a deliberate re-save).
For the other files no reference checksum is known, so what is verified is the shape
after loading: the cube must be exactly ``shape`` (H, W, C) and the label map H x W —
a truncated or wrong file fails there with :class:`~hsi.errors.IntegrityError`.
Re-saved ground-truth files (other variable names such as ``hyperimg_gt``, ``y`` or
``gt``, MATLAB v7.3) are accepted: the standard key is tried first, then the known
alternatives, then key discovery of ``hsi.io``.

Units: each scene declares what its stored values are (``units``, put in
``scene.cube.meta["units"]`` with source "registry"); no scene's values are divided. Salinas
and Salinas-A are at-sensor radiance (so the EHU page describes them); the others hold
integers with no declared scale, kept as stored and declared "unknown".

Please cite the original data providers (see each scene's ``citation``) and the EHU page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hsi.errors import CubeFormatError, IntegrityError, ShapeMismatchError
from hsi.io.units import declared_units
from hsi.scenes.files import RemoteFile, ensure_files, locate
from hsi.scenes.labels import remap_labels
from hsi.scenes.palette import scene_palette
from hsi.scenes.registry import SceneSpec
from hsi.scenes.scene import Scene, with_declared_units

if TYPE_CHECKING:  # for annotations only: the registry lists these scenes without numpy
    import numpy as np

EHU = "http://www.ehu.eus/ccwintco/uploads"
EHU_PAGE = "http://www.ehu.eus/ccwintco/index.php/Hyperspectral_Remote_Sensing_Scenes"

# AVIRIS band centres (nm) of the 220-band Indian Pines cube, from 92AV3C.spc
# (Purdue/Landgrebe, also in spectralpython/sample-data). Not monotonic: the AVIRIS
# spectrometers overlap near 690, 1280 and 1885 nm.
_IP_220_NM = (
    400.02, 409.82, 419.62, 429.43, 439.25, 449.07, 458.90, 468.73, 478.57, 488.41, 498.26,
    508.12, 517.98, 527.85, 537.72, 547.60, 557.49, 567.38, 577.28, 587.18, 597.09, 607.01,
    616.93, 626.85, 636.78, 646.72, 656.67, 666.61, 676.57, 686.53, 696.50, 686.91, 696.55,
    706.19, 715.83, 725.47, 735.11, 744.74, 754.38, 764.01, 773.64, 783.27, 792.91, 802.53,
    812.16, 821.79, 831.41, 841.04, 850.66, 860.28, 869.91, 879.53, 889.14, 898.76, 908.38,
    917.99, 927.61, 937.22, 946.83, 956.45, 966.06, 975.66, 985.27, 994.88, 1004.48, 1014.09,
    1023.69, 1033.29, 1042.89, 1052.49, 1062.09, 1071.69, 1081.29, 1090.88, 1100.48, 1110.07,
    1119.66, 1129.25, 1138.84, 1148.43, 1158.02, 1167.61, 1177.19, 1186.77, 1196.36, 1205.94,
    1215.52, 1225.10, 1234.68, 1244.26, 1253.83, 1263.41, 1272.98, 1282.55, 1273.00, 1282.96,
    1292.93, 1302.89, 1312.85, 1322.81, 1332.77, 1342.73, 1352.68, 1362.64, 1372.59, 1382.54,
    1392.49, 1402.44, 1412.39, 1422.34, 1432.28, 1442.23, 1452.17, 1462.11, 1472.05, 1481.99,
    1491.92, 1501.86, 1511.79, 1521.73, 1531.66, 1541.59, 1551.52, 1561.44, 1571.37, 1581.30,
    1591.22, 1601.14, 1611.06, 1620.98, 1630.90, 1640.81, 1650.73, 1660.64, 1670.56, 1680.47,
    1690.38, 1700.28, 1710.19, 1720.10, 1730.00, 1739.90, 1749.81, 1759.71, 1769.60, 1779.50,
    1789.40, 1799.29, 1809.19, 1819.08, 1828.97, 1838.86, 1848.75, 1858.63, 1868.52, 1878.40,
    1888.28, 1883.24, 1893.25, 1903.26, 1913.26, 1923.27, 1933.27, 1943.27, 1953.26, 1963.25,
    1973.24, 1983.23, 1993.22, 2003.20, 2013.18, 2023.16, 2033.13, 2043.10, 2053.07, 2063.04,
    2073.00, 2082.97, 2092.92, 2102.88, 2112.83, 2122.78, 2132.73, 2142.68, 2152.62, 2162.56,
    2172.50, 2182.43, 2192.37, 2202.30, 2212.22, 2222.15, 2232.07, 2241.99, 2251.90, 2261.82,
    2271.73, 2281.64, 2291.54, 2301.45, 2311.35, 2321.25, 2331.14, 2341.03, 2350.92, 2360.81,
    2370.70, 2380.58, 2390.46, 2400.33, 2410.21, 2420.08, 2429.95, 2439.81, 2449.68, 2459.54,
    2469.40, 2479.25, 2489.11, 2498.96,
)
# Bands the EHU "corrected" cube drops (1-based, of the 220): [104-108], [150-163], 220.
_IP_REMOVED_1BASED = (*range(104, 109), *range(150, 164), 220)
# The 200 that stay, in file band order (plain floats: the registry lists the scenes without numpy).
_IP_200_NM = tuple(w for i, w in enumerate(_IP_220_NM, start=1) if i not in _IP_REMOVED_1BASED)


def indian_pines_wavelengths() -> np.ndarray:
    """(200,) band centres (nm) of ``Indian_pines_corrected.mat``, in file band order."""
    import numpy as np

    return np.asarray(_IP_200_NM, dtype=np.float64)


def pick_key(path: Path, candidates: tuple[str, ...]) -> str | None:
    """First of ``candidates`` stored in ``path`` (exact, then case-insensitive), else None
    (which lets ``hsi.io`` discover the only suitable array)."""
    from hsi.io import list_arrays

    names = [info.name for info in list_arrays(path)]
    for cand in candidates:
        if cand in names:
            return cand
    lower = {n.lower(): n for n in names}
    for cand in candidates:
        if cand.lower() in lower:
            return lower[cand.lower()]
    return None


@dataclass(frozen=True)
class BenchmarkScene:
    """One EHU benchmark: files, keys, expected shape, classes and provenance.

    Attributes
    ----------
    name : registry name.
    title : human name.
    cube, gt : the two files (URL, and SHA-256 / size where a reference is known).
    cube_keys, gt_keys : MATLAB variable names to try, standard name first.
    shape : expected cube (H, W, C); the label map must be (H, W).
    class_names : K names; label k names ``class_names[k-1]``.
    label_values : original ids of the K classes in the file (None = 1..K).
    wavelengths : (C,) band centres in nm, in file order, when publicly known.
    citation : how to cite the data.
    layout : axis order of the stored cube (the EHU files are all H x W x C); passed to
        ``read_cube`` because shapes like 83 x 86 x 204 are ambiguous to auto-detection.
    units : what the stored values are (:func:`hsi.io.units.declared_units`, source
        "registry"); None: the units found on reading stand.
    """

    name: str
    title: str
    cube: RemoteFile
    gt: RemoteFile
    cube_keys: tuple[str, ...]
    gt_keys: tuple[str, ...]
    shape: tuple[int, int, int]
    class_names: tuple[str, ...]
    label_values: tuple[int, ...] | None = None
    wavelengths: tuple[float, ...] | None = field(default=None, repr=False)
    citation: str = ""
    layout: str = "HWC"
    units: dict[str, Any] | None = field(default=None, hash=False)

    def load(self, root: Path, download: bool = False, *, checksum: bool = True, **options: Any) -> Scene:
        """Find (or download) the two files, read them and check them against this spec.

        Placed files under the registry's names are checked against its size and SHA-256
        where known, hashed once per file identity (:func:`hsi.scenes.files.verify_file`);
        ``checksum=False`` skips that for a deliberate re-save. Downloads are always verified.
        """
        from hsi.io import Cube

        if options:
            raise TypeError(f"scene {self.name!r}: unexpected option(s) {sorted(options)}; accepted: checksum")
        placed = {spec.filename for spec in (self.cube, self.gt) if locate(root, self.name, spec.names)}
        paths = ensure_files(self.name, (self.cube, self.gt), root, download, checksum=checksum, page=EHU_PAGE)
        cube_path, gt_path = paths[self.cube.filename], paths[self.gt.filename]
        try:
            cube, labels = self._read_checked(cube_path, gt_path)
        except (IntegrityError, ShapeMismatchError, CubeFormatError):
            # A file downloaded just now that fails the checks after loading must not stay behind.
            for name, path in paths.items():
                if name not in placed:
                    path.unlink(missing_ok=True)
            raise
        if cube.wavelengths is None and self.wavelengths is not None:
            cube = self._with_wavelengths(cube, Cube)
        cube = with_declared_units(cube, self.units, self.name)
        labels, values = remap_labels(labels, self.label_values, source=str(gt_path))
        meta = {
            "label_values": values,
            "files": {"cube": str(cube_path), "labels": str(gt_path)},
            "title": self.title,
            "citation": self.citation,
        }
        return Scene(self.name, cube, labels, list(self.class_names), scene_palette(self.class_names), meta)

    def _read_checked(self, cube_path: Path, gt_path: Path):
        """Read cube and labels; check H x W agree and the cube has the expected shape."""
        from hsi.io import read_cube, read_labels

        cube = read_cube(cube_path, key=pick_key(cube_path, self.cube_keys), layout=self.layout)
        labels = read_labels(gt_path, key=pick_key(gt_path, self.gt_keys))
        if labels.shape != cube.data.shape[:2]:
            raise ShapeMismatchError(
                f"scene {self.name!r}: label map {gt_path} is {labels.shape[0]} x {labels.shape[1]} "
                f"but cube {cube_path} is {cube.height} x {cube.width} (x {cube.n_bands}); they must match"
            )
        if tuple(cube.data.shape) != self.shape:
            raise IntegrityError(
                f"scene {self.name!r}: cube {cube_path} has shape {tuple(cube.data.shape)}, expected "
                f"{self.shape} (H, W, C) for {self.cube.filename}; the file is a different version "
                f"or damaged — replace it (see `hsi scenes --guide`)"
            )
        return cube, labels

    def _with_wavelengths(self, cube, cube_cls):
        """Attach the known wavelengths, sorting bands where detectors overlap."""
        import numpy as np

        from hsi.io.bands import band_order

        wl = np.asarray(self.wavelengths, dtype=np.float64)
        order, how = band_order(wl, f"scene {self.name!r} wavelengths")
        data = cube.data if how == "ascending" else np.ascontiguousarray(cube.data[..., order])
        meta = dict(cube.meta, wavelength_source=f"hsi.scenes.benchmark ({self.name})")
        if how != "ascending":
            meta.update(sorted_bands=True, band_index=order.tolist())
            if meta.get("fwhm") is not None:
                meta["fwhm"] = [meta["fwhm"][i] for i in order]
        return cube_cls(data=data, wavelengths=wl[order], meta=meta)

    def spec(self) -> SceneSpec:
        return SceneSpec(
            name=self.name,
            loader=self.load,
            description=f"{self.title}: {self.shape[0]} x {self.shape[1]} x {self.shape[2]}, "
            f"{len(self.class_names)} classes",
            files=(self.cube, self.gt),
            family="benchmark",
            units={} if self.units is None else {"mat": self.units},
        )


_SALINAS_NAMES = (
    "Brocoli_green_weeds_1", "Brocoli_green_weeds_2", "Fallow", "Fallow_rough_plow",
    "Fallow_smooth", "Stubble", "Celery", "Grapes_untrained", "Soil_vinyard_develop",
    "Corn_senesced_green_weeds", "Lettuce_romaine_4wk", "Lettuce_romaine_5wk",
    "Lettuce_romaine_6wk", "Lettuce_romaine_7wk", "Vinyard_untrained", "Vinyard_vertical_trellis",
)
_AVIRIS_SALINAS_CITE = "AVIRIS, Salinas Valley, California, 1998 (3.7 m pixels). EHU GIC, " + EHU_PAGE


def _integers(what: str) -> dict[str, Any]:
    """Kind "unknown": integers with no declared scale, kept as stored (``what`` says which)."""
    return declared_units("unknown", note=f"{what} as distributed by EHU, no declared scale: not 0-1 "
                                          f"reflectance; kept as stored")


_SALINAS_UNITS = declared_units(
    "radiance", note="at-sensor radiance (the EHU page: available only as at-sensor radiance), integers in "
                     "the distributor's scaled units; kept as stored")
_ROSIS_UNITS = declared_units(
    "unknown", note="ROSIS integers as distributed (about 0-8000), reflectance-like but with no declared "
                    "scale; kept as stored")

SCENES: tuple[BenchmarkScene, ...] = (
    BenchmarkScene(
        name="indian_pines",
        title="Indian Pines (AVIRIS, 1992)",
        cube=RemoteFile("Indian_pines_corrected.mat", f"{EHU}/6/67/Indian_pines_corrected.mat",
                        sha256="ec2f8808710919d566f70f0d4aa885aae1ddfd42b734aba71c5e12ca65450939", size=5_953_527),
        gt=RemoteFile("Indian_pines_gt.mat", f"{EHU}/c/c4/Indian_pines_gt.mat",
                      sha256="65c4687a8ab04f6da4789799bc3bc4f6e88bccac3ed6a2e6ae367e5e6b9e429c", size=1_125),
        cube_keys=("indian_pines_corrected",),
        gt_keys=("indian_pines_gt", "hyperimg_gt", "y", "gt"),
        shape=(145, 145, 200),
        class_names=(
            "Alfalfa", "Corn-notill", "Corn-mintill", "Corn", "Grass-pasture", "Grass-trees",
            "Grass-pasture-mowed", "Hay-windrowed", "Oats", "Soybean-notill", "Soybean-mintill",
            "Soybean-clean", "Wheat", "Woods", "Buildings-Grass-Trees-Drives", "Stone-Steel-Towers",
        ),
        wavelengths=_IP_200_NM,
        citation="Baumgardner, Biehl, Landgrebe (2015). 220 Band AVIRIS Hyperspectral Image Data Set: "
        "June 12, 1992 Indian Pine Test Site 3. Purdue University Research Repository. doi:10.4231/R7RX991C",
        units=_integers("AVIRIS 1992 integers (in the thousands)"),
    ),
    BenchmarkScene(
        name="salinas",
        title="Salinas (AVIRIS, 1998)",
        cube=RemoteFile("Salinas_corrected.mat", f"{EHU}/a/a3/Salinas_corrected.mat"),
        gt=RemoteFile("Salinas_gt.mat", f"{EHU}/f/fa/Salinas_gt.mat"),
        cube_keys=("salinas_corrected",),
        gt_keys=("salinas_gt", "hyperimg_gt", "gt"),
        shape=(512, 217, 204),
        class_names=_SALINAS_NAMES,
        citation=_AVIRIS_SALINAS_CITE,
        units=_SALINAS_UNITS,
    ),
    BenchmarkScene(
        name="salinas_a",
        title="Salinas-A (AVIRIS, 1998; subscene of Salinas)",
        cube=RemoteFile("SalinasA_corrected.mat", f"{EHU}/d/df/SalinasA_corrected.mat",
                        sha256="d75684ed3ab71a1024cee0f9db9061f50a3523a92ff5edfbbb1eed976b9f1721", size=1_539_086),
        gt=RemoteFile("SalinasA_gt.mat", f"{EHU}/a/aa/SalinasA_gt.mat",
                      sha256="17814c1d3296c0e29b27f320f2c4174d2a68adb87e376abe78f02923e2c2e454", size=587),
        cube_keys=("salinasA_corrected",),
        gt_keys=("salinasA_gt", "gt"),
        # EHU describes it as "86 x 83 pixels"; scipy loads both files as 83 rows x 86 columns.
        shape=(83, 86, 204),
        class_names=tuple(_SALINAS_NAMES[i - 1] for i in (1, 10, 11, 12, 13, 14)),
        label_values=(1, 10, 11, 12, 13, 14),
        citation=_AVIRIS_SALINAS_CITE,
        units=_SALINAS_UNITS,
    ),
    BenchmarkScene(
        name="pavia_university",
        title="Pavia University (ROSIS, 2001)",
        cube=RemoteFile("PaviaU.mat", f"{EHU}/e/ee/PaviaU.mat"),
        gt=RemoteFile("PaviaU_gt.mat", f"{EHU}/5/50/PaviaU_gt.mat"),
        cube_keys=("paviaU",),
        gt_keys=("paviaU_gt", "gt"),
        shape=(610, 340, 103),
        class_names=(
            "Asphalt", "Meadows", "Gravel", "Trees", "Painted metal sheets", "Bare Soil",
            "Bitumen", "Self-Blocking Bricks", "Shadows",
        ),
        citation="ROSIS-03, Pavia, Italy; courtesy of Prof. Paolo Gamba, University of Pavia. " + EHU_PAGE,
        units=_ROSIS_UNITS,
    ),
    BenchmarkScene(
        name="pavia_centre",
        title="Pavia Centre (ROSIS, 2001)",
        cube=RemoteFile("Pavia.mat", f"{EHU}/e/e3/Pavia.mat"),
        gt=RemoteFile("Pavia_gt.mat", f"{EHU}/5/53/Pavia_gt.mat"),
        cube_keys=("pavia",),
        gt_keys=("pavia_gt", "gt"),
        shape=(1096, 715, 102),
        class_names=(
            "Water", "Trees", "Asphalt", "Self-Blocking Bricks", "Bitumen", "Tiles", "Shadows",
            "Meadows", "Bare Soil",
        ),
        citation="ROSIS-03, Pavia, Italy; courtesy of Prof. Paolo Gamba, University of Pavia. " + EHU_PAGE,
        units=_ROSIS_UNITS,
    ),
    BenchmarkScene(
        name="ksc",
        title="Kennedy Space Center (AVIRIS, 1996)",
        cube=RemoteFile("KSC.mat", f"{EHU}/2/26/KSC.mat"),
        gt=RemoteFile("KSC_gt.mat", f"{EHU}/a/a6/KSC_gt.mat"),
        cube_keys=("KSC",),
        gt_keys=("KSC_gt", "gt"),
        shape=(512, 614, 176),
        class_names=(
            "Scrub", "Willow swamp", "Cabbage palm hammock", "Cabbage palm/oak hammock",
            "Slash pine", "Oak/broadleaf hammock", "Hardwood swamp", "Graminoid marsh",
            "Spartina marsh", "Cattail marsh", "Salt marsh", "Mud flats", "Water",
        ),
        citation="AVIRIS, Kennedy Space Center, Florida, 1996; Center for Space Research, "
        "University of Texas at Austin. " + EHU_PAGE,
        units=_integers("AVIRIS 1996 integers"),
    ),
    BenchmarkScene(
        name="botswana",
        title="Botswana (Hyperion, 2001)",
        cube=RemoteFile("Botswana.mat", f"{EHU}/7/72/Botswana.mat"),
        gt=RemoteFile("Botswana_gt.mat", f"{EHU}/5/58/Botswana_gt.mat"),
        cube_keys=("Botswana",),
        gt_keys=("Botswana_gt", "gt"),
        shape=(1476, 256, 145),
        class_names=(
            "Water", "Hippo grass", "Floodplain grasses 1", "Floodplain grasses 2", "Reeds",
            "Riparian", "Firescar", "Island interior", "Acacia woodlands", "Acacia shrublands",
            "Acacia grasslands", "Short mopane", "Mixed mopane", "Exposed soils",
        ),
        citation="NASA EO-1 Hyperion, Okavango Delta, Botswana, 2001; Center for Space Research, "
        "University of Texas at Austin. " + EHU_PAGE,
        units=_integers("Hyperion 2001 integers"),
    ),
)

#: Registered by :mod:`hsi.scenes.registry` on first use.
SPECS: tuple[SceneSpec, ...] = tuple(scene.spec() for scene in SCENES)
