"""Errors at once: every option error and missing input file is one `error:` line before torch is imported.

Each case runs ``python -X importtime -m hsi ...`` in a child process: exit status 2, exactly
one ``error:`` line (nothing printed before it, the model registry's recommendations
included), and no torch or Lightning module among the imports. Also: one definition per
rule (the library raises the same text), a YAML key given twice is refused, and a missing
file of a scene collection is worded for the user's own files.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hsi.errors import CollectionError, OptionError, UsageError

from tests.helpers import CHILD_TIMEOUT

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "lightning")


def run_importtime(args: list[str], cwd: Path) -> tuple[int, list[str], set[str]]:
    """``(exit status, stderr lines other than import times, top-level packages imported)``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "hsi", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    lines = proc.stderr.splitlines()
    modules = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in lines
               if line.startswith("import time:") and "|" in line}
    other = [line for line in lines if not line.startswith("import time:")]
    return proc.returncode, other + proc.stdout.splitlines(), modules


def assert_early_error(args: list[str], cwd: Path, expected: str) -> str:
    status, lines, modules = run_importtime(args, cwd)
    assert status == 2, lines
    assert len(lines) == 1 and lines[0].startswith("error: "), lines  # nothing before it (no recommendation line)
    assert expected in lines[0], lines[0]
    assert not modules & set(HEAVY), f"imported {sorted(modules & set(HEAVY))} before refusing {args}"
    return lines[0]


OPTION_ERRORS = {
    "train-patch-size": (["train", "--patch-size", "4"],
                         "error: --patch-size: 4: an odd integer >= 1 (the patch is centred on its pixel)"),
    "train-epochs": (["train", "--epochs", "-1"], "error: --epochs: -1: an integer >= 1"),
    "train-pca": (["train", "--pca", "0"], "error: --pca: 0: a number of components >= 1"),
    "train-anyband-pca": (["train", "--model", "anyband", "--pca", "30"],
                          "error: --pca: 30: none: anyband reads each band with its wavelength"),
    "train-lr": (["train", "--lr", "0"], "error: --lr: 0"),
    "train-seed": (["train", "--seed", "-3"], "error: --seed: -3: an integer from 0 to 4294967295"),
    "train-devices": (["train", "--devices", "0"], "error: --devices: 0"),
    "train-fold-without-folds": (["train", "--fold", "2"], "error: --folds: None: a number of folds >= 2 for fold=2"),
    "train-fold-past-folds": (["train", "--folds", "3", "--fold", "7"], "error: --fold: 7"),
    "train-fractions": (["train", "--fractions", "0.5", "0.5", "0.5"], "error: --fractions:"),
    "train-fixed-split": (["train", "--split", "fixed"], "error: --test-labels: None"),
    "evaluate-seeds": (["evaluate", "--seeds", "1", "1"], "error: --seeds: [1, 1]: one or more distinct integers"),
    "evaluate-patch-size": (["evaluate", "--patch-size", "2"], "error: --patch-size: 2: an odd integer"),
    "evaluate-folds": (["evaluate", "--folds", "1"], "error: --folds: 1: an integer >= 2"),
    "evaluate-unknown-model": (["evaluate", "--models", "svm", "nosuch"],
                               "error: --models: nosuch: default, all or one of anyband, "),
    "infer-tile": (["infer", "--checkpoint", "m.ckpt", "--out", "o", "--tile", "0"], "error: --tile: 0: an integer >= 1"),
    "infer-overlap": (["infer", "--checkpoint", "m.ckpt", "--out", "o", "--tile", "64", "--overlap", "64"],
                      "error: --overlap: 64: an integer in [0, tile) with tile=64"),
    "infer-devices": (["infer", "--checkpoint", "m.ckpt", "--out", "o", "--devices", "2"],
                      "error: --devices: 2: 1 unless strategy='ddp'"),
    "infer-probabilities": (["infer", "--checkpoint", "m.ckpt", "--out", "o", "--probabilities", "--format", "envi"],
                            "error: --format: ('envi',): npy or gtiff among them"),
    "doctor-patch-size": (["doctor", "--patch-size", "6"], "error: --patch-size: 6: an odd integer"),
}


@pytest.mark.parametrize("case", sorted(OPTION_ERRORS))
def test_option_error_is_one_line_before_torch(case, tmp_path):
    args, expected = OPTION_ERRORS[case]
    assert_early_error(args, tmp_path, expected)


