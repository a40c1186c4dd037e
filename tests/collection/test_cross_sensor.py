"""Scenes from different sensors: units and declarations, the scene-shift checks, records, per-scene scaling.

The scenes are the registry's synthetic scene written as HDF5 files: ``base`` as it is
(reflectance 0-1), ``copy`` the same cube again, ``scaled`` the cube times 10000 stored as
int16 (reflectance x 10000 that no file declaration divides), and ``other`` the cube on
another band grid with its band widths.
"""

from __future__ import annotations

import json
import warnings

import h5py
import numpy as np
import pytest
import yaml

from hsi.errors import CollectionError, SceneShiftWarning

#: the synthetic scene all files hold
SCENE = {"height": 32, "width": 32, "bands": 24, "n_classes": 3, "seed": 5}
#: DataModule arguments of a fast collection
FAST = {"patch_size": 3, "block_size": 8, "batch_size": 32}


def _write(path, cube, labels, wavelengths, **attrs):
    from hsi.io.writers.hdf5 import write_h5

    write_h5(path, cube, labels=labels, wavelengths=wavelengths, class_names=["a", "b", "c"])
    with h5py.File(path, "r+") as handle:
        for key, value in attrs.items():
            handle["cube"].attrs[key] = value
    return str(path)


@pytest.fixture(scope="module")
def scenes(tmp_path_factory):
    """``{name: h5 path}`` of the four files (labels inside each, classes named a, b, c)."""
    from hsi.scenes.synthetic import make_synthetic_scene

    folder = tmp_path_factory.mktemp("sensors")
    scene = make_synthetic_scene(**SCENE)
    cube, labels, wl = scene.cube.data, scene.labels.astype(np.uint8), scene.cube.wavelengths
    other_wl = np.linspace(wl[1], wl[-2], 18)
    from hsi.preprocess.response import apply_response, response_matrix

    other = apply_response(cube, response_matrix(wl, other_wl, np.full(18, 120.0)))
    return {
        "base": _write(folder / "base.h5", cube, labels, wl),
        "copy": _write(folder / "copy.h5", cube, labels, wl),
        "scaled": _write(folder / "scaled.h5", np.round(cube * 10000).astype(np.int16), labels, wl),
        "other": _write(folder / "other.h5", other, labels, other_wl, fwhm=np.full(18, 120.0)),
    }


def _entries(scenes, *names, **extra):
    return [{"name": n, "cube": scenes[n], "labels": scenes[n], "labels_key": "labels", **extra.get(n, {})}
            for n in names]


def _dm(entries, split="scene", preprocess="collection", **kw):
    from hsi.data import HSIDataModule

    doc = {"scenes": entries, "split": split, "preprocess": preprocess}
    if split == "scene":
        doc["test_scenes"] = [entries[-1]["name"]]
    return HSIDataModule(scenes=doc, **{**FAST, **kw})


def _shift(dm):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dm.setup("fit")
        records = dm.scene_shift()
    return records, [str(w.message) for w in caught if issubclass(w.category, SceneShiftWarning)]


def test_a_scaled_copy_is_warned_about_and_the_scene_itself_is_not(scenes):
    records, said = _shift(_dm(_entries(scenes, "base", "copy"), normalize="none"))
    assert said == [] and not any(r["raw"]["flagged"] or r["preprocessed"]["shifted"] for r in records.values())
    assert records["copy"]["raw"]["ratio"] == pytest.approx(1.0)
    records, said = _shift(_dm(_entries(scenes, "base", "scaled"), normalize="none"))
    scaled = records["scaled"]
    assert scaled["raw"]["flagged"] and scaled["raw"]["ratio"] == pytest.approx(10000, rel=1e-3)
    assert scaled["preprocessed"]["shifted"] and scaled["preprocessed"]["against"] == ["base"]
    assert any("'scaled'" in m and "'base'" in m and "10000x" in m.replace(",", "") for m in said), said
    assert all("\n" not in m for m in said)


def test_per_scene_scaling_brings_a_scaled_copy_together_but_the_run_still_warns(scenes):
    """``preprocess: scene`` with ``split: scene``: every scene scaled on its own valid pixels, labels unread."""
    dm = _dm(_entries(scenes, "base", "scaled"), preprocess="scene", normalize="none")
    records, said = _shift(dm)
    assert not records["scaled"]["preprocessed"]["shifted"] and records["scaled"]["raw"]["flagged"]
    assert said and all("'scaled'" in m for m in said)  # other units are never silent
    pipelines = dm.state_dict()["collection"]["pipelines"]
    assert len(pipelines) == 2 and pipelines[0] != pipelines[1]
    a, b = (np.asarray(dm._sources().entries[i].load("cube")) for i in (0, 1))
    np.testing.assert_allclose(a, b, atol=1e-2)  # the same scene in other units (int16 steps): the same model input
    assert dm.collection_record()["preprocess_fitted"].startswith("each scene's own, fitted on all its valid")


