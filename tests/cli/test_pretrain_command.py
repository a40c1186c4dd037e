"""``hsi pretrain`` writes an encoder that ``hsi train --init`` starts from; ``hsi train --ssl`` records its step."""

from __future__ import annotations

import json

import pytest
import torch

from tests.helpers import TINY_SCENE

SCENE = ["--scene", "synthetic", "--scene-options", *(f"{k}={v}" for k, v in TINY_SCENE.items()),
         "--block-size", "6"]


def _metrics(folder):
    return json.loads((folder / "metrics.json").read_text())


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    """An encoder file of ssnet (width 8) pretrained for 6 steps on the tiny scene, and the command's output."""
    from hsi.cli import main

    folder = tmp_path_factory.mktemp("encoder")
    status = main(["pretrain", *SCENE, "--model-options", "width=8", "--ssl-steps", "6",
                   "--out", str(folder / "enc.pt")])
    assert status == 0
    return folder / "enc.pt"


def test_the_encoder_file_holds_the_encoder_and_what_made_it(encoder):
    record = torch.load(encoder, weights_only=True)
    assert record["format"] == "hsi-encoder" and record["model"] == "ssnet"
    assert set(record["state"]) == {"stem", "context"}
    assert record["report"]["steps"] == 6 and record["report"]["pixels"] == 24 * 24
    assert record["data"]["preprocessing"]["scaling"] == "minmax"


def test_train_init_starts_from_the_encoder_and_says_so(encoder, hsi_main, tmp_path):
    status, out, err = hsi_main(["train", *SCENE, "--no-progress", "--model-options", "width=8", "--epochs", "1", "--no-pretrain",
                                 "--init", str(encoder), "--out", "run"], tmp_path)
    assert status == 0, err
    ssl = _metrics(tmp_path / "run")["ssl"]
    assert ssl["applied"] and ssl["reason"] == f"loaded from {encoder}" and ssl["pixels"] == 24 * 24
    assert "encoder loaded from" in out
    stored = torch.load(encoder, weights_only=True)["state"]["context"]
    trained = torch.load(tmp_path / "run" / "best.ckpt", weights_only=False)["state_dict"]
    # one epoch moves the weights a little from the encoder's, far less than from a fresh start
    start = stored["0.conv.weight"]
    moved = (trained["net.context.0.conv.weight"] - start).abs().mean()
    assert moved < 0.5 * start.abs().mean()


def test_train_ssl_pretrains_first_and_records_it(hsi_main, tmp_path):
    status, _, err = hsi_main(["train", *SCENE, "--no-progress", "--model-options", "width=8", "--epochs", "1", "--ssl",
                               "--ssl-steps", "4", "--ssl-exclude-test", "--out", "run"], tmp_path)
    assert status == 0, err
    ssl = _metrics(tmp_path / "run")["ssl"]
    assert ssl["applied"] and ssl["steps"] == 4 and ssl["exclude_test"] and 0 < ssl["pixels"] < 24 * 24
    assert ssl["loss_start"] > 0 and ssl["method"] == "masked-centre"


def test_without_ssl_metrics_say_why(hsi_main, tmp_path):
    status, _, err = hsi_main(["train", *SCENE, "--no-progress", "--model", "spectral1d", "--patch-size", "1", "--epochs", "1",
                               "--out", "run"], tmp_path)
    assert status == 0, err
    ssl = _metrics(tmp_path / "run")["ssl"]
    assert not ssl["applied"] and ssl["reason"] in ("ssl=False", "the network has no encoder to pretrain")


BAD_INIT = [
    (["--model", "cnn2d"], "the encoder is ssnet's, this run trains cnn2d"),
    (["--model-options", "width=16"], "does not fit this network"),
    (["--pca", "4"], "the encoder reads 8 bands, this run's data has 4"),
]


@pytest.mark.parametrize(("args", "words"), BAD_INIT, ids=[" ".join(a) for a, _ in BAD_INIT])
def test_an_encoder_of_another_network_is_one_error_line(encoder, args, words, hsi_main, tmp_path):
    status, _, err = hsi_main(["train", *SCENE, "--no-progress", "--epochs", "1", "--init", str(encoder), *args, "--out", "run"],
                              tmp_path)
    lines = err.strip().splitlines()
    assert status == 2 and lines[-1].startswith("error: --init") and words in lines[-1], err
    assert not (tmp_path / "run").exists()


def test_a_file_that_is_no_encoder_is_refused(hsi_main, tmp_path):
    (tmp_path / "nonsense.pt").write_bytes(b"not a torch file")
    status, _, err = hsi_main(["train", *SCENE, "--no-progress", "--epochs", "1", "--init", "nonsense.pt", "--out", "run"], tmp_path)
    assert status == 2 and "not an encoder file of hsi pretrain" in err
    status, _, err = hsi_main(["train", *SCENE, "--no-progress", "--init", "missing.pt"], tmp_path)
    assert status == 2 and err.startswith("error: --init") and "missing.pt" in err


def test_pretrain_refuses_a_network_without_encoder_and_an_existing_file(encoder, hsi_main, tmp_path):
    status, _, err = hsi_main(["pretrain", *SCENE, "--model", "cnn2d", "--out", "e.pt"], tmp_path)
    assert status == 2 and "error: --model: cnn2d" in err and not (tmp_path / "e.pt").exists()
    before = encoder.read_bytes()
    status, _, err = hsi_main(["pretrain", *SCENE, "--out", str(encoder)], tmp_path)
    assert status == 2 and "--overwrite" in err and encoder.read_bytes() == before


def test_pretrain_without_ssl_options_takes_hsiclassifiers_defaults(monkeypatch, hsi_main, tmp_path):
    """One definition of each option: ``hsi pretrain`` reads ``ssl_steps`` / ``ssl_exclude_test`` defaults from
    ``HSIClassifier``."""
    import hsi.training.pretrain_run as pretrain_run
    from hsi.training.selfsup import SelfSupervisedReport
    from hsi.training.task import training_defaults

    asked = {}

    def record(net, datamodule, init, steps, exclude_test, seed=0, model=None, progress=False):
        asked.update(steps=steps, exclude_test=exclude_test)
        return SelfSupervisedReport(True, "pretrained", steps=steps, loss_start=1.0, loss_end=0.5)

    monkeypatch.setattr(pretrain_run, "start_encoder", record)
    status, _, err = hsi_main(["pretrain", *SCENE, "--model-options", "width=8", "--out", "e.pt"], tmp_path)
    assert status == 0, err
    defaults = training_defaults()
    assert asked == {"steps": defaults["ssl_steps"], "exclude_test": defaults["ssl_exclude_test"]}
