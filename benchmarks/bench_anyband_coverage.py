"""How an ``anyband`` checkpoint holds up on a cube that spans part of its trained range.

One ``anyband`` checkpoint is trained on sensor A of ``bench_cross_sensor.py`` (its in-scene
run: ``hsi train --cube A.h5 --model anyband``); its control is the same parcels seen by A
(``A-on-B.h5``, parcels it was not trained on). That cube is cut to windows of the trained range
(``hsi convert --wavelength-range``) and each is mapped with ``hsi infer``; the table gives, per
window, the share of the trained range its bands span and every labelled pixel's OA, beside the
uncut cube's. What it measures sets :data:`hsi.infer.own_bands.MIN_COVERAGE` (below it a cube is
refused); the floor is lowered to 0 for the run, so every window is mapped.

    python benchmarks/bench_anyband_coverage.py --json bench_anyband_coverage.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from _cross_sensor_scenes import SENSORS, render_sensors
from bench_cross_sensor import EPOCHS, in_scene_argv, run_logged, run_train, scene_recipe

#: (first, last) windows in nm of sensor A's 420-2400 nm: both ends, either end cut, the middle
WINDOWS = ((420, 2400), (470, 2350), (520, 2300), (420, 2202), (618, 2400), (420, 2004), (816, 2400),
           (420, 1610), (1210, 2400), (810, 1610))


def _map(checkpoint: Path, cube: Path, labels: Path, out: Path) -> float | None:
    """``hsi infer`` of ``cube`` scored on ``labels``; every labelled pixel's OA (None when it failed)."""
    error, _ = run_logged(["infer", "--checkpoint", str(checkpoint), "--cube", str(cube), "--labels", str(labels),
                           "--labels-key", "labels", "--format", "npy", "--no-progress", "--overwrite",
                           "--accelerator", "cpu", "--out", str(out)], Path(f"{out}.log"))
    if error is not None:
        return None
    return json.loads((out / "metrics.json").read_text())["labeled"]["oa"]


def _cut(cube: Path, window: tuple[int, int], out: Path) -> Path:
    """``hsi convert`` of ``cube`` keeping the bands within ``window``."""
    error, said = run_logged(["convert", str(cube), str(out), "--key", "cube", "--to", "h5", "--wavelength-range",
                              str(window[0]), str(window[1]), "--overwrite", "--no-progress"], Path(f"{out}.log"))
    if error is not None:
        raise RuntimeError(f"hsi convert failed ({said or error}): see {out}.log")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workdir", default=None, help="keep scenes and runs here (default: a temporary folder)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="write the rows here")
    args = p.parse_args(argv)
    import hsi.infer.own_bands as own_bands

    shipped = own_bands.MIN_COVERAGE
    own_bands.MIN_COVERAGE = 0.0  # map every window; the table is what sets the floor
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_anyband_coverage_") as tmp:
        folder = Path(args.workdir or tmp)
        paths = render_sensors(folder / "scenes", controls=True)
        run_args = argparse.Namespace(seed=args.seed, extra=[])
        spec = {"model": "anyband", "normalize": None, "epochs": EPOCHS["anyband"]}
        recipe = scene_recipe(argparse.Namespace(scene_seed=0, size=[96, 160]))
        trained = run_train(in_scene_argv(spec, paths["A"], run_args), folder / "runs", recipe)
        if trained["error"]:
            print(f"training failed: {trained['error']}", file=sys.stderr)
            return 1
        checkpoint, control = Path(trained["out"]) / "best.ckpt", paths["A-on-B"]
        first, last = SENSORS["A"].first, SENSORS["A"].last
        rows = []
        for lo, hi in WINDOWS:
            cube = _cut(control, (lo, hi), folder / f"A-on-B-{lo}-{hi}.h5")
            oa = _map(checkpoint, cube, control, folder / f"map-{lo}-{hi}")
            rows.append({"window_nm": [lo, hi], "coverage": round((min(hi, last) - max(lo, first)) / (last - first), 3),
                         "oa": oa})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    full = next(r["oa"] for r in rows if r["window_nm"] == [first, last])
    print("| window (nm) | share of the trained range | OA % | points lost |")
    print("|---|---|---|---|")
    for r in sorted(rows, key=lambda r: -r["coverage"]):
        lost = "-" if r["oa"] is None or full is None else f"{100 * (full - r['oa']):.1f}"
        oa = "failed" if r["oa"] is None else f"{100 * r['oa']:.1f}"
        print(f"| {r['window_nm'][0]}-{r['window_nm'][1]} | {100 * r['coverage']:.0f} % | {oa} | {lost} |")
    print(f"\nAs shipped, hsi infer refuses a cube spanning less than {100 * shipped:.0f} % of the trained range; "
          f"total {time.perf_counter() - t0:.0f} s")
    if args.json:
        from _machine import machine_facts

        Path(args.json).write_text(json.dumps({"argv": sys.argv[1:] if argv is None else argv,
                                               "machine": machine_facts(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
