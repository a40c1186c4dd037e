"""The repository's front-door files: README.md (short, the CI command intact, links that resolve,
no claim the package contradicts), LICENSE, CHANGELOG.md (Keep a Changelog form) and CONTRIBUTING.md."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.helpers import CHILD_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: the most lines the README may have: the details belong in docs/
MAX_README_LINES = 250
#: the command .ci/run executes (the fenced block after the marker)
TEST_COMMAND = 'pip install torch==2.13.0 && pip install -e ".[dev]" && python -m pytest -q'
#: Keep a Changelog 1.1.0: the only kinds of change
CHANGE_KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def _read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def _pyproject() -> dict:
    return tomllib.loads(_read("pyproject.toml"))


def ci_command() -> str:
    """The command ``.ci/run`` extracts from README.md, by running its own ``awk`` line."""
    line = next(x for x in _read(".ci/run").splitlines() if x.startswith("cmd=$(awk "))
    if shutil.which("awk") is None:
        pytest.skip("no awk on this machine")
    done = subprocess.run(["bash", "-c", line + '; printf %s "$cmd"'], cwd=ROOT, capture_output=True,
                          text=True, timeout=CHILD_TIMEOUT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_readme_is_at_most_250_lines():
    count = len(_read("README.md").splitlines())
    assert count <= MAX_README_LINES, f"README.md has {count} lines; move details into docs/"


@pytest.mark.parametrize("script", ["train.py", "infer_full.py"])
def test_readme_and_getting_started_name_the_promised_scripts_which_exist(script):
    """The project promised ``python scripts/train.py --scene indian_pines`` and ``python scripts/infer_full.py``."""
    assert (ROOT / "scripts" / script).is_file()
    for page in (ROOT / "README.md", ROOT / "docs" / "getting-started.md"):
        assert f"python scripts/{script}" in page.read_text(), page.name


def test_ci_runs_the_documented_test_command():
    assert ci_command() == TEST_COMMAND


def test_first_setup_command_trains_on_the_synthetic_scene():
    first = re.search(r"```bash\n(pip install torch[^\n]*)\n```", _read("README.md"))
    assert first is not None
    assert first.group(1).endswith("hsi train --scene synthetic")


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md"])
def test_relative_links_resolve(name):
    """Every relative link of the file names a file of the checkout (docs pages included)."""
    text = _read(name)
    targets = {m.split("#", 1)[0] for m in re.findall(r"\]\(([^)\s]+)\)", text)}
    local = sorted(t for t in targets if t and not re.match(r"[a-z]+://|mailto:", t))
    assert local, f"{name} links to no file at all"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert missing == []


def test_readme_states_no_contradicted_dependency_claim():
    text = _read("README.md")
    deps = " ".join(_pyproject()["project"]["dependencies"])
    assert "jsonargparse" in deps
    assert not re.search(r"(needs|requires) no jsonargparse", text)
    assert "well under a second" not in text


def test_license_is_mit_as_pyproject_says():
    assert _pyproject()["project"]["license"] == {"text": "MIT"}
    text = _read("LICENSE")
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 the hsi authors" in text
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in text


def changelog_problems(text: str) -> list[str]:
    """What keeps ``text`` from the Keep a Changelog 1.1.0 form (empty when nothing)."""
    lines = text.splitlines()
    problems = [] if lines[:1] == ["# Changelog"] else ["the first line is not '# Changelog'"]
    releases = [line for line in lines if line.startswith("## ")]
    if releases[:1] != ["## [Unreleased]"]:
        problems.append("the first section is not '## [Unreleased]'")
    problems += [f"not '## [X.Y.Z] - YYYY-MM-DD': {line}" for line in releases[1:]
                 if not re.fullmatch(r"## \[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", line)]
    kinds = [line[4:] for line in lines if line.startswith("### ")]
    problems += [f"not a kind of change: ### {k}" for k in kinds if k not in CHANGE_KINDS]
    return problems + ([] if kinds else ["no '### Added' (or other kind) section"])


def test_changelog_has_keep_a_changelog_headings():
    assert changelog_problems(_read("CHANGELOG.md")) == []


@pytest.mark.parametrize("bad", ["# Changes\n\n## [Unreleased]\n\n### Added\n",
                                 "# Changelog\n\n## [0.1.0] - 2026-12-06\n\n### Added\n",
                                 "# Changelog\n\n## [Unreleased]\n\n## 0.1.0\n\n### Added\n",
                                 "# Changelog\n\n## [Unreleased]\n\n### Improvements\n"])
def test_changelog_check_catches_each_departure(bad):
    assert changelog_problems(bad) != []


def test_changelog_has_the_packaged_version():
    version = _pyproject()["project"]["version"]
    assert re.search(rf"^## \[{re.escape(version)}\] - ", _read("CHANGELOG.md"), re.M)


@pytest.mark.parametrize("needle", ["python -m pytest", "python -m hsi.cli.table", "python -m hsi.scenes.guide",
                                    "CHANGELOG.md", "hsi/errors.py"])
def test_contributing_names_the_maintenance_commands(needle):
    assert needle in _read("CONTRIBUTING.md")
