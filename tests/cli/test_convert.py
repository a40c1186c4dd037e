"""hsi convert / hsi.io.convert: packed outputs equal their source, corruption is caught, nothing half-written."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
import scipy.io

from hsi.cli import main
from hsi.errors import IntegrityError
from hsi.io import read_cube, read_labels
from hsi.io.convert import convert
from hsi.io.readers.npy_scene import open_npy_scene
from hsi.io.verify import sample_windows, verify_conversion


@pytest.fixture
def mat_scene(tmp_path):
    """A MATLAB v5 file with an int16 (H, W, C) cube, its wavelengths and a label map."""
    rng = np.random.default_rng(3)
    cube = rng.integers(-50, 4000, size=(70, 45, 9)).astype(np.int16)
    gt = rng.integers(0, 5, size=(70, 45)).astype(np.uint8)
    path = tmp_path / "scene.mat"
    scipy.io.savemat(path, {"data": cube, "gt": gt, "wavelengths": np.linspace(450, 950, 9)})
    return path, cube, gt


@pytest.mark.parametrize("to", ["h5", "npy"])
def test_cli_convert_writes_the_source_values_and_reports(mat_scene, tmp_path, capsys, to):
    src, cube, gt = mat_scene
    out = tmp_path / ("out.h5" if to == "h5" else "out_npy")
    assert main(["convert", str(src), "--to", to, str(out), "--labels", str(src), "--labels-key", "gt",
                 "--key", "data"]) == 0
    text = capsys.readouterr().out
    assert f"wrote {out}" in text and "MiB in" in text and " s\n" in text
    assert "verified: 2 of 2 windows identical" in text  # 70 x 45 -> two 64 x 64 windows, all checked
    if to == "h5":
        back = read_cube(out)  # no key needed
        assert np.array_equal(back.data, cube.astype(np.float32))
        assert np.array_equal(back.wavelengths, np.linspace(450, 950, 9))
        assert np.array_equal(read_labels(out), gt)
    else:
        data, labels, meta = open_npy_scene(out)
        assert data.dtype == np.float32 and np.array_equal(data, cube.astype(np.float32))
        assert np.array_equal(labels, gt) and meta["shape"] == [70, 45, 9]
        assert meta["wavelengths"] == pytest.approx(np.linspace(450, 950, 9).tolist(), abs=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([src.name, out.name])


@pytest.mark.parametrize("to", ["h5", "npy"])
def test_verification_catches_an_output_corrupted_after_writing(mat_scene, tmp_path, to):
    src, cube, _ = mat_scene
    out = tmp_path / ("out.h5" if to == "h5" else "out_npy")
    convert(src, out, to, key="data")
    assert verify_conversion(src, out, key="data") == (2, 2)
    if to == "h5":
        with h5py.File(out, "r+") as f:
            f["cube"][66, 44, 3] += 1.0  # one value, in the last window
    else:
        data = np.load(out / "cube.npy", mmap_mode="r+")
        data[66, 44, 3] += 1.0
        data.flush()
        del data
        # an .npy scene's reader finds it first: cube.npy no longer has the SHA-256 meta.json lists
        with pytest.raises(IntegrityError, match=r"out_npy/cube.npy: SHA-256 \w+, meta.json lists \w+; .*hsi convert"):
            verify_conversion(src, out, key="data")
        return
    with pytest.raises(IntegrityError, match=r"rows 64:70, cols 0:45: 1 value\(s\) differ.*offset \(2, 44, 3\)"):
        verify_conversion(src, out, key="data")


def test_sample_always_includes_the_corners_and_is_seeded():
    windows, total = sample_windows((1000, 700), n_windows=8, window=64)
    assert total == 16 * 11 and len(windows) == 8
    starts = {(r.start, c.start) for r, c in windows}
    assert {(0, 0), (0, 640), (960, 0), (960, 640)} <= starts
    assert windows == sample_windows((1000, 700), n_windows=8, window=64)[0]


def test_a_failed_conversion_leaves_nothing_under_the_final_name(mat_scene, tmp_path):
    src, _, _ = mat_scene

    def stop(done, total):
        raise KeyboardInterrupt

    for to, name in (("h5", "out.h5"), ("npy", "out_npy")):
        with pytest.raises(KeyboardInterrupt):
            convert(src, tmp_path / name, to, key="data", progress=stop)
    assert [p.name for p in tmp_path.iterdir()] == [src.name]  # no output, no temporary file


def test_cli_errors_name_the_option(mat_scene, tmp_path, capsys):
    src, _, _ = mat_scene
    assert main(["convert", str(src), "--to", "npy", str(tmp_path / "o"), "--key", "data",
                 "--compression", "gzip"]) == 2
    assert "error: --compression: gzip: only with to='h5'" in capsys.readouterr().err
    (tmp_path / "taken.h5").write_bytes(b"x")
    assert main(["convert", str(src), "--to", "h5", str(tmp_path / "taken.h5"), "--key", "data"]) == 2
    assert "already exists" in capsys.readouterr().err and (tmp_path / "taken.h5").read_bytes() == b"x"


@pytest.mark.parametrize("to, name", [("h5", "out.tif"), ("h5", "out"), ("npy", "out.h5"), ("npy", "out.tif"),
                                      ("gtiff", "out.h5")])
def test_output_name_is_checked_against_to_before_any_work(mat_scene, tmp_path, capsys, monkeypatch, to, name):
    """``--to h5 out.tif`` used to convert first and fail on reading the output back, leaving out.tif behind."""
    import hsi.io

    def no_read(*args, **kwargs):
        raise AssertionError("the input was opened before the output name was checked")

    monkeypatch.setattr(hsi.io, "open_cube", no_read)
    src, _, _ = mat_scene
    assert main(["convert", str(src), "--to", to, str(tmp_path / name), "--key", "data"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: OUT: {tmp_path / name}: "), err
    assert f"--to {to}" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [src.name]  # nothing written


def test_collection_pack_name_is_checked_before_packing(tmp_path, capsys):
    scenes = tmp_path / "scenes.yaml"
    scenes.write_text("scenes:\n  - {name: a, cube: missing.h5, labels: missing.h5}\nsplit: block\n")
    assert main(["convert", "--collection", str(scenes), "--to", "h5", str(tmp_path / "pack.tif")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pack.tif" in err[0] and ".h5" in err[0] and "missing.h5" not in err[0], err
