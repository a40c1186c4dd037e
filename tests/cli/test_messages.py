"""One-line errors for foreign files, another model's weights, option typos and tiny chunks (exit 2)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err[-2000:]
    assert "weights_only" not in err and "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def foreign_files(tmp_path_factory) -> dict[str, Path]:
    """Files that are not checkpoints: text, .npz, random bytes named best.ckpt, pickled numpy objects."""
    folder = tmp_path_factory.mktemp("foreign")
    files = {"text": folder / "notes.ckpt", "npz": folder / "arrays.npz", "random": folder / "best.ckpt",
             "pickled": folder / "objects.ckpt"}
    files["text"].write_text("epoch 3: loss 0.25\n")
    np.savez(files["npz"], a=np.arange(3))
    files["random"].write_bytes(np.random.default_rng(0).bytes(4096))
    torch.save({"state_dict": {}, "extra": np.arange(3)}, files["pickled"])
    return files


@pytest.fixture(scope="module")
def swapped(trained, tmp_path_factory) -> Path:
    """The tiny run's best.ckpt (spectral1d settings) carrying cnn2d weights of the same sizes."""
    from hsi.models import build_model

    ckpt = torch.load(trained / "best.ckpt", weights_only=True)
    hp = ckpt["hyper_parameters"]
    other = build_model("cnn2d", hp["num_bands"], hp["num_classes"], hp["patch_size"])
    ckpt["state_dict"] = {f"net.{k}": v for k, v in other.state_dict().items()}
    path = tmp_path_factory.mktemp("swapped") / "swapped.ckpt"
    torch.save(ckpt, path)
    return path


@pytest.mark.parametrize("kind", ["text", "npz", "random", "pickled"])
def test_read_checkpoint_names_a_foreign_file_without_torch_advice(kind, foreign_files):
    from hsi.data.checkpoint import read_checkpoint
    from hsi.errors import CheckpointError

    with pytest.raises(CheckpointError) as info:
        read_checkpoint(foreign_files[kind], "checkpoint")
    message = str(info.value)
    assert "not a checkpoint written by hsi" in message and foreign_files[kind].name in message
    assert "weights_only" not in message and "\n" not in message


@pytest.mark.parametrize("kind", ["text", "random"])
def test_infer_and_resume_refuse_a_foreign_file_in_one_line(kind, foreign_files, hsi_main, tmp_path):
    path = str(foreign_files[kind])
    for args in (["infer", "--checkpoint", path, "--scene", "synthetic", "--out", str(tmp_path / "map")],
                 ["train", "--resume", path, "--out", str(tmp_path / "run")]):
        status, _, err = hsi_main(args, tmp_path)
        line = _one_error_line(err)
        assert status == 2 and "not a checkpoint written by hsi" in line and path in line


def test_infer_names_both_models_of_swapped_weights(swapped, hsi_main, tmp_path):
    status, _, err = hsi_main(["infer", "--checkpoint", str(swapped), "--scene", "synthetic",
                               "--out", str(tmp_path / "map")], tmp_path)
    line = _one_error_line(err)
    assert status == 2 and str(swapped) in line
    assert "'spectral1d'" in line and "'cnn2d'" in line and "Missing key" not in line


def test_resume_names_both_models(trained, swapped, hsi_main, hsi_subprocess, tmp_path):
    status, _, err = hsi_main(["train", "--resume", str(trained / "last.ckpt"), "--model", "cnn2d",
                               "--out", str(tmp_path / "a")], tmp_path)
    line = _one_error_line(err)
    assert status == 2 and "'cnn2d'" in line and "'spectral1d'" in line
    # found by the restore inside Trainer.fit (a subprocess: Lightning logs there to its own stderr)
    proc = hsi_subprocess(["train", "--resume", str(swapped), "--epochs", "2", "--out", str(tmp_path / "b")], tmp_path)
    errors = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert proc.returncode == 2 and len(errors) == 1, proc.stderr[-3000:]
    assert "'spectral1d'" in errors[0] and "'cnn2d'" in errors[0] and str(swapped) in errors[0]
    assert "Missing key" not in proc.stderr and "weights_only" not in proc.stderr and "Traceback" not in proc.stderr


