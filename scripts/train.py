"""Train a hyperspectral classifier on a scene and report OA / AA / kappa.

Examples
--------
    python scripts/train.py --scene indian_pines
    python scripts/train.py --scene synthetic --model hybridsn --pca 30 --epochs 20
    python scripts/train.py --cube my_cube.hdr --labels my_gt.mat --labels-key gt
    python scripts/train.py --config experiment.yaml --seed 3
    python scripts/train.py --resume runs/indian_pines-cnn2d-seed0/last.ckpt

Options given on the command line override those of ``--config``.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # scripts/inspect.py would shadow the stdlib ``inspect`` for every later import while this
    # folder is sys.path[0]; drop it before importing anything else.
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

import argparse  # noqa: E402
from pathlib import Path  # noqa: E402

HELP = {
    "scene": "registry scene to train on (synthetic, indian_pines, salinas, salinas_a, pavia_university, "
    "pavia_centre, ksc, botswana, samson, jasper_ridge, urban); synthetic needs no files",
    "root": "folder holding the scene files (None: $HSI_DATA_DIR, else ~/.cache/hsi; see data/README.md)",
    "download": "fetch a registry scene's missing files from their public URLs (verified, then kept under --root)",
    "cube": "train on this cube file instead of a registry scene (.mat, .h5, ENVI .hdr)",
    "labels": "label map for --cube (0 = unlabeled)",
    "cube_key": "variable / dataset name of the cube inside --cube (None: discovered)",
    "labels_key": "variable / dataset name of the labels inside --labels (None: discovered)",
    "test_labels": "test ground-truth map, for --split fixed (--labels is then the training map)",
    "test_labels_key": "variable / dataset name inside --test-labels (None: discovered)",
    "model": "network from the model registry (spectral1d, cnn3d, hybridsn, cnn2d, fcn)",
    "patch_size": "side of the square patch around each pixel (odd)",
    "pca": "PCA fitted on training pixels: a number of components (e.g. 30) or a variance fraction (e.g. 0.999)",
    "scaling": "per-band scaling fitted on training pixels: minmax, standardize or none",
    "split": "block (spatially disjoint blocks with a buffer; the default), random (per pixel; leaks, for "
    "comparison with the literature only) or fixed (train/test maps given)",
    "block_size": "side of the square blocks of the block split, in pixels",
    "buffer": "pixels left out of training around val/test blocks (None: patch_size // 2, so no training "
    "patch sees a test pixel)",
    "fractions": "train, val and test fractions, e.g. 0.6 0.2 0.2",
    "epochs": "maximum number of epochs (early stopping on val OA may end sooner)",
    "batch_size": "patches per batch",
    "lr": "learning rate",
    "weight_decay": "weight decay",
    "optimizer": "adamw, adam or sgd",
    "scheduler": "cosine, plateau or none",
    "label_smoothing": "cross-entropy label smoothing",
    "patience": "epochs without val OA improvement before early stopping",
    "seed": "seed of the split, the initialisation and the data order (same seed, same metrics)",
    "accelerator": "cpu, gpu, auto, ... (Lightning)",
    "devices": "number of devices, a comma list of ids, or auto (Lightning)",
    "strategy": "auto, ddp, ddp_spawn, ... (Lightning)",
    "num_workers": "DataLoader worker processes",
    "cache_dir": "where patch caches are kept (None: <out>/cache); a second run with the same inputs reuses it",
    "gather_on_device": "keep the preprocessed cube on the accelerator and cut patches there",
    "out": "output folder (None: runs/<scene>-<model>-seed<seed>)",
    "resume": "checkpoint to resume training from (e.g. <out>/last.ckpt)",
    "config": "YAML file with any of these options (names with _ or -)",
}


def build_parser() -> argparse.ArgumentParser:
    from hsi.training.config import TrainConfig

    defaults = TrainConfig()
    parser = argparse.ArgumentParser(
        prog="train.py",
        description=__doc__.split("\n\n")[0],
        epilog="Writes into --out: best.ckpt, last.ckpt, metrics.json, predictions.npz, confusion.png, "
        "curves.png, split.png and logs/.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--config", type=Path, default=None, help=HELP["config"])
    types = {
        "patch_size": int, "block_size": int, "buffer": int, "epochs": int, "batch_size": int,
        "patience": int, "seed": int, "num_workers": int,
        "pca": float, "lr": float, "weight_decay": float, "label_smoothing": float,
    }
    choices = {
        "scaling": ["minmax", "standardize", "none"],
        "split": ["block", "random", "fixed"],
        "optimizer": ["adamw", "adam", "sgd"],
        "scheduler": ["cosine", "plateau", "none"],
    }
    for name in TrainConfig.field_names():
        if name in ("scene_options", "progress"):
            continue
        flag = "--" + name.replace("_", "-")
        if name == "fractions":
            parser.add_argument(flag, type=float, nargs=3, metavar=("TRAIN", "VAL", "TEST"), help=HELP[name])
        elif name in ("gather_on_device", "download"):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=getattr(defaults, name), help=HELP[name])
        else:
            parser.add_argument(flag, type=types.get(name, str), choices=choices.get(name), default=getattr(defaults, name), help=HELP[name])
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="hide the progress bar")
    return parser


def parse_config(argv: list[str] | None = None):
    """Defaults, then the YAML file of ``--config``, then the command line."""
    from hsi.training.config import TrainConfig

    parser = build_parser()
    first, _ = parser.parse_known_args(argv)
    if first.config is not None:
        try:
            parser.set_defaults(**TrainConfig.from_yaml(first.config))
        except (OSError, ValueError) as err:
            parser.error(str(err))
    args = vars(parser.parse_args(argv))
    args.pop("config")
    if args.get("scaling") == "none":
        args["scaling"] = None
    return TrainConfig(**args)


def main(argv: list[str] | None = None) -> int:
    cfg = parse_config(argv)
    from hsi.errors import DatasetNotFoundError, HSIError
    from hsi.training.experiment import quiet_lightning, run_training

    quiet_lightning()

    try:
        metrics = run_training(cfg)
    except KeyboardInterrupt as err:
        print(f"\ninterrupted: {err}" if str(err) else "\ninterrupted", file=sys.stderr)
        return 130
    except (HSIError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        if isinstance(err, DatasetNotFoundError) and not cfg.download:
            print("(from this script: add --download to fetch them)", file=sys.stderr)
        return 2
    if metrics:
        print()
        print(metrics["summary"])
        print(f"\nbest epoch {metrics['best_epoch']}, fit {metrics['timing']['fit_s']:.1f} s; outputs in {Path(metrics['best_checkpoint']).parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
