"""``hsi train`` runs: results are never lost, and a resumed run records what ran."""

from __future__ import annotations

import json

import pytest
import torch


def test_two_default_runs_keep_both_results(hsi_main, tmp_path, tiny):
    for pca in ("none", "4"):
        status, out, err = hsi_main(["train", *tiny, "--epochs", "1", "--pca", pca], tmp_path)
        assert status == 0, err
    runs = sorted((tmp_path / "runs").iterdir())
    assert len(runs) == 2
    pcas = sorted(str(json.loads((r / "metrics.json").read_text())["config"]["data"]["pca"]) for r in runs)
    assert pcas == ["4", "None"]
    # the folder printed is the one written
    assert str(runs[-1]) in out or runs[-1].name in out


def test_out_holding_a_users_metrics_is_refused_untouched(hsi_main, tmp_path, tiny):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "metrics.json").write_bytes(b'{"my": "results"}')
    (out / "notes.txt").write_text("keep")
    status, _, err = hsi_main(["train", *tiny, "--epochs", "1", "--out", str(out)], tmp_path)
    assert status == 2 and "metrics.json" in err and "--overwrite" in err and len(err.strip().splitlines()) == 1
    assert (out / "metrics.json").read_bytes() == b'{"my": "results"}'
    assert sorted(p.name for p in out.iterdir()) == ["metrics.json", "notes.txt"]


def test_overwrite_replaces_package_files_only(hsi_main, tmp_path, tiny):
    from hsi.transaction import verify_manifest

    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep")
    for pca in ("none", "4"):
        status, _, err = hsi_main(["train", *tiny, "--epochs", "1", "--pca", pca, "--out", str(out), "--overwrite"],
                                  tmp_path)
        assert status == 0, err
    assert json.loads((out / "metrics.json").read_text())["config"]["data"]["pca"] == 4
    assert (out / "notes.txt").read_text() == "keep"
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "complete" and verify_manifest(out, "run.json") == {}
    assert {"best.ckpt", "last.ckpt", "metrics.json", "predictions.npz", "split.png"} <= set(manifest["files"])
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]
    # a file of the same name that hsi did not write is never replaced, even with --overwrite
    (out / "run.json").unlink()
    status, _, err = hsi_main(["train", *tiny, "--epochs", "1", "--out", str(out), "--overwrite"], tmp_path)
    assert status == 2 and "was not written by hsi train" in err and len(err.strip().splitlines()) == 1


def test_failed_run_leaves_no_folder(hsi_main, tmp_path, tiny):
    status, _, err = hsi_main(["train", *tiny, "--pca", "50", "--epochs", "1", "--out", str(tmp_path / "new")], tmp_path)
    assert status == 2 and err.startswith("error: --pca")
    assert not (tmp_path / "new").exists()


RESUME_CONFLICTS = [
    (["--model", "cnn2d"], "model", "'cnn2d'", "'spectral1d'"),
    (["--pca", "4"], "pca", "4", "None"),
    (["--scaling", "standardize"], "scaling", "'standardize'", "'minmax'"),
    (["--patch-size", "7"], "patch_size", "7", "5"),
    (["--split", "random"], "split", "'random'", "'block'"),
    (["--scene", "samson"], "scene", "'samson'", "'synthetic'"),
    (["--scene-options", "height=30"], "scene_options", "30", "24"),
]


@pytest.mark.parametrize(("args", "key", "given", "trained_with"), RESUME_CONFLICTS, ids=[c[1] for c in RESUME_CONFLICTS])
def test_resume_conflict_names_both_values(args, key, given, trained_with, trained, hsi_main, tmp_path):
    status, _, err = hsi_main(["train", "--resume", str(trained / "last.ckpt"), *args, "--out", str(tmp_path / "r")],
                              tmp_path)
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{key}:" in err and given in err and trained_with in err
    assert not (tmp_path / "r").exists()


def test_resume_on_other_labels_is_refused(trained, hsi_main, tmp_path):
    import numpy as np
    import scipy.io

    from hsi.scenes.synthetic import make_synthetic_scene

    scene = make_synthetic_scene(height=24, width=24, bands=8, n_classes=3, seed=1)
    cube, labels = tmp_path / "cube.mat", tmp_path / "gt.mat"
    scipy.io.savemat(cube, {"cube": scene.cube.data})
    scipy.io.savemat(labels, {"gt": np.rot90(scene.labels).copy()})
    status, _, err = hsi_main(["train", "--resume", str(trained / "last.ckpt"), "--cube", str(cube),
                               "--labels", str(labels), "--out", str(tmp_path / "r")], tmp_path)
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "cube_path" in err or "scene" in err


def test_resume_applies_and_records_allowed_changes(trained, hsi_main, tmp_path):
    out = tmp_path / "resumed"
    status, printed, err = hsi_main(["train", "--resume", str(trained / "last.ckpt"), "--epochs", "2", "--lr", "0.01",
                                     "--out", str(out), "--no-progress"], tmp_path)
    assert status == 0, err
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["start_epoch"] == 2 and metrics["epochs_trained"] == 2  # epochs numbered from 1
    assert metrics["config"]["model"]["lr"] == 0.01 and metrics["config"]["run"]["epochs"] == 2
    assert metrics["config"]["data"]["patch_size"] == 5 and metrics["config"]["model"]["model"] == "spectral1d"
    assert metrics["config"]["resumed_from"] == str(trained / "last.ckpt")
    assert str(out) in printed and str(trained) not in printed.split("outputs in")[-1]
    last = torch.load(out / "last.ckpt", map_location="cpu", weights_only=False)
    groups = last["optimizer_states"][0]["param_groups"]
    assert all(g["initial_lr"] == 0.01 for g in groups)  # the new lr reached the optimizer


