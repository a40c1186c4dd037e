"""Spatially disjoint splits: whole square blocks to train/val/test, with a training buffer.

:func:`block_split` is the split to use for honest numbers: whole blocks go to one
split, and training pixels near a val/test block are dropped into ``buffer``, so a
patch model with ``patch_size // 2 <= buffer`` never sees a labeled val/test pixel.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from hsi.errors import SplitError
from hsi.preprocess._split_checks import check_fractions, check_int, check_labels
from hsi.preprocess._split_result import make_split
from hsi.preprocess.leakage import square_dilate
from hsi.preprocess.split_types import Split

__all__ = ["block_folds", "block_split"]

_SPLITS = ("train", "val", "test")
_PRIORITY = (0, 2, 1)  # when required: train first, then test, then val


def _assign_blocks(block_counts: np.ndarray, fractions: np.ndarray, rng: np.random.Generator,
                   grid: tuple[int, int], cohesion: float) -> np.ndarray:
    """Greedy stratified assignment of blocks to 0 = train, 1 = val, 2 = test (-1 = empty).

    Classes are visited from the one in fewest blocks to the one in most (ties broken at
    random). Each still-unassigned block holding the class, in random order, goes to

    * the first split (train, test, val) that lacks this class, when the class has no
      more remaining blocks than missing splits (so a class in >= 2 blocks reaches
      train and test, in >= 3 blocks also val);
    * otherwise the split ``s`` with the highest score ``g_s + cohesion * n_s``, where
      ``g_s`` is the reduction of the squared relative error
      ``sum_k ((n_sk - f_s N_k) / N_k)^2`` over the classes ``k`` of the block, in units
      of the block's own weight (so ``g_s`` ~ "how many such blocks split ``s`` still
      lacks"), and ``n_s`` is the number of its 8 neighbouring blocks already in ``s``.
    """
    n_rows, n_cols = grid
    n_blocks, n_classes = block_counts.shape
    totals = block_counts.sum(axis=0).astype(np.float64)
    target = totals[:, None] * fractions[None, :]
    weight = np.where(totals > 0, 1.0 / np.maximum(totals, 1.0) ** 2, 0.0)
    current = np.zeros((n_classes, 3))
    assign = np.full(n_blocks, -1, dtype=np.int64)
    padded = np.full((n_rows + 2, n_cols + 2), -1, dtype=np.int64)  # assign, with a border
    allowed = [s for s in _PRIORITY if fractions[s] > 0]
    n_blocks_per_class = (block_counts > 0).sum(axis=0)
    order = np.lexsort((rng.permutation(n_classes), n_blocks_per_class))
    for c in order:
        if totals[c] == 0:
            continue
        blocks = np.flatnonzero((block_counts[:, c] > 0) & (assign < 0))
        blocks = rng.permutation(blocks)
        for j, b in enumerate(blocks):
            missing = [s for s in allowed if current[c, s] == 0]
            if missing and len(missing) >= len(blocks) - j:
                s = missing[0]
            else:
                wb = weight * block_counts[b]
                score = wb @ (target - current) / max(float(wb @ block_counts[b]), 1e-300)
                if cohesion:
                    r, q = divmod(int(b), n_cols)
                    around = padded[r:r + 3, q:q + 3]
                    score = score + cohesion * np.bincount(around[around >= 0], minlength=3)
                s = max(allowed, key=lambda t: (score[t], -_PRIORITY.index(t)))
            assign[b] = s
            padded[1 + b // n_cols, 1 + b % n_cols] = s
            current[:, s] += block_counts[b]
    return assign


def _assign_folds(block_counts: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Greedy stratified dealing of the labelled blocks into ``n_folds`` folds (-1 = empty block).

    The rule of ``_assign_blocks`` with ``n_folds`` equal shares: classes from the one in fewest
    blocks to the one in most; each still-unassigned block holding the class, in random order,
    goes to a fold that lacks the class while the class has no more remaining blocks than such
    folds, else to the fold with the largest per-class deficit (ties: the fold with fewest
    pixels, then the lowest index).
    """
    n_blocks, n_classes = block_counts.shape
    totals = block_counts.sum(axis=0).astype(np.float64)
    target = totals[:, None] / n_folds
    weight = np.where(totals > 0, 1.0 / np.maximum(totals, 1.0) ** 2, 0.0)
    current = np.zeros((n_classes, n_folds))
    assign = np.full(n_blocks, -1, dtype=np.int64)
    order = np.lexsort((rng.permutation(n_classes), (block_counts > 0).sum(axis=0)))
    for c in order:
        blocks = rng.permutation(np.flatnonzero((block_counts[:, c] > 0) & (assign < 0)))
        for j, b in enumerate(blocks):
            missing = np.flatnonzero(current[c] == 0)
            sizes = current.sum(axis=0)
            if missing.size and missing.size >= len(blocks) - j:
                s = int(min(missing, key=lambda t: (sizes[t], t)))
            else:
                wb = weight * block_counts[b]
                score = wb @ (target - current) / max(float(wb @ block_counts[b]), 1e-300)
                s = int(min(range(n_folds), key=lambda t: (-score[t], sizes[t], t)))
            assign[b] = s
            current[:, s] += block_counts[b]
    return assign


