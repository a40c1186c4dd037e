"""What the distribution ships: the PEP 561 ``py.typed`` marker, installed and in the built wheel."""

from __future__ import annotations

import importlib.resources
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
    done = subprocess.run([sys.executable, "-c", code], cwd=src, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    wheel = tmp_path / done.stdout.strip().splitlines()[-1]
    names = zipfile.ZipFile(wheel).namelist()
    assert "hsi/py.typed" in names and "hsi/scenes/GUIDE.md" in names
