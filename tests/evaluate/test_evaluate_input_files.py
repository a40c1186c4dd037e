"""``hsi evaluate`` redoes a fold when any file its scene is read from changed: an ENVI binary under its header too."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

SMALL = {"height": 24, "width": 24, "bands": 8, "n_classes": 3}
#: svm only, three folds: a fast evaluation
EVALUATE = ["evaluate", "--patch-size", "5", "--block-size", "6", "--no-progress", "--models", "svm", "--folds", "3"]


def _write_envi(folder: Path, seed: int) -> None:
    """``scene.hdr`` + ``scene.img`` and ``labels.npy`` of the synthetic scene with ``seed`` (header the same for
    every seed: the wavelengths and shape only)."""
    from spectral.io import envi

    from hsi.scenes.synthetic import make_synthetic_scene

    scene = make_synthetic_scene(**SMALL, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        envi.save_image(str(folder / "scene.hdr"), scene.cube.data.astype(np.float32), ext=".img", force=True,
                        metadata={"wavelength": [f"{w:.1f}" for w in np.linspace(400, 1000, SMALL["bands"])]})
    np.save(folder / "labels.npy", scene.labels.astype(np.int64))


@pytest.fixture()
def evaluated(tmp_path, hsi_main):
    """An evaluation of an ENVI scene: its folder and a call that runs it again."""
    _write_envi(tmp_path, 1)
    args = [*EVALUATE, "--cube", str(tmp_path / "scene.hdr"), "--labels", str(tmp_path / "labels.npy"),
            "--out", str(tmp_path / "ev")]

    def again():
        return hsi_main(args, tmp_path)

    status, _, err = again()
    assert status == 0, err
    return tmp_path / "ev", again


def _oas(folder: Path) -> list[float]:
    return [f["oa"] for f in json.loads((folder / "leaderboard.json").read_text())["rows"][0]["folds"]]


def test_another_binary_under_the_same_header_runs_every_fold_again(evaluated, tmp_path):
    folder, again = evaluated
    before, header = _oas(folder), (tmp_path / "scene.hdr").read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    _write_envi(other, 2)
    (tmp_path / "scene.img").write_bytes((other / "scene.img").read_bytes())  # same size, the header untouched
    assert (tmp_path / "scene.hdr").read_bytes() == header
    status, _, err = again()
    assert status == 0, err
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert len(lines) == 3 and "(reused)" not in err
    assert all(f"run again: the input {tmp_path / 'scene.img'} changed (SHA-256" in line for line in lines)
    assert _oas(folder) != before
    status, _, err = again()
    assert err.count("(reused)") == 3


def test_another_header_over_the_same_binary_runs_every_fold_again(evaluated, tmp_path):
    _, again = evaluated
    header = tmp_path / "scene.hdr"
    header.write_bytes(header.read_bytes().replace(b"400.0", b"401.0"))
    status, _, err = again()
    assert status == 0, err
    assert err.count(f"run again: the input {header} changed") == 3 and "(reused)" not in err


def test_a_fold_recorded_by_an_older_hsi_with_one_identity_per_file_is_run_again(evaluated):
    """An older record (one dict per input, not a list per file it stands for) counts as changed, never crashes."""
    folder, again = evaluated
    record_path = folder / "runs" / "svm" / "seed0" / "fold1" / "evaluate-fold.json"
    record = json.loads(record_path.read_text())
    assert [Path(i["path"]).name for i in record["inputs"]["cube"]] == ["scene.hdr", "scene.img"]
    record["inputs"]["cube"] = record["inputs"]["cube"][0]
    record_path.write_text(json.dumps(record))
    status, _, err = again()
    assert status == 0, err
    assert err.count("(reused)") == 2 and "run again: the scene.cube is now read from other files" in err
