"""The outcome of one doctor check, and the helpers every check shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

__all__ = ["CheckResult", "centre_spectra", "first_batch", "save_figure"]


@dataclass
class CheckResult:
    """PASS, FAIL or UNDECIDED of one check, with the evidence behind it.

    Parameters
    ----------
    name : str
        Short name of the check (``batches``, ``spectra``, ``overfit``, ``normalization``, ``inference``).
    passed : bool
        True when nothing was found wrong.
    evidence : list of str
        One line per fact measured (what was expected, what was found).
    png : Path or None
        The figure written for the check.
    values : dict
        The measured numbers, for programs (tests, JSON reports).
    undecided : list of str
        What the check could not decide either way, one line each (too few labelled pixels,
        too little contrast between the answers). A check that found nothing wrong but left
        something undecided is UNDECIDED, not PASS.
    """

    name: str
    passed: bool
    evidence: list[str] = field(default_factory=list)
    png: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)
    undecided: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """``"FAIL"`` (something found wrong), else ``"UNDECIDED"`` (something not decided), else ``"PASS"``."""
        if not self.passed:
            return "FAIL"
        return "UNDECIDED" if self.undecided else "PASS"

    def format(self) -> str:
        """``STATUS name`` then the evidence, what could not be decided, indented, and the figure's path."""
        lines = [f"{self.status} {self.name}"] + [f"    {line}" for line in self.evidence]
        lines += [f"    cannot decide: {line}" for line in self.undecided]
        if self.png is not None:
            lines.append(f"    figure: {self.png}")
        return "\n".join(lines)


def first_batch(loader: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """``(patches, labels)`` of a loader's first batch (coordinates, if any, dropped)."""
    batch = next(iter(loader))
    return batch[0], batch[1]


def centre_spectra(patches: torch.Tensor) -> np.ndarray:
    """``(B, C)`` centre-pixel spectra of ``(B, C, P, P)`` patches (augmentation leaves the centre in place)."""
    p = patches.shape[-1]
    return patches[:, :, p // 2, p // 2].detach().cpu().numpy().astype(np.float64)


def save_figure(fig: Any, out: str | Path | None, name: str) -> Path | None:
    """Save a matplotlib ``Figure`` as ``out/<name>.png`` atomically; None when ``out`` is None."""
    if out is None:
        return None
    import io

    from hsi._atomic import write_bytes_atomic

    path = Path(out) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    write_bytes_atomic(path, buffer.getvalue())
    return path
