"""Every registry model trains whatever the training-set size: no lone final batch reaches it."""

from __future__ import annotations

import warnings

import lightning as L
import pytest
import torch

from hsi.models import list_models
from hsi.training import HSIClassifier
from tests.helpers import quiet_datamodule, quiet_trainer

SCENE = {"height": 32, "width": 32, "bands": 16, "n_classes": 3, "seed": 1, "parcel_size": 8.0}


class _BatchSizes(L.Callback):
    def __init__(self) -> None:
        self.sizes: list[int] = []

    def on_train_batch_start(self, trainer, module, batch, batch_idx) -> None:  # noqa: ANN001
        self.sizes.append(len(batch[1]))


def _lone_tail_batch_size(n: int) -> int:
    """A batch size >= 2 that leaves one sample over: ``n % b == 1``."""
    return next(b for b in range(min(32, n - 1), 1, -1) if n % b == 1)


@pytest.fixture(scope="module")
def datamodule(tmp_path_factory):
    kw = dict(scene="synthetic", scene_options=SCENE, block_size=8, patch_size=9, seed=0,
              cache_dir=str(tmp_path_factory.mktemp("cache")))
    probe = quiet_datamodule(batch_size=8, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probe.setup("fit")
    n = len(probe.train_dataset)
    return quiet_datamodule(batch_size=_lone_tail_batch_size(n), **kw), n


@pytest.mark.parametrize("model", list_models())
def test_each_model_trains_an_epoch_whose_size_leaves_one_sample_over(model, datamodule, tmp_path):
    dm, n = datamodule
    assert n % dm.hparams.batch_size == 1 and n > dm.hparams.batch_size
    torch.manual_seed(0)
    sizes = _BatchSizes()
    trainer = quiet_trainer(max_epochs=1, num_sanity_val_steps=0, limit_val_batches=1, default_root_dir=tmp_path,
                            callbacks=[sizes])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(HSIClassifier(model=model), datamodule=dm)
    assert trainer.state.finished
    assert sum(sizes.sizes) == n and min(sizes.sizes) > 1  # every pixel seen, no batch of one


def test_batch_size_one_is_refused_for_batch_normalisation_before_training():
    from hsi.data import HSIDataModule
    from hsi.errors import OptionError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dm = HSIDataModule(scene="synthetic", scene_options=SCENE, block_size=8, patch_size=9, batch_size=1)
        trainer = quiet_trainer(max_epochs=1, limit_train_batches=2, limit_val_batches=0)
        with pytest.raises(OptionError, match="batch_size: 1: at least 2: ssnet uses batch normalisation"):
            trainer.fit(HSIClassifier(model="ssnet"), datamodule=dm)
        trainer.fit(HSIClassifier(model="cnn3d"), datamodule=dm)  # no batch normalisation: batches of one train
    assert trainer.global_step == 2
