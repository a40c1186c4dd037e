"""The pixel-path start: a full-batch per-pixel fit written into the network so that it computes that fit exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from hsi.models import build_model, list_models
from hsi.training.pretrain import _forward, fit_pixel_network, pretrain_pixel_path, write_pixel_path
from tests.helpers import TINY_SCENE


def _pixels(n: int = 300, bands: int = 12, classes: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.random((n, bands)).astype(np.float32)
    y = (x @ rng.normal(size=(bands, classes)) + 0.3 * rng.normal(size=(n, classes))).argmax(1)
    return x, y


def _objective(params: list[torch.Tensor], x: torch.Tensor, y: torch.Tensor, decay: float) -> torch.Tensor:
    return F.cross_entropy(_forward(params, x), y) + decay * sum((p * p).sum() for p in params)


def _loss_and_gradient(params: list[torch.Tensor], x: torch.Tensor, y: torch.Tensor,
                       decay: float) -> tuple[float, float]:
    params = [p.clone().requires_grad_(True) for p in params]
    loss = _objective(params, x, y, decay)
    loss.backward()
    return loss.item(), max(float(p.grad.abs().max()) for p in params)


def test_the_per_pixel_fit_ends_near_a_stationary_point_of_the_penalised_training_loss():
    x, y = (torch.as_tensor(a) for a in _pixels())
    decay = 1e-3
    loss, gradient = _loss_and_gradient(fit_pixel_network(x, y, [8, 8], 3, decay, seed=0), x, y, decay)
    start_loss, start_gradient = _loss_and_gradient(fit_pixel_network(x, y, [8, 8], 3, decay, seed=0, max_iter=1),
                                                    x, y, decay)
    assert loss < start_loss / 5
    assert gradient < start_gradient / 50  # ReLU kinks and float32 stop L-BFGS short of an exact zero


def test_the_same_seed_gives_the_same_fit_and_another_seed_another_start():
    x, y = (torch.as_tensor(a) for a in _pixels())
    first, again = (fit_pixel_network(x, y, [8], 3, 1e-4, seed=3, max_iter=20) for _ in range(2))
    other = fit_pixel_network(x, y, [8], 3, 1e-4, seed=4, max_iter=20)
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[0], other[0])


def test_the_written_path_computes_the_per_pixel_fit_exactly_in_eval_mode():
    x, y = _pixels(bands=12)
    net = build_model("ssnet", num_bands=12, num_classes=3, patch_size=7)
    spectra = torch.as_tensor(x)
    params = fit_pixel_network(spectra, torch.as_tensor(y), [64, 64], 3, 1e-4, seed=0, max_iter=50)
    write_pixel_path(net.pixel_path(), params, spectra)
    net.eval()
    rng = np.random.default_rng(5)
    patches = torch.as_tensor(rng.random((40, 12, 7, 7)).astype(np.float32))  # neighbours differ from the centre
    with torch.no_grad():
        logits = net(patches)
        expected = _forward(params, patches[:, :, 3, 3])
    torch.testing.assert_close(logits, expected, atol=1e-4, rtol=1e-4)  # the context starts with zero weight


def test_pretrain_starts_only_networks_with_a_pixel_path():
    x, y = _pixels(bands=16)
    for name in list_models():
        net = build_model(name, num_bands=16, num_classes=3, patch_size=9)
        before = {k: v.clone() for k, v in net.state_dict().items()}
        report = pretrain_pixel_path(net, x, y, 1e-4)
        changed = any(not torch.equal(before[k], v) for k, v in net.state_dict().items())
        assert report.applied == (net.pixel_path() is not None) == changed, name
        if report.applied:
            assert report.train_pixels == len(y) and 0.5 < report.train_oa <= 1.0
        else:
            assert "no per-pixel spectral path" in report.reason


def _train(tmp_path, pretrain: bool, epochs: int = 1):
    from hsi.training.config import TrainConfig
    from hsi.training.options import RunOptions
    from hsi.training.run import run_training

    data = {"scene": "synthetic", "scene_options": dict(TINY_SCENE), "block_size": 6, "seed": 0,
            "cache_dir": str(tmp_path / "cache")}
    out = tmp_path / ("pretrain" if pretrain else "plain")
    run = RunOptions(epochs=epochs, seed=0, out=str(out), progress=False, refit=False)
    run_training(TrainConfig(data=data, model={"model": "ssnet", "pretrain": pretrain}, run=run,
                             given_run={"epochs", "seed", "out", "refit"}))
    return json.loads((out / "metrics.json").read_text())


@pytest.mark.slow
def test_hsi_train_records_the_pretrain_and_is_deterministic(tmp_path):
    first = _train(tmp_path / "a", pretrain=True)
    again = _train(tmp_path / "b", pretrain=True)
    plain = _train(tmp_path / "c", pretrain=False)
    assert first["pretrain"]["applied"] and first["pretrain"]["train_pixels"] > 0
    assert first["pretrain"]["train_oa"] == again["pretrain"]["train_oa"] and first["oa"] == again["oa"]
    assert plain["pretrain"] == {"applied": False, "reason": "pretrain=False", "train_oa": None, "train_pixels": 0,
                                 "seconds": 0.0}


def _task_on_trainer(pixels: tuple[np.ndarray, np.ndarray], world_size: int = 1, ckpt_path: str | None = None,
                     **hparams):
    """An ssnet task attached to a stand-in trainer (what ``on_fit_start`` reads of a Lightning one)."""
    from types import SimpleNamespace

    from hsi.training.task import HSIClassifier

    task = HSIClassifier(model="ssnet", num_bands=pixels[0].shape[1], num_classes=3, patch_size=7, **hparams)
    broadcasts: list[tuple[dict, int]] = []

    def broadcast(obj, src=0):
        broadcasts.append((obj, src))
        return {k: torch.full_like(v, 0.5) if k == "head.1.bias" else v for k, v in obj.items()}  # rank 0's differ

    task._trainer = SimpleNamespace(datamodule=SimpleNamespace(pixel_spectra=lambda split: (*pixels, None)),
                                    ckpt_path=ckpt_path, world_size=world_size,
                                    strategy=SimpleNamespace(broadcast=broadcast))
    return task, broadcasts


def test_every_ddp_rank_takes_rank_zeros_start():
    task, broadcasts = _task_on_trainer(_pixels(bands=8), world_size=2)
    task.on_fit_start()
    assert task.pretrain_report.applied and len(broadcasts) == 1 and broadcasts[0][1] == 0
    torch.testing.assert_close(task.net.head[1].bias, torch.full((3,), 0.5))  # what rank 0 sent, not its own fit


@pytest.mark.parametrize("hparams, ckpt_path, reason", [({"pretrain": False}, None, "pretrain=False"),
                                                       ({}, "last.ckpt", "resumed from a checkpoint")])
def test_a_resumed_run_or_pretrain_false_leaves_the_network_as_built(hparams, ckpt_path, reason):
    task, broadcasts = _task_on_trainer(_pixels(bands=8), world_size=2, ckpt_path=ckpt_path, **hparams)
    before = {k: v.clone() for k, v in task.net.state_dict().items()}
    task.on_fit_start()
    assert not task.pretrain_report.applied and task.pretrain_report.reason == reason and not broadcasts
    assert all(torch.equal(before[k], v) for k, v in task.net.state_dict().items())


def test_pretrain_must_be_a_bool():
    from hsi.errors import OptionError
    from hsi.training.task import HSIClassifier

    with pytest.raises(OptionError, match="pretrain.*'no'.*True or False"):
        HSIClassifier(pretrain="no")
