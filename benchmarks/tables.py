"""Render ``docs/benchmarks.md`` from the benchmark results in ``benchmarks/results/``.

Every number on that page is read from a JSON file written by a benchmark script (its
``--json`` output, which carries the machine's facts under ``machine``), or, for a number
carried over from the README before the docs site, from a JSON record with a ``source``
saying where it was measured. Nobody edits the page's tables by hand:
``tests/test_bench_tables.py`` fails when the checked-in page differs from what this script
renders.

    python benchmarks/tables.py            # write docs/benchmarks.md
    python benchmarks/tables.py --check    # exit 1 when docs/benchmarks.md is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
PAGE = REPO / "docs" / "benchmarks.md"
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: result files, by what they hold (``.jsonl``: one JSON line per row, as ``bench_infer.py --json`` prints them)
FILES = {
    "accuracy": "bench_accuracy.json",
    "leaderboard": "bench_leaderboard.json",
    "cross_sensor": "bench_cross_sensor.json",
    "cross_sensor_variants": "bench_cross_sensor_variants.json",
    "cross_sensor_anyband": "bench_cross_sensor_anyband.json",
    "cross_sensor_anyband_seed1": "bench_cross_sensor_anyband_seed1.json",
    "cross_sensor_infer": "bench_cross_sensor_infer.json",
    "anyband_coverage": "bench_anyband_coverage.json",
    "loader": "bench_loader.json",
    "loader_quiet": "bench_loader_quiet.json",
    "step": "bench_step.json",
    "infer": "bench_infer.jsonl",
    "infer_quiet": "bench_infer_quiet.jsonl",
    "infer_cuda": "bench_infer_cuda.jsonl",
    "calibration": "calibrate_synthetic.json",
    "learning_curve": "bench_learning_curve.json",
    "authors": "bench_authors.json",
    "learning_curve_ssl": "bench_learning_curve_ssl.json",
}
#: the loader's ratio targets and the data path's largest share of a training step
LOADER_TARGETS = {"per_item": 5.0, "memcpy": 0.75, "share": 0.05}


def load(results: Path = RESULTS) -> dict[str, Any]:
    """Every result file in ``results`` by its key in :data:`FILES` (a ``.jsonl`` file as a list of rows,
    its ``machine``/``source`` line, if any, under ``"meta"``)."""
    out: dict[str, Any] = {}
    for key, name in FILES.items():
        path = results / name
        if not path.is_file():
            raise FileNotFoundError(f"{path}: missing; run the benchmark named in benchmarks/tables.py's FILES")
        if name.endswith(".jsonl"):
            lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            meta = [r for r in lines if "row" not in r]
            out[key] = {"rows": [r for r in lines if "row" in r], **(meta[0] if meta else {})}
        else:
            out[key] = json.loads(path.read_text())
    return out


# ---------------------------------------------------------------------------- formatting helpers
def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percentage without the sign (``-`` for None)."""
    return "-" if x is None else f"{100 * x:.{digits}f}"


def rate(x: float) -> str:
    """A speed as ``8,929k``, ``84.3k`` (thousands) or ``3,784`` (below ten thousand)."""
    if x >= 100_000:
        return f"{x / 1000:,.0f}k"
    return f"{x / 1000:.1f}k" if x >= 10_000 else f"{x:,.0f}"


def times(x: float) -> str:
    """A ratio as ``1.47x`` or, from 10 on, ``18.7x``."""
    return f"{x:.2f}x" if x < 10 else f"{x:.1f}x"


