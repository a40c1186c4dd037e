"""Patch-loader throughput and cache memory on an Indian-Pines-shaped scene.

Scene: the synthetic generator at 145 x 145 x 200 with ``background_fraction=0.55``
(about 10k labeled pixels, printed; Indian Pines has 10,249); patch 11, batch 256, one process
(``num_workers=0``, one torch/BLAS thread). Prints, in one run:

- ``ours``: ``HSIDataModule`` (``cache="cube"``) labeled-pixel dataset through a
  ``DataLoader``: one vectorized gather per batch (``__getitems__``), pass-through collate;
  also with augmentation on, and with C-contiguous output (``channels_last=False``);
- ``per_item``: the usual baseline — a C-first padded cube, one window sliced and copied
  per ``__getitem__``, ``default_collate`` stacking them;
- ``memcpy``: ``np.copyto`` of a (256, C, P, P) float32 buffer from a same-size source into
  a preallocated one — the bytes a loader must produce, at memory speed;
- resident memory of ``cache="cube"`` vs ``cache="patches"``: the growth of the process's
  file-backed resident set (``RssFile`` in ``/proc/self/status``) while iterating one epoch
  of the training split from each freshly opened cache (pages of the memory-mapped
  ``.npy`` files that had to be resident), plus the cache sizes on disk.

Throughput is the median over ``--epochs`` epochs after one warm-up epoch.
``--json`` prints one JSON line instead. ``--device cuda`` (or ``cpu``) also times the
device-resident path (``gather_on_device=True``: index batches -> transfer -> gather on
the device).

    python benchmarks/bench_loader.py [--json] [--device cuda] [--epochs 3] [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
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
SCENE_OPTIONS = {"height": H, "width": W, "bands": BANDS, "background_fraction": 0.55}


class PerItemDataset(Dataset):
    """Baseline: one (C, P, P) window sliced from a C-first padded cube per call."""

    def __init__(self, cube_chw: np.ndarray, coords: np.ndarray, labels: np.ndarray, patch_size: int):
        self.cube, self.coords, self.labels, self.p = cube_chw, coords, labels, patch_size

    def __len__(self) -> int:
        return len(self.coords)

    def __getitem__(self, i: int):
        y, x = self.coords[i]
        patch = np.array(self.cube[:, y : y + self.p, x : x + self.p], dtype=np.float32)
        return torch.from_numpy(patch), torch.tensor(self.labels[i], dtype=torch.int64)


def _rss_file_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssFile:"):
            return int(line.split()[1])
    return -1


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


def _memcpy_rate(n_bands: int, n_rounds: int = 40) -> float:
    src = np.random.default_rng(0).random((BATCH, n_bands, PATCH, PATCH), dtype=np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    t0 = time.perf_counter()
    for _ in range(n_rounds):
        np.copyto(dst, src)
    return BATCH * n_rounds / (time.perf_counter() - t0)


def _cache_rss_mb(dm_factory, cache: str) -> tuple[float, float]:
    """(RssFile growth over one training epoch in MB, cache size on disk in MB)."""
    dm = dm_factory(cache=cache, augment=False)
    dm.prepare_data()
    dm.setup("fit")
    loader = dm.train_dataloader()
    before = _rss_file_kb()
    for _ in loader:
        pass
    grown = (_rss_file_kb() - before) / 1024
    disk = sum(p.stat().st_size for p in dm.cache_path.glob("*.npy")) / 2**20
    del loader, dm
    return grown, disk


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument("--device", default=None, help="also time the device-resident path (cuda, cpu)")
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs per measurement")
    parser.add_argument("--cache-dir", default=None, help="cache folder (default: a temporary folder)")
    args = parser.parse_args(argv)
    if args.device and torch.device(args.device).type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available here")
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    from hsi.data import HSIDataModule

    tmp = tempfile.TemporaryDirectory(prefix="hsi-bench-")
    cache_dir = args.cache_dir or tmp.name

    def make(**kw):
        base = dict(scene="synthetic", scene_options=SCENE_OPTIONS, patch_size=PATCH, batch_size=BATCH,
                    num_workers=0, cache_dir=cache_dir, predict_on="labeled", augment=False)
        base.update(kw)
        return HSIDataModule(**base)

    dm = make()
    dm.prepare_data()
    dm.setup("predict")
    ds = dm.predict_dataset  # every labeled pixel
    n_bands = dm.num_bands

    def loader_of(dataset, **kw):
        from hsi.data import EpochShuffleSampler, HSIDataLoader, collate_patches

        return HSIDataLoader(dataset, batch_size=BATCH, sampler=EpochShuffleSampler(dataset, seed=0),
                             collate_fn=kw.pop("collate_fn", collate_patches), **kw)

    res: dict = {"n_patches": len(ds), "bands": n_bands, "patch": PATCH, "batch": BATCH}
    res["ours_patches_per_s"] = _epochs(loader_of(ds), args.epochs)
    from hsi.data import HSIPatchDataset, PatchAugment

    aug = HSIPatchDataset(ds.coords, ds.labels, PATCH, cube=dm._entry.arrays["cube"], augment=PatchAugment())
    res["ours_augmented_patches_per_s"] = _epochs(loader_of(aug), args.epochs)
    contig = HSIPatchDataset(ds.coords, ds.labels, PATCH, cube=dm._entry.arrays["cube"], channels_last=False)
    res["ours_contiguous_patches_per_s"] = _epochs(loader_of(contig), args.epochs)

    cube_chw = np.ascontiguousarray(np.asarray(dm._entry.load("cube")).transpose(2, 0, 1))
    base = PerItemDataset(cube_chw, ds.coords, ds.labels, PATCH)
    res["per_item_patches_per_s"] = _epochs(
        DataLoader(base, batch_size=BATCH, sampler=torch.utils.data.RandomSampler(base)), max(1, args.epochs - 1)
    )
    res["memcpy_patches_per_s"] = _memcpy_rate(n_bands)

    res["cube_cache_mb"], res["cube_cache_disk_mb"] = _cache_rss_mb(make, "cube")
    res["patch_cache_mb"], res["patch_cache_disk_mb"] = _cache_rss_mb(make, "patches")

    if args.device:
        device = torch.device(args.device)
        dev = make(gather_on_device=True)
        dev.setup("predict")
        dev_loader = loader_of(dev.predict_dataset, pin_memory=device.type == "cuda")

        def on_device(batch):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            out = dev.on_after_batch_transfer(batch, 0)
            if device.type == "cuda":
                torch.cuda.synchronize()
            return out

        res["device"] = str(device)
        res["device_resident_patches_per_s"] = _epochs(dev_loader, args.epochs, on_device)

        def host_to_device(batch):
            out = (batch[0].to(device), batch[1].to(device))
            if device.type == "cuda":
                torch.cuda.synchronize()
            return out

        res["host_then_transfer_patches_per_s"] = _epochs(loader_of(ds), args.epochs, host_to_device)

    res["ours_vs_per_item"] = res["ours_patches_per_s"] / res["per_item_patches_per_s"]
    res["ours_vs_memcpy"] = res["ours_patches_per_s"] / res["memcpy_patches_per_s"]
    tmp.cleanup()
    if args.json:
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in res.items()}))
    else:
        print(f"scene {H}x{W}x{BANDS} -> {n_bands} bands, {res['n_patches']} labeled patches, P={PATCH}, batch {BATCH}")
        for key in ("ours", "ours_augmented", "ours_contiguous", "per_item", "memcpy", "device_resident",
                    "host_then_transfer"):
            if f"{key}_patches_per_s" in res:
                print(f"  {key:<22s} {res[f'{key}_patches_per_s']:>12,.0f} patches/s")
        print(f"  ours / per_item        {res['ours_vs_per_item']:.1f}x   (target >= 5x)")
        print(f"  ours / memcpy          {res['ours_vs_memcpy']:.0%}    (target >= 70%)")
        print(f"  cache='cube'     resident {res['cube_cache_mb']:8.1f} MB  (on disk {res['cube_cache_disk_mb']:.1f} MB)")
        print(f"  cache='patches'  resident {res['patch_cache_mb']:8.1f} MB  (on disk {res['patch_cache_disk_mb']:.1f} MB)")
    return res


if __name__ == "__main__":
    main()
