"""``hsi convert``: a killed conversion leaves the old output or none; a full disk is one error line, exit 2."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.io

from hsi.io.convert import convert
from hsi.io.readers.npy_scene import open_npy_scene
from hsi.transaction import read_manifest, verify_manifest

from tests.helpers import CHILD_TIMEOUT

#: the child: SIGKILLs itself at one moment (after the first block of rows, or in the commit), then converts
KILLER = textwrap.dedent("""
    import os, signal, sys
    moment, argv = sys.argv[1], sys.argv[2:]
    from hsi import transaction
    from hsi.io import convert as conv
    from hsi.io.writers import hdf5 as h5write

    if moment == "rows":
        def copy(lazy, target, progress):
            target[0:1] = lazy.read_window(slice(0, 1), slice(None))
            os.kill(os.getpid(), signal.SIGKILL)
        conv._copy_blocks = copy
    elif moment == "no-check":
        transaction.require_free_space = lambda *a, **k: None
    else:
        transaction._test_hook = lambda now: os.kill(os.getpid(), signal.SIGKILL) if now == moment else None
    from hsi.cli import main
    sys.exit(main(argv))
""")


@pytest.fixture
def source(tmp_path):
    rng = np.random.default_rng(0)
    cube = rng.integers(0, 4000, size=(40, 30, 6)).astype(np.int16)
    path = tmp_path / "scene.mat"
    scipy.io.savemat(path, {"data": cube, "wavelengths": np.linspace(450, 950, 6)})
    return path


def child(moment: str, args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", KILLER, moment, *args], capture_output=True, text=True, timeout=CHILD_TIMEOUT)


def hidden(parent) -> list[str]:
    return sorted(p.name for p in parent.rglob(".*"))


@pytest.mark.parametrize("moment", ["rows", "moved:cube.npy", "before-manifest"])
def test_killed_npy_conversion_leaves_the_old_output_or_no_manifest(source, tmp_path, moment):
    out = tmp_path / "npy"
    convert(source, out, "npy", key="data")
    (out / "notes.txt").write_text("mine")
    old = read_manifest(out, "meta.json")["files"]
    proc = child(moment, ["convert", str(source), "--to", "npy", str(out), "--key", "data", "--overwrite"])
    assert proc.returncode == -9, proc.stderr[-2000:]
    data = read_manifest(out, "meta.json")
    assert (data is None) if moment != "rows" else (data["files"] == old)
    assert verify_manifest(out, "meta.json") == {}
    convert(source, out, "npy", key="data", overwrite=True)  # the next run cleans up
    assert verify_manifest(out, "meta.json") == {} and open_npy_scene(out)[0].shape == (40, 30, 6)
    assert hidden(tmp_path) == [] and (out / "notes.txt").read_text() == "mine"


def test_killed_h5_conversion_leaves_the_old_file(source, tmp_path):
    out = tmp_path / "scene.h5"
    convert(source, out, "h5", key="data")
    before = out.read_bytes()
    proc = child("rows", ["convert", str(source), "--to", "h5", str(out), "--key", "data", "--overwrite"])
    assert proc.returncode == -9
    assert out.read_bytes() == before
    convert(source, out, "h5", key="data", overwrite=True)
    assert hidden(tmp_path) == []


@pytest.fixture
def tiny_disk(small_disk):
    """A 2 MiB tmpfs (skipped where mounting is not permitted)."""
    return small_disk("2m")


@pytest.mark.parametrize("to", ["h5", "npy"])
@pytest.mark.parametrize("moment", ["check", "no-check"])
def test_full_disk_is_one_error_line_exit_2_no_leftovers(tmp_path, tiny_disk, to, moment):
    big = tmp_path / "big.mat"
    rng = np.random.default_rng(1)  # 2.9 MB of float32 out: more than the disk holds
    scipy.io.savemat(big, {"data": rng.integers(0, 4000, size=(120, 100, 60)).astype(np.int16)})
    out = tiny_disk / ("out.h5" if to == "h5" else "out")
    # "check": refused before writing; "no-check": the disk fills up while writing (HDF5 must not crash)
    proc = child(moment, ["convert", str(big), "--to", to, str(out), "--layout", "HWC"])
    err = proc.stderr.strip()
    assert proc.returncode == 2, err[-2000:]
    assert err.startswith(f"error: {tiny_disk}: ") and "bytes" in err and len(err.splitlines()) == 1, err
    assert list(tiny_disk.iterdir()) == []
