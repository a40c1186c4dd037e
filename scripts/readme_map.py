"""The README's map picture: ``python scripts/readme_map.py`` rewrites ``docs/_static/map-synthetic.png``.

A short ``hsi train`` (the default model, a few epochs) on a small synthetic scene, then
``hsi infer --format png``; its ``map.png`` is the picture. Offline, about a minute on two CPU
cores; the same seed gives the same map. ``--out`` writes it elsewhere, ``--work`` keeps the
run and the maps in a folder of your choice (default: a temporary folder, removed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

if __name__ == "__main__":
    # scripts/inspect.py would shadow the stdlib ``inspect`` while this folder is sys.path[0].
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

#: where the README's picture lives (relative to the repository root)
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "docs" / "_static" / "map-synthetic.png"
#: the scene and the training (but its epochs): small enough for a minute on a laptop, big enough to show regions
TRAIN = ["train", "--scene", "synthetic", "--scene-options", "height=64", "width=64", "bands=24", "n_classes=6",
         "--block-size", "8", "--seed", "0", "--no-progress"]


def make_picture(work: Path, out: Path, epochs: int) -> Path:
    """Train, map the scene, and copy its ``map.png`` to ``out``; returns ``out``."""
    from hsi._atomic import write_bytes_atomic
    from hsi.cli import main as hsi

    if hsi([*TRAIN, "--epochs", str(epochs), "--out", str(work / "run")]) != 0:
        raise SystemExit("hsi train failed (its error line is above)")
    if hsi(["infer", "--checkpoint", str(work / "run" / "best.ckpt"), "--format", "png", "--no-progress",
            "--out", str(work / "maps")]) != 0:
        raise SystemExit("hsi infer failed (its error line is above)")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(out, (work / "maps" / "map.png").read_bytes())
    return out


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and write the picture."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the PNG to write (default: %(default)s)")
    parser.add_argument("--work", type=Path, default=None, help="keep the run and maps here (default: a temporary "
                                                                 "folder, removed)")
    parser.add_argument("--epochs", type=int, default=8, help="training epochs (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.work is not None:
        path = make_picture(args.work, args.out, args.epochs)
    else:
        work = Path(tempfile.mkdtemp(prefix="hsi-readme-map-"))
        try:
            path = make_picture(work, args.out, args.epochs)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
