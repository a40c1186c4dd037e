"""A whole training step per registry model: the data path's share, channels-last vs contiguous.

Scene: the loader benchmark's (synthetic, 145 x 145 x 200, about 10k labeled pixels;
``--pca`` reduces the bands first); each model at the patch size ``hsi train`` gives it
(the registry's recommendation, 1 for spectral1d, else 11; ``--patch`` sets one for all),
built as ``HSIClassifier`` builds it (2-D convolution weights channels-last). For every
model and both memory formats of the batches (``channels_last=True``, the default, and
``False``), in one run:

- ``data``: time to get one batch from the DataModule's default training loader
  (``hsi train``'s: augmentation on, ``num_workers=0``, batch ``--batch``; median over
  3 epochs after a warm-up one);
- ``step``: forward + cross-entropy + backward + AdamW step on that batch;
- ``share``: ``data / (data + step)``, the part of a training step spent on data;
- ``copies``: batch-sized copies the model makes of its input during forward + backward
  (``aten::copy_`` of a tensor with the batch's number of elements, from the profiler):
  a model that turns a channels-last batch back into a contiguous one shows one here.

The two formats are measured side by side (loaders epoch by epoch, models step by step,
one model per format from the same seed), so machine noise hits both alike. Step times
are medians over ``--steps`` steps after 2 warm-up steps, with ``--threads`` torch
threads (several values: one table each). ``--json`` prints one JSON line: ``{"machine": ..., "rows": [...]}``.

    python benchmarks/bench_step.py [--models cnn2d fcn] [--threads 1 2] [--batch 64] [--steps 6] [--patch 11]
                                    [--pca 30] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
import warnings

import torch
import torch.nn.functional as F

SCENE_OPTIONS = {"height": 145, "width": 145, "bands": 200, "background_fraction": 0.55}
WARMUP = 2


def _loader(cache_dir: str, batch: int, channels_last: bool, pca: int | None, patch: int):
    from hsi.data import HSIDataModule

    dm = HSIDataModule(scene="synthetic", scene_options=SCENE_OPTIONS, patch_size=patch, batch_size=batch,
                       cache_dir=cache_dir, channels_last=channels_last, pca=pca)
    dm.prepare_data()
    dm.setup("fit")
    return dm, dm.train_dataloader()


def _data_seconds(loaders: dict, epochs: int = 3) -> dict:
    """Median seconds per batch of each loader over ``epochs`` timed epochs (after a warm-up
    one), the loaders taking turns epoch by epoch so that machine noise hits them alike."""
    times: dict = {key: [] for key in loaders}
    for epoch in range(epochs + 1):
        for key, loader in loaders.items():
            loader.set_epoch(epoch)
            t0 = time.perf_counter()
            n = sum(1 for _ in loader)
            if epoch:
                times[key].append((time.perf_counter() - t0) / n)
    return {key: statistics.median(v) for key, v in times.items()}


def _batches(loader, n: int) -> list:
    """The first ``n`` batches of the loader's epoch 0 (fewer if the epoch is shorter)."""
    loader.set_epoch(0)
    return [b for _, b in zip(range(n), loader)]


def _step_seconds(name: str, num_bands: int, num_classes: int, patch: int, batches: dict) -> dict:
    """Median seconds of forward + loss + backward + AdamW step per memory format.

    One model per format, built from the same seed; the formats take turns step by step.
    """
    runs = {}
    for key in batches:
        model = _model(name, num_bands, num_classes, patch).train()
        runs[key] = (model, torch.optim.AdamW(model.parameters(), lr=1e-3), [])
    for i in range(min(len(b) for b in batches.values())):
        for key, (model, opt, times) in runs.items():
            x, y = batches[key][i]
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            opt.step()
            times.append(time.perf_counter() - t0)
    return {key: statistics.median(t[WARMUP:] or t) for key, (_, _, t) in runs.items()}


def _model(name: str, num_bands: int, num_classes: int, patch: int) -> torch.nn.Module:
    """The registry model from seed 0, as ``HSIClassifier`` builds it."""
    from hsi.models import build_model, channels_last_weights

    torch.manual_seed(0)
    return channels_last_weights(build_model(name, num_bands=num_bands, num_classes=num_classes, patch_size=patch))