def test_per_scene_scaling_refuses_a_pca_fitted_per_scene(scenes):
    from hsi.errors import OptionError

    with pytest.raises(OptionError, match="pca: 3: none with preprocess: scene and split: scene"):
        _dm(_entries(scenes, "base", "scaled"), preprocess="scene", pca=3).setup("fit")


def test_declared_scale_and_units_make_the_files_agree(scenes):
    declared = {"scaled": {"scale": 10000, "units": "reflectance"}}
    dm = _dm(_entries(scenes, "base", "scaled", **declared), normalize="none")
    records, said = _shift(dm)
    assert said == [] and records["scaled"]["raw"]["ratio"] == pytest.approx(1.0, rel=1e-3)
    units = dm.collection_record()["units"]["scaled"]
    assert units["kind"] == "reflectance" and units["scale"] == 10000 and units["source"] == "user"


def test_bands_are_resampled_by_response_and_recorded(scenes):
    from hsi.data.sources.bands import bands_line

    dm = _dm(_entries(scenes, "other", "base"))  # the grid is other's: 18 bands with their widths
    dm.setup("fit")
    summary = dm.bands_summary()
    assert summary["grid"]["count"] == 18 and summary["grid"]["fwhm_nm"] == [120.0, 120.0]
    assert summary["grid"]["from"] == "other"
    assert summary["scenes"]["other"]["method"] == "identity"
    assert summary["scenes"]["base"]["method"] == "gaussian"
    assert summary["scenes"]["base"]["dropped"] == 0  # broad responses use every band within reach
    line = bands_line(summary)
    assert "common grid" in line and "18 bands" in line and "base: gaussian" in line and "\n" not in line


def test_mixing_scenes_with_and_without_wavelengths_needs_a_declaration(scenes, tmp_path):
    with h5py.File(scenes["base"], "r") as handle:
        cube, labels = handle["cube"][...], handle["labels"][...]
    bare = tmp_path / "bare.h5"
    from hsi.io.writers.hdf5 import write_h5

    write_h5(bare, cube, labels=labels)
    entries = _entries(scenes, "base") + [{"name": "bare", "cube": str(bare), "labels": str(bare),
                                           "labels_key": "labels"}]
    with pytest.raises(CollectionError, match=r"scenes bare \(24 bands\): no wavelengths, beside scenes with them "
                                              r"\(base\)"):
        _dm(entries).setup("fit")
    from hsi.io import read_cube

    wl = [float(v) for v in read_cube(scenes["base"], key="cube").wavelengths]
    entries[1]["wavelengths"] = wl
    dm = _dm(entries)
    dm.setup("fit")
    assert dm.bands_summary()["scenes"]["bare"]["method"] == "identity"
    entries[1]["wavelengths"] = wl[:5]
    with pytest.raises(CollectionError, match="scene 'bare': wavelengths: 5 values declared for a cube of 24 bands"):
        _dm(entries).setup("fit")


def test_class_names_come_from_the_file(scenes):
    from hsi.data import HSIDataModule

    dm = HSIDataModule(cube_path=scenes["base"], labels_path=scenes["base"], labels_key="labels", **FAST)
    dm.setup("fit")
    assert dm.class_names == ["a", "b", "c"]


def test_a_run_on_two_sensors_records_what_ran(scenes, tmp_path):
    import hsi.cli as cli

    collection = tmp_path / "pair.yaml"
    collection.write_text(yaml.safe_dump({"scenes": _entries(scenes, "base", "scaled"), "split": "scene",
                                          "test_scenes": ["scaled"]}))
    out = tmp_path / "run"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = cli.main(["train", "--scenes", str(collection), "--model", "svm", "--patch-size", "3",
                           "--block-size", "8", "--out", str(out), "--no-progress"])
    assert status == 0
    assert any(issubclass(w.category, SceneShiftWarning) for w in caught)
    metrics = json.loads((out / "metrics.json").read_text())
    record = metrics["collection"]
    assert [e["name"] for e in record["entries"]] == ["base", "scaled"]
    assert record["split"] == "scene" and record["test_scenes"] == ["scaled"]
    assert record["normalize"] == "none" and record["scaling"] == "standardize"  # scaling auto, for several scenes
    assert record["preprocess"] == "scene" and "unsupervised" in record["preprocess_fitted"]  # split: scene's default
    assert record["units"]["scaled"]["kind"] == "unknown" and record["units"]["base"]["kind"] == "reflectance"
    assert metrics["bands"]["grid"]["count"] == 24
    assert metrics["scene_shift"]["scaled"]["raw"]["flagged"]
    data = metrics["config"]["data"]  # no unused single-scene defaults
    assert "scene" not in data and "split" not in data and "cube_path" not in data
    assert data["scaling"] == "standardize" and data["normalize"] == "none"  # what ran: auto resolved


