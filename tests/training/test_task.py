"""HSIClassifier: loss and metrics ignore unlabeled pixels, checkpoints rebuild the model."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from sklearn.metrics import accuracy_score, balanced_accuracy_score, cohen_kappa_score
from torch.utils.data import DataLoader, TensorDataset

from hsi.training import IGNORE_INDEX, HSIClassifier
from tests.helpers import TINY_SCENE, quiet_trainer


def _toy_loader(n: int = 96, bands: int = 8, patch: int = 5, seed: int = 0, unlabeled: int = 0) -> DataLoader:
    """Three classes whose spectra differ by a per-class offset, plus ``unlabeled`` items labelled -1."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % 3
    x = torch.randn(n, bands, patch, patch, generator=g) * 0.3 + y.view(-1, 1, 1, 1).float()
    if unlabeled:
        y = y.clone()
        y[:unlabeled] = IGNORE_INDEX
    return DataLoader(TensorDataset(x, y), batch_size=16)


def test_loss_ignores_unlabeled_targets():
    task = HSIClassifier(model="cnn2d", num_bands=8, num_classes=3, patch_size=5)
    logits = torch.randn(6, 3)
    target = torch.tensor([0, 1, 2, IGNORE_INDEX, IGNORE_INDEX, 1])
    expected = torch.nn.functional.cross_entropy(logits[[0, 1, 2, 5]], target[[0, 1, 2, 5]])
    assert torch.allclose(task._loss(logits, target), expected)


def test_test_metrics_agree_with_sklearn_and_skip_unlabeled(tmp_path):
    torch.manual_seed(0)
    task = HSIClassifier(model="cnn2d", num_bands=8, num_classes=3, patch_size=5, scheduler="none")
    loader = _toy_loader(unlabeled=10)
    trainer = quiet_trainer(max_epochs=1, default_root_dir=tmp_path)
    trainer.fit(task, train_dataloaders=loader)
    trainer.test(task, dataloaders=loader, verbose=False)
    probs = torch.cat(trainer.predict(task, dataloaders=loader))
    np.testing.assert_allclose(probs.sum(1).numpy(), 1.0, rtol=1e-5)
    y = torch.cat([b[1] for b in loader]).numpy()
    pred = probs.argmax(1).numpy()
    keep = y != IGNORE_INDEX
    scores = task.test_scores
    assert sum(scores["support"]) == keep.sum()  # the 10 unlabeled items never count
    assert scores["oa"] == pytest.approx(accuracy_score(y[keep], pred[keep]))
    assert scores["aa"] == pytest.approx(balanced_accuracy_score(y[keep], pred[keep]))
    assert scores["kappa"] == pytest.approx(cohen_kappa_score(y[keep], pred[keep]))


def test_checkpoint_rebuilds_the_model(tmp_path):
    torch.manual_seed(0)
    task = HSIClassifier(model="spectral1d", num_bands=8, num_classes=3, patch_size=5, lr=3e-3,
                         class_names=["a", "b", "c"])
    trainer = quiet_trainer(max_epochs=1, default_root_dir=tmp_path)
    trainer.fit(task, train_dataloaders=_toy_loader())
    path = tmp_path / "model.ckpt"
    trainer.save_checkpoint(path)
    restored = HSIClassifier.load_from_checkpoint(path)
    assert restored.hparams.model == "spectral1d" and restored.class_names == ["a", "b", "c"]
    x = next(iter(_toy_loader()))[0]
    task.eval()
    restored.eval()
    assert torch.equal(task(x), restored(x))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"class_weights: \[1.0, 2.0\]: 3 entries, one per class"):
        HSIClassifier(model="cnn2d", num_bands=8, num_classes=3, patch_size=5, class_weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="label_smoothing"):
        HSIClassifier(model="cnn2d", num_bands=8, num_classes=3, patch_size=5, label_smoothing=1.5)


def test_non_finite_loss_stops_training_with_a_clear_error():
    from hsi.errors import NonFiniteLossError

    task = HSIClassifier(model="spectral1d", num_bands=8, num_classes=3, patch_size=5)
    x = torch.randn(4, 8, 5, 5)
    x[0, 2, 2, 2] = float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the error alone: no warning about reading a tensor with grad
        with pytest.raises(NonFiniteLossError, match=r"training loss is nan .*1 non-finite input values"):
            task.training_step((x, torch.tensor([0, 1, 2, 0])), 0)


def test_data_shape_comes_from_the_datamodule_and_is_recorded(tmp_path):
    from hsi.data import HSIDataModule

    dm = HSIDataModule(scene_options=dict(TINY_SCENE), patch_size=5, block_size=6)
    task = HSIClassifier(model="spectral1d")
    assert task.net is None
    trainer = quiet_trainer(max_epochs=1, default_root_dir=tmp_path)
    trainer.fit(task, datamodule=dm)
    hp = task.hparams
    assert (hp.num_bands, hp.num_classes, hp.patch_size, hp.max_epochs) == (8, 3, 5, 1)
    assert hp.class_names == dm.class_names
    trainer.save_checkpoint(tmp_path / "m.ckpt")
    restored = HSIClassifier.load_from_checkpoint(tmp_path / "m.ckpt")
    assert restored.net is not None and restored.hparams.num_classes == 3
