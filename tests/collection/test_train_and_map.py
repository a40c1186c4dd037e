"""A collection of three scenes (two sensors, three class sets) trains, reports per scene and maps."""

from __future__ import annotations

import json

import numpy as np
import pytest

#: fast inference: the maps as .npy only
FAST = {"format": ("npy",), "progress": False, "accelerator": "cpu"}


def test_training_reports_overall_and_per_scene_metrics(trained):
    metrics = json.loads((trained / "metrics.json").read_text())
    assert metrics["class_names"] == ["legume", "notill", "mintill", "row"]
    scenes = metrics["scenes"]
    assert set(scenes) == {"north", "south", "west"}
    south = scenes["south"]  # the held-out scene holds every test pixel
    assert south["pixels"] == sum(metrics["support"].values()) > 0
    assert south["oa"] == pytest.approx(metrics["oa"]) and south["kappa"] == pytest.approx(metrics["kappa"])
    # row is south's alone: never trained on, left out of the scores and reported apart
    assert set(south["per_class"]) == {"legume", "notill", "mintill"} and south["unseen_pixels"] > 0
    assert metrics["scored_classes"] == ["legume", "notill", "mintill"] and metrics["per_class"]["row"] is None
    assert metrics["unseen_classes"]["row"]["pixels"] == south["unseen_pixels"]
    assert sum(metrics["unseen_classes"]["row"]["predicted_as"].values()) == south["unseen_pixels"]
    assert set(scenes["west"]["per_class"]) == {"legume", "notill"}  # classes west lacks are not reported there
    assert scenes["west"]["pixels"] == 0 and scenes["west"]["oa"] is None
    split = metrics["split"]
    assert split["method"] == "scene" and split["scenes"]["south"]["train_pixels"] == 0
    assert split["leakage"]["held_out"] == {"south": 0}
    manifest = json.loads((trained / "run.json").read_text())
    assert {"split-north.png", "split-south.png", "split-west.png", "best.ckpt"} <= set(manifest["files"])


def test_many_scene_maps_are_the_same_on_two_ranks_as_on_one(trained, files, tmp_path):
    from hsi.infer.many import infer_scenes

    ckpt = trained / "best.ckpt"
    one = infer_scenes(ckpt, files["scene"], tmp_path / "one", **FAST)
    assert one["mapped"] == ["north", "south", "west"] and one["summary"] is not None
    parts = [infer_scenes(ckpt, files["scene"], tmp_path / "two", rank=r, world_size=2, **FAST) for r in (0, 1)]
    assert parts[0]["mapped"] == ["north", "west"] and parts[1]["mapped"] == ["south"]
    assert parts[0]["summary"] is None and parts[1]["summary"] is not None  # written once every scene is done
    for name in ("north", "south", "west"):
        a, b = (np.load(tmp_path / d / name / "labels.npy") for d in ("one", "two"))
        assert a.shape == b.shape and np.array_equal(a, b)
    summary = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert [r["name"] for r in summary["scenes"]] == ["north", "south", "west"]
    south = next(r for r in summary["scenes"] if r["name"] == "south")
    metrics = json.loads((trained / "metrics.json").read_text())
    assert south["test"]["pixels"] == metrics["scenes"]["south"]["pixels"]  # the scene's own split scores it
    assert south["test"]["oa"] == pytest.approx(metrics["scenes"]["south"]["oa"])  # resampled alike: train = infer
    assert "| south |" in (tmp_path / "two" / "summary.md").read_text()


def test_rerun_after_an_interrupt_skips_the_completed_scenes(trained, files, tmp_path, monkeypatch):
    import hsi.infer.many as many

    real, calls = many._map_one, []

    def interrupted(model, item, out, opts, union):
        if item.name == "south":
            raise KeyboardInterrupt("stopped")
        calls.append(item.name)
        return real(model, item, out, opts, union)

    monkeypatch.setattr(many, "_map_one", interrupted)
    with pytest.raises(KeyboardInterrupt):
        many.infer_scenes(trained / "best.ckpt", files["scene"], tmp_path / "maps", **FAST)
    assert calls == ["north"] and not (tmp_path / "maps" / "south").exists()
    before = (tmp_path / "maps" / "north" / "labels.npy").stat().st_mtime_ns
    monkeypatch.setattr(many, "_map_one", real)
    done = many.infer_scenes(trained / "best.ckpt", files["scene"], tmp_path / "maps", **FAST)
    assert done["skipped"] == ["north"] and done["mapped"] == ["south", "west"]
    assert (tmp_path / "maps" / "north" / "labels.npy").stat().st_mtime_ns == before
    (tmp_path / "maps" / "west" / "labels.npy").write_bytes(b"damaged")  # a file no longer as its manifest says
    again = many.infer_scenes(trained / "best.ckpt", files["scene"], tmp_path / "maps", overwrite=True, **FAST)
    assert again["mapped"] == ["west"] and again["skipped"] == ["north", "south"]


