"""The classifier-layer refit: the optimum of the training loss for the last layer, written into best.ckpt alone."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from hsi.data.build import IGNORE_INDEX
from hsi.models import build_model, list_models
from hsi.training.refit import classifier_layer, keep_refit, layer_inputs, refit_layer
from tests.helpers import TINY_SCENE, TINY_TRAIN


def _objective(w: torch.Tensor, b: torch.Tensor, x: torch.Tensor, y: torch.Tensor, decay: float) -> torch.Tensor:
    return F.cross_entropy(x @ w.T + b, y) + decay * (w * w).sum()


def test_refit_layer_reaches_the_optimum_of_the_penalised_training_loss():
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=(500, 6)), dtype=torch.float32)
    y = (x @ torch.tensor(rng.normal(size=(6, 3)), dtype=torch.float32) + 0.5 * torch.randn(500, 3)).argmax(1)
    decay = 1e-3
    start_w, start_b = torch.zeros(3, 6), torch.zeros(3)
    w, b = refit_layer(start_w, start_b, x, y, decay)
    w, b = w.clone().requires_grad_(True), b.clone().requires_grad_(True)
    loss = _objective(w, b, x, y, decay)
    loss.backward()
    assert loss.item() < _objective(start_w, start_b, x, y, decay).item() - 0.3
    assert float(w.grad.abs().max()) < 1e-4 and float(b.grad.abs().max()) < 1e-4  # a stationary point of a convex loss


def test_refit_layer_matches_scikit_learns_logistic_regression():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, 5)).astype(np.float32)
    y = (x @ rng.normal(size=(5, 4)) + rng.normal(size=(400, 4))).argmax(1)
    decay = 1e-2  # the same problem as C = 1 / (2 * decay * N)
    w, b = refit_layer(torch.zeros(4, 5), torch.zeros(4), torch.tensor(x), torch.tensor(y), decay)
    reference = LogisticRegression(C=1 / (2 * decay * len(y)), tol=1e-10, max_iter=10000).fit(x, y)
    ours = torch.softmax(torch.tensor(x) @ w.T + b, 1).numpy()
    np.testing.assert_allclose(ours, reference.predict_proba(x), atol=1e-3)  # float32 against float64


def test_ignored_pixels_do_not_count():
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    with_ignored = refit_layer(torch.zeros(2, 2), torch.zeros(2), x, torch.tensor([0, 1, IGNORE_INDEX]), 1e-3)
    without = refit_layer(torch.zeros(2, 2), torch.zeros(2), x[:2], torch.tensor([0, 1]), 1e-3)
    torch.testing.assert_close(with_ignored[0], without[0])


@pytest.mark.parametrize("name", list_models())
def test_every_registry_model_has_a_classifier_layer_whose_output_is_the_networks(name):
    net = build_model(name, num_bands=16, num_classes=3, patch_size=9).eval()
    layer = classifier_layer(net, 3)
    assert layer is not None
    x = torch.rand(5, 16, 9, 9)
    found = layer_inputs(net, layer, [(x, torch.zeros(5, dtype=torch.long))])
    assert found is not None
    features, labels = found
    weight = layer.weight.reshape(3, -1)
    with torch.no_grad():  # the features put through the layer give the network's logits
        torch.testing.assert_close(features @ weight.T + (0 if layer.bias is None else layer.bias), net(x))
    assert labels.tolist() == [0] * 5


def test_a_layer_followed_by_more_is_not_refit():
    net = nn.Sequential(nn.Flatten(), nn.Linear(12, 3), nn.LogSoftmax(dim=1)).eval()
    layer = classifier_layer(net, 3)
    assert layer is net[1]
    assert layer_inputs(net, layer, [(torch.rand(2, 3, 2, 2), torch.zeros(2, dtype=torch.long))]) is None


def _train(tmp_path, refit: bool, model: str = "ssnet", epochs: int = 2, **data_options):
    from hsi.training.config import TrainConfig
    from hsi.training.options import RunOptions
    from hsi.training.run import run_training

    data = {"scene": "synthetic", "scene_options": dict(TINY_SCENE), "block_size": 6, "seed": 0,
            "cache_dir": str(tmp_path / "cache"), **data_options}
    out = tmp_path / ("refit" if refit else "plain")
    run = RunOptions(epochs=epochs, seed=0, out=str(out), progress=False, refit=refit)
    run_training(TrainConfig(data=data, model={"model": model}, run=run, given_run={"epochs", "seed", "out"}))
    return out


def test_hsi_train_refits_only_the_classifier_layer_of_best_ckpt(tmp_path):
    from hsi.data.checkpoint import read_checkpoint

    plain, refit = _train(tmp_path, refit=False), _train(tmp_path, refit=True)
    before, after = (read_checkpoint(p / "best.ckpt")["state_dict"] for p in (plain, refit))
    changed = sorted(k for k in before if not torch.equal(before[k], after[k]))
    assert changed == ["net.head.1.bias", "net.head.1.weight"]
    report = json.loads((refit / "metrics.json").read_text())["refit"]
    assert report["applied"] and report["train_pixels"] > 0
    assert json.loads((plain / "metrics.json").read_text())["refit"] is None
    assert after["net.head.1.weight"].is_contiguous(memory_format=torch.channels_last) == \
        before["net.head.1.weight"].is_contiguous(memory_format=torch.channels_last)


def test_index_batches_gathered_on_the_device_are_refit_the_same(tmp_path):
    from hsi.data.checkpoint import read_checkpoint

    host = _train(tmp_path / "host", refit=True)
    device = _train(tmp_path / "device", refit=True, gather_on_device=True)
    reports = [json.loads((p / "metrics.json").read_text())["refit"] for p in (host, device)]
    assert reports[0] == reports[1] and reports[1]["applied"]
    weights = [read_checkpoint(p / "best.ckpt")["state_dict"]["net.head.1.weight"] for p in (host, device)]
    torch.testing.assert_close(weights[0], weights[1])


def test_the_refit_is_kept_unless_it_gets_more_than_one_validation_pixel_fewer_right():
    assert keep_refit(50, 60, 100)[0] and keep_refit(50, 50, 100)[0] and keep_refit(50, 49, 100)[0]
    keep, reason = keep_refit(50, 48, 100)
    assert not keep and "50 -> 48 of 100" in reason and "trained layer is kept" in reason
    assert keep_refit(0, 0, 0)[0]  # nothing to judge by: the refit stands


def _worst_layer(weight, bias, features, labels, *args, **kwargs):
    """A 'refit' that says the rarest training class everywhere: far worse than the trained layer."""
    rarest = int(torch.bincount(labels[labels != IGNORE_INDEX], minlength=len(weight)).argmin())
    new_bias = torch.full((len(weight),), -10.0)
    new_bias[rarest] = 10.0
    return torch.zeros_like(weight), new_bias


def test_a_refit_that_loses_validation_pixels_leaves_best_ckpt_as_trained(tmp_path, monkeypatch):
    from hsi.data.checkpoint import read_checkpoint

    plain = _train(tmp_path, refit=False)
    monkeypatch.setattr("hsi.training.refit.refit_layer", _worst_layer)
    refit = _train(tmp_path, refit=True)
    report = json.loads((refit / "metrics.json").read_text())["refit"]
    assert report["val_oa_after"] < report["val_oa_before"] - 1.5 / report["val_pixels"]  # the case is real
    assert report["kept"] == "trained" and not report["applied"] and "more than one fewer" in report["reason"]
    before, after = (read_checkpoint(p / "best.ckpt")["state_dict"] for p in (plain, refit))
    assert all(torch.equal(before[k], after[k]) for k in before)  # best.ckpt holds the trained weights
    scores = [json.loads((p / "metrics.json").read_text()) for p in (plain, refit)]
    assert scores[0]["oa"] == scores[1]["oa"] and scores[0]["confusion"] == scores[1]["confusion"]


def test_a_refit_that_gains_validation_pixels_is_kept(tmp_path):
    from hsi.data.checkpoint import read_checkpoint

    plain, refit = (_train(tmp_path, refit=r, model="cnn2d", epochs=1) for r in (False, True))
    report = json.loads((refit / "metrics.json").read_text())["refit"]
    assert report["val_oa_after"] > report["val_oa_before"]
    assert report["kept"] == "refit" and report["applied"]
    right = round(report["val_oa_after"] * report["val_pixels"])
    assert f"-> {right} of {report['val_pixels']} validation pixels right" in report["reason"]
    before, after = (read_checkpoint(p / "best.ckpt")["state_dict"] for p in (plain, refit))
    assert [k for k in before if not torch.equal(before[k], after[k])]


def test_the_console_says_when_the_refit_was_not_kept(hsi_main, tmp_path, monkeypatch):
    monkeypatch.setattr("hsi.training.refit.refit_layer", _worst_layer)
    args = ["train", *TINY_TRAIN, "--model", "cnn2d", "--epochs", "1", "--out", str(tmp_path / "r")]
    status, printed, err = hsi_main(args, tmp_path)
    assert status == 0, err
    assert "classifier layer refit not kept (val OA" in printed and "trained layer kept" in printed
