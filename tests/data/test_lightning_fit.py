"""Single-process Lightning fits: the hooks the DataModule relies on are really called."""

from __future__ import annotations

import lightning.pytorch as pl
import torch
import torch.nn.functional as F

from tests.helpers import quiet_trainer


class Tiny(pl.LightningModule):
    def __init__(self, n_in: int, k: int):
        super().__init__()
        self.lin = torch.nn.Linear(n_in, k)
        self.shapes: list = []
        self.epochs: list = []

    def training_step(self, batch, i):
        x, y = batch
        self.shapes.append((tuple(x.shape), x.dtype, y.dtype))
        self.epochs.append(self.current_epoch)
        return F.cross_entropy(self.lin(x.flatten(1)), y)

    def validation_step(self, batch, i):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self.lin(x.flatten(1)), y))

    def predict_step(self, batch, i):
        x, y, coords = batch
        return self.lin(x.flatten(1)).argmax(1), coords

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def test_fit_with_device_gather_and_balanced_sampler_then_checkpoint(make_dm, tmp_path):
    dm = make_dm(gather_on_device=True, balanced_sampling=True, predict_on="all")
    model = Tiny(dm.num_bands * 25, dm.num_classes)  # properties work before setup
    trainer = quiet_trainer(max_epochs=2, limit_train_batches=3, limit_val_batches=2, num_sanity_val_steps=0)
    trainer.fit(model, datamodule=dm)
    assert trainer.state.finished
    assert model.shapes and all(s == ((16, 20, 5, 5), torch.float32, torch.int64) for s in model.shapes)
    assert sorted(set(model.epochs)) == [0, 1]
    sampler = trainer.train_dataloader.sampler
    assert type(sampler).__name__ == "ClassBalancedSampler" and sampler.epoch == 1  # Lightning set the epoch
    assert dm.train_dataset.epoch == 1  # ...and the dataset followed

    ckpt = tmp_path / "m.ckpt"
    trainer.save_checkpoint(ckpt)
    state = torch.load(ckpt, weights_only=True)  # JSON-only datamodule state
    assert state["HSIDataModule"]["patch_size"] == 5

    # load_from_checkpoint rebuilds the DataModule with the checkpoint's split and pipeline
    from hsi.data import HSIDataModule

    restored = HSIDataModule.load_from_checkpoint(ckpt, split_seed=42, cache_dir=str(tmp_path / "restored"))
    restored.setup("fit")
    assert (restored.split.test == dm.split.test).all() and restored.hparams.split_seed == 42

    # a fresh DataModule restored from the checkpoint alone predicts over every pixel
    fresh = make_dm(split_seed=99, cache_dir=str(tmp_path / "other"), predict_on="all")
    out = quiet_trainer().predict(model, datamodule=fresh, ckpt_path=ckpt)
    coords = torch.cat([c for _, c in out])
    assert coords.shape == (48 * 48, 2)
    assert (fresh.split.train == dm.split.train).all()
