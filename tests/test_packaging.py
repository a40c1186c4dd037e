"""What the distribution ships: the PEP 561 ``py.typed`` marker, installed and in the built wheel; its name
(free on PyPI) and its dependencies (LightningCLI works after a plain install)."""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.helpers import CHILD_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]
#: the registry's list of PyPI names (first column), where this machine has one
PYPI_NAMES = Path("/work/.library/env/packages/pypi.tsv")


def test_py_typed_is_in_the_installed_package():
    marker = importlib.resources.files("hsi").joinpath("py.typed")
    assert marker.is_file()


def test_pyproject_lists_py_typed_as_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["hsi"]


def test_built_wheel_contains_py_typed_and_the_guide(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "hsi", src / "hsi", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(ROOT / name, src / name)
    code = f"from setuptools import build_meta; print(build_meta.build_wheel({str(tmp_path)!r}))"
    done = subprocess.run([sys.executable, "-c", code], cwd=src, capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]
    wheel = tmp_path / done.stdout.strip().splitlines()[-1]
    names = zipfile.ZipFile(wheel).namelist()
    assert "hsi/py.typed" in names and "hsi/scenes/GUIDE.md" in names


def _normalise(name: str) -> str:
    """PEP 503: lowercase, runs of ``-``, ``_`` and ``.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_distribution_name_is_not_the_taken_hsi():
    assert _normalise(_pyproject()["project"]["name"]) != "hsi"  # "hsi" on PyPI is another project


def test_distribution_name_is_free_on_pypi():
    if not PYPI_NAMES.is_file():
        pytest.skip(f"no list of PyPI names at {PYPI_NAMES}")
    name = _normalise(_pyproject()["project"]["name"])
    with open(PYPI_NAMES, encoding="utf-8", errors="replace") as fh:
        taken = {_normalise(line.split("\t", 1)[0].strip()) for line in fh}
    assert "hsi" in taken, "the list does not look like PyPI's (it lacks the existing 'hsi')"
    assert name not in taken


def test_installed_distribution_version_is_hsi_version():
    import hsi

    assert importlib.metadata.version(_pyproject()["project"]["name"]) == hsi.__version__


def test_no_hint_says_pip_install_hsi():
    """No message of the package tells users to ``pip install hsi`` (that installs the other project)."""
    wrong = re.compile(r"""pip install ['"]?hsi(?![-\w])""")
    hints = [(path, line) for path in (ROOT / "hsi").rglob("*.py")
             for line in path.read_text(encoding="utf-8").splitlines() if wrong.search(line)]
    assert hints == []


def test_jsonargparse_is_a_dependency_not_only_an_extra():
    deps = [_normalise(re.split(r"[\[<>=! ;]", d, maxsplit=1)[0]) for d in _pyproject()["project"]["dependencies"]]
    assert "jsonargparse" in deps


def test_lightning_cli_help_runs_after_a_plain_install():
    done = subprocess.run([sys.executable, "-m", "hsi.training.lightning_cli", "fit", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--data.patch_size" in done.stdout and "--model.model" in done.stdout
