"""The fold runs an evaluation makes, and what each one is given.

A :class:`FoldJob` is one ``hsi train`` run: one model, one seed, one fold of K (or the
per-pixel random split of the ``--random`` column). Its data options are the evaluation's
with ``folds=K, fold=k`` and the evaluation's split buffer (so ``hsi train --folds K --fold k
--buffer B`` reproduces it exactly; every model of the evaluation has the same ``B``, its
``buffer`` in ``leaderboard.json``), and it writes into ``<out>/runs/<model>/seed<seed>/fold<k>``. Folds are numbered from 1 to K, as people
count them, everywhere: the ``fold`` option, folder names, console, metrics and leaderboard.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from hsi.errors import OptionError
from hsi.evaluate.options import ALL_MODELS, DEFAULT_ROW

__all__ = ["FoldJob", "check_models", "expand_models", "plan"]


@dataclass(frozen=True)
class FoldJob:
    """One run of an evaluation.

    Attributes
    ----------
    model : str
        The model as given (``default``, a registry name, ``svm`` or ``rf``).
    seed : int
        The run's seed (split, initialisation, data order).
    n_folds : int
        Folds of the evaluation.
    fold : int | None
        The fold tested, from 1 to ``n_folds``; None for the random-pixel split.
    buffer : int | None
        The split buffer of the block folds, the same for every model of the evaluation
        (:func:`hsi.evaluate.fitness.board_buffer`); None: the DataModule's (``patch_size // 2``
        unless given). The random-pixel split has none.
    """

    model: str
    seed: int
    n_folds: int
    fold: int | None
    buffer: int | None = None

    @property
    def folder(self) -> PurePosixPath:
        """Where the run goes, relative to the evaluation's folder."""
        last = "random" if self.fold is None else f"fold{self.fold}"
        return PurePosixPath("runs", self.model, f"seed{self.seed}", last)

    @property
    def label(self) -> str:
        """``ssnet seed 0 fold 2/5``."""
        where = "random split" if self.fold is None else f"fold {self.fold}/{self.n_folds}"
        return f"{self.model} seed {self.seed} {where}"

    def data(self, given: dict[str, Any]) -> dict[str, Any]:
        """The run's DataModule arguments: the evaluation's, with this fold and buffer (or the random split)."""
        data = {k: v for k, v in given.items() if k not in ("folds", "fold")}
        if self.fold is None:
            return {**data, "split": "random"}
        buffer = {} if self.buffer is None else {"buffer": self.buffer}
        return {**data, "folds": self.n_folds, "fold": self.fold, **buffer}

    def model_args(self, given: dict[str, Any], classical: tuple[str, ...]) -> dict[str, Any]:
        """The run's task arguments: the given ones for a network, none for a classical baseline."""
        if self.model in classical:
            return {"model": self.model}
        if self.model == DEFAULT_ROW:
            return dict(given)
        return {**given, "model": self.model}


def check_models(models: tuple[str, ...], known: list[str]) -> None:
    """Refuse a name that is neither ``default``, ``all`` nor a known model."""
    for name in models:
        if name not in (DEFAULT_ROW, ALL_MODELS) and name not in known:
            raise OptionError("models", name, f"{DEFAULT_ROW}, {ALL_MODELS} or one of " + ", ".join(known))


def expand_models(models: tuple[str, ...], known: list[str]) -> tuple[str, ...]:
    """``models`` with ``all`` replaced by every known model (the registry's, then the classical ones), each once."""
    names: list[str] = []
    for name in models:
        names += known if name == ALL_MODELS else [name]
    return tuple(dict.fromkeys(names))


def plan(models: tuple[str, ...], seeds: tuple[int, ...], n_folds: int, random: bool,
         buffer: int | None = None) -> list[FoldJob]:
    """Every run, model by model, seed by seed, fold by fold (the random split last); the block folds with the split
    ``buffer`` (:attr:`FoldJob.buffer`)."""
    jobs = []
    for model in models:
        for seed in seeds:
            jobs += [FoldJob(model, seed, n_folds, k, buffer) for k in range(1, n_folds + 1)]
        if random:
            jobs += [FoldJob(model, seed, n_folds, None) for seed in seeds]
    return jobs