def block_folds(labels: Any, block_size: int = 16, n_folds: int = 5, seed: int = 0) -> np.ndarray:
    """The fold (0 .. ``n_folds - 1``) of every labelled pixel for spatial k-fold cross-validation.

    Each block of the grid of :func:`block_split` that holds labelled pixels goes, whole, to one
    fold, stratified by class (``_assign_folds``, random order from
    ``np.random.default_rng(seed)``); so each labelled block is in exactly one fold's test split.

    Parameters
    ----------
    labels : (H, W) int
        0 = unlabeled, 1..K = classes.
    block_size : int
        Side of the blocks in pixels.
    n_folds : int
        Number of folds (>= 2, at most the number of labelled blocks).
    seed : int
        Same seed, same folds.

    Returns
    -------
    (H, W) int64
        The fold of each labelled pixel; -1 for unlabeled pixels.

    Raises
    ------
    SplitError
        Bad arguments, or fewer labelled blocks than folds.
    """
    lab, grid = _fold_grid(labels, block_size, n_folds, "block_folds")
    fold_of_block = _assign_folds(grid.block_counts, int(n_folds), np.random.default_rng(check_int(seed, "seed", "block_folds", 0)))
    return np.where(lab > 0, fold_of_block[grid.block_id], -1)


def _fold_grid(labels: Any, block_size: int, n_folds: int, what: str) -> tuple[np.ndarray, _BlockGrid]:
    """The checked labels and their block grid, with at least ``n_folds`` labelled blocks."""
    lab = check_labels(labels, what)
    bs = check_int(block_size, "block_size", what, 1)
    k = check_int(n_folds, "n_folds", what, 2)
    if lab.max() == 0:
        raise SplitError(f"{what}: labels has no labeled pixel (all 0)")
    grid = _BlockGrid.of(lab, bs, int(lab.max()))
    if grid.n_labeled_blocks < k:
        raise SplitError(f"{what}: only {grid.n_labeled_blocks} block(s) of {bs}x{bs} pixels hold labeled pixels, "
                         f"fewer than the {k} folds; use fewer folds or a smaller block_size")
    return lab, grid


