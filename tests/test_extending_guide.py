"""docs/extending.md, followed: its toy reader, output format and model, shipped as a package through entry points
(:mod:`hsi.plugins`), reach every command; a broken plug-in installed beside them is named in one line and stops
nothing else.

The package is built from the guide's own code blocks (those marked ``<!-- file: PATH -->``) and "installed" as a
``.dist-info`` folder on the ``PYTHONPATH`` of each child process, which is what ``pip install`` leaves for the
entry points to be found.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import CHILD_TIMEOUT, TINY_SCENE, child_env

tomllib = pytest.importorskip("tomllib", reason="the guide's pyproject.toml is read with tomllib (Python 3.11)")

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "extending.md"
_FILE = re.compile(r"^<!-- file: (\S+) -->$")
_FENCE = re.compile(r"^(`{3,})\w*$")

#: a second package: a model whose module is missing, and a model class offered as an output format
BROKEN_ENTRY_POINTS = "[hsi.models]\nbroken = hsi_broken.missing:Model\n\n[hsi.sinks]\nnotasink = hsi_toy.model:CentreLinear\n"


def guide_files(text: str) -> dict[str, str]:
    """``{path: code}`` of each fenced block the guide marks ``<!-- file: PATH -->`` (the line before its fence)."""
    lines = text.splitlines()
    files = {}
    for i, line in enumerate(lines):
        found = _FILE.match(line.strip())
        if found is None:
            continue
        fence = _FENCE.match(lines[i + 1].strip())
        assert fence is not None, f"extending.md:{i + 1}: {line.strip()} must stand right above a fenced block"
        end = next(k for k in range(i + 2, len(lines)) if lines[k].strip() == fence[1])
        files[found[1]] = "\n".join(lines[i + 2:end]) + "\n"
    return files


def entry_points_txt(pyproject: str) -> str:
    """The ``entry_points.txt`` that installing a project with ``pyproject`` writes into its ``.dist-info``."""
    groups = tomllib.loads(pyproject)["project"]["entry-points"]
    return "\n".join(f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in names.items())
                     for group, names in groups.items())


def install(site: Path, name: str, version: str, entry_points: str) -> None:
    """What ``pip install`` leaves in ``site`` for a project's entry points to be found: its ``.dist-info``."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(entry_points)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The guide's toy package and a broken one, installed into a folder for ``PYTHONPATH``."""
    site = tmp_path_factory.mktemp("site")
    files = guide_files(GUIDE.read_text(encoding="utf-8"))
    assert set(files) == {"pyproject.toml", "hsi_toy/reader.py", "hsi_toy/sink.py", "hsi_toy/model.py"}
    (site / "hsi_toy").mkdir()
    (site / "hsi_toy" / "__init__.py").write_text("")
    for path, code in files.items():
        if path != "pyproject.toml":
            (site / path).write_text(code)
    project = tomllib.loads(files["pyproject.toml"])["project"]
    install(site, project["name"], project["version"], entry_points_txt(files["pyproject.toml"]))
    install(site, "hsi-broken", "0.1", BROKEN_ENTRY_POINTS)
    return site


def write_scene(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """The tiny synthetic scene as the toy format's ``scene.csvcube`` and ``gt.npy``; returns its cube and labels."""
    from hsi.scenes import make_synthetic_scene

    scene = make_synthetic_scene(**TINY_SCENE)
    cube = scene.cube.data.astype(np.float32)
    with open(folder / "scene.csvcube", "w") as handle:
        handle.write(" ".join(map(str, cube.shape)) + "\n")
        np.savetxt(handle, cube.reshape(-1, cube.shape[2]), delimiter=",", fmt="%.9g")
    np.save(folder / "gt.npy", scene.labels.astype(np.uint8))
    return cube, scene.labels


