"""Every registry scene declares its units, and a loaded scene's cube carries them (source "registry")."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
import scipy.io

from hsi.errors import DataQualityWarning
from hsi.io.units import UNIT_KINDS, check_units, infer_units
from hsi.scenes import get_scene_spec, list_scenes, load_scene
from hsi.scenes.benchmark import SCENES as BENCHMARKS
from hsi.scenes.benchmark import BenchmarkScene
from hsi.scenes.files import RemoteFile
from hsi.scenes.scene import with_declared_units
from hsi.scenes.synthetic import UNITS as SYNTHETIC_UNITS
from hsi.scenes.unmixing import SCENES as UNMIXING

#: forms of a cube file each family declares units for
FORMS = {"benchmark": {"mat"}, "unmixing": {"envi", "mat"}, "synthetic": {"generated"}}


@pytest.mark.parametrize("name", list_scenes())
def test_every_registry_scene_declares_its_units(name):
    spec = get_scene_spec(name)
    assert set(spec.units) == FORMS[spec.family], name
    for form, units in spec.units.items():
        assert check_units(units, f"{name} {form}") == units  # exactly the four keys, valid values
        assert units["source"] == "registry" and units["kind"] in UNIT_KINDS and units["note"]
        # a declaration never adds a divisor: only Jasper Ridge's ENVI header has one, and it is applied
        assert units["scale"] == (10000.0 if (name, form) == ("jasper_ridge", "envi") else None), (name, form)


def test_declarations_say_what_is_publicly_known():
    kinds = {s.name: s.units["kind"] for s in BENCHMARKS}
    assert kinds == {"indian_pines": "unknown", "salinas": "radiance", "salinas_a": "radiance",
                     "pavia_university": "unknown", "pavia_centre": "unknown", "ksc": "unknown",
                     "botswana": "unknown"}
    by_name = {s.name: s for s in UNMIXING}
    assert by_name["jasper_ridge"].envi_units["kind"] == "reflectance"
    assert all(s.mat_units["kind"] == "unknown" for s in UNMIXING)  # Samson's V is 0-1 but not reflectance
    assert "1402" in by_name["samson"].mat_units["note"]
    assert SYNTHETIC_UNITS["kind"] == "reflectance"


def test_synthetic_scene_loaded_for_real_carries_its_declaration():
    scene = load_scene("synthetic", height=24, width=24, bands=12, n_classes=3, seed=2)
    units = scene.cube.meta["units"]
    assert units == SYNTHETIC_UNITS and units is not SYNTHETIC_UNITS
    assert scene.cube.meta["fwhm"] is None and scene.cube.fwhm is None
    data = scene.cube.data
    # the declaration agrees with what the undeclared rule makes of the values
    assert infer_units(data.dtype, float(data.min()), float(data.max()))["kind"] == "reflectance"


def test_benchmark_scene_cube_gets_the_registry_declaration(tmp_path):
    declared = BENCHMARKS[1].units  # Salinas: radiance
    scene_spec = BenchmarkScene(
        name="tiny_bench", title="tiny", cube=RemoteFile("c.mat"), gt=RemoteFile("g.mat"), cube_keys=("c",),
        gt_keys=("g",), shape=(5, 4, 3), class_names=("a", "b"), units=declared)
    data = np.arange(60, dtype=np.int16).reshape(5, 4, 3) + 1000
    scipy.io.savemat(tmp_path / "c.mat", {"c": data})
    scipy.io.savemat(tmp_path / "g.mat", {"g": (np.arange(20).reshape(5, 4) % 3).astype(np.uint8)})
    scene = scene_spec.load(tmp_path)
    np.testing.assert_array_equal(scene.cube.data, data.astype(np.float32))  # nothing divided
    assert scene.cube.meta["units"] == declared


def test_a_file_read_with_another_scale_keeps_its_own_units():
    from hsi.io import Cube

    found = {"kind": "reflectance", "scale": 1000.0, "source": "header",
             "note": "reflectance scale factor 1000 applied"}
    cube = Cube(np.zeros((2, 2, 2), np.float32), meta={"source": "x.hdr", "units": dict(found)})
    declared = next(s for s in UNMIXING if s.name == "jasper_ridge").envi_units  # expects 10000
    with pytest.warns(DataQualityWarning, match="registry declares scale 10000"):
        assert with_declared_units(cube, declared, "jasper_ridge").meta["units"] == found
    assert with_declared_units(cube, None, "x").meta["units"] == found


def test_samson_envi_and_matlab_forms_declare_unknown(shared_data, tmp_path):
    samson = shared_data / "envi" / "samson"
    envi = load_scene("samson", root=samson)
    assert envi.cube.meta["units"]["source"] == "registry" and envi.cube.meta["units"]["kind"] == "unknown"
    assert float(envi.cube.data.max()) == 1402.0  # kept as stored
    for name in ("samson_1.mat", "end3.mat"):
        shutil.copyfile(samson / name, tmp_path / name)
    mat = load_scene("samson", root=tmp_path).cube
    assert mat.meta["units"] == get_scene_spec("samson").units["mat"]
    assert float(mat.data.max()) == pytest.approx(1.0)  # 0-1, which the rule alone would call reflectance


def test_jasper_envi_form_is_reflectance_with_its_header_scale(shared_data, tmp_path):
    src = shared_data / "envi" / "jasper_ridge"
    for name in ("jasperRidge2_R198.img", "jasperRidge2_R198.hdr"):
        shutil.copyfile(src / name, tmp_path / name)
    scipy.io.savemat(tmp_path / "end4.mat", {"A": np.full((4, 10000), 0.25)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataQualityWarning)  # the declaration matches the file: no warning
        scene = load_scene("jasper_ridge", root=tmp_path)
    assert scene.cube.meta["units"] == get_scene_spec("jasper_ridge").units["envi"]
    assert scene.cube.fwhm is not None and scene.cube.fwhm.shape == (198,)
