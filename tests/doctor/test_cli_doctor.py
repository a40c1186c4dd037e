"""hsi doctor: the data options of hsi train, one PASS/FAIL block per check, exit 0 / 1 / 2."""

from __future__ import annotations

from hsi.cli import main
from hsi.doctor import CheckResult
from hsi.doctor import run as doctor_run

TINY = ["--scene-options", "height=32", "width=32", "bands=24", "n_classes=4", "seed=1",
        "--patch-size", "5", "--block-size", "8"]


def test_all_pass_exit_0_with_figures(tmp_path, capsys):
    assert main(["doctor", *TINY, "--out", str(tmp_path), "--checks", "batches", "spectra", "normalization"]) == 0
    text = capsys.readouterr().out
    assert text.count("PASS ") == 3 and "FAIL" not in text
    assert "3 of 3 checks passed" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["batches.png", "normalization.png", "spectra.png"]


def test_any_fail_exit_1(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(doctor_run._FUNCTIONS, "batches",
                        lambda dm, out: CheckResult("batches", False, ["values 0..600, far outside"]))
    assert main(["doctor", *TINY, "--out", str(tmp_path), "--checks", "batches", "normalization"]) == 1
    text = capsys.readouterr().out
    assert "FAIL batches\n    values 0..600, far outside" in text and "PASS normalization" in text
    assert "FAILED: batches" in text


def test_bad_option_exit_2(tmp_path, capsys):
    assert main(["doctor", *TINY, "--patch-size", "4", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: --patch-size: 4:")
    assert main(["doctor", "--checks", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_config_file_sets_data_options_and_the_command_line_wins(tmp_path, capsys):
    config = tmp_path / "data.yaml"
    config.write_text("scene_options: {height: 32, width: 32, bands: 24, n_classes: 4, seed: 1}\n"
                      "patch-size: 7\nblock_size: 8\n")
    assert main(["doctor", "--config", str(config), "--patch-size", "5", "--out", str(tmp_path / "o"),
                 "--checks", "batches"]) == 0
    assert "expected (B, 24, 5, 5)" in capsys.readouterr().out
    config.write_text("patch_sise: 5\n")
    assert main(["doctor", "--config", str(config), "--checks", "batches"]) == 2
    assert "unknown option 'patch_sise'" in capsys.readouterr().err


def test_doctor_resolves_the_patch_size_as_train_does(tmp_path, capsys):
    """Issue 39: ``hsi doctor --model ssnet`` checked 11 x 11 patches while ``hsi train`` gives ssnet 7 x 7."""
    from hsi.cli import build_parser
    from hsi.cli import doctor as doctor_cli
    from hsi.cli.train import make_config
    from hsi.training.run import settle

    data = ["--scene-options", "height=32", "width=32", "bands=24", "n_classes=4", "seed=1", "--block-size", "8"]
    trained = settle(make_config(build_parser("train").parse_args(["train", *data, "--model", "ssnet"]))).data
    doctored = doctor_cli.make_datamodule(build_parser("doctor").parse_args(["doctor", *data, "--model", "ssnet"]))
    assert trained["patch_size"] == 7 and doctored.patch_size == trained["patch_size"]
    assert doctored.hparams.pca == trained.get("pca")
    assert main(["doctor", *data, "--model", "ssnet", "--out", str(tmp_path), "--checks", "batches"]) == 0
    assert "expected (B, 24, 7, 7)" in capsys.readouterr().out  # the batches checked are the ones training reads
    assert main(["doctor", *data, "--model", "ssnet", "--patch-size", "5", "--out", str(tmp_path),
                 "--checks", "batches"]) == 0  # given: kept, as train keeps it
    assert "expected (B, 24, 5, 5)" in capsys.readouterr().out


def test_doctor_without_a_model_checks_the_patches_of_train_without_one(tmp_path, capsys):
    """Issue 39: plain ``hsi doctor`` built 11 x 11 patches while plain ``hsi train`` reads 7 x 7 (its default model's);
    the doctor's checks still use the plain CNN as their network."""
    from hsi.cli import build_parser
    from hsi.cli import doctor as doctor_cli
    from hsi.cli.train import make_config
    from hsi.training.run import settle

    data = ["--scene-options", "height=32", "width=32", "bands=24", "n_classes=4", "seed=1", "--block-size", "8"]
    trained = settle(make_config(build_parser("train").parse_args(["train", *data]))).data
    doctored = doctor_cli.make_datamodule(build_parser("doctor").parse_args(["doctor", *data]))
    assert trained["patch_size"] == 7 and doctored.patch_size == 7
    assert main(["doctor", *data, "--out", str(tmp_path), "--checks", "batches", "inference"]) == 0
    out = capsys.readouterr().out
    assert "expected (B, 24, 7, 7)" in out and "PASS inference" in out


def _collection(folder, **faults):
    """The collection tests' three scenes (``north``, ``south``, ``west``) written into ``folder``; ``faults`` maps
    ``"north_cube"`` / ``"north_labels"`` to a function applied to that array before it is written."""
    import numpy as np
    from scipy.io import savemat

    from hsi.io.writers.hdf5 import write_h5
    from hsi.scenes.synthetic import make_synthetic_scene
    from tests.collection.data import make_files

    files = make_files(folder)
    if faults:
        north = make_synthetic_scene(height=32, width=32, bands=16, n_classes=3, seed=1)  # as make_files writes it
        cube = faults.get("north_cube", lambda a: a)(north.cube.data)
        labels = faults.get("north_labels", lambda a: a)(north.labels)
        write_h5(folder / "north.h5", np.ascontiguousarray(cube), wavelengths=np.linspace(400, 2500, 16),
                 overwrite=True)
        savemat(folder / "north_gt.mat", {"gt": np.ascontiguousarray(labels).astype(np.uint8)})
    return files["block"]


def _doctor_scenes(collection, out, *checks):
    return main(["doctor", "--scenes", str(collection), "--patch-size", "5", "--block-size", "8", "--out", str(out),
                 "--checks", *checks])


def test_an_untouched_three_scene_collection_passes(tmp_path, capsys):
    """Issue: every scene's spectra check failed once a collection's default brightness/noise augmentation was on."""
    collection = _collection(tmp_path / "c")
    assert _doctor_scenes(collection, tmp_path / "o", "batches", "spectra", "normalization") == 0
    text = capsys.readouterr().out
    assert text.count("PASS spectra") == 3 and "FAIL" not in text and "UNDECIDED" not in text
    assert "training adds brightness x U(1 +- 0.1) and per-band noise sigma 0.05" in text
    assert "10 of 10 checks passed" in text


def test_a_collection_with_one_scene_s_bands_reversed_fails(tmp_path, capsys):
    collection = _collection(tmp_path / "c", north_cube=lambda cube: cube[..., ::-1])
    assert _doctor_scenes(collection, tmp_path / "o", "spectra") == 1
    text = capsys.readouterr().out
    assert text.count("PASS spectra") == 2 and "FAILED: north/spectra" in text
    assert "the band axis is reversed against the wavelengths" in text


def test_a_collection_with_one_label_map_transposed_fails(tmp_path, capsys):
    """Issue: a transposed ``north`` map and the intact one were both UNDECIDED with the same words."""
    collection = _collection(tmp_path / "c", north_labels=lambda labels: labels.T)
    assert _doctor_scenes(collection, tmp_path / "o", "overfit") == 1
    text = capsys.readouterr().out
    assert "FAILED: north/overfit" in text and "the labels fit the cube better transposed (" in text
