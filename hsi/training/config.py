"""``TrainConfig``: every setting of a training run, typed, with defaults.

One dataclass serves the command line, YAML files and Python callers alike:
``scripts/train.py`` builds its options from the fields below, ``from_yaml`` reads
the same names (``patch_size`` or ``patch-size``), and the resolved config is
written into ``metrics.json`` so a run can always be repeated.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


@dataclass
class TrainConfig:
    """Settings of one training run; see ``scripts/train.py --help`` for each field."""

    scene: str | None = "synthetic"
    root: str | None = None
    download: bool = False
    cube: str | None = None
    labels: str | None = None
    cube_key: str | None = None
    labels_key: str | None = None
    test_labels: str | None = None
    test_labels_key: str | None = None
    model: str = "cnn2d"
    patch_size: int = 11
    pca: float | None = None
    scaling: str | None = "minmax"
    split: str = "block"
    block_size: int | None = None
    buffer: int | None = None
    fractions: list[float] | None = None
    epochs: int = 30
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 1e-4
    optimizer: str = "adamw"
    scheduler: str = "cosine"
    label_smoothing: float = 0.0
    patience: int = 10
    seed: int = 0
    accelerator: str = "auto"
    devices: str = "auto"
    strategy: str = "auto"
    num_workers: int = 0
    cache_dir: str | None = None
    gather_on_device: bool = False
    out: str | None = None
    resume: str | None = None
    progress: bool = True
    scene_options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_yaml(cls, path: str | Path) -> dict[str, Any]:
        """Read a YAML mapping of field names to values; unknown names are an error."""
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except FileNotFoundError as err:
            raise FileNotFoundError(f"config file not found: {path}") from err
        except yaml.YAMLError as err:
            raise ValueError(f"{path}: not valid YAML ({err})") from err
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping of option names to values, found {type(data).__name__}")
        known = set(cls.field_names())
        values = {str(k).replace("-", "_"): v for k, v in data.items()}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"{path}: unknown option(s) {', '.join(unknown)}; known options: {', '.join(sorted(known))}")
        return values

    def default_out(self) -> Path:
        name = self.scene or Path(self.cube or "cube").stem
        return Path("runs") / f"{name}-{self.model}-seed{self.seed}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
