"""``benchmarks/bench_cross_sensor.py``: the sensors it renders, the runs it plans, and how it sums them up.

No training here: the scenes are rendered small, the plan and the summary are checked on
made-up results. The rendered files are read back through :func:`hsi.io.read_cube`, as
``hsi train`` reads them.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
#: band count and first / last centre (nm) each sensor is planned with
PLANNED = {"A": (199, 420.0, 2400.0), "B": (77, 450.0, 2350.0), "C": (137, 405.0, 2445.0)}


@pytest.fixture(scope="module")
def scenes_module():
    """The rendering helper as a module (it sits beside the benchmark, as when it runs)."""
    import sys

    sys.path.insert(0, str(BENCHMARKS))
    try:
        import _cross_sensor_scenes
    finally:
        sys.path.remove(str(BENCHMARKS))
    return _cross_sensor_scenes


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_cross_sensor

    return bench_cross_sensor


@pytest.fixture(scope="module")
def rendered(scenes_module, tmp_path_factory):
    """The three sensors' files of a small landscape."""
    return scenes_module.render_sensors(tmp_path_factory.mktemp("sensors"), seed=0, size=(24, 40))


def test_the_plan_has_three_sensors_of_different_bands_and_units(scenes_module):
    sensors = scenes_module.SENSORS
    assert list(sensors) == ["A", "B", "C"]
    assert len({s.fwhm for s in sensors.values()}) == 3 and len({s.first for s in sensors.values()}) == 3
    assert {s.storage for s in sensors.values()} == {"reflectance", "reflectance_x10000", "radiance"}
    for name, (count, first, last) in PLANNED.items():
        wl = sensors[name].wavelengths
        assert (wl.size, wl[0], wl[-1]) == (count, first, last)


def test_rendered_files_read_back_with_their_bands_and_units(rendered):
    from hsi.io import read_cube

    assert set(rendered) == set(PLANNED)
    cubes = {}
    for name, path in rendered.items():
        cube = read_cube(path, key="cube")
        count, first, last = PLANNED[name]
        assert cube.data.shape == (24, 24, count)
        np.testing.assert_allclose(cube.wavelengths[[0, -1]], [first, last])
        cubes[name] = cube
        with h5py.File(path, "r") as handle:
            labels = handle["labels"][...]
            assert labels.shape == (24, 24) and labels.max() >= 1
    with h5py.File(rendered["B"], "r") as handle:
        stored = handle["cube"]
        assert stored.dtype == np.int16 and "units" not in stored.attrs  # B declares no units, no scale
        values = stored[...]
        assert 0 <= np.percentile(values, 1) and values.max() <= 10000 and np.median(values) > 100
        np.testing.assert_allclose(stored.attrs["fwhm"], 30.0)
    with h5py.File(rendered["A"], "r") as handle:
        values = handle["cube"][...]
        assert values.dtype == np.float32 and -0.05 <= values.min() and values.max() <= 1.0
        assert handle["cube"].attrs["units"] == "reflectance"
    with h5py.File(rendered["C"], "r") as handle:
        assert handle["cube"].attrs["units"] == "radiance" and handle["cube"].dtype == np.float32
        assert np.median(handle["cube"][...]) > 2.0  # gain 30-150 times reflectance: not 0-1


def test_sensors_see_different_overlapping_crops(scenes_module):
    cols = scenes_module.crops(160)
    assert [(c.start, c.stop) for c in cols] == [(0, 96), (32, 128), (64, 160)]


@pytest.mark.parametrize("name", ["A", "B", "C"])
def test_a_flat_spectrum_renders_to_its_units(scenes_module, name):
    sensor = scenes_module.SENSORS[name]
    r = 0.25
    flat = np.full((2, 3, scenes_module.FINE_BANDS), r, dtype=np.float32)
    values = scenes_module.sensor_values(sensor, flat)  # rng None: no noise
    wl = sensor.wavelengths
    expected = {"A": np.full(wl.shape, r), "B": np.full(wl.shape, 10000 * r),
                "C": scenes_module.gain(wl) * r + scenes_module.offset(wl)}[name]
    assert values.shape == (2, 3, wl.size)
    assert values.dtype == (np.int16 if name == "B" else np.float32)
    np.testing.assert_allclose(values.astype(np.float64), np.broadcast_to(expected, values.shape), rtol=1e-5)


