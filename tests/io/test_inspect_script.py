"""scripts/inspect.py: printed facts on small files, exit code 2 and one stderr line on bad input."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.io

from tests.helpers import CHILD_TIMEOUT

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "inspect.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("hsi_inspect_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # must do no work at import time
    return module


@pytest.fixture
def cube_file(tmp_path, io_files):
    cube = io_files.make_cube(shape=(7, 5, 6))
    cube[0, 0, 1] = np.nan
    cube[1, 2, 1] = np.nan
    cube[..., 4] = 0.25  # constant band
    path = tmp_path / "chw.mat"
    scipy.io.savemat(path, {"img": cube.transpose(2, 0, 1), "wavelengths": np.linspace(900, 400, 6),
                            "gt": np.ones((7, 5), np.uint8)})
    return path


def test_prints_facts_of_a_cube(script, cube_file, capsys):
    assert script.main([str(cube_file)]) == 0
    out = capsys.readouterr().out
    assert "'img' (6 x 7 x 5 float32)" in out and "'gt' (7 x 5 uint8)" in out
    assert "chosen key: img" in out
    assert "shape (H x W x C): 7 x 5 x 6" in out
    assert "layout: CHW -> HWC (axis 0 matches the 6 wavelengths)" in out
    assert "wavelengths: 400 - 900 nm, 6 bands, ascending; file order: reversed" in out
    assert "NaN: 2  Inf: 0" in out
    assert "constant bands: 1 [1]" in out  # band 4 in file order is band 1 once reversed
    assert "per-band max, quantiles 0/25/50/75/100%: 0.25 / " in out
    assert "band 1 500 nm: min 0.25 max 0.25" in out


def test_explicit_key_and_layout(script, cube_file, capsys):
    assert script.main([str(cube_file), "--key", "img", "--layout", "CWH"]) == 0
    out = capsys.readouterr().out
    assert "shape (H x W x C): 5 x 7 x 6" in out and "layout: CWH -> HWC (explicit layout=)" in out


def test_label_map_is_summarised(script, tmp_path, capsys):
    path = tmp_path / "gt.h5"
    with h5py.File(path, "w") as f:
        f["gt"] = np.array([[0, 1, 1], [2, 0, 1]], dtype=np.uint8)
    assert script.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "label map: 2 x 3, 2 classes, 4 labeled pixels, 2 unlabeled" in out and "1: 3, 2: 1" in out


def test_label_map_names_its_key_and_flags_data_matrices(script, tmp_path, capsys):
    path = tmp_path / "two.mat"
    scipy.io.savemat(path, {"y": np.array([[0, 3], [3, 1]], np.uint8)})
    assert script.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "chosen key: y" in out and "label map: 2 x 2, 2 classes" in out and "warning" not in out
    # a bands x pixels data matrix (unmixing 'Y') is no label map: one clear line says so
    scipy.io.savemat(path, {"Y": np.arange(40 * 50, dtype=np.float64).reshape(40, 50)})
    assert script.main([str(path)]) == 2
    captured = capsys.readouterr()
    assert "'Y' (40 x 50 float64)" in captured.out
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "'Y'" in err and "looks like data" in err


def test_single_band_class_map_gets_class_counts(script, tmp_path, io_files, capsys):
    gt = np.array([[0, 1], [2, 2], [0, 0]], np.uint8)[..., None]
    header, _ = io_files.write_envi(tmp_path, gt, name="gt")
    assert script.main([str(header)]) == 0
    out = capsys.readouterr().out
    assert "kind: label map (3 x 2, stored as a single-band image 3 x 2 x 1)" in out
    assert "label map: 3 x 2, 2 classes" in out and "1: 1, 2: 2" in out
    # described as the label map it is, never also as a 1-band cube
    assert "shape (H x W x C)" not in out and "wavelengths:" not in out and "kind: cube" not in out


@pytest.mark.parametrize("case", ["missing", "ambiguous", "wrong key", "corrupt"])
def test_bad_input_exit_code_2(script, tmp_path, capsys, case):
    path = tmp_path / "bad.h5"
    argv = [str(path)]
    if case == "ambiguous":
        with h5py.File(path, "w") as f:
            f["c"] = np.zeros((4, 4, 4), np.float32)
    elif case == "wrong key":
        with h5py.File(path, "w") as f:
            f["c"] = np.zeros((4, 4, 8), np.float32)
        argv += ["--key", "nope"]
    elif case == "corrupt":
        path.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 40)
    assert script.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error:") and str(path) in err
    assert "Traceback" not in err
    expected = {"missing": "no such file", "ambiguous": "layout=", "wrong key": "'nope' not found",
                "corrupt": "HDF5"}[case]
    assert expected in err


def test_runs_as_a_script_despite_stdlib_name(cube_file):
    """``python scripts/inspect.py`` must not shadow the stdlib ``inspect`` module."""
    done = subprocess.run([sys.executable, str(SCRIPT), str(cube_file)], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT, cwd=SCRIPT.parents[1])
    assert done.returncode == 0, done.stderr
    assert "shape (H x W x C): 7 x 5 x 6" in done.stdout
    bad = subprocess.run([sys.executable, str(SCRIPT), str(cube_file) + ".nope"], capture_output=True,
                         text=True, timeout=CHILD_TIMEOUT)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "no such file" in bad.stderr


def test_broken_label_file_reports_the_label_problem(script, tmp_path, capsys):
    path = tmp_path / "gt.mat"
    scipy.io.savemat(path, {"gt": np.array([[-1, 1], [2, 2]], np.int16)})
    assert script.main([str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "negative" in err.lower() and "gt" in err


@pytest.mark.parametrize("fmt", ["mat", "h5"])
def test_h_w_1_label_map_is_described_as_a_label_map(script, tmp_path, capsys, fmt):
    """An (H, W, 1) map is a label map: not refused as 'no 3-D array' while the listing shows a 3-D one."""
    gt = (np.arange(30).reshape(5, 6, 1) % 4).astype(np.uint8)
    path = tmp_path / f"gt.{fmt}"
    if fmt == "mat":
        scipy.io.savemat(path, {"gt": gt})
    else:
        with h5py.File(path, "w") as f:
            f["gt"] = gt
    assert script.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "'gt' (5 x 6 x 1 uint8)" in out
    assert "kind: label map (5 x 6, stored as a single-band image 5 x 6 x 1)" in out
    assert "label map: 5 x 6, 3 classes" in out and "shape (H x W x C)" not in out


def test_a_cube_reader_error_on_a_single_band_array_says_what_it_is(tmp_path):
    from hsi.errors import CubeFormatError
    from hsi.io import read_cube

    path = tmp_path / "gt.h5"
    with h5py.File(path, "w") as f:
        f["gt"] = np.ones((5, 6, 1), np.uint8)
    with pytest.raises(CubeFormatError, match=r"every axis longer than 1.*'gt' \(5 x 6 x 1 uint8\) has a single band: "
                                              r"a label map \(read_labels\)"):
        read_cube(path)


def test_every_warning_is_one_line(script, tmp_path, io_files, capsys):
    """A warning that Python would print over two lines (file:line: Category: message + source line)."""
    cube = io_files.make_cube(shape=(6, 5, 4))
    header, _ = io_files.write_envi(tmp_path, cube, name="odd",
                                    metadata={"wavelength units": "Index", "wavelength": [1, 2, 3, 4]})
    assert script.main([str(header)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: ") and "'Index' are not a length" in err[0], err


def test_a_foreign_library_warning_is_one_line_too(script, cube_file, capsys, monkeypatch):
    import warnings

    import hsi.io.describe as describe

    real = describe.describe_cube

    def noisy(cube, out):
        warnings.warn("a library says\n  something over two lines", RuntimeWarning)
        warnings.warn("a library says\n  something over two lines", RuntimeWarning)  # shown once
        real(cube, out)

    monkeypatch.setattr(describe, "describe_cube", noisy)
    assert script.main([str(cube_file)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("warning: ") for line in err), err  # the NaN warning of the cube is one line too
    assert err.count("warning: a library says something over two lines") == 1
