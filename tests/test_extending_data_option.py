"""docs/extending.md's "A data option", followed to the letter on a copy of the package.

The guide says a preprocessing option is three package files: a field and its step in
``hsi/preprocess/spec.py``, a transformer module, and the ``HSIDataModule`` parameter. This test
makes exactly those three edits (a band-smoothing option) in a copy of ``hsi/``, regenerates the
option table as the guide says, and runs ``hsi train --smoothing 3`` and ``hsi infer`` on the
copy: the option must reach the command line, the record and the fitted pipeline of the
checkpoint that inference uses.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import torch

from tests.helpers import CHILD_TIMEOUT, TINY_TRAIN, child_env

PACKAGE = Path(__file__).resolve().parents[1] / "hsi"

TRANSFORMER = '''"""A moving average along the spectrum (the extending guide's example option)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hsi.preprocess._base import BandTransformer, check_array
from hsi.preprocess._registry import register_transformer


@register_transformer
class BandSmoothing(BandTransformer):
    """Average each band with its neighbours: a window of ``window`` bands, edges repeated."""

    def __init__(self, window: int = 3) -> None:
        self.window = window

    def fit(self, X: Any, y: Any = None, *, sample_mask: Any = None, wavelengths: Any = None) -> BandSmoothing:
        """Record the band count; nothing is learned from the values."""
        self._reset()
        x = check_array(X, "BandSmoothing.fit", fit=True)
        self.n_bands_in_ = self.n_bands_out_ = int(x.shape[-1])
        return self

    def transform(self, x: Any) -> np.ndarray:
        """The smoothed spectra, float32, of ``x``'s shape."""
        x = np.asarray(self._check_input(x), dtype=np.float64)
        w, c = int(self.window), x.shape[-1]
        pad = [(0, 0)] * (x.ndim - 1) + [(w // 2, w - 1 - w // 2)]
        padded = np.pad(x, pad, mode="edge")
        return (sum(padded[..., i:i + c] for i in range(w)) / w).astype(np.float32)
'''


def _edit(path: Path, anchor: str, text: str, *, after: bool = False) -> None:
    """Insert ``text`` before (or after) the one occurrence of ``anchor`` in ``path``."""
    source = path.read_text()
    assert source.count(anchor) == 1, f"{path.name}: the guide's anchor {anchor!r} is not unique or missing"
    path.write_text(source.replace(anchor, anchor + text if after else text + anchor))


def _follow_the_guide(package: Path) -> None:
    spec = package / "preprocess" / "spec.py"  # 1. the field and its step
    _edit(spec, "    pca: int | float | None = _option(", "    smoothing: int = _option(0, 3)\n")
    _edit(spec, "        if self.scaling == \"minmax\":\n",
          "        if self.smoothing:\n            steps.append(BandSmoothing(window=self.smoothing))\n")
    _edit(spec, "from hsi.preprocess.spectral import normalize_steps\n",
          "from hsi.preprocess.smoothing import BandSmoothing\n", after=True)
    (package / "preprocess" / "smoothing.py").write_text(TRANSFORMER)  # 2. the transformer
    datamodule = package / "data" / "datamodule.py"  # 3. the parameter and its docstring line
    _edit(datamodule, "        pca: Annotated[", "        smoothing: Annotated[int, recipe(AT_LEAST_ZERO)] = 0,\n")
    _edit(datamodule, "    pca : int | float | None\n",
          "    smoothing : int\n        Bands averaged by a moving window before the scaling, 0 = none.\n")


def _hsi(args: list[str], cwd: Path, root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=child_env(PYTHONPATH=str(root)),
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT)


def test_a_data_option_by_the_guide_reaches_train_the_record_and_inference(tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(PACKAGE, root / "hsi", ignore=shutil.ignore_patterns("__pycache__"))
    _follow_the_guide(root / "hsi")
    table = _hsi(["hsi.cli.table"], tmp_path, root)  # 4. the option table, regenerated
    assert table.returncode == 0, table.stderr[-2000:]
    assert "smoothing" in (root / "hsi" / "cli" / "_option_table.py").read_text()

    run = tmp_path / "run"
    train = _hsi(["hsi", "train", *TINY_TRAIN, "--smoothing", "3", "--epochs", "1", "--out", str(run)], tmp_path, root)
    assert train.returncode == 0, train.stderr[-3000:]
    assert "smoothing" in json.dumps(json.loads((run / "metrics.json").read_text()))
    checkpoint = torch.load(run / "best.ckpt", map_location="cpu", weights_only=False)
    assert checkpoint["datamodule_hyper_parameters"]["smoothing"] == 3
    steps = [step["class"] for step in checkpoint["HSIDataModule"]["pipeline"]["steps"]]
    assert "BandSmoothing" in steps, steps

    infer = _hsi(["hsi", "infer", "--checkpoint", str(run / "best.ckpt"), "--out", str(tmp_path / "map")], tmp_path,
                 root)
    assert infer.returncode == 0, infer.stderr[-3000:]
    assert any((tmp_path / "map").iterdir())
