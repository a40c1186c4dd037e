"""SSFTT and SpectralFormer as their authors built them: parameter counts, shapes, token layout, fusion."""

from __future__ import annotations

import pytest
import torch

from hsi.errors import ModelSizeError, OptionError, ShapeMismatchError
from hsi.models import SSFTT, SpectralFormer, SpectralFormerPixel, build_model


def trainable(net: torch.nn.Module) -> int:
    return sum(p.numel() for p in net.parameters() if p.requires_grad)


# Counts of the authors' implementations at the paper's Indian Pines settings (each equal to the weights they
# released): SSFTT, zgr6010/HSI_SSFTT cls_SSFTT_IP/SSFTTnet.py (PCA 30, patch 13, 16 classes); SpectralFormer,
# danfenghong/IEEE_TGRS_SpectralFormer vit_pytorch.py with demo.py's settings (200 bands, dim 64, depth 5, heads 4,
# mlp_dim 8, band_patches 3, mode CAF, 16 classes), patches 7 (patch-wise) and 1 (pixel-wise).
@pytest.mark.parametrize(("name", "bands", "patch", "count"), [
    ("ssftt", 30, 13, 153_224),
    ("spectralformer", 200, 7, 355_577),
    ("spectralformer_pixel", 200, 1, 346_361),
])
def test_parameter_counts_and_shapes_equal_the_authors_at_the_paper_settings(name, bands, patch, count):
    torch.manual_seed(0)
    net = build_model(name, bands, 16, patch).eval()
    assert trainable(net) == count
    with torch.no_grad():
        logits = net(torch.randn(2, bands, patch, patch))
    assert logits.shape == (2, 16) and logits.dtype == torch.float32


def test_ssftt_layers_are_the_authors():
    net = SSFTT(30, 16, 13)
    assert net.conv2d[0].in_channels == 8 * 28  # 8 spectral maps of 30 - 2 bands
    assert tuple(net.token_wa.shape) == (1, 4, 64) and tuple(net.token_wv.shape) == (1, 64, 64)
    assert tuple(net.pos_embedding.shape) == (1, 5, 64)  # 4 tokens and the class token
    layer = net.layers[0].attention
    assert layer.qkv.bias is not None and layer.scale == pytest.approx(64 ** -0.5)  # the authors' dim ** -0.5
    assert len(net.layers) == 1


def test_ssftt_takes_any_patch_from_5_and_refuses_smaller():
    net = SSFTT(12, 4, 13).eval()
    with torch.no_grad():
        assert net(torch.randn(1, 12, 5, 5)).shape == (1, 4)
        assert net(torch.randn(1, 12, 9, 9)).shape == (1, 4)
    with pytest.raises(ModelSizeError, match="patch_size must be >= 5"):
        SSFTT(12, 4, 3)
    with pytest.raises(ModelSizeError, match="num_bands must be >= 3"):
        SSFTT(2, 4, 13)


def test_a_band_token_holds_the_band_and_its_neighbours_in_the_authors_order_wrapping_around():
    net = SpectralFormer(6, 3, 3, band_patches=5)
    assert net.band_groups[0].tolist() == [5, 4, 0, 1, 2]  # b-1, b-2, b, b+1, b+2 (indices wrap around)
    assert net.band_groups[3].tolist() == [2, 1, 3, 4, 5]
    x = torch.arange(2 * 6 * 9, dtype=torch.float32).view(2, 6, 3, 3)
    with torch.no_grad():
        net.embed.weight.zero_()
        net.embed.bias.zero_()
        net.embed.weight[0, 9:18] = 1.0  # the token's second group of 3 x 3 values: band b - 2
        tokens = net.band_tokens(x)
    assert torch.allclose(tokens[:, 2, 0], x[:, 0].flatten(1).sum(1))
    assert torch.allclose(tokens[:, 0, 0], x[:, 4].flatten(1).sum(1))


def test_cross_layer_fusion_joins_each_layer_from_the_third_to_the_input_two_layers_before():
    caf = SpectralFormer(20, 4, 3)
    assert len(caf.fuse) == 3 and caf.fuse[0].in_channels == 21 and caf.fuse[0].kernel_size == (1, 2)
    plain = SpectralFormer(20, 4, 3, fusion="vit")
    assert len(plain.fuse) == 0
    assert trainable(caf) - trainable(plain) == 3 * (21 * 21 * 2 + 21)
    with pytest.raises(ModelSizeError, match="band_patches must be odd"):
        SpectralFormer(20, 4, 3, band_patches=2)
    with pytest.raises(OptionError, match="fusion: 'none': 'caf' or 'vit'"):
        SpectralFormer(20, 4, 3, fusion="none")


def test_patchwise_needs_its_own_patch_size_and_pixelwise_reads_only_the_centre():
    net = SpectralFormer(10, 3, 5).eval()
    with pytest.raises(ShapeMismatchError, match="patch_size=5"):
        net(torch.randn(1, 10, 7, 7))
    pixel = SpectralFormerPixel(10, 3, 7).eval()
    x = torch.randn(2, 10, 7, 7)
    y = x.clone()
    y[:, :, 0, :] += 5.0  # every pixel but the centre changed
    y[:, :, :, 6] -= 3.0
    with torch.no_grad():
        assert torch.equal(pixel(x), pixel(y))
        assert torch.equal(pixel(x), pixel(x[:, :, 3:4, 3:4]))
    assert SpectralFormerPixel.RECOMMENDED_PATCH_SIZE == 1 and SpectralFormer.RECOMMENDED_PATCH_SIZE == 7
    assert SSFTT.RECOMMENDED_PATCH_SIZE == 13 and SSFTT.RECOMMENDED_PCA == 30
