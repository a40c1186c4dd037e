"""Unmixing scenes used as classification scenes: Samson, Jasper Ridge, Urban.

These scenes ship an abundance ground truth instead of a class map: ``A`` (K, H*W), one
row per endmember, each column a pixel in MATLAB **column-major** order (pixel ``p`` is at
row ``p % H``, column ``p // H``; see ``../shared/data/README.md``, "Pixel ordering"),
plus ``M`` (endmember spectra) and ``cood`` (endmember names such as ``'1-rock'``).
A class map is derived from it: label ``k`` where endmember ``k`` has the largest
abundance and that abundance is ``>= purity`` (default 0.5), else 0 (mixed, unlabeled).
Class names come from ``cood`` in the file's row order, with the number prefix removed and
the first letter upper case (:func:`class_name`).

Files (F. Zhu's versions, https://rslab.ut.ac.ir/data, also
https://lesun.weebly.com/hyperspectral-data-set.html; no stable direct links, so
``download=True`` cannot fetch them):

- ``samson``: ENVI ``samson_1.img`` + ``samson_1.img.hdr`` (95 x 95 x 156), or the MATLAB
  ``samson_1.mat``; ground truth ``end3.mat`` (Rock, Tree, Water).
- ``jasper_ridge``: ENVI ``jasperRidge2_R198.img`` + ``.hdr`` (100 x 100 x 198), or
  ``jasperRidge2_R198.mat``; ground truth ``end4.mat`` (Tree, Water, Dirt, Road).
- ``urban``: ``Urban_R162.mat`` (307 x 307 x 162) or an ENVI ``Urban_R162.img``/``.hdr``;
  ground truth ``end6_groundTruth.mat`` (Asphalt Road, Grass, Tree, Roof, Metal, Dirt).

The ENVI form is preferred (it has wavelengths) and read by :func:`hsi.io.read_cube`:
the Samson header has no reflectance scale factor, so its values stay raw counts (-17 to
1402); Jasper Ridge's is divided by its factor 10000. The ``.mat`` cubes store ``Y`` (or
``V``) as (C, H*W), column-major like ``A``; they are reshaped to (H, W, C) and kept in
the file's units (Samson ``V`` is ``max(envi, 0) / 1402``), without wavelengths. SHA-256 references
exist for some files (below): a placed file under its registry name is checked against
them on every load, hashed once per file identity (:func:`hsi.scenes.files.verify_file`;
scene option ``checksum=False`` skips it); the rest are verified by shape after loading.

Units: each scene declares what the values of each form are (``envi_units``, ``mat_units``,
put in ``scene.cube.meta["units"]`` with source "registry"). Only Jasper Ridge's ENVI form
is reflectance (its header's scale factor 10000 is applied); every other form is kept as
distributed and declared "unknown", with a note saying what the numbers are.

Cite: F. Zhu, "Hyperspectral unmixing: ground truth labeling, datasets, benchmark
performances and survey", arXiv:1708.05125 (2017).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hsi.errors import CubeFormatError, OptionError, ShapeMismatchError
from hsi.io.units import declared_units, infer_units
from hsi.scenes.files import RemoteFile, locate, not_found, verify_file
from hsi.scenes.labels import abundance_labels
from hsi.scenes.palette import scene_palette
from hsi.scenes.registry import SceneSpec
from hsi.scenes.scene import Scene, with_declared_units

if TYPE_CHECKING:  # for annotations only: the registry lists this module's scenes without numpy
    import numpy as np

    from hsi.io import Cube

PAGE = "https://rslab.ut.ac.ir/data (or https://lesun.weebly.com/hyperspectral-data-set.html)"

_PREFIX = re.compile(r"^\s*\d+\s*[-_.:)]?\s*")


def _load_mat(path: Path, names: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """Variables of a MATLAB v5 or v7.3 file (v7.3 arrays put back in MATLAB orientation).

    Empty, truncated or corrupt files raise :class:`CubeFormatError` naming the file.
    """
    import numpy as np

    import scipy.io

    from hsi.io.matlab import READ_ERRORS, is_v73

    if is_v73(path):  # HDF5 inside
        import h5py

        out: dict[str, np.ndarray] = {}
        try:
            with h5py.File(path, "r") as handle:
                for name in names or list(handle.keys()):
                    if name in handle and isinstance(handle[name], h5py.Dataset):
                        out[name] = np.asarray(handle[name]).T
        except (OSError, ValueError, KeyError, RuntimeError) as err:
            raise CubeFormatError(f"{path}: corrupt or truncated MATLAB v7.3 file ({err})") from err
        return out
    try:
        return scipy.io.loadmat(path, variable_names=names)
    except READ_ERRORS as err:
        raise CubeFormatError(
            f"{path}: cannot be read as a MATLAB file ({type(err).__name__}: {err})"
        ) from err


def parse_endmember_names(cood: Any) -> list[str]:
    """``cood`` cell array (``'1-rock'``, ``'2-Tree'``...) -> ``['rock', 'Tree', ...]``."""
    import numpy as np

    names = []
    for item in np.asarray(cood, dtype=object).ravel():
        while isinstance(item, np.ndarray):
            item = item.ravel()[0] if item.size else ""
        text = str(item).strip()
        names.append(_PREFIX.sub("", text).strip() or text)
    return names


def class_name(name: str) -> str:
    """A class name in the registry's casing: first letter upper case, the rest as written.

    Every registry scene names its classes this way (``"Corn-notill"``, ``"Bare Soil"``,
    ``"Asphalt Road"``), so Samson's ``cood`` names ``rock, Tree, water`` become
    ``Rock, Tree, Water``.
    """
    return name[:1].upper() + name[1:]


def read_abundances(path: str | Path) -> tuple[np.ndarray, list[str] | None, tuple[int, int] | None]:
    """Read an unmixing ground truth file.

    Returns
    -------
    (A (K, N) float64, endmember names from ``cood`` or None, (nRow, nCol) or None).
    """
    import numpy as np

    path = Path(path)
    data = _load_mat(path)
    if "A" not in data:
        keys = sorted(k for k in data if not k.startswith("__"))
        raise CubeFormatError(f"{path}: no abundance matrix 'A' (found variables {keys})")
    a = np.asarray(data["A"], dtype=np.float64)
    if a.ndim != 2:
        raise CubeFormatError(f"{path}: 'A' has shape {a.shape}; expected (K endmembers, H*W pixels)")
    names = parse_endmember_names(data["cood"]) if "cood" in data else None
    if names is not None and len(names) != a.shape[0]:
        names = None
    shape = None
    if "nRow" in data and "nCol" in data:
        shape = (int(np.asarray(data["nRow"]).ravel()[0]), int(np.asarray(data["nCol"]).ravel()[0]))
    return a, names, shape


def read_matlab_unmixing_cube(path: str | Path) -> Cube:
    """Read a MATLAB-form unmixing cube: ``Y`` or ``V`` (C, H*W) column-major + ``nRow``, ``nCol``.

    Falls back to :func:`hsi.io.read_cube` when the file holds an ordinary 3-D cube.
    """
    import numpy as np

    from hsi.io import Cube, read_cube

    path = Path(path)
    data = _load_mat(path)
    key = next((k for k in ("Y", "V") if k in data and np.ndim(data[k]) == 2), None)
    if key is None:
        return read_cube(path)
    flat = np.asarray(data[key])
    c, n = flat.shape
    if "nRow" in data and "nCol" in data:
        h, w = int(np.asarray(data["nRow"]).ravel()[0]), int(np.asarray(data["nCol"]).ravel()[0])
    else:
        side = int(round(np.sqrt(n)))
        if side * side != n:
            raise CubeFormatError(f"{path}: {key!r} is {flat.shape} without nRow/nCol and {n} is not a square")
        h = w = side
    if h * w != n:
        raise ShapeMismatchError(f"{path}: {key!r} has {n} pixel columns but nRow*nCol = {h}*{w} = {h * w}")
    cube = flat.astype(np.float32).reshape(c, w, h).transpose(2, 1, 0)
    finite = cube[np.isfinite(cube)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (None, None)
    meta = {
        "source": str(path), "format": "mat-unmixing", "key": key, "original_dtype": str(flat.dtype),
        "original_shape": flat.shape, "original_layout": "C x (H*W) column-major",
        "units": infer_units(flat.dtype, lo, hi), "fwhm": None,
    }
    for extra in ("maxValue", "SlectBands"):
        if extra in data:
            meta[extra] = np.asarray(data[extra]).ravel().tolist()
    return Cube(data=np.ascontiguousarray(cube), wavelengths=None, meta=meta)


@dataclass(frozen=True)
class UnmixingScene:
    """An unmixing scene turned into a classification scene (see the module docstring).

    Attributes
    ----------
    name, title : registry name and human name.
    cube : the cube file; ``alternatives`` are the other accepted forms (ENVI / MATLAB).
    gt : the abundance ground truth ``.mat``.
    shape : expected (H, W, C) of the standard cube (checked on H x W; C may differ
        between the ENVI and MATLAB forms only if they differ in the source).
    default_names : class names used when the file has no usable ``cood``.
    envi_units, mat_units : what the values of the ENVI and of the MATLAB form are
        (:func:`hsi.io.units.declared_units`, source "registry").
    """

    name: str
    title: str
    cube: RemoteFile
    gt: RemoteFile
    shape: tuple[int, int, int]
    default_names: tuple[str, ...]
    envi_units: dict[str, Any] | None = field(default=None, hash=False)
    mat_units: dict[str, Any] | None = field(default=None, hash=False)

    def load(
        self, root: Path, download: bool = False, *, purity: float = 0.5, checksum: bool = True, **options: Any
    ) -> Scene:
        """Read cube + ground truth and derive labels at ``purity``.

        Files under the registry's names are checked against its size and SHA-256 where known,
        hashed once per file identity (:func:`hsi.scenes.files.verify_file`); ``checksum=False``
        skips that for a deliberate re-save. The other forms (alternative names) are checked by shape.
        """
        from hsi.io import read_cube

        if options:
            raise TypeError(f"scene {self.name!r}: unexpected option(s) {sorted(options)}; accepted: purity, checksum")
        if isinstance(purity, bool) or not isinstance(purity, (int, float)) or not 0.0 <= float(purity) <= 1.0:
            raise OptionError("purity", purity, f"a number in [0, 1] (scene {self.name!r}: the least abundance "
                                                "of a pixel's main endmember for it to be labeled)")
        cube_path = locate(root, self.name, self.cube.names)
        gt_path = locate(root, self.name, self.gt.names)
        missing = [spec for spec, p in ((self.cube, cube_path), (self.gt, gt_path)) if p is None]
        if missing:
            reason = "no direct download link exists for these files" if download else "download=False"
            raise not_found(self.name, root, missing, reason, PAGE)
        assert cube_path is not None and gt_path is not None
        if checksum:
            for spec, p in ((self.cube, cube_path), (self.gt, gt_path)):
                if p.name == spec.filename:
                    verify_file(p, spec)

        if cube_path.suffix.lower() == ".mat":
            cube = with_declared_units(read_matlab_unmixing_cube(cube_path), self.mat_units, self.name)
        else:
            cube = with_declared_units(read_cube(cube_path), self.envi_units, self.name)
        a, names, gt_shape = read_abundances(gt_path)
        hw = (cube.height, cube.width)
        if gt_shape is not None and gt_shape != hw:
            raise ShapeMismatchError(
                f"scene {self.name!r}: ground truth {gt_path} is nRow x nCol = {gt_shape[0]} x {gt_shape[1]} "
                f"but cube {cube_path} is {hw[0]} x {hw[1]}; they must match"
            )
        if a.shape[1] != hw[0] * hw[1]:
            raise ShapeMismatchError(
                f"scene {self.name!r}: ground truth {gt_path} 'A' has {a.shape[1]} pixel columns but cube "
                f"{cube_path} has {hw[0]} x {hw[1]} = {hw[0] * hw[1]} pixels; they must match"
            )
        labels = abundance_labels(a, hw, purity, source=f"{gt_path} 'A'")
        if names is None:
            names = list(self.default_names[: a.shape[0]]) if len(self.default_names) >= a.shape[0] else [
                f"endmember-{k + 1}" for k in range(a.shape[0])
            ]
        names = [class_name(n) for n in names]
        meta = {
            "label_values": list(range(1, a.shape[0] + 1)),
            "purity": float(purity),
            "files": {"cube": str(cube_path), "abundances": str(gt_path)},
            "title": self.title,
            "pixel_order": "MATLAB column-major (A[k].reshape(nRow, nCol, order='F'))",
        }
        return Scene(self.name, cube, labels, names, scene_palette(names), meta)

    def spec(self) -> SceneSpec:
        h, w, c = self.shape
        return SceneSpec(
            name=self.name,
            loader=self.load,
            description=f"{self.title}: {h} x {w} x {c}, {len(self.default_names)} endmembers as classes "
            f"(purity >= 0.5 by default)",
            files=(self.cube, self.gt),
            family="unmixing",
            units={form: units for form, units in (("envi", self.envi_units), ("mat", self.mat_units)) if units},
        )


SCENES: tuple[UnmixingScene, ...] = (
    UnmixingScene(
        name="samson",
        title="Samson",
        cube=RemoteFile(
            "samson_1.img", sha256="4a77f11c20067b69555a65e2f7124a3a822e77c5b6c1bc192ac5ee6ccf786052",
            size=2_815_800, alternatives=("samson_1.img.hdr", "samson_1.mat"),
            note="ENVI binary with its header samson_1.img.hdr, or the MATLAB form samson_1.mat",
        ),
        gt=RemoteFile("end3.mat", sha256="ce768182ce5292390180f827ff5769112cf3d299f4e64ab43e950a310b7ec9fa",
                      size=134_259),
        shape=(95, 95, 156),
        default_names=("Rock", "Tree", "Water"),
        envi_units=declared_units("unknown", note="int16 as distributed (about -17 to 1402), no declared scale: "
                                                  "kept as stored"),
        mat_units=declared_units("unknown", note="V is the ENVI values clipped at 0 and divided by their maximum "
                                                 "1402: 0-1, but not reflectance"),
    ),
    UnmixingScene(
        name="jasper_ridge",
        title="Jasper Ridge (AVIRIS)",
        cube=RemoteFile(
            "jasperRidge2_R198.img", sha256="b9d45b33c901cf77a2e66541e8afde1d6f531e4abec6201d35c5dc5d661343e8",
            size=3_960_000, alternatives=("jasperRidge2_R198.hdr", "jasperRidge2_R198.mat"),
            note="ENVI binary with its header jasperRidge2_R198.hdr, or the MATLAB form jasperRidge2_R198.mat",
        ),
        # Reference size/SHA of the original end4.mat are not known (only of a 2024 re-save).
        gt=RemoteFile("end4.mat"),
        shape=(100, 100, 198),
        default_names=("Tree", "Water", "Dirt", "Road"),
        envi_units=declared_units("reflectance", 10000.0, note="AVIRIS reflectance: the ENVI header's "
                                                               "reflectance scale factor 10000 applied"),
        mat_units=declared_units("unknown", note="Y is uint16 as distributed (0 to 5437), the absolute ENVI "
                                                 "values: reflectance x 10000, no scale applied"),
    ),
    UnmixingScene(
        name="urban",
        title="Urban (HYDICE)",
        cube=RemoteFile(
            "Urban_R162.mat", alternatives=("Urban_R162.img", "Urban_R162.hdr"),
            note="MATLAB form, or an ENVI pair Urban_R162.img + Urban_R162.hdr",
        ),
        gt=RemoteFile("end6_groundTruth.mat",
                      sha256="46f84517c870e8beb8732b10d30218449bae24853590c23cdfb298a7044e7171", size=2_084_100),
        shape=(307, 307, 162),
        default_names=("Asphalt Road", "Grass", "Tree", "Roof", "Metal", "Dirt"),
        envi_units=declared_units("unknown", note="HYDICE values as distributed, no declared scale: kept as stored"),
        mat_units=declared_units("unknown", note="HYDICE values as distributed (Y of Urban_R162.mat), no declared "
                                                 "scale: kept as stored"),
    ),
)

#: Registered by :mod:`hsi.scenes.registry` on first use.
SPECS: tuple[SceneSpec, ...] = tuple(scene.spec() for scene in SCENES)
