"""Bad option values of ``hsi train``: one ``error:`` line naming the option, exit 2, before any work."""

from __future__ import annotations

import pytest

#: (arguments, the option the error must name); each is checked before any scene file is read
BAD_VALUES = [
    (["--patch-size", "4"], "--patch-size"),
    (["--patch-size", "x"], "--patch-size"),
    (["--pca", "0"], "--pca"),
    (["--pca", "1.5"], "--pca"),
    (["--pca", "-3"], "--pca"),
    (["--epochs", "0"], "--epochs"),
    (["--epochs", "-1"], "--epochs"),
    (["--batch-size", "0"], "--batch-size"),
    (["--lr", "-1"], "--lr"),
    (["--seed", "-1"], "--seed"),
    (["--label-smoothing", "2"], "--label-smoothing"),
    (["--split", "fixed"], "--test-labels"),
    (["--cube", "cube.mat"], "--labels"),
    (["--accelerator", "gpu"], "--accelerator"),
    (["--devices", "two"], "--devices"),
    (["--patience", "-5"], "--patience"),
    (["--model", "resnet"], "--model"),
    (["--split", "pixels"], "--split"),
    (["--fractions", "0.5", "0.5", "0.5"], "--fractions"),
    (["--block-size", "0"], "--block-size"),
    (["--num-workers", "-1"], "--num-workers"),
    (["--scaling", "log"], "--scaling"),
    (["--scene", "mars"], "--scene"),
    (["--weight-decay", "-0.1"], "--weight-decay"),
    (["--buffer", "-2"], "--buffer"),
    (["--scene-options", "height"], "--scene-options"),
    (["--scene", "synthetic", "--scene-options", "heigth=30"], "--scene-options"),
    (["--layout", "XYZ"], "--layout"),
    (["--config", "missing.yaml"], "--config"),
    (["--no-augment", "--spectral-noise", "0.05"], "--spectral-noise"),
    (["--spectral-scale", "0.1", "--no-augment"], "--spectral-scale"),
    (["--model", "ssftt", "--model-options", "heads=0"], "--model-options: heads=0: SSFTT: heads must be >= 1"),
    (["--model", "ssftt", "--model-options", "dim=60"], "--model-options: dim=60: SSFTT: dim must be a multiple"),
    (["--model", "spectralformer", "--model-options", "head_dim=0"], "--model-options: head_dim=0: "),
]


@pytest.fixture
def no_scene_reads(monkeypatch):
    """Fail the test if any scene is loaded."""
    import hsi.data.scene_source

    def refuse(*args, **kwargs):
        raise AssertionError("a scene was loaded before the options were checked")

    monkeypatch.setattr(hsi.data.scene_source, "load_source", refuse)


@pytest.mark.parametrize(("args", "flag"), BAD_VALUES, ids=[" ".join(a) for a, _ in BAD_VALUES])
def test_bad_value_is_one_line_naming_the_option(args, flag, hsi_main, tmp_path, no_scene_reads):
    status, out, err = hsi_main(["train", "--scene", "indian_pines", "--root", str(tmp_path), *args], tmp_path)
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith(f"error: {flag}"), err
    assert "Traceback" not in err
    assert not (tmp_path / "runs").exists() and list(tmp_path.iterdir()) == []  # no folder, nothing written


def test_out_naming_a_file_is_refused(hsi_main, tmp_path, no_scene_reads, tiny):
    user_file = tmp_path / "notes.txt"
    user_file.write_text("mine")
    status, _, err = hsi_main(["train", *tiny, "--out", str(user_file)], tmp_path)
    assert status == 2 and err.startswith("error: --out") and "is a file" in err
    assert user_file.read_text() == "mine"


def test_pca_larger_than_the_band_count_names_the_option(hsi_main, tmp_path, tiny):
    status, _, err = hsi_main(["train", *tiny, "--pca", "50", "--epochs", "1"], tmp_path)
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: --pca: 50: at most 8")  # asked for, and the bands there are
    assert not (tmp_path / "runs").exists() or list((tmp_path / "runs").iterdir()) == []


def test_unknown_yaml_key_is_named(hsi_main, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("scene: synthetic\npatch_sise: 9\n")
    status, _, err = hsi_main(["train", "--config", str(bad)], tmp_path)
    assert status == 2 and "patch_sise" in err and len(err.strip().splitlines()) == 1


def test_bad_yaml_value_is_named(hsi_main, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("patch_size: nine\n")
    status, _, err = hsi_main(["train", "--config", str(bad)], tmp_path)
    assert status == 2 and "patch_size" in err and "nine" in err


def test_real_subprocess_prints_no_traceback(tmp_path, hsi_subprocess):
    proc = hsi_subprocess(["train", "--patch-size", "4"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: --patch-size: 4: an odd integer >= 1 (the patch is centred on its pixel)"
    assert list(tmp_path.iterdir()) == []


def test_missing_scene_files_are_one_line_with_the_fix(hsi_main, tmp_path):
    status, _, err = hsi_main(["train", "--scene", "indian_pines", "--root", str(tmp_path / "data"), "--epochs", "1"],
                              tmp_path)
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "Indian_pines" in err and "--download" in err
    assert not (tmp_path / "runs").exists() or list((tmp_path / "runs").iterdir()) == []


def test_help_shows_descriptions_and_effective_defaults(capsys):
    from hsi.cli import main

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Side of the square blocks of the block split, in pixels. (default: 16)" in text
    assert "(default: 0.6 0.2 0.2)" in text
    assert "--split {block,random,fixed}" in text and "--scaling {auto,minmax,standardize,none}" in text
    assert "Learning rate. (default: 0.001)" in text


def test_patch_larger_than_the_scene_names_patch_size(hsi_main, tmp_path, tiny):
    status, _, err = hsi_main(["train", *tiny, "--patch-size", "31", "--epochs", "1"], tmp_path)
    assert status == 2 and err.startswith("error: --patch-size: 31: at most 24")