def test_infer_resamples_a_new_cube_onto_the_checkpoints_grid(trained, files, tmp_path):
    from hsi.errors import WavelengthError
    from hsi.infer import infer_scene
    from hsi.infer.many import infer_scenes
    from hsi.io.writers.hdf5 import write_h5

    result = infer_scene(trained / "best.ckpt", str(files["south"]), **FAST)  # 20 bands at 420-2400 nm -> 14
    many = infer_scenes(trained / "best.ckpt", [str(files["south"])], tmp_path / "cubes", **FAST)
    assert many["mapped"] == ["south"]
    assert np.array_equal(result.labels, np.load(tmp_path / "cubes" / "south" / "labels.npy"))
    short = tmp_path / "short.h5"  # covers 600-2400 nm only: the grid starts at 540 nm
    write_h5(short, np.random.default_rng(0).random((8, 8, 10), dtype=np.float32), wavelengths=np.linspace(600, 2400, 10))
    with pytest.raises(WavelengthError, match=r"600\.0-2400\.0 nm.*540\.0-2360\.0 nm.*--wavelength-range 600 2360"):
        infer_scene(trained / "best.ckpt", str(short), **FAST)


def test_cli_infer_many_cubes_and_convert_collection(trained, files, tmp_path, hsi_main):
    status, out, err = hsi_main(["convert", "--collection", str(files["scene"]), "--to", "h5", str(tmp_path / "p.h5")],
                                tmp_path)
    assert status == 0, err
    status, out, err = hsi_main(["infer", "--checkpoint", str(trained / "best.ckpt"), "--cube", str(files["north"]),
                                 str(files["south"]), "--out", str(tmp_path / "m"), "--format", "npy", "--no-progress"],
                                tmp_path)
    assert status == 0, err
    assert "mapped north, south" in out and (tmp_path / "m" / "summary.md").is_file()
    from hsi.collection import read_collection

    assert read_collection(tmp_path / "p.h5").test_scenes == ("south",)  # the pack keeps the split
    status, _, err = hsi_main(["infer", "--checkpoint", str(trained / "best.ckpt"), "--cube", str(files["north"]),
                               str(files["north"]), "--out", str(tmp_path / "m3")], tmp_path)
    assert status == 2 and err.startswith("error:") and "same folder" in err


def test_a_collection_checkpoint_needs_the_scenes_named(trained, tmp_path, hsi_main):
    status, _, err = hsi_main(["infer", "--checkpoint", str(trained / "best.ckpt"), "--out", str(tmp_path / "m")],
                              tmp_path)
    assert status == 2 and err.startswith("error: --cube") and "collection" in err and "--scenes" in err
    assert not (tmp_path / "m").exists()


def test_doctor_checks_every_scene_of_a_collection(files, tmp_path, capsys):
    from hsi.cli import main
    from hsi.collection import read_collection

    names = read_collection(files["block"]).names
    status = main(["doctor", "--scenes", str(files["block"]), "--patch-size", "5", "--block-size", "8",
                   "--checks", "batches", "--out", str(tmp_path / "doctor")])
    out = capsys.readouterr().out
    assert status == 0, out
    assert [line for line in out.splitlines() if line.startswith("scene ")] == [f"scene {n}:" for n in names]
    # one check per scene, then the scenes together (their units and values after preprocessing)
    assert f"{len(names) + 1} of {len(names) + 1} checks passed" in out and "PASS scenes" in out
    assert all((tmp_path / "doctor" / n).is_dir() for n in names)  # each scene's figures in a folder of its own
