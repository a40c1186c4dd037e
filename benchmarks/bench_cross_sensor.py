"""Across sensors: train on one simulated sensor's scene, test on another's (``split: scene``), beside in-scene OA.

One synthetic landscape (2 nm, 96 x 160 px) is seen by three simulated sensors
(``_cross_sensor_scenes.py``: A 10 nm float reflectance, B 30 nm int16 reflectance x 10000
with no scale factor declared, C 15 nm radiance-like ``g(l) r + o(l)``; each its own overlapping
96 x 96 crop, with noise). For every ordered pair ``TRAIN->TEST``, model and variant, the real
command runs in this process::

    hsi train --scenes TRAIN-TEST-PREPROCESS.yaml [--model M] [--normalize N] --epochs E ...

with ``split: scene`` and ``test_scenes: [TEST]`` in the YAML, and gives the **held-out OA**
(``metrics.json["scenes"][TEST]["oa"]``). The **in-scene OA** of a sensor is ``hsi train --cube
S.h5 --labels S.h5`` (the default block split inside that one scene) with the same model and
``--normalize``. The ratio is held-out OA over the in-scene OA of the training sensor (what the
model loses by meeting another sensor); the test sensor's in-scene OA is listed too.

Variants: ``default`` is ``hsi train`` as it is (no ``--normalize``, no ``preprocess:`` in the
YAML; what that ran, ``metrics.json["collection"]``, is in the JSON rows as ``ran``);
``NORMALIZE/PREPROCESS`` gives ``--normalize NORMALIZE`` and ``preprocess: PREPROCESS``
(``collection``: one scaling fitted on the training scene; ``scene``: every scene scaled on its
own valid pixels). ``infer`` trains on the training sensor's cube alone (its in-scene run) and maps the test
sensor's cube with ``hsi infer`` (held-out OA: every labelled pixel of that cube): the default model's checkpoint
resamples the cube onto its bands; a wavelength-aware model (``anyband``) reads the cube on its own bands.
``infer`` runs ``hsi infer`` as it is (``--preprocess auto``), ``infer/checkpoint`` and ``infer/scene`` with
``--preprocess checkpoint`` / ``scene``. Each infer run has a control: the same checkpoint mapping the same parcels
(the test sensor's crop) seen by the training sensor (``TRAIN-on-TEST.h5``); the target is a held-out OA within
5 points of the control on every pair. A test
cube reaching beyond the training sensor's range is cut to it first (``TEST-within-TRAIN.h5``), as a user would. A
fixed-band model whose test sensor does not cover the training sensor's range is trained again with
``--wavelength-range`` on the range both cover (the fix ``hsi infer``'s refusal names; the row says
``wavelength_range``). The default plan:

- the default model (``--model`` not given): ``default`` and every
  {none, brightness, l2, derivative, derivative+l2} x {collection, scene};
- svm: ``default`` and every normalisation with ``preprocess: scene``;
- cnn2d: ``default`` and ``brightness/collection``;
- anyband: ``infer`` (the default model gets ``infer`` too);

every ordered pair of A, B, C: 156 trainings, about 25 minutes on 2 cores. ``--quick``: the
default model and svm, ``default`` and ``brightness/collection``, 3 epochs (about 3 minutes).
The summary gives, per model and variant, each pair's held-out OA and ratio, the smallest
ratio and whether it is >= 0.90 for every pair (the target of the default model with default
settings). Further ``hsi train`` options go after ``--`` (every run gets them).

    python benchmarks/bench_cross_sensor.py --quick
    python benchmarks/bench_cross_sensor.py --json bench_cross_sensor.json > bench_cross_sensor.md
    python benchmarks/bench_cross_sensor.py --models default --variants none/scene brightness/scene --pairs A:C C:A
    python benchmarks/bench_cross_sensor.py --models default --variants none/scene -- --scaling minmax

Runs are kept under ``--workdir`` (default: a temporary folder) in a folder named by a hash of
their recipe (scene recipe and command line): a second call with the same ``--workdir`` reuses
the finished ones.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import tempfile
import time
from itertools import permutations
from pathlib import Path

import numpy as np

from _cross_sensor_scenes import KEPT_CLASSES, LANDSCAPE, SENSORS, SIZE, render_sensors

NORMALIZE = ("none", "brightness", "l2", "derivative", "derivative+l2")
PREPROCESS = ("collection", "scene")
#: ``hsi train`` as it is: no --normalize, no preprocess key in the collection file
DEFAULT_VARIANT = "default"
#: train on the training sensor's cube alone, then ``hsi infer`` that checkpoint on the test sensor's cube
INFER_VARIANT = "infer"
#: the infer variants and the ``hsi infer --preprocess`` each gives ("infer": the default, auto)
INFER_VARIANTS = {INFER_VARIANT: "auto", "infer/checkpoint": "checkpoint", "infer/scene": "scene"}
VARIANTS = (DEFAULT_VARIANT, *(f"{n}/{p}" for p in PREPROCESS for n in NORMALIZE), *INFER_VARIANTS)
#: the variants each model gets without --variants
PLAN_VARIANTS = {"default": VARIANTS, "svm": (DEFAULT_VARIANT, *(f"{n}/scene" for n in NORMALIZE)),
                 "cnn2d": (DEFAULT_VARIANT, "brightness/collection"), "anyband": (INFER_VARIANT,)}
#: an infer variant's held-out OA should be within this many points of its same-sensor control on every pair
CONTROL_POINTS = 0.05
QUICK_VARIANTS = (DEFAULT_VARIANT, "brightness/collection")
QUICK_MODELS = ("default", "svm")
#: epochs of the deep models (the classical ones ignore them); --quick: QUICK_EPOCHS
EPOCHS = {"default": 6, "cnn2d": 3, "anyband": 20}
QUICK_EPOCHS = 3
#: the ratio held-out / in-scene OA the default model should reach on every pair
TARGET = 0.90


def all_pairs(names=tuple(SENSORS)) -> list[tuple[str, str]]:
    """Every ordered pair ``(train, test)`` of distinct sensors."""
    return list(permutations(names, 2))


def _pair(text: str) -> tuple[str, str]:
    train, sep, test = text.replace("->", ":").partition(":")
    if not sep or train not in SENSORS or test not in SENSORS or train == test:
        raise argparse.ArgumentTypeError(f"{text!r}: expected TRAIN:TEST with two different sensors of "
                                         f"{', '.join(SENSORS)} (e.g. A:B)")
    return train, test


def _variant(text: str) -> str:
    if text not in VARIANTS:
        raise argparse.ArgumentTypeError(f"{text!r}: expected default or NORMALIZE/PREPROCESS, one of "
                                         f"{', '.join(VARIANTS)}")
    return text


def variant_options(variant: str) -> tuple[str | None, str | None]:
    """``(normalize, preprocess)`` of a variant; None: not given (``hsi train``'s default)."""
    if variant == DEFAULT_VARIANT or variant in INFER_VARIANTS:
        return None, None
    normalize, preprocess = variant.split("/")
    return normalize, preprocess


def plan(args: argparse.Namespace) -> list[dict]:
    """The held-out runs: ``{"train", "test", "model", "variant", "normalize", "preprocess", "epochs"}``.

    ``normalize`` and ``preprocess`` are None where the variant leaves them to ``hsi train``. The in-scene
    runs they need are :func:`in_scene_specs` of these.
    """
    models = args.models or (QUICK_MODELS if args.quick else tuple(PLAN_VARIANTS))
    pairs = args.pairs or all_pairs()
    specs = []
    for model in models:
        variants = args.variants or (QUICK_VARIANTS if args.quick else PLAN_VARIANTS.get(model, (DEFAULT_VARIANT,)))
        epochs = args.epochs or (QUICK_EPOCHS if args.quick else EPOCHS.get(model, EPOCHS["default"]))
        for variant in variants:
            normalize, preprocess = variant_options(variant)
            specs += [{"train": a, "test": b, "model": model, "variant": variant, "normalize": normalize,
                       "preprocess": preprocess, "epochs": epochs} for a, b in pairs]
    return specs


def in_scene_specs(specs: list[dict]) -> list[dict]:
    """The in-scene runs of ``specs`` (each sensor, model, normalisation and epochs once), in order."""
    seen, out = set(), []
    for s in specs:
        for sensor in (s["train"], s["test"]):
            key = (sensor, s["model"], s["normalize"], s["epochs"])
            if key not in seen:
                seen.add(key)
                out.append({"sensor": sensor, "model": s["model"], "normalize": s["normalize"], "epochs": s["epochs"]})
    return out


def _common(model: str, normalize: str | None, epochs: int, args: argparse.Namespace) -> list[str]:
    argv = [] if model == "default" else ["--model", model]
    argv += [] if normalize is None else ["--normalize", normalize]
    return argv + ["--epochs", str(epochs), "--seed", str(args.seed), "--no-progress",
                   "--accelerator", "cpu", "--overwrite", *args.extra]


def held_out_argv(spec: dict, yaml_path: Path, args: argparse.Namespace) -> list[str]:
    """``hsi train`` arguments of a held-out run (``--out`` apart)."""
    return ["train", "--scenes", str(yaml_path), *_common(spec["model"], spec["normalize"], spec["epochs"], args)]


def in_scene_argv(spec: dict, path: Path, args: argparse.Namespace) -> list[str]:
    """``hsi train`` arguments of an in-scene run (``--out`` apart)."""
    return ["train", "--cube", str(path), "--labels", str(path), "--cube-key", "cube", "--labels-key", "labels",
            *_common(spec["model"], spec["normalize"], spec["epochs"], args)]


def write_collection(folder: Path, train: str, test: str, preprocess: str | None, paths: dict[str, Path]) -> Path:
    """The collection YAML of one pair: both scenes, ``split: scene``, ``test`` held out, ``preprocess`` if given."""
    import yaml

    data = {"scenes": [{"name": n, "cube": paths[n].name, "labels": paths[n].name, "cube_key": "cube",
                        "labels_key": "labels"} for n in (train, test)],
            "split": "scene", "test_scenes": [test]}
    if preprocess is not None:
        data["preprocess"] = preprocess
    path = folder / f"{train}-{test}-{preprocess or 'default'}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def infer_argv(checkpoint: Path, cube: Path, preprocess: str = "auto") -> list[str]:
    """``hsi infer`` arguments of an infer-variant run (``--out`` apart): the test cube with its own labels."""
    return ["infer", "--checkpoint", str(checkpoint), "--cube", str(cube), "--labels", str(cube), "--cube-key", "cube",
            "--labels-key", "labels", "--accelerator", "cpu", "--no-progress", "--overwrite", "--format", "npy",
            "--preprocess", preprocess]


def within(path: Path, train: str, test: str) -> Path:
    """The test sensor's cube with only its bands inside the training sensor's range (half a band's spacing of
    slack), as a user gives a wavelength-aware checkpoint a cube that reaches further (it refuses the rest)."""
    import h5py

    from hsi.io import write_h5

    lo, hi, slack = SENSORS[train].first, SENSORS[train].last, SENSORS[train].step / 2
    with h5py.File(path, "r") as handle:
        attrs = dict(handle["cube"].attrs)
        wl = np.asarray(attrs["wavelengths"], dtype=np.float64)
        keep = (wl >= lo - slack) & (wl <= hi + slack)
        if keep.all():
            return path
        cube, labels = handle["cube"][:, :, keep], handle["labels"][()]
    out = path.with_name(f"{test}-within-{train}.h5")
    write_h5(out, cube, labels=labels, wavelengths=wl[keep], overwrite=True)
    with h5py.File(out, "r+") as handle:
        for key, value in attrs.items():
            if key not in ("wavelengths", "layout"):
                handle["cube"].attrs[key] = value[keep] if key == "fwhm" and np.ndim(value) else value
    return out


def _infer_once(checkpoint: Path, cube: Path, preprocess: str, folder: Path) -> dict:
    """One ``hsi infer`` run into ``folder``: every labelled pixel's OA, the bands and preprocessing it ran."""
    t0 = time.perf_counter()
    error, said = run_logged([*infer_argv(checkpoint, cube, preprocess), "--out", str(folder)], Path(f"{folder}.log"))
    if error is not None and error.startswith("exit") and said:  # the command's own error line says why
        error += f" ({said[:200]})"
    seconds = round(time.perf_counter() - t0, 1)
    if error is not None:
        return {"oa": None, "error": error, "seconds": seconds}
    metrics = json.loads((folder / "metrics.json").read_text())
    record = json.loads((folder / "inference.json").read_text())
    return {"oa": (metrics.get("labeled") or {}).get("oa"), "bands": (record.get("bands") or {}).get("method"),
            "fitted_on": (record.get("preprocessing") or {}).get("fitted_on"), "error": None, "seconds": seconds}


def common_range(train: str, test: str) -> tuple[float, float] | None:
    """The band range both sensors cover, when the test sensor's does not cover the training sensor's (a
    fixed-band checkpoint of the whole training range cannot map it: ``hsi infer`` says to train on this range)."""
    a, b = SENSORS[train], SENSORS[test]
    if b.first <= a.first and b.last >= a.last:
        return None
    return max(a.first, b.first), min(a.last, b.last)


def infer_checkpoint(spec: dict, in_scene: dict, paths: dict[str, Path], out: Path, args: argparse.Namespace,
                     recipe: dict) -> tuple[Path | None, dict]:
    """The checkpoint an infer variant maps with: the training sensor's in-scene one, or, for a fixed-band model
    and a test sensor that does not cover its range, one trained with ``--wavelength-range`` on the range both
    cover (what the refusal of ``hsi infer`` tells a user to do); and what was trained."""
    span = None if spec["model"] == "anyband" else common_range(spec["train"], spec["test"])
    if span is None:
        run = in_scene
    else:
        argv = [*in_scene_argv(spec | {"normalize": None}, paths[spec["train"]], args),
                "--wavelength-range", f"{span[0]:g}", f"{span[1]:g}"]
        run = run_train(argv, out, recipe)
    if run.get("error") or not run.get("out"):
        return None, {"error": f"training run failed: {run.get('error')}"}
    folder = Path(run["out"])
    checkpoint = folder / "best.ckpt" if (folder / "best.ckpt").exists() else folder / "model.npz"  # classical
    return checkpoint, {"wavelength_range": span}


def run_infer(spec: dict, in_scene: dict, paths: dict[str, Path], out: Path, args: argparse.Namespace,
              recipe: dict) -> dict:
    """``hsi infer`` of the training sensor's checkpoint (:func:`infer_checkpoint`) on the test sensor's cube, and on
    the same parcels seen by the training sensor (the control, ``TRAIN-on-TEST.h5``): the held-out OA is that of
    every labelled pixel of the test cube (``metrics.json["labeled"]``), ``control_oa`` the control's; what
    ``inference.json`` says of the bands (read on their own by a wavelength-aware network, else resampled) and the
    scaling."""
    if in_scene.get("error") or not in_scene.get("out"):
        return {"held_out_oa": None, "error": f"in-scene run failed: {in_scene.get('error')}"}
    preprocess = INFER_VARIANTS[spec["variant"]]
    checkpoint, trained = infer_checkpoint(spec, in_scene, paths, out, args, recipe)
    if checkpoint is None:
        return {"held_out_oa": None, **trained}
    cube = within(paths[spec["test"]], spec["train"], spec["test"])
    tag = f"infer-{checkpoint.parent.name}-{preprocess}"
    held = _infer_once(checkpoint, cube, preprocess, out / f"{tag}-{cube.stem}")
    control = _infer_once(checkpoint, paths[f"{spec['train']}-on-{spec['test']}"], preprocess,
                          out / f"{tag}-control-{spec['test']}")
    drop = None if held["oa"] is None or control["oa"] is None else control["oa"] - held["oa"]
    return {"held_out_oa": held["oa"], "control_oa": control["oa"], "control_drop": drop, "bands": held.get("bands"),
            "fitted_on": held.get("fitted_on"), "test_cube": cube.name, "error": held["error"] or control["error"],
            "seconds": held["seconds"] + control["seconds"], "model_name": in_scene.get("model_name"), **trained}


def scene_recipe(args: argparse.Namespace) -> dict:
    """What the rendered files depend on (part of every run's key)."""
    return {"seed": args.scene_seed, "size": list(args.size), "landscape": LANDSCAPE, "classes": list(KEPT_CLASSES),
            "sensors": {n: repr(s) for n, s in SENSORS.items()}}


def run_logged(argv: list[str], log: Path) -> tuple[str | None, str | None]:
    """``hsi ARGV`` in this process, its output into ``log``: ``(error, said)``, ``error`` None when it exited 0, else
    ``"exit N"`` or the exception (one broken run is reported, and the others still run), ``said`` the command's
    last ``error:`` line, if any."""
    from hsi.cli import main as hsi_main

    with open(log, "w") as out, contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            status = hsi_main(argv)
            error = None if status == 0 else f"exit {status}"
        except Exception as err:
            error = f"{type(err).__name__}: {err}"
    if error is None:
        return None, None
    lines = log.read_text().strip().splitlines()
    return error, next((line for line in reversed(lines) if line.startswith("error:")), None)


def run_train(argv: list[str], out: Path, recipe: dict) -> dict:
    """``hsi train argv --out out/<key>`` in this process (reused when that folder has a finished run).

    Returns ``{"metrics": metrics.json or None, "seconds", "reused", "out", "error"}``; the command's
    output goes to ``<key>.log`` beside the run's folder (``error`` is its last ``error:`` line, if any).
    """
    shown = [a if not a.endswith((".yaml", ".h5")) else Path(a).name for a in argv]
    key = hashlib.sha256(json.dumps({"argv": shown, "scenes": recipe}, sort_keys=True).encode()).hexdigest()[:16]
    folder = out / key
    metrics_path = folder / "metrics.json"
    if (folder / "run.json").is_file() and metrics_path.is_file():
        return {"metrics": json.loads(metrics_path.read_text()), "seconds": None, "reused": True, "out": str(folder),
                "error": None}
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    error, said = run_logged([*argv, "--out", str(folder)], folder.parent / f"{key}.log")
    seconds = time.perf_counter() - t0
    error = said or error
    metrics = json.loads(metrics_path.read_text()) if error is None and metrics_path.is_file() else None
    return {"metrics": metrics, "seconds": round(seconds, 1), "reused": False, "out": str(folder), "error": error}


def _facts(result: dict) -> dict:
    m = result["metrics"] or {}
    timing = m.get("timing") or {}
    return {"model_name": m.get("model"), "epochs_trained": m.get("epochs_trained"), "best_epoch": m.get("best_epoch"),
            "num_bands": m.get("num_bands"), "fit_s": timing.get("fit_s"), "seconds": result["seconds"],
            "reused": result["reused"], "out": result["out"], "error": result["error"]}


def _held_out(metrics: dict | None, test: str) -> dict:
    """What a held-out run's ``metrics.json`` says of the test scene: OA, the normalisation that ran, the band grid,
    and the package's own scene-shift check (``scene_shift``), where it has them."""
    m = metrics or {}
    shift = ((m.get("scene_shift") or {}).get(test) or {})
    grid = (m.get("bands") or {}).get("grid") or {}
    ran = m.get("collection") or {}
    return {"held_out_oa": ((m.get("scenes") or {}).get(test) or {}).get("oa"),
            "ran": {k: ran.get(k) for k in ("normalize", "scaling", "preprocess")},
            "grid": {k: grid.get(k) for k in ("range_nm", "count", "fwhm_nm", "from")} if grid else None,
            "shift_factor": (shift.get("preprocessed") or {}).get("factor"),
            "shift_flagged": (shift.get("preprocessed") or {}).get("shifted")}


def rows_of(held: list[dict], scene: list[dict]) -> list[dict]:
    """One row per held-out run, with the in-scene OAs of its two sensors and the ratio to the training sensor's."""
    by_key = {(s["sensor"], s["model"], s["normalize"], s["epochs"]): s.get("oa") for s in scene}
    rows = []
    for h in held:
        train_oa = by_key.get((h["train"], h["model"], h["normalize"], h["epochs"]))
        test_oa = by_key.get((h["test"], h["model"], h["normalize"], h["epochs"]))
        oa = h.get("held_out_oa")
        ratio = oa / train_oa if oa is not None and train_oa else None
        rows.append({**h, "in_scene_oa": train_oa, "in_scene_test_oa": test_oa, "ratio": ratio})
    return rows


def summarize(rows: list[dict], target: float = TARGET) -> list[dict]:
    """Per model and variant: the smallest ratio over its pairs, that pair, and whether every ratio is >= ``target``.

    A pair without a ratio (a failed run) makes ``all_pass`` False and is listed in ``missing``.
    """
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["model"], r["variant"]), []).append(r)
    out = []
    for (model, variant), group in groups.items():
        done = [r for r in group if r.get("ratio") is not None]
        worst = min(done, key=lambda r: r["ratio"]) if done else None
        missing = [f"{r['train']}->{r['test']}" for r in group if r.get("ratio") is None]
        drops = [r["control_drop"] for r in group if r.get("control_drop") is not None]
        refused = [r for r in group if str(r.get("error") or "").startswith("exit 2")]  # one error: line, no map
        out.append({"model": model, "variant": variant, "pairs": len(group),
                    "min_ratio": None if worst is None else worst["ratio"],
                    "worst_pair": None if worst is None else f"{worst['train']}->{worst['test']}",
                    "mean_held_out_oa": (sum(r["held_out_oa"] for r in done) / len(done)) if done else None,
                    "all_pass": bool(done) and not missing and all(r["ratio"] >= target for r in done),
                    "missing": missing,
                    "max_control_drop": max(drops) if drops else None, "refused": len(refused),
                    "within_control": (len(drops) + len(refused) == len(group) and max(drops) <= CONTROL_POINTS)
                    if drops else None})
    return out


