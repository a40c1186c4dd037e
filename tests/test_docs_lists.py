"""The docs' tables of models, output formats and file formats follow the registries.

Each table keeps what a registry cannot say (an architecture's paper, a format's files), so it is
written by hand; these tests make a registry entry without its docs row (or a row left behind by
a removed entry) fail, naming the page.
"""

from __future__ import annotations

import re
from pathlib import Path

from hsi.classical import CLASSICAL_MODELS
from hsi.io.readers import known_suffixes
from hsi.models import list_models
from hsi.sinks import list_sinks

DOCS = Path(__file__).resolve().parents[1] / "docs"


def table_rows(page: str, heading: str) -> list[list[str]]:
    """The cells of the first Markdown table under ``heading`` (a ``#`` line) of ``docs/PAGE``, header row left out."""
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip("#").strip() == heading and line.startswith("#"))
    rows, seen_table = [], False
    for line in lines[start + 1:]:
        if line.startswith("|"):
            seen_table = True
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif seen_table or line.startswith("#"):
            break
    return [row for row in rows[1:] if not set("".join(row)) <= set("-: ")]


def first_names(rows: list[list[str]]) -> set[str]:
    """The backticked name that starts each row's first cell."""
    return {re.match(r"`([^`]+)`", row[0]).group(1) for row in rows}


def test_the_model_table_lists_the_registry():
    assert first_names(table_rows("training.md", "The models")) == {*list_models(), *CLASSICAL_MODELS}, \
        "docs/training.md 'The models': one row per registered model"


def test_the_output_table_lists_the_registry():
    assert first_names(table_rows("maps.md", "Outputs")) == set(list_sinks()), \
        "docs/maps.md 'Outputs': one row per registered format (hsi.sinks)"


def test_the_format_table_names_every_suffix_a_reader_claims():
    text = " ".join(cell for row in table_rows("your-data.md", "Formats") for cell in row[:2])
    named = set(re.findall(r"`(\.[\w.]+)`", text))
    assert sorted(known_suffixes() - named) == [], "docs/your-data.md 'Formats': a suffix of a registered reader"
