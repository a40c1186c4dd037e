"""``TrainConfig``: the settings of one training run, grouped by what they configure.

``data`` holds arguments of :class:`hsi.data.HSIDataModule`, ``model`` arguments of
:class:`hsi.training.HSIClassifier` (or the name of a classical baseline), ``run`` the
:class:`~hsi.training.options.RunOptions`. ``data`` and ``model`` hold only what was
given: the classes' own defaults fill the rest, and a resumed run fills it from the
checkpoint, so a given value can be told from a default. Each setting is defined once,
by the class that uses it; ``hsi train`` builds its flags from those definitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hsi.training.options import RunOptions

__all__ = ["TrainConfig"]


@dataclass
class TrainConfig:
    """What to train and how.

    Parameters
    ----------
    data : dict[str, Any]
        Given ``HSIDataModule`` arguments (e.g. ``{"scene": "samson", "pca": 30}``).
    model : dict[str, Any]
        Given ``HSIClassifier`` arguments (e.g. ``{"model": "cnn2d", "lr": 3e-3}``).
    run : RunOptions
        Epochs, early stopping, seed, devices, output folder, resume.
    given_run : set[str]
        Names of the run options that were given (the others are defaults).
    """

    data: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    run: RunOptions = field(default_factory=RunOptions)
    given_run: set[str] = field(default_factory=set)

    @property
    def model_name(self) -> str:
        """The network or classical model to train."""
        from hsi.models import DEFAULT_MODEL

        return str(self.model.get("model", DEFAULT_MODEL))