def best_variant(summary: list[dict], model: str = "default") -> dict | None:
    """The summary row of ``model`` with the largest minimum ratio (None when it has none)."""
    rows = [s for s in summary if s["model"] == model and s["min_ratio"] is not None]
    return max(rows, key=lambda s: s["min_ratio"]) if rows else None


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def print_table(rows: list[dict], summary: list[dict], file=None) -> None:
    """The rows as Markdown, then the summary: per model and variant, each pair's held-out OA % (ratio)."""
    p = (lambda *a: print(*a, file=file)) if file is not None else print
    p("| pair | model | variant | in-scene OA % (train) | held-out OA % | ratio | in-scene OA % (test) |")
    p("|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        held = _pct(r.get("held_out_oa")) if not r.get("error") else f"failed: {r['error']}"
        p(f"| {r['train']}->{r['test']} | {r['model']} | {r['variant']} | {_pct(r['in_scene_oa'])} | {held} | {ratio} "
          f"| {_pct(r['in_scene_test_oa'])} |")
    p("")
    pairs = list(dict.fromkeys(f"{r['train']}->{r['test']}" for r in rows))
    cells = {(r["model"], r["variant"], f"{r['train']}->{r['test']}"): r for r in rows}
    p(f"| model | variant | {' | '.join(pairs)} | min ratio | >= {TARGET:.2f} for all pairs |")
    p("|---|---|" + "---|" * len(pairs) + "---|---|")
    for s in summary:
        shown = []
        for pair in pairs:
            r = cells.get((s["model"], s["variant"], pair))
            shown.append("" if r is None else "failed" if r.get("ratio") is None
                         else f"{_pct(r['held_out_oa'])} ({r['ratio']:.2f})")
        ratio = "-" if s["min_ratio"] is None else f"{s['min_ratio']:.3f}"
        verdict = ("yes" if s["all_pass"] else "no") + (f" ({len(s['missing'])} failed)" if s["missing"] else "")
        p(f"| {s['model']} | {s['variant']} | {' | '.join(shown)} | {ratio} | {verdict} |")
    ran = next((r.get("ran") for r in rows if r["variant"] == DEFAULT_VARIANT and r.get("ran")), None)
    if ran:
        p("")
        p("The default variant ran " + ", ".join(f"{k} {v}" for k, v in ran.items()) + " (metrics.json collection).")
    best = best_variant(summary)
    if best is not None:
        p("")
        p(f"Default model, best variant by minimum ratio: {best['variant']} ({best['min_ratio']:.3f}, worst pair "
          f"{best['worst_pair']}).")
    print_controls(rows, summary, p)


def print_controls(rows: list[dict], summary: list[dict], p) -> None:
    """The infer variants against their same-sensor controls: per pair the held-out OA % and the control's, then
    per model and variant the largest drop and whether every pair is within :data:`CONTROL_POINTS`."""
    infer = [r for r in rows if r["variant"] in INFER_VARIANTS]
    if not infer:
        return
    p("")
    p("| pair | model | variant (hsi infer --preprocess) | held-out OA % | same parcels, own sensor % | drop (points) "
      "| scaling |")
    p("|---|---|---|---|---|---|---|")
    for r in infer:
        drop = "-" if r.get("control_drop") is None else f"{100 * r['control_drop']:.1f}"
        held = _pct(r.get("held_out_oa")) if not r.get("error") else f"failed: {r['error']}"
        scaling = "own pixels" if str(r.get("fitted_on") or "").startswith("this") else "checkpoint's"
        p(f"| {r['train']}->{r['test']} | {r['model']} | {r['variant']} ({INFER_VARIANTS[r['variant']]}) | {held} "
          f"| {_pct(r.get('control_oa'))} | {drop} | {scaling} |")
    p("")
    p(f"| model | variant | largest drop (points) | within {100 * CONTROL_POINTS:.0f} points on every pair |")
    p("|---|---|---|---|")
    for s in summary:
        if s["variant"] in INFER_VARIANTS:
            worst = "-" if s.get("max_control_drop") is None else f"{100 * s['max_control_drop']:.1f}"
            refused = f" ({s['refused']} refused)" if s.get("refused") else ""
            p(f"| {s['model']} | {s['variant']} | {worst} | {'yes' if s.get('within_control') else 'no'}{refused} |")


def parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help=f"{', '.join(QUICK_MODELS)}; {', '.join(QUICK_VARIANTS)}; {QUICK_EPOCHS} epochs")
    p.add_argument("--models", nargs="+", default=None,
                   help="default (hsi train's own), cnn2d, svm or any --model of hsi train (default: "
                        f"{', '.join(PLAN_VARIANTS)})")
    p.add_argument("--variants", nargs="+", type=_variant, default=None, metavar="VARIANT",
                   help="default or NORMALIZE/PREPROCESS, for every model (default: all for the default model; svm: "
                        "default and the */scene ones; cnn2d: default and brightness/collection); choices: "
                        f"{', '.join(VARIANTS)}")
    p.add_argument("--pairs", nargs="+", type=_pair, default=None, metavar="TRAIN:TEST",
                   help="ordered pairs of sensors (default: all six)")
    p.add_argument("--epochs", type=int, default=None,
                   help=f"epochs of every deep model (default: {', '.join(f'{m} {e}' for m, e in EPOCHS.items())}; "
                        f"--quick {QUICK_EPOCHS})")
    p.add_argument("--seed", type=int, default=0, help="hsi train --seed of every run")
    p.add_argument("--scene-seed", type=int, default=0, help="seed of the landscape and the sensors' noise")
    p.add_argument("--size", type=int, nargs=2, default=list(SIZE), metavar=("H", "W"),
                   help="landscape size; every sensor sees H x 0.6 W of it")
    p.add_argument("--workdir", default=None, help="scenes and runs (kept; finished runs are reused)")
    p.add_argument("--json", default=None, metavar="PATH", help="write every run and the summary here")
    p.add_argument("extra", nargs="*", help="further hsi train options for every run, after -- (e.g. -- --scaling "
                                            "minmax)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    specs = plan(args)
    with tempfile.TemporaryDirectory(prefix="bench_cross_sensor_") as tmp:
        return _run(args, specs, Path(args.workdir or tmp), sys.argv[1:] if argv is None else list(argv))


def _run(args: argparse.Namespace, specs: list[dict], folder: Path, argv: list[str]) -> int:
    """Render the sensors, run the in-scene then the held-out trainings, print the tables, write the JSON."""
    t0 = time.perf_counter()
    paths = render_sensors(folder / "scenes", seed=args.scene_seed, size=tuple(args.size),
                           controls=any(s["variant"] in INFER_VARIANTS for s in specs))
    recipe = scene_recipe(args)
    scene_runs, held_runs = in_scene_specs(specs), []
    total = len(scene_runs) + len(specs)
    print(f"scenes ready in {time.perf_counter() - t0:.0f} s: {folder}; {total} runs", file=sys.stderr, flush=True)
    done = 0
    for s in scene_runs:
        res = run_train(in_scene_argv(s, paths[s["sensor"]], args), folder / "runs", recipe)
        s.update(oa=(res["metrics"] or {}).get("oa"), **_facts(res))
        done += 1
        print(f"[{done}/{total}] in-scene {json.dumps(s)}", file=sys.stderr, flush=True)
    by_sensor = {(s["sensor"], s["model"], s["normalize"], s["epochs"]): s for s in scene_runs}
    for spec in specs:
        if spec["variant"] in INFER_VARIANTS:
            trained = by_sensor[(spec["train"], spec["model"], spec["normalize"], spec["epochs"])]
            held_runs.append({**spec, **run_infer(spec, trained, paths, folder / "runs", args, recipe)})
        else:
            yaml_path = write_collection(folder / "scenes", spec["train"], spec["test"], spec["preprocess"], paths)
            res = run_train(held_out_argv(spec, yaml_path, args), folder / "runs", recipe)
            held_runs.append({**spec, **_held_out(res["metrics"], spec["test"]), **_facts(res)})
        done += 1
        print(f"[{done}/{total}] held-out {json.dumps(held_runs[-1])}", file=sys.stderr, flush=True)
    rows = rows_of(held_runs, scene_runs)
    summary = summarize(rows)
    seconds = time.perf_counter() - t0
    print_table(rows, summary)
    print(f"\ntotal {seconds:.0f} s", flush=True)
    if args.json:
        from _machine import machine_facts

        report = {"argv": argv, "machine": machine_facts(), "target": TARGET, "seconds": round(seconds, 1),
                  "scenes": recipe, "sensors": {n: {"wavelengths_nm": [s.first, s.last, s.step], "fwhm_nm": s.fwhm,
                                                    "storage": s.storage, "noise": s.noise,
                                                    "declares": list(s.declares)} for n, s in SENSORS.items()},
                  "in_scene": scene_runs, "rows": rows, "summary": summary,
                  "best_default_variant": best_variant(summary)}
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 1 if any(r.get("error") for r in [*scene_runs, *held_runs]) else 0


if __name__ == "__main__":
    sys.exit(main())
