"""docs/benchmarks.md is what benchmarks/tables.py renders from benchmarks/results/ (no table typed by hand)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import load_script

REPO = Path(__file__).resolve().parents[1]


def _tables():
    return load_script(REPO / "benchmarks" / "tables.py", "bench_tables")


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


def _leaderboard_copy(tmp_path, edit):
    """A copy of the results whose leaderboard JSON ``edit`` changed in place; returns the results folder."""
    results = tmp_path / "results"
    shutil.copytree(REPO / "benchmarks" / "results", results)
    path = results / _tables().FILES["leaderboard"]
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record))
    return results


def test_board_buffer_is_said_from_the_json(tmp_path):
    """A board with one ``buffer`` says so with its value; one without says each model had its own."""
    tables = _tables()

    def one_buffer(record):
        for board, size in zip(record["boards"], (6, 4)):
            board["buffer"] = size

    def own_buffers(record):
        for board in record["boards"]:
            board.pop("buffer", None)

    shared = tables.render(_leaderboard_copy(tmp_path / "a", one_buffer))
    every = shared[shared.index("## Every model"):]
    scenes = [b["scene"] for b in tables.load()["leaderboard"]["boards"]]
    assert "one split buffer to every model of a board" in every
    assert f"6 px on {scenes[0]}" in every and f"4 px on {scenes[1]}" in every
    own = tables.render(_leaderboard_copy(tmp_path / "b", own_buffers))
    assert "each model's own patch" in own[own.index("## Every model"):]


def test_rows_with_fewer_epochs_are_labelled(tmp_path):
    """A row trained for other epochs than the default recipe's names them and its device, on the page and in the
    README's short table; rows at the default epochs keep their bare name."""
    tables = _tables()

    def short_row(record):
        board = record["boards"][0]
        row = {**board["rows"][-1], "model": "spectralformer"}
        row["settings"] = {**row["settings"], "epochs": 2}
        board["rows"].append(row)
        board.setdefault("evaluations", []).append(
            {"folder": "sf", "models": ["spectralformer"], "run": {"threads": 1, "epochs": 2}, "seconds": 1.0})

    results = _leaderboard_copy(tmp_path, short_row)
    page, readme = tables.render(results), tables.readme_block(tables.load(results))
    assert "| spectralformer (CPU, 2 epochs) |" in page and "| spectralformer (CPU, 2 epochs) |" in readme
    assert tables.default_epochs() == 20
    assert "| svm |" in page and "(CPU, 20 epochs)" not in page


def test_summary_reads_the_default_row_by_its_label(tmp_path):
    """``hsi evaluate`` labels the default run's row ``default (ssnet)``: the summary takes its OA from that row."""
    tables = _tables()

    def relabel(record):
        for board in record["boards"]:
            row = next(r for r in board["rows"] if r["model"] in ("ssnet", "default (ssnet)"))
            row["model"], row["oa_mean"] = "default (ssnet)", 0.5432

    data = tables.load(_leaderboard_copy(tmp_path, relabel))
    rows = tables.summary_rows(data)
    assert all("**54.3 ± " in r[1] for r in rows[:2])
    assert "ssnet" not in tables.not_run(data["leaderboard"])
