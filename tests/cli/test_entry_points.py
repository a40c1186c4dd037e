"""The ``hsi`` console script and ``python -m hsi`` run the package's own code."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import hsi

from tests.helpers import CHILD_TIMEOUT


def test_console_script_points_into_the_package():
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "hsi"]
    assert script.value == "hsi.cli:main"
    module = script.load().__module__
    assert module == "hsi.cli"
    package_dir = Path(hsi.__file__).parent
    assert Path(sys.modules[module].__file__).parent == package_dir / "cli"  # not scripts/


def test_guide_ships_inside_the_package():
    from hsi.cli.scenes import guide_text

    text = guide_text()
    assert "HSI_DATA_DIR" in text and "indian_pines" in text


@pytest.mark.parametrize("how", ["console script", "python -m hsi"])
def test_train_and_inspect_run(how, tmp_path, tiny, hsi_subprocess):
    if how == "console script":
        exe = shutil.which("hsi")
        if exe is None:
            pytest.skip("the hsi console script is not on PATH (package not installed)")
        def call(args):
            return subprocess.run([exe, *args], cwd=tmp_path, capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    else:
        def call(args):
            return hsi_subprocess(args, tmp_path)
    import numpy as np
    import scipy.io

    scipy.io.savemat(tmp_path / "gt.mat", {"gt": np.array([[0, 1], [2, 2]], np.uint8)})
    inspected = call(["inspect", str(tmp_path / "gt.mat")])
    assert inspected.returncode == 0, inspected.stderr
    assert "label map: 2 x 2, 2 classes" in inspected.stdout
    trained = call(["train", *tiny, "--epochs", "1", "--out", "run"])
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert (tmp_path / "run" / "metrics.json").is_file() and f"outputs in {tmp_path / 'run'}" in trained.stdout


def test_scenes_lists_the_registry_and_files(hsi_main, tmp_path):
    status, out, _ = hsi_main(["scenes"], tmp_path)
    assert status == 0 and "indian_pines" in out and "samson" in out
    status, out, _ = hsi_main(["scenes", "indian_pines", "--root", str(tmp_path)], tmp_path)
    assert status == 0 and "Indian_pines_corrected.mat: missing" in out and "sha256:" in out
    status, _, err = hsi_main(["scenes", "mars"], tmp_path)
    assert status == 2 and err.startswith("error: unknown scene 'mars'")
