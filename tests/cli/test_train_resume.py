"""``hsi train --resume`` after Ctrl-C at any moment: in a training batch, in validation, between epochs, after the
last epoch. The interrupted run keeps the checkpoint of its last finished epoch (and its best one); the resumed run
trains the rest exactly as an uninterrupted run would have and ends with the same best checkpoint, and epochs are
numbered from 1 everywhere people read them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest

from hsi.training.report import plot_curves, read_epoch_history
from tests.helpers import CHILD_TIMEOUT, child_env

EPOCHS = 3

#: the child: sends itself SIGINT (what Ctrl-C does) at one moment of a run, then goes on as ``hsi``
INTERRUPTER = textwrap.dedent("""
    import os, signal, sys
    from hsi.training.task import HSIClassifier

    moment, argv = sys.argv[1], sys.argv[2:]
    hook, epoch = {"train_batch": ("training_step", 1), "validation": ("validation_step", 1),
                   "between_epochs": ("on_train_epoch_start", 2), "after_last": ("on_train_end", None)}[moment]
    original = getattr(HSIClassifier, hook)

    def interrupted(self, *args, **kwargs):
        if epoch is None or (self.current_epoch == epoch and (not args or args[-1] == 0)):
            os.kill(os.getpid(), signal.SIGINT)
        return original(self, *args, **kwargs)

    setattr(HSIClassifier, hook, interrupted)
    from hsi.cli import main
    sys.exit(main(argv))
""")

#: epochs finished when the SIGINT comes (numbered from 1): the checkpoint holds them, the resumed run trains the rest
FINISHED = {"train_batch": 1, "validation": 1, "between_epochs": 2, "after_last": EPOCHS}


def _history(run) -> dict[int, dict[str, float]]:
    return read_epoch_history(run / "logs")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, tiny, hsi_subprocess):
    """A run of ``EPOCHS`` epochs that nothing stopped, and what it printed on stderr."""
    work = tmp_path_factory.mktemp("whole")
    options = [o for o in tiny if o != "--no-progress"]  # piped: one line per epoch on stderr
    proc = hsi_subprocess(["train", *options, "--epochs", str(EPOCHS), "--patience", "100", "--out",
                           str(work / "run")], work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work / "run", proc.stderr


@pytest.mark.parametrize("moment", sorted(FINISHED))
def test_resume_after_ctrl_c_at_any_moment_finishes_as_if_never_stopped(moment, uninterrupted, tiny, tmp_path,
                                                                          hsi_main):
    out = tmp_path / "stopped"
    args = ["train", *tiny, "--epochs", str(EPOCHS), "--patience", "100", "--out", str(out)]
    proc = subprocess.run([sys.executable, "-c", INTERRUPTER, moment, *args], cwd=tmp_path, env=child_env(),
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert proc.returncode == 130, proc.stderr[-3000:]
    done = FINISHED[moment]
    assert f"training stopped after epoch {done} " in proc.stderr and f"--resume {out / 'last.ckpt'}" in proc.stderr
    status, printed, err = hsi_main(["train", "--resume", str(out / "last.ckpt"), "--epochs", str(EPOCHS),
                                     "--out", str(tmp_path / "resumed")], tmp_path)
    assert status == 0, err
    metrics = json.loads((tmp_path / "resumed" / "metrics.json").read_text())
    assert metrics["start_epoch"] == done + 1 and metrics["epochs_trained"] == EPOCHS
    assert 1 <= metrics["best_epoch"] <= EPOCHS and "best epoch" in printed
    # the epochs the resumed run trained are those of the run nobody stopped, number for number
    whole, resumed = _history(uninterrupted[0]), _history(tmp_path / "resumed")
    assert sorted(resumed) == list(range(done + 1, EPOCHS + 1))
    for epoch, logged in resumed.items():
        assert logged == pytest.approx(whole[epoch], rel=1e-5), epoch
    # and it ends with the checkpoint the run nobody stopped ended with, the best epoch before the stop included
    reference = json.loads((uninterrupted[0] / "metrics.json").read_text())
    assert metrics["best_epoch"] == reference["best_epoch"]
    assert metrics["best_val_oa"] == pytest.approx(reference["best_val_oa"])
    assert metrics["oa"] == pytest.approx(reference["oa"]) and metrics["kappa"] == pytest.approx(reference["kappa"])


def test_epochs_are_numbered_from_one_on_the_console_in_metrics_and_in_the_curves(uninterrupted, tmp_path):
    run, stderr = uninterrupted
    lines = re.findall(r"^epoch (\d+)/(\d+):.*val_oa ([0-9.]+)", stderr, flags=re.M)
    assert [(int(n), int(of)) for n, of, _ in lines] == [(n, EPOCHS) for n in range(1, EPOCHS + 1)]
    val_oa = {int(n): float(v) for n, _, v in lines}
    best = min(n for n, v in val_oa.items() if v == max(val_oa.values()))  # the first epoch of the highest OA
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["best_epoch"] == best and metrics["start_epoch"] == 1 and metrics["epochs_trained"] == EPOCHS
    history = _history(run)
    assert sorted(history) == list(range(1, EPOCHS + 1))
    assert history[best]["val_oa"] == pytest.approx(val_oa[best], rel=1e-3)
    figure = plot_curves(history, tmp_path / "curves.png", best_epoch=metrics["best_epoch"])
    lines = figure.axes[1].get_lines()
    marker = [ln for ln in lines if ln.get_label().startswith("best epoch")][0]
    assert list(marker.get_xdata()) == [best, best] and marker.get_label() == f"best epoch ({best})"
    assert list([ln for ln in lines if ln.get_label() == "val_oa"][0].get_xdata()) == list(range(1, EPOCHS + 1))


def test_an_interrupted_run_in_this_process_gives_ctrl_c_back(tiny, tmp_path, hsi_main, monkeypatch):
    import signal

    from hsi.training.task import HSIClassifier

    original = HSIClassifier.validation_step

    def stopped(self, batch, batch_idx):
        if self.current_epoch == 1:
            raise KeyboardInterrupt
        return original(self, batch, batch_idx)

    monkeypatch.setattr(HSIClassifier, "validation_step", stopped)
    handler = signal.getsignal(signal.SIGINT)
    status, _, err = hsi_main(["train", *tiny, "--epochs", "2", "--out", str(tmp_path / "r")], tmp_path)
    assert status == 130 and "training stopped after epoch 1 " in err
    assert signal.getsignal(signal.SIGINT) is handler  # Lightning had set it to be ignored


#: a run that did not use the defaults: a network that reads patches (so augmentation matters), short patience,
#: other lr and batch size
OWN = ["--epochs", str(EPOCHS), "--patience", "2", "--lr", "0.003", "--batch-size", "16"]


def _own_options(tiny: list[str]) -> list[str]:
    at = tiny.index("--model")
    return [*tiny[:at], "--model", "cnn2d", *tiny[at + 2:], *OWN]


@pytest.fixture(scope="module")
def own_uninterrupted(tmp_path_factory, tiny, hsi_subprocess):
    """The non-default run, not stopped."""
    work = tmp_path_factory.mktemp("own")
    proc = hsi_subprocess(["train", *_own_options(tiny), "--out", str(work / "run")], work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work / "run"


def _interrupted(moment: str, options: list[str], out, cwd) -> None:
    proc = subprocess.run([sys.executable, "-c", INTERRUPTER, moment, "train", *options, "--out", str(out)], cwd=cwd,
                          env=child_env(), capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert proc.returncode == 130, proc.stderr[-3000:]


@pytest.mark.parametrize("moment", sorted(FINISHED))
def test_resume_alone_continues_the_run_with_its_own_options(moment, own_uninterrupted, tiny, tmp_path, hsi_main,
                                                             caplog):
    """``--resume`` alone: the interrupted run's epochs, patience, lr and batch size, not the defaults, and the same
    epochs, best checkpoint and metrics as the run nobody stopped."""
    out = tmp_path / "stopped"
    _interrupted(moment, _own_options(tiny), out, tmp_path)
    status, _, err = hsi_main(["train", "--resume", str(out / "last.ckpt"), "--out", str(tmp_path / "resumed")],
                              tmp_path)
    assert status == 0, err
    assert f"continuing its run with its own options (epochs={EPOCHS}, patience=2, refit=True, " in caplog.text
    metrics = json.loads((tmp_path / "resumed" / "metrics.json").read_text())
    config = metrics["config"]
    assert (config["run"]["epochs"], config["run"]["patience"]) == (EPOCHS, 2)
    assert config["model"]["lr"] == 0.003 and config["model"]["model"] == "cnn2d" and config["data"]["batch_size"] == 16
    assert config["resume"]["restored"]["epochs"] == EPOCHS and config["resume"]["overridden"] == {}
    assert config["resume"]["recorded"] is True
    reference = json.loads((own_uninterrupted / "metrics.json").read_text())
    assert metrics["start_epoch"] == FINISHED[moment] + 1 and metrics["epochs_trained"] == reference["epochs_trained"]
    whole, resumed = _history(own_uninterrupted), _history(tmp_path / "resumed")
    for epoch, logged in resumed.items():  # augmentation and dropout of each epoch as in the run nobody stopped
        assert logged == pytest.approx(whole[epoch], rel=1e-5), epoch
    assert metrics["best_epoch"] == reference["best_epoch"]
    assert metrics["best_val_oa"] == pytest.approx(reference["best_val_oa"])
    assert metrics["oa"] == pytest.approx(reference["oa"]) and metrics["kappa"] == pytest.approx(reference["kappa"])


def test_options_given_again_override_the_checkpoints_and_the_run_says_which(tiny, tmp_path, hsi_main, caplog):
    out = tmp_path / "stopped"
    _interrupted("between_epochs", _own_options(tiny), out, tmp_path)
    status, _, err = hsi_main(["train", "--resume", str(out / "last.ckpt"), "--epochs", str(EPOCHS + 1),
                               "--patience", "2", "--out", str(tmp_path / "resumed")], tmp_path)
    assert status == 0, err
    line = [r.getMessage() for r in caplog.records if r.getMessage().startswith("resume: ")]
    assert len(line) == 1 and f"given again, overriding it: epochs={EPOCHS + 1} (it had {EPOCHS})" in line[0]
    assert "patience=2 (it had" not in line[0]  # given again with the checkpoint's value: nothing overridden
    metrics = json.loads((tmp_path / "resumed" / "metrics.json").read_text())
    assert metrics["config"]["run"]["epochs"] == EPOCHS + 1 and metrics["config"]["run"]["patience"] == 2
    assert metrics["config"]["resume"]["overridden"] == {"epochs": {"checkpoint": EPOCHS, "given": EPOCHS + 1}}
    assert metrics["start_epoch"] == FINISHED["between_epochs"] + 1
    assert metrics["epochs_trained"] <= EPOCHS + 1 and sorted(_history(tmp_path / "resumed"))[0] == 3
