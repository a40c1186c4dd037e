"""Every registry model on one accelerator: training samples per second and the data path's share of a step.

The script to run where a GPU is lent (``device``): for each model, on the synthetic scene (145 x 145 x 200) at
the patch, PCA and scaling ``hsi train`` gives it,

- ``fit``: the real command, ``hsi train --model M --epochs E --accelerator A --gather-on-device`` (the
  preprocessed cube on the accelerator, patches cut there), and its training samples per second: training
  pixels times epochs over the fit time (validation included);
- ``step``: forward + cross-entropy + backward + AdamW on batches of the DataModule's own training loader
  (median of ``--steps`` after 2 warm-up steps, the device synchronised), beside ``data``: the time to get one
  batch from that loader (cut on the CPU) and move it to the device; ``share = data / (data + step)``.

    python benchmarks/bench_gpu_models.py --accelerator gpu --epochs 3 --json bench_gpu_models.json
    python benchmarks/bench_gpu_models.py --accelerator cpu --models ssnet --epochs 1 --steps 3 --height 48   # a try

``--json`` writes ``{"machine", "accelerator", "rows"}``; ``benchmarks/tables.py`` reads it from
``benchmarks/results/`` when present.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

WARMUP = 2


def _device(accelerator: str):
    import torch

    return torch.device("cuda" if accelerator in ("gpu", "cuda") else "cpu")


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def fit_row(model: str, args: argparse.Namespace, work: Path) -> dict:
    """``hsi train`` for ``args.epochs`` epochs on the accelerator; samples per second from its ``metrics.json``."""
    from hsi.cli import main as hsi_main

    out = work / f"fit-{model}"
    argv = ["train", "--scene", "synthetic", "--scene-options", f"height={args.height}", f"width={args.height}",
            "--model", model, "--epochs", str(args.epochs), "--patience", str(args.epochs), "--accelerator",
            args.accelerator, "--no-progress", "--out", str(out), "--no-refit"]
    if args.accelerator != "cpu":
        argv.append("--gather-on-device")
    status = hsi_main(argv)
    if status != 0:
        return {"fit_error": f"exit {status}"}
    m = json.loads((out / "metrics.json").read_text())
    epochs = m["epochs_trained"] - m["start_epoch"] + 1
    return {"train_pixels": m["split"]["train_pixels"], "epochs": epochs, "fit_s": m["timing"]["fit_s"],
            "samples_per_s": m["split"]["train_pixels"] * epochs / m["timing"]["fit_s"],
            "parameters": m.get("parameters")}


def step_row(model: str, args: argparse.Namespace, work: Path) -> dict:
    """Data and step milliseconds on the DataModule's own loader, as ``hsi train`` sets it up for ``model``."""
    import torch
    import torch.nn.functional as F

    from hsi.data import HSIDataModule
    from hsi.data.patches import DEFAULT_PATCH_SIZE
    from hsi.models import (build_model, channels_last_weights, recommended_patch_size, recommended_pca,
                            recommended_scaling)
    from hsi.training.task import band_centres

    device = _device(args.accelerator)
    patch = recommended_patch_size(model, DEFAULT_PATCH_SIZE)
    dm = HSIDataModule(scene="synthetic", scene_options={"height": args.height, "width": args.height},
                       patch_size=patch, pca=recommended_pca(model, 200), scaling=recommended_scaling(model) or "auto",
                       cache_dir=str(work / "cache"))
    dm.prepare_data()
    dm.setup("fit")
    torch.manual_seed(0)
    centres = band_centres(model, None, dm)  # a wavelength-aware network reads them, as hsi train gives them
    options = {} if centres is None else {"wavelengths": centres}
    net = channels_last_weights(build_model(model, dm.num_bands, dm.num_classes, patch, **options)).to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    loader = dm.train_dataloader()
    data, step = [], []
    batches = iter(loader)
    for _ in range(args.steps + WARMUP):
        t0 = time.perf_counter()
        try:
            x, y = next(batches)[:2]
        except StopIteration:
            batches = iter(loader)
            x, y = next(batches)[:2]
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        _sync(device)
        t1 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(net(x), y).backward()
        opt.step()
        _sync(device)
        data.append(t1 - t0)
        step.append(time.perf_counter() - t1)
    d, s = statistics.median(data[WARMUP:]), statistics.median(step[WARMUP:])
    return {"patch": patch, "bands": dm.num_bands, "batch": int(len(y)), "data_ms": 1e3 * d, "step_ms": 1e3 * s,
            "share": d / (d + s), "step_samples_per_s": len(y) / (d + s)}


def main(argv: list[str] | None = None) -> int:
    from hsi.models import list_models

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list_models())
    parser.add_argument("--accelerator", default="gpu", help="gpu (default) or cpu for a try")
    parser.add_argument("--epochs", type=int, default=3, help="epochs of each hsi train run")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per model")
    parser.add_argument("--height", type=int, default=145, help="side of the synthetic scene")
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_gpu_models_") as tmp:
        for model in args.models:
            row = {"model": model, **step_row(model, args, Path(tmp)), **fit_row(model, args, Path(tmp))}
            rows.append(row)
            print(json.dumps(row), flush=True)
    print("\n| model | P | bands | step samples/s | data share | fit samples/s |\n|---|---|---|---|---|---|")
    for r in rows:
        fit = f"{r['samples_per_s']:,.0f}" if "samples_per_s" in r else r.get("fit_error", "-")
        print(f"| {r['model']} | {r['patch']} | {r['bands']} | {r['step_samples_per_s']:,.0f} | {r['share']:.1%} | {fit} |")
    if args.json:
        from _machine import machine_facts

        Path(args.json).write_text(json.dumps({"machine": machine_facts(), "accelerator": args.accelerator,
                                               "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
