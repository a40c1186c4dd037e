"""Accuracy of the default run, every model and the classical baselines, block split beside random split.

For each scene it trains, through the real command (``hsi train``), for each seed:

- the **default** configuration (no ``--model`` or ``--pca``): the headline row;
- each ``--models`` entry: deep models (``--pca`` added where the registry recommends one
  for the scene's band count) and the classical baselines ``svm`` and ``rf`` (same scene,
  split and preprocessing, centre-pixel spectra);

under a block split (buffer = patch_size // 2) and under a per-pixel random split, and
prints OA / AA / kappa as mean ± std over seeds with the mean wall time per run. The
random-split column is the number most papers report; the gap to the block split is the
leakage; the ``svm`` row is the bar a deep model has to clear.

    python benchmarks/bench_accuracy.py                                  # synthetic + Samson
    python benchmarks/bench_accuracy.py --scene samson --models svm ssnet --no-random
    python benchmarks/bench_accuracy.py --scene synthetic --scene-options height=72 --scene-options width=72
    python benchmarks/bench_accuracy.py --json                           # one JSON line per row
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED_SAMSON = REPO.parent / "shared" / "data" / "envi" / "samson"
DEFAULT_ROW = "default"
CLASSICAL = ("svm", "rf")
SCENE_OPTIONS = {"samson": ["purity=0.5"], "jasper_ridge": ["purity=0.5"], "urban": ["purity=0.5"]}


def _scenes(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """(name, root) pairs: Samson is read from ../shared/data when no --root is given."""
    scenes: list[tuple[str, str | None]] = []
    for name in args.scene:
        if name == "samson" and args.root is None:
            if not SHARED_SAMSON.is_dir():
                print(f"skipping samson: {SHARED_SAMSON} not found (give --root)", file=sys.stderr)
                continue
            scenes.append((name, str(SHARED_SAMSON)))
        else:
            scenes.append((name, args.root))
    return scenes


def command_line(scene: str, root: str | None, model: str, split: str, seed: int,
                 args: argparse.Namespace, out: Path, cache: Path, num_bands: int | None) -> list[str]:
    """The ``hsi train`` arguments of one run; ``model == "default"`` adds no --model/--pca."""
    argv = ["train", "--scene", scene]
    if root:
        argv += ["--root", root]
    for option in SCENE_OPTIONS.get(scene, []) + list(args.scene_options):
        argv += ["--scene-options", option]
    if model != DEFAULT_ROW:
        argv += ["--model", model]
        pca = _recommended_pca(model, num_bands)
        if pca is not None:
            argv += ["--pca", str(pca)]
    argv += ["--split", split, "--seed", str(seed), "--out", str(out), "--cache-dir", str(cache), "--no-progress"]
    if args.epochs is not None and model not in CLASSICAL:
        argv += ["--epochs", str(args.epochs)]
    return argv


def _recommended_pca(model: str, num_bands: int | None) -> int | None:
    if model in CLASSICAL or num_bands is None:
        return None
    from hsi.models import recommended_pca

    return recommended_pca(model, num_bands)


def run_one(argv: list[str], out: Path) -> dict[str, Any]:
    """Run one training and return its ``metrics.json`` (plus the measured wall time)."""
    started = time.perf_counter()
    from hsi.cli import main as hsi_main

    with contextlib.redirect_stdout(io.StringIO()):  # the command's own summary table
        code = hsi_main(argv)
    if code not in (0, None):
        raise RuntimeError(f"hsi {' '.join(argv)} exited with status {code}")
    metrics = json.loads((out / "metrics.json").read_text())
    metrics["wall_s"] = time.perf_counter() - started
    return metrics


def _num_bands(scene: str, root: str | None, args: argparse.Namespace) -> int:
    """Band count of the scene as loaded (before PCA), to apply the registry's PCA advice."""
    from hsi.scenes import load_scene

    options: dict[str, Any] = {}
    for item in SCENE_OPTIONS.get(scene, []) + list(args.scene_options):
        key, _, value = item.partition("=")
        options[key] = float(value) if "." in value else int(value) if value.lstrip("-").isdigit() else value
    return int(load_scene(scene, root=root, **options).cube.data.shape[2])


