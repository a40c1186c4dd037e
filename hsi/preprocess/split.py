"""Train/val/test splits of a label map: spatial blocks, random pixels, or fixed maps.

All splits return a :class:`Split` with boolean ``(H, W)`` masks over labeled pixels.

:func:`block_split` is the one to use for honest numbers: whole square blocks go to
one split, and training pixels near a val/test block are dropped into ``buffer``, so a
patch model with ``patch_size // 2 <= buffer`` never sees a labeled val/test pixel.
:func:`random_split` reproduces the per-pixel splits of the literature and warns
(:class:`hsi.errors.LeakageWarning`). :func:`fixed_split` wraps benchmark releases
that ship separate train and test maps.
"""

from __future__ import annotations

import base64
import hashlib
import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from hsi.errors import LeakageWarning, ShapeMismatchError, SplitError
from hsi.preprocess._base import StateFormatError
from hsi.preprocess.leakage import square_dilate

__all__ = [
    "COLUMNS",
    "Split",
    "SplitCounts",
    "StratificationWarning",
    "block_split",
    "fixed_split",
    "random_split",
]

#: The columns of :class:`SplitCounts`, in order.
COLUMNS: tuple[str, ...] = ("train", "val", "test", "buffer")
_SPLITS = ("train", "val", "test")
_FORMAT = "hsi.preprocess.Split"
_FORMAT_VERSION = 1


class StratificationWarning(UserWarning):
    """Some class could not be given both training and test pixels."""


# ---------------------------------------------------------------------------------------
# Result types
# ---------------------------------------------------------------------------------------
@dataclass
class SplitCounts:
    """Per-class pixel counts of a split.

    Attributes
    ----------
    classes : (K,) int64
        Class labels 1..K (row ``k - 1`` is class ``k``).
    values : (K, 4) int64
        Counts in the columns :data:`COLUMNS` (train, val, test, buffer).
    """

    classes: np.ndarray
    values: np.ndarray

    columns: tuple[str, ...] = COLUMNS

    def __getitem__(self, column: str) -> np.ndarray:
        """Per-class counts of one column, e.g. ``counts["train"]`` -> (K,)."""
        if column not in self.columns:
            raise KeyError(f"no column {column!r}; columns are {self.columns}")
        return self.values[:, self.columns.index(column)]

    def totals(self) -> dict[str, int]:
        """Column sums."""
        return {c: int(v) for c, v in zip(self.columns, self.values.sum(axis=0))}

    def to_dict(self) -> dict[int, dict[str, int]]:
        """``{class: {column: count}}``."""
        return {int(k): {c: int(v) for c, v in zip(self.columns, row)}
                for k, row in zip(self.classes, self.values)}

    def format(self, class_names: Sequence[str] | None = None) -> str:
        """A fixed-width text table, one row per class plus a total row."""
        names = [str(int(k)) if class_names is None else f"{int(k)} {class_names[int(k) - 1]}"
                 for k in self.classes]
        name_w = max([len("class"), len("total")] + [len(n) for n in names])
        col_w = max(7, *(len(str(int(v))) + 1 for v in self.values.sum(axis=0)))
        header = "class".ljust(name_w) + "".join(c.rjust(col_w) for c in self.columns)
        lines = [header, "-" * len(header)]
        for n, row in zip(names, self.values):
            lines.append(n.ljust(name_w) + "".join(str(int(v)).rjust(col_w) for v in row))
        lines.append("-" * len(header))
        lines.append("total".ljust(name_w)
                     + "".join(str(int(v)).rjust(col_w) for v in self.values.sum(axis=0)))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def _pack(mask: np.ndarray) -> str:
    return base64.b64encode(np.packbits(mask.ravel())).decode("ascii")


def _unpack(text: str, shape: tuple[int, int]) -> np.ndarray:
    bits = np.unpackbits(np.frombuffer(base64.b64decode(text.encode("ascii")), dtype=np.uint8))
    n = shape[0] * shape[1]
    if bits.size < n:
        raise StateFormatError(f"Split.from_state: packed mask too short for shape {shape}")
    return bits[:n].astype(bool).reshape(shape)


def labels_digest(labels: np.ndarray) -> str:
    """SHA-256 of a label map (int64 values and shape), to check a split fits its labels."""
    lab = np.ascontiguousarray(labels, dtype=np.int64)
    h = hashlib.sha256(str(lab.shape).encode())
    h.update(lab.tobytes())
    return h.hexdigest()