def test_nan_pixels_are_excluded_and_reported(hsi_main, tmp_path):
    import numpy as np
    import scipy.io

    from hsi.scenes.synthetic import make_synthetic_scene

    scene = make_synthetic_scene(height=24, width=24, bands=8, n_classes=3, seed=1)
    cube = scene.cube.data.copy()
    labeled = np.argwhere(scene.labels > 0)
    bad = labeled[np.random.default_rng(0).choice(len(labeled), size=len(labeled) // 20, replace=False)]
    cube[bad[:, 0], bad[:, 1], 3] = np.nan
    scipy.io.savemat(tmp_path / "cube.mat", {"cube": cube})
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": scene.labels.astype(np.uint8)})
    status, _, err = hsi_main(["train", "--cube", str(tmp_path / "cube.mat"), "--labels", str(tmp_path / "gt.mat"),
                               "--layout", "HWC", "--patch-size", "5", "--block-size", "6", "--model", "cnn2d",
                               "--epochs", "1", "--no-progress", "--out", str(tmp_path / "run")], tmp_path)
    assert status == 0, err
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["excluded_nonfinite"]["pixels"] == len(bad)
    weights = torch.load(tmp_path / "run" / "best.ckpt", map_location="cpu", weights_only=False)["state_dict"]
    assert all(torch.isfinite(w).all() for w in weights.values() if w.is_floating_point())


def test_default_model_is_the_registry_default():
    import inspect

    from hsi.models import DEFAULT_MODEL
    from hsi.training import HSIClassifier

    assert inspect.signature(HSIClassifier.__init__).parameters["model"].default == DEFAULT_MODEL


def test_three_d_models_get_the_recommended_pca_unless_told(caplog):
    from hsi.training.config import TrainConfig
    from hsi.training.run import backend_for, settle

    scene = {"scene_options": {"height": 24, "width": 24, "bands": 40, "n_classes": 3}}
    backend = backend_for("hybridsn")
    settled = settle(TrainConfig(data=dict(scene), model={"model": "hybridsn"}), backend)
    assert settled.data["pca"] == 30 and "PCA to 30 components" not in caplog.text  # said when training starts:
    backend.announce()  # never before an error about something else
    assert "PCA to 30 components" in caplog.text
    assert "pca" not in settle(TrainConfig(data=dict(scene), model={"model": "cnn2d"})).data
    assert settle(TrainConfig(data={**scene, "pca": None}, model={"model": "hybridsn"})).data["pca"] is None


def test_spectral_model_gets_one_pixel_patches_unless_told(caplog):
    from hsi.models import build_model, recommended_patch_size
    from hsi.training.config import TrainConfig
    from hsi.training.run import backend_for, settle

    scene = {"scene_options": {"height": 24, "width": 24, "bands": 40, "n_classes": 3}}
    backend = backend_for("spectral1d")
    settled = settle(TrainConfig(data=dict(scene), model={"model": "spectral1d"}), backend)
    backend.announce()
    assert settled.data["patch_size"] == 1 and "patch size 1" in caplog.text
    assert settle(TrainConfig(data={**scene, "patch_size": 7}, model={"model": "spectral1d"})).data["patch_size"] == 7
    for name in ("cnn2d", "fcn", "svm"):
        assert "patch_size" not in settle(TrainConfig(data=dict(scene), model={"model": name})).data
    assert settle(TrainConfig(data=dict(scene), model={"model": "ssnet"})).data["patch_size"] == 7
    ssnet = build_model("ssnet", num_bands=40, num_classes=3, patch_size=recommended_patch_size("ssnet")).eval()
    x = torch.randn(4, 40, 11, 11)
    torch.testing.assert_close(ssnet(x[:, :, 2:9, 2:9]), ssnet(x))  # ssnet reads the centre 7 x 7
    # the recommendation is what the model reads: its logits on 1 x 1 patches equal those on 11 x 11 ones
    net = build_model("spectral1d", num_bands=40, num_classes=3, patch_size=recommended_patch_size("spectral1d")).eval()
    x = torch.randn(4, 40, 11, 11)
    torch.testing.assert_close(net(x[:, :, 5:6, 5:6]), net(x))


def test_classical_model_cannot_resume(hsi_main, tmp_path, trained):
    status, _, err = hsi_main(["train", "--model", "svm", "--resume", str(trained / "last.ckpt")], tmp_path)
    assert status == 2 and err.startswith("error: --resume")


def test_predictions_number_classes_as_the_maps_do(trained):
    import numpy as np

    from hsi.scenes.synthetic import make_synthetic_scene
    from hsi.training.report import LABEL_CONVENTION

    truth = make_synthetic_scene(height=24, width=24, bands=8, n_classes=3, seed=1).labels  # 1..K, 0 unlabelled
    metrics = json.loads((trained / "metrics.json").read_text())
    with np.load(trained / "predictions.npz") as pred:  # no pickle needed
        rows, cols = pred["rows"], pred["cols"]
        np.testing.assert_array_equal(pred["y_true"], truth[rows, cols])  # compared as they are, they agree
        assert set(pred["y_pred"].tolist()) <= {1, 2, 3}
        np.testing.assert_array_equal(pred["probs"].argmax(1) + 1, pred["y_pred"])
        assert str(pred["label_convention"]) == LABEL_CONVENTION and "1..K" in LABEL_CONVENTION
        assert pred["class_names"].tolist() == metrics["class_names"]
        assert np.mean(pred["y_true"] == pred["y_pred"]) == pytest.approx(metrics["oa"])