def table(head: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def provenance(record: dict[str, Any]) -> str:
    """Where a result came from: its ``source`` (transcribed) or its ``machine`` facts (measured)."""
    if "source" in record:
        return f"*Source:* {record['source']}."
    m = record["machine"]
    load_avg = m.get("load_average")
    shared = ("" if load_avg is None
              else f", load average {load_avg:.1f} at the end of the run (its own threads included)")
    gpu = f", GPU {m['gpu']}" if m.get("gpu") else ""
    return (f"*Measured* {m['date'].replace('T', ' ').rstrip('Z')} UTC on {m['cpu']}, {m['cores']} cores{shared}, "
            f"{m['memory_gib']} GiB{gpu}; Python {m['python']}, torch {m['torch']}, numpy {m['numpy']}, "
            f"hsi {m['hsi']} (commit {m['commit']}). Command: `{m['command']}`.")


def when(record: dict[str, Any]) -> str:
    """``measured <date>`` or ``transcribed`` for the summary table."""
    return f"measured {record['machine']['date'][:10]}" if "machine" in record else "transcribed"


def buffer_words(boards: list[dict[str, Any]]) -> str:
    """How the boards' folds left pixels out of training around the val/test blocks: one buffer per board (its
    ``buffer``, the largest any of its models needs), or, on boards from before that rule, each model its own."""
    buffers = {b["scene"]: b.get("buffer") for b in boards}
    if all(v is None for v in buffers.values()):
        return ("applies the buffer of each model's own patch, patch_size // 2 px (these boards predate one buffer "
                "per board, so their models did not train on the same pixels)")
    sizes = ", ".join(f"{v} px on {scene}" for scene, v in buffers.items())
    return ("applies one split buffer to every model of a board, the largest any of its models needs: patch_size // 2 "
            f"of the largest patch, {sizes} (`buffer` in the board's JSON), so every model trains, validates and is "
            "tested on the same pixels")


def default_epochs() -> int:
    """The epochs of the default training recipe (``hsi train --epochs``'s default)."""
    from dataclasses import fields

    from hsi.training.options import RunOptions

    return next(f.default for f in fields(RunOptions) if f.name == "epochs")


def row_label(row: dict[str, Any], board: dict[str, Any], gpu: bool = False) -> str:
    """A board row's model, with the device and epochs said where they differ from the default recipe's: e.g.
    ``spectralformer (CPU, 2 epochs)``. ``gpu``: the JSON's machine had a GPU (for evaluations that left the
    accelerator to the machine)."""
    epochs = (row.get("settings") or {}).get("epochs")
    if epochs is None or epochs == default_epochs() or row.get("epoch_s") is None:  # svm and rf have no epochs
        return row["model"]
    runs = [e.get("run") or {} for e in board.get("evaluations", []) if row["model"] in e.get("models", [])]
    accelerator = str((runs[0] if runs else {}).get("accelerator") or ("gpu" if gpu else "cpu")).lower()
    device = "CPU" if accelerator == "cpu" else "GPU"
    return f"{row['model']} ({device}, {epochs} epoch{'s' if epochs != 1 else ''})"


def default_row(board: dict[str, Any]) -> dict[str, Any]:
    """The board's row of the default run: ``default (ssnet)`` (or, on boards from before that label, ``ssnet``)."""
    from hsi.models import DEFAULT_MODEL

    rows = [r for r in board["rows"] if r["model"].startswith("default")]
    return rows[0] if rows else next(r for r in board["rows"] if r["model"] == DEFAULT_MODEL)


# ---------------------------------------------------------------------------- sections
def accuracy_section(acc: dict[str, Any]) -> str:
    """``hsi evaluate``'s leaderboards, one table for all scenes."""
    rows = []
    for board in acc["boards"]:
        for r in board["rows"]:
            model = f"**{r['model']}**" if r["model"].startswith("default") else r["model"]
            rows.append([board["scene"], model, f"{pct(r['oa_mean'])} ± {pct(r['oa_std'])}",
                         f"{pct(r['aa_mean'])} ± {pct(r['aa_std'])}",
                         f"{r['kappa_mean']:.3f} ± {r['kappa_std']:.3f}", str(r["leak"]), f"{r['seconds']:.0f}"])
    folds = acc["boards"][0]["n_folds"]
    return "\n\n".join([
        "## Accuracy",
        f"`hsi evaluate` makes this table: spatial {folds}-fold cross-validation over the 16 px blocks of the block "
        "split (each labelled block is test exactly once, folds stratified by class; each fold takes its validation "
        f"blocks from its training side, {buffer_words(acc['boards'])} and fits its preprocessing on "
        "its own training pixels). `benchmarks/bench_accuracy.py` runs it on the synthetic scene and on Samson "
        "(`--scene-options purity=0.5`) with `--models default svm rf`. Seed 0; min-max scaling, no PCA; patch 7 "
        "for the default (the window ssnet reads), 11 for svm and rf; deep: the defaults (20 epochs, AdamW 1e-3, "
        "cosine, batch 64, the stem started from a full-batch per-pixel fit, the classifier layer refit); SVM: RBF, "
        "C and gamma by 3-fold CV on training pixels; RF: 200 trees. Mean ± std over the folds; leak: test pixels "
        "inside training patches (largest over the folds); s/fold: wall time of one fold run. "
        "The statistics of `comparison.md` (paired Wilcoxon and McNemar tests) are defined in "
        "[Evaluation](evaluation.md).",
        table(["scene", "model", "OA %", "AA %", "kappa", "leak", "s/fold"], rows),
        provenance(acc)])


#: the few-label targets of the default (issue 51): OA at a budget on a scene, and its lead over the SVM
CURVE_TARGETS = {("samson", 5): 0.90, ("samson", 10): 0.95}
LEAD_TARGET = (10, 5.0)  # labelled pixels per class, points over svm on every scene


def _curve_cell(point: dict[str, Any] | None) -> str:
    return "-" if point is None else f"{pct(point['oa_mean'])} ± {pct(point['oa_std'])}"


def _default_name(curve: dict[str, Any]) -> str:
    return next(m for m in curve["models"] if m.startswith("default"))


def curve_table(curve: dict[str, Any]) -> str:
    """One scene's learning curve: OA per model and budget, then the default's lead over the SVM in points."""
    budgets = [str(b) for b in curve["budgets"]]
    rows = [[m, *(_curve_cell(points.get(b)) for b in budgets)] for m, points in curve["models"].items()]
    default, svm = curve["models"][_default_name(curve)], curve["models"].get("svm")
    if svm is not None:
        rows.append(["lead of the default over svm (points)",
                     *(f"{100 * (default[b]['oa_mean'] - svm[b]['oa_mean']):+.1f}" for b in budgets)])
    return table(["model", *(f"{b} per class" for b in budgets)], rows)


def curve_verdicts(curves: list[dict[str, Any]]) -> list[str]:
    """The few-label targets of the default, each with its measured value and whether it is met."""
    lines = []
    for curve in curves:
        default = curve["models"][_default_name(curve)]
        for (scene, budget), target in CURVE_TARGETS.items():
            if curve["scene"] == scene and str(budget) in default:
                oa = default[str(budget)]["oa_mean"]
                lines.append(f"- {scene}, {budget} per class: default OA {pct(oa)} % (target >= {pct(target, 0)} %: "
                             f"{_verdict(oa >= target)})")
        budget, points = LEAD_TARGET
        svm = curve["models"].get("svm", {}).get(str(budget))
        if svm is not None and str(budget) in default:
            lead = 100 * (default[str(budget)]["oa_mean"] - svm["oa_mean"])
            lines.append(f"- {curve['scene']}, {budget} per class: lead over svm {lead:+.1f} points "
                         f"(target >= {points:.0f}: {_verdict(lead >= points)})")
    return lines


def ssl_rows(curves: list[dict[str, Any]], ssl: dict[str, Any]) -> list[list[str]]:
    """Per scene: the default at the SSL run's budget without and with ``--ssl``, on the same folds and seeds."""
    rows = []
    for board in ssl["boards"]:
        curve = next((c for c in curves if c["scene"] == board["scene"]), None)
        budget = str((board.get("settings") or {}).get("data", {}).get("train_per_class"))
        plain = None if curve is None else curve["models"][_default_name(curve)].get(budget)
        row = default_row(board)
        change = "-" if plain is None else f"{100 * (row['oa_mean'] - plain['oa_mean']):+.1f}"
        rows.append([board["scene"], budget, _curve_cell(plain), f"{pct(row['oa_mean'])} ± {pct(row['oa_std'])}", change])
    return rows


def curve_section(lc: dict[str, Any], ssl: dict[str, Any] | None) -> str:
    """The learning curves of the few-label protocol, the targets, and what self-supervised pretraining did."""
    curves = lc["curves"]
    first = curves[0]
    parts = ["## Few labels: learning curves",
             f"`hsi evaluate --train-per-class {' '.join(map(str, first['budgets']))}` makes these tables: the board "
             f"above at each label budget, {first['n_folds']}-fold spatial cross-validation x seeds "
             f"{', '.join(map(str, first['seeds']))} (each seed its own folds), N labelled pixels per class drawn from "
             "each fold's training blocks after the split and its buffer (the same pixels for every model: one buffer "
             "per board), validation drawn to the same budget from the validation blocks (`--val-budget same`, "
             "early stopping on it), the test blocks whole. The protocol of the few-label tables of the papers, made "
             "spatially disjoint ([Splits](splits.md)). Mean ± std OA % over the fold runs; the default's training "
             "recipe unchanged (`bench_accuracy.py --models default svm rf --folds "
             f"{first['n_folds']} --seeds {' '.join(map(str, first['seeds']))} -- --train-per-class ...`)."]
    for curve in curves:
        parts += [f"### {curve['scene'].capitalize()}", curve_table(curve)]
    parts += ["Targets of the default at few labels:", "\n".join(curve_verdicts(curves))]
    if ssl is not None:
        parts += ["### Self-supervised pretraining",
                  "`hsi train --ssl` (off by default) first trains ssnet's stem and context by masked centre modelling "
                  "on every pixel of the scene (300 steps of 256 windows; `hsi.training.selfsup`), then the run goes on "
                  "as by default. Measured on the same folds, seeds and budget as the curves "
                  "(`bench_accuracy.py --models default ... -- --train-per-class 10 --ssl`):",
                  table(["scene", "per class", "default", "default --ssl", "change (points)"], ssl_rows(curves, ssl)),
                  "It does not raise OA by the 3 points that would make it a default on two scenes, so it stays off; "
                  "the [benchmark notes](benchmark-notes.md) list the variants tried.", provenance(ssl)]
    parts.append(provenance(lc))
    return "\n\n".join(parts)


def short_curve(lc: dict[str, Any]) -> str:
    """The README's learning-curve table: the default and svm per scene, OA % per budget."""
    budgets = [str(b) for b in lc["curves"][0]["budgets"]]
    rows = [[f"{c['scene']}: {m}", *(pct(points[b]["oa_mean"]) if b in points else "-" for b in budgets)]
            for c in lc["curves"] for m, points in c["models"].items() if m.startswith("default") or m == "svm"]
    return table(["OA % at N labels per class", *budgets], rows)


def _setting(settings: dict[str, Any]) -> str:
    """A row's settings in a few words: ``P 13, PCA 30, standardize``."""
    pca = settings.get("pca")
    bands = f"PCA {pca}" if pca is not None else f"{settings.get('num_bands')} raw bands"
    return f"P {settings.get('patch_size')}, {bands}, {settings.get('scaling')}"


def _count(value: float | None) -> str:
    return "-" if value is None else f"{round(value):,}"


def not_run(lb: dict[str, Any]) -> list[str]:
    """The registry's networks that no board of the leaderboard holds (the ``default (ssnet)`` row holds ssnet)."""
    from hsi.models import list_models

    held = {r["model"] for board in lb["boards"] for r in board["rows"]}
    held |= {name for label in held if label.startswith("default (") for name in label[9:-1].split(", ")}
    return [name for name in list_models() if name not in held]


def leaderboard_section(lb: dict[str, Any]) -> str:
    """The whole registry's leaderboard (``hsi evaluate --models all``), one table per scene."""
    folds = sorted({b["n_folds"] for b in lb["boards"]})
    gpu = bool((lb.get("machine") or {}).get("gpu"))
    parts = ["## Every model", "`hsi evaluate --models all` makes this table: every network of the registry at its "
             "registry defaults (the patch, PCA and scaling in the settings column are what the registry recommends "
             f"for it; the training recipe is the default one: {default_epochs()} epochs at most with early stopping "
             "on validation OA, AdamW 1e-3, cosine, batch 64, the classifier layer refit; a row trained for fewer "
             "epochs says so beside its name, with the device), then svm and rf, in "
             f"{'/'.join(map(str, folds))}-fold spatial cross-validation as above, except that each fold "
             f"{buffer_words(lb['boards'])}. Each evaluation ran with one torch thread "
             "(`bench_accuracy.py --models ... --buffer ... -- --threads 1`, the same folds and buffer for every "
             "part), and the boards were joined by `--merge ... --tables-only` (each board's `evaluations` in the "
             "JSON). params: trainable parameters; s/epoch: fit seconds per "
             "epoch (validation included); test px/s: test pixels classified per second by the test pass (one "
             "process, model loading excluded). Mean ± std over the folds."]
    for board in lb["boards"]:
        rows = [[row_label(r, board, gpu), _setting(r.get("settings") or {}), f"{pct(r['oa_mean'])} ± {pct(r['oa_std'])}",
                 f"{pct(r['aa_mean'])} ± {pct(r['aa_std'])}", f"{r['kappa_mean']:.3f} ± {r['kappa_std']:.3f}",
                 _count(r.get("parameters")), "-" if r.get("epoch_s") is None else f"{r['epoch_s']:.2f}",
                 "-" if r.get("pixels_per_s") is None else rate(r["pixels_per_s"])] for r in board["rows"]]
        parts += [f"### {board['scene'].capitalize()}",
                  table(["model", "settings", "OA %", "AA %", "kappa", "params", "s/epoch", "test px/s"], rows)]
        elsewhere = [m for m in dict.fromkeys(r["model"] for b in lb["boards"] for r in b["rows"])
                     if m not in {r["model"] for r in board["rows"]}]
        if elsewhere:
            parts.append(f"Not run on this scene in the time the machine had: {', '.join(elsewhere)}.")
    missing = not_run(lb)
    if missing:
        parts.append(f"Not run on this machine: {', '.join(missing)} (beyond the CPU time of the session; the time a "
                     "training step takes is in the [benchmark notes](benchmark-notes.md)); "
                     "`benchmarks/bench_gpu_models.py` measures them where a GPU is lent.")
    parts.append(provenance(lb))
    return "\n\n".join(parts)


def _seed_of(record: dict[str, Any]) -> int:
    argv = record.get("argv") or []
    return int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 0


def anyband_section(ab: dict[str, Any], other_seed: dict[str, Any]) -> str:
    """The wavelength-aware model applied to another sensor's cube by ``hsi infer``, beside the default's; the
    anyband rows of a run with another seed below its own."""
    pairs = list(dict.fromkeys(f"{r['train']}->{r['test']}" for r in ab["rows"]))
    body = []
    for record, models in ((ab, ("anyband",)), (other_seed, ("anyband",)), (ab, ("default",))):
        for model in models:
            cells = []
            for pair in pairs:
                r = next((x for x in record["rows"] if x["model"] == model and f"{x['train']}->{x['test']}" == pair),
                         None)
                cells.append("" if r is None else "refused" if r.get("held_out_oa") is None
                             else f"{pct(r['held_out_oa'])} ({pct(r['in_scene_oa'])})")
            label = "anyband" if model == "anyband" else "default (ssnet), resampled"
            body.append([f"{label}, seed {_seed_of(record)}", *cells])
    return "\n\n".join([
        "### One checkpoint on another sensor's cube",
        "The same sensors, the way a user applies one checkpoint to a new cube: train on the training sensor's cube "
        "alone (`hsi train --cube`, 20 epochs for anyband, 6 for the default), then `hsi infer` that checkpoint on "
        "the test sensor's cube, scored on every labelled pixel of it. The default model's checkpoint resamples the "
        "cube onto its bands (refused where the cube does not cover them, and wrong where its units differ: the "
        "scaling fitted on the training pixels meets other values). `anyband` reads the cube on its own bands, its "
        "scaling refitted on the cube's pixels and matched to the training scene's, wavelength by wavelength; a "
        "cube reaching beyond the trained range is cut to it first. Held-out OA % (in-scene OA % of the training "
        "sensor). Target: anyband within 5 points of its in-scene OA on every pair; two seeds (`--seed`), whose "
        "difference is the spread of one training run. The default model trained "
        "with every scene in the collection (the table above) remains the better choice where the new scene is "
        "at hand when training.",
        table(["model", *pairs], body),
        provenance(ab), provenance(other_seed)])


def _infer_cell(r: dict[str, Any] | None) -> str:
    """A pair's held-out OA % (control OA %), or why it has none."""
    if r is None:
        return ""
    if r.get("held_out_oa") is None:
        return "refused" if "exit 2" in str(r.get("error")) else "failed"
    return f"{pct(r['held_out_oa'])} ({pct(r.get('control_oa'))})"


def infer_control_section(xi: dict[str, Any]) -> str:
    """Each model's checkpoint applied by ``hsi infer`` to another sensor's cube, beside the same parcels seen by its
    own sensor, per ``--preprocess``."""
    rows = [r for r in xi["rows"] if r["variant"].startswith("infer")]
    pairs = list(dict.fromkeys(f"{r['train']}->{r['test']}" for r in rows))
    body = []
    for s in xi["summary"]:
        if not s["variant"].startswith("infer"):
            continue
        cells = [_infer_cell(next((r for r in rows if r["model"] == s["model"] and r["variant"] == s["variant"]
                                   and f"{r['train']}->{r['test']}" == pair), None)) for pair in pairs]
        worst = "-" if s.get("max_control_drop") is None else f"{pct(s['max_control_drop'])}"
        preprocess = {"infer": "auto (default)", "infer/checkpoint": "checkpoint", "infer/scene": "scene"}
        refused = f" ({s['refused']} refused)" if s.get("refused") else ""
        body.append([s["model"], preprocess.get(s["variant"], s["variant"]), *cells, worst,
                     _verdict(bool(s.get("within_control"))) + refused])
    return "\n\n".join([
        "### A checkpoint on another sensor's cube, against the same parcels seen by its own sensor",
        "`bench_cross_sensor.py --variants infer infer/checkpoint infer/scene`: one checkpoint per model, trained on "
        "the training sensor's cube alone, mapped by `hsi infer --preprocess P` on the test sensor's cube (every "
        "labelled pixel scored, classes matched by name), beside the control: the same checkpoint on the same "
        "parcels seen by the training sensor. A fixed-band model whose test sensor does not cover its range is "
        "trained on the range both cover (`--wavelength-range`, what `hsi infer`'s refusal says). Held-out OA % "
        "(control OA %); `refused`: one `error:` line (a map of one class, or a cube beyond the trained range). "
        "`checkpoint` applies the training pixels' scaling to values of other units: most such maps are refused, the "
        "others are poor; "
        "`auto` refits the scaling on the cube's own pixels when its units or value range differ and matches it to "
        "the training scene's, band by band, which is why it is the default. Target: within 5 points of the control "
        "on every pair, or refused in one line that names the fix.",
        table(["model", "--preprocess", *pairs, "largest drop (points)", "within 5 points"], body),
        provenance(xi)])


def coverage_section(cov: dict[str, Any]) -> str:
    """The anyband checkpoint on its own sensor's parcels cut to part of its trained range."""
    full = next(r["oa"] for r in cov["rows"] if r["coverage"] >= 0.999)
    body = [[f"{r['window_nm'][0]}-{r['window_nm'][1]}", f"{pct(r['coverage'], 0)} %", pct(r["oa"]),
             pct(full - r["oa"]) if r["oa"] is not None else "-"]
            for r in sorted(cov["rows"], key=lambda r: -r["coverage"])]
    return "\n\n".join([
        "### anyband on part of its trained range",
        "`bench_anyband_coverage.py`: the anyband checkpoint of sensor A on the same parcels as B's view, seen by A, "
        "cut to windows of its 420-2400 nm (`hsi convert --wavelength-range`), mapped by `hsi infer`. What is missing "
        "matters more than how much, and no window below 95 % of the range held up (across sensors, 96-97 % lost "
        "6.8-11.8 points), so `hsi infer` refuses a cube spanning less than 99 % of the trained range, naming "
        "`--wavelength-range` (a checkpoint trained on the cube's range). Target (within 10 points from 40 % of the "
        "range): not met.",
        table(["window (nm)", "share of the trained range", "OA %", "points lost"], body),
        provenance(cov)])


#: what each simulated sensor stores (``_cross_sensor_scenes.Sensor.storage``), in words
STORAGE = {"reflectance": "float reflectance 0-1",
           "reflectance_x10000": "int16 reflectance x 10000 with no scale factor declared",
           "radiance": "radiance-like (a solar-curve gain and a path-radiance offset)"}


def _band_count(grid: list[float]) -> int:
    first, last, step = grid
    return int(round((last - first) / step)) + 1


def _pair_cell(rows: list[dict], model: str, pair: str) -> str:
    r = next((r for r in rows if r["model"] == model and f"{r['train']}->{r['test']}" == pair), None)
    if r is None:
        return ""
    return "failed" if r.get("ratio") is None else f"{pct(r['held_out_oa'])} ({r['ratio']:.2f})"


def cross_sensor_section(xs: dict[str, Any], variants: dict[str, Any]) -> str:
    """Held-out OA (ratio to in-scene OA) per ordered pair of simulated sensors, then the variants tried."""
    rows, target = xs["rows"], xs["target"]
    pairs = list(dict.fromkeys(f"{r['train']}->{r['test']}" for r in rows))
    body = []
    for s in xs["summary"]:
        if s["variant"] != "default":
            continue
        label = "**default (ssnet)**" if s["model"] == "default" else s["model"]
        ratio = "-" if s["min_ratio"] is None else f"{s['min_ratio']:.3f}"
        body.append([label, *(_pair_cell(rows, s["model"], p) for p in pairs),
                     f"**{ratio}**" if s["model"] == "default" else ratio])
    in_scene = {s["sensor"]: s.get("oa") for s in xs["in_scene"] if s["model"] == "default"}
    sensors = "; ".join(f"**{n}** {_band_count(d['wavelengths_nm'])} bands at {d['wavelengths_nm'][0]:.0f}-"
                        f"{d['wavelengths_nm'][1]:.0f} nm, FWHM {d['fwhm_nm']:g} nm, {STORAGE[d['storage']]}"
                        for n, d in xs["sensors"].items())
    vrows = [[v["preprocess"], v["normalize"], *(pct(v["held_out_oa"][p]) for p in variants["pairs"]),
              f"{v['min_ratio']:.3f}"] for v in variants["rows"]]
    return "\n\n".join([
        "## Across sensors",
        "`benchmarks/bench_cross_sensor.py` renders one synthetic 2 nm landscape through three simulated sensors, "
        f"each its own overlapping crop with noise: {sensors}. Every ordered pair trains on one sensor's scene and "
        "tests on the other's (`split: scene`); the ratio is the held-out OA over the training sensor's in-scene OA "
        "(a block split inside that one scene, same model and options). `hsi train` as it is: the defaults for "
        "several scenes (each scene standardized on its own pixels, brightness and per-band noise augmentation, no "
        f"per-pixel normalisation). Held-out OA % (ratio); target: every ratio >= {target:.2f} for the default model. "
        "In-scene OA of the default model: " + ", ".join(f"{n} {pct(v)} %" for n, v in in_scene.items()) + ".",
        table(["model", *pairs, f"min ratio (target >= {target:.2f})"], body),
        provenance(xs),
        "### Preprocessing variants",
        f"Held-out OA % of the {variants['model']} model under other preprocessing, measured before brightness and "
        "noise augmentation became the default for several scenes (why the defaults are what they are: "
        "[benchmark notes](benchmark-notes.md)).",
        table(["preprocessing of the scenes", "normalisation", *variants["pairs"], "min ratio"], vrows),
        provenance(variants)])


def loader_tables(ld: dict[str, Any]) -> list[str]:
    """The loader's tables of one ``bench_loader.py --json`` record, then where it came from."""
    b = ld["batches"]
    t = LOADER_TARGETS
    rows = [["`hsi train`'s training loader (augmented, `channels_last`)",
             *(rate(ld[f"train_loader_b{x}"]) for x in b)],
            ["per-item baseline with the same augmentation", *(rate(ld[f"per_item_augmented_b{x}"]) for x in b)],
            ["plain memory copy of the same bytes", *(rate(ld[f"memcpy_b{x}"]) for x in b)],
            [f"loader / per-item (target >= {t['per_item']:g}x)",
             *(f"{ld[f'train_loader_vs_per_item_b{x}']:.1f}x" for x in b)],
            [f"loader / memcpy (target >= {pct(t['memcpy'], 0)} %)",
             *(f"{pct(ld[f'train_loader_vs_memcpy_b{x}'], 0)} %" for x in b)]]
    others = [["no augmentation (validation and test loaders)", rate(ld["no_augmentation"])],
              ["augmented, `channels_last=False`", rate(ld["contiguous_augmented"])],
              ["augmented + spectral scale 0.1 + noise 0.01", rate(ld["augmented_scale_noise"])],
              ["per-item baseline without augmentation", rate(ld["per_item_plain"])]]
    memory = [["`cache=\"cube\"` (the default)", f"{ld['cube_cache_mb']:.1f}", f"{ld['cube_cache_disk_mb']:.0f}"],
              ["`cache=\"patches\"`", f"{ld['patch_cache_mb']:.1f}", f"{ld['patch_cache_disk_mb']:.0f}"]]
    return [
        table(["measure", *(f"batch {x}" + (" (`hsi train` default)" if i == 0 else "") for i, x in enumerate(b))],
              rows),
        f"Other configurations at batch {b[-1]}, patches per second:",
        table(["configuration", "patches/s"], others),
        "Resident memory while iterating one training epoch from a freshly opened cache (the pages of the "
        "memory-mapped `.npy` files that had to be resident), and the cache's size on disk:",
        table(["cache", "resident MB", "on disk MB"], memory),
        provenance(ld)]


def loader_section(quiet: dict[str, Any], shared: dict[str, Any]) -> str:
    """``hsi train``'s training loader against a per-item loader and a memory copy; memory of the two caches."""
    ld = shared
    return "\n\n".join([
        "## Patch loader",
        f"`benchmarks/bench_loader.py --share`: a {ld['bands']}-band synthetic scene of 145 x 145 pixels shaped like "
        f"Indian Pines, {ld['n_patches']:,} training patches of {ld['patch']} x {ld['patch']}, one process, one "
        "thread. The headline is the training loader of `hsi train` (`HSIDataModule` defaults: augmentation on, the "
        "8 flips and quarter turns folded into the gather); the per-item baseline slices and copies one window per "
        "`__getitem__` and stacks them with `default_collate`; the memory copy is `np.copyto` of a batch-sized "
        "buffer, the bytes a loader must produce at memory speed. Patches per second, median of 3 epochs after a "
        "warm-up one.",
        "### On a quiet machine",
        *loader_tables(quiet),
        "### Re-measured on a shared machine",
        "The same run while other jobs held the CPUs: speeds fall several-fold and the memory copy, which other "
        "processes evict from the cache, moves most; the ratio to the per-item loader is the steadier measure.",
        *loader_tables(shared)])


def authors_section(au: dict[str, Any]) -> str:
    """hsi's published models against re-implementations of their authors' code: one training step each."""
    rows = [[r["model"], f"{r['bands']} bands, {r['patch']} x {r['patch']}", f"{r['params_hsi']:,}",
             f"{r['max_abs_diff']:.1e}", f"{r['hsi_ms']:.1f}", f"{r['authors_ms']:.1f}", f"**{times(r['ratio'])}**"]
            for r in au["rows"]]
    return "\n\n".join([
        "## Against the authors' code",
        "`benchmarks/bench_authors.py` re-implements the authors' SSFTT (zgr6010/HSI_SSFTT) and SpectralFormer "
        "(danfenghong/IEEE_TGRS_SpectralFormer) with their layers and the inputs their scripts feed them, loads hsi's "
        "weights into them (strictly: the same parameters, logits equal to the difference shown), and times one "
        "training step of each (forward, cross-entropy, backward, AdamW; batch 64, one thread), the two taking turns "
        "step by step (median after 2 warm-ups). speed-up: authors' ms / hsi's ms.",
        table(["model", "input", "params (both)", "logits max diff", "hsi ms", "authors' ms", "speed-up"], rows),
        provenance(au)])


def step_section(ld: dict[str, Any], st: dict[str, Any]) -> str:
    """The data path's share of a training step per model; contiguous against channels-last batches."""
    share = [[r["model"], f"{r['patch']} x {r['patch']}", f"{r['data_ms']:.2f}", f"{r['step_ms']:.1f}",
              f"{pct(r['share'])} %"] for r in ld["share"]]
    worst = max(ld["share"], key=lambda r: r["share"])
    by = {(r["model"], r["channels_last"]): r for r in st["rows"]}
    formats = []
    for model in dict.fromkeys(r["model"] for r in st["rows"]):
        cl, co = by.get((model, True)), by.get((model, False))
        if cl and co:
            ratio = (co["data_ms"] + co["step_ms"]) / (cl["data_ms"] + cl["step_ms"])
            formats.append([model, f"{cl['data_ms'] + cl['step_ms']:.1f}", f"{co['data_ms'] + co['step_ms']:.1f}",
                            f"{ratio:.2f}x"])
    return "\n\n".join([
        "## Training step",
        "The data path's share of a whole training step (getting one batch from the default training loader, "
        "against forward + cross-entropy + backward + AdamW step; batch 64, one thread, CPU, each model at the patch "
        f"size `hsi train` gives it). Target: under {pct(LOADER_TARGETS['share'], 0)} % for every model; the largest "
        f"here is {worst['model']}'s {pct(worst['share'])} %.",
        table(["model", "patch", "data ms", "step ms", "data share"], share),
        provenance(ld),
        "`benchmarks/bench_step.py` times the same step with channels-last batches (the default) and contiguous "
        "ones, the models built as `HSIClassifier` builds them (2-D convolution weights channels-last). "
        "Milliseconds per step (data + step), median over the timed steps:",
        table(["model", "channels-last ms", "contiguous ms", "contiguous / channels-last"], formats),
        provenance(st)])


INFER_METHOD = (
    "`benchmarks/bench_infer.py` (one child process per row, so each peak RSS is the row's own; 2 torch threads; "
    "tile 256; untrained networks at the patch size `hsi train` gives them, cnn3d and hybridsn after the PCA to 30 "
    "components it gives them). **pipeline**: `infer_scene` from the file with every output written (maps, "
    "GeoTIFFs, ENVI file, PNG previews), warm; in brackets its tile pass alone. **raw_read**: the file read tile by "
    "tile into one reused float32 buffer (for `.npy` the fastest of a memory-map copy, `os.preadv` row by row and "
    "the same in two threads; `read_direct` for HDF5). **monai**: MONAI's `sliding_window_inference` on the same "
    "network with the cube in memory (its `np.load` not counted, its memory counted). **classic_loop**: the "
    "per-window loop of DeepHyperX's `test()` (stride 1, batches of 100). **free**: a dense network whose logits "
    "are its first 16 bands, so only the host pipeline is measured. Each pipeline row is compared with its "
    "reference (free: the raw read; fcn: MONAI; patch-centre models: the classic loop). Targets: free >= 0.5x the "
    "raw read, fcn >= 1.0x MONAI at <= 0.5x its memory, patch-centre models >= 1.2x the classic loop, peak RSS "
    "<= 1 GB at 2048² x 200 and no growth with the scene.")


def _model_label(r: dict[str, Any]) -> str:
    if r["row"] == "raw_read":
        return "-"
    if r["row"] in ("pipeline", "forward_only", "classic_loop", "monai") and r["model"] not in ("free", "fcn"):
        return f"{r['model']} (P {r['patch_size']})"
    return r["model"]


def infer_table(record: dict[str, Any]) -> str:
    """The rows of one ``bench_infer.py --json`` run, each pipeline row with its ratios to its reference."""
    from bench_infer import _reference

    rows = record["rows"]
    body = []
    for r in rows:
        scene = f"{r['size'][0]}² x {r['size'][2]}"
        source = {"npy": ".npy", "h5": "HDF5"}.get(r["source"], r["source"])
        if "error" in r:
            body.append([r["row"], _model_label(r), source, scene, f"failed: {r['error']}", "", "", "", ""])
            continue
        speed = rate(r["pixels_per_s"])
        if "tile_pass_pixels_per_s" in r:
            speed += f" ({rate(r['tile_pass_pixels_per_s'])})"
        ref = _reference(r, rows)
        vs = ratio = rss = ""
        if ref is not None and "error" not in ref:
            vs = {"monai": "MONAI"}.get(ref["row"], ref["row"].replace("_", " "))
            ratio = times(r["pixels_per_s"] / ref["pixels_per_s"])
            if "tile_pass_pixels_per_s" in r:
                ratio += f" ({times(r['tile_pass_pixels_per_s'] / ref['pixels_per_s'])})"
            rss = "" if vs == "raw read" else f"{r['peak_rss_mb'] / ref['peak_rss_mb']:.2f}x"
        body.append([r["row"], _model_label(r), source, scene, speed, f"{r['peak_rss_mb']:,.0f} MB", vs, ratio, rss])
    return table(["row", "model", "source", "scene", "px/s (tile pass)", "peak RSS", "vs", "ratio (tile pass)",
                  "RSS ratio"], body)


def infer_section(data: dict[str, Any]) -> str:
    """Whole-scene inference on the CPU (re-measured and earlier, quieter runs) and on a GPU."""
    return "\n\n".join([
        "## Whole-scene inference",
        INFER_METHOD,
        "### CPU, three rounds on a quiet machine",
        "Median speed and largest peak of three interleaved rounds while the machine ran nothing else; what the "
        "pipeline does to reach these figures, the rounds behind them and why the free model's target is out of "
        "reach on 2 cores are in the [benchmark notes](benchmark-notes.md).",
        infer_table(data["infer_quiet"]),
        provenance(data["infer_quiet"]),
        "### CPU, `--quick`, re-measured on a shared machine",
        "One round while other jobs held the CPUs: each child got a fraction of its 2 threads' cores (compare "
        "`cpu_s` with the wall time in the JSON), so speeds and ratios here say more about the load than about "
        "the code; peak memory is unaffected.",
        infer_table(data["infer"]),
        provenance(data["infer"]),
        "### GPU",
        "With the forward pass 20-40x faster than anything around it, the tile pass runs ahead of MONAI and of the "
        "classic loop, while the whole run is held back by a fixed cost of the outputs (previews, map files).",
        infer_table(data["infer_cuda"]),
        provenance(data["infer_cuda"])])


def _feature(key: str) -> str:
    """``pixel``, ``mean5``, ``pixel+mean5`` (``calibrate_synthetic.py``'s feature sets) in words."""
    if key == "pixel":
        return "pixel"
    n = key.split("+")[-1].removeprefix("mean")
    return ("pixel + " if key.startswith("pixel+") else "") + f"{n} x {n} mean"


def calibration_section(cal: dict[str, Any]) -> str:
    """Per-pixel RBF-SVM on the synthetic scene, with and without a neighbourhood mean."""
    keys = list(cal["mean"])
    body = [[str(r["seed"]), *(pct(r[k]) for k in keys)] for r in cal["rows"]]
    body.append(["**mean**", *(f"**{pct(cal['mean'][k])}**" for k in keys)])
    head = ["seed", *(_feature(k) for k in keys)]
    return "\n\n".join([
        "## Synthetic scene calibration",
        f"`benchmarks/calibrate_synthetic.py`: the synthetic scene ({cal['size']} x {cal['size']}) under a block "
        f"split, an RBF-SVM (C {cal['C']:g}) fitted on at most {cal['max_train']:,} training pixels, test OA % on the "
        "test blocks for the pixel's own spectrum and for spectra averaged over an N x N neighbourhood. The scene "
        "rewards spatial context as Indian Pines does; its 16 classes take Indian Pines' cover mixtures under names "
        "of their own (`S-legume`, `S-woods`, ...), so its tables cannot pass for a real survey.",
        table(head, body),
        provenance(cal)])


# ---------------------------------------------------------------------------- summary and page
def _verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def _infer_ratio(rows: list[dict], model: str, side: int, source: str = "npy") -> tuple[float, float, dict]:
    """Speed and memory ratio of a pipeline row to its reference, and the row."""
    from bench_infer import _reference

    row = next(r for r in rows if r["row"] == "pipeline" and r["model"] == model and r["size"][0] == side
               and r["source"] == source)
    ref = _reference(row, rows)
    return row["pixels_per_s"] / ref["pixels_per_s"], row["peak_rss_mb"] / ref["peak_rss_mb"], row


def _from(key: str, record: dict[str, Any]) -> str:
    return f"`{FILES[key]}` ({when(record)})"


def few_label_rows(lc: dict[str, Any]) -> list[list[str]]:
    """Summary rows of the learning curves: the default at 10 labelled pixels per class against the SVM per scene."""
    budget, points = LEAD_TARGET
    rows = []
    for curve in lc["curves"]:
        default, svm = curve["models"][_default_name(curve)].get(str(budget)), curve["models"].get("svm", {}).get(str(budget))
        if default is None or svm is None:
            continue
        lead = 100 * (default["oa_mean"] - svm["oa_mean"])
        target = CURVE_TARGETS.get((curve["scene"], budget))
        goal = f"OA >= {pct(target, 0)} %: {_verdict(default['oa_mean'] >= target)}; " if target else ""
        rows.append([f"{curve['scene'].capitalize()}, {budget} labelled pixels per class ({curve['n_folds']} folds x "
                     f"{len(curve['seeds'])} seeds): default OA", f"**{pct(default['oa_mean'])} ± {pct(default['oa_std'])} %** "
                     f"(SVM {pct(svm['oa_mean'])}, lead {lead:+.1f} points)",
                     f"{goal}lead >= {points:.0f} points: {_verdict(lead >= points)}", _from("learning_curve", lc)])
    return rows


def summary_rows(data: dict[str, Any]) -> list[list[str]]:
    """The headline figures, the default configuration first: measure, result, target, JSON file."""
    lb, xs, ld, lq, iq = (data[k] for k in ("leaderboard", "cross_sensor", "loader", "loader_quiet", "infer_quiet"))
    rows = []
    from hsi.models import DEFAULT_MODEL

    for board in lb["boards"]:
        svm = next(r for r in board["rows"] if r["model"] == "svm")
        default = default_row(board)
        rows.append([f"{board['scene'].capitalize()}, {board['n_folds']}-fold spatial CV: default ({DEFAULT_MODEL}) OA",
                     f"**{pct(default['oa_mean'])} ± {pct(default['oa_std'])} %** (SVM {pct(svm['oa_mean'])})",
                     f"beat the per-pixel SVM: {_verdict(default['oa_mean'] > svm['oa_mean'])}",
                     _from("leaderboard", lb)])
    rows += few_label_rows(data["learning_curve"])
    worst = next(s for s in xs["summary"] if s["model"] == "default" and s["variant"] == "default")
    rows.append(["Across sensors, default model: worst held-out / in-scene OA of the 6 pairs",
                 f"**{worst['min_ratio']:.3f}** ({worst['worst_pair']})",
                 f">= {xs['target']:.2f}: {_verdict(worst['all_pass'])}", _from("cross_sensor", xs)])
    ab = data["cross_sensor_anyband"]
    gaps = {f"{r['train']}->{r['test']}": r["in_scene_oa"] - r["held_out_oa"] for r in ab["rows"]
            if r["model"] == "anyband" and r.get("held_out_oa") is not None and r.get("in_scene_oa") is not None}
    worst_pair = max(gaps, key=gaps.get)
    rows.append(["One anyband checkpoint on another sensor's cube (hsi infer, no resampling): largest drop from "
                 "in-scene OA over the 6 pairs", f"**{pct(gaps[worst_pair])} points** ({worst_pair})",
                 f"<= 5 points: {_verdict(gaps[worst_pair] <= 0.05 and len(gaps) == 6)}",
                 _from("cross_sensor_anyband", ab)])
    xi = data["cross_sensor_infer"]
    default = next(s for s in xi["summary"] if s["model"] == "default" and s["variant"] == "infer")
    rows.append(["A default-model checkpoint on another sensor's cube (hsi infer, --preprocess auto): largest drop "
                 "from the same parcels seen by its own sensor, 6 pairs",
                 f"**{pct(default['max_control_drop'])} points**",
                 f"<= 5 points: {_verdict(bool(default.get('within_control')))}", _from("cross_sensor_infer", xi)])
    cov = data["anyband_coverage"]
    full = next(r["oa"] for r in cov["rows"] if r["coverage"] >= 0.999)
    partial = [r for r in cov["rows"] if 0.4 <= r["coverage"] < 0.999 and r["oa"] is not None]
    lost = max(full - r["oa"] for r in partial)
    rows.append(["anyband on a cube spanning 40-95 % of its trained range: most points lost (refused below 99 %)",
                 f"{pct(lost)} points", f"<= 10 points: {_verdict(lost <= 0.10)}", _from("anyband_coverage", cov)])
    per_item, memcpy = lq["train_loader_vs_per_item_b64"], lq["train_loader_vs_memcpy_b64"]
    rows.append(["Training loader (batch 64) against a per-item loader / a memory copy",
                 f"{per_item:.1f}x / {pct(memcpy, 0)} % ({rate(lq['train_loader_b64'])} patches/s)",
                 f">= {LOADER_TARGETS['per_item']:g}x: {_verdict(per_item >= LOADER_TARGETS['per_item'])}; "
                 f">= {pct(LOADER_TARGETS['memcpy'], 0)} %: {_verdict(memcpy >= LOADER_TARGETS['memcpy'])}",
                 _from("loader_quiet", lq)])
    worst_share = max(ld["share"], key=lambda r: r["share"])
    rows.append(["Data path's share of a training step, largest over the models",
                 f"{pct(worst_share['share'])} % ({worst_share['model']})",
                 f"< {pct(LOADER_TARGETS['share'], 0)} %: {_verdict(worst_share['share'] < LOADER_TARGETS['share'])}",
                 _from("loader", ld)])
    speed, memory, _ = _infer_ratio(iq["rows"], "fcn", 1024)
    rows.append(["Whole-scene maps, fcn: speed / memory against MONAI", f"{speed:.2f}x / {memory:.2f}x",
                 f">= 1.0x at <= 0.5x: {_verdict(speed >= 1.0 and memory <= 0.5)}", _from("infer_quiet", iq)])
    centre = {m: _infer_ratio(iq["rows"], m, side)[0] for m, side in
              (("cnn2d", 128), ("cnn3d", 128), ("hybridsn", 128), ("spectral1d", 256))}
    rows.append(["Whole-scene maps, patch-centre models against the classic per-window loop",
                 ", ".join(f"{m} {times(v)}" for m, v in centre.items()),
                 ">= 1.2x: " + (", ".join(f"**not met** by {m}" for m, v in centre.items() if v < 1.2) or "met"),
                 _from("infer_quiet", iq)])
    speed, _, row = _infer_ratio(iq["rows"], "free", 2048)
    big = [r["peak_rss_mb"] for r in iq["rows"] if r["row"] == "pipeline" and r["size"][0] == 2048]
    rows.append(["Whole-scene maps at 2048² x 200, free model: speed against the raw read; peak RSS",
                 f"{speed:.2f}x; {min(big):,.0f}-{max(big):,.0f} MB",
                 f">= 0.5x: {_verdict(speed >= 0.5)}; <= 1 GB: {_verdict(max(big) <= 1000)}",
                 _from("infer_quiet", iq)])
    return rows


def summary_table(data: dict[str, Any]) -> str:
    """The summary as a Markdown table."""
    return table(["measure", "result", "target", "from"], summary_rows(data))


#: the lines around the summary table where README.md carries it (checked by tests/test_bench_tables.py)
README_MARKERS = ("<!-- benchmarks-summary: generated by python benchmarks/tables.py --summary -->",
                  "<!-- /benchmarks-summary -->")


def short_leaderboard(lb: dict[str, Any]) -> str:
    """Every model's mean OA per scene of the whole-registry leaderboard, its parameters on the first scene and its
    seconds per epoch there: the README's short table."""
    boards = lb["boards"]
    models = list(dict.fromkeys(r["model"] for b in boards for r in b["rows"]))
    gpu = bool((lb.get("machine") or {}).get("gpu"))
    rows = []
    for model in models:
        found = [next((r for r in b["rows"] if r["model"] == model), None) for b in boards]
        first, board = next((r, b) for r, b in zip(found, boards) if r is not None)
        rows.append([row_label(first, board, gpu), *("not run" if r is None else f"{pct(r['oa_mean'])} ± {pct(r['oa_std'])}" for r in found),
                     _count(first.get("parameters")), "-" if first.get("epoch_s") is None else f"{first['epoch_s']:.1f}"])
    rows += [[name, *("not run (CPU budget)" for _ in boards), "-", "-"] for name in not_run(lb)]
    head = ["model", *(f"{b['scene']} OA %" for b in boards), f"params ({boards[0]['scene']})",
            f"s/epoch ({boards[0]['scene']}, 1 thread)"]
    return table(head, rows)


def readme_block(data: dict[str, Any]) -> str:
    """The summary table and the short leaderboard between :data:`README_MARKERS`, as README.md carries them."""
    folds = "/".join(map(str, sorted({b["n_folds"] for b in data["leaderboard"]["boards"]})))
    lc = data["learning_curve"]
    curve = lc["curves"][0]
    return "\n".join([README_MARKERS[0], summary_table(data), "", f"Every model at its registry defaults, {folds}-fold "
                      "spatial CV (`hsi evaluate --models ...`; settings and the rest: docs/benchmarks.md):", "",
                      short_leaderboard(data["leaderboard"]), "", f"Few labels ({curve['n_folds']}-fold spatial CV x "
                      f"{len(curve['seeds'])} seeds, `hsi evaluate --train-per-class ...`; every model on the same pixels):",
                      "", short_curve(lc), README_MARKERS[1]])


INTRO = """\
Every number on this page is read from a JSON file in `benchmarks/results/`: the `--json` output of the benchmark
script named beside it, which records the machine, the software versions, the commit and the command. Numbers
carried over from the README before this site, where a run takes too long to repeat for every release or needs
hardware that was not lent (a GPU), are JSON records with a `source` saying when and how they were measured. The
page is rendered by `python benchmarks/tables.py` (`--check` tells whether it is current); `tests/test_bench_tables.py`
fails when the checked-in page differs from what that renders, so tables are never edited by hand. Scripts print
ratios measured side by side in one run; nothing is asserted on time in the tests.

The CPU timings were taken on a 2-core machine. Where its other users were busy, each section says so (the load
average at the end of the run, from the JSON) and keeps the earlier measurement from a quiet machine beside it:
a loaded machine slows every row, but not alike. What was tried on the way to these numbers, and why the defaults
are what they are, is in the [benchmark notes](benchmark-notes.md)."""


def render(results: Path = RESULTS) -> str:
    """The whole page, from the result files in ``results``."""
    data = load(results)
    parts = ["# Benchmarks",
             "<!-- Generated by `python benchmarks/tables.py` from benchmarks/results/: do not edit by hand. -->",
             INTRO,
             "```{toctree}\n:hidden:\n\nbenchmark-notes\n```",
             "## Summary",
             "The default configuration first.",
             summary_table(data),
             accuracy_section(data["accuracy"]),
             leaderboard_section(data["leaderboard"]),
             curve_section(data["learning_curve"], data.get("learning_curve_ssl")),
             cross_sensor_section(data["cross_sensor"], data["cross_sensor_variants"]),
             anyband_section(data["cross_sensor_anyband"], data["cross_sensor_anyband_seed1"]),
             infer_control_section(data["cross_sensor_infer"]),
             coverage_section(data["anyband_coverage"]),
             loader_section(data["loader_quiet"], data["loader"]),
             step_section(data["loader"], data["step"]),
             authors_section(data["authors"]),
             infer_section(data),
             calibration_section(data["calibration"])]
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) ``docs/benchmarks.md``; ``--summary`` prints the summary table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page differs from what is rendered")
    parser.add_argument("--summary", action="store_true",
                        help="print only the summary table, between the markers README.md keeps it in")
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of the result files")
    parser.add_argument("--out", type=Path, default=PAGE, help="the page to write or check")
    args = parser.parse_args(argv)
    if args.summary:
        print(readme_block(load(args.results)))
        return 0
    text = render(args.results)
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else None
        if current != text:
            print(f"{args.out}: out of date; run python benchmarks/tables.py", file=sys.stderr)
            return 1
        print(f"{args.out}: up to date")
        return 0
    from hsi._atomic import write_bytes_atomic

    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(args.out, text.encode("utf-8"))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
