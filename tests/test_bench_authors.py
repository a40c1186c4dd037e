"""bench_authors: its re-implementations of the authors' code compute hsi's models on the same weights."""

from __future__ import annotations

import json

import pytest
import torch

from tests.test_bench_json import _module


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """The benchmark sets the thread count; restore it after."""


@pytest.mark.parametrize(("name", "scene_bands", "tokens"), [
    ("ssftt", 40, (4, 1, 30, 13, 13)),  # the recommended PCA 30 of 40 bands, the authors' 5-D volumes
    ("spectralformer", 12, (4, 12, 3 * 7 * 7)),  # raw bands, demo.py's band tokens
    ("spectralformer_pixel", 12, (4, 12, 3)),
])
def test_authors_model_has_hsis_parameters_and_logits(name, scene_bands, tokens):
    bench = _module("bench_authors")
    pair = bench.build_pair(name, scene_bands, batch=4)
    hsi_net, authors = pair["hsi"][0], pair["authors"][0]
    assert tuple(pair["authors"][1].shape) == tokens
    assert bench.trainable(hsi_net) == bench.trainable(authors)
    assert bench.max_abs_diff(pair) < 1e-5
    with torch.no_grad():  # a weight the authors' model reads differently would show: the check is real
        next(authors.parameters()).mul_(1.5)
    assert bench.max_abs_diff(pair) > 1e-4


def test_band_tokens_are_demo_pys_order():
    bench = _module("bench_authors")
    x = torch.arange(2 * 5 * 2 * 2, dtype=torch.float32).view(2, 5, 2, 2)
    tokens = bench.band_tokens(x, 5)  # bands b-1, b-2, b, b+1, b+2 (wrapping), 4 values each
    assert tokens.shape == (2, 5, 20)
    assert torch.equal(tokens[:, 0].view(2, 5, 4), x[:, [4, 3, 0, 1, 2]].flatten(2))


def test_json_rows_carry_both_times_and_their_ratio(capsys):
    bench = _module("bench_authors")
    bench.main(["--models", "ssftt", "--scene-bands", "8", "--batch", "4", "--steps", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    (row,) = out["rows"]
    assert row["model"] == "ssftt" and row["bands"] == 8 and row["patch"] == 13 and row["steps"] == 1
    assert row["params_hsi"] == row["params_authors"] and row["max_abs_diff"] < 1e-5
    assert row["ratio"] == pytest.approx(row["authors_ms"] / row["hsi_ms"], rel=1e-3)
    assert out["machine"]["cores"] >= 1
