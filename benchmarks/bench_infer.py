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

The cubes and models are made in ``_infer_inputs.py`` and each row's timed part is in
``_infer_rows.py``; this script plans the rows, runs them in children and reports.
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

from _infer_inputs import TILE, build_cube, make_model
from _infer_rows import (classic_seconds, forward_only_seconds, monai_seconds, pipeline_seconds,
                         raw_read_seconds, warm_page_cache)

#: the children import this checkout's ``hsi`` (whatever an installed copy points at)
CHILD_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(Path(__file__).resolve().parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])])}


def child(args: argparse.Namespace) -> None:
    """One run of one row; prints one JSON line."""
    import importlib

    import torch

    from hsi._memory import peak_rss_mb, reset_peak_rss, status_kb

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

        from hsi._memory import release_freed_memory

        gc.collect()
        release_freed_memory()  # what the warm-up freed is not the timed run's memory
    if args.row in ("raw_read", "pipeline"):
        warm_page_cache(cube)
    # libraries and model: part of every peak
    extra: dict = {"rss_at_start_mb": round((status_kb("VmRSS") or 0) / 1024.0, 1)}
    reset = reset_peak_rss()
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
           "peak_rss_mb": round(peak_rss_mb(), 1), "peak_rss_is_row_only": reset, "seconds": round(seconds, 3),
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


def parser() -> argparse.ArgumentParser:
    """The command line (the hidden options are a child's and the cube builder's)."""
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
    p.add_argument("--json", action="store_true",
                   help="one JSON line per row, then one line {\"machine\": ..., \"seconds\": ...}")
    p.add_argument("--only", nargs="+", default=None, metavar="ROW:MODEL",
                   help="run only these rows, e.g. pipeline:fcn monai:fcn (a part may be *)")
    for hidden in ("--row", "--model", "--cube", "--out"):
        p.add_argument(hidden, help=argparse.SUPPRESS)
    p.add_argument("--size", type=int, nargs=3, help=argparse.SUPPRESS)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--build", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
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
        seconds = time.perf_counter() - t0
        if args.json:
            from _machine import machine_facts

            for row in rows:
                print(json.dumps(row), flush=True)
            print(json.dumps({"machine": machine_facts(args.device), "seconds": round(seconds, 1)}), flush=True)
        else:
            print_table(rows)
        print(f"total {seconds:.0f} s", file=sys.stderr)
    return 1 if any("error" in row for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
