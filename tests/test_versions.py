"""hsi._versions: the versions a run used, read from metadata without importing the packages."""

from __future__ import annotations

import subprocess
import sys

from hsi._versions import RECORDED_DISTRIBUTIONS, package_versions
from tests.helpers import CHILD_TIMEOUT


def test_versions_are_the_installed_ones():
    import numpy
    import scipy
    import torch

    versions = package_versions()
    assert list(versions) == ["python", *RECORDED_DISTRIBUTIONS]
    assert versions["numpy"] == numpy.__version__ and versions["scipy"] == scipy.__version__
    assert versions["torch"] == torch.__version__
    assert versions["python"] == ".".join(map(str, sys.version_info[:3]))


def test_a_missing_distribution_is_recorded_as_absent(monkeypatch):
    import hsi._versions as v

    monkeypatch.setattr(v, "RECORDED_DISTRIBUTIONS", ("numpy", "no-such-distribution-hsi"))
    assert v.package_versions()["no-such-distribution-hsi"] == "absent"


def test_reading_versions_imports_none_of_the_packages():
    code = ("import sys; from hsi._versions import package_versions; package_versions(); "
            "print(sorted({'numpy', 'torch', 'scipy', 'lightning', 'sklearn', 'h5py', 'rasterio'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
