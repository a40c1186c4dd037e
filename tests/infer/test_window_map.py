"""All windows of a block in one pass (``PatchClassifier.window_map``) give the per-window forward pass's outputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hsi.infer.predict as predict
from hsi.infer.predict import TilePredictor
from hsi.models import CNN2D, CNN3D, FCN, HybridSN

BANDS, CLASSES = 16, 5
TILE = (19, 13)


def _net(cls: type, patch_size: int) -> torch.nn.Module:
    torch.manual_seed(0)
    return cls(BANDS, CLASSES, patch_size).eval()


def _block(patch_size: int) -> np.ndarray:
    h = patch_size // 2
    return np.random.default_rng(2).normal(size=(TILE[0] + 2 * h, TILE[1] + 2 * h, BANDS)).astype(np.float32)


def _predictors(net: torch.nn.Module, patch_size: int, tta: bool = False) -> tuple[TilePredictor, TilePredictor]:
    """A predictor that runs the window map, and one that runs every window through the network."""
    whole = TilePredictor(net, dense=False, halo=patch_size // 2, patch_size=patch_size, device="cpu", tta=tta)
    plain = TilePredictor(net, dense=False, halo=patch_size // 2, patch_size=patch_size, device="cpu", tta=tta)
    plain.window_map = None
    return whole, plain


CASES = [(HybridSN, 9), (HybridSN, 11), (HybridSN, 10), (CNN3D, 5), (CNN3D, 7), (CNN3D, 6)]
IDS = [f"{cls.__name__}-P{p}" for cls, p in CASES]


@pytest.mark.parametrize(("cls", "patch_size"), CASES, ids=IDS)
def test_the_window_map_is_each_window_through_the_network(cls, patch_size):
    """At the model: the logits at (i, j) are those of the window whose top-left pixel is (i, j)."""
    net = _net(cls, patch_size)
    block = torch.from_numpy(_block(patch_size)).permute(2, 0, 1)[None]
    with torch.no_grad():
        logits = net.window_map().forward(block)[0]
        rows, cols = logits.shape[1:]
        windows = torch.stack([block[0, :, i : i + patch_size, j : j + patch_size]
                               for i in range(rows) for j in range(cols)])
        expected = net(windows).T.reshape(CLASSES, rows, cols)
    assert (rows, cols) == (block.shape[2] - patch_size + 1, block.shape[3] - patch_size + 1)
    torch.testing.assert_close(logits, expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize(("cls", "patch_size"), CASES, ids=IDS)
@pytest.mark.parametrize("strip_bytes", [64 << 20, 1], ids=["one-strip", "strips-of-one-row"])
def test_tile_predictor_with_the_window_map_gives_the_per_window_outputs(cls, patch_size, strip_bytes, monkeypatch):
    monkeypatch.setattr(predict, "WINDOW_MAP_STRIP_BYTES", strip_bytes)
    whole, plain = _predictors(_net(cls, patch_size), patch_size)
    assert whole.window_map is not None and whole.whole_blocks and whole.stem is None
    block = _block(patch_size)
    nodata = np.random.default_rng(4).random(TILE) < 0.2
    probs = whole(block, nodata)
    assert probs.shape == (*TILE, CLASSES)
    np.testing.assert_allclose(probs, plain(block, nodata), rtol=0, atol=2e-6)
    assert (probs[nodata] == 0).all() and (probs[~nodata].sum(axis=-1) > 0.99).all()
    labels, confidence = whole.maps(block, nodata)
    plain_labels, plain_confidence = plain.maps(block, nodata)
    np.testing.assert_array_equal(labels, plain_labels)
    np.testing.assert_allclose(confidence, plain_confidence, rtol=0, atol=2e-6)
    assert (labels[nodata] == 0).all() and (labels[~nodata] >= 1).all()


@pytest.mark.parametrize(("cls", "patch_size"), [(HybridSN, 9), (CNN3D, 5)], ids=["HybridSN-P9", "CNN3D-P5"])
def test_test_time_augmentation_flips_the_block_as_it_flips_each_window(cls, patch_size):
    """With an odd patch the block's flips are the windows' flips, at the mirrored pixel."""
    whole, plain = _predictors(_net(cls, patch_size), patch_size, tta=True)
    assert whole.window_map is not None
    block = _block(patch_size)
    np.testing.assert_allclose(whole(block), plain(block), rtol=0, atol=2e-6)


def test_models_and_settings_without_a_window_map():
    assert CNN3D(BANDS, CLASSES, 3).eval().window_map() is None  # its 3 x 3 convolutions pad each window
    assert HybridSN(BANDS, CLASSES, 9).train().window_map() is None  # dropout differs window by window
    assert CNN2D(BANDS, CLASSES, 7).eval().window_map() is None  # padded: the shared stem serves it instead
    even = TilePredictor(_net(HybridSN, 10), dense=False, halo=5, patch_size=10, device="cpu", tta=True)
    assert even.window_map is None  # an even block does not flip onto its own windows
    dense = TilePredictor(FCN(BANDS, CLASSES, 7).eval(), dense=True, halo=3, patch_size=7, device="cpu")
    assert dense.window_map is None and dense.whole_blocks


def test_infer_scene_labels_are_the_per_window_ones(monkeypatch):
    """Through the whole pipeline (tiles, margins at the scene's edges, maps), with and without the window map."""
    from hsi.infer import InferenceModel, infer_scene
    from hsi.preprocess import make_pipeline

    cube = np.random.default_rng(6).random((37, 29, BANDS), dtype=np.float32)
    model = InferenceModel(net=_net(HybridSN, 9), pipeline=make_pipeline(scaling="minmax").fit(cube), patch_size=9,
                           padding="reflect", class_names=[f"c{i}" for i in range(CLASSES)],
                           palette=np.zeros((CLASSES + 1, 3), np.uint8), label_values=list(range(1, CLASSES + 1)),
                           wavelengths=None, num_bands_in=BANDS, source="test")
    whole = infer_scene(model, cube, tile=16, accelerator="cpu", progress=False)
    monkeypatch.setattr(predict, "_window_map", lambda net: None)
    plain = infer_scene(model, cube, tile=16, accelerator="cpu", progress=False)
    np.testing.assert_array_equal(whole.labels, plain.labels)
    np.testing.assert_allclose(whole.confidence, plain.confidence, rtol=0, atol=2e-6)
