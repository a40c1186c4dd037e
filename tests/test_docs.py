"""The documentation builds without a warning, lists every public module, and its runnable examples run.

- The Sphinx build (``python -m sphinx -W --keep-going -b html docs OUT``, CONTRIBUTING's
  command) needs the ``docs`` extra (part of ``dev``) and is skipped without it. It executes
  no notebook (docs/conf.py): the pages of the top-level ``notebooks/`` show the outputs stored
  in them, and ``tests/test_notebook.py`` executes the notebooks.
- A public module is one with no part of its dotted name starting with an underscore; each
  has an ``automodule`` in ``docs/api.md`` or ``docs/api/*.md``.
- A fenced ``python`` or ``bash`` block preceded by the line ``<!-- runnable -->`` in
  README.md or a page of ``docs/`` is run in an empty temporary folder (python blocks with
  this interpreter, bash blocks with ``bash -e -o pipefail``; ``MPLBACKEND=Agg``) and must
  exit with status 0.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import CHILD_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MARKER = "<!-- runnable -->"
LANGUAGES = {"python", "bash"}
#: folders under docs/ that are build outputs, not pages
BUILD_DIRS = {"_build", "jupyter_execute", ".jupyter_cache"}
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
_AUTOMODULE = re.compile(r"^\.\.\s+automodule::\s+(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """A runnable example: where it is, its language and its code."""

    path: Path
    line: int
    language: str
    code: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def public_modules() -> list[str]:
    """Dotted names of the package's modules with no part starting with an underscore."""
    found = []
    for path in sorted((ROOT / "hsi").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if not any(part.startswith("_") for part in parts):
            found.append(".".join(parts))
    return found


def documented_modules() -> set[str]:
    """Modules with an ``automodule`` directive in the API reference pages."""
    pages = [DOCS / "api.md", *sorted((DOCS / "api").glob("*.md"))]
    return {name for page in pages if page.exists() for name in _AUTOMODULE.findall(page.read_text(encoding="utf-8"))}


def blocks_in(path: Path) -> list[Block]:
    """The runnable blocks of one Markdown file.

    Raises
    ------
    ValueError
        A marker not followed by a fenced python or bash block, or a block never closed.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        opening = _FENCE.match(lines[j].strip()) if j < len(lines) else None
        if opening is None or opening["lang"] not in LANGUAGES:
            raise ValueError(f"{path}:{i + 1}: {MARKER} must be followed by a fenced block of "
                             f"{' or '.join(sorted(LANGUAGES))}; found {lines[j].strip() if j < len(lines) else 'the end'!r}")
        fence = opening["fence"]
        end = next((k for k in range(j + 1, len(lines))
                    if lines[k].strip().startswith(fence) and not lines[k].strip().strip(fence[0])), None)
        if end is None:
            raise ValueError(f"{path}:{j + 1}: the runnable block is never closed (no {fence} line)")
        found.append(Block(path, j + 1, opening["lang"], "\n".join(lines[j + 1:end]) + "\n"))
    return found


def markdown_files() -> list[Path]:
    """README.md and every Markdown page under docs/ (build folders left out)."""
    pages = [p for p in sorted(DOCS.rglob("*.md")) if not BUILD_DIRS & set(p.relative_to(DOCS).parts)]
    return [ROOT / "README.md", *pages]


def runnable_blocks() -> list[Block]:
    return [block for path in markdown_files() if path.exists() for block in blocks_in(path)]


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, MPLBACKEND="Agg", HSI_DATA_DIR=str(tmp_path / "data"))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])  # the `hsi` command
    return env


def test_every_public_module_is_in_the_api_reference():
    missing = sorted(set(public_modules()) - documented_modules())
    assert not missing, f"add an automodule for each to docs/api/<package>.md: {missing}"
    stale = sorted(documented_modules() - set(public_modules()) - {"hsi"})
    assert not stale, f"the API reference lists modules that are not public modules of hsi: {stale}"


def test_the_docs_have_runnable_examples():
    # the convention must not vanish silently: without any marked block nothing below runs
    assert runnable_blocks(), f"no {MARKER} block in README.md or docs/*.md"


def test_a_marker_without_a_block_is_refused(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"{MARKER}\n```console\n$ hsi --version\n```\n")
    with pytest.raises(ValueError, match=r"page.md:1: .* followed by a fenced block of bash or python"):
        blocks_in(page)
    page.write_text(f"text\n{MARKER}\n\n````python\nprint(1)\n```\nprint(2)\n````\n")
    (block,) = blocks_in(page)
    assert (block.line, block.language, block.code) == (4, "python", "print(1)\n```\nprint(2)\n")


@pytest.mark.parametrize("block", runnable_blocks(), ids=lambda b: b.name)
def test_runnable_example(block, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    script = work / ("example.py" if block.language == "python" else "example.sh")
    script.write_text(block.code, encoding="utf-8")
    command = [sys.executable, script.name] if block.language == "python" else ["bash", "-e", "-o", "pipefail", script.name]
    done = subprocess.run(command, cwd=work, env=_env(tmp_path), capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert done.returncode == 0, f"{block.name} exited with {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    for module in ("sphinx", "numpydoc", "myst_nb", "pydata_sphinx_theme"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    before = sorted(p.relative_to(DOCS) for p in DOCS.rglob("*"))
    out = tmp_path / "html"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(out)],
        cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=CHILD_TIMEOUT,
    )
    assert done.returncode == 0, f"sphinx exited with {done.returncode}:\n{done.stderr[-6000:]}"
    assert (out / "index.html").exists() and (out / "api" / "io.html").exists()
    assert 'id="hsi.io.cube.read_cube"' in (out / "api" / "io.html").read_text(encoding="utf-8")
    # a re-exported name ({func}`hsi.io.read_cube`) links to the entry of the module that defines it
    assert 'href="api/io.html#hsi.io.cube.read_cube"' in (out / "extending.html").read_text(encoding="utf-8")
    # the signatures show types, not the Annotated[..., Role(...)] bookkeeping of hsi._roles
    assert "Role(" not in (out / "api" / "data.html").read_text(encoding="utf-8")
    # the notebooks of notebooks/ (read through docs/notebooks/*.nblink) with their stored figures and text
    for page, title in (("quickstart", "hsi quickstart"), ("own-cube-to-gis", "Your own cube to a map in a GIS")):
        html = (out / "notebooks" / f"{page}.html").read_text(encoding="utf-8")
        assert title in html and "<img" in html and "test pixels: OA 0.9" in html, page
    assert sorted(p.relative_to(DOCS) for p in DOCS.rglob("*")) == before  # nothing written into the sources
