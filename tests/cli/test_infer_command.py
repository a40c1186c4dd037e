"""``hsi infer`` / ``scripts/infer_full.py`` end to end on the checkpoint of a one-epoch run."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.io

from hsi.io import read_labels
from hsi.io.writers.envi import read_class_info

from tests.helpers import CHILD_TIMEOUT

REPO_SCRIPTS = __import__("pathlib").Path(__file__).resolve().parents[2] / "scripts"


def test_infer_writes_every_output(trained, hsi_main, tmp_path):
    out = tmp_path / "map"
    status, printed, err = hsi_main(["infer", "--checkpoint", str(trained / "best.ckpt"), "--scene", "synthetic",
                                     "--out", str(out), "--no-progress", "--probabilities"], tmp_path)
    assert status == 0, err
    for name in ("labels.npy", "map.png", "false_color.png", "confidence.png", "classification.hdr",
                 "classification.img", "metrics.json", "probabilities.npy"):
        assert (out / name).is_file(), name
    for name in ("map.png", "false_color.png", "confidence.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    labels = np.load(out / "labels.npy")
    assert labels.shape == (24, 24) and labels.min() >= 1 and labels.max() <= 3
    metrics = json.loads((out / "metrics.json").read_text())
    trained_metrics = json.loads((trained / "metrics.json").read_text())
    assert {"labeled", "test"} <= set(metrics)
    # the map agrees with the run's own test predictions on the test pixels
    pred = np.load(trained / "predictions.npz")
    np.testing.assert_array_equal(labels[pred["rows"], pred["cols"]], pred["y_pred"])
    assert metrics["test"]["oa"] == trained_metrics["oa"]
    names, _ = read_class_info(out / "classification.hdr")
    assert names[1:] == trained_metrics["class_names"]
    np.testing.assert_array_equal(read_labels(out / "classification.hdr"), labels)
    probs = np.load(out / "probabilities.npy")
    assert probs.shape == (24, 24, 3) and probs.dtype == np.float16


def test_band_mismatch_is_refused_before_compute(trained, hsi_main, tmp_path):
    cube = tmp_path / "cube.mat"
    scipy.io.savemat(cube, {"cube": np.random.default_rng(0).random((24, 24, 9), dtype=np.float32)})
    status, _, err = hsi_main(["infer", "--checkpoint", str(trained / "best.ckpt"), "--cube", str(cube),
                               "--layout", "HWC", "--out", str(tmp_path / "m")], tmp_path)
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "9" in err and "8" in err
    assert not (tmp_path / "m").exists()


def test_bad_option_is_one_line(trained, hsi_main, tmp_path):
    status, _, err = hsi_main(["infer", "--checkpoint", str(trained / "best.ckpt"), "--scene", "synthetic",
                               "--out", str(tmp_path / "m"), "--tile", "0"], tmp_path)
    assert status == 2 and err.startswith("error: --tile: 0")


def test_script_runs_the_same_command(trained, tmp_path):
    proc = subprocess.run([sys.executable, str(REPO_SCRIPTS / "infer_full.py"), "--checkpoint",
                           str(trained / "best.ckpt"), "--scene", "synthetic", "--out", str(tmp_path / "m"),
                           "--no-progress"], capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "m" / "labels.npy").is_file()


def _cubes(folder, seeds=(1, 2)) -> list[str]:
    """``north.h5``, ``south.h5``: the run's tiny synthetic scene (8 bands) with other seeds."""
    from hsi.io import write_h5
    from hsi.scenes import make_synthetic_scene

    from tests.helpers import TINY_SCENE

    paths = []
    for name, seed in zip(("north", "south"), seeds):
        scene = make_synthetic_scene(**{**TINY_SCENE, "seed": seed})
        write_h5(folder / f"{name}.h5", scene.cube.data, wavelengths=scene.cube.wavelengths, overwrite=True)
        paths.append(str(folder / f"{name}.h5"))
    return paths


def test_one_cube_maps_into_out_and_several_into_out_stem_with_the_same_map(trained, hsi_main, tmp_path):
    cubes = _cubes(tmp_path)
    fast = ["--format", "npy", "--no-progress", "--accelerator", "cpu"]
    ckpt = str(trained / "best.ckpt")
    status, printed, err = hsi_main(["infer", "--checkpoint", ckpt, "--cube", cubes[0], "--out", "one", *fast],
                                    tmp_path)
    assert status == 0, err
    assert (tmp_path / "one" / "labels.npy").is_file() and not (tmp_path / "one" / "north").exists()
    assert "labels.npy: " in printed  # the one-scene summary: the files written
    status, printed, err = hsi_main(["infer", "--checkpoint", ckpt, "--cube", *cubes, "--out", "many", *fast],
                                    tmp_path)
    assert status == 0, err
    assert "rank 0 of 1: mapped north, south" in printed and "summary: " in printed
    assert (tmp_path / "many" / "north" / "labels.npy").read_bytes() == (tmp_path / "one" / "labels.npy").read_bytes()
    assert (tmp_path / "many" / "summary.md").is_file()


@pytest.mark.parametrize(("flags", "says"), [
    (["--labels", "gt.mat"], "error: --labels: gt.mat: applies to one scene; several scenes each take their own "
                             "from a collection file"),
    (["--layout", "HWC"], "error: --layout: HWC: applies to one scene"),
    (["--ignore-georef"], "error: --ignore-georef: True: applies to one scene; several scenes are read with their "
                          "georeference checked"),
])
def test_a_one_scene_flag_with_several_cubes_is_one_line(trained, hsi_main, tmp_path, flags, says):
    cubes = _cubes(tmp_path)
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": np.ones((24, 24), np.uint8)})
    status, _, err = hsi_main(["infer", "--checkpoint", str(trained / "best.ckpt"), "--cube", *cubes, *flags,
                               "--out", "m"], tmp_path)
    assert status == 2 and len(err.strip().splitlines()) == 1 and err.startswith(says), err
    assert not (tmp_path / "m").exists()
