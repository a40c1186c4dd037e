"""The timed part of each of ``bench_infer.py``'s rows: raw read, pipeline, forward only, MONAI, classic loop.

The MONAI and classic-loop rows are split into a function that classifies a cube already in
memory (:func:`monai_labels`, :func:`classic_loop_labels`: what the tests compare with the
pipeline's maps, so every ratio compares the same work) and one that times it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from _infer_inputs import TILE


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


def warm_page_cache(cube: Path) -> None:
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


def monai_labels(net, img: np.ndarray, device, overlap: int) -> tuple[np.ndarray, np.ndarray]:
    """MONAI's ``sliding_window_inference`` of ``net`` over the preprocessed ``(H, W, C)`` cube: (labels 1..K, confidence).

    :data:`TILE` x :data:`TILE` windows, ``overlap`` pixels of gaussian blending (none: constant),
    then the softmax's largest probability and its class, as hsi writes them.
    """
    import torch
    from monai.inferers import sliding_window_inference

    x = torch.from_numpy(img).permute(2, 0, 1)[None].to(device)
    with torch.no_grad():
        logits = sliding_window_inference(x, (TILE, TILE), 1, net.forward_dense, overlap=overlap / TILE,
                                          mode="gaussian" if overlap else "constant")
        confidence, labels = torch.softmax(logits, dim=1).max(dim=1)
        return (labels[0] + 1).to(torch.uint8).cpu().numpy(), confidence[0].cpu().numpy()


def monai_seconds(model, cube: Path, device, args) -> tuple[float, float]:
    """:func:`monai_labels` over the cube in memory: (seconds without the load, load seconds)."""
    from hsi.models import channels_last_weights

    net = channels_last_weights(model.net.to(device))
    t0 = time.perf_counter()
    arr = _load_cube(cube)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    model.pipeline.transform(arr, out=arr)  # per-band scaling in place, as a user with the cube in memory would
    monai_labels(net, arr, device, args.overlap)
    _sync(device)
    return time.perf_counter() - t0, load_s


def classic_loop_labels(net, patch: int, img: np.ndarray, device) -> np.ndarray:
    """DeepHyperX's ``test()`` loop over the preprocessed ``(H, W, C)`` cube: labels 1..K of every pixel.

    The cube reflect-padded in memory, ``patch`` x ``patch`` windows from a generator (stride
    1), ``grouper`` batches of 100, ``np.copy`` + ``transpose(0, 3, 1, 2)``, the outputs
    summed unweighted into a score image, argmax at the end.
    """
    import itertools

    import torch

    r = patch // 2
    padded = np.pad(img, ((r, r), (r, r), (0, 0)), mode="reflect")

    def sliding_window(image):
        for x in range(0, image.shape[0] - patch + 1):
            for y in range(0, image.shape[1] - patch + 1):
                yield image[x : x + patch, y : y + patch], x, y, patch, patch

    def grouper(n, iterable):
        it = iter(iterable)
        while True:
            chunk = tuple(itertools.islice(it, n))
            if not chunk:
                return
            yield chunk

    scores = None
    with torch.no_grad():
        for batch in grouper(100, sliding_window(padded)):
            data = torch.from_numpy(np.copy([b[0] for b in batch]).transpose(0, 3, 1, 2)).to(device)
            output = net(data).to("cpu").numpy()
            if scores is None:
                scores = np.zeros((*img.shape[:2], output.shape[1]), dtype=np.float32)
            for (_, x, y, _w, _h), out in zip(batch, output):
                scores[x, y] += out  # the window at padded (x, y) is centred on pixel (x, y)
    return (scores.argmax(axis=-1) + 1).astype(np.uint8)


def classic_seconds(model, cube: Path, device) -> tuple[float, float]:
    """:func:`classic_loop_labels` over the cube in memory: (seconds without the load, load seconds)."""
    t0 = time.perf_counter()
    arr = _load_cube(cube)
    load_s = time.perf_counter() - t0
    net = model.net.to(device)  # weights as built: the classic loop does no format work
    t0 = time.perf_counter()
    classic_loop_labels(net, model.patch_size, model.pipeline.transform(arr), device)
    _sync(device)
    return time.perf_counter() - t0, load_s