def test_missing_input_files_are_named_before_torch(tmp_path):
    labels = tmp_path / "gt.mat"
    labels.write_bytes(b"")
    missing = str(tmp_path / "nope.mat")
    assert_early_error(["train", "--cube", missing, "--labels", str(labels)], tmp_path,
                       f"error: --cube: {missing!r}: no such file")
    assert_early_error(["train", "--cube", str(labels), "--labels", missing], tmp_path,
                       f"error: --labels: {missing!r}: no such file")
    assert_early_error(["train", "--resume", str(tmp_path / "last.ckpt")], tmp_path,
                       f"error: --resume: {str(tmp_path / 'last.ckpt')!r}: no such checkpoint file")
    assert_early_error(["train", "--config", str(tmp_path / "exp.yaml")], tmp_path,
                       f"error: --config: {str(tmp_path / 'exp.yaml')!r}: no such file")
    assert_early_error(["train", "--scenes", str(tmp_path / "scenes.yaml")], tmp_path, "error: --scenes: ")
    assert_early_error(["infer", "--checkpoint", str(tmp_path / "best.ckpt"), "--out", "o"], tmp_path,
                       f"error: --checkpoint: {str(tmp_path / 'best.ckpt')!r}: no such checkpoint file")
    assert_early_error(["infer", "--checkpoint", str(labels), "--cube", str(labels), missing, "--out", "o"],
                       tmp_path, f"error: --cube: {missing!r}: no such file")
    assert_early_error(["doctor", "--cube", missing, "--labels", str(labels)], tmp_path, "error: --cube: ")
    assert_early_error(["evaluate", "--cube", missing, "--labels", str(labels)], tmp_path, "error: --cube: ")


def test_a_file_named_in_the_config_is_checked_naming_the_file_and_key(tmp_path):
    config = tmp_path / "exp.yaml"
    config.write_text("cube: missing.h5\nlabels: missing_gt.mat\nepochs: 2\n")
    line = assert_early_error(["train", "--config", str(config)], tmp_path, "no such file")
    assert line == f"error: --config {str(config)!r}: cube: 'missing.h5': no such file"


def test_an_option_error_in_the_config_is_refused_before_torch(tmp_path):
    config = tmp_path / "exp.yaml"
    config.write_text("patch_size: 8\n")
    assert_early_error(["train", "--config", str(config)], tmp_path, "error: --patch-size: 8: an odd integer")


def test_a_resumed_run_checks_each_given_value_but_not_the_data_combinations(tmp_path):
    """The checkpoint holds the data options: --split fixed alone is no error there, --epochs 0 still is."""
    ckpt = tmp_path / "last.ckpt"
    ckpt.write_bytes(b"")
    assert_early_error(["train", "--resume", str(ckpt), "--epochs", "0"], tmp_path, "error: --epochs: 0")
    from hsi.cli import build_parser
    from hsi.cli.train import checked_values

    args = build_parser("train").parse_args(["train", "--resume", str(ckpt), "--split", "fixed"])
    assert checked_values(args)["data"] == {"split": "fixed"}


# ------------------------------------------------------------------ one definition per rule
def test_the_library_and_the_command_line_share_one_rule():
    """The table carries the rule the signature declares: the same text, the same refusal."""
    from hsi.cli.table import table_specs
    from hsi.data.arguments import PATCH_SIZE

    spec = next(s for s in table_specs("train.data") if s.param == "patch_size")
    assert spec.check == PATCH_SIZE and spec.check.text == PATCH_SIZE.text
    from hsi.data import HSIDataModule

    with pytest.raises(OptionError) as library:
        HSIDataModule(patch_size=4)
    with pytest.raises(OptionError) as command_line:
        spec.check(spec.param, 4)
    assert str(library.value) == str(command_line.value)


@pytest.mark.parametrize("group", ["train.data", "train.model", "train.run", "infer.options"])
def test_every_range_rule_of_the_signatures_is_in_the_table(group):
    from hsi._checks import Rule
    from hsi.cli.table import live_group, table_specs

    live = {s.name: s.check for s in live_group(group) if isinstance(s.check, Rule)}
    table = {s.name: s.check for s in table_specs(group) if s.check is not None}
    assert live and table == live


def test_run_and_infer_options_refuse_what_the_command_line_refuses():
    from hsi.infer import InferOptions
    from hsi.training.options import RunOptions

    with pytest.raises(OptionError, match=r"^epochs: -1: an integer >= 1$"):
        RunOptions(epochs=-1)
    with pytest.raises(OptionError, match=r"^seed: 4294967296: an integer from 0 to 4294967295$"):
        RunOptions(seed=2**32)
    with pytest.raises(OptionError, match=r"^overlap: 8: an integer in \[0, tile\) with tile=8$"):
        InferOptions(tile=8, overlap=8)
    with pytest.raises(OptionError, match="one of gaussian, hann, mean"):
        InferOptions(blend="box")  # type: ignore[arg-type]


