"""Progress of the long phases of a fit (pretraining, epochs, refit): lines in a log, nothing on other ranks or with
``--no-progress`` (hsi.training.progress, hsi._progress.phase_bar)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import hsi._progress
from hsi.training.pretrain import fit_pixel_network
from hsi.training.progress import EpochLines, shows_progress
from tests.helpers import TINY_TRAIN


@pytest.fixture
def no_delay(monkeypatch):
    """Phases show their progress from their start (a tiny phase is quicker than the delay of a real one)."""
    monkeypatch.setattr(hsi._progress, "PHASE_DELAY", 0.0)


@pytest.fixture
def one_thread():
    """torch on one thread: the per-pixel fits of these tiny problems are many times quicker on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _pixels(n: int = 60, bands: int = 8, classes: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """Spectra whose class is their largest of the first ``classes`` bands: the fits converge quickly."""
    x = np.random.default_rng(0).normal(size=(n, bands))
    return torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(x[:, :classes].argmax(1))


def _stand_in_trainer(rank: int, callbacks: list) -> SimpleNamespace:
    """What ``on_fit_start`` and :func:`shows_progress` read of a Lightning trainer on ``rank``."""
    x, y = _pixels()
    return SimpleNamespace(datamodule=SimpleNamespace(pixel_spectra=lambda split: (x.numpy(), y.numpy(), None)),
                           ckpt_path=None, world_size=1, is_global_zero=rank == 0, progress_bar_callback=None,
                           callbacks=callbacks)


def test_piped_pretraining_prints_a_line_now_and_then_ending_at_100_percent(capsys, no_delay, one_thread):
    x, y = _pixels()
    fit_pixel_network(x, y, [16], 3, 1e-4, max_iter=60, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert 2 <= len(lines) <= 11, lines  # a line per tenth of L-BFGS's limit at most, and a last one
    assert all(line.startswith("per-pixel pretraining:") for line in lines), lines
    assert "100%" in lines[-1] and "100%" not in lines[-2]  # the end said once, when it stopped short of the limit
    fit_pixel_network(x, y, [16], 3, 1e-4, max_iter=60)
    assert capsys.readouterr().err == ""  # progress=False (the default): silent


def test_a_phase_quicker_than_the_delay_prints_nothing(capsys, one_thread):
    x, y = _pixels()
    fit_pixel_network(x, y, [16], 3, 1e-4, max_iter=20, progress=True)  # well under hsi._progress.PHASE_DELAY
    assert capsys.readouterr().err == ""


def test_only_rank_zero_of_a_trainer_that_shows_progress_shows_the_phases():
    assert shows_progress(_stand_in_trainer(0, [EpochLines()]))
    assert not shows_progress(_stand_in_trainer(1, [EpochLines()]))  # another DDP rank
    assert not shows_progress(_stand_in_trainer(0, []))  # no bar, no lines: --no-progress
    assert not shows_progress(None)  # a module used without a trainer


@pytest.mark.parametrize("rank, shown", [(0, True), (1, False)])
def test_the_pretraining_of_a_fit_shows_progress_on_rank_zero_only(capsys, no_delay, one_thread, rank, shown):
    from hsi.training.task import HSIClassifier

    task = HSIClassifier(model="ssnet", num_bands=8, num_classes=3, patch_size=7, model_options={"width": 8})
    task._trainer = _stand_in_trainer(rank, [EpochLines()])
    task.on_fit_start()
    assert task.pretrain_report.applied  # the phase ran on every rank
    err = capsys.readouterr().err
    assert ("per-pixel pretraining:" in err) is shown, err
    if not shown:
        assert err == ""


def test_a_long_epoch_prints_batch_lines_on_rank_zero_only(capsys):
    lines = EpochLines(every_seconds=0.0)
    for rank in (1, 0):
        trainer = SimpleNamespace(is_global_zero=rank == 0, num_training_batches=4, current_epoch=2, max_epochs=5)
        lines.on_train_epoch_start(trainer, None)
        for batch in range(4):
            lines.on_train_batch_end(trainer, None, None, None, batch)
        if rank == 1:
            assert capsys.readouterr().err == ""
    shown = capsys.readouterr().err.splitlines()
    assert [re.sub(r" \(.*", "", line) for line in shown] == [f"epoch 3/5: batch {b}/4" for b in range(1, 5)]


def test_a_short_epoch_prints_no_batch_line(capsys):
    lines = EpochLines()  # a line at most every EVERY_SECONDS within an epoch
    trainer = SimpleNamespace(is_global_zero=True, num_training_batches=4, current_epoch=0, max_epochs=1)
    lines.on_train_epoch_start(trainer, None)
    for batch in range(4):
        lines.on_train_batch_end(trainer, None, None, None, batch)
    assert capsys.readouterr().err == ""


PHASES = ("self-supervised pretraining:", "per-pixel pretraining:", "epoch 1/2:", "refit:")


@pytest.mark.parametrize("progress", [True, False])
def test_hsi_train_piped_shows_every_phase_unless_no_progress(hsi_main, tmp_path, no_delay, progress):
    args = [a for a in TINY_TRAIN if a != "--no-progress" or not progress]
    args = [a if a != "spectral1d" else "ssnet" for a in args]  # a network with a pixel path and an encoder
    status, _, err = hsi_main(["train", "--scene", "synthetic", *args, "--patch-size", "7", "--epochs", "2",
                               "--ssl", "--ssl-steps", "10", "--out", str(tmp_path / "run")], tmp_path)
    assert status == 0, err
    for phase in PHASES:
        assert (phase in err) is progress, (phase, err)
