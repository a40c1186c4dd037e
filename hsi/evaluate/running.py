"""Run an evaluation: every fold run (reused when its folder holds it finished), then the leaderboard.

A fold run is ``hsi train``'s run (:func:`hsi.training.run.run_backend`, the same steps and
the same output folder, committed with its ``run.json``), with the fold's data options
(:meth:`hsi.evaluate.folds.FoldJob.data`). A folder whose ``run.json`` is complete, whose files
match it and whose ``metrics.json`` records the same settings is a finished fold: it is reused,
not run again, so an interrupted evaluation resumes where it stopped. Each fold's leakage
audit (:func:`hsi.preprocess.leakage.leakage_report`: test pixels inside training patches) is
computed from the split of the fold's own DataModule.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from hsi.errors import LeakageWarning, OptionError, RunOutputError, StratificationWarning
from hsi.evaluate.folds import FoldJob, check_models, plan
from hsi.evaluate.options import EvaluateOptions

__all__ = ["EvaluationConfig", "FoldResult", "run_evaluation", "run_fold"]


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
    """

    job: FoldJob
    metrics: dict[str, Any]
    leak: int
    reused: bool

    def entry(self) -> dict[str, Any]:
        """The fold's entry of the leaderboard (``seconds``: the recorded run time)."""
        m = self.metrics
        return {"seed": self.job.seed, "fold": self.job.fold, "oa": m["oa"], "aa": m["aa"], "kappa": m["kappa"],
                "leak": self.leak, "per_class": m["per_class"], "test_pixels": m["split"]["test_pixels"],
                "train_pixels": m["split"]["train_pixels"], "seconds": m["timing"]["total_s"],
                "run": self.job.folder.as_posix()}


def _train_config(job: FoldJob, config: EvaluationConfig, folder: Path) -> Any:
    from hsi.classical import CLASSICAL_MODELS
    from hsi.training.config import TrainConfig
    from hsi.training.options import RunOptions

    run = RunOptions(**{**config.run, "seed": job.seed, "out": str(folder), "overwrite": True})
    return TrainConfig(data=job.data(config.data), model=job.model_args(config.model, tuple(CLASSICAL_MODELS)),
                       run=run, given_run=set(config.run) | {"seed", "out", "overwrite"})


def _same_settings(recorded: dict[str, Any], settings: Any, model_defaults: dict[str, Any]) -> str | None:
    """The first setting of ``settings`` that the run's recorded ``config`` differs in (None: the same run).

    ``model_defaults`` are the model arguments a run that gives none trains with: a run
    recorded with another value of one (or none, an older recipe) is another run.
    """
    from hsi._roles import same_value

    wanted = {"data": settings.data, "model": {**model_defaults, **settings.model},
              "run": {k: getattr(settings.run, k) for k in ("epochs", "patience", "refit", "seed")}}
    for group, values in wanted.items():
        for name, value in values.items():
            found = recorded.get(group, {}).get(name)
            if not same_value(json.loads(json.dumps(value)), found):
                return f"{name}={found!r} where this evaluation asks for {value!r}"
    return None


