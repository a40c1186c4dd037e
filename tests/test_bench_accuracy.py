"""``benchmarks/bench_accuracy.py --json``: the boards of several evaluations joined, folds checked, nothing run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_accuracy

    return bench_accuracy


def _board(folder: Path, scene: str, rows: list[tuple[str, float]], n_folds: int = 5, buffer: int = 3) -> None:
    (folder / scene).mkdir(parents=True)
    board = {"scene": scene, "n_folds": n_folds, "seeds": [0], "block_size": 16, "buffer": buffer, "seconds": 1.0,
             "settings": {"models": [m for m, _ in rows], "run": {"threads": 1}},
             "rows": [{"model": m, "oa_mean": oa, "folds": [{"oa": oa}]} for m, oa in rows]}
    (folder / scene / "leaderboard.json").write_text(json.dumps(board))


def test_tables_only_joins_the_rows_of_each_scene_best_first(bench, tmp_path):
    _board(tmp_path / "a", "samson", [("ssnet", 0.99), ("svm", 0.98)])
    _board(tmp_path / "b", "samson", [("hybridsn", 0.995), ("ssnet", 0.5)])  # ssnet is a's already
    _board(tmp_path / "b", "synthetic", [("anyband", 0.95)])
    out = tmp_path / "board.json"
    assert bench.main(["--scene", "samson", "synthetic", "--out", str(tmp_path / "a"), "--merge",
                       str(tmp_path / "b"), "--tables-only", "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    samson, synthetic = written["boards"]
    assert [(r["model"], r["oa_mean"]) for r in samson["rows"]] == [("hybridsn", 0.995), ("ssnet", 0.99),
                                                                      ("svm", 0.98)]
    assert all("folds" not in r for r in samson["rows"])
    assert [e["folder"] for e in samson["evaluations"]] == [str(tmp_path / "a" / "samson"),
                                                             str(tmp_path / "b" / "samson")]
    assert [r["model"] for r in synthetic["rows"]] == ["anyband"] and "machine" in written


@pytest.mark.parametrize("other", [{"n_folds": 3}, {"buffer": 0}])
def test_boards_of_other_folds_or_buffers_are_not_joined(bench, tmp_path, other):
    _board(tmp_path / "a", "samson", [("ssnet", 0.99)])
    _board(tmp_path / "b", "samson", [("svm", 0.98)], **other)  # the svm alone: a buffer of 0, more training pixels
    with pytest.raises(SystemExit, match="other folds or pixels"):
        bench.main(["--scene", "samson", "--out", str(tmp_path / "a"), "--merge", str(tmp_path / "b"),
                    "--tables-only", "--json", str(tmp_path / "board.json")])
