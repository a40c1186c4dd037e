"""The shared first layer of patch-centre windows (``hsi.infer.stem``) gives the per-window forward pass's outputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import hsi.infer.predict as predict
from hsi.infer.predict import TilePredictor
from hsi.infer.stem import shared_stem
from hsi.models import CNN2D, PatchClassifier, WindowStem

BANDS, CLASSES = 12, 4


def _randomize_norms(net: nn.Module) -> nn.Module:
    """Batch-norm statistics and affine terms away from the identity, so that they count."""
    gen = torch.Generator().manual_seed(5)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=gen))
            m.running_var.copy_(0.5 + torch.rand(m.num_features, generator=gen))
            m.weight.data.copy_(torch.randn(m.num_features, generator=gen))
            m.bias.data.copy_(torch.randn(m.num_features, generator=gen))
    return net.eval()


def _cnn2d(patch_size: int, **kwargs) -> CNN2D:
    torch.manual_seed(0)
    return _randomize_norms(CNN2D(BANDS, CLASSES, patch_size, channels=(8, 6), **kwargs))


class _BiasStem(PatchClassifier):
    """A first convolution with a bias and a LeakyReLU, no batch norm; ``stride`` and ``padding`` configurable."""

    def __init__(self, patch_size: int, stride: int = 1, padding: int | None = None, pointwise: nn.Module | None = None):
        super().__init__(BANDS, CLASSES, patch_size)
        self.conv = nn.Conv2d(BANDS, 5, 3, stride=stride, padding=1 if padding is None else padding)
        self.pointwise = pointwise if pointwise is not None else nn.LeakyReLU(0.1)
        self.head = nn.Sequential(nn.Flatten(), nn.LazyLinear(CLASSES))
        self.head(torch.zeros(1, 5 * ((patch_size + 2 * self.conv.padding[0] - 3) // stride + 1) ** 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pointwise(self.conv(x)))

    def window_stem(self) -> WindowStem:
        return WindowStem(self.conv, self.pointwise, lambda x: self.head(x))


def _block(patch_size: int, height: int = 21, width: int = 17) -> np.ndarray:
    h = patch_size // 2
    return np.random.default_rng(2).normal(size=(height + 2 * h, width + 2 * h, BANDS)).astype(np.float32)


def _predictors(net: nn.Module, patch_size: int, batch_size: int = 32) -> tuple[TilePredictor, TilePredictor]:
    """A predictor with the shared stem, and one that runs every window through the whole network."""
    shared = TilePredictor(net, dense=False, halo=patch_size // 2, patch_size=patch_size, device="cpu",
                           batch_size=batch_size)
    plain = TilePredictor(net, dense=False, halo=patch_size // 2, patch_size=patch_size, device="cpu",
                          batch_size=batch_size)
    plain.stem, plain._window_forward = None, plain.net
    return shared, plain


CASES = [(11, {}), (5, {"head": "centre"}), (7, {"kernel_size": 5}), (4, {}), (3, {"kernel_size": 5}), (1, {})]


@pytest.mark.parametrize(("patch_size", "kwargs"), CASES, ids=[f"P{p}-{k}" for p, k in CASES])
@pytest.mark.parametrize("strip_bytes", [16 << 20, 1], ids=["one-strip", "strips-of-one-row"])
def test_shared_stem_gives_the_per_window_forward(patch_size, kwargs, strip_bytes, monkeypatch):
    monkeypatch.setattr(predict, "STEM_STRIP_BYTES", strip_bytes)
    net = _cnn2d(patch_size, **kwargs)
    shared, plain = _predictors(net, patch_size)
    assert shared.stem is not None
    block = _block(patch_size)
    nodata = np.random.default_rng(4).random((21, 17)) < 0.25
    nodata[5] = True  # a whole row of no-data: a strip may hold no window at all
    np.testing.assert_allclose(shared(block, nodata), plain(block, nodata), rtol=0, atol=2e-6)
    labels, confidence = shared.maps(block, nodata)
    plain_labels, plain_confidence = plain.maps(block, nodata)
    np.testing.assert_array_equal(labels, plain_labels)
    np.testing.assert_allclose(confidence, plain_confidence, rtol=0, atol=2e-6)
    assert (labels[nodata] == 0).all() and (labels[~nodata] > 0).all()


def test_a_convolution_bias_is_added_once():
    net = _BiasStem(7).eval()
    shared, plain = _predictors(net, 7)
    assert shared.stem is not None and shared.stem.bias is not None
    block = _block(7)
    np.testing.assert_allclose(shared(block), plain(block), rtol=0, atol=2e-6)


@pytest.mark.parametrize("net", [
    _BiasStem(7, stride=2),
    _BiasStem(7, padding=0),
    _BiasStem(7, pointwise=nn.MaxPool2d(3, 1, 1)),
], ids=["stride-2", "no-padding", "not-per-pixel"])
def test_a_first_layer_that_is_not_a_plain_same_convolution_is_not_shared(net):
    assert shared_stem(net.eval(), 7) is None


def test_batch_norm_in_training_mode_is_not_shared():
    net = _cnn2d(5).train()
    assert shared_stem(net, 5) is None


def test_no_shared_stem_under_test_time_augmentation_or_for_models_without_one():
    net = _cnn2d(5)
    assert TilePredictor(net, dense=False, halo=2, patch_size=5, device="cpu", tta=True).stem is None
    assert TilePredictor(net, dense=False, halo=2, patch_size=5, device="cpu").stem is not None
    from hsi.models import build_model

    assert TilePredictor(build_model("spectral1d", num_bands=BANDS, num_classes=CLASSES, patch_size=1),
                         dense=False, halo=0, patch_size=1, device="cpu").stem is None
