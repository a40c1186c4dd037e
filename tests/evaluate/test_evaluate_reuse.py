"""``hsi evaluate`` reuses a fold only when its files, settings and scene are those of the run asked for."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

SMALL = {"height": 24, "width": 24, "bands": 8, "n_classes": 3}
NAMES = ["meadow", "asphalt", "water"]
#: svm only, three folds: a fast evaluation
EVALUATE = ["evaluate", "--patch-size", "5", "--block-size", "6", "--no-progress", "--models", "svm", "--folds", "3"]


def _scene_files(folder: Path, seed: int) -> list[str]:
    """A cube and a label map file (classes named in the HDF5 file) of the synthetic scene with ``seed``."""
    from hsi.io.writers.hdf5 import write_h5
    from hsi.scenes.synthetic import make_synthetic_scene

    scene = make_synthetic_scene(**SMALL, seed=seed)
    cube, labels = folder / "cube.h5", folder / "labels.h5"
    write_h5(cube, scene.cube.data, wavelengths=scene.cube.wavelengths, overwrite=True)
    write_h5(labels, np.zeros((*scene.labels.shape, 1), dtype=np.float32), labels=scene.labels,
             class_names=NAMES, overwrite=True)
    return ["--cube", str(cube), "--labels", str(labels), "--labels-key", "labels"]


@pytest.fixture()
def evaluated(tmp_path, hsi_main):
    """An evaluation of a scene given as files: the command, its folder and a call that runs it again."""
    files = _scene_files(tmp_path, 1)
    args = [*EVALUATE, *files, "--out", str(tmp_path / "ev")]

    def again(*extra):
        return hsi_main([*args, *extra], tmp_path)

    status, stdout, err = again()
    assert status == 0, err
    return tmp_path / "ev", again, (stdout, err)


def _board(folder: Path) -> dict:
    return json.loads((folder / "leaderboard.json").read_text())


def test_the_same_command_reuses_every_fold(evaluated):
    folder, again, _ = evaluated
    status, _, err = again()
    assert status == 0 and err.count("(reused)") == 3 and "run again" not in err


def test_another_scene_at_the_cubes_path_runs_every_fold_again(evaluated, tmp_path):
    folder, again, _ = evaluated
    before = _board(folder)
    _scene_files(tmp_path, 2)  # another scene written over cube.h5 and labels.h5
    status, _, err = again()
    assert status == 0, err
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert len(lines) == 3 and all(f"run again: the input {tmp_path / 'cube.h5'} changed" in line for line in lines)
    after = _board(folder)
    assert [f["oa"] for f in after["rows"][0]["folds"]] != [f["oa"] for f in before["rows"][0]["folds"]]
    from hsi._identity import file_identity

    record = json.loads((folder / "runs" / "svm" / "seed0" / "fold1" / "evaluate-fold.json").read_text())
    assert record["inputs"]["cube"][0]["sha256"] == file_identity(tmp_path / "cube.h5")["sha256"]
    status, _, err = again()
    assert err.count("(reused)") == 3


@pytest.mark.parametrize("damage", ["deleted", "edited"])
def test_a_deleted_or_edited_fold_output_is_named_and_run_again(evaluated, damage):
    folder, again, _ = evaluated
    target = folder / "runs" / "svm" / "seed0" / "fold2" / "predictions.npz"
    if damage == "deleted":
        target.unlink()
    else:
        target.write_bytes(b"not the predictions")
    status, _, err = again()
    assert status == 0, err
    assert "fold 2/3: OA" in err and f"run again: {target} was {damage} since it was written" in err
    assert err.count("(reused)") == 2 and np.load(target)["y_pred"].size > 0


def test_a_users_file_in_a_fold_to_run_again_is_refused_naming_the_change(evaluated, tmp_path):
    folder, again, _ = evaluated
    mine = folder / "runs" / "svm" / "seed0" / "fold1" / "best.ckpt"  # an output name the fold run did not write
    mine.write_bytes(b"the user's own file")
    _scene_files(tmp_path, 2)
    status, _, err = again()
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("error: svm seed 0 fold 1/3: the input") and "cube.h5 changed" in err and "best.ckpt" in err
    assert mine.read_bytes() == b"the user's own file"


def test_classes_are_named_by_the_scene_in_every_output(evaluated):
    folder, _, (stdout, err) = evaluated
    board = _board(folder)
    assert board["class_names"] == NAMES and set(board["rows"][0]["per_class"]) == set(NAMES)
    header = (folder / "leaderboard.csv").read_text().splitlines()[0]
    assert header.endswith(",meadow,asphalt,water")
    for text in (stdout, (folder / "leaderboard.md").read_text()):
        assert "| class | svm |" in text and all(f"| {name} |" in text for name in NAMES)


def test_a_split_warning_names_its_classes_on_the_console():
    import warnings

    from hsi.errors import StratificationWarning
    from hsi.evaluate.running import each_warning_once

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with each_warning_once(NAMES):
            warnings.warn("block_split: class 1 (32 labeled pixels) has no test pixels; class 3 (4 labeled pixels) "
                          "has no train pixels", StratificationWarning, stacklevel=1)
    assert [str(w.message) for w in shown] == ["block_split: class 1 meadow (32 labeled pixels) has no test pixels; "
                                               "class 3 water (4 labeled pixels) has no train pixels"]


def test_folds_are_numbered_from_1_everywhere(evaluated):
    folder, _, (_, err) = evaluated
    assert sorted(p.name for p in (folder / "runs" / "svm" / "seed0").iterdir()) == ["fold1", "fold2", "fold3"]
    assert [f["fold"] for f in _board(folder)["rows"][0]["folds"]] == [1, 2, 3]
    assert "fold 1/3" in err and "fold 3/3" in err and "fold 0" not in err
    metrics = json.loads((folder / "runs" / "svm" / "seed0" / "fold1" / "metrics.json").read_text())
    assert metrics["config"]["data"]["fold"] == 1


def test_more_folds_than_blocks_is_refused_and_leaves_nothing_behind(hsi_main, tmp_path):
    status, _, err = hsi_main(["evaluate", "--scene-options", "height=24", "width=24", "bands=8", "n_classes=3",
                               "--block-size", "6", "--models", "svm", "--folds", "50", "--out", str(tmp_path / "ev")],
                              tmp_path)
    assert status == 2 and err.startswith("error: --folds: 50: ") and "labelled blocks" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
