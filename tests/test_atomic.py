"""write_bytes_atomic: all or nothing, with ordinary permissions."""

from __future__ import annotations

import os
import stat

import pytest

from hsi import _atomic
from hsi._atomic import write_bytes_atomic


def test_replaces_content_with_umask_permissions(tmp_path):
    target = tmp_path / "meta.json"
    target.write_bytes(b"old")
    write_bytes_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in tmp_path.iterdir()] == ["meta.json"]


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "state.json"
    target.write_bytes(b"old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(_atomic.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_bytes_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


# -- write_json_atomic: the one writer of JSON files --------------------------------------------------------------


def test_write_json_atomic_writes_numpy_values_and_paths_as_plain_json(tmp_path):
    import numpy as np

    from hsi._atomic import write_json_atomic

    obj = {"oa": np.float32(0.5), "n": np.int64(3), "counts": np.arange(3, dtype=np.uint8), "flag": np.bool_(True),
           "file": tmp_path / "x.npy", "none": None, "name": "Grünland"}
    write_json_atomic(tmp_path / "a.json", obj, indent=1)
    assert (tmp_path / "a.json").read_bytes() == (
        b'{\n "oa": 0.5,\n "n": 3,\n "counts": [\n  0,\n  1,\n  2\n ],\n "flag": true,\n'
        + f' "file": "{tmp_path / "x.npy"}",\n'.encode() + b' "none": null,\n "name": "Gr\\u00fcnland"\n}\n')
    write_json_atomic(tmp_path / "b.json", {"b": 1, "a": [1, 2]}, indent=0, sort_keys=True, newline=False)
    assert (tmp_path / "b.json").read_bytes() == b'{\n"a": [\n1,\n2\n],\n"b": 1\n}'
    write_json_atomic(tmp_path / "c.json", {"b": 1, "a": None}, newline=False)
    assert (tmp_path / "c.json").read_bytes() == b'{"b": 1, "a": null}'
    with pytest.raises(TypeError):
        write_json_atomic(tmp_path / "d.json", {"x": object()}, default=None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json", "c.json"]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "np.float32 nan"])
def test_write_json_atomic_refuses_nan_naming_the_file_and_key(tmp_path, bad):
    import numpy as np

    from hsi._atomic import write_json_atomic

    value = np.float32("nan") if bad == "np.float32 nan" else bad
    target = tmp_path / "metrics.json"
    with pytest.raises(ValueError, match=r"metrics\.json: scenes\.south\.scores\[1\] is not a finite number"):
        write_json_atomic(target, {"oa": 0.5, "scenes": {"south": {"scores": [0.1, value]}}})
    assert list(tmp_path.iterdir()) == []


def test_null_nonfinite_gives_null_and_a_reason_that_strict_json_reads(tmp_path):
    import json

    import numpy as np

    from hsi._atomic import null_nonfinite, write_json_atomic

    def refuse(name):
        raise AssertionError(f"non-strict JSON constant {name}")

    metrics = {"oa": float("nan"), "aa": np.float64("nan"), "kappa": 0.25, "per_class": [None, float("inf")],
               "scenes": {"south": {"oa": float("nan")}}}
    write_json_atomic(tmp_path / "m.json", null_nonfinite(metrics, "no test pixel"))
    back = json.loads((tmp_path / "m.json").read_text(), parse_constant=refuse)
    assert back == {"oa": None, "oa_reason": "no test pixel", "aa": None, "aa_reason": "no test pixel",
                    "kappa": 0.25, "per_class": [None, None],
                    "scenes": {"south": {"oa": None, "oa_reason": "no test pixel"}}}
    assert np.isnan(metrics["oa"])  # the argument is left as it was


_WRITERS = {"write_bytes_atomic", "write_text", "write_bytes"}


def _json_file_writes(tree) -> list[int]:
    """Lines where ``json.dumps`` text is written to a file by hand (not through ``write_json_atomic``).

    Its result passed to a file writer, encoded to bytes (except for a hash), or bound to a name
    that a file writer (or a loop around one) uses.
    """
    import ast

    def calls_to(node, names):
        return [n for n in ast.walk(node) if isinstance(n, ast.Call)
                and (getattr(n.func, "attr", None) or getattr(n.func, "id", None)) in names]

    def is_dumps(n):
        return isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "dumps" \
            and getattr(n.func.value, "id", None) == "json"

    found = set()
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        written = {id(d) for w in calls_to(fn, _WRITERS) for d in ast.walk(w) if is_dumps(d)}
        hashed = {id(d) for h in calls_to(fn, {"sha256", "md5", "blake2b"}) for d in ast.walk(h) if is_dumps(d)}
        encoded = {id(d) for e in calls_to(fn, {"encode"}) for d in ast.walk(e.func) if is_dumps(d)} - hashed
        used = {n.id for w in calls_to(fn, _WRITERS) for n in ast.walk(w) if isinstance(n, ast.Name)}
        used |= {n.id for loop in ast.walk(fn) if isinstance(loop, ast.For) and calls_to(loop, _WRITERS)
                 for n in ast.walk(loop.iter) if isinstance(n, ast.Name)}
        bound = {id(d) for a in ast.walk(fn) if isinstance(a, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id in used for t in a.targets)
                 for d in ast.walk(a.value) if is_dumps(d)}
        found |= {d.lineno for d in ast.walk(fn) if is_dumps(d) and id(d) in written | encoded | bound}
    return sorted(found)


def test_json_files_are_written_by_write_json_atomic_alone():
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "hsi"
    by_hand = {f"{path.relative_to(root.parent)}:{line}" for path in sorted(root.rglob("*.py"))
               if path.name != "_atomic.py" for line in _json_file_writes(ast.parse(path.read_text()))}
    assert not by_hand, f"JSON written to a file by hand (use hsi._atomic.write_json_atomic): {sorted(by_hand)}"


def test_the_json_check_finds_the_hand_written_kinds():
    import ast

    source = '''
def a(p, obj):
    write_bytes_atomic(p, (json.dumps(obj, indent=1) + "\\\\n").encode())

def b(obj):
    return json.dumps(obj, indent=1).encode("utf-8")

def c(folder, board):
    files = {"x.json": json.dumps(board, indent=2) + "\\\\n", "x.md": "text"}
    for name, text in files.items():
        (folder / name).write_text(text)

def fine(obj, handle):
    handle.attrs["x"] = json.dumps(obj)
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()
'''
    assert _json_file_writes(ast.parse(source)) == [3, 6, 9]