@dataclass
class Split:
    """A train/val/test partition of the labeled pixels of one scene.

    Attributes
    ----------
    train, val, test : (H, W) bool
        Disjoint masks of labeled pixels.
    buffer : (H, W) bool
        Labeled pixels that would have been training pixels but lie within ``buffer`` of
        a val/test block; they are in none of the three masks.
    counts : SplitCounts
        Per-class counts (train, val, test, buffer); ``print(split.counts)``.
    params : dict
        How the split was made: method, seed, block_size, buffer, fractions, shape,
        ``labels_sha256``...
    warnings : list of str
        Human-readable notes (classes that could not be represented, and why).
    unrepresented : list of int
        Classes present in the labels with no training or no test pixel.
    """

    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    buffer: np.ndarray
    counts: SplitCounts
    params: dict
    warnings: list[str] = field(default_factory=list)
    unrepresented: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        shape = np.shape(self.train)
        for name in ("train", "val", "test", "buffer"):
            arr = np.asarray(getattr(self, name))
            if arr.ndim != 2 or arr.shape != shape or arr.dtype != bool:
                raise ShapeMismatchError(
                    f"Split: {name} must be a boolean mask of shape {shape}, found "
                    f"{arr.dtype} {arr.shape}"
                )
            setattr(self, name, arr)
        overlap = ((self.train.astype(np.uint8) + self.val + self.test + self.buffer) > 1).sum()
        if overlap:
            raise SplitError(f"Split: {overlap} pixels are in more than one of "
                             "train/val/test/buffer; the masks must be disjoint")

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.train.shape)  # type: ignore[return-value]

    def format_counts(self, class_names: Sequence[str] | None = None) -> str:
        """The per-class count table as text (with class names if given)."""
        return self.counts.format(class_names)

    def matches(self, labels: Any) -> bool:
        """Whether ``labels`` is the label map this split was made from (by SHA-256)."""
        return labels_digest(np.asarray(labels)) == self.params.get("labels_sha256")

    def to_state(self) -> dict[str, Any]:
        """Plain JSON types: masks packed as base64 of ``np.packbits``; counts as lists."""
        from hsi.preprocess._state import encode_value

        return {
            "format": _FORMAT,
            "format_version": _FORMAT_VERSION,
            "shape": list(self.shape),
            "masks": {name: _pack(getattr(self, name)) for name in COLUMNS},
            "classes": self.counts.classes.tolist(),
            "counts": self.counts.values.tolist(),
            "params": encode_value(self.params),
            "warnings": list(self.warnings),
            "unrepresented": [int(k) for k in self.unrepresented],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Split:
        """Rebuild a split from :meth:`to_state` output; checks format and version."""
        if not isinstance(state, dict) or state.get("format") != _FORMAT:
            raise StateFormatError(
                "Split.from_state: not a saved hsi split (expected format "
                f"{_FORMAT!r}, found {state.get('format') if isinstance(state, dict) else state!r})"
            )
        if state.get("format_version") != _FORMAT_VERSION:
            raise StateFormatError(
                f"Split.from_state: unsupported format_version {state.get('format_version')!r}; "
                f"this version of hsi reads {_FORMAT_VERSION}"
            )
        try:
            shape = tuple(int(v) for v in state["shape"])
            masks = {name: _unpack(state["masks"][name], shape) for name in COLUMNS}
            counts = SplitCounts(np.asarray(state["classes"], dtype=np.int64),
                                 np.asarray(state["counts"], dtype=np.int64).reshape(-1, 4))
        except (KeyError, TypeError, ValueError) as err:
            raise StateFormatError(f"Split.from_state: malformed state ({err!r})") from err
        return cls(counts=counts, params=dict(state.get("params", {})),
                   warnings=list(state.get("warnings", [])),
                   unrepresented=[int(k) for k in state.get("unrepresented", [])], **masks)


# ---------------------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------------------
def _check_labels(labels: Any, what: str, name: str = "labels") -> np.ndarray:
    arr = np.asarray(labels)
    if arr.ndim != 2:
        raise ShapeMismatchError(f"{what}: {name} must be a 2-D (H, W) label map, found shape "
                                 f"{arr.shape}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise SplitError(f"{what}: {name} must be an integer label map (0 = unlabeled, classes "
                         f"1..K), found dtype {arr.dtype}")
    if arr.size and arr.min() < 0:
        raise SplitError(f"{what}: {name} has negative values (min {arr.min()}); use 0 for "
                         "unlabeled and 1..K for classes")
    return arr.astype(np.int64)


def _check_fractions(fractions: Any, what: str) -> np.ndarray:
    try:
        f = np.asarray(fractions, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as err:
        raise SplitError(f"{what}: fractions must be 3 numbers (train, val, test), found "
                         f"{fractions!r}") from err
    if f.size != 3 or not np.isfinite(f).all():
        raise SplitError(f"{what}: fractions must be 3 finite numbers (train, val, test), "
                         f"found {fractions!r}")
    if (f < 0).any():
        raise SplitError(f"{what}: fractions must be non-negative, found {fractions!r}")
    if abs(f.sum() - 1.0) > 1e-6:
        raise SplitError(f"{what}: fractions must sum to 1, found {fractions!r} "
                         f"(sum {f.sum():.6g})")
    if f[0] == 0 or f[2] == 0:
        raise SplitError(f"{what}: fractions must give train and test a positive share, found "
                         f"{fractions!r}")
    return f


def _check_int(value: Any, name: str, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise SplitError(f"{what}: {name} must be an int >= {minimum}, found {value!r}")
    return int(value)


def _count_table(labels: np.ndarray, masks: dict[str, np.ndarray]) -> SplitCounts:
    k = int(labels.max()) if labels.size else 0
    values = np.zeros((k, len(COLUMNS)), dtype=np.int64)
    for j, name in enumerate(COLUMNS):
        values[:, j] = np.bincount(labels[masks[name]], minlength=k + 1)[1:k + 1]
    return SplitCounts(np.arange(1, k + 1, dtype=np.int64), values)


def _representation(labels: np.ndarray, counts: SplitCounts, what: str,
                    hints: dict[int, str] | None = None) -> tuple[list[int], list[str]]:
    """Classes present in ``labels`` without train or test pixels, with messages; warns."""
    present = np.bincount(labels.ravel(), minlength=len(counts.classes) + 1)[1:]
    unrep, notes = [], []
    for i, k in enumerate(counts.classes):
        if present[i] == 0:
            continue
        missing = [s for s in ("train", "test") if counts[s][i] == 0]
        if missing:
            unrep.append(int(k))
            hint = (hints or {}).get(int(k), "")
            notes.append(f"class {int(k)} ({int(present[i])} labeled pixels) has no "
                         f"{' and no '.join(missing)} pixels{hint}")
    if notes:
        warnings.warn(f"{what}: {len(unrep)} class(es) not in both train and test: "
                      + "; ".join(notes), StratificationWarning, stacklevel=3)
    return unrep, notes


def _make_split(labels: np.ndarray, masks: dict[str, np.ndarray], params: dict, what: str,
                hints: dict[int, str] | None = None) -> Split:
    counts = _count_table(labels, masks)
    unrep, notes = _representation(labels, counts, what, hints)
    params = dict(params, shape=list(labels.shape), n_classes=int(len(counts.classes)),
                  labels_sha256=labels_digest(labels))
    return Split(counts=counts, params=params, warnings=notes, unrepresented=unrep, **masks)


# ---------------------------------------------------------------------------------------
# Block split
# ---------------------------------------------------------------------------------------
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


def block_split(labels: Any, block_size: int = 16, fractions: Sequence[float] = (0.6, 0.2, 0.2),
                buffer: int = 5, seed: int = 0, cohesion: float = 0.0,
                max_tries: int = 32) -> Split:
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

    Raises
    ------
    SplitError
        Bad arguments, or a split (train, val when its fraction > 0, or test) would be
        empty; the message suggests a smaller ``block_size`` / ``buffer``.
    """
    what = "block_split"
    lab = _check_labels(labels, what)
    f = _check_fractions(fractions, what)
    bs = _check_int(block_size, "block_size", what, 1)
    buf = _check_int(buffer, "buffer", what, 0)
    seed_ = _check_int(seed, "seed", what, 0)
    tries = _check_int(max_tries, "max_tries", what, 1)
    if isinstance(cohesion, bool) or not isinstance(cohesion, numbers.Real) or not \
            0 <= cohesion < math.inf:
        raise SplitError(f"{what}: cohesion must be a finite number >= 0, found {cohesion!r}")
    h, w = lab.shape
    n_classes = int(lab.max())
    if n_classes == 0:
        raise SplitError(f"{what}: labels has no labeled pixel (all 0)")

    nbr, nbc = math.ceil(h / bs), math.ceil(w / bs)
    block_id = (np.arange(h) // bs)[:, None] * nbc + (np.arange(w) // bs)[None, :]
    labeled = lab > 0
    flat = block_id[labeled] * n_classes + (lab[labeled] - 1)
    block_counts = np.bincount(flat, minlength=nbr * nbc * n_classes).reshape(nbr * nbc,
                                                                             n_classes)
    n_labeled_blocks = int((block_counts.sum(axis=1) > 0).sum())
    needed = [_SPLITS[s] for s in range(3) if f[s] > 0]
    if n_labeled_blocks < len(needed):
        raise SplitError(
            f"{what}: only {n_labeled_blocks} block(s) of {bs}x{bs} pixels hold labeled pixels "
            f"on this {h}x{w} label map, but {len(needed)} splits ({', '.join(needed)}) need one "
            "each; use a smaller block_size"
        )
    blocks_per_class = (block_counts > 0).sum(axis=0)
    # A class in n blocks is required in the first min(n, 3) of (train, test, val).
    allowed = [s for s in _PRIORITY if f[s] > 0]
    want = np.minimum(blocks_per_class, len(allowed))

    rng = np.random.default_rng(seed_)
    best = None
    for attempt in range(tries):
        assign = _assign_blocks(block_counts, f, rng, (nbr, nbc), float(cohesion))
        pix_split = assign[block_id]
        held_out_blocks = (pix_split == 1) | (pix_split == 2)
        near = square_dilate(held_out_blocks, buf)
        cand = labeled & (pix_split == 0)
        masks = {"train": cand & ~near, "val": labeled & (pix_split == 1),
                 "test": labeled & (pix_split == 2), "buffer": cand & near}
        per = np.stack([np.bincount(lab[masks[s]], minlength=n_classes + 1)[1:]
                        for s in _SPLITS], axis=1)  # (K, 3)
        gaps = sum(int(((want > i) & (per[:, s] == 0)).sum())
                   for i, s in enumerate(allowed))
        totals = np.maximum(per.sum(axis=1, keepdims=True), 1)
        error = float(((per / totals - f[None, :]) ** 2).sum())
        score = (gaps, error)
        if best is None or score < best[0]:
            best = (score, masks, attempt)
        if gaps == 0:
            break
    (gaps, error), masks, attempt = best

    for s in _SPLITS:
        if s in needed and not masks[s].any():
            cause = ("the buffer removed every training pixel; use a smaller buffer or a "
                     "larger block_size" if s == "train" and masks["buffer"].any()
                     else "use a smaller block_size")
            raise SplitError(
                f"{what}: the {s} split is empty with block_size={bs}, buffer={buf} on this "
                f"{h}x{w} label map ({n_labeled_blocks} labeled blocks); {cause}"
            )

    hints = {}
    for k in range(1, n_classes + 1):
        nb = int(blocks_per_class[k - 1])
        if nb == 1:
            hints[k] = f": all its pixels lie in one {bs}x{bs} block; use a smaller block_size"
        elif nb > 1:
            hints[k] = (f": it spans {nb} blocks of {bs}x{bs}, taken by other classes or "
                        f"cleared by buffer={buf}; try another seed or a smaller block_size")
    params = {"method": "block", "block_size": bs, "buffer": buf, "fractions": f.tolist(),
              "seed": seed_, "cohesion": float(cohesion), "attempt": attempt,
              "buffer_reference": "Chebyshev distance to any pixel of a val/test block"}
    return _make_split(lab, masks, params, what, hints)


# ---------------------------------------------------------------------------------------
# Random and fixed splits
# ---------------------------------------------------------------------------------------
def _n_train(n: int, train_per_class: int | float, what: str) -> int:
    if isinstance(train_per_class, bool) or not isinstance(train_per_class, numbers.Real):
        raise SplitError(f"{what}: train_per_class must be an int count or a float fraction in "
                         f"(0, 1), found {train_per_class!r}")
    if isinstance(train_per_class, numbers.Integral):
        if train_per_class < 1:
            raise SplitError(f"{what}: train_per_class must be >= 1, found {train_per_class}")
        k = int(train_per_class)
    else:
        if not 0 < train_per_class < 1:
            raise SplitError(f"{what}: a float train_per_class is a fraction in (0, 1), found "
                             f"{train_per_class!r}")
        k = max(1, int(round(train_per_class * n)))
    return min(k, n - 1) if n > 1 else n


def random_split(labels: Any, fractions: Sequence[float] = (0.6, 0.2, 0.2),
                 train_per_class: int | float | None = None, seed: int = 0) -> Split:
    """Per-pixel stratified random split, for comparison with the literature only.

    Each class's labeled pixels are shuffled (``np.random.default_rng(seed)``) and cut in
    the proportions ``fractions``, keeping at least one train and one test pixel for
    every class with >= 2 pixels. With ``train_per_class`` (an int count, or a float
    fraction of the class) the training count is set that way instead (capped at the
    class size minus one), and the rest is divided between val and test in the ratio
    ``fractions[1] : fractions[2]``.

    Always warns :class:`hsi.errors.LeakageWarning`: neighbouring pixels are strongly
    correlated and patch models see test pixels inside their training windows, so
    accuracies are optimistic.
    """
    what = "random_split"
    lab = _check_labels(labels, what)
    f = _check_fractions(fractions, what)
    seed_ = _check_int(seed, "seed", what, 0)
    if not (lab > 0).any():
        raise SplitError(f"{what}: labels has no labeled pixel (all 0)")
    warnings.warn(
        "random_split assigns neighbouring pixels to different splits: patches around "
        "training pixels contain test pixels and adjacent pixels are near-duplicates, so "
        "test accuracy is inflated. Use block_split for honest evaluation.",
        LeakageWarning, stacklevel=2)
    rng = np.random.default_rng(seed_)
    flat = lab.ravel()
    masks = {s: np.zeros(flat.size, dtype=bool) for s in COLUMNS}
    for k in range(1, int(lab.max()) + 1):
        idx = np.flatnonzero(flat == k)
        n = idx.size
        if n == 0:
            continue
        idx = rng.permutation(idx)
        if train_per_class is None:
            n_tr = int(round(f[0] * n))
            n_va = int(round(f[1] * n))
            if n > 1:
                n_tr = min(max(n_tr, 1), n - 1)
                n_va = min(n_va, n - n_tr - 1)
            else:
                n_tr, n_va = 1, 0
        else:
            n_tr = _n_train(n, train_per_class, what)
            rest = n - n_tr
            n_va = int(round(rest * f[1] / (f[1] + f[2]))) if rest > 1 else 0
            n_va = min(n_va, rest - 1) if rest > 0 else 0
        masks["train"][idx[:n_tr]] = True
        masks["val"][idx[n_tr:n_tr + n_va]] = True
        masks["test"][idx[n_tr + n_va:]] = True
    masks = {s: m.reshape(lab.shape) for s, m in masks.items()}
    params = {"method": "random", "fractions": f.tolist(), "seed": seed_,
              "train_per_class": train_per_class, "buffer": 0}
    return _make_split(lab, masks, params, what)


def fixed_split(train_labels: Any, test_labels: Any, val_fraction: float = 0.0,
                seed: int = 0) -> Split:
    """Split given as separate train and test label maps (as some benchmarks ship them).

    ``val_fraction`` of each class's training pixels (rounded, at least one left for
    training) is moved to val at random (``np.random.default_rng(seed)``).

    Raises
    ------
    ShapeMismatchError
        The two maps differ in shape.
    SplitError
        A pixel is labeled in both maps, or ``val_fraction`` is outside [0, 1).
    """
    what = "fixed_split"
    tr = _check_labels(train_labels, what, "train_labels")
    te = _check_labels(test_labels, what, "test_labels")
    if tr.shape != te.shape:
        raise ShapeMismatchError(f"{what}: train_labels has shape {tr.shape} but test_labels "
                                 f"has shape {te.shape}; they must cover the same scene")
    both = (tr > 0) & (te > 0)
    if both.any():
        r, c = np.argwhere(both)[0]
        raise SplitError(f"{what}: {int(both.sum())} pixels are labeled in both train_labels and "
                         f"test_labels (first at row {r}, col {c}); the maps must not overlap")
    if not isinstance(val_fraction, numbers.Real) or not 0 <= val_fraction < 1:
        raise SplitError(f"{what}: val_fraction must be in [0, 1), found {val_fraction!r}")
    seed_ = _check_int(seed, "seed", what, 0)
    if not (tr > 0).any():
        raise SplitError(f"{what}: train_labels has no labeled pixel (all 0)")
    lab = np.where(tr > 0, tr, te)
    rng = np.random.default_rng(seed_)
    flat_tr = tr.reshape(-1)
    flat_train = flat_tr > 0
    flat_val = np.zeros_like(flat_train)
    if val_fraction > 0:
        for k in range(1, int(tr.max()) + 1):
            idx = np.flatnonzero(flat_tr == k)
            n_va = min(int(round(val_fraction * idx.size)), idx.size - 1)
            if n_va > 0:
                pick = rng.choice(idx, size=n_va, replace=False)
                flat_train[pick] = False
                flat_val[pick] = True
    train, val = flat_train.reshape(tr.shape), flat_val.reshape(tr.shape)
    masks = {"train": train, "val": val, "test": te > 0, "buffer": np.zeros_like(train)}
    params = {"method": "fixed", "val_fraction": float(val_fraction), "seed": seed_,
              "buffer": 0}
    return _make_split(lab, masks, params, what)
