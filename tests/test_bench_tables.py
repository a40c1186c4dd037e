"""docs/benchmarks.md is what benchmarks/tables.py renders from benchmarks/results/ (no table typed by hand)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tables():
    spec = importlib.util.spec_from_file_location("bench_tables", REPO / "benchmarks" / "tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checked_in_page_equals_rendering():
    tables = _tables()
    page = REPO / "docs" / "benchmarks.md"
    assert page.read_text(encoding="utf-8") == tables.render(), (
        "docs/benchmarks.md differs from what benchmarks/results/ renders: run python benchmarks/tables.py")


def test_every_result_says_where_it_came_from():
    """Each record is measured (machine facts from the script) or transcribed (a source naming the run)."""
    tables = _tables()
    for key, record in tables.load().items():
        if "source" in record:
            assert "measured" in record["source"], key
        else:
            machine = record["machine"]
            for fact in ("date", "command", "cpu", "cores", "torch", "commit"):
                assert machine.get(fact), (key, fact)


def test_a_changed_number_changes_the_page(tmp_path):
    """The page is read from the JSON: editing a result moves the rendered figure (and so fails the first test)."""
    tables = _tables()
    results = tmp_path / "results"
    shutil.copytree(REPO / "benchmarks" / "results", results)
    path = results / tables.FILES["cross_sensor"]
    record = json.loads(path.read_text())
    default = next(s for s in record["summary"] if s["model"] == "default" and s["variant"] == "default")
    before = f"**{default['min_ratio']:.3f}**"
    assert before in tables.render(results)
    default["min_ratio"] = 0.123
    path.write_text(json.dumps(record))
    after = tables.render(results)
    assert "**0.123**" in after and after != tables.render()


def test_check_option_reports_a_stale_page(tmp_path, capsys):
    tables = _tables()
    stale = tmp_path / "benchmarks.md"
    stale.write_text("# Benchmarks\n\nhand-edited\n")
    assert tables.main(["--check", "--out", str(stale)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert tables.main(["--out", str(stale)]) == 0
    assert tables.main(["--check", "--out", str(stale)]) == 0


def test_missing_result_is_named(tmp_path):
    tables = _tables()
    with pytest.raises(FileNotFoundError, match="bench_accuracy.json"):
        tables.load(tmp_path)


def test_readme_summary_matches_when_present():
    """README.md may carry the summary table between the markers; then it must be the rendered one."""
    tables = _tables()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = tables.README_MARKERS
    if start not in readme:
        pytest.skip("README.md does not carry the benchmark summary")
    block = readme[readme.index(start): readme.index(end) + len(end)]
    assert block == tables.readme_block(tables.load()), (
        "README.md's benchmark summary differs: paste the output of python benchmarks/tables.py --summary")
