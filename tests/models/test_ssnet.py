"""SSNet (the default): centre read-out, dense equivalence, receptive field, stem skip; registry advice."""

from __future__ import annotations

import pytest
import torch

from hsi.models import (
    DEFAULT_MODEL,
    SSNet,
    build_model,
    get_model_class,
    list_models,
    recommended_pca,
)

C, K = 12, 4


def _model(**options: object) -> SSNet:
    torch.manual_seed(0)
    return build_model("ssnet", C, K, 9, **options).eval()


def test_default_is_registered_and_is_ssnet():
    assert DEFAULT_MODEL in list_models()
    assert get_model_class(DEFAULT_MODEL) is SSNet


def test_forward_is_the_centre_of_forward_dense():
    model = _model()
    x = torch.randn(2, C, 9, 9)
    with torch.no_grad():
        dense = model.forward_dense(x)
        assert dense.shape == (2, K, 9, 9)
        torch.testing.assert_close(model(x), dense[:, :, 4, 4])


def test_output_ignores_pixels_beyond_the_receptive_radius_only():
    model = _model(num_blocks=2)
    assert model.receptive_radius == 2
    x = torch.randn(1, C, 9, 9)
    far = x.clone()
    far[:, :, 0, :] += 5.0  # row 0 is 4 rows from the centre, beyond r = 2
    near = x.clone()
    near[:, :, 2, 4] += 5.0  # 2 rows from the centre, inside r
    with torch.no_grad():
        torch.testing.assert_close(model(far), model(x))
        assert not torch.allclose(model(near), model(x))


def test_head_sees_the_centre_spectrum_even_without_context():
    model = _model(num_blocks=0)
    x = torch.randn(1, C, 9, 9)
    shuffled = x.clone()
    shuffled[:, :, 0:4] = torch.randn(1, C, 4, 9)  # every pixel but the centre row/col changed
    shuffled[:, :, 5:] = torch.randn(1, C, 4, 9)
    with torch.no_grad():
        torch.testing.assert_close(model(shuffled), model(x))


@pytest.mark.parametrize(("option", "value"), [("width", 0), ("spectral_layers", 0), ("num_blocks", -1)])
def test_bad_sizes_name_the_argument(option, value):
    with pytest.raises(ValueError, match=option):
        build_model("ssnet", C, K, 9, **{option: value})


def test_recommended_pca_only_for_3d_models_on_many_bands():
    assert recommended_pca("cnn3d", 200) == 30 and recommended_pca("hybridsn", 103) == 30
    assert recommended_pca("hybridsn", 30) is None  # already few bands
    for name in ("ssnet", "fcn", "cnn2d", "spectral1d"):
        assert recommended_pca(name, 200) is None


def test_cnn2d_head_option_is_checked():
    with pytest.raises(ValueError, match="head must be 'gap' or 'centre'"):
        build_model("cnn2d", C, K, 9, head="max")


def test_patches_smaller_than_the_receptive_field_fall_back_to_padding():
    model = _model(num_blocks=3)
    x = torch.randn(2, C, 3, 3)
    with torch.no_grad():
        torch.testing.assert_close(model(x), model.forward_dense(x)[:, :, 1, 1])


def test_context_dropout_acts_in_training_only():
    model = _model(context_dropout=0.5)
    x = torch.randn(256, C, 9, 9)
    with torch.no_grad():
        torch.testing.assert_close(model(x), model(x))  # eval: deterministic, nothing dropped
        model.train()
        torch.manual_seed(1)
        first = model(x)
        torch.manual_seed(2)
        second = model(x)
    # A sample's output changes between draws exactly when its keep/drop draw changes (p = 1/2).
    differs = (first - second).abs().amax(dim=1) > 1e-6
    assert 0.35 < differs.float().mean() < 0.65
