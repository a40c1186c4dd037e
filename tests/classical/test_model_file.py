"""A damaged classical ``model.npz`` ends in one clear error naming the file, on every load path."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from hsi.classical import fit_classical, load_classical, load_classical_run
from hsi.errors import ModelFileError


@pytest.fixture(params=["svm", "rf"])
def saved(request, blobs, tmp_path) -> Path:
    X, y, _, _ = blobs
    return fit_classical(request.param, X, y, seed=0, num_classes=4).save(tmp_path / "model.npz")


def _truncate(path: Path, keep: int) -> Path:
    path.write_bytes(path.read_bytes()[:keep])
    return path


def _flip_member_bytes(path: Path) -> Path:
    """Damage bytes inside the archive's first member (its header and central directory stay intact)."""
    data = bytearray(path.read_bytes())
    for i in range(80, 120):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("damage", ["half", "all but the end", "first bytes", "flipped"])
@pytest.mark.parametrize("load", [load_classical, load_classical_run])
def test_a_damaged_model_file_is_a_model_file_error_naming_it(saved, damage, load):
    size = saved.stat().st_size
    if damage == "flipped":
        _flip_member_bytes(saved)
    else:
        _truncate(saved, {"half": size // 2, "all but the end": size - 20, "first bytes": 100}[damage])
    with pytest.raises(ModelFileError) as err:
        load(saved)
    assert str(saved) in str(err.value) and "\n" not in str(err.value)


def test_infer_with_a_truncated_model_ends_in_one_error_line(saved, tmp_path, capsys):
    from hsi.cli import main

    cube = tmp_path / "scene.h5"
    with h5py.File(cube, "w") as f:
        f["cube"] = np.random.default_rng(0).random((20, 18, 6)).astype(np.float32)
    _truncate(saved, saved.stat().st_size // 2)
    status = main(["infer", "--checkpoint", str(saved), "--cube", str(cube), "--out", str(tmp_path / "maps")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith("error:"), err
    assert str(saved) in err[0] and "truncated or corrupt" in err[0]
