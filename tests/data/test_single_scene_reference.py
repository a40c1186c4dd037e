"""A single scene through the one data path: the same split, fitted scaling and batches as hsi 0.1.0.

The reference (``reference/single_scene.json``) was recorded with hsi 0.1.0, before a
single scene became a collection of one; a change to it means a single-scene run no
longer reproduces earlier results for the same seed. What is exact is compared exactly:
the split masks (as digests), the batches' labels, the bands kept. What is floating point
is compared within a tolerance that no BLAS build, SIMD width or summation order can
break but any real change does: the fitted preprocessing state number by number, and
three summaries of each batch (the mean of every sample, of every band and of every
patch position, in float64). PCA's eigenvectors may change sign between BLAS builds, so
its case stores the split only. The svm baseline's confusion matrix stands for the
metrics (libsvm in float64 on min-max spectra).

``python -m tests.data.test_single_scene_reference --write`` records the reference anew
(only after a change that is meant to alter results; say so in the changelog).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from hsi.data import HSIDataModule

REFERENCE = Path(__file__).with_name("reference") / "single_scene.json"

#: DataModule arguments of each stored case
CASES = {
    "block": dict(scene="synthetic", scene_options={"height": 48, "width": 48, "bands": 20, "seed": 1}, patch_size=5,
                  batch_size=16, seed=3),
    "random_pca": dict(scene="synthetic", scene_options={"height": 40, "width": 40, "bands": 24, "seed": 2},
                       split="random", pca=5, patch_size=3, batch_size=8, seed=1, scaling="standardize"),
    "folds": dict(scene="synthetic", scene_options={"height": 48, "width": 48, "bands": 16, "seed": 4}, folds=3,
                  fold=2, block_size=8, patch_size=5, batch_size=16, seed=0),  # the second fold (1-based)
}

#: the cases whose fitted state and batches are stored (see the module docstring)
WITH_VALUES = ("block", "folds")

#: float tolerance: float32 data reordered by another BLAS or SIMD path moves the 7th digit at most
RTOL, ATOL = 1e-5, 1e-6

#: ``hsi train --scene synthetic --scene-options height=48 width=48 bands=20 seed=1 --model svm --seed 3 --patch-size 5``
SVM_CONFUSION_SHA256 = "f8e764017eb5f40c"
SVM_SCORES = (0.26641651031894936, 0.28825312483651216, 0.223055242810382)


def _sha(array) -> str:
    return hashlib.sha256(np.ascontiguousarray(np.asarray(array)).tobytes()).hexdigest()[:16]


def _batch_record(patches, labels) -> dict:
    """Exact labels and float64 summaries of a ``(N, C, h, w)`` batch: per sample, per band, per position."""
    x = patches.double().numpy()
    return {"labels": labels.tolist(), "sample_mean": x.mean(axis=(1, 2, 3)).tolist(),
            "band_mean": x.mean(axis=(0, 2, 3)).tolist(), "position_mean": x.mean(axis=(0, 1)).ravel().tolist()}


def _record(arguments: dict, with_values: bool) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dm = HSIDataModule(**arguments)
        dm.prepare_data()
        dm.setup("fit")
        dm.setup("test")
    split = dm.split
    out = {"train": _sha(split.train), "val": _sha(split.val), "test": _sha(split.test), "num_bands": dm.num_bands}
    if with_values:
        out["pipeline"] = dm.pipeline.to_state()
        loader = dm.train_dataloader()
        loader.set_epoch(0)
        out["train_batch"] = _batch_record(*next(iter(loader)))
        out["test_batch"] = _batch_record(*next(iter(dm.test_dataloader())))
    return out


def assert_matches(found, stored, where: str = "") -> None:
    """``found == stored`` for strings, ints, bools and structure; floats within :data:`RTOL`/:data:`ATOL`."""
    if isinstance(stored, dict):
        assert isinstance(found, dict) and sorted(found) == sorted(stored), f"{where}: keys {sorted(found)}"
        for key in stored:
            assert_matches(found[key], stored[key], f"{where}.{key}")
    elif isinstance(stored, list):
        assert isinstance(found, list) and len(found) == len(stored), f"{where}: length {len(found)} != {len(stored)}"
        for i, (f, s) in enumerate(zip(found, stored)):
            assert_matches(f, s, f"{where}[{i}]")
    elif isinstance(stored, float):
        assert isinstance(found, (int, float)) and math.isclose(found, stored, rel_tol=RTOL, abs_tol=ATOL), \
            f"{where}: {found!r} != {stored!r}"
    else:
        assert type(found) is type(stored) and found == stored, f"{where}: {found!r} != {stored!r}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_single_scene_split_pipeline_and_batches_as_stored(case):
    stored = json.loads(REFERENCE.read_text())[case]
    assert_matches(_record(CASES[case], case in WITH_VALUES), stored, case)


def test_the_comparison_catches_a_change_in_the_last_stored_digits():
    """The tolerance is not so loose that it hides a change: one value moved by 1e-4 of itself fails."""
    stored = json.loads(REFERENCE.read_text())["block"]
    moved = json.loads(json.dumps(stored))
    moved["train_batch"]["band_mean"][7] *= 1 + 1e-4
    with pytest.raises(AssertionError, match=r"band_mean\[7\]"):
        assert_matches(moved, stored, "block")
    moved = json.loads(json.dumps(stored))
    moved["test_batch"]["labels"][0] += 1
    with pytest.raises(AssertionError, match=r"labels\[0\]"):
        assert_matches(moved, stored, "block")
    assert_matches(json.loads(json.dumps(stored)), stored, "block")


def test_single_scene_svm_metrics_as_stored(tmp_path):
    import hsi.cli as cli

    argv = ["train", "--scene", "synthetic", "--scene-options", "height=48", "width=48", "bands=20", "seed=1",
            "--model", "svm", "--seed", "3", "--patch-size", "5", "--out", str(tmp_path / "run"), "--no-progress"]
    assert cli.main(argv) in (0, None)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert hashlib.sha256(json.dumps(metrics["confusion"]).encode()).hexdigest()[:16] == SVM_CONFUSION_SHA256
    assert (metrics["oa"], metrics["aa"], metrics["kappa"]) == pytest.approx(SVM_SCORES, rel=1e-12)
    assert "scenes" not in metrics and metrics["split"]["method"] == "block"


def write_reference() -> None:
    """Record :data:`REFERENCE` from the code as it is now."""
    from hsi._atomic import write_json_atomic

    REFERENCE.parent.mkdir(exist_ok=True)
    write_json_atomic(REFERENCE, indent=1, obj={case: _record(CASES[case], case in WITH_VALUES) for case in sorted(CASES)})


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write_reference()
