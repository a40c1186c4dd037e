"""The import diet: ``--version``, ``--help``, an option error (scene names and scene options included) and a
missing file import no numerical library.

Each case runs ``python -X importtime -m hsi ...`` in a child process and reads the module names
from its stderr: none of numpy, h5py, torch, lightning, rasterio, scipy, scikit-learn or spectral
may be among them (each costs seconds on a loaded machine), and the command still answers as it
should (its help, its version, one ``error:`` line with exit status 2). The ``hsi`` console script
behaves as ``python -m hsi``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hsi.cli import COMMANDS

from tests.helpers import CHILD_TIMEOUT

REPO = Path(__file__).resolve().parents[2]

#: top-level packages none of the light paths may import
HEAVY = frozenset({"numpy", "h5py", "torch", "lightning", "pytorch_lightning", "rasterio", "scipy", "sklearn",
                   "spectral"})


def run_importtime(command: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, list[str], set[str]]:
    """``(process, stderr lines other than import times, top-level packages imported)`` of ``command``
    (a Python command line) run with ``-X importtime``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-X", "importtime", *command], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    lines = proc.stderr.splitlines()
    modules = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in lines
               if line.startswith("import time:") and "|" in line}
    return proc, [line for line in lines if not line.startswith("import time:")], modules


def light_run(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``python -m hsi ARGS``; fails naming the heavy packages it imported."""
    proc, errors, modules = run_importtime(["-m", "hsi", *args], cwd)
    assert not modules & HEAVY, f"hsi {' '.join(args)} imported {sorted(modules & HEAVY)}"
    return proc, errors


def test_the_heavy_list_is_seen_when_imported(tmp_path):
    """The check itself: a child that does import numpy is caught."""
    _, _, modules = run_importtime(["-c", "import numpy"], tmp_path)
    assert "numpy" in modules


def test_version(tmp_path):
    proc, _ = light_run(["--version"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("hsi ")


def test_help(tmp_path):
    proc, _ = light_run(["--help"], tmp_path)
    assert proc.returncode == 0 and all(name in proc.stdout for name in COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_help(command, tmp_path):
    proc, _ = light_run([command, "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith(f"usage: hsi {command}")


#: case -> (arguments, run in a temporary folder holding an empty ``m.ckpt``, which also stands for a label file;
#: the start of the one error line)
ERRORS = {
    "wrong-type": (["train", "--patch-size", "x"], "error: --patch-size: "),
    "rule": (["train", "--patch-size", "4"], "error: --patch-size: 4: an odd integer"),
    "unknown-option": (["train", "--no-such-option"], "error: unrecognized arguments: --no-such-option"),
    "bad-choice": (["train", "--model", "nosuch"], "error: --model: 'nosuch': expected one of anyband, "),
    "pca-for-anyband": (["train", "--model", "anyband", "--pca", "30"],
                        "error: --pca: 30: none: anyband reads each band with its wavelength, and PCA components "
                        "have none"),
    # checked against the scene registry, which lists the scenes and their options without numpy or scipy
    "unknown-scene": (["train", "--scene", "nosuch"],
                      "error: --scene: nosuch: one of botswana, indian_pines, jasper_ridge, ksc, pavia_centre, "
                      "pavia_university, salinas, salinas_a, samson, synthetic, urban (`hsi scenes` lists them)"),
    "synthetic-scene-option": (["train", "--scene-options", "purty=0.8"],
                               "error: --scene-options: purty: not an option of scene synthetic (options: height, "
                               "width, bands, n_classes, seed, parcel_size, background_fraction, road_spacing, "
                               "crop_separation, parcel_variability, texture, texture_scale, pixel_variability, "
                               "mixing, illumination, noise)"),
    "unmixing-scene-option": (["train", "--scene", "samson", "--scene-options", "purty=0.8"],
                              "error: --scene-options: purty: not an option of scene samson; did you mean 'purity'? "
                              "(options: purity, checksum)"),
    "benchmark-scene-option": (["train", "--scene", "Indian-Pines", "--scene-options", "bogus=1"],
                               "error: --scene-options: bogus: not an option of scene Indian-Pines (options: "
                               "checksum)"),
    "bad-format": (["infer", "--checkpoint", "m.ckpt", "--out", "o", "--format", "nosuch"], "error: --format: "),
    "probabilities-format": (["infer", "--checkpoint", "m.ckpt", "--out", "o", "--probabilities", "--format", "envi"],
                             "error: --format: ('envi',): npy or gtiff"),
    "evaluate-unknown-model": (["evaluate", "--models", "svm", "nosuch"], "error: --models: nosuch"),
    "unknown-command": (["nosuch"], "error: "),
    "infer-missing-checkpoint": (["infer", "--checkpoint", "missing.ckpt", "--cube", "nothere.mat", "--out", "o"],
                                 "error: --checkpoint: 'missing.ckpt': no such checkpoint file"),
    "infer-missing-cube": (["infer", "--checkpoint", "m.ckpt", "--cube", "nothere.mat", "--out", "o"],
                           "error: --cube: 'nothere.mat': no such file"),
    "train-missing-cube": (["train", "--cube", "nothere.mat", "--labels", "m.ckpt"],
                           "error: --cube: 'nothere.mat': no such file"),
    "inspect-missing-file": (["inspect", "nothere.mat"], "error: hsi inspect: 'nothere.mat': no such file"),
    "convert-missing-input": (["convert", "nothere.mat", "--to", "h5", "o.h5"],
                              "error: hsi convert: 'nothere.mat': no such file"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_error(case, tmp_path):
    args, expected = ERRORS[case]
    (tmp_path / "m.ckpt").write_bytes(b"")
    proc, errors = light_run(args, tmp_path)
    assert proc.returncode == 2, errors
    assert [line for line in errors if line.startswith("error: ")] == errors[-1:], errors
    assert errors[-1].startswith(expected), errors[-1]


def _console_script() -> Path:
    script = Path(sys.executable).with_name("hsi")
    if not script.is_file():
        pytest.skip(f"the hsi console script is not installed beside {sys.executable}")
    return script


@pytest.mark.parametrize("args", [["--version"], ["train", "--patch-size", "4"], ["infer", "--help"]],
                         ids=["version", "option-error", "help"])
def test_console_script_behaves_as_python_m_hsi(args, tmp_path):
    """pyproject's ``hsi = "hsi.cli:main"``: the same output, exit status and imports as ``python -m hsi``."""
    module, module_errors, _ = run_importtime(["-m", "hsi", *args], tmp_path)
    script, script_errors, modules = run_importtime([str(_console_script()), *args], tmp_path)
    assert (script.returncode, script.stdout, script_errors) == (module.returncode, module.stdout, module_errors)
    assert not modules & HEAVY, sorted(modules & HEAVY)