def block_split(labels: Any, block_size: int = 16, fractions: Sequence[float] = (0.6, 0.2, 0.2),
                buffer: int = 5, seed: int = 0, cohesion: float = 0.0,
                max_tries: int = 32, n_folds: int | None = None, fold: int | None = None) -> Split:
    """Spatially disjoint split: square blocks to train/val/test, stratified per class.

    The scene is cut into ``block_size x block_size`` blocks on a grid anchored at
    pixel (0, 0); blocks holding labeled pixels are assigned by the greedy stratified
    rule of ``_assign_blocks`` (rarest class first, random order within a class drawn
    from ``np.random.default_rng(seed)``). Up to ``max_tries`` assignments are drawn from
    the same generator and the first in which every class that spans enough blocks has
    train and test (and, with 3+ blocks, val) pixels after buffering is kept
    (otherwise the one with fewest gaps, then smallest per-class fraction error).

    Buffer: a labeled pixel of a train block within Chebyshev distance ``buffer`` of
    any pixel of a val or test block (labeled or not) is moved from ``train`` to
    ``buffer``. So with ``buffer >= patch_size // 2`` no training patch contains any
    pixel of a val/test block, in particular no labeled val/test pixel.
    Val and test are not buffered from each other.

    Parameters
    ----------
    labels : (H, W) int
        0 = unlabeled, 1..K = classes.
    block_size : int
        Side of the blocks in pixels; larger blocks mean less correlation across splits
        but coarser stratification.
    fractions : (train, val, test)
        Target share of each class's labeled pixels, before buffering (the train share is
        met by ``train + buffer``); non-negative, sum to 1, val may be 0.
    buffer : int
        Guard distance in pixels (>= 0); use ``patch_size // 2`` of the model.
    seed : int
        Same seed, same split.
    cohesion : float
        Pull of already-assigned neighbouring blocks (>= 0, in units of one block's
        worth of per-class deficit). Grouping blocks of one split shortens the borders
        between splits, so fewer training pixels are lost to the buffer, at a price in
        how closely each class meets ``fractions``. Measured with 16-pixel blocks and
        buffer 5 on Indian Pines / Pavia U / Salinas: with 0 (default) the pre-buffer
        per-class shares of classes >= 1000 pixels are within 0.06-0.13 of the targets
        and train keeps ~30 % of labeled pixels; 0.5 raises that to ~40-48 % but lets
        per-class shares drift by up to ~0.28.
    max_tries : int
        Assignments drawn before giving up on perfect representation.
    n_folds, fold : int, optional
        Spatial k-fold cross-validation: the labelled blocks are dealt into ``n_folds``
        class-stratified folds (:func:`block_folds`, the same for every ``fold`` of one
        ``seed``) and the blocks of fold ``fold`` (0-based) are the test split. The other
        blocks are assigned to train and val by the rule above with the shares
        ``fractions[0] : fractions[1]`` (its own generator, seeded by ``(seed, fold)``), and
        the buffer is applied as usual. ``fractions[2]`` is not used (the test share is
        ``1 / n_folds``). Both or neither.

    Raises
    ------
    SplitError
        Bad arguments, or a split (train, val when its fraction > 0, or test) would be
        empty; the message suggests a smaller ``block_size`` / ``buffer``.
    """
    what = "block_split"
    lab = check_labels(labels, what)
    f = check_fractions(fractions, what)
    bs = check_int(block_size, "block_size", what, 1)
    buf = check_int(buffer, "buffer", what, 0)
    seed_ = check_int(seed, "seed", what, 0)
    tries = check_int(max_tries, "max_tries", what, 1)
    if isinstance(cohesion, bool) or not isinstance(cohesion, numbers.Real) or not \
            0 <= cohesion < math.inf:
        raise SplitError(f"{what}: cohesion must be a finite number >= 0, found {cohesion!r}")
    n_classes = int(lab.max())
    if n_classes == 0:
        raise SplitError(f"{what}: labels has no labeled pixel (all 0)")
    grid = _BlockGrid.of(lab, bs, n_classes)
    needed = [_SPLITS[s] for s in range(3) if f[s] > 0]
    if grid.n_labeled_blocks < len(needed):
        raise SplitError(
            f"{what}: only {grid.n_labeled_blocks} block(s) of {bs}x{bs} pixels hold labeled pixels "
            f"on this {lab.shape[0]}x{lab.shape[1]} label map, but {len(needed)} splits ({', '.join(needed)}) "
            "need one each; use a smaller block_size"
        )
    rng = np.random.default_rng(seed_)
    draw = functools.partial(_assign_blocks, grid.block_counts, f, rng, grid.shape, float(cohesion))
    folds = _fold_arguments(n_folds, fold, what)
    shares = f
    if folds:
        draw, shares = _fold_draw(lab, grid, f, seed_, folds, float(cohesion), bs)
    masks, attempt = _best_assignment(lab, grid, shares, buf, draw, tries)
    _check_not_empty(masks, needed, what, bs, buf, lab.shape, grid.n_labeled_blocks)
    params = {"method": "block", "block_size": bs, "buffer": buf, "fractions": f.tolist(),
              "seed": seed_, "cohesion": float(cohesion), "attempt": attempt,
              "buffer_reference": "Chebyshev distance to any pixel of a val/test block",
              **({"n_folds": folds[0], "fold": folds[1]} if folds else {})}
    return make_split(lab, masks, params, what, _class_hints(grid.blocks_per_class, bs, buf))