# ------------------------------------------------------------------ YAML keys given twice
def test_a_config_key_given_twice_is_refused(tmp_path):
    config = tmp_path / "exp.yaml"
    config.write_text("epochs: 3\nmodel: cnn2d\nepochs: 30\n")
    line = assert_early_error(["train", "--config", str(config)], tmp_path, "duplicate key")
    assert line == (f"error: --config: {str(config)!r}: duplicate key 'epochs' on line 3 (first on line 1); "
                    "give each key once")


def test_a_collection_key_given_twice_is_refused(tmp_path):
    from hsi.data.sources.entries import read_collection

    (tmp_path / "a.h5").write_bytes(b"")
    (tmp_path / "a_gt.mat").write_bytes(b"")
    path = tmp_path / "scenes.yaml"
    path.write_text("scenes:\n  - name: a\n    cube: a.h5\n    labels: a_gt.mat\n    cube: b.h5\nsplit: block\n")
    with pytest.raises(CollectionError, match=r"scenes: '.*scenes.yaml': duplicate key 'cube' on line 5 "
                                              r"\(first on line 3\)"):
        read_collection(path)


def test_the_yaml_reader_keeps_merge_keys_and_nested_mappings(tmp_path):
    from hsi._yaml import read_yaml

    path = tmp_path / "x.yaml"
    path.write_text("base: &b {lr: 0.1, epochs: 2}\nrun:\n  <<: *b\n  epochs: 5\nother: {epochs: 1}\n")
    assert read_yaml(path, "--config", UsageError) == {"base": {"lr": 0.1, "epochs": 2},
                                                      "run": {"lr": 0.1, "epochs": 5}, "other": {"epochs": 1}}


# ------------------------------------------------------------------ missing scene files, in the right words
def test_a_missing_collection_cube_names_the_entry_without_download_advice(tmp_path):
    """Found once the collection is read (torch imported by then): still one line, no recommendation line before it
    (the default model's patch size is said only when training starts) and no --download advice."""
    path = tmp_path / "scenes.yaml"
    (tmp_path / "north_gt.mat").write_bytes(b"")
    path.write_text("scenes:\n  - {name: north, cube: north.h5, labels: north_gt.mat}\n")
    status, lines, _ = run_importtime(["train", "--scenes", str(path), "--epochs", "1", "--out", str(tmp_path / "r")],
                                      tmp_path)
    assert status == 2 and len(lines) == 1, lines
    assert lines[0] == f"error: scenes ({path})[0] 'north': cube: {str(tmp_path / 'north.h5')!r}: no such file"


def test_a_missing_registry_scene_is_worded_for_the_library_and_for_the_command_line(tmp_path, hsi_main):
    from hsi.errors import DatasetNotFoundError
    from hsi.scenes import load_scene

    with pytest.raises(DatasetNotFoundError) as info:
        load_scene("indian_pines", root=tmp_path)
    library = str(info.value)
    assert "download=True" in library and "root=" in library
    assert "--download" not in library and "--root" not in library
    status, _, err = hsi_main(["train", "--scene", "indian_pines", "--root", str(tmp_path), "--epochs", "1",
                               "--out", str(tmp_path / "r")], tmp_path)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: scene 'indian_pines'"), err
    assert "add --download" in lines[0] and "--root" in lines[0]
    assert "download=True" not in lines[0] and "root=" not in lines[0]


def test_hsi_infer_names_a_missing_registry_scene_before_torch(tmp_path):
    """``hsi infer --scene NAME`` whose files are not in the root: one line naming them and the fix, torch never
    imported (the checkpoint is not even read)."""
    (tmp_path / "m.ckpt").write_bytes(b"not read")
    line = assert_early_error(["infer", "--checkpoint", "m.ckpt", "--scene", "indian_pines", "--root",
                               str(tmp_path / "empty"), "--out", "o"], tmp_path,
                              "error: scene 'indian_pines': file(s) not found (hsi infer downloads nothing")
    assert "Indian_pines_corrected.mat" in line and "--root FOLDER" in line and "download=True" not in line
    assert_early_error(["infer", "--checkpoint", "m.ckpt", "--scene", "indian_pine", "--out", "o"], tmp_path,
                       "error: unknown scene 'indian_pine'")


@pytest.mark.parametrize("args, expected", [
    (["--classes", "class_1"], "error: --classes: class_1: THEIRS=OURS"),
    (["--scale", "0"], "error: --scale: 0.0: a positive number"),
    (["--units", "counts"], "error: --units: invalid choice: 'counts'"),
])
def test_hsi_infer_refuses_malformed_source_options_before_torch(args, expected, tmp_path):
    (tmp_path / "m.ckpt").write_bytes(b"not read")
    status, lines, modules = run_importtime(["infer", "--checkpoint", "m.ckpt", "--out", "o", *args], tmp_path)
    assert status == 2 and any(expected in line for line in lines), lines
    assert not modules & set(HEAVY)
