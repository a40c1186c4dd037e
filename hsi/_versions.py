"""The versions a run used: Python, hsi and the packages whose releases can change its numbers.

Recorded in every manifest that :mod:`hsi.transaction` writes (``run.json``, ``inference.json``,
``evaluation.json`` ...) and printed in the header of the test report, so two results that
differ can be told apart by what they ran on. Read from the installed distributions'
metadata: nothing here imports numpy, torch or any package it names.
"""

from __future__ import annotations

import platform
from importlib import metadata

__all__ = ["RECORDED_DISTRIBUTIONS", "package_versions"]

#: distributions whose release can change a result (arithmetic, readers, training loop), in report order
RECORDED_DISTRIBUTIONS = ("hsi-lightning", "numpy", "scipy", "torch", "lightning", "scikit-learn", "h5py",
                          "spectral", "rasterio")


def package_versions() -> dict[str, str]:
    """``{"python": "3.11.7", "hsi-lightning": "0.1.0", "numpy": ...}``; a package that is not installed is
    recorded as ``"absent"`` (the package is imported from a source tree that was never installed, say)."""
    versions = {"python": platform.python_version()}
    for name in RECORDED_DISTRIBUTIONS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions
