"""The benchmark scripts' JSON: machine facts, and the loader benchmark running against today's DataModule."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _module(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # the scripts import their _helpers as siblings
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_machine_facts_name_the_machine_and_software():
    facts = _module("_machine").machine_facts()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", facts["date"])
    assert facts["cores"] >= 1 and facts["cpu"] and facts["command"].startswith("python ")
    import torch

    assert facts["torch"] == torch.__version__ and facts["gpu"] is None


def test_loader_rates_run_on_the_datamodule(tmp_path):
    """bench_loader's measurements on a tiny scene (it read a DataModule attribute that no longer existed)."""
    from hsi.data import HSIDataModule

    bench = _module("bench_loader")

    def make(**kw):
        base = dict(scene="synthetic", scene_options={"height": 40, "width": 40, "bands": 6, "seed": 0},
                    patch_size=bench.PATCH, batch_size=16, num_workers=0, cache_dir=str(tmp_path), block_size=8)
        return HSIDataModule(**{**base, **kw})

    make().prepare_data()
    res = bench._rates(make, str(tmp_path), 1)
    assert res["n_patches"] > 0 and res["bands"] == 6
    for key in ("train_loader_b64", "per_item_augmented_b64", "memcpy_b256", "no_augmentation", "per_item_plain"):
        assert res[key] > 0, key
    assert res["train_loader_vs_per_item_b64"] == pytest.approx(
        res["train_loader_b64"] / res["per_item_augmented_b64"])


def test_calibration_json_carries_seeds_means_and_machine(capsys):
    bench = _module("calibrate_synthetic")
    bench.main(["--seeds", "0", "1", "--size", "48", "--max-train", "200", "--windows", "3", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert [r["seed"] for r in out["rows"]] == [0, 1]
    assert set(out["mean"]) == {"pixel", "mean3", "pixel+mean3"}
    assert out["mean"]["pixel"] == pytest.approx(sum(r["pixel"] for r in out["rows"]) / 2)
    assert out["machine"]["cores"] >= 1