@dataclass(frozen=True)
class _BlockGrid:
    """The blocks of a label map: each pixel's block id and each block's per-class pixel counts."""

    block_id: np.ndarray       # (H, W) int
    block_counts: np.ndarray   # (n_blocks, K) int
    shape: tuple[int, int]     # blocks per column and per row

    @classmethod
    def of(cls, lab: np.ndarray, bs: int, n_classes: int) -> _BlockGrid:
        h, w = lab.shape
        nbr, nbc = math.ceil(h / bs), math.ceil(w / bs)
        block_id = (np.arange(h) // bs)[:, None] * nbc + (np.arange(w) // bs)[None, :]
        labeled = lab > 0
        flat = block_id[labeled] * n_classes + (lab[labeled] - 1)
        counts = np.bincount(flat, minlength=nbr * nbc * n_classes).reshape(nbr * nbc, n_classes)
        return cls(block_id, counts, (nbr, nbc))

    @property
    def n_labeled_blocks(self) -> int:
        return int((self.block_counts.sum(axis=1) > 0).sum())

    @property
    def blocks_per_class(self) -> np.ndarray:
        return (self.block_counts > 0).sum(axis=0)


def _fold_arguments(n_folds: Any, fold: Any, what: str) -> tuple[int, int] | None:
    """``(n_folds, fold)`` checked, or None without folds."""
    if n_folds is None and fold is None:
        return None
    if n_folds is None or fold is None:
        raise SplitError(f"{what}: n_folds and fold go together, found n_folds={n_folds!r}, fold={fold!r}")
    k = check_int(n_folds, "n_folds", what, 2)
    i = check_int(fold, "fold", what, 0)
    if i >= k:
        raise SplitError(f"{what}: fold must be from 0 to n_folds - 1 = {k - 1}, found {i}")
    return k, i


def _fold_draw(lab: np.ndarray, grid: _BlockGrid, f: np.ndarray, seed: int, folds: tuple[int, int],
               cohesion: float, bs: int) -> tuple[Callable[[], np.ndarray], np.ndarray]:
    """The block assignment drawer of one fold (its test blocks fixed) and the fold's effective fractions."""
    k, i = folds
    _fold_grid(lab, bs, k, "block_split")
    fold_of_block = _assign_folds(grid.block_counts, k, np.random.default_rng(seed))
    test = fold_of_block == i
    rest = np.where(test[:, None], 0, grid.block_counts)
    share = np.array([f[0], f[1], 0.0]) / (f[0] + f[1])
    rng = np.random.default_rng([seed, i])

    def draw() -> np.ndarray:
        assign = _assign_blocks(rest, share, rng, grid.shape, cohesion)
        assign[test] = 2
        return assign

    return draw, np.array([share[0] * (k - 1) / k, share[1] * (k - 1) / k, 1.0 / k])


def _best_assignment(lab: np.ndarray, grid: _BlockGrid, f: np.ndarray, buf: int, draw: Callable[[], np.ndarray],
                     tries: int) -> tuple[dict[str, np.ndarray], int]:
    """The buffered masks of the first assignment ``draw()`` gives that represents every class (else the best one), and its try."""
    n_classes = grid.block_counts.shape[1]
    labeled = lab > 0
    # A class in n blocks is required in the first min(n, 3) of (train, test, val).
    allowed = [s for s in _PRIORITY if f[s] > 0]
    want = np.minimum(grid.blocks_per_class, len(allowed))
    best = None
    for attempt in range(tries):
        pix_split = draw()[grid.block_id]
        near = square_dilate((pix_split == 1) | (pix_split == 2), buf)
        cand = labeled & (pix_split == 0)
        masks = {"train": cand & ~near, "val": labeled & (pix_split == 1),
                 "test": labeled & (pix_split == 2), "buffer": cand & near}
        per = np.stack([np.bincount(lab[masks[s]], minlength=n_classes + 1)[1:]
                        for s in _SPLITS], axis=1)  # (K, 3)
        gaps = sum(int(((want > i) & (per[:, s] == 0)).sum()) for i, s in enumerate(allowed))
        totals = np.maximum(per.sum(axis=1, keepdims=True), 1)
        score = (gaps, float(((per / totals - f[None, :]) ** 2).sum()))
        if best is None or score < best[0]:
            best = (score, masks, attempt)
        if gaps == 0:
            break
    return best[1], best[2]


def _check_not_empty(masks: dict[str, np.ndarray], needed: list[str], what: str, bs: int, buf: int,
                     shape: tuple[int, int], n_labeled_blocks: int) -> None:
    for s in _SPLITS:
        if s in needed and not masks[s].any():
            cause = ("the buffer removed every training pixel; use a smaller buffer or a "
                     "larger block_size" if s == "train" and masks["buffer"].any()
                     else "use a smaller block_size")
            raise SplitError(
                f"{what}: the {s} split is empty with block_size={bs}, buffer={buf} on this "
                f"{shape[0]}x{shape[1]} label map ({n_labeled_blocks} labeled blocks); {cause}"
            )


def _class_hints(blocks_per_class: np.ndarray, bs: int, buf: int) -> dict[int, str]:
    """Why a class may be missing from a split, by class id (for the split's warnings)."""
    hints = {}
    for k, nb in enumerate(blocks_per_class.tolist(), start=1):
        if nb == 1:
            hints[k] = f": all its pixels lie in one {bs}x{bs} block; use a smaller block_size"
        elif nb > 1:
            hints[k] = (f": it spans {nb} blocks of {bs}x{bs}, taken by other classes or "
                        f"cleared by buffer={buf}; try another seed or a smaller block_size")
    return hints
