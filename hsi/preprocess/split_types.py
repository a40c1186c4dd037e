"""The result of a split: :class:`Split`, its per-class :class:`SplitCounts`, and state.

A :class:`Split` holds disjoint boolean ``(H, W)`` masks (train, val, test, buffer) over
the labeled pixels of one scene, with how it was made. :meth:`Split.to_state` /
:meth:`Split.from_state` turn it into plain JSON types (masks bit-packed, base64) so a
DataModule checkpoint can carry it; :func:`labels_digest` ties it to its label map.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from hsi.errors import ShapeMismatchError, SplitError, StratificationWarning  # noqa: F401 - re-exported
from hsi.preprocess._base import StateFormatError
from hsi.preprocess._state import encode_value

__all__ = ["COLUMNS", "Split", "SplitCounts", "StratificationWarning", "labels_digest"]

#: The columns of :class:`SplitCounts`, in order.
COLUMNS: tuple[str, ...] = ("train", "val", "test", "buffer")
_FORMAT = "hsi.preprocess.Split"
_FORMAT_VERSION = 1


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

