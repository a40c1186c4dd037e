"""Whole-scene inference: peak memory and throughput of the full pipeline next to the forward pass alone.

A synthetic ``H x W x C`` float32 cube (default 2048 x 2048 x 200, 3.2 GB) is written once
into a temporary folder as chunked HDF5 (chunks 64 x 64 x C) and as ``.npy``. For a
patch-centre model (spectral1d by default, at the patch size ``hsi train`` gives it: 1, the
pixel it reads; other models at 11) and for ``fcn``, with untrained weights and
a min-max pipeline fitted on the first rows (throughput does not depend on the weights),
each (model, source) runs in a fresh child process that:

1. runs :func:`hsi.infer.infer_scene` from the file into an output folder (reading,
   preprocessing, windowing, forward passes, blending, writing maps, PNGs and ENVI file);
2. times the network's forward pass alone on the same number of pixels, on inputs already
   in memory (batches of ``P x P`` windows for the patch model, non-overlapping tiles plus
   their margin for fcn) in the memory format the pipeline feeds (channels-last inputs and
   2-D convolution weights), once before and once after step 1, and takes the mean (the
   speed of a shared machine drifts between minutes);
3. reports the peak resident memory of the whole process (torch included) during step 1:
   ``VmHWM`` of ``/proc/self/status`` after resetting it just before (``5`` written to
   ``/proc/self/clear_refs``), so the set-up (building the model and fitting its pipeline)
   does not count; ``resource.getrusage``'s lifetime peak is printed beside it. The cube
   is written by a separate child, because Linux hands a parent's peak RSS down to the
   children it forks.

Library imports (torch, matplotlib, Lightning) happen before anything is timed. ``pipeline / forward`` is the share of forward-only speed the pipeline keeps: what reading,
windowing and stitching cost shows as the gap to 100 %. Targets: peak RSS <= 1 GB for the
3.2 GB cube; pipeline >= 80 % of forward-only speed.

    python benchmarks/bench_infer.py [--size 2048 2048 200] [--models cnn2d fcn] [--sources hdf5 npy]
                                     [--device cpu|cuda] [--threads N] [--json] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def build_cube(folder: Path, height: int, width: int, bands: int, seed: int = 0) -> dict[str, Path]:
    """Write the cube strip by strip as chunked HDF5 and ``.npy`` (never whole in memory)."""
    import h5py

    paths = {"hdf5": folder / "cube.h5", "npy": folder / "cube.npy"}
    if all(p.exists() for p in paths.values()):
        return paths
    rng = np.random.default_rng(seed)
    npy = np.lib.format.open_memmap(folder / ".cube.npy.tmp", mode="w+", dtype=np.float32, shape=(height, width, bands))
    base = rng.random(bands, dtype=np.float32)
    with h5py.File(folder / ".cube.h5.tmp", "w") as f:
        ds = f.create_dataset("cube", shape=(height, width, bands), dtype="f4", chunks=(64, 64, bands))
        for start in range(0, height, 64):
            stop = min(start + 64, height)
            strip = base + 0.1 * rng.random((stop - start, width, bands), dtype=np.float32)
            ds[start:stop] = strip
            npy[start:stop] = strip
    npy.flush()
    del npy
    (folder / ".cube.npy.tmp").rename(paths["npy"])
    (folder / ".cube.h5.tmp").rename(paths["hdf5"])
    return paths


def make_model(name: str, cube_path: Path, bands: int):
    """An untrained network with a min-max pipeline fitted on the first 8 rows."""
    import torch

    from hsi.data.patches import DEFAULT_PATCH_SIZE
    from hsi.infer import InferenceModel
    from hsi.infer.sources import open_scene_source
    from hsi.models import build_model, recommended_patch_size
    from hsi.preprocess import make_pipeline
    from hsi.scenes.palette import make_palette

    torch.manual_seed(0)
    k = 16
    src = open_scene_source(cube_path)
    sample = src.read_window(slice(0, 8), slice(None))
    src.close()
    pipe = make_pipeline(scaling="minmax").fit(sample)
    patch = recommended_patch_size(name, DEFAULT_PATCH_SIZE)  # as in a checkpoint from ``hsi train --model name``
    net = build_model(name, num_bands=bands, num_classes=k, patch_size=patch).eval()
    return InferenceModel(net=net, pipeline=pipe, patch_size=patch, padding="reflect",
                          class_names=[f"class_{i}" for i in range(1, k + 1)], palette=make_palette(k),
                          label_values=list(range(1, k + 1)), wavelengths=None, num_bands_in=bands,
                          source=f"untrained {name}")


def forward_only_seconds(model, n_pixels: int, device, batch_size: int, tile: int) -> float:
    """Seconds of forward passes alone over ``n_pixels`` pixels (inputs made beforehand)."""
    import torch

    from hsi.infer.predict import release_freed_memory
    from hsi.models import channels_last_weights

    c = model.num_bands_in
    net = channels_last_weights(model.net.to(device))  # the pipeline's format: fastest for both
    with torch.no_grad():
        if model.dense:
            r = model.halo
            x = torch.rand(1, tile + 2 * r, tile + 2 * r, c, device=device).permute(0, 3, 1, 2)  # HWC blocks
            n = -(-n_pixels // (tile * tile))
            net.forward_dense(x)  # warm-up
            _sync(device)
            t0 = time.perf_counter()
            for _ in range(n):
                torch.softmax(net.forward_dense(x), 1)[..., r:-r, r:-r].cpu()
                release_freed_memory()  # as the pipeline does, so both keep the same memory
            _sync(device)
            return time.perf_counter() - t0
        p = model.patch_size
        x = torch.rand(batch_size, p, p, c, device=device).permute(0, 3, 1, 2)  # channels-last, as gathered
        n = -(-n_pixels // batch_size)
        net(x)
        _sync(device)
        t0 = time.perf_counter()
        for _ in range(n):
            torch.softmax(net(x), 1).cpu()
            release_freed_memory()
        _sync(device)
        return time.perf_counter() - t0


def _reset_peak_rss() -> bool:
    """Reset this process's ``VmHWM`` to its current resident set (Linux >= 4.0); False where not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _vm_hwm_mb() -> float | None:
    """Peak resident set of this process since start or the last :func:`_reset_peak_rss` (Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        pass
    return None


def _sync(device) -> None:
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def child(args: argparse.Namespace) -> None:
    """One (model, source) configuration; prints one JSON line."""
    import torch

    from hsi.infer import infer_scene

    torch.set_num_threads(args.threads)
    # the modules the pipeline imports on first use are imported before timing, as torch is:
    # matplotlib takes 0.4 s, hsi.data (the gather of patch-centre models; Lightning with it) about 2 s
    import importlib

    for name in ("matplotlib.figure", "hsi.viz", "hsi.infer.metrics", "hsi.infer.write"):
        importlib.import_module(name)

    cube = Path(args.cube)
    h, w, c = args.size
    model = make_model(args.model, cube, c)
    if not model.dense:
        importlib.import_module("hsi.data.patches")
    out = Path(args.out)
    device = torch.device("cuda" if args.device in ("cuda", "gpu") else "cpu")
    # forward-only before and after the pipeline: other jobs on the machine change the speed
    # from minute to minute, so the pipeline is compared with the mean of both
    forward_before = forward_only_seconds(model, h * w, device, args.batch_size, args.tile)
    reset = _reset_peak_rss()
    t0 = time.perf_counter()
    result = infer_scene(model, cube, cube_key="cube" if cube.suffix == ".h5" else None,
                         layout="HWC" if cube.suffix == ".h5" else None, out=out, tile=args.tile,
                         overlap=args.overlap, batch_size=args.batch_size, accelerator=args.device,
                         progress=False, overwrite=True)
    pipeline_s = time.perf_counter() - t0
    lifetime_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux; set-up included
    hwm_mb = _vm_hwm_mb()
    rss_mb = hwm_mb if reset and hwm_mb is not None else lifetime_mb
    forward_after = forward_only_seconds(model, h * w, device, args.batch_size, args.tile)
    forward_s = (forward_before + forward_after) / 2
    print(json.dumps({
        "model": args.model, "source": cube.suffix.lstrip(".").replace("h5", "hdf5"), "size": [h, w, c],
        "device": str(device), "threads": args.threads, "tile": args.tile, "overlap": args.overlap,
        "peak_rss_mb": round(rss_mb, 1), "peak_rss_is_pipeline_only": bool(reset and hwm_mb is not None),
        "lifetime_peak_rss_mb": round(lifetime_mb, 1), "pixels_per_s": round(h * w / pipeline_s, 1),
        "tile_pass_pixels_per_s": round(h * w / result.timings["tiles"], 1),
        "forward_only_pixels_per_s": round(h * w / forward_s, 1),
        "pipeline_over_forward": round(forward_s / pipeline_s, 3), "pipeline_s": round(pipeline_s, 2),
        "forward_s": round(forward_s, 2), "forward_s_before_after": [round(forward_before, 2), round(forward_after, 2)],
    }))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, nargs=3, default=[2048, 2048, 200], metavar=("H", "W", "C"))
    p.add_argument("--models", nargs="+", default=["spectral1d", "fcn"])
    p.add_argument("--sources", nargs="+", default=["hdf5", "npy"], choices=["hdf5", "npy"])
    p.add_argument("--tile", type=int, default=256)
    p.add_argument("--overlap", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--threads", type=int, default=2, help="torch threads of each child")
    p.add_argument("--workdir", default=None, help="keep the cube here between runs (default: a temporary folder)")
    p.add_argument("--json", action="store_true", help="one JSON line per (model, source)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--build", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--cube", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args)
        return 0
    if args.build:
        build_cube(Path(args.workdir), *args.size)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench_infer_") as tmp:
        folder = Path(args.workdir or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        # Linux copies a parent's ru_maxrss into the children it forks, so the parent must
        # never grow: the cube is written by a child process of its own.
        build = [sys.executable, __file__, "--build", "--workdir", str(folder), "--size", *map(str, args.size)]
        subprocess.run(build, check=True)
        paths = {"hdf5": folder / "cube.h5", "npy": folder / "cube.npy"}
        if not args.json:
            gb = np.prod(args.size) * 4 / 1e9
            print(f"cube {args.size[0]} x {args.size[1]} x {args.size[2]} float32 ({gb:.2f} GB) ready in "
                  f"{time.perf_counter() - t0:.0f} s: {folder}")
        rows = []
        for model in args.models:
            for source in args.sources:
                cmd = [sys.executable, __file__, "--child", "--model", model, "--cube", str(paths[source]),
                       "--out", str(folder / f"out_{model}_{source}"), "--size", *map(str, args.size),
                       "--tile", str(args.tile), "--overlap", str(args.overlap), "--batch-size", str(args.batch_size),
                       "--device", args.device, "--threads", str(args.threads)]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    print(proc.stderr[-3000:], file=sys.stderr)
                    return proc.returncode
                row = json.loads(proc.stdout.strip().splitlines()[-1])
                rows.append(row)
                if args.json:
                    print(json.dumps(row), flush=True)
        if not args.json:
            print(f"{'model':8} {'source':6} {'peak RSS MB':>11} {'pipeline px/s':>14} {'forward px/s':>13} {'ratio':>6}")
            for r in rows:
                print(f"{r['model']:8} {r['source']:6} {r['peak_rss_mb']:11.0f} {r['pixels_per_s']:14.0f} "
                      f"{r['forward_only_pixels_per_s']:13.0f} {100 * r['pipeline_over_forward']:5.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