def _lightning_cli(args: list[str], cwd: Path, capsys) -> tuple[int, str]:
    from hsi.training.lightning_cli import main

    previous, argv = os.getcwd(), sys.argv
    os.chdir(cwd)
    sys.argv = ["hsi-lightning-cli"]  # LightningCLI warns when args and pytest's argv are both given
    try:
        with pytest.raises(SystemExit) as info:
            main(args)
    finally:
        os.chdir(previous)
        sys.argv = argv
    return int(info.value.code), capsys.readouterr().err


def test_lightning_cli_refuses_a_foreign_file_and_another_model(foreign_files, trained, capsys, tmp_path):
    status, err = _lightning_cli(["test", "--ckpt_path", str(foreign_files["random"])], tmp_path, capsys)
    line = _one_error_line(err)
    assert status == 2 and "not a checkpoint written by hsi" in line and "best.ckpt" in line
    status, err = _lightning_cli(["test", "--ckpt_path", str(trained / "best.ckpt"), "--model.model", "fcn"],
                                 tmp_path, capsys)
    line = _one_error_line(err)
    assert status == 2 and "'spectral1d'" in line and "'fcn'" in line


def test_loading_swapped_weights_names_both_models(swapped):
    from hsi.errors import CheckpointError
    from hsi.training import HSIClassifier

    with pytest.raises(CheckpointError, match=r"settings say model 'spectral1d' but its weights are those of model "
                                              r"'cnn2d'") as info:
        HSIClassifier.load_from_checkpoint(swapped)
    assert "Missing key" not in str(info.value)


@pytest.mark.parametrize(("args", "expected"), [
    (["--model", "fcn", "--model-options", "widht=16"],
     "--model-options: widht: not an option of fcn; did you mean 'width'? (options: width, num_blocks, dropout)"),
    (["--scene-options", "heigth=30"], "--scene-options: heigth: not an option of scene synthetic; did you mean 'height'?"),
    (["--scene", "samson", "--scene-options", "purty=0.8"],
     "--scene-options: purty: not an option of scene samson; did you mean 'purity'? (options: purity, checksum)"),
])
def test_option_typos_name_the_closest_option(args, expected, hsi_main, tmp_path, monkeypatch):
    import hsi.data.scene_source

    monkeypatch.setattr(hsi.data.scene_source, "load_source", lambda *a, **k: pytest.fail("a scene was read"))
    status, _, err = hsi_main(["train", *args, "--out", str(tmp_path / "run")], tmp_path)
    line = _one_error_line(err)
    assert status == 2 and line.startswith("error: " + expected)


def test_config_typo_names_the_closest_option(hsi_main, tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("model: fcn\nbatch_szie: 16\n")
    status, _, err = hsi_main(["train", "--config", str(config)], tmp_path)
    line = _one_error_line(err)
    assert status == 2 and "unknown option 'batch_szie'; did you mean 'batch_size'?" in line
    config.write_text("model: fcn\nmodel_options: {widht: 16}\n")
    status, _, err = hsi_main(["train", "--config", str(config)], tmp_path)
    assert status == 2 and "widht: not an option of fcn; did you mean 'width'?" in _one_error_line(err)


def test_model_options_typo_is_refused_by_the_task_itself():
    from hsi.errors import OptionError
    from hsi.training import HSIClassifier

    with pytest.raises(OptionError, match=r"model_options: 'widht': not an option of fcn; did you mean 'width'\?"):
        HSIClassifier(model="fcn", model_options={"widht": 16})


@pytest.mark.parametrize("chunks", ["1,1,1", "4,4,20"])
def test_convert_refuses_tiny_chunks(chunks, hsi_main, tmp_path):
    from hsi.io import write_h5

    source = write_h5(tmp_path / "in.h5", np.ones((40, 40, 20), dtype=np.float32))
    out = tmp_path / "out.h5"
    status, _, err = hsi_main(["convert", str(source), "--to", "h5", str(out), "--chunks", chunks], tmp_path)
    line = _one_error_line(err)
    assert status == 2 and line.startswith(f"error: --chunks: {chunks}: a chunk of at least 10 KiB")
    assert not out.exists()
    status, _, err = hsi_main(["convert", str(source), "--to", "h5", str(out), "--chunks", "16,16,20"], tmp_path)
    assert status == 0, err  # 20 KiB chunks are fine
