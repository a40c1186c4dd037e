"""A label budget: a few labelled pixels per class drawn from a split's training pixels.

Few-shot hyperspectral papers report accuracy at a fixed number of labelled pixels per class
(5, 10, 20, 50 ...) or at a fixed fraction of each class. :func:`apply_budget` takes the
:class:`~hsi.preprocess.Split` already made (blocks, buffer and all) and keeps, of each class,

- ``per_class=N``: ``N`` training pixels (all of them where the class has fewer, with one
  :class:`~hsi.errors.LabelBudgetWarning` naming those classes), or
- ``fraction=F``: ``F x n`` of its ``n`` training pixels, rounded to the nearest (halves up),
  at least one;

drawn without replacement from the training mask only (so never from a val/test block nor from
the buffer). The validation pixels follow ``val``: ``"same"`` draws the same budget from the
validation pixels, ``"all"`` keeps them all, ``"none"`` keeps none. The test mask is never touched.

The draw depends on the label map, the split's masks and ``seed`` only, never on the model or its
patch size, so every model given the same seed trains on the same pixels. Each class has its own
random stream (``seed``, the mask drawn from, the class) ranking all of its labelled pixels,
and keeps its best-ranked candidates, so budgets are nested (with one seed the 5 pixels of a class
are among its 10) and a wider buffer changes the draw only where it took a drawn pixel away. The
training pixels themselves depend on the split (block size, fractions, buffer, whose default
follows the patch size): models compared on one budget need one split, e.g. one ``buffer``. Several scenes (a collection) are pooled: the budget is per class over the whole
collection's training pixels, candidates taken scene after scene in row-major order.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hsi.errors import LabelBudgetWarning, OptionError
from hsi.preprocess._split_result import _count_table
from hsi.preprocess.split_types import Split

__all__ = ["VAL_RULES", "Budget", "apply_budget"]

#: what the validation pixels become under a budget: the same budget, all of them, or none
VAL_RULES = ("same", "all", "none")

#: the random stream of each mask drawn from (a class's stream is ``(seed, this, class)``)
_STREAMS = {"train": 0, "val": 1}


@dataclass(frozen=True)
class Budget:
    """How many labelled pixels of each class are kept.

    Parameters
    ----------
    per_class : int or None
        Pixels per class (>= 1), exclusive with ``fraction``.
    fraction : float or None
        Share of each class's pixels, in (0, 1].
    val : {"same", "all", "none"}
        The validation pixels: the same budget drawn from them, all of them, or none.
    seed : int
        Seed of the draw (the DataModule passes the split's seed).
    """

    per_class: int | None = None
    fraction: float | None = None
    val: str = "same"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.per_class is not None and self.fraction is not None:
            raise OptionError("train_fraction", self.fraction, "none when train_per_class is given (the two "
                              "budgets are exclusive)")
        if self.per_class is not None and (isinstance(self.per_class, bool) or not isinstance(self.per_class, int)
                                           or self.per_class < 1):
            raise OptionError("train_per_class", self.per_class, "an integer >= 1, or None (no budget)")
        if self.fraction is not None and (isinstance(self.fraction, bool) or not isinstance(self.fraction, (int, float))
                                          or not 0 < self.fraction <= 1):
            raise OptionError("train_fraction", self.fraction, "a number in (0, 1], or None (no budget)")
        if self.val not in VAL_RULES:
            raise OptionError("val_budget", self.val, "one of " + ", ".join(VAL_RULES))

    @property
    def active(self) -> bool:
        """Whether any budget is asked for."""
        return self.per_class is not None or self.fraction is not None

    def take(self, available: int) -> int:
        """How many of ``available`` pixels of one class are kept."""
        if available <= 0:
            return 0
        if self.per_class is not None:
            return min(self.per_class, available)
        if self.fraction is not None:
            return min(available, max(1, math.floor(self.fraction * available + 0.5)))
        return available


def _draw(labels: Sequence[np.ndarray], masks: Sequence[np.ndarray], budget: Budget, stream: int
          ) -> tuple[list[np.ndarray], list[dict[str, int]]]:
    """The budget drawn from ``masks`` (one per scene): the kept masks, and per class what was there and kept.

    Every labelled pixel of a class (all scenes, row-major) is ranked by one seeded permutation; the class keeps its
    best-ranked pixels inside ``masks``. A pixel's rank does not depend on the mask, so a change of the training
    pixels (another buffer) changes the draw only where it removed or added a candidate.
    """
    flat = [lab.ravel() for lab in labels]
    offsets = np.cumsum([0] + [f.size for f in flat])
    pooled, inside = np.concatenate(flat).astype(np.int64), np.concatenate([m.ravel() for m in masks])
    kept = np.zeros(pooled.size, dtype=bool)
    record = []
    for k in np.unique(pooled[inside & (pooled > 0)]):
        every = np.flatnonzero(pooled == k)
        ranked = every[np.random.default_rng([budget.seed, stream, int(k)]).permutation(every.size)]
        candidates = ranked[inside[ranked]]
        n = budget.take(candidates.size)
        kept[candidates[:n]] = True
        record.append({"class": int(k), "available": int(candidates.size), "kept": int(n)})
    out = [kept[a:b].reshape(m.shape) for a, b, m in zip(offsets[:-1], offsets[1:], masks)]
    return out, record


def _warn_short(record: list[dict[str, int]], per_class: int | None, what: str) -> None:
    """One warning naming the classes that have fewer pixels than the budget asks for."""
    short = [r for r in record if per_class is not None and r["available"] < per_class]
    if short:
        named = ", ".join(f"class {r['class']} ({r['available']})" for r in short)
        warnings.warn(f"label budget of {per_class} pixels per class: {len(short)} class(es) have fewer {what} "
                      f"pixels and keep all they have: {named}", LabelBudgetWarning, stacklevel=3)


def _rebudgeted(split: Split, labels: np.ndarray, train: np.ndarray, val: np.ndarray, record: dict[str, Any]) -> Split:
    """``split`` with the kept training and validation masks, its counts redone and the budget in its params."""
    masks = {"train": train, "val": val, "test": split.test, "buffer": split.buffer}
    counts = _count_table(np.asarray(labels, dtype=np.int64), masks)
    return Split(counts=counts, params={**split.params, "budget": record}, warnings=list(split.warnings),
                 unrepresented=list(split.unrepresented), **masks)


def apply_budget(labels: Sequence[np.ndarray], splits: Sequence[Split], budget: Budget) -> list[Split]:
    """The splits with only the budget's training (and validation) pixels; unchanged when no budget is asked for.

    Parameters
    ----------
    labels : sequence of (H_i, W_i) int arrays
        Each scene's label map (0 unlabeled), the one its split was made from.
    splits : sequence of Split
        One per scene; a collection's are budgeted together (per class over all scenes).
    budget : Budget
        What to keep.

    Returns
    -------
    list of Split
        New splits: ``train`` (and ``val``) subsets of the old, ``test`` and ``buffer`` as they were, counts
        redone, and ``params["budget"]``: the budget (``train_per_class``, ``train_fraction``, ``val_budget``,
        ``seed``) and, per class, the pixels available and kept (``train``; ``val``, None unless ``val="same"``).
    """
    if not budget.active:
        return list(splits)
    labels = [np.asarray(lab) for lab in labels]
    train, train_record = _draw(labels, [s.train for s in splits], budget, _STREAMS["train"])
    _warn_short(train_record, budget.per_class, "training")
    if budget.val == "same":
        val, val_record = _draw(labels, [s.val for s in splits], budget, _STREAMS["val"])
        _warn_short(val_record, budget.per_class, "validation")
    else:
        val = [s.val.copy() if budget.val == "all" else np.zeros(s.shape, dtype=bool) for s in splits]
        val_record = None
    record = {"train_per_class": budget.per_class, "train_fraction": budget.fraction, "val_budget": budget.val,
              "seed": int(budget.seed), "train": train_record, "val": val_record}
    return [_rebudgeted(s, lab, t, v, record) for s, lab, t, v in zip(splits, labels, train, val)]