def hsi(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m hsi ARGS`` in ``cwd``, with the packages of ``site`` installed."""
    return subprocess.run([sys.executable, "-m", "hsi", *args], check=False, cwd=cwd, env=child_env(PYTHONPATH=str(site)),
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT)


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


def test_the_guide_marks_only_files_of_the_toy_package():
    text = "<!-- file: pkg/a.py -->\n```python\nx = 1\n```\nprose\n<!-- file: pyproject.toml -->\n````toml\n[a]\n````\n"
    assert guide_files(text) == {"pkg/a.py": "x = 1\n", "pyproject.toml": "[a]\n"}


def test_the_toy_reader_reaches_inspect_and_convert(site, tmp_path):
    cube, _ = write_scene(tmp_path)
    done = hsi(site, tmp_path, "inspect", "scene.csvcube")
    assert done.returncode == 0, done.stderr
    assert "'scene.csvcube' (24 x 24 x 8 float32)" in done.stdout and "fixed by the csvcube format" in done.stdout
    assert warnings_of(done.stderr) == []  # the broken plug-ins are models and formats: no reader needed them
    converted = hsi(site, tmp_path, "convert", "scene.csvcube", "--to", "h5", "scene.h5")
    assert converted.returncode == 0, converted.stderr
    import h5py

    with h5py.File(tmp_path / "scene.h5") as f:
        (name,) = [k for k in f if f[k].ndim == 3]
        assert np.array_equal(f[name][...], cube)  # the values the toy reader read, as written
    (tmp_path / "bad.csvcube").write_text("2 2 3\n0.1,0.2\n")
    bad = hsi(site, tmp_path, "inspect", "bad.csvcube")
    assert bad.returncode == 2 and bad.stderr.startswith("error: bad.csvcube: not a csvcube file"), bad.stderr


def test_every_command_offers_the_plugins_names_before_importing_them(site, tmp_path):
    """The ``--model`` and ``--format`` choices include the entry points' names (the broken ones too: the names are
    read without importing anything), in each command that takes them."""
    for args, name in [(["train", "--model", "nope"], "centre_linear"), (["pretrain", "--model", "nope"], "centre_linear"),
                       (["doctor", "--model", "nope"], "centre_linear"),
                       (["evaluate", "--models", "nope", "--scene", "synthetic"], "centre_linear"),
                       (["infer", "--checkpoint", "x.ckpt", "--out", "m", "--format", "nope"], "counts")]:
        done = hsi(site, tmp_path, *args)
        assert done.returncode == 2 and done.stderr.startswith("error: "), (args, done.stderr)
        assert name in done.stderr and "nope" in done.stderr, (args, done.stderr)
        assert warnings_of(done.stderr) == []  # nothing was imported: no plug-in failed yet


def test_train_and_infer_run_the_toy_model_and_format_and_name_the_broken_plugin_once(site, tmp_path):
    write_scene(tmp_path)
    trained = hsi(site, tmp_path, "train", "--cube", "scene.csvcube", "--labels", "gt.npy", "--model", "centre_linear",
                  "--patch-size", "5", "--block-size", "6", "--epochs", "1", "--no-progress", "--out", "run")
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert warnings_of(trained.stderr) == [(
        "warning: model plug-in 'broken' (hsi.models entry point 'hsi_broken.missing:Model', package hsi-broken 0.1) "
        "not loaded, skipped: ModuleNotFoundError: No module named 'hsi_broken'")]
    import torch

    saved = torch.load(tmp_path / "run" / "best.ckpt", map_location="cpu", weights_only=False)
    assert saved["hyper_parameters"]["model"] == "centre_linear"
    assert any(k.endswith("linear.weight") for k in saved["state_dict"])  # the toy network's own layer

    mapped = hsi(site, tmp_path, "infer", "--checkpoint", "run/best.ckpt", "--format", "counts", "npy",
                 "--no-progress", "--out", "maps")
    assert mapped.returncode == 0, mapped.stderr[-3000:]
    broken = [line for line in warnings_of(mapped.stderr) if "plug-in" in line]
    assert len(broken) == 2 and any("output format plug-in 'notasink'" in line and "package hsi-broken 0.1" in line
                                    and "not a subclass of hsi.sinks.Sink" in line for line in broken), broken
    with open(tmp_path / "maps" / "class_counts.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    labels = np.load(tmp_path / "maps" / "labels.npy")
    assert [int(r["pixels"]) for r in rows] == np.bincount(labels.ravel(), minlength=len(rows)).tolist()
    assert sum(int(r["pixels"]) for r in rows) == labels.size and rows[0]["class"] == "Unclassified"
    record = json.loads((tmp_path / "maps" / "inference.json").read_text())
    assert record["options"]["format"] == ["npy", "counts"]
