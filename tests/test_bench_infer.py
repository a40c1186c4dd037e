"""``benchmarks/bench_infer.py``: the rows it plans, how it pairs and sums them up, and its baselines' own maps.

Every ratio the README prints divides a pipeline row by its reference row, so the pairing is
checked here, and the classic loop and MONAI rows must classify the same pixels the same way
as the pipeline they are compared with (else a ratio would compare different work).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
PATCH_MODELS = ("cnn2d", "spectral1d", "cnn3d", "hybridsn")


@pytest.fixture
def bench(monkeypatch):
    """The benchmark script as a module (its helper modules sit beside it, as when it runs)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_infer

    return bench_infer


def _kinds(specs: list[dict]) -> set[tuple[str, str, str]]:
    return {(s["row"], s["model"], s["source"]) for s in specs}


def test_quick_plan_has_every_row_of_the_contract(bench):
    specs = bench.plan_rows(bench.parser().parse_args(["--quick"]))
    expected = {(row, "free", source) for row in ("raw_read", "pipeline") for source in ("npy", "h5")}
    expected |= {("pipeline", "fcn", "npy"), ("pipeline", "fcn", "h5"), ("forward_only", "fcn", "npy"),
                 ("monai", "fcn", "npy")}
    expected |= {(row, name, "npy") for name in PATCH_MODELS for row in ("pipeline", "forward_only", "classic_loop")}
    assert _kinds(specs) == expected
    free_sizes = {tuple(s["size"]) for s in specs if s["model"] == "free"}
    assert free_sizes == {(1024, 1024, 200), (2048, 2048, 200)}  # the growth from 1024^2 to 2048^2 is a target
    assert all(s["overlap"] == 0 for s in specs)


@pytest.mark.parametrize("argv", [["--quick"], ["--overlap", "32"]])
def test_every_pipeline_row_is_paired_with_its_reference(bench, argv):
    specs = bench.plan_rows(bench.parser().parse_args(argv))
    expected = {"free": "raw_read", "fcn": "monai", **{name: "classic_loop" for name in PATCH_MODELS}}
    pipelines = [s for s in specs if s["row"] == "pipeline"]
    assert pipelines
    for spec in pipelines:
        ref = bench._reference(spec, specs)
        assert ref is not None, spec
        assert (ref["row"], ref["model"], ref["size"], ref["overlap"]) == (
            expected[spec["model"]], spec["model"], spec["size"], spec["overlap"])
        if spec["model"] == "free":  # the raw read of the same file
            assert ref["source"] == spec["source"]
    assert all(bench._reference(s, specs) is None for s in specs if s["row"] != "pipeline")


def test_overlap_rows_only_without_quick(bench):
    full = bench.plan_rows(bench.parser().parse_args(["--overlap", "32"]))
    overlapped = {(s["row"], s["model"]) for s in full if s["overlap"] == 32}
    assert overlapped == {("pipeline", "fcn"), ("monai", "fcn")}
    assert {tuple(s["size"]) for s in full if s["model"] == "fcn"} == {(1024, 1024, 200), (2048, 2048, 200)}


def test_only_selects_rows_by_pattern(bench):
    specs = bench.plan_rows(bench.parser().parse_args(["--quick"]))
    chosen = [s for s in specs if bench._selected(s, ["pipeline:fcn", "*:spectral1d", "raw_read"])]
    assert _kinds(chosen) == {("pipeline", "fcn", "npy"), ("pipeline", "fcn", "h5"), ("raw_read", "free", "npy"),
                              ("raw_read", "free", "h5"),
                              *{(row, "spectral1d", "npy") for row in ("pipeline", "forward_only", "classic_loop")}}


def test_summary_is_the_median_speed_and_the_largest_peak(bench):
    runs = [{"row": "pipeline", "pixels_per_s": v, "peak_rss_mb": m} for v, m in ((3.0, 400.0), (1.0, 420.0),
                                                                                   (2.0, 410.0))]
    row = bench.summarize(runs)
    assert (row["pixels_per_s"], row["peak_rss_mb"], row["runs_pixels_per_s"]) == (2.0, 420.0, [3.0, 1.0, 2.0])
    failed = bench.summarize([runs[0], {"row": "pipeline", "error": "boom"}])
    assert failed["error"] == "boom" and "pixels_per_s" not in failed


