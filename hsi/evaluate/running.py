"""Run an evaluation: every fold run (reused when its folder holds it finished), then the leaderboard.

A fold run is ``hsi train``'s run (:func:`hsi.training.run.run_backend`, the same steps and
the same output folder, committed with its ``run.json``), with the fold's data options
(:meth:`hsi.evaluate.folds.FoldJob.data`). A folder whose ``run.json`` is complete, whose files
match it, whose ``metrics.json`` records the same settings and whose :data:`FOLD_RECORD` records
the same inputs (the content of the scene's files, :func:`scene_identity`, and the split buffer the
evaluation chose for all its models) is a finished fold:
it is reused, not run again, so an interrupted evaluation resumes where it stopped. A fold whose
files were edited or deleted, or whose scene changed, is run again and its progress line says
why; a file in its folder that hsi did not write is never replaced (the error names the change).
Each fold's leakage
audit (:func:`hsi.preprocess.leakage.leakage_report`: test pixels inside training patches) is
computed from the split of the fold's own DataModule, with the window its model reads.

Every model of an evaluation trains, validates and is tested on the same pixels: the block
folds share one split buffer, the largest any model needs (:func:`hsi.evaluate.fitness.board_buffer`),
and :func:`check_same_pixels` refuses a leaderboard whose models got different pixel counts on a fold.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from hsi.errors import LeakageWarning, OptionError, OverwriteError, RunOutputError, StratificationWarning
from hsi.evaluate.folds import FoldJob, check_models, expand_models, plan
from hsi.evaluate.options import EvaluateOptions, check_split

__all__ = ["FOLD_RECORD", "EvaluationConfig", "FoldResult", "check_same_pixels", "run_evaluation", "run_fold",
           "scene_identity"]

#: beside a fold run's ``run.json``: the inputs it was made from and the SHA-256 of the ``run.json`` it vouches for
FOLD_RECORD = "evaluate-fold.json"


@dataclass
class EvaluationConfig:
    """What to evaluate.

    Parameters
    ----------
    data : dict
        Given ``HSIDataModule`` arguments (``folds`` among them, else :data:`~hsi.evaluate.DEFAULT_FOLDS`).
    model : dict
        Given ``HSIClassifier`` arguments, passed to every network (not to the classical baselines).
    run : dict
        Given :class:`~hsi.training.options.RunOptions` fields (not ``seed``, ``out``, ``resume``, ``overwrite``).
    options : EvaluateOptions
        Models, seeds, output folder, random column.
    """

    data: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    run: dict[str, Any] = field(default_factory=dict)
    options: EvaluateOptions = field(default_factory=EvaluateOptions)

    @property
    def n_folds(self) -> int:
        """K."""
        from hsi.evaluate.options import DEFAULT_FOLDS

        folds = self.data.get("folds")
        return DEFAULT_FOLDS if folds is None else int(folds)


@dataclass
class FoldResult:
    """The scores of one fold run.

    Attributes
    ----------
    job : FoldJob
        Which run.
    metrics : dict
        Its ``metrics.json`` (``out`` is its folder).
    leak : int
        Test pixels inside at least one training patch (0 for a block split with its buffer).
    reused : bool
        Found finished in the folder, not run again.
    redone : str | None
        Why a finished run found in the folder was run again (an edited output, a changed input).
    """

    job: FoldJob
    metrics: dict[str, Any]
    leak: int
    reused: bool
    redone: str | None = None

    def entry(self) -> dict[str, Any]:
        """The fold's entry of the leaderboard (``seconds``: the recorded run time; ``parameters``, ``epoch_s``,
        ``pixels_per_s``: trainable parameters, fit seconds per epoch, test pixels per second, None where the run
        has none or recorded none)."""
        m = self.metrics
        return {"seed": self.job.seed, "fold": self.job.fold, "oa": m["oa"], "aa": m["aa"], "kappa": m["kappa"],
                "leak": self.leak, "per_class": m["per_class"], "test_pixels": m["split"]["test_pixels"],
                "train_pixels": m["split"]["train_pixels"], "val_pixels": m["split"].get("val_pixels"),
                "buffer": m["split"].get("buffer"), "seconds": m["timing"]["total_s"],
                "parameters": m.get("parameters"), "epoch_s": m["timing"].get("epoch_s"),
                "pixels_per_s": m["timing"].get("pixels_per_s"), "run": self.job.folder.as_posix()}


def _train_config(job: FoldJob, config: EvaluationConfig, folder: Path) -> Any:
    from hsi.classical import CLASSICAL_MODELS
    from hsi.training.config import TrainConfig
    from hsi.training.options import RunOptions

    run = RunOptions(**{**config.run, "seed": job.seed, "out": str(folder), "overwrite": True})
    return TrainConfig(data=job.data(config.data), model=job.model_args(config.model, tuple(CLASSICAL_MODELS)),
                       run=run, given_run=set(config.run) | {"seed", "out", "overwrite"})


#: run options that change a fold run's result, added after the others: a run recorded without one used this value
_RUN_ADDED = {"precision": "32-true", "accumulate_grad_batches": 1}


def _same_settings(recorded: dict[str, Any], settings: Any, model_defaults: dict[str, Any],
                   board: tuple[str, ...] = ()) -> str | None:
    """The first setting of ``settings`` that the run's recorded ``config`` differs in (None: the same run).

    ``model_defaults`` are the model arguments a run that gives none trains with: a run
    recorded with another value of one (or none, an older recipe) is another run. The
    DataModule arguments named in ``board`` were chosen by the evaluation, not given: they
    are judged with the inputs (:data:`FOLD_RECORD`), not here.
    """
    from hsi._roles import same_value

    wanted = {"data": {k: v for k, v in settings.data.items() if k not in board},
              "model": {**model_defaults, **settings.model},
              "run": {k: getattr(settings.run, k) for k in ("epochs", "patience", "refit", "seed", *_RUN_ADDED)}}
    for group, values in wanted.items():
        for name, value in values.items():
            found = recorded.get(group, {}).get(name, _RUN_ADDED.get(name) if group == "run" else None)
            if not same_value(json.loads(json.dumps(value)), found):
                return f"{name}={found!r} where this evaluation asks for {value!r}"
    return None


def finished_run(folder: Path, settings: Any, overwrite: bool, model_defaults: dict[str, Any] | None = None,
                 inputs: Any = None, board: dict[str, Any] | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """``(metrics, why)``: the ``metrics.json`` of a finished run of ``settings`` on ``inputs`` in ``folder``, else None
    and why the run found there cannot be reused (None: there is none).

    ``model_defaults``: the model arguments' defaults that count as given (the network's
    training recipe, :func:`hsi.training.task.training_defaults`). ``inputs``: what the run
    is made from (:func:`scene_identity`), compared with the folder's :data:`FOLD_RECORD`, as are
    ``board``: the DataModule arguments the evaluation chose for all its models (``{"buffer": 3}``).

    Raises
    ------
    RunOutputError
        ``folder`` holds a finished run made with other settings, and ``overwrite`` is False.
    """
    from hsi.training.outputs import RUN_MANIFEST
    from hsi.transaction import finished_outputs

    manifest, why = finished_outputs(folder, RUN_MANIFEST)
    if manifest is None:
        return None, why
    try:
        metrics = json.loads((folder / "metrics.json").read_text())
    except (OSError, ValueError):
        return None, None
    differs = _same_settings(metrics.get("config", {}), settings, model_defaults or {}, tuple(board or ()))
    if differs is not None and not overwrite:
        raise RunOutputError(f"{folder}: holds a finished fold run made with {differs}; pass --overwrite to run it "
                             "again with this evaluation's settings, or choose another --out")
    changed = f"it was made with {differs}" if differs is not None else _changed_inputs(folder, inputs, board)
    return (None, changed) if changed is not None else ({**metrics, "out": str(folder)}, None)


def _changed_inputs(folder: Path, inputs: Any, board: dict[str, Any] | None = None) -> str | None:
    """How the inputs (the scene, then the evaluation's ``board`` choices) differ from those :data:`FOLD_RECORD`
    records for the run in ``folder`` (None: the same)."""
    from hsi._identity import first_change
    from hsi.training.outputs import RUN_MANIFEST
    from hsi.transaction import file_record

    try:
        record = json.loads((folder / FOLD_RECORD).read_text())
    except (OSError, ValueError):
        record = None
    if not isinstance(record, dict) or record.get("run_json_sha256") != file_record(folder / RUN_MANIFEST)["sha256"]:
        return f"no {FOLD_RECORD} records the inputs of its run (made by an older hsi, or by hsi train)"
    return first_change(record.get("inputs"), inputs, "the scene") or _changed_board(record.get("board"), board or {})


def _changed_board(recorded: Any, board: dict[str, Any]) -> str | None:
    """How the evaluation's choices ``board`` differ from those a fold record holds (None: the same)."""
    recorded = recorded if isinstance(recorded, dict) else {}
    for name, value in board.items():
        if recorded.get(name) is None:
            return (f"the evaluation's {name} is {value} for every model, and its run was made with its own "
                    "(by an older hsi)")
        if recorded[name] != value:
            return f"the evaluation's {name} is now {value} for every model (its run was made with {recorded[name]})"
    return None


def _write_record(folder: Path, inputs: Any, board: dict[str, Any] | None = None) -> None:
    """:data:`FOLD_RECORD` of the run just committed in ``folder`` (atomically), with the evaluation's ``board``
    choices."""
    from hsi._atomic import write_json_atomic
    from hsi.training.outputs import RUN_MANIFEST
    from hsi.transaction import file_record

    record = {"format": "hsi.evaluate-fold", "version": 1,
              "run_json_sha256": file_record(folder / RUN_MANIFEST)["sha256"], "inputs": inputs,
              "board": dict(board or {})}
    write_json_atomic(folder / FOLD_RECORD, record, indent=1)


def scene_identity(data: dict[str, Any]) -> Any:
    """The content identity of the scene(s) the DataModule arguments ``data`` name (JSON).

    Every file each path stands for is identified (:func:`hsi.io.readers.identities_of`: an
    ENVI header and its binary, an ``.npy`` scene's ``meta.json`` and arrays; size, mtime,
    SHA-256); a registry scene other than the synthetic one is loaded to learn its files.
    """
    from hsi.data import HSIDataModule
    from hsi.data.scene_source import SourceSpec, load_source
    from hsi.data.sources.build import entry_identities
    from hsi.data.sources.load import load_entry

    probe = HSIDataModule(**{k: v for k, v in data.items() if k not in ("folds", "fold")})
    if isinstance(probe.source, SourceSpec):
        found = probe.source.identity() or load_source(probe.source).identity
    else:
        found = [{"entry": e.to_dict(), "files": entry_identities(e)}
                 if e.kind != "registry" or e.scene == "synthetic" else load_entry(e).identity
                 for e in probe.collection.entries]
    return json.loads(json.dumps(found, default=str))


def _recipe_defaults(model: str) -> dict[str, Any]:
    """The training-recipe defaults a fold of ``model`` is judged by (a network's; none for a classical model)."""
    from hsi.classical import CLASSICAL_MODELS
    from hsi.training.task import training_defaults

    return {} if model in CLASSICAL_MODELS else training_defaults()


def fold_leak(data: dict[str, Any], patch_size: int | None = None) -> int:
    """Test pixels inside a training window of side ``patch_size`` (None: the DataModule's patch) of the split
    ``data`` makes (the fold's own DataModule); a classical model reads a window of 1."""
    from hsi.data import HSIDataModule
    from hsi.preprocess.leakage import leakage_report

    datamodule = HSIDataModule(**{**data, "predict_on": "test"})
    split, window = datamodule.split, datamodule.patch_size if patch_size is None else patch_size
    return int(leakage_report(split.train, split.test, window)["test_pixels_in_train_patches"])


def run_fold(job: FoldJob, config: EvaluationConfig, out: Path, inputs: Any = None) -> FoldResult:
    """One fold run (or the finished one found in its folder, made from the same ``inputs``: :func:`scene_identity`,
    and with the same buffer) and its leakage audit."""
    import torch

    from hsi.classical import CLASSICAL_MODELS
    from hsi.training.run import backend_for, run_backend, settle

    folder = out / job.folder
    cfg = _train_config(job, config, folder)
    backend = backend_for(cfg.model_name)
    backend.check(cfg)
    settings = settle(cfg, backend)
    settings.model.setdefault("model", cfg.model_name)
    # a buffer the evaluation chose (not given: a setting) is one of the fold's inputs: a change runs the fold again
    board = {} if job.buffer is None else {"buffer": job.buffer}
    chosen = board if config.data.get("buffer") is None else {}
    metrics, why = finished_run(folder, settings, config.options.overwrite, _recipe_defaults(cfg.model_name), inputs,
                                chosen)
    reused = metrics is not None
    if metrics is None:
        if cfg.run.threads is not None:
            torch.set_num_threads(cfg.run.threads)
        (folder / FOLD_RECORD).unlink(missing_ok=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LeakageWarning)  # said once for the whole --random column
                metrics = run_backend(backend, settings)
        except OverwriteError as err:
            if why is None:
                raise
            raise OverwriteError(f"{job.label}: {why}, so it must be run again, but {err}") from err
        _write_record(folder, inputs, board)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LeakageWarning)  # the run said what the split lacks; not again
        warnings.simplefilter("ignore", StratificationWarning)
        leak = fold_leak(settings.data, 1 if cfg.model_name in CLASSICAL_MODELS else None)
    return FoldResult(job, metrics, leak, reused, why)


