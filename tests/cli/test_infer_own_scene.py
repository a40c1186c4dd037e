"""``hsi infer --checkpoint CKPT --out DIR`` alone: the checkpoint's own scene, restored from its data arguments."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest
import scipy.io

from hsi.errors import DatasetNotFoundError
from hsi.infer import infer_scene, load_checkpoint
from hsi.io import write_h5
from hsi.scenes import make_synthetic_scene

SCENE = {"height": 24, "width": 24, "bands": 8, "n_classes": 3, "seed": 1}


def test_alone_maps_the_registry_scene_it_was_trained_on(trained, hsi_main, tmp_path):
    ckpt = str(trained / "best.ckpt")
    status, printed, err = hsi_main(["infer", "--checkpoint", ckpt, "--out", "alone", "--no-progress"], tmp_path)
    assert status == 0, err
    status, _, err = hsi_main(["infer", "--checkpoint", ckpt, "--scene", "synthetic", "--out", "named",
                               "--no-progress"], tmp_path)
    assert status == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "alone" / "labels.npy"), np.load(tmp_path / "named" / "labels.npy"))
    metrics = json.loads((tmp_path / "alone" / "metrics.json").read_text())
    assert {"test", "labeled"} <= set(metrics)  # the keys stay as they were
    assert metrics["test"]["oa"] == json.loads((trained / "metrics.json").read_text())["oa"]
    # each score line says which pixels it covers, with the numbers of metrics.json
    for label, part in (("test pixels (the checkpoint's split)", "test"),
                        ("all labelled pixels (training pixels included)", "labeled")):
        line = re.search(re.escape(label) + r": (\d+) pixels, OA (\d+\.\d\d)%", printed)
        assert line, printed
        assert int(line.group(1)) == metrics[part]["pixels"]
        assert line.group(2) == f"{100 * metrics[part]['oa']:.2f}"
    assert metrics["labeled"]["pixels"] > metrics["test"]["pixels"]
    assert "\nlabeled:" not in printed and "\ntest:" not in printed


def test_missing_registry_files_name_the_checkpoint_scene_folder_and_fix(trained, tmp_path):
    model = load_checkpoint(trained / "best.ckpt")
    model.data_arguments = {**model.data_arguments, "scene": "indian_pines", "root": str(tmp_path / "empty")}
    model.scene_options = {}
    with pytest.raises(DatasetNotFoundError) as caught:
        infer_scene(model, out=tmp_path / "m", progress=False)
    message = str(caught.value)
    for part in (str(trained / "best.ckpt"), "'indian_pines'", str(tmp_path / "empty"), "--root", "--scene", "--cube"):
        assert part in message, part
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("model, written", [("spectral1d", "best.ckpt"), ("svm", "model.npz")])
def test_cube_run_maps_alone_then_names_the_moved_file(model, written, hsi_main, tmp_path):
    scene = make_synthetic_scene(**SCENE)
    write_h5(tmp_path / "cube.h5", scene.cube)
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": scene.labels.astype(np.uint8)})
    status, _, err = hsi_main(["train", "--cube", "cube.h5", "--labels", "gt.mat", "--model", model,
                               "--block-size", "6", "--epochs", "1", "--no-progress", "--out", "run"], tmp_path)
    assert status == 0, err
    ckpt = str(tmp_path / "run" / written)
    status, _, err = hsi_main(["infer", "--checkpoint", ckpt, "--out", "alone", "--no-progress"], tmp_path)
    assert status == 0, err
    status, _, err = hsi_main(["infer", "--checkpoint", ckpt, "--cube", "cube.h5", "--labels", "gt.mat",
                               "--out", "named", "--no-progress"], tmp_path)
    assert status == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "alone" / "labels.npy"), np.load(tmp_path / "named" / "labels.npy"))
    # the training label file was restored as ground truth
    alone = json.loads((tmp_path / "alone" / "metrics.json").read_text())
    assert alone["test"] == json.loads((tmp_path / "named" / "metrics.json").read_text())["test"]

    (tmp_path / "away").mkdir()
    shutil.move(tmp_path / "cube.h5", tmp_path / "away" / "cube.h5")
    status, _, err = hsi_main(["infer", "--checkpoint", ckpt, "--out", "gone", "--no-progress"], tmp_path)
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: checkpoint ") and ckpt in err
    assert str(tmp_path / "cube.h5") in err and "gt.mat" not in err  # only the file that is missing
    assert "--cube" in err and "--scene" in err
    assert not (tmp_path / "gone").exists()