def test_table_prints_each_ratio_against_its_reference(bench, capsys):
    rows = [{"row": "raw_read", "model": "free", "source": "npy", "size": [8, 8, 4], "overlap": 0,
             "pixels_per_s": 400.0, "peak_rss_mb": 100.0},
            {"row": "pipeline", "model": "free", "source": "npy", "size": [8, 8, 4], "overlap": 0,
             "pixels_per_s": 100.0, "peak_rss_mb": 50.0}]
    bench.print_table(rows)
    pipeline_line = capsys.readouterr().out.splitlines()[-1]
    assert pipeline_line.endswith("| raw_read | 0.25x | 0.50x |")


def test_cubes_hold_the_same_values_in_both_files(bench, tmp_path):
    import h5py
    from _infer_inputs import build_cube

    paths = build_cube(tmp_path, 40, 44, 20)
    with h5py.File(paths["h5"], "r") as f:
        np.testing.assert_array_equal(f["cube"][...], np.load(paths["npy"]))
    assert np.load(paths["npy"]).std() > 0


@pytest.fixture
def small_cube(tmp_path) -> dict[str, Path]:
    """A 40 x 44 x 20 cube as ``.npy`` and HDF5 (key ``cube``): 16 blocks of distinct spectra, plus noise.

    Its pixels differ more than the benchmark's (one spectrum plus 10 % noise), so that an
    untrained network (:func:`_untrained`) gives them more than one class.
    """
    import h5py

    rng = np.random.default_rng(3)
    spectra = 4 * rng.random((16, 20), dtype=np.float32)
    block = (np.arange(40) * 4 // 40)[:, None] * 4 + (np.arange(44) * 4 // 44)[None, :]
    cube = spectra[block] + 0.2 * rng.random((40, 44, 20), dtype=np.float32)
    paths = {"npy": tmp_path / "cube.npy", "h5": tmp_path / "cube.h5"}
    np.save(paths["npy"], cube)
    with h5py.File(paths["h5"], "w") as f:
        f["cube"] = cube
    return paths


def _untrained(name: str, cube: Path):
    """The benchmark's model ``name``, its last layer's bias zeroed: untrained, the bias alone picks one class."""
    import torch
    from _infer_inputs import make_model

    model = make_model(name, cube, 20)
    layers = [m for m in model.net.modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d, torch.nn.Conv3d))]
    with torch.no_grad():
        layers[-1].bias.zero_()
    return model


@pytest.mark.parametrize("name", ["cnn2d", "spectral1d", "cnn3d", "hybridsn"])
def test_classic_loop_classifies_every_pixel_as_the_pipeline_does(bench, small_cube, name):
    from _infer_rows import classic_loop_labels

    from hsi.infer import infer_scene

    model = _untrained(name, small_cube["npy"])
    img = model.pipeline.transform(np.load(small_cube["npy"]))
    classic = classic_loop_labels(model.net, model.patch_size, img, "cpu")
    pipeline = infer_scene(model, small_cube["npy"], tile=bench.TILE, progress=False).labels
    assert classic.shape == (40, 44) and len(np.unique(classic)) > 1  # a map, not one class everywhere
    np.testing.assert_array_equal(classic, pipeline)


def test_monai_classifies_as_the_pipeline_away_from_its_padding(bench, small_cube):
    pytest.importorskip("monai")
    from _infer_rows import monai_labels

    from hsi.infer import infer_scene

    model = _untrained("fcn", small_cube["h5"])
    img = model.pipeline.transform(np.load(small_cube["npy"]))
    labels, confidence = monai_labels(model.net, img, "cpu", overlap=0)
    result = infer_scene(model, small_cube["h5"], cube_key="cube", layout="HWC", tile=bench.TILE, progress=False)
    r = model.halo  # MONAI pads the scene with zeros up to its window, hsi reflects: the edges differ
    assert 0 < r and 2 * r < 40
    inner = np.s_[r:-r, r:-r]
    assert labels.shape == (40, 44) and len(np.unique(labels[inner])) > 1
    np.testing.assert_array_equal(labels[inner], result.labels[inner])
    np.testing.assert_allclose(confidence[inner], result.confidence[inner], rtol=1e-4)