def finished_run(folder: Path, settings: Any, overwrite: bool,
                 model_defaults: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The ``metrics.json`` of a finished run of ``settings`` in ``folder``; None when it must be run.

    ``model_defaults``: the model arguments' defaults that count as given (the network's
    training recipe, :func:`hsi.training.task.training_defaults`).

    Raises
    ------
    RunOutputError
        ``folder`` holds a finished run made with other settings, and ``overwrite`` is False.
    """
    from hsi.training.outputs import RUN_MANIFEST
    from hsi.transaction import read_manifest, verify_manifest

    manifest = read_manifest(folder, RUN_MANIFEST)
    if manifest is None or manifest.get("status") != "complete" or verify_manifest(folder, RUN_MANIFEST):
        return None
    try:
        metrics = json.loads((folder / "metrics.json").read_text())
    except (OSError, ValueError):
        return None
    differs = _same_settings(metrics.get("config", {}), settings, model_defaults or {})
    if differs is None:
        return {**metrics, "out": str(folder)}
    if overwrite:
        return None
    raise RunOutputError(f"{folder}: holds a finished fold run made with {differs}; pass --overwrite to run it "
                         "again with this evaluation's settings, or choose another --out")


def _recipe_defaults(model: str) -> dict[str, Any]:
    """The training-recipe defaults a fold of ``model`` is judged by (a network's; none for a classical model)."""
    from hsi.classical import CLASSICAL_MODELS
    from hsi.training.task import training_defaults

    return {} if model in CLASSICAL_MODELS else training_defaults()


def fold_leak(data: dict[str, Any]) -> int:
    """Test pixels inside a training patch of the split ``data`` makes (the fold's own DataModule)."""
    from hsi.data import HSIDataModule
    from hsi.preprocess.leakage import leakage_report

    datamodule = HSIDataModule(**{**data, "predict_on": "test"})
    split = datamodule.split
    return int(leakage_report(split.train, split.test, datamodule.patch_size)["test_pixels_in_train_patches"])


def run_fold(job: FoldJob, config: EvaluationConfig, out: Path) -> FoldResult:
    """One fold run (or the finished one found in its folder) and its leakage audit."""
    import torch

    from hsi.training.run import backend_for, run_backend, settle

    folder = out / job.folder
    cfg = _train_config(job, config, folder)
    backend = backend_for(cfg.model_name)
    backend.check(cfg)
    settings = settle(cfg, backend)
    settings.model.setdefault("model", cfg.model_name)
    metrics = finished_run(folder, settings, config.options.overwrite, _recipe_defaults(cfg.model_name))
    reused = metrics is not None
    if metrics is None:
        if cfg.run.threads is not None:
            torch.set_num_threads(cfg.run.threads)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LeakageWarning)  # said once for the whole --random column
            metrics = run_backend(backend, settings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LeakageWarning)  # the run said what the split lacks; not again
        warnings.simplefilter("ignore", StratificationWarning)
        leak = fold_leak(settings.data)
    return FoldResult(job, metrics, leak, reused)


#: the loggers of the package's own warning lines (children propagate to their parents' handlers, not filters)
PACKAGE_LOGGERS = ("hsi", "hsi.data", "hsi.training")


@contextlib.contextmanager
def each_warning_once() -> Iterator[None]:
    """Say each distinct warning of the fold runs once for the whole evaluation, not again in every fold.

    The package's warnings (the classes of :mod:`hsi.errors`) and its log lines (a scene
    header's contradiction, the registry's patch size) are about the data and the
    options, which every fold shares: repeated, they buried the progress lines.
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
            key = (category, str(message))
            if issubclass(category, own) and key in seen:
                return
            seen.add(key)
            show(message, category, *args, **kwargs)

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
    return (f"[{i}/{n}] {result.job.label}: OA {100 * m['oa']:.1f} % AA {100 * m['aa']:.1f} % "
            f"kappa {m['kappa']:.3f}, leak {result.leak} ({when})")


def check_config(config: EvaluationConfig) -> Path:
    """Every option checked before any work; returns the output folder (absolute)."""
    from hsi.classical import CLASSICAL_MODELS
    from hsi.data import HSIDataModule
    from hsi.evaluate.outputs import check_out, default_out
    from hsi.models.registry import list_models
    from hsi.training.options import RunOptions

    if config.data.get("split", "block") != "block":
        raise OptionError("split", config.data["split"], "block (hsi evaluate cross-validates over the blocks of the "
                          "block split; --random adds a random-split column)")
    check_models(config.options.model_names, [*list_models(), *CLASSICAL_MODELS])
    probe = HSIDataModule(**FoldJob("probe", 0, config.n_folds, 0).data(config.data))  # checks, reads nothing
    RunOptions(**config.run)
    out = config.options.out or default_out(probe.source.name)
    return check_out(out)


def run_evaluation(config: EvaluationConfig, log: Any = None) -> dict[str, Any]:
    """Run (or reuse) every fold run, then write the leaderboard files; returns the leaderboard.

    ``log(line)`` receives a progress line per fold (default: stderr). Ctrl-C keeps the
    finished fold runs; the same command resumes.
    """
    from hsi.evaluate.leaderboard import leaderboard
    from hsi.evaluate.outputs import write_outputs

    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    out = check_config(config)
    opts = config.options
    if opts.random:
        log("warning: --random: the random-pixel split lets test pixels into training patches (see each run's "
            "leak); its column is for comparison with the literature only")
    jobs = plan(opts.model_names, opts.seeds, config.n_folds, opts.random)
    started, results = time.perf_counter(), []
    try:
        with each_warning_once():
            for i, job in enumerate(jobs, start=1):
                results.append(run_fold(job, config, out))
                log(progress_line(i, len(jobs), results[-1]))
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"evaluation stopped after {len(results)} of {len(jobs)} fold runs; the finished ones "
                                f"are kept in {out / 'runs'}: run the same command again to resume") from None
    board = leaderboard(results, config, time.perf_counter() - started)
    write_outputs(out, board, results)
    return {**board, "out": str(out)}
