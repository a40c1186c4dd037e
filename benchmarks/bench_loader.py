"""Patch-loader throughput and cache memory on an Indian-Pines-shaped scene.

Scene: the synthetic generator at 145 x 145 x 200 with ``background_fraction=0.55``
(about 10k labeled pixels, printed; Indian Pines has 10,249); patch 11, one process
(``num_workers=0``, one torch/BLAS thread). Prints, in one run:

- the headline: ``hsi train``'s training loader — ``HSIDataModule`` defaults
  (``cache="cube"``, augmentation on: the 8 flips / quarter turns folded into the gather,
  ``channels_last=True``), ``train_dataloader()`` at batch 64 (``hsi train``'s default) and
  256, beside the per-item baseline with the same augmentation and a plain memory copy of
  the same bytes, each at the same batch size;
- other configurations at batch 256: no augmentation (val/test loaders), contiguous
  batches (``channels_last=False``), spectral scaling + noise on as well, the per-item
  baseline without augmentation;
- ``per_item``: the usual baseline — a C-first padded cube, one window sliced (flipped /
  turned when augmenting) and copied per ``__getitem__``, ``default_collate`` stacking them;
- ``memcpy``: ``np.copyto`` of a (batch, C, P, P) float32 buffer from a same-size source
  into a preallocated one — the bytes a loader must produce, at memory speed;
- resident memory of ``cache="cube"`` vs ``cache="patches"``: the growth of the process's
  file-backed resident set (``RssFile`` in ``/proc/self/status``) while iterating one epoch
  of the training split from each freshly opened cache (pages of the memory-mapped
  ``.npy`` files that had to be resident), plus the cache sizes on disk;
- with ``--share``: the data path's share of a whole training step (data + forward +
  backward + optimizer step) for every registry model, from ``bench_step.py``;
- with ``--collection``: peak memory of one training epoch over a collection of
  ``--collection-scenes`` synthetic scenes of ``--collection-size``² pixels x
  ``--collection-bands`` bands (default 8 x 512 x 512 x 200, ``HSIDataModule(scenes=...)``),
  beside one such scene: the peak resident set (``VmHWM``, reset after the caches are
  built) against the sum of the memory-mapped caches plus a batch. Only this is run.
  At 8 x 192 x 192 x 200 on the 2-core machine: growth 308 MB = 268 MB caches + 24 MB batch
  with ``MALLOC_MMAP_THRESHOLD_=1048576``; 404 MB with glibc's defaults (freed gather buffers
  kept by its heap).

Throughput is the median over ``--epochs`` epochs after one warm-up epoch.
``--json`` prints one JSON line instead, with the machine's facts under ``machine``.
``--device cuda`` (or ``cpu``) also times the device-resident path
(``gather_on_device=True``: index batches -> transfer -> gather on the device).

    python benchmarks/bench_loader.py [--json] [--device cuda] [--epochs 3] [--share] [--cache-dir DIR]
    python benchmarks/bench_loader.py --collection [--collection-size 512] [--collection-scenes 8]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

H = W = 145
BANDS = 200
PATCH = 11
BATCH = 256
HSI_TRAIN_BATCH = 64
SCENE_OPTIONS = {"height": H, "width": W, "bands": BANDS, "background_fraction": 0.55}


class PerItemDataset(Dataset):
    """Baseline: one (C, P, P) window sliced from a C-first padded cube per call.

    With ``augment=True`` each item is flipped / turned by a symmetry drawn per call from
    the dataset's own seeded generator, then copied (what per-item loaders do).
    """

    def __init__(self, cube_chw: np.ndarray, coords: np.ndarray, labels: np.ndarray, patch_size: int,
                 augment: bool = False):
        self.cube, self.coords, self.labels, self.p = cube_chw, coords, labels, patch_size
        self.augment = augment
        self.rng = np.random.default_rng(0)

    def __len__(self) -> int:
        return len(self.coords)

    def __getitem__(self, i: int):
        y, x = self.coords[i]
        window = self.cube[:, y : y + self.p, x : x + self.p]
        if self.augment:
            if self.rng.random() < 0.5:
                window = window[:, :, ::-1]
            window = np.rot90(window, int(self.rng.integers(4)), axes=(1, 2))
        patch = np.array(window, dtype=np.float32)
        return torch.from_numpy(patch), torch.tensor(self.labels[i], dtype=torch.int64)


def _epochs(loader, n_epochs: int, convert=None) -> float:
    """Median patches/s over n_epochs timed epochs (after a warm-up epoch)."""
    rates = []
    for epoch in range(n_epochs + 1):
        if hasattr(loader, "set_epoch"):
            loader.set_epoch(epoch)
        count = 0
        t0 = time.perf_counter()
        for batch in loader:
            if convert is not None:
                batch = convert(batch)
            count += batch[0].shape[0]
        dt = time.perf_counter() - t0
        if epoch:
            rates.append(count / dt)
    return statistics.median(rates)


def _epoch_peak_mb(dm) -> dict:
    """Peak resident MB over one training epoch of ``dm`` (caches built first), its caches' MB and a batch's MB."""
    dm.prepare_data()
    dm.setup("fit")
    loader = dm.train_dataloader()
    from hsi._memory import reset_peak_rss, status_kb

    base = status_kb("VmRSS")
    reset_peak_rss()  # VmHWM from the current resident set
    batch_mb = 0.0
    for x, _ in loader:
        batch_mb = max(batch_mb, x.numel() * 4 / 2**20)
    peak = status_kb("VmHWM")
    caches = sum(p.stat().st_size for r in {f.parent for f in _cache_files(dm)} for p in r.glob("*.npy")) / 2**20
    return {"peak_mb": round(peak / 1024, 1), "rss_before_mb": round(base / 1024, 1),
            "growth_mb": round((peak - base) / 1024, 1), "caches_mb": round(caches, 1), "batch_mb": round(batch_mb, 2)}


def _cache_files(dm) -> list[Path]:
    entries = dm._ensure_entries() if hasattr(dm, "_ensure_entries") else [dm._ensure_entry()]
    return [Path(e.path) / "cube.npy" for e in entries]


def _collection_memory(args, cache_dir: str) -> dict:
    """Peak memory of a training epoch: one scene, then a collection of ``args.collection_scenes`` such scenes."""
    from hsi.data import HSIDataModule

    size, bands = args.collection_size, args.collection_bands
    options = lambda seed: {"height": size, "width": size, "bands": bands, "seed": seed}  # noqa: E731
    common = dict(patch_size=PATCH, batch_size=BATCH, num_workers=0, cache_dir=cache_dir, augment=False,
                  block_size=max(4, min(32, size // 8)))
    single = _epoch_peak_mb(HSIDataModule(scene="synthetic", scene_options=options(0), **common))
    scenes = [{"name": f"s{i}", "scene": "synthetic", "scene_options": options(i)} for i in range(args.collection_scenes)]
    many = _epoch_peak_mb(HSIDataModule(scenes=scenes, **common))
    return {"scene": f"{size} x {size} x {bands}", "n_scenes": args.collection_scenes, "single": single,
            "collection": many}


def _memcpy_rate(n_bands: int, batch: int, n_rounds: int = 40) -> float:
    """Patches/s of copying (batch, C, P, P) float32 buffers: median of 3 rounds of ``n_rounds`` copies."""
    src = np.random.default_rng(0).random((batch, n_bands, PATCH, PATCH), dtype=np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    rates = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n_rounds):
            np.copyto(dst, src)
        rates.append(batch * n_rounds / (time.perf_counter() - t0))
    return statistics.median(rates)


def _cache_rss_mb(dm_factory, cache: str) -> tuple[float, float]:
    """(RssFile growth over one training epoch in MB, cache size on disk in MB)."""
    dm = dm_factory(cache=cache, augment=False)
    dm.prepare_data()
    dm.setup("fit")
    loader = dm.train_dataloader()
    from hsi._memory import status_kb

    before = status_kb("RssFile")
    for _ in loader:
        pass
    grown = (status_kb("RssFile") - before) / 1024
    disk = sum(p.stat().st_size for p in dm.cache_path.glob("*.npy")) / 2**20
    del loader, dm
    return grown, disk


def _rates(make, cache_dir: str, epochs: int) -> dict:
    """Patches/s of every loader configuration, measured side by side on the training split."""
    from hsi.data import EpochShuffleSampler, HSIDataLoader, HSIPatchDataset, PatchAugment, collate_patches

    def train_loader(batch: int, **kw):
        dm = make(batch_size=batch, **kw)
        dm.setup("fit")
        return dm, dm.train_dataloader()

    def loader_of(dataset, batch: int = BATCH):
        return HSIDataLoader(dataset, batch_size=batch, sampler=EpochShuffleSampler(dataset, seed=0),
                             collate_fn=collate_patches)

    dm, _ = train_loader(HSI_TRAIN_BATCH)
    entry = dm._ensure_entry()
    ds, cube = dm.train_dataset, entry.arrays["cube"]
    cube_chw = np.ascontiguousarray(np.asarray(entry.load("cube")).transpose(2, 0, 1))
    res: dict = {"n_patches": len(ds), "bands": dm.num_bands, "patch": PATCH, "batches": [HSI_TRAIN_BATCH, BATCH]}
    for batch in (HSI_TRAIN_BATCH, BATCH):
        res[f"train_loader_b{batch}"] = _epochs(train_loader(batch)[1], epochs)
        per_item = PerItemDataset(cube_chw, ds.coords, ds.labels, PATCH, augment=True)
        res[f"per_item_augmented_b{batch}"] = _epochs(
            DataLoader(per_item, batch_size=batch, sampler=torch.utils.data.RandomSampler(per_item)), max(1, epochs - 1))
        res[f"memcpy_b{batch}"] = _memcpy_rate(dm.num_bands, batch)
        res[f"train_loader_vs_per_item_b{batch}"] = res[f"train_loader_b{batch}"] / res[f"per_item_augmented_b{batch}"]
        res[f"train_loader_vs_memcpy_b{batch}"] = res[f"train_loader_b{batch}"] / res[f"memcpy_b{batch}"]
    res["no_augmentation"] = _epochs(loader_of(HSIPatchDataset(ds.coords, ds.labels, PATCH, cube=cube)), epochs)
    res["contiguous_augmented"] = _epochs(train_loader(BATCH, channels_last=False)[1], epochs)
    spectral = PatchAugment(scale=0.1, noise=0.01)
    res["augmented_scale_noise"] = _epochs(loader_of(HSIPatchDataset(ds.coords, ds.labels, PATCH, cube=cube,
                                                                     augment=spectral)), epochs)
    plain = PerItemDataset(cube_chw, ds.coords, ds.labels, PATCH)
    res["per_item_plain"] = _epochs(DataLoader(plain, batch_size=BATCH, sampler=torch.utils.data.RandomSampler(plain)),
                                    max(1, epochs - 1))
    return res


def _device_rates(make, device: torch.device, epochs: int) -> dict:
    """Patches/s of the device-resident path and of host batches then transfer (batch 256)."""
    from hsi.data import EpochShuffleSampler, HSIDataLoader, collate_patches

    def sync(out):
        if device.type == "cuda":
            torch.cuda.synchronize()
        return out

    res: dict = {"device": str(device)}
    dev = make(gather_on_device=True, batch_size=BATCH)
    dev.setup("fit")
    ds = dev.train_dataset
    loader = HSIDataLoader(ds, batch_size=BATCH, sampler=EpochShuffleSampler(ds, seed=0), collate_fn=collate_patches,
                           pin_memory=device.type == "cuda")
    res["device_resident"] = _epochs(loader, epochs, lambda b: sync(dev.on_after_batch_transfer(
        {k: v.to(device, non_blocking=True) for k, v in b.items()}, 0)))
    host = make(batch_size=BATCH)
    host.setup("fit")
    res["host_then_transfer"] = _epochs(host.train_dataloader(), epochs,
                                        lambda b: sync((b[0].to(device), b[1].to(device))))
    return res


def _share_rows(cache_dir: str) -> list[dict]:
    """bench_step.py's rows for every registry model, default memory format, batch 64, one thread."""
    spec = importlib.util.spec_from_file_location("bench_step", Path(__file__).with_name("bench_step.py"))
    bench_step = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_step)
    from hsi.models import list_models

    rows = bench_step.measure(list_models(), 1, HSI_TRAIN_BATCH, 4, None, cache_dir, formats=(True,))
    torch.set_num_threads(1)
    return rows


