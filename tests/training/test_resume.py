"""What a checkpoint says about the run that wrote it: its own options restored, the given ones on top, said; states
Lightning cannot resume refused in one line."""

from __future__ import annotations

import pytest
import torch

from hsi.errors import CheckpointError
from hsi.training.deep_run import RunEarlyStopping
from hsi.training.options import RunOptions
from hsi.training.resume import (
    RUN_OPTIONS_KEY,
    ResumeState,
    RunRecord,
    check_not_mid_validation,
    earlier_release_options,
    epoch_seed,
    load_resume_state,
    restore_run,
    resume_line,
)


def state(run: dict, recorded: bool = True) -> ResumeState:
    return ResumeState(path="runs/a/last.ckpt", data={}, model={}, datamodule_state=None, epochs_done=1, run=run,
                       given_run=["epochs"] if recorded else [], run_recorded=recorded)


def test_the_checkpoints_options_are_restored_and_given_ones_override_them():
    saved = RunRecord(RunOptions(epochs=6, patience=6, refit=False, threads=2, out="runs/a", progress=False),
                      given={"epochs", "patience", "out"})
    checkpoint: dict = {}
    saved.on_save_checkpoint(None, None, checkpoint)
    recorded = checkpoint[RUN_OPTIONS_KEY]
    assert recorded["given"] == ["epochs", "patience"]  # where this invocation wrote is not the run's
    assert "out" not in recorded["options"] and "progress" not in recorded["options"]
    # --resume alone: the run's own options, not the defaults; this command's out and progress
    run, record = restore_run(state(recorded["options"]), RunOptions(out="runs/b"), set())
    assert (run.epochs, run.patience, run.refit, run.threads, run.out, run.progress) == (6, 6, False, 2, "runs/b", True)
    assert record["restored"]["epochs"] == 6 and record["overridden"] == {}
    # given again: the given value wins and is reported, a given value equal to the checkpoint's is not an override
    run, record = restore_run(state(recorded["options"]), RunOptions(epochs=8, patience=6), {"epochs", "patience"})
    assert (run.epochs, run.patience, run.refit) == (8, 6, False)
    assert record["overridden"] == {"epochs": {"checkpoint": 6, "given": 8}} and "epochs" not in record["restored"]
    line = resume_line(record)
    assert line.startswith("resume: runs/a/last.ckpt: continuing its run with its own options (")
    assert "refit=False" in line and "epochs=8 (it had 6)" in line and "\n" not in line


def test_a_checkpoint_of_an_earlier_release_gives_its_epochs_and_patience():
    ckpt = {"hyper_parameters": {"max_epochs": 6},
            "callbacks": {"EarlyStopping{'monitor': 'val_oa', 'mode': 'max'}": {"patience": 6, "wait_count": 1}}}
    assert earlier_release_options(ckpt) == {"epochs": 6, "patience": 6}
    run, record = restore_run(state({"epochs": 6, "patience": 6}, recorded=False), RunOptions(), set())
    assert (run.epochs, run.patience) == (6, 6) and not record["recorded"]
    assert "earlier release" in resume_line(record)


def test_given_patience_survives_the_restored_early_stopping_state():
    stopping = RunEarlyStopping(monitor="val_oa", mode="max", patience=9)
    stopping.load_state_dict({"wait_count": 2, "stopped_epoch": 0, "best_score": torch.tensor(0.5), "patience": 6})
    assert stopping.patience == 9 and stopping.wait_count == 2
    # the same key as Lightning's own, so checkpoints of earlier releases restore into it
    from lightning.pytorch.callbacks import EarlyStopping

    assert stopping.state_key == EarlyStopping(monitor="val_oa", mode="max").state_key


def test_each_epoch_draws_from_the_seed_and_the_epoch_alone():
    assert epoch_seed(0, 3) == epoch_seed(0, 3)
    assert len({epoch_seed(0, 1), epoch_seed(0, 2), epoch_seed(1, 1)}) == 3


def _progress(started: int, completed: int) -> dict:
    return {"total": {"ready": started, "completed": completed, "started": started, "processed": completed},
            "current": {"ready": started, "completed": completed, "started": started, "processed": completed},
            "is_last_batch": False}


def test_a_state_saved_in_the_middle_of_a_validation_is_refused_in_one_line(tmp_path):
    """Earlier releases saved last.ckpt on Ctrl-C, also during validation; Lightning's resume of it failed deep
    inside the fit with a traceback."""
    ckpt = {"epoch": 1, "state_dict": {}, "hyper_parameters": {"model": "cnn2d"}, "datamodule_hyper_parameters": {},
            "loops": {"fit_loop": {"epoch_loop.val_loop.batch_progress": _progress(2, 1)}}}
    path = tmp_path / "last.ckpt"
    torch.save(ckpt, path)
    with pytest.raises(CheckpointError) as err:
        load_resume_state(str(path))
    message = str(err.value)
    assert str(path) in message and "middle of epoch 2's validation" in message and "\n" not in message
    # a state written at the end of an epoch (its last validation finished) is resumed
    check_not_mid_validation({"loops": {"fit_loop": {"epoch_loop.val_loop.batch_progress": _progress(2, 2)}}}, "x")
    ckpt["loops"]["fit_loop"]["epoch_loop.val_loop.batch_progress"] = _progress(2, 2)
    torch.save(ckpt, path)
    assert load_resume_state(str(path)).epochs_done == 2


def test_strengths_an_earlier_release_recorded_with_augment_off_are_read_as_zero():
    from hsi.data import HSIDataModule
    from hsi.errors import OptionError
    from hsi.training.resume import without_unused_strengths

    earlier = {"augment": False, "spectral_scale": 0.1, "spectral_noise": 0.05}
    with pytest.raises(OptionError, match="spectral_scale"):
        HSIDataModule(**earlier)
    data = without_unused_strengths(earlier)
    assert (data["spectral_scale"], data["spectral_noise"]) == (0.0, 0.0)
    HSIDataModule(**data)  # what the DataModule accepts again
    kept = {**earlier, "augment": True}
    assert without_unused_strengths(kept) == kept