@contextlib.contextmanager
def _quiet_stderr():
    """Silence the profiler's start/stop lines (written by C++ straight to file descriptor 2)."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def batch_copies(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> list[str]:
    """Names and shapes of the batch-sized ``aten::copy_`` calls during forward + backward of ``x``."""
    from torch.profiler import ProfilerActivity, profile

    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        F.cross_entropy(model(x), y).backward()
    found = []
    for evt in prof.events():
        if evt.name != "aten::copy_":
            continue
        shapes = [s for s in evt.input_shapes if s]
        if any(torch.Size(s).numel() == x.numel() for s in shapes):
            found.append(f"copy_{tuple(shapes[0])}")
    return found


def measure(
    models: list[str], threads: int, batch: int, steps: int, pca: int | None, cache_dir: str,
    formats: tuple[bool, ...] = (True, False), patch: int | None = None,
) -> list[dict]:
    """One row per (model, memory format): data and step milliseconds, share, copies.

    ``formats`` are the ``channels_last`` values measured (side by side); ``patch`` is ``P``
    for every model, or None for each model's ``hsi train`` default (the registry's
    recommendation, else the DataModule's default).
    """
    from hsi.data.patches import DEFAULT_PATCH_SIZE
    from hsi.models import recommended_patch_size

    torch.set_num_threads(threads)
    rows = []
    by_patch: dict[int, list[str]] = {}
    for name in models:
        by_patch.setdefault(patch or recommended_patch_size(name, DEFAULT_PATCH_SIZE), []).append(name)
    for p, names in by_patch.items():
        rows += _measure_patch(names, batch, steps, pca, cache_dir, formats, p, threads)
    order = {name: i for i, name in enumerate(models)}
    return sorted(rows, key=lambda r: order[r["model"]])


def _measure_patch(models: list[str], batch: int, steps: int, pca: int | None, cache_dir: str,
                   formats: tuple[bool, ...], patch: int, threads: int) -> list[dict]:
    """:func:`measure` for models sharing one patch size (one pair of loaders)."""
    made = {cl: _loader(cache_dir, batch, cl, pca, patch) for cl in formats}
    dm = made[formats[0]][0]
    data_s = _data_seconds({cl: loader for cl, (_, loader) in made.items()})
    batches = {cl: _batches(loader, steps + WARMUP) for cl, (_, loader) in made.items()}
    rows = []
    for name in models:
        step_s = _step_seconds(name, dm.num_bands, dm.num_classes, patch, batches)
        for cl in formats:
            model = _model(name, dm.num_bands, dm.num_classes, patch)
            copies = batch_copies(model, *batches[cl][0])
            rows.append({"model": name, "threads": threads, "channels_last": cl, "bands": dm.num_bands, "patch": patch,
                         "batch": batch, "data_ms": 1e3 * data_s[cl], "step_ms": 1e3 * step_s[cl],
                         "share": data_s[cl] / (data_s[cl] + step_s[cl]), "copies": copies})
    return rows


def _print(rows: list[dict]) -> None:
    by = {(r["model"], r["threads"], r["channels_last"]): r for r in rows}
    for threads in sorted({r["threads"] for r in rows}):
        r0 = next(r for r in rows if r["threads"] == threads)
        print(f"\n{threads} thread(s), batch {r0['batch']}, {r0['bands']} bands: ms per training step")
        print(f"  {'model':<11s} {'P':>2s} {'format':<14s} {'data':>7s} {'step':>8s} {'total':>8s} {'share':>6s}  batch copies")
        for model in dict.fromkeys(r["model"] for r in rows):
            for cl in (True, False):
                r = by.get((model, threads, cl))
                if r is None:
                    continue
                fmt = "channels_last" if cl else "contiguous"
                total = r["data_ms"] + r["step_ms"]
                print(f"  {model:<11s} {r['patch']:>2d} {fmt:<14s} {r['data_ms']:7.2f} {r['step_ms']:8.2f} {total:8.2f} "
                      f"{r['share']:6.1%}  {len(r['copies'])} {' '.join(sorted(set(r['copies'])))}")
            a, b = by.get((model, threads, True)), by.get((model, threads, False))
            if a and b:
                ratio = (b["data_ms"] + b["step_ms"]) / (a["data_ms"] + a["step_ms"])
                print(f"  {'':<11s} contiguous / channels_last total: {ratio:.2f}x")


def main(argv: list[str] | None = None) -> list[dict]:
    from hsi.models import list_models

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list_models(), help="registry models (default: all)")
    parser.add_argument("--threads", nargs="+", type=int, default=[1], help="torch thread counts to measure")
    parser.add_argument("--batch", type=int, default=64, help="batch size (hsi train's default: 64)")
    parser.add_argument("--steps", type=int, default=6, help="timed steps per model and format")
    parser.add_argument("--pca", type=int, default=None, help="reduce the 200 bands to this many first")
    parser.add_argument("--patch", type=int, default=None,
                        help="patch size P (odd) for every model (default: each model's hsi train default)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.models) - set(list_models()))
    if unknown:
        parser.error(f"--models: {', '.join(unknown)}: not in the registry ({', '.join(list_models())})")
    if args.batch < 1 or args.steps < 1 or min(args.threads) < 1:
        parser.error("--batch, --steps and --threads must be >= 1")
    warnings.filterwarnings("ignore")
    rows = []
    with tempfile.TemporaryDirectory(prefix="hsi-bench-step-") as cache_dir:
        for threads in args.threads:
            rows += measure(args.models, threads, args.batch, args.steps, args.pca, cache_dir, patch=args.patch)
    if args.json:
        from _machine import machine_facts

        print(json.dumps({"machine": machine_facts(),
                          "rows": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()} for r in rows]}))
    else:
        _print(rows)
    return rows


if __name__ == "__main__":
    main()
