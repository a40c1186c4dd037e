"""SSFTT's fast path computes what its layers compute in the authors' order, on the same weights, without copies."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hsi.models import SSFTT, channels_last_weights

# The parameters and buffers of SSFTT's state_dict since it was added: checkpoints saved by any release load.
STATE_KEYS = [
    "token_wa", "token_wv", "pos_embedding", "cls_token",
    "conv3d.0.weight", "conv3d.0.bias", "conv3d.1.weight", "conv3d.1.bias", "conv3d.1.running_mean",
    "conv3d.1.running_var", "conv3d.1.num_batches_tracked",
    "conv2d.0.weight", "conv2d.0.bias", "conv2d.1.weight", "conv2d.1.bias", "conv2d.1.running_mean",
    "conv2d.1.running_var", "conv2d.1.num_batches_tracked",
    "layers.0.norm1.weight", "layers.0.norm1.bias", "layers.0.attention.qkv.weight", "layers.0.attention.qkv.bias",
    "layers.0.attention.out.weight", "layers.0.attention.out.bias", "layers.0.norm2.weight", "layers.0.norm2.bias",
    "layers.0.mlp.0.weight", "layers.0.mlp.0.bias", "layers.0.mlp.3.weight", "layers.0.mlp.3.bias",
    "classifier.weight", "classifier.bias",
]


def layers_in_the_authors_order(net: SSFTT, x: torch.Tensor) -> torch.Tensor:
    """SSFTT's forward as it was first written (and as the authors' code runs it), through the same modules."""
    features = net.conv3d(x.unsqueeze(1)).flatten(1, 2)  # (B, 8 (C-2), P-2, P-2): map-major channels
    features = net.conv2d(features).flatten(2).transpose(1, 2)
    weights = torch.softmax(features @ net.token_wa[0].T, dim=1)
    tokens = weights.transpose(1, 2) @ (features @ net.token_wv[0])
    tokens = torch.cat([net.cls_token.expand(len(x), -1, -1), tokens], dim=1) + net.pos_embedding
    return net.classifier(net.layers(net.emb_dropout(tokens))[:, 0])


def _pair(num_bands: int, patch: int) -> tuple[SSFTT, SSFTT]:
    """The model as training builds it (2-D weights channels-last) and a plain copy from the same state_dict."""
    torch.manual_seed(0)
    net = channels_last_weights(SSFTT(num_bands, 5, patch))
    old = SSFTT(num_bands, 5, patch)
    old.load_state_dict(net.state_dict())
    return net, old


def test_state_dict_names_and_shapes_are_unchanged():
    net = SSFTT(30, 16, 13)
    state = net.state_dict()
    assert list(state) == STATE_KEYS
    assert tuple(state["conv3d.0.weight"].shape) == (8, 1, 3, 3, 3)
    assert tuple(state["conv2d.0.weight"].shape) == (64, 8 * 28, 3, 3)  # map-major input channels, as the authors'


@pytest.mark.parametrize(("num_bands", "patch"), [(30, 13), (3, 5), (12, 8)])
@pytest.mark.parametrize("memory_format", [torch.channels_last, torch.contiguous_format])
def test_eval_logits_equal_the_layers_in_the_authors_order(num_bands, patch, memory_format):
    net, old = _pair(num_bands, patch)
    x = torch.randn(6, num_bands, patch, patch).contiguous(memory_format=memory_format)
    with torch.no_grad():
        fast, plain = net.eval()(x), layers_in_the_authors_order(old.eval(), x)
    assert torch.allclose(fast, plain, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(fast, plain.roll(1, dims=0), rtol=1e-5, atol=1e-5)  # the rows differ: a real check


def test_training_step_equals_the_layers_in_the_authors_order():
    """Same loss, same gradient for every parameter, same batch-norm running statistics (dropout seeded alike)."""
    net, old = _pair(30, 13)
    x = torch.randn(8, 30, 13, 13).contiguous(memory_format=torch.channels_last)
    y = torch.arange(8) % 5
    torch.manual_seed(1)
    loss = F.cross_entropy(net.train()(x), y)
    torch.manual_seed(1)
    old_loss = F.cross_entropy(layers_in_the_authors_order(old.train(), x), y)
    loss.backward()
    old_loss.backward()
    assert loss.item() == pytest.approx(old_loss.item(), rel=1e-5)
    grads = dict(old.named_parameters())
    for name, p in net.named_parameters():
        ref = grads[name].grad
        # the convolutions' biases feed a batch norm: their true gradient is 0, what is left is rounding
        atol = 1e-6 if name.endswith(("conv3d.0.bias", "conv2d.0.bias")) else 1e-5 * float(ref.abs().max())
        assert torch.allclose(p.grad, ref, rtol=1e-4, atol=atol), name
    for name in ("conv3d.1.running_mean", "conv3d.1.running_var", "conv2d.1.running_var"):
        assert torch.allclose(net.state_dict()[name], old.state_dict()[name], rtol=1e-5, atol=1e-6), name


def test_a_checkpoint_of_the_plain_layout_loads_and_gives_the_same_logits():
    torch.manual_seed(3)
    saved = SSFTT(12, 4, 9)
    saved.conv3d[1].running_mean.uniform_(-0.5, 0.5)  # batch-norm statistics away from their start
    saved.conv2d[1].running_var.uniform_(0.5, 2.0)
    net = channels_last_weights(SSFTT(12, 4, 9))
    net.load_state_dict(saved.state_dict())
    x = torch.randn(5, 12, 9, 9)
    with torch.no_grad():
        assert torch.allclose(net.eval()(x), layers_in_the_authors_order(saved.eval(), x), rtol=1e-5, atol=1e-5)


def test_a_training_step_copies_no_activation_between_layouts():
    """The 3-D block's maps (B x 8 x (C-2) x (P-2)^2 values) are never copied: they reach the 2-D convolution, and
    its gradient comes back, in the one layout (the plain order copies them to channels-last and back)."""
    from torch.profiler import ProfilerActivity, profile

    def big_copies(model, forward) -> int:
        x = torch.randn(16, 30, 13, 13).contiguous(memory_format=torch.channels_last)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            forward(model.train(), x).sum().backward()
        maps = 16 * 8 * 28 * 11 * 11  # over 3x the weights' 64 x 224 x 9, which are copied (permuted) each step
        return sum(1 for e in prof.events() if e.name == "aten::copy_"
                   and any(s and torch.Size(s).numel() >= maps for s in e.input_shapes))

    net, _ = _pair(30, 13)
    assert big_copies(net, lambda m, x: m(x)) == 0
    assert big_copies(net, layers_in_the_authors_order) >= 1  # the same weights in the plain order: what it catches