def _fmt(values: list[float], pct: bool = True) -> str:
    arr = np.asarray(values, dtype=float) * (100.0 if pct else 1.0)
    return f"{arr.mean():.1f} ± {arr.std():.1f}" if pct else f"{arr.mean():.3f} ± {arr.std():.3f}"


def _row(scene: str, model: str, splits: list[str], runs: dict[str, list[dict]], args: argparse.Namespace) -> dict:
    row: dict[str, Any] = {"scene": scene, "model": model, "seeds": args.seeds, "epochs": args.epochs}
    for split in splits:
        for key in ("oa", "aa", "kappa"):
            vals = [r[key] for r in runs[split]]
            row[f"{split}_{key}_mean"] = float(np.mean(vals))
            row[f"{split}_{key}_std"] = float(np.std(vals))
        row[f"{split}_s_per_run"] = float(np.mean([r["wall_s"] for r in runs[split]]))
        row[f"{split}_resolved_model"] = sorted({str(r.get("model")) for r in runs[split]})
    row["_runs"] = runs
    return row


def _row_text(row: dict, splits: list[str]) -> str:
    parts = [f"| {row['scene']} | {row['model']}"]
    for split in splits:
        runs = row["_runs"][split]
        parts.append(f"{_fmt([r['oa'] for r in runs])} | {_fmt([r['aa'] for r in runs])} | "
                     f"{_fmt([r['kappa'] for r in runs], pct=False)}")
    parts.append(f"{row[f'{splits[0]}_s_per_run']:.0f} |")
    return " | ".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run every (scene, row, split, seed) and print one line per row."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["svm", "rf", "ssnet", "fcn", "spectral1d", "cnn2d", "cnn3d", "hybridsn"],
                        help="rows after the default one: registry models and/or svm, rf")
    parser.add_argument("--no-default", action="store_true", help="skip the default-configuration row")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=None, help="--epochs of deep runs (default: the command's)")
    parser.add_argument("--scene", nargs="+", default=["synthetic", "samson"],
                        help="registry scenes (synthetic needs no files; samson is read from ../shared/data)")
    parser.add_argument("--root", default=None, help="data root of the --scene files (see `hsi scenes --guide`)")
    parser.add_argument("--scene-options", action="append", default=[], metavar="KEY=VALUE",
                        help="extra scene option for every run (e.g. height=72 for a smaller synthetic scene)")
    parser.add_argument("--no-random", action="store_true", help="skip the random-split comparison")
    parser.add_argument("--json", action="store_true", help="one JSON line per (scene, row)")
    args = parser.parse_args(argv)

    import warnings

    warnings.filterwarnings("ignore")
    splits = ["block"] if args.no_random else ["block", "random"]
    models = ([] if args.no_default else [DEFAULT_ROW]) + list(args.models)
    if not args.json:
        header = " | ".join(f"{s} OA % | {s} AA % | {s} kappa" for s in splits)
        print(f"| scene | model | {header} | s/run ({splits[0]}) |", flush=True)
    with tempfile.TemporaryDirectory(prefix="hsi-bench-") as tmp:
        work = Path(tmp)
        for scene, root in _scenes(args):
            num_bands = _num_bands(scene, root, args)
            for model in models:
                runs: dict[str, list[dict]] = {}
                for split in splits:
                    runs[split] = []
                    for seed in args.seeds:
                        out = work / f"{scene}-{model}-{split}-{seed}"
                        cmd = command_line(scene, root, model, split, seed, args, out, work / "cache", num_bands)
                        runs[split].append(run_one(cmd, out))
                row = _row(scene, model, splits, runs, args)
                if args.json:
                    print(json.dumps({k: v for k, v in row.items() if not k.startswith("_")}), flush=True)
                else:
                    print(_row_text(row, splits), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
