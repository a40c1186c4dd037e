"""The model registry: names, errors, keyword checking, registration."""

from __future__ import annotations

import numpy as np
import pytest
from torch import nn

from hsi.errors import HSIError
from hsi.models import (
    CNN2D,
    SSFTT,
    CNN3D,
    FCN,
    HybridSN,
    AnyBandNet,
    Spectral1DCNN,
    SpectralFormer,
    SpectralFormerPixel,
    SSNet,
    UnknownModelError,
    build_model,
    get_model_class,
    list_models,
    register_model,
    registry,
)


def test_names_map_to_classes_case_insensitively():
    expected = {
        "spectral1d": Spectral1DCNN,
        "cnn3d": CNN3D,
        "hybridsn": HybridSN,
        "cnn2d": CNN2D,
        "fcn": FCN,
        "ssnet": SSNet,
        "ssftt": SSFTT,
        "spectralformer": SpectralFormer,
        "spectralformer_pixel": SpectralFormerPixel,
        "anyband": AnyBandNet,
    }
    assert set(expected) <= set(list_models())  # a new model is checked by tests/models/test_all_models.py
    for name, cls in expected.items():
        assert get_model_class(name) is cls
        assert get_model_class(name.upper()) is cls
        assert type(build_model(name.upper(), 30, 3, 11)) is cls


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(UnknownModelError) as info:
        build_model("resnet", 30, 3, 11)
    assert isinstance(info.value, ValueError) and isinstance(info.value, HSIError)
    message = str(info.value)
    assert "'resnet'" in message
    for name in list_models():
        assert name in message


def test_unknown_hyperparameter_names_the_accepted_ones():
    expected = r"'lr': not an option of cnn2d \(options: channels, kernel_size, dropout"
    with pytest.raises(TypeError, match=expected):
        build_model("cnn2d", 30, 3, 11, lr=0.1)
    with pytest.raises(TypeError, match=r"'widht': not an option of fcn; did you mean 'width'\?"):
        build_model("fcn", 30, 3, 11, widht=8)


def test_hyperparameters_reach_the_model_and_accept_yaml_lists():
    model = build_model("cnn2d", 30, 3, 11, channels=[8, 16], kernel_size=5)
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    assert [c.out_channels for c in convs] == [8, 16]
    assert convs[0].kernel_size == (5, 5)
    hybrid = build_model("hybridsn", 15, 3, 9, dense_units=[32, 16], dropout=0.1)
    linears = [m for m in hybrid.modules() if isinstance(m, nn.Linear)]
    assert [lin.out_features for lin in linears] == [32, 16, 3]


def test_numpy_integer_sizes_are_accepted():
    model = build_model("cnn3d", np.int64(20), np.int32(4), np.int64(5))
    assert (model.num_bands, model.num_classes, model.patch_size) == (20, 4, 5)
    assert type(model.num_bands) is int


def test_register_model_adds_a_name_and_refuses_a_taken_one(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    @register_model("tiny")
    class Tiny(nn.Module):
        def __init__(self, num_bands: int, num_classes: int, patch_size: int, *, hidden: int = 4):
            super().__init__()
            self.net = nn.Linear(num_bands * patch_size**2, num_classes)
            self.hidden = hidden

    assert "tiny" in list_models()
    assert build_model("tiny", 3, 2, 5, hidden=7).hidden == 7
    with pytest.raises(ValueError, match=r"'cnn2d' is already registered"):
        register_model("cnn2d")(Tiny)
    register_model("tiny")(Tiny)  # re-registering the same class is harmless


def test_wavelength_models_are_the_registered_networks_that_read_band_wavelengths(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    assert "anyband" in registry.wavelength_models() and "ssnet" not in registry.wavelength_models()

    @register_model("tiny_reader")
    class TinyReader(nn.Module):
        takes_wavelengths = True

    assert "tiny_reader" in registry.wavelength_models()
    assert registry.wavelength_models() == sorted(registry.wavelength_models())


def test_build_error_says_why_a_shape_cannot_be_built_and_leaves_the_random_state():
    import torch

    torch.manual_seed(7)
    before = torch.get_rng_state()
    assert "num_bands" in registry.build_error("hybridsn", 12, 4, 25) and "13" in registry.build_error("hybridsn", 12, 4, 25)
    assert registry.build_error("hybridsn", 16, 4, 25) is None
    assert torch.equal(torch.get_rng_state(), before)  # a check does not move the seeded initialisation


@pytest.mark.parametrize(("model", "options", "message"), [
    ("ssftt", {"heads": 0}, "heads=0': SSFTT: heads must be >= 1; got 0"),
    ("ssftt", {"dim": 60, "heads": 8}, "dim=60, heads=8': SSFTT: dim must be a multiple of heads"),
    ("spectralformer", {"heads": 0}, "heads=0': SpectralFormer: heads must be"),
    ("spectralformer", {"head_dim": 0}, "head_dim=0': SpectralFormer: head_dim must be"),
])
def test_option_values_a_network_cannot_be_built_with_are_refused_before_any_data(model, options, message):
    from hsi.errors import OptionError

    with pytest.raises(OptionError, match="model_options: '" + message):
        registry.check_option_values(model, options)
    registry.check_option_values(model, {"depth": 2})  # a good value passes
    registry.check_option_values(model, {"nosuch": 1})  # unknown names are HSIClassifier's check, named there


def test_hsiclassifier_refuses_a_bad_option_value_before_the_data_shape_is_known():
    from hsi.errors import OptionError
    from hsi.training import HSIClassifier

    with pytest.raises(OptionError, match=r"model_options: 'heads=0': SSFTT: heads must be >= 1"):
        HSIClassifier(model="ssftt", model_options={"heads": 0})
