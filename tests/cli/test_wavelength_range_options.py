"""--wavelength-range (hsi train, hsi evaluate) and hsi convert --bands / --wavelength-range: one error line each."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io

from hsi.cli import main


@pytest.fixture
def mat_cube(tmp_path):
    rng = np.random.default_rng(1)
    path = tmp_path / "scene.mat"
    scipy.io.savemat(path, {"data": rng.random((10, 9, 6)).astype(np.float32),
                            "wavelengths": np.linspace(450, 950, 6)})
    return path


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    return err[0]


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_a_range_that_is_not_min_below_max_is_one_error_line(command, capsys):
    assert main([command, "--wavelength-range", "900", "400"]) == 2
    line = _error(capsys)
    assert line.startswith("error: --wavelength-range: (900.0, 400.0):") and "0 <= MIN < MAX" in line


@pytest.mark.parametrize(("args", "flag", "says"), [
    (["--bands", "0-6"], "--bands", "below 6 (the cube's band count), e.g. 0-99,120; found index 6"),
    (["--wavelength-range", "600", "500"], "--wavelength-range", "0 <= MIN < MAX"),
    (["--wavelength-range", "2000", "2500"], "--wavelength-range", "at least one band of"),
    (["--bands", "1", "--wavelength-range", "400", "900"], "--bands", "not both"),
])
def test_convert_band_selection_errors_name_the_flag(mat_cube, tmp_path, capsys, args, flag, says):
    out = tmp_path / "out.h5"
    assert main(["convert", str(mat_cube), "--to", "h5", str(out), "--key", "data", *args]) == 2
    line = _error(capsys)
    assert line.startswith(f"error: {flag}: ") and says in line
    assert not out.exists()


def test_convert_writes_the_bands_within_the_range(mat_cube, tmp_path, capsys):
    from hsi.io import read_cube

    out = tmp_path / "out.h5"
    assert main(["convert", str(mat_cube), "--to", "h5", str(out), "--key", "data",
                 "--wavelength-range", "550", "850"]) == 0
    assert "x 4 float32" in capsys.readouterr().out
    source, back = read_cube(mat_cube, key="data"), read_cube(out)
    assert back.wavelengths.tolist() == [550.0, 650.0, 750.0, 850.0] and np.array_equal(back.data, source.data[..., 1:5])
