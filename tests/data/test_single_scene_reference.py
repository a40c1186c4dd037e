"""A single scene through the one data path: the same split, batches and metrics as before collections were unified.

The digests were recorded with hsi 0.1.0 before a single scene became a collection of one
(the release whose DataModule swapped its class for collections); a change to them means a
single-scene run no longer reproduces earlier results for the same seed. Only min-max
scaled cases store batch digests: min-max is exact arithmetic, so they hold on any CPU
(PCA's eigenvectors may differ in the last bits between BLAS builds: its case stores the
split only). The svm baseline's confusion matrix stands for the metrics (libsvm in float64
on the exact min-max spectra).
"""

from __future__ import annotations

import hashlib
import json
import warnings

import numpy as np
import pytest

from hsi.data import HSIDataModule

#: DataModule arguments of each stored case
CASES = {
    "block": dict(scene="synthetic", scene_options={"height": 48, "width": 48, "bands": 20, "seed": 1}, patch_size=5,
                  batch_size=16, seed=3),
    "random_pca": dict(scene="synthetic", scene_options={"height": 40, "width": 40, "bands": 24, "seed": 2},
                       split="random", pca=5, patch_size=3, batch_size=8, seed=1, scaling="standardize"),
    "folds": dict(scene="synthetic", scene_options={"height": 48, "width": 48, "bands": 16, "seed": 4}, folds=3,
                  fold=2, block_size=8, patch_size=5, batch_size=16, seed=0),  # the second fold (1-based)
}

#: what hsi 0.1.0 gave (see the module docstring)
STORED = {
    "block": {
        "train": "905be4a5ea2a87bf",
        "val": "9494c924bed32562",
        "test": "5272e234adc3f8a4",
        "pipeline": "050bc7e6c356d2d1",
        "train_batch": "5a356716fc3336d5cf582ada60da6ea0",
        "test_batch": "878b99acf9b9980ccb9cb8229f3a3220",
        "num_bands": 20
    },
    "random_pca": {
        "train": "4152d0634922fa04",
        "val": "c3785047fae51547",
        "test": "014912192dcd190a",
        "num_bands": 5
    },
    "folds": {
        "train": "668ac94d84944c02",
        "val": "1f9883082caabbc7",
        "test": "516d6ea7faf20400",
        "pipeline": "448aefbdbe53e3e3",
        "train_batch": "6bfc5bae1db08e429f1d0bf87d910f91",
        "test_batch": "f8fd545aaab0e76774ac129e0d5fbdf3",
        "num_bands": 16
    }
}

#: ``hsi train --scene synthetic --scene-options height=48 width=48 bands=20 seed=1 --model svm --seed 3 --patch-size 5``
SVM_CONFUSION_SHA256 = "f8e764017eb5f40c"
SVM_SCORES = (0.26641651031894936, 0.28825312483651216, 0.223055242810382)


def _sha(array) -> str:
    return hashlib.sha256(np.ascontiguousarray(np.asarray(array)).tobytes()).hexdigest()[:16]


def _digests(arguments: dict) -> dict:
    dm = HSIDataModule(**arguments)
    dm.prepare_data()
    dm.setup("fit")
    dm.setup("test")
    split = dm.split
    out = {"train": _sha(split.train), "val": _sha(split.val), "test": _sha(split.test),
           "pipeline": hashlib.sha256(json.dumps(dm.pipeline.to_state(), sort_keys=True).encode()).hexdigest()[:16],
           "num_bands": dm.num_bands}
    loader = dm.train_dataloader()
    loader.set_epoch(0)
    patches, labels = next(iter(loader))
    out["train_batch"] = _sha(patches.contiguous().numpy()) + _sha(labels.numpy())
    patches, labels = next(iter(dm.test_dataloader()))
    out["test_batch"] = _sha(patches.contiguous().numpy()) + _sha(labels.numpy())
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_single_scene_split_pipeline_and_batches_as_stored(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = _digests(CASES[case])
    assert {k: found[k] for k in STORED[case]} == STORED[case]


def test_single_scene_svm_metrics_as_stored(tmp_path):
    import hsi.cli as cli

    argv = ["train", "--scene", "synthetic", "--scene-options", "height=48", "width=48", "bands=20", "seed=1",
            "--model", "svm", "--seed", "3", "--patch-size", "5", "--out", str(tmp_path / "run"), "--no-progress"]
    assert cli.main(argv) in (0, None)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert hashlib.sha256(json.dumps(metrics["confusion"]).encode()).hexdigest()[:16] == SVM_CONFUSION_SHA256
    assert (metrics["oa"], metrics["aa"], metrics["kappa"]) == pytest.approx(SVM_SCORES, rel=1e-12)
    assert "scenes" not in metrics and metrics["split"]["method"] == "block"