def _print(res: dict) -> None:
    print(f"scene {H}x{W}x{BANDS} -> {res['bands']} bands, {res['n_patches']} training patches, P={PATCH}")
    print("  hsi train's training loader (DataModule defaults, augmentation on):")
    for b in res["batches"]:
        print(f"    batch {b:<4d} {res[f'train_loader_b{b}']:>10,.0f} patches/s   per-item (same augmentation) "
              f"{res[f'per_item_augmented_b{b}']:>8,.0f}   memcpy {res[f'memcpy_b{b}']:>9,.0f}   "
              f"{res[f'train_loader_vs_per_item_b{b}']:.1f}x per-item (target >= 5x), "
              f"{res[f'train_loader_vs_memcpy_b{b}']:.0%} of memcpy (target >= 75%)")
    print(f"  other configurations, batch {BATCH}:")
    for key, what in (("no_augmentation", "no augmentation (val/test loaders)"),
                      ("contiguous_augmented", "augmented, channels_last=False"),
                      ("augmented_scale_noise", "augmented + scale 0.1 + noise 0.01"),
                      ("per_item_plain", "per-item baseline, no augmentation"),
                      ("device_resident", f"device-resident gather ({res.get('device')})"),
                      ("host_then_transfer", f"host batches then transfer ({res.get('device')})")):
        if key in res:
            print(f"    {what:<42s} {res[key]:>10,.0f} patches/s")
    print(f"  cache='cube'     resident {res['cube_cache_mb']:8.1f} MB  (on disk {res['cube_cache_disk_mb']:.1f} MB)")
    print(f"  cache='patches'  resident {res['patch_cache_mb']:8.1f} MB  (on disk {res['patch_cache_disk_mb']:.1f} MB)")
    if "share" in res:
        print(f"  data path's share of a training step (batch {HSI_TRAIN_BATCH}, 1 thread, CPU, channels_last):")
        for r in res["share"]:
            print(f"    {r['model']:<11s} data {r['data_ms']:6.2f} ms  step {r['step_ms']:8.2f} ms  share {r['share']:6.1%}"
                  f"  (target < 5%)")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument("--device", default=None, help="also time the device-resident path (cuda, cpu)")
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs per measurement")
    parser.add_argument("--share", action="store_true", help="also the data path's share of a training step per model")
    parser.add_argument("--cache-dir", default=None, help="cache folder (default: a temporary folder)")
    parser.add_argument("--collection", action="store_true",
                        help="only the peak memory of a training epoch over a collection, beside one scene")
    parser.add_argument("--collection-size", type=int, default=512, help="side of each scene of --collection")
    parser.add_argument("--collection-bands", type=int, default=200, help="bands of each scene of --collection")
    parser.add_argument("--collection-scenes", type=int, default=8, help="scenes of --collection")
    args = parser.parse_args(argv)
    if args.device and torch.device(args.device).type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available here")
    if args.epochs < 1:
        parser.error(f"--epochs: {args.epochs}: an integer >= 1")
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    from hsi.data import HSIDataModule

    if args.collection:
        with tempfile.TemporaryDirectory(prefix="hsi-bench-") as tmp:
            res = _collection_memory(args, args.cache_dir or tmp)
        if args.json:
            from _machine import machine_facts

            res["machine"] = machine_facts()
        print(json.dumps(res) if args.json else json.dumps(res, indent=2))
        return res
    with tempfile.TemporaryDirectory(prefix="hsi-bench-") as tmp:
        cache_dir = args.cache_dir or tmp

        def make(**kw):
            base = dict(scene="synthetic", scene_options=SCENE_OPTIONS, patch_size=PATCH, batch_size=BATCH,
                        num_workers=0, cache_dir=cache_dir)
            base.update(kw)
            return HSIDataModule(**base)

        make().prepare_data()
        res = _rates(make, cache_dir, args.epochs)
        res["cube_cache_mb"], res["cube_cache_disk_mb"] = _cache_rss_mb(make, "cube")
        res["patch_cache_mb"], res["patch_cache_disk_mb"] = _cache_rss_mb(make, "patches")
        if args.device:
            res.update(_device_rates(make, torch.device(args.device), args.epochs))
        if args.share:
            res["share"] = _share_rows(cache_dir)
    if args.json:
        from _machine import machine_facts

        res["machine"] = machine_facts(args.device or "cpu")
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in res.items()}))
    else:
        _print(res)
    return res


if __name__ == "__main__":
    main()
