"""The README's accuracy table: ``hsi evaluate`` on the synthetic scene and Samson, one table per scene.

A thin call of the command (spatial k-fold cross-validation over the blocks of the block split;
see ``hsi evaluate --help``): the default run, the SVM and RF baselines (and any ``--models``),
``--folds`` folds, ``--seeds`` seeds. Samson is read from ``../shared/data/envi/samson`` when no
``--root`` is given. Outputs (leaderboards, comparisons, per-fold runs) go to ``--out/<scene>``;
run it again with the same ``--out`` to resume.

    python benchmarks/bench_accuracy.py --out bench-accuracy                 # synthetic + Samson
    python benchmarks/bench_accuracy.py --scene samson --models default svm --out bench-accuracy
    python benchmarks/bench_accuracy.py --random --out bench-accuracy        # adds the leaky random column
    python benchmarks/bench_accuracy.py --models all --out bench-all --json bench_leaderboard.json -- --threads 1
    python benchmarks/bench_accuracy.py --models default svm rf --folds 3 --seeds 0 1 --out bench-curve \
        --json bench_learning_curve.json -- --train-per-class 5 10 20 50 --threads 1
    python benchmarks/bench_accuracy.py --models cnn3d --out more -- --buffer 6 --threads 1   # a part on its own
    python benchmarks/bench_accuracy.py --scene samson synthetic --out bench-all --merge more --tables-only \
        --json bench_leaderboard.json

``--models all`` is the whole registry's leaderboard (every network at its registry defaults, then svm and
rf); ``--json`` writes every scene's leaderboard with the machine's facts (what ``benchmarks/tables.py`` reads
from ``benchmarks/results/``), joined with the rows of other models evaluated on the same folds in other
folders (``--merge``, e.g. run beside it on another core); ``--tables-only`` writes it without running. A board's
models share one split buffer, the largest any of them needs (``hsi evaluate`` records it as ``buffer``): give
every part the same ``--buffer`` (6 for a board with ssftt's 13 x 13 patch), or ``--merge`` refuses the boards.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
SHARED_SAMSON = REPO.parent / "shared" / "data" / "envi" / "samson"
#: scene options of the unmixing scenes (a pixel is labelled when its abundance is >= 0.5)
SCENE_OPTIONS = {"samson": ["purity=0.5"], "jasper_ridge": ["purity=0.5"], "urban": ["purity=0.5"]}


def evaluate_args(scene: str, root: str | None, args: argparse.Namespace) -> list[str]:
    """The ``hsi evaluate`` arguments of one scene."""
    argv = ["evaluate", "--scene", scene, "--models", *args.models, "--folds", str(args.folds),
            "--seeds", *map(str, args.seeds), "--out", str(Path(args.out) / scene), "--no-progress"]
    if root:
        argv += ["--root", root]
    if SCENE_OPTIONS.get(scene):
        argv += ["--scene-options", *SCENE_OPTIONS[scene]]
    if args.random:
        argv.append("--random")
    return argv + list(args.extra)


def main(argv: list[str] | None = None) -> int:
    """Run ``hsi evaluate`` for every scene; its table is printed by the command."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scene", nargs="+", default=["synthetic", "samson"])
    parser.add_argument("--root", default=None, help="data root of the --scene files (Samson: ../shared/data)")
    parser.add_argument("--models", nargs="+", default=["default", "svm", "rf"])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--random", action="store_true", help="add the random-pixel-split column (leaky)")
    parser.add_argument("--out", default="bench-accuracy", help="folder of the evaluations, one per scene")
    parser.add_argument("--json", default=None, metavar="PATH", help="write the leaderboards and the machine here")
    parser.add_argument("--merge", nargs="+", default=[], metavar="OUT",
                        help="with --json: also the rows of other runs' --out folders (other models on the same "
                             "folds, run beside this one), each scene's rows in one board")
    parser.add_argument("--tables-only", action="store_true",
                        help="with --json: run nothing, write the JSON of the boards already in --out (and --merge)")
    parser.add_argument("extra", nargs="*", help="further hsi evaluate options, after --")
    args = parser.parse_args(argv)

    from hsi.cli import main as hsi_main

    status = 0
    for scene in [] if args.tables_only else args.scene:
        root = args.root
        if scene == "samson" and root is None:
            if not SHARED_SAMSON.is_dir():
                print(f"skipping samson: {SHARED_SAMSON} not found (give --root)", file=sys.stderr)
                continue
            root = str(SHARED_SAMSON)
        print(f"\n## {scene}", flush=True)
        status = max(status, hsi_main(evaluate_args(scene, root, args)))
    if args.json:
        write_json(Path(args.json), args, sys.argv[1:] if argv is None else list(argv))
    return status


def write_json(path: Path, args: argparse.Namespace, argv: list[str]) -> None:
    """Every scene's ``leaderboard.json`` (or, for several label budgets, ``learning_curve.json``: ``curves``) that
    the run left in ``--out``, with the machine's facts."""
    import json

    from _machine import machine_facts

    boards, curves = [], []
    for scene in args.scene:
        curve = Path(args.out) / scene / "learning_curve.json"
        if curve.is_file():  # a run with several budgets: the curve, each budget's board in its own folder
            curves.append(json.loads(curve.read_text()))
            continue
        folders = [Path(out) / scene for out in (args.out, *args.merge) if (Path(out) / scene / "leaderboard.json").is_file()]
        found = [json.loads((folder / "leaderboard.json").read_text()) for folder in folders]
        if not found:
            continue
        board = found[0]
        for other in found[1:]:  # the same folds (scene, folds, seeds, block size, split buffer): one board
            same = ("scene", "n_folds", "seeds", "block_size", "buffer")
            if any(other.get(k) != board.get(k) for k in same):
                raise SystemExit(f"--merge: {scene}'s boards were made on other folds or pixels "
                                 f"({[other.get(k) for k in same]} against {[board.get(k) for k in same]}); give "
                                 "every evaluation the same --buffer")
            board["rows"] += [r for r in other["rows"] if r["model"] not in {b["model"] for b in board["rows"]}]
        board["rows"].sort(key=lambda r: (-r["oa_mean"], r["model"]))
        board["evaluations"] = [{"folder": str(folder), "models": b["settings"]["models"],
                                 "run": b["settings"]["run"], "seconds": b["seconds"]} for folder, b in zip(folders, found)]
        for row in board["rows"]:  # each fold's own scores stay in --out; the table needs the rows' statistics
            row.pop("folds", None)
        boards.append(board)
    record = {"argv": argv, "machine": machine_facts(), "boards": boards, **({"curves": curves} if curves else {})}
    path.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
