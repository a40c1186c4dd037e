"""Whole-scene inference next to what users pick between: the raw read, MONAI, the classic per-window loop.

Synthetic ``H x W x C`` float32 cubes are written once into a work folder as chunked HDF5
(chunks 64 x 64 x C) and as ``.npy``. Every row runs in a fresh child process (so its peak
RSS is its own: ``VmHWM`` after ``5`` is written to ``/proc/self/clear_refs`` just before the
timed part, libraries imported and the model built beforehand), rows round-robin over
``--repeat`` rounds (the speed of a shared machine drifts between minutes), and each row
reports the median speed and the largest peak RSS of its runs. Rows (``row``):

- ``raw_read``: the file read window by window (256 x 256 tiles) into one reused float32
  buffer (``.npy``: the fastest of a copy out of the memory map, ``os.preadv`` row by row,
  and ``os.preadv`` with each tile's rows shared between ``--threads`` threads, reported as
  ``mmap_s``, ``preadv_s`` and ``preadv_threads_s``; HDF5: ``read_direct`` per window): what
  the disk and the page cache allow (``model`` is ``free``, the row it bounds);
- ``pipeline``: :func:`hsi.infer.infer_scene` from the file into an output folder (reading,
  preprocessing, forward passes, maps, PNGs, ENVI file: outputs included); ``cpu_s`` is the
  CPU time of all the process's threads meanwhile (torch's threads spin a while after each
  parallel step, and that counts too): with ``--threads`` cores, no run is shorter than
  ``cpu_s / threads`` minus the spinning;
- ``forward_only``: the network alone on the same number of pixels, inputs ready (fcn:
  262 x 262 blocks; patch-centre models: batches of windows as the pipeline feeds them);
- ``monai``: MONAI's ``sliding_window_inference`` on the same network (channels-last
  weights, as hsi runs it) with the whole cube in memory, preprocessed in place, 256 x 256
  windows, argmax and confidence after it; ``load_s`` is the ``np.load`` of the cube,
  reported apart and not counted in ``pixels_per_s`` (it counts in the peak RSS);
- ``classic_loop``: the per-window loop of DeepHyperX's ``test()``: the preprocessed cube
  padded in memory, windows from a generator (stride 1), ``grouper`` batches of 100,
  ``np.copy`` + ``transpose(0, 3, 1, 2)``, the outputs summed unweighted into a
  probability image, argmax at the end (its ``np.load`` not counted either).

Models (``model``): ``free`` (a dense network whose logits are its first K input bands:
a forward pass that costs nothing, so the host pipeline is measured alone), ``fcn`` and
the patch-centre models at the patch size ``hsi train`` gives them (``spectral1d`` P 1,
``cnn2d`` P 11, ...), after the PCA it gives them (``cnn3d`` and ``hybridsn``: 30
components). Untrained networks with a min-max pipeline fitted on the first rows: speed
does not depend on the weights.

    python benchmarks/bench_infer.py --quick [--json] [--device cpu|cuda] [--workdir DIR]
    python benchmarks/bench_infer.py [--repeat 3] [--patch-models cnn2d spectral1d cnn3d] [--overlap 32]

``--quick`` (about 3-5 minutes on 2 cores): free and raw read at 1024^2 and 2048^2 x 200
(npy and HDF5), fcn at 1024^2 x 200 (pipeline npy and HDF5, forward only, MONAI),
cnn2d, cnn3d and hybridsn at 128^2 and spectral1d at 256^2 (pipeline, forward only, classic
loop), one round.
Without it: fcn at 2048^2 too and fcn with ``--overlap`` (gaussian) against MONAI with the
same overlap, three rounds. Pipeline rows are warm: one
small scene goes through ``infer_scene`` with outputs before the timed one, and the raw
read and pipeline rows read their file once, untimed, so both start from the page cache.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

K = 16  # classes of every benchmark model
#: the children import this checkout's ``hsi`` (whatever an installed copy points at)
CHILD_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(Path(__file__).resolve().parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])])}
TILE = 256


def build_cube(folder: Path, height: int, width: int, bands: int, seed: int = 0) -> dict[str, Path]:
    """Write the cube strip by strip as chunked HDF5 and ``.npy`` (never whole in memory); returns the paths."""
    import h5py

    stem = f"cube_{height}x{width}x{bands}"
    paths = {"h5": folder / f"{stem}.h5", "npy": folder / f"{stem}.npy"}
    if all(p.exists() for p in paths.values()):
        return paths
    rng = np.random.default_rng(seed)
    tmp_npy, tmp_h5 = folder / f".{stem}.npy.tmp", folder / f".{stem}.h5.tmp"
    npy = np.lib.format.open_memmap(tmp_npy, mode="w+", dtype=np.float32, shape=(height, width, bands))
    base = rng.random(bands, dtype=np.float32)
    with h5py.File(tmp_h5, "w") as f:
        ds = f.create_dataset("cube", shape=(height, width, bands), dtype="f4", chunks=(64, 64, bands))
        for start in range(0, height, 64):
            stop = min(start + 64, height)
            strip = base + 0.1 * rng.random((stop - start, width, bands), dtype=np.float32)
            ds[start:stop] = strip
            npy[start:stop] = strip
    npy.flush()
    del npy
    tmp_npy.rename(paths["npy"])
    tmp_h5.rename(paths["h5"])
    return paths


class FreeNet:
    """Factory of the model that costs nothing (a class inside a function cannot be pickled; none needs to be)."""

    @staticmethod
    def build(bands: int):
        import torch

        class Free(torch.nn.Module):
            dense = True
            receptive_radius = 0
            num_classes = K

            def __init__(self) -> None:
                super().__init__()
                self.anchor = torch.nn.Parameter(torch.zeros(1))  # a device to move to

            def forward_dense(self, x):
                return x[:, :K]

            def forward(self, x):
                return x[:, :K, x.shape[2] // 2, x.shape[3] // 2]

        return Free()


def make_model(name: str, cube_path: Path, bands: int):
    """An :class:`hsi.infer.InferenceModel` with untrained weights and a min-max pipeline fitted on 8 x 1024 pixels.

    The same number of pixels at every scene size: the fit's freed memory stays part of the
    process, and it would otherwise grow with the scene's width before any row is timed.
    Models that ``hsi train`` gives a PCA on many bands (``cnn3d``, ``hybridsn``: 30
    components) get it here too, after the scaling.
    """
    import torch

    from hsi.data.patches import DEFAULT_PATCH_SIZE
    from hsi.infer import InferenceModel
    from hsi.infer.sources import open_scene_source
    from hsi.models import build_model, recommended_patch_size, recommended_pca
    from hsi.preprocess import make_pipeline
    from hsi.scenes.palette import make_palette

    torch.manual_seed(0)
    src = open_scene_source(cube_path, "cube" if cube_path.suffix == ".h5" else None,
                            "HWC" if cube_path.suffix == ".h5" else None)
    sample = src.read_window(slice(0, 8), slice(0, 1024))
    src.close()
    pca = None if name == "free" else recommended_pca(name, bands)  # as ``hsi train`` decides it
    pipe = make_pipeline(scaling="minmax", pca=pca).fit(sample)
    if name == "free":
        net, patch = FreeNet.build(bands), 1
    else:
        patch = recommended_patch_size(name, DEFAULT_PATCH_SIZE)  # as in a checkpoint from ``hsi train --model name``
        net = build_model(name, num_bands=pca or bands, num_classes=K, patch_size=patch)
    return InferenceModel(net=net.eval(), pipeline=pipe, patch_size=patch, padding="reflect",
                          class_names=[f"class_{i}" for i in range(1, K + 1)], palette=make_palette(K),
                          label_values=list(range(1, K + 1)), wavelengths=None, num_bands_in=bands,
                          source=f"untrained {name}")


def _reset_peak_rss() -> bool:
    """Reset this process's ``VmHWM`` to its current resident set (Linux >= 4.0); False where not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _vm_hwm_mb() -> float:
    """Peak resident set of this process since start or the last :func:`_reset_peak_rss` (Linux), else ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _vm_rss_mb() -> float:
    """Resident set of this process now (Linux; 0 elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def _sync(device) -> None:
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def raw_read_seconds(cube: Path, threads: int = 1) -> tuple[float, dict]:
    """Read the whole file tile by tile into one reused float32 buffer, the fastest way measured: (seconds, extras).

    ``.npy``: a copy out of a memory map (pages let go of after each row of tiles, as a run
    must), ``os.preadv`` row by row (the pipeline's read), and the same with each tile's
    rows shared between ``threads`` threads; the fastest counts and all are reported
    (``mmap_s``, ``preadv_s``, ``preadv_threads_s``). HDF5: ``read_direct`` per window
    (h5py runs one call at a time, so threads would not read faster).
    """
    if cube.suffix == ".npy":
        ways = {"mmap_s": _npy_mmap_read_seconds(cube), "preadv_s": _npy_preadv_seconds(cube),
                "preadv_threads_s": _npy_preadv_seconds(cube, threads)}
        return min(ways.values()), ways
    import h5py

    with h5py.File(cube, "r") as f:
        ds = f["cube"]
        h, w, c = ds.shape
        buf = np.empty((TILE, TILE, c), np.float32)
        t0 = time.perf_counter()
        for y in range(0, h, TILE):
            for x in range(0, w, TILE):
                ds.read_direct(buf, np.s_[y : y + TILE, x : x + TILE], np.s_[: min(TILE, h - y), : min(TILE, w - x)])
        return time.perf_counter() - t0, {}


def _warm_page_cache(cube: Path) -> None:
    """Read ``cube`` once, untimed, so that the rows that read it start from the page cache alike."""
    buf = bytearray(16 << 20)
    with open(cube, "rb", buffering=0) as f:
        while f.readinto(buf):
            pass


def _npy_mmap_read_seconds(cube: Path) -> float:
    """Seconds to copy every tile out of a memory map of ``cube`` into one buffer."""
    import mmap

    arr = np.load(cube, mmap_mode="r")
    buf = np.empty((TILE, TILE, arr.shape[2]), np.float32)
    t0 = time.perf_counter()
    for y in range(0, arr.shape[0], TILE):
        for x in range(0, arr.shape[1], TILE):
            win = arr[y : y + TILE, x : x + TILE]
            np.copyto(buf[: win.shape[0], : win.shape[1]], win)
        arr._mmap.madvise(mmap.MADV_DONTNEED)  # as a run must: pages not kept resident
    return time.perf_counter() - t0


def _npy_preadv_seconds(cube: Path, threads: int = 1) -> float:
    """Seconds to read every tile of ``cube`` (float32 HWC) into one buffer with ``os.preadv``, a row at a time.

    With ``threads`` > 1 each tile's rows are shared between that many threads (``preadv``
    releases the GIL), the tile done before the next starts.
    """
    from concurrent.futures import ThreadPoolExecutor

    arr = np.load(cube, mmap_mode="r")
    (h, w, c), offset = arr.shape, int(arr.offset)
    del arr
    buf = np.empty((TILE, TILE, c), np.float32)
    fd = os.open(cube, os.O_RDONLY)

    def read_rows(y: int, x: int, rows: range) -> None:
        tw = min(TILE, w - x)
        for i in rows:
            os.preadv(fd, [memoryview(buf[i, :tw]).cast("B")], offset + ((y + i) * w + x) * c * 4)

    try:
        with ThreadPoolExecutor(max_workers=max(1, threads - 1)) as helpers:
            t0 = time.perf_counter()
            for y in range(0, h, TILE):
                n = min(TILE, h - y)
                parts = [range(n * k // threads, n * (k + 1) // threads) for k in range(max(1, threads))]
                for x in range(0, w, TILE):
                    shared = [helpers.submit(read_rows, y, x, rows) for rows in parts[1:]]
                    read_rows(y, x, parts[0])
                    for future in shared:
                        future.result()
            return time.perf_counter() - t0
    finally:
        os.close(fd)


def pipeline_seconds(model, cube: Path, out: Path, args) -> tuple[float, float]:
    """``infer_scene`` from the file with outputs; (total seconds, tile-pass seconds)."""
    from hsi.infer import infer_scene

    h5 = cube.suffix == ".h5"
    t0 = time.perf_counter()
    result = infer_scene(model, cube, cube_key="cube" if h5 else None, layout="HWC" if h5 else None, out=out,
                         tile=TILE, overlap=args.overlap if model.dense else 0, blend=args.blend,
                         batch_size=args.batch_size, accelerator=args.device, progress=False, overwrite=True)
    return time.perf_counter() - t0, result.timings["tiles"]


def forward_only_seconds(model, n_pixels: int, device, batch_size: int) -> float:
    """Seconds of forward passes alone over ``n_pixels`` pixels, inputs made beforehand, in the pipeline's format.

    Patch-centre models run the whole network on every window, as the classic loop does;
    the pipeline may run all windows of a block at once (:class:`hsi.models.WindowMap`) or
    share their first layer between windows (:mod:`hsi.infer.stem`), and so run ahead of this row.
    """
    import torch

    from hsi.infer.predict import window_batch
    from hsi.models import channels_last_weights

    c = getattr(model.net, "num_bands", model.num_bands_in)  # after a PCA, the components
    net = channels_last_weights(model.net.to(device))
    with torch.no_grad():
        if model.dense:
            r = model.halo
            x = torch.rand(1, TILE + 2 * r, TILE + 2 * r, c, device=device).permute(0, 3, 1, 2)  # HWC blocks
            n, run = -(-n_pixels // (TILE * TILE)), net.forward_dense
        else:
            p, b = model.patch_size, window_batch(net, device, batch_size)
            x = torch.rand(b, p, p, c, device=device).permute(0, 3, 1, 2)  # channels-last, as gathered
            n, run = -(-n_pixels // b), net
        run(x)  # warm-up
        _sync(device)
        t0 = time.perf_counter()
        for _ in range(n):
            run(x).cpu()
        _sync(device)
        return time.perf_counter() - t0


def _load_cube(cube: Path) -> np.ndarray:
    """The whole cube in memory (float32, writable)."""
    if cube.suffix == ".npy":
        return np.load(cube)
    import h5py

    with h5py.File(cube, "r") as f:
        return f["cube"][...]


def monai_seconds(model, cube: Path, device, args) -> tuple[float, float]:
    """MONAI ``sliding_window_inference`` over the cube in memory: (seconds without the load, load seconds)."""
    import torch
    from monai.inferers import sliding_window_inference

    from hsi.models import channels_last_weights

    net = channels_last_weights(model.net.to(device))
    t0 = time.perf_counter()
    arr = _load_cube(cube)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    model.pipeline.transform(arr, out=arr)  # per-band scaling in place, as a user with the cube in memory would
    x = torch.from_numpy(arr).permute(2, 0, 1)[None].to(device)
    with torch.no_grad():
        logits = sliding_window_inference(x, (TILE, TILE), 1, net.forward_dense, overlap=args.overlap / TILE,
                                          mode="gaussian" if args.overlap else "constant")
        confidence, labels = torch.softmax(logits, dim=1).max(dim=1)
        labels, confidence = (labels + 1).to(torch.uint8).cpu().numpy(), confidence.cpu().numpy()
    _sync(device)
    return time.perf_counter() - t0, load_s


def classic_seconds(model, cube: Path, device) -> tuple[float, float]:
    """DeepHyperX's ``test()`` loop on the cube in memory: (seconds without the load, load seconds)."""
    import itertools

    import torch

    t0 = time.perf_counter()
    arr = _load_cube(cube)
    load_s = time.perf_counter() - t0
    net, p = model.net.to(device), model.patch_size  # weights as built: the classic loop does no format work
    t0 = time.perf_counter()
    img = model.pipeline.transform(arr)
    r = p // 2
    img = np.pad(img, ((r, r), (r, r), (0, 0)), mode="reflect")

    def sliding_window(image):
        for x in range(0, image.shape[0] - p + 1):
            for y in range(0, image.shape[1] - p + 1):
                yield image[x : x + p, y : y + p], x, y, p, p

    def grouper(n, iterable):
        it = iter(iterable)
        while True:
            chunk = tuple(itertools.islice(it, n))
            if not chunk:
                return
            yield chunk

    probs = np.zeros((*arr.shape[:2], K), dtype=np.float32)
    with torch.no_grad():
        for batch in grouper(100, sliding_window(img)):
            data = torch.from_numpy(np.copy([b[0] for b in batch]).transpose(0, 3, 1, 2)).to(device)
            output = net(data).to("cpu").numpy()
            for (_, x, y, _w, _h), out in zip(batch, output):
                probs[x, y] += out  # the window at padded (x, y) is centred on pixel (x, y)
    labels = probs.argmax(axis=-1) + 1
    del labels
    _sync(device)
    return time.perf_counter() - t0, load_s


def child(args: argparse.Namespace) -> None:
    """One run of one row; prints one JSON line."""
    import importlib

    import torch

    torch.set_num_threads(args.threads)
    for name in ("matplotlib.figure", "hsi.viz", "hsi.infer.metrics", "hsi.infer.write", "hsi.data.patches"):
        importlib.import_module(name)  # imported before timing, as torch is
    if args.row == "monai":
        importlib.import_module("monai.inferers")
    cube = Path(args.cube)
    h, w, c = args.size
    device = torch.device("cuda" if args.device in ("cuda", "gpu") else "cpu")
    model = None if args.row == "raw_read" else make_model(args.model, cube, c)
    if args.row == "pipeline":  # warm: every module and first call of the outputs (PNG, ENVI, GeoTIFF) before timing
        from hsi.infer import infer_scene

        warm = np.random.default_rng(0).random((64, 64, c), dtype=np.float32)
        infer_scene(model, warm, out=Path(args.out + "_warm"), tile=TILE, progress=False, overwrite=True)
        import gc

        from hsi.infer.predict import release_freed_memory

        gc.collect()
        release_freed_memory()  # what the warm-up freed is not the timed run's memory
    if args.row in ("raw_read", "pipeline"):
        _warm_page_cache(cube)
    extra: dict = {"rss_at_start_mb": round(_vm_rss_mb(), 1)}  # libraries and model: part of every peak
    reset = _reset_peak_rss()
    if args.row == "raw_read":
        seconds, read_extra = raw_read_seconds(cube, args.threads)
        extra.update(read_extra)
    elif args.row == "pipeline":
        cpu_started = time.process_time()
        seconds, tiles_s = pipeline_seconds(model, cube, Path(args.out), args)
        extra["cpu_s"] = time.process_time() - cpu_started  # every thread's, torch's spin-waits included
        extra["tile_pass_pixels_per_s"] = round(h * w / tiles_s, 1)
    elif args.row == "forward_only":
        seconds = forward_only_seconds(model, h * w, device, args.batch_size)
    elif args.row == "monai":
        seconds, extra["load_s"] = monai_seconds(model, cube, device, args)
    else:
        seconds, extra["load_s"] = classic_seconds(model, cube, device)
    row = {"row": args.row, "model": args.model, "source": cube.suffix.lstrip("."), "size": [h, w, c],
           "patch_size": None if model is None else model.patch_size, "overlap": args.overlap,
           "device": str(device), "threads": args.threads, "pixels_per_s": round(h * w / seconds, 1),
           "peak_rss_mb": round(_vm_hwm_mb(), 1), "peak_rss_is_row_only": reset, "seconds": round(seconds, 3),
           **{k: round(v, 3) if isinstance(v, float) else v for k, v in extra.items()}}
    print(json.dumps(row))


def plan_rows(args: argparse.Namespace) -> list[dict]:
    """The rows to run: ``{"row", "model", "source", "size", "overlap"}``."""
    big, small = [2048, 2048, 200], [1024, 1024, 200]
    fcn_sizes = [small] if args.quick else [small, big]
    rows = []
    for size in (small, big):
        for source in ("npy", "h5"):
            rows += [{"row": r, "model": "free", "source": source, "size": size, "overlap": 0}
                     for r in ("raw_read", "pipeline")]
    for size in fcn_sizes:
        rows += [{"row": "pipeline", "model": "fcn", "source": s, "size": size, "overlap": 0} for s in ("npy", "h5")]
        rows += [{"row": r, "model": "fcn", "source": "npy", "size": size, "overlap": 0}
                 for r in ("forward_only", "monai")]
    if not args.quick and args.overlap:
        rows += [{"row": r, "model": "fcn", "source": "npy", "size": small, "overlap": args.overlap}
                 for r in ("pipeline", "monai")]
    patch_sizes = {"spectral1d": [256, 256, 200]}  # scenes where the outputs' fixed 0.5 s weigh little
    for name in args.patch_models:
        size = patch_sizes.get(name, [128, 128, 200])
        rows += [{"row": r, "model": name, "source": "npy", "size": size, "overlap": 0}
                 for r in ("pipeline", "forward_only", "classic_loop")]
    return rows


def _selected(spec: dict, only: list[str] | None) -> bool:
    """True when ``spec`` matches one of the ``ROW:MODEL`` patterns (all rows without any)."""
    if not only:
        return True
    for pattern in only:
        row, _, model = pattern.partition(":")
        if row in ("*", spec["row"]) and model in ("", "*", spec["model"]):
            return True
    return False


def run_row(spec: dict, paths: dict, folder: Path, args: argparse.Namespace) -> dict:
    """One run of ``spec`` in a child process; its JSON row."""
    key = tuple(spec["size"])
    cmd = [sys.executable, __file__, "--child", "--row", spec["row"], "--model", spec["model"],
           "--cube", str(paths[key][spec["source"]]), "--out", str(folder / f"out_{spec['model']}_{spec['source']}"),
           "--size", *map(str, spec["size"]), "--overlap", str(spec["overlap"]), "--blend", args.blend,
           "--batch-size", str(args.batch_size), "--device", args.device, "--threads", str(args.threads)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=CHILD_ENV)
    if proc.returncode != 0:  # one broken row is reported, and the others still run
        print(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}", file=sys.stderr, flush=True)
        return {**spec, "error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summarize(runs: list[dict]) -> dict:
    """Median speed and largest peak RSS of the runs of one row (the first run's other fields).

    A row with a failed run is reported with that run's ``error`` and no speed.
    """
    failed = [r for r in runs if "error" in r]
    if failed:
        return dict(failed[0])
    row = dict(runs[0])
    row["pixels_per_s"] = round(statistics.median(r["pixels_per_s"] for r in runs), 1)
    row["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    row["runs_pixels_per_s"] = [r["pixels_per_s"] for r in runs]
    return row


def _reference(row: dict, rows: list[dict]) -> dict | None:
    """The row ``row`` is compared with: raw read (free), MONAI (fcn), classic loop (patch-centre models)."""
    if row["row"] != "pipeline":
        return None
    want = "raw_read" if row["model"] == "free" else "monai" if row["model"] == "fcn" else "classic_loop"
    for r in rows:
        same_source = r["source"] == row["source"] or want != "raw_read"
        if (r["row"] == want and r["model"] == row["model"] and r["size"] == row["size"] and same_source
                and r["overlap"] == row["overlap"]):
            return r
    return None


def print_table(rows: list[dict]) -> None:
    """The rows as a Markdown table, each pipeline row with its ratio to its reference."""
    print("| row | model | source | size | overlap | px/s | peak RSS MB | vs | speed ratio | RSS ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        size = "x".join(map(str, r["size"]))
        if "error" in r:
            print(f"| {r['row']} | {r['model']} | {r['source']} | {size} | {r['overlap']} | failed: {r['error']} |")
            continue
        ref = _reference(r, rows)
        vs = ratio = rss = ""
        if ref is not None and "error" not in ref:
            vs, ratio = ref["row"], f"{r['pixels_per_s'] / ref['pixels_per_s']:.2f}x"
            rss = f"{r['peak_rss_mb'] / ref['peak_rss_mb']:.2f}x"
        print(f"| {r['row']} | {r['model']} | {r['source']} | {size} | {r['overlap']} | {r['pixels_per_s']:,.0f} | "
              f"{r['peak_rss_mb']:,.0f} | {vs} | {ratio} | {rss} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the short set of rows, one round (a few minutes)")
    p.add_argument("--repeat", type=int, default=None, help="rounds over the rows (default 1 with --quick, else 3)")
    p.add_argument("--patch-models", nargs="+", default=["cnn2d", "spectral1d", "cnn3d", "hybridsn"])
    p.add_argument("--overlap", type=int, default=32, help="fcn overlap of the extra rows without --quick")
    p.add_argument("--blend", default="gaussian")
    p.add_argument("--batch-size", type=int, default=512, help="infer's batch_size (an upper bound on the CPU)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--threads", type=int, default=2, help="torch threads of each child")
    p.add_argument("--workdir", default=None, help="keep the cubes here between runs (default: a temporary folder)")
    p.add_argument("--json", action="store_true", help="one JSON line per row")
    p.add_argument("--only", nargs="+", default=None, metavar="ROW:MODEL",
                   help="run only these rows, e.g. pipeline:fcn monai:fcn (a part may be *)")
    for hidden in ("--row", "--model", "--cube", "--out"):
        p.add_argument(hidden, help=argparse.SUPPRESS)
    p.add_argument("--size", type=int, nargs=3, help=argparse.SUPPRESS)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--build", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args)
        return 0
    if args.build:
        build_cube(Path(args.workdir), *args.size)
        return 0
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Build the cubes (in a child: a parent's peak RSS is handed to the children it forks), run the rows, print."""
    specs = [s for s in plan_rows(args) if _selected(s, args.only)]
    repeat = args.repeat or (1 if args.quick else 3)
    with tempfile.TemporaryDirectory(prefix="bench_infer_") as tmp:
        folder = Path(args.workdir or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        paths = {}
        for size in sorted({tuple(s["size"]) for s in specs}):
            subprocess.run([sys.executable, __file__, "--build", "--workdir", str(folder), "--size", *map(str, size)],
                           check=True, env=CHILD_ENV)
            stem = folder / f"cube_{size[0]}x{size[1]}x{size[2]}"
            paths[size] = {"npy": stem.with_suffix(".npy"), "h5": stem.with_suffix(".h5")}
        if not args.json:
            print(f"cubes ready in {time.perf_counter() - t0:.0f} s: {folder}", flush=True)
        runs: list[list[dict]] = [[] for _ in specs]
        for _ in range(repeat):  # round-robin: every row sees the machine's drift alike
            for i, spec in enumerate(specs):
                runs[i].append(run_row(spec, paths, folder, args))
                print(f"run: {json.dumps(runs[i][-1])}", file=sys.stderr, flush=True)  # kept if a later row hangs
        rows = [summarize(r) for r in runs]
        if args.json:
            for row in rows:
                print(json.dumps(row), flush=True)
        else:
            print_table(rows)
        print(f"total {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 1 if any("error" in row for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
