"""Accuracy of every model under a block split, beside the same model under a random split.

For each (scene, model) it trains ``--seeds`` runs with a block split (buffer =
patch_size // 2) and the same runs with a per-pixel random split, and prints OA / AA /
kappa as mean ± std with the mean training time. The random-split column is the
number most papers report; the gap between the two is the leakage.

    python benchmarks/bench_accuracy.py                          # synthetic + Samson (if ../shared is there)
    python benchmarks/bench_accuracy.py --scene indian_pines --root ~/hsi-data
    python benchmarks/bench_accuracy.py --scene samson --models cnn2d fcn --seeds 0 1 2 --epochs 20 --json
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED_SAMSON = REPO.parent / "shared" / "data" / "envi" / "samson"


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


def _run(scene: str, root: str | None, model: str, split: str, seed: int, args: argparse.Namespace, work: Path) -> dict:
    from hsi.training.config import TrainConfig
    from hsi.training.experiment import run_training

    cfg = TrainConfig(
        scene=scene,
        root=root,
        model=model,
        split=split,
        seed=seed,
        epochs=args.epochs,
        patch_size=args.patch_size,
        pca=args.pca if model in ("hybridsn", "cnn2d", "cnn3d") else None,
        batch_size=args.batch_size,
        patience=args.epochs,
        out=str(work / f"{scene}-{model}-{split}-{seed}"),
        cache_dir=str(work / "cache"),
        progress=False,
    )
    return run_training(cfg)


def _fmt(values: list[float], pct: bool = True) -> str:
    arr = np.asarray(values, dtype=float) * (100.0 if pct else 1.0)
    return f"{arr.mean():6.2f} ± {arr.std():5.2f}" if pct else f"{arr.mean():.4f} ± {arr.std():.4f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["spectral1d", "cnn2d", "cnn3d", "hybridsn", "fcn"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--patch-size", type=int, default=11)
    parser.add_argument("--pca", type=int, default=30, help="PCA components for the spatial CNNs")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--scene", nargs="+", default=["synthetic", "samson"],
                        help="registry scenes (synthetic needs no files; samson is read from ../shared/data)")
    parser.add_argument("--root", default=None, help="data root of the --scene files (see data/README.md)")
    parser.add_argument("--no-random", action="store_true", help="skip the random-split comparison")
    parser.add_argument("--json", action="store_true", help="one JSON line per (scene, model)")
    args = parser.parse_args(argv)

    from hsi.training.experiment import quiet_lightning

    quiet_lightning(logging.WARNING)
    warnings.filterwarnings("ignore")
    splits = ["block"] if args.no_random else ["block", "random"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="hsi-bench-") as tmp:
        work = Path(tmp)
        for scene, root in _scenes(args):
            for model in args.models:
                row: dict = {"scene": scene, "model": model, "seeds": args.seeds, "epochs": args.epochs}
                for split in splits:
                    runs = []
                    for seed in args.seeds:
                        started = time.perf_counter()
                        m = _run(scene, root, model, split, seed, args, work)
                        runs.append({"oa": m["oa"], "aa": m["aa"], "kappa": m["kappa"], "s": time.perf_counter() - started})
                    for key in ("oa", "aa", "kappa"):
                        vals = [r[key] for r in runs]
                        row[f"{split}_{key}_mean"] = float(np.mean(vals))
                        row[f"{split}_{key}_std"] = float(np.std(vals))
                    row[f"{split}_train_s"] = float(np.mean([r["s"] for r in runs]))
                    row[f"_{split}_runs"] = runs
                rows.append(row)
                if args.json:
                    print(json.dumps({k: v for k, v in row.items() if not k.startswith("_")}), flush=True)
                else:
                    print(_row_text(row, splits), flush=True)
    return 0


def _row_text(row: dict, splits: list[str]) -> str:
    parts = [f"{row['scene']:<10} {row['model']:<10}"]
    for split in splits:
        runs = row[f"_{split}_runs"]
        parts.append(
            f"{split}: OA {_fmt([r['oa'] for r in runs])}  AA {_fmt([r['aa'] for r in runs])}  "
            f"kappa {_fmt([r['kappa'] for r in runs], pct=False)}  {row[f'{split}_train_s']:.0f} s/run"
        )
    return " | ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