#: the loggers of the package's own warning lines (children propagate to their parents' handlers, not filters)
PACKAGE_LOGGERS = ("hsi", "hsi.data", "hsi.training")


def _named(message: str, class_names: list[str] | None) -> str:
    """A split's warning with its classes named as the scene names them (``class 3 (22 labeled`` ->
    ``class 3 Corn (22 labeled``), as ``hsi train``'s per-class table names them."""
    if not class_names:
        return message

    def name(match: re.Match[str]) -> str:
        k = int(match.group(1))
        return f"class {k} {class_names[k - 1]} (" if 1 <= k <= len(class_names) else match.group(0)

    return re.sub(r"\bclass (\d+) \(", name, message)


@contextlib.contextmanager
def each_warning_once(class_names: list[str] | None = None) -> Iterator[None]:
    """Say each distinct warning of the fold runs once for the whole evaluation, not again in every fold.

    The package's warnings (the classes of :mod:`hsi.errors`) and its log lines (a scene
    header's contradiction, the registry's patch size) are about the data and the
    options, which every fold shares: repeated, they buried the progress lines. A
    split's warning names its classes by ``class_names`` (the scene's, in label order).
    """
    import hsi.errors

    own = tuple(v for v in vars(hsi.errors).values() if isinstance(v, type) and issubclass(v, Warning))
    seen: set[tuple[Any, str]] = set()

    def first_time(record: logging.LogRecord) -> bool:
        key = (None, record.getMessage())
        new = key not in seen
        seen.add(key)
        return new

    # Python's "once" filter cannot do this: each fold's catch_warnings() clears the registries it keeps
    with warnings.catch_warnings():
        show = warnings.showwarning

        def show_first_time(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
            text = _named(str(message), class_names) if issubclass(category, StratificationWarning) else message
            key = (category, str(text))
            if issubclass(category, own) and key in seen:
                return
            seen.add(key)
            show(text, category, *args, **kwargs)

        warnings.showwarning = show_first_time
        loggers = [logging.getLogger(name) for name in PACKAGE_LOGGERS]
        for logger in loggers:
            logger.addFilter(first_time)
        try:
            yield
        finally:
            for logger in loggers:
                logger.removeFilter(first_time)


def progress_line(i: int, n: int, result: FoldResult) -> str:
    """``[3/15] ssnet seed 0 fold 3/5: OA 93.1 % AA 90.2 % kappa 0.921, leak 0 (12.3 s)``."""
    m = result.metrics
    when = "reused" if result.reused else f"{m['timing']['total_s']:.1f} s"
    if result.redone is not None:
        when += f"; run again: {result.redone}"
    if m["oa"] is None:  # nothing scored: metrics.json says why
        return f"[{i}/{n}] {result.job.label}: OA, AA and kappa n/a ({m.get('oa_reason')}), leak {result.leak} ({when})"
    return (f"[{i}/{n}] {result.job.label}: OA {100 * m['oa']:.1f} % AA {100 * m['aa']:.1f} % "
            f"kappa {m['kappa']:.3f}, leak {result.leak} ({when})")


def check_config(config: EvaluationConfig) -> Path:
    """Every option checked before any work; returns the output folder (absolute)."""
    return _check_config(config)[0]


def known_models() -> list[str]:
    """Every model an evaluation can run: the registry's networks, then the classical ones."""
    from hsi.classical import CLASSICAL_MODELS
    from hsi.models.registry import list_models

    return [*list_models(), *CLASSICAL_MODELS]


def _check_config(config: EvaluationConfig) -> tuple[Path, list[str] | None]:
    """The output folder (absolute) and the scene's class names (:func:`check_enough_blocks`), every option checked
    before any folder is made."""
    from hsi._combinations import refuse_pca_for
    from hsi.classical import CLASSICAL_MODELS
    from hsi.data import HSIDataModule
    from hsi.evaluate.outputs import check_out, default_out
    from hsi.models.registry import wavelength_models
    from hsi.training.deep_run import check_devices
    from hsi.training.options import RunOptions

    check_split(config.data)
    check_one_budget(config.data)
    check_models(config.options.model_names, known_models())
    refuse_pca_for(expand_models(config.options.model_names, known_models()), config.data.get("pca"),
                   wavelength_models())
    probe = HSIDataModule(**FoldJob("probe", 0, config.n_folds, 1).data(config.data))  # checks, reads nothing
    run = RunOptions(**config.run)
    if set(expand_models(config.options.model_names, known_models())) - set(CLASSICAL_MODELS):
        check_devices(run)  # devices, precision and compile of the networks' fold runs, before any folder is made
    out = check_out(config.options.out or default_out(probe.source.name))
    return out, check_enough_blocks(probe, config.n_folds)


def check_one_budget(data: dict[str, Any]) -> None:
    """Refuse several label budgets in one evaluation: they make a learning curve
    (:func:`hsi.evaluate.curve.run_learning_curve`), one board per budget."""
    for name in ("train_per_class", "train_fraction"):
        value = data.get(name)
        if isinstance(value, (list, tuple)):
            raise OptionError(name, value, "one label budget (a number) per evaluation; a list of budgets makes a "
                              "learning curve: hsi.evaluate.curve.run_learning_curve (hsi evaluate does this itself)")


def fit_models(config: EvaluationConfig, class_names: list[str] | None, log: Any) -> tuple[tuple[str, ...],
                                                                                          dict[str, str]]:
    """The models to run and those ``all`` skips (:func:`hsi.evaluate.fitness.runnable_models`), each network built
    once, untrained, on the scene's shape before any fold runs."""
    from hsi.evaluate.fitness import runnable_models, unfit_reason
    from hsi.training.deep_run import raw_band_count

    data = FoldJob("probe", 0, config.n_folds, 1).data(config.data)
    raw = raw_band_count(data)
    classes = len(class_names) if class_names else 2

    def reason(model: str) -> str | None:
        return unfit_reason(model, config.data, config.model, raw, classes)

    return runnable_models(config.options.model_names, known_models(), reason, log)


def check_enough_blocks(probe: Any, n_folds: int) -> list[str] | None:
    """Refuse more folds than the scene has labelled blocks (:class:`OptionError` naming ``folds``), before any folder
    is made; returns the scene's class names (None for a collection, whose scenes are judged by their own runs)."""
    import numpy as np

    from hsi.data.scene_source import SourceSpec, label_names, load_source
    from hsi.errors import SplitError
    from hsi.preprocess.split_blocks import block_folds

    spec = probe.source
    if not isinstance(spec, SourceSpec):
        return None
    if spec.kind == "files":
        from hsi.io import read_labels

        labels = read_labels(spec.labels_path, key=spec.labels_key)
        names = label_names(spec.labels_path, spec.labels_key, sorted(int(v) for v in np.unique(labels[labels > 0])))
    else:
        src = load_source(spec)
        labels, names = src.labels, list(src.class_names)
    try:
        block_folds(labels, block_size=int(probe.hparams.block_size), n_folds=n_folds, seed=0)
    except SplitError as err:
        raise OptionError("folds", n_folds, f"at most the number of labelled blocks ({err})") from err
    return names


def check_same_pixels(results: list[FoldResult]) -> None:
    """Refuse a leaderboard whose models were given different pixels on one fold: every block fold of one seed must
    count the same train, val and test pixels for every model (the board's one buffer gives them that).

    Raises
    ------
    SplitError
        Naming the fold, the two models and their counts.
    """
    from hsi.errors import SplitError

    first: dict[tuple[int, int], FoldResult] = {}
    for result in results:
        if result.job.fold is None:
            continue
        key = (result.job.seed, result.job.fold)
        seen = first.setdefault(key, result)
        mine, theirs = _pixel_counts(result), _pixel_counts(seen)
        if mine != theirs:
            raise SplitError(f"seed {key[0]} fold {key[1]}/{result.job.n_folds}: {seen.job.model} was given "
                             f"{theirs} train/val/test pixels and {result.job.model} {mine} (see their metrics.json "
                             "split): the models of one leaderboard must share every fold's pixels")


def _pixel_counts(result: FoldResult) -> tuple[int, ...]:
    """The train, val and test pixel counts of a fold run's ``metrics.json``."""
    split = result.metrics["split"]
    return tuple(int(split.get(f"{k}_pixels") or 0) for k in ("train", "val", "test"))


def _remove_empty_folders(out: Path, created: bool) -> None:
    """After a failure: the empty folders the evaluation made under ``out/runs`` (and ``out`` when it made it)."""
    runs = out / "runs"
    if runs.is_dir():
        for folder in sorted((p for p in runs.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
    for folder in (runs, out) if created else (runs,):
        with contextlib.suppress(OSError):
            folder.rmdir()


def run_evaluation(config: EvaluationConfig, log: Any = None) -> dict[str, Any]:
    """Run (or reuse) every fold run, then write the leaderboard files; returns the leaderboard.

    ``log(line)`` receives a progress line per fold (default: stderr). Ctrl-C keeps the
    finished fold runs; the same command resumes.
    """
    from hsi.evaluate.fitness import board_buffer
    from hsi.evaluate.leaderboard import leaderboard
    from hsi.evaluate.outputs import write_outputs

    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    out, names = _check_config(config)
    opts = config.options
    if opts.random:
        log("warning: --random: the random-pixel split lets test pixels into training patches (see each run's "
            "leak); its column is for comparison with the literature only")
    models, skipped = fit_models(config, names, log)
    buffer = board_buffer(models, config.data, config.model)
    jobs = plan(models, opts.seeds, config.n_folds, opts.random, buffer)
    inputs, created = scene_identity(config.data), not out.exists()
    started, results = time.perf_counter(), []
    try:
        with each_warning_once(names):
            for i, job in enumerate(jobs, start=1):
                results.append(run_fold(job, config, out, inputs))
                log(progress_line(i, len(jobs), results[-1]))
    except KeyboardInterrupt:
        _remove_empty_folders(out, created)
        raise KeyboardInterrupt(f"evaluation stopped after {len(results)} of {len(jobs)} fold runs; the finished ones "
                                f"are kept in {out / 'runs'}: run the same command again to resume") from None
    except BaseException:
        _remove_empty_folders(out, created)
        raise
    check_same_pixels(results)
    board = leaderboard(results, config, time.perf_counter() - started, buffer)
    if skipped:
        board["skipped"] = skipped
    write_outputs(out, board, results)
    return {**board, "out": str(out)}
