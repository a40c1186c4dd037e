"""``CITATION.cff`` at the repository root: valid Citation File Format 1.2.0 that names this release."""

from __future__ import annotations

import datetime
import re
import tomllib
from pathlib import Path

import yaml

import hsi

ROOT = Path(__file__).resolve().parents[1]


def _citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_the_citation_has_the_keys_cff_1_2_0_requires():
    cff = _citation()
    assert cff["cff-version"] == "1.2.0"
    assert isinstance(cff["message"], str) and cff["message"].strip()
    assert isinstance(cff["title"], str) and cff["title"].strip()
    assert cff["authors"] == [{"name": "hsi contributors"}]  # an entity: a person would need family-names
    assert cff["type"] in ("software", "dataset")


def test_the_citation_names_this_version_its_release_date_and_license():
    cff = _citation()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert cff["version"] == project["version"] == hsi.__version__
    assert cff["license"] == project["license"]["text"] == "MIT"
    released = datetime.date.fromisoformat(str(cff["date-released"]))  # CFF wants a YYYY-MM-DD date
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    entry = re.search(rf"^## \[{re.escape(cff['version'])}\] - (\d{{4}}-\d{{2}}-\d{{2}})$", changelog, re.MULTILINE)
    assert entry is not None and entry.group(1) == released.isoformat()