def test_the_doctor_fails_a_collection_whose_units_differ(scenes, tmp_path, capsys):
    import hsi.cli as cli

    collection = tmp_path / "pair.yaml"
    collection.write_text(yaml.safe_dump({"scenes": _entries(scenes, "base", "scaled"), "split": "block"}))
    status = cli.main(["doctor", "--scenes", str(collection), "--patch-size", "3", "--block-size", "8",
                       "--checks", "batches", "--out", str(tmp_path / "doctor")])
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL scenes" in out and "scaled: units unknown" in out and "FAILED: " in out and "scenes" in out


def test_a_single_cube_takes_units_and_scale_from_the_user(scenes):
    from hsi.data import HSIDataModule
    from hsi.errors import OptionError

    plain = HSIDataModule(cube_path=scenes["base"], labels_path=scenes["base"], labels_key="labels", cube_key="cube",
                          scaling=None, **FAST)
    declared = HSIDataModule(cube_path=scenes["scaled"], labels_path=scenes["scaled"], labels_key="labels",
                             cube_key="cube", scaling=None, units="reflectance", scale=10000, **FAST)
    for dm in (plain, declared):
        dm.setup("fit")
    np.testing.assert_allclose(declared._ensure_entry().load("cube"), plain._ensure_entry().load("cube"), atol=6e-5)
    units = declared._ensure_entry().state["scene"]["units"]
    assert units["kind"] == "reflectance" and units["scale"] == 10000 and units["source"] == "user"
    with pytest.raises(OptionError, match="^units: 'radiance': none here: it declares what a cube file"):
        HSIDataModule(scene="synthetic", units="radiance")


def test_a_pack_keeps_units_and_band_widths(scenes, tmp_path):
    from hsi.collection import pack_collection
    from hsi.data.sources.packfile import read_pack_scene

    entries = _entries(scenes, "other", "scaled", scaled={"scale": 10000, "units": "reflectance"})
    pack = pack_collection({"scenes": entries}, tmp_path / "pack.h5")
    other, scaled = (read_pack_scene(pack, n) for n in ("other", "scaled"))
    assert np.array_equal(other.fwhm, np.full(18, 120.0)) and scaled.fwhm is None
    assert scaled.units["kind"] == "reflectance" and scaled.units["scale"] == 10000
    assert float(np.max(scaled.cube)) <= 1.0  # stored as read: divided once, never again


def test_a_new_scene_is_scaled_on_its_own_pixels_as_training_scaled_the_held_out_one(scenes, tmp_path):
    """``preprocess: scene`` with ``split: scene``: inference fits a new cube's scaling on its own pixels, as training
    did for the held-out scene, so mapping that scene alone gives the training run's scores."""
    import hsi.cli as cli
    from hsi.infer import infer_scene
    from hsi.io import read_cube, read_labels

    collection = tmp_path / "pair.yaml"
    collection.write_text(yaml.safe_dump({"scenes": _entries(scenes, "base", "scaled"), "split": "scene",
                                          "test_scenes": ["scaled"]}))
    out = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli.main(["train", "--scenes", str(collection), "--model", "svm", "--patch-size", "3",
                         "--block-size", "8", "--out", str(out), "--no-progress"]) == 0
        cube = read_cube(scenes["scaled"], key="cube")
        result = infer_scene(out / "model.npz", cube, labels=read_labels(scenes["scaled"], key="labels"),
                             out=tmp_path / "map", format=("npy",), progress=False)
    metrics = json.loads((out / "metrics.json").read_text())
    manifest = json.loads((tmp_path / "map" / "inference.json").read_text())
    assert manifest["preprocessing"]["pixels"] == 32 * 32
    assert result.metrics["labeled"]["oa"] == pytest.approx(metrics["scenes"]["scaled"]["oa"], abs=2e-3)
