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