def test_radiance_gain_and_offset_are_solar_and_path_like(scenes_module):
    wl = np.linspace(400, 2500, 50)
    g, o = scenes_module.gain(wl), scenes_module.offset(wl)
    assert 29.9 <= g.min() and g.max() <= 150.1 and np.argmax(g) < 10  # peaks in the visible
    assert np.all(o > 0) and np.all(o / g < 0.05) and o[0] / g[0] > o[-1] / g[-1]


def test_noise_is_seeded_and_relative(scenes_module):
    sensor = scenes_module.SENSORS["A"]
    flat = np.full((40, 40, scenes_module.FINE_BANDS), 0.5, dtype=np.float32)
    a = scenes_module.sensor_values(sensor, flat, rng=np.random.default_rng(1))
    b = scenes_module.sensor_values(sensor, flat, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    assert abs(float(a.std()) / 0.5 - sensor.noise) < 0.2 * sensor.noise


def test_quick_plan_has_every_ordered_pair(bench):
    args = bench.parser().parse_args(["--quick"])
    specs = bench.plan(args)
    pairs = {("A", "B"), ("A", "C"), ("B", "A"), ("B", "C"), ("C", "A"), ("C", "B")}
    assert {(s["train"], s["test"]) for s in specs} == pairs
    for model in bench.QUICK_MODELS:
        for variant in bench.QUICK_VARIANTS:
            assert {(s["train"], s["test"]) for s in specs if (s["model"], s["variant"]) == (model, variant)} == pairs
    assert bench.DEFAULT_VARIANT in bench.QUICK_VARIANTS and "default" in bench.QUICK_MODELS
    assert all(s["epochs"] == bench.QUICK_EPOCHS for s in specs)
    scene = bench.in_scene_specs(specs)  # every sensor once per model and normalisation (None: hsi train's default)
    normalizations = {bench.variant_options(v)[0] for v in bench.QUICK_VARIANTS}
    assert {(s["sensor"], s["model"], s["normalize"]) for s in scene} == {
        (sensor, model, n) for sensor in "ABC" for model in bench.QUICK_MODELS for n in normalizations}
    assert len(scene) == 3 * len(bench.QUICK_MODELS) * len(normalizations)


def test_default_plan_gives_the_default_model_every_variant(bench):
    specs = bench.plan(bench.parser().parse_args([]))
    variants = {s["variant"] for s in specs if s["model"] == "default"}
    assert variants == set(bench.VARIANTS) and len(variants) == 14  # default, 10 NORMALIZE/PREPROCESS, 3 infer
    assert {s["model"] for s in specs} == {"default", "cnn2d", "svm", "anyband"}
    assert {s["variant"] for s in specs if s["model"] == "anyband"} == {"infer"}
    one = bench.plan(bench.parser().parse_args(["--models", "svm", "--variants", "default", "l2/scene",
                                                "--pairs", "A:C"]))
    assert [(s["model"], s["variant"], s["train"], s["test"]) for s in one] == [
        ("svm", "default", "A", "C"), ("svm", "l2/scene", "A", "C")]


def test_the_command_lines_are_hsi_trains(bench, tmp_path):
    args = bench.parser().parse_args(["--", "--scaling", "minmax"])
    default = {"train": "A", "test": "B", "model": "default", "variant": "default", "normalize": None,
               "preprocess": None, "epochs": 6}
    argv = bench.held_out_argv(default, tmp_path / "A-B.yaml", args)
    assert argv[:3] == ["train", "--scenes", str(tmp_path / "A-B.yaml")]
    assert "--model" not in argv and "--normalize" not in argv  # the default variant: hsi train as it is
    assert argv[-2:] == ["--scaling", "minmax"] and argv[argv.index("--epochs") + 1] == "6"
    scene = bench.in_scene_argv({"sensor": "A", "model": "svm", "normalize": "l2", "epochs": 6}, tmp_path / "A.h5",
                                args)
    assert scene[scene.index("--model") + 1] == "svm" and scene[scene.index("--normalize") + 1] == "l2"
    assert scene[scene.index("--labels-key") + 1] == "labels"


@pytest.mark.parametrize("preprocess", [None, "collection", "scene"])
def test_collection_files_hold_out_the_test_scene(bench, tmp_path, preprocess):
    import yaml

    from hsi.data.sources.entries import read_collection

    for name in ("A", "B"):
        (tmp_path / f"{name}.h5").write_bytes(b"")
    path = bench.write_collection(tmp_path, "A", "B", preprocess, {n: tmp_path / f"{n}.h5" for n in ("A", "B")})
    assert ("preprocess" in yaml.safe_load(path.read_text())) == (preprocess is not None)
    col = read_collection(path)
    assert (col.split, tuple(col.test_scenes), tuple(col.names)) == ("scene", ("B",), ("A", "B"))
    if preprocess is not None:
        assert col.preprocess == preprocess


def _row(bench, train, test, held, model="default", variant="default"):
    normalize, preprocess = bench.variant_options(variant)
    return {"train": train, "test": test, "model": model, "variant": variant, "normalize": normalize,
            "preprocess": preprocess, "epochs": 6, "held_out_oa": held, "error": None}


def test_summary_takes_the_smallest_ratio_and_the_target(bench):
    scene = [{"sensor": s, "model": "default", "normalize": n, "epochs": 6, "oa": oa}
             for n in (None, "none") for s, oa in (("A", 0.96), ("B", 0.90), ("C", 0.80))]
    held = [_row(bench, "A", "B", 0.90), _row(bench, "B", "A", 0.84), _row(bench, "C", "A", 0.80),
            _row(bench, "A", "B", 0.95, variant="none/scene"), _row(bench, "B", "A", 0.81, variant="none/scene"),
            _row(bench, "C", "A", 0.40, variant="none/scene")]
    rows = bench.rows_of(held, scene)
    assert rows[0]["in_scene_oa"] == 0.96 and rows[0]["in_scene_test_oa"] == 0.90
    assert rows[0]["ratio"] == pytest.approx(0.90 / 0.96)
    summary = {s["variant"]: s for s in bench.summarize(rows)}
    default = summary["default"]
    assert default["min_ratio"] == pytest.approx(0.84 / 0.90) and default["worst_pair"] == "B->A"
    assert default["all_pass"] is True  # 0.9375, 0.933, 1.0: every ratio >= 0.90
    other = summary["none/scene"]
    assert other["min_ratio"] == pytest.approx(0.5) and other["worst_pair"] == "C->A" and other["all_pass"] is False
    assert bench.best_variant(bench.summarize(rows))["variant"] == "default"


def test_each_variant_is_divided_by_the_in_scene_run_of_its_normalisation(bench):
    scene = [{"sensor": s, "model": "default", "normalize": n, "epochs": 6, "oa": oa}
             for s in "AB" for n, oa in ((None, 0.8), ("l2", 0.5))]
    rows = bench.rows_of([_row(bench, "A", "B", 0.4, variant="l2/scene"), _row(bench, "A", "B", 0.4)], scene)
    assert [r["ratio"] for r in rows] == [pytest.approx(0.8), pytest.approx(0.5)]


def test_summary_fails_a_variant_with_a_failed_run(bench):
    scene = [{"sensor": s, "model": "default", "normalize": None, "epochs": 6, "oa": 0.9} for s in "ABC"]
    held = [_row(bench, "A", "B", 0.9), {**_row(bench, "B", "A", None), "error": "error: boom"}]
    (s,) = bench.summarize(bench.rows_of(held, scene))
    assert s["min_ratio"] == pytest.approx(1.0) and s["all_pass"] is False and s["missing"] == ["B->A"]


def test_ratio_exactly_at_the_target_passes(bench):
    scene = [{"sensor": s, "model": "default", "normalize": None, "epochs": 6, "oa": 1.0} for s in "AB"]
    (s,) = bench.summarize(bench.rows_of([_row(bench, "A", "B", 0.9)], scene))
    assert s["min_ratio"] == pytest.approx(0.9) and s["all_pass"] is True


def test_bad_pairs_and_variants_are_refused(bench, capsys):
    for argv in (["--pairs", "A:A"], ["--pairs", "A:D"], ["--variants", "l3/scene"], ["--variants", "auto/scene"]):
        with pytest.raises(SystemExit):
            bench.parser().parse_args(argv)
    assert "expected" in capsys.readouterr().err


def test_the_infer_variant_cuts_a_wider_test_cube_to_the_training_sensors_range(bench, rendered):
    from hsi.io import read_cube

    cut = bench.within(rendered["C"], "A", "C")  # C: 405-2445 nm, A: 420-2400 nm
    assert cut.name == "C-within-A.h5"
    cube, whole = read_cube(cut, key="cube"), read_cube(rendered["C"], key="cube")
    keep = (whole.wavelengths >= 415.0) & (whole.wavelengths <= 2405.0)
    np.testing.assert_array_equal(cube.wavelengths, whole.wavelengths[keep])
    np.testing.assert_array_equal(cube.data, whole.data[..., keep])
    assert cube.meta["units"] == whole.meta["units"]
    with h5py.File(cut, "r") as a, h5py.File(rendered["C"], "r") as b:
        np.testing.assert_array_equal(a["labels"][...], b["labels"][...])
        np.testing.assert_array_equal(a["cube"].attrs["fwhm"], b["cube"].attrs["fwhm"][keep])
    assert bench.within(rendered["A"], "C", "A") == rendered["A"]  # inside C's range: used as it is
    argv = bench.infer_argv(Path("run/best.ckpt"), cut)
    assert argv[:3] == ["infer", "--checkpoint", "run/best.ckpt"] and argv[argv.index("--labels") + 1] == str(cut)


def test_the_controls_are_the_test_sensors_parcels_seen_by_the_training_sensor(scenes_module, tmp_path):
    from hsi.io import read_cube, read_labels

    paths = scenes_module.render_sensors(tmp_path, seed=0, size=(24, 40), controls=True)
    assert sorted(k for k in paths if "-on-" in k) == ["A-on-B", "A-on-C", "B-on-A", "B-on-C", "C-on-A", "C-on-B"]
    control, own, test = (read_cube(paths[k], key="cube") for k in ("A-on-B", "A", "B"))
    np.testing.assert_allclose(control.wavelengths, own.wavelengths)  # the training sensor's bands
    np.testing.assert_array_equal(read_labels(paths["A-on-B"], key="labels"), read_labels(paths["B"], key="labels"))
    assert control.data.shape[:2] == test.data.shape[:2] and control.meta["units"] == own.meta["units"]


def test_a_fixed_band_model_is_trained_on_the_range_both_sensors_cover(bench):
    assert bench.common_range("A", "B") == (450.0, 2350.0)  # B does not reach A's ends
    assert bench.common_range("B", "A") is None and bench.common_range("A", "C") is None
    assert bench.common_range("C", "A") == (420.0, 2400.0)


def test_summary_gives_the_largest_drop_from_the_control(bench):
    rows = [{**_row(bench, "A", "B", 0.90, variant="infer"), "control_oa": 0.97, "control_drop": 0.07, "ratio": 0.9},
            {**_row(bench, "B", "A", 0.95, variant="infer"), "control_oa": 0.96, "control_drop": 0.01, "ratio": 0.99}]
    summary = bench.summarize(rows)[0]
    assert summary["max_control_drop"] == pytest.approx(0.07) and summary["within_control"] is False
    rows[0]["control_drop"] = 0.04
    assert bench.summarize(rows)[0]["within_control"] is True
    rows.append({**_row(bench, "C", "A", None, variant="infer"), "error": "exit 2 (error: ...)", "ratio": None})
    summary = bench.summarize(rows)[0]
    assert summary["within_control"] is True and summary["refused"] == 1  # refused in one line: no map to be wrong
