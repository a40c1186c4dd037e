"""Fixtures for the scene tests: one default synthetic scene, shared (it is read-only)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def synthetic_default():
    """``make_synthetic_scene()`` with its defaults (145 x 145 x 200, 16 classes, seed 0)."""
    from hsi.scenes import make_synthetic_scene

    return make_synthetic_scene()


@pytest.fixture(autouse=True)
def _private_checked_files(tmp_path_factory, monkeypatch):
    """Each test remembers the checksums of placed files in its own stamp (``$XDG_CACHE_HOME/hsi/...``)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg_cache")))
