"""``hsi train --precision``, ``--compile`` and ``--accumulate-grad-batches``: they run on the CPU, change what
Lightning does, are recorded in metrics.json and restored by ``--resume``; combinations that cannot run are refused
in one line naming the option."""

from __future__ import annotations

import json
import math

import pytest
import torch


def _run(folder) -> tuple[dict, dict]:
    """``(metrics.json's config.run, last.ckpt)`` of a run folder."""
    metrics = json.loads((folder / "metrics.json").read_text())
    return metrics["config"]["run"], torch.load(folder / "last.ckpt", map_location="cpu", weights_only=False)


def test_accumulating_two_batches_halves_the_optimizer_steps(trained, hsi_main, tmp_path, tiny):
    plain = _run(trained)[1]["global_step"]  # one optimizer step per batch
    assert plain >= 2
    status, _, err = hsi_main(["train", *tiny, "--epochs", "1", "--accumulate-grad-batches", "2",
                               "--out", str(tmp_path / "run")], tmp_path)
    assert status == 0, err
    run, ckpt = _run(tmp_path / "run")
    assert ckpt["global_step"] == math.ceil(plain / 2)
    assert run["accumulate_grad_batches"] == 2 and run["precision"] == "32-true" and run["compile"] is False


def test_bf16_mixed_runs_on_the_cpu_and_a_resume_keeps_its_options(hsi_main, tmp_path, tiny):
    first = tmp_path / "first"
    status, _, err = hsi_main(["train", *tiny, "--epochs", "1", "--precision", "bf16-mixed",
                               "--accumulate-grad-batches", "2", "--out", str(first)], tmp_path)
    assert status == 0, err
    run, ckpt = _run(first)
    assert run["precision"] == "bf16-mixed"
    assert ckpt["hsi_run_options"]["options"]["precision"] == "bf16-mixed"
    metrics = json.loads((first / "metrics.json").read_text())
    assert metrics["oa"] is not None and math.isfinite(metrics["oa"])
    steps = ckpt["global_step"]
    status, _, err = hsi_main(["train", "--resume", str(first / "last.ckpt"), "--epochs", "2",
                               "--out", str(tmp_path / "resumed")], tmp_path)
    assert status == 0, err
    run, ckpt = _run(tmp_path / "resumed")
    assert run["precision"] == "bf16-mixed" and run["accumulate_grad_batches"] == 2
    assert ckpt["global_step"] == 2 * steps  # the second epoch accumulated as the first did
    resume = json.loads((tmp_path / "resumed" / "metrics.json").read_text())["config"]["resume"]
    assert resume["restored"]["precision"] == "bf16-mixed" and resume["restored"]["accumulate_grad_batches"] == 2


def test_compile_trains_a_compiled_network_and_saves_plain_weights(hsi_main, tmp_path, tiny):
    import torch._dynamo.utils

    torch._dynamo.utils.counters.clear()
    out = tmp_path / "run"
    status, _, err = hsi_main(["train", *tiny, "--epochs", "1", "--compile", "--out", str(out)], tmp_path)
    assert status == 0, err
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] > 0  # torch.compile did trace the network
    run, ckpt = _run(out)
    assert run["compile"] is True
    assert not [k for k in ckpt["state_dict"] if "_orig_mod" in k]  # loads into an uncompiled network
    from hsi.training.task import HSIClassifier

    HSIClassifier.load_from_checkpoint(out / "best.ckpt", weights_only=False)  # strict load, no compile
    # a resume of a finished run trains nothing more: its options are restored all the same
    status, _, err = hsi_main(["train", "--resume", str(out / "last.ckpt"), "--epochs", "1",
                               "--out", str(tmp_path / "resumed")], tmp_path)
    assert status == 0, err
    resumed = json.loads((tmp_path / "resumed" / "metrics.json").read_text())["config"]
    assert resumed["run"]["compile"] is True and resumed["resume"]["restored"]["compile"] is True


def test_16_mixed_on_the_cpu_is_refused_in_one_line(hsi_subprocess, tmp_path, tiny):
    out = tmp_path / "run"
    proc = hsi_subprocess(["train", *tiny, "--epochs", "1", "--accelerator", "cpu", "--precision", "16-mixed",
                           "--out", str(out)], tmp_path)
    assert proc.returncode == 2
    # Lightning's own fallback to bf16-mixed (a warning) is neither run nor shown
    assert proc.stderr.strip().splitlines() == [
        "error: --precision: 16-mixed: 32-true or bf16-mixed on the CPU (float16 autocast needs a GPU; Lightning "
        "would run bf16-mixed instead)"], proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(("args", "flag"), [(["--accumulate-grad-batches", "0"], "--accumulate-grad-batches"),
                                            (["--precision", "16"], "--precision"),
                                            (["--strategy", "ddp_spawn"], "--strategy")])
def test_bad_values_are_refused_before_any_work(args, flag, hsi_main, tmp_path, tiny):
    status, _, err = hsi_main(["train", *tiny, *args, "--out", str(tmp_path / "run")], tmp_path)
    assert status == 2 and flag in err, err
    assert not (tmp_path / "run").exists()
