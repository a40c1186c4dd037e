"""The default model must classify the centre pixel, not the bag of pixels around it.

Scene: every pixel's class is drawn independently (salt and pepper), and its spectrum is
its class's prototype plus noise, so a per-pixel classifier separates the classes
perfectly while the neighbourhood says nothing about the centre. A model whose prediction
ignores which pixel is the centre (global average pooling over the window) is near chance.
"""

from __future__ import annotations

import pytest
import torch

from hsi.models import DEFAULT_MODEL, build_model

BANDS, CLASSES, PATCH = 8, 3, 7


def _salt_and_pepper(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    prototypes = torch.eye(CLASSES, BANDS) + 0.2  # (K, C), one bright band per class
    classes = torch.randint(0, CLASSES, (n, PATCH, PATCH), generator=gen)
    x = prototypes[classes].permute(0, 3, 1, 2)  # (n, C, P, P)
    x = x + 0.05 * torch.randn(x.shape, generator=gen)
    return x.contiguous(), classes[:, PATCH // 2, PATCH // 2]


def _train_and_score(name: str, **options: object) -> float:
    torch.manual_seed(0)
    model = build_model(name, BANDS, CLASSES, PATCH, **options)
    x, y = _salt_and_pepper(512, seed=1)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for step in range(120):
        batch = slice((step % 8) * 64, (step % 8 + 1) * 64)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x[batch]), y[batch]).backward()
        opt.step()
    model.eval()
    x_test, y_test = _salt_and_pepper(512, seed=2)
    with torch.no_grad():
        return float((model(x_test).argmax(1) == y_test).float().mean())


def test_default_model_reads_the_centre_pixel():
    assert _train_and_score(DEFAULT_MODEL) >= 0.97


@pytest.mark.parametrize("head, centre_aware", [("centre", True), ("gap", False)])
def test_the_check_tells_a_pooled_head_from_a_centre_head(head, centre_aware):
    accuracy = _train_and_score("cnn2d", channels=(16, 16), head=head)
    if centre_aware:
        assert accuracy >= 0.97
    else:
        assert accuracy < 0.7  # the same scene defeats global average pooling
