"""``precision`` of inference: bf16-mixed autocasts the forward passes (also on the CPU), gives the float32 map on
nearly every pixel, and is recorded in inference.json; 16-mixed on the CPU is refused before any work."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from hsi.errors import OptionError
from hsi.infer import InferOptions, infer_scene, load_checkpoint
from hsi.infer.predict import TilePredictor

FAST = {"progress": False, "accelerator": "cpu", "probabilities": True}


@pytest.mark.filterwarnings("ignore::hsi.errors.AssumedBandsWarning")  # the scene's own array, without wavelengths
@pytest.mark.parametrize("fixture", ["cnn_ckpt", "fcn_ckpt"])  # windows of a patch-centre model; a dense model
def test_bf16_mixed_map_agrees_with_float32_and_is_recorded(fixture, request, scene, tmp_path):
    model = load_checkpoint(request.getfixturevalue(fixture))
    cube = scene.cube.data
    # both written (probabilities.npy is float16 either way): they differ by more than its rounding
    full = infer_scene(model, cube, tile=16, out=tmp_path / "full", format=("npy",), **FAST)
    half = infer_scene(model, cube, tile=16, precision="bf16-mixed", out=tmp_path / "map", format=("npy",), **FAST)
    assert np.isfinite(half.probabilities).all()
    assert not np.array_equal(half.probabilities, full.probabilities)  # the passes did run in bfloat16
    assert np.abs(half.probabilities - full.probabilities).max() < 0.1
    assert (half.labels == full.labels).mean() >= 0.95
    assert json.loads((tmp_path / "map" / "inference.json").read_text())["options"]["precision"] == "bf16-mixed"
    assert json.loads((tmp_path / "full" / "inference.json").read_text())["options"]["precision"] == "32-true"


def test_the_predictor_autocasts_to_bfloat16_on_the_cpu():
    seen = []
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 3 * 4, 5))
    net.register_forward_hook(lambda module, args, out: seen.append(out.dtype))
    net.num_classes = 5
    block = np.random.default_rng(0).normal(size=(6, 6, 4)).astype(np.float32)
    probs = TilePredictor(net, dense=False, halo=1, patch_size=3, device="cpu", precision="bf16-mixed")(block)
    assert seen and set(seen) == {torch.bfloat16} and probs.dtype == np.float32
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-5)


def test_16_mixed_on_the_cpu_is_refused_naming_the_option(cnn_ckpt, scene):
    with pytest.raises(OptionError, match="precision: '16-mixed': 32-true or bf16-mixed"):
        infer_scene(cnn_ckpt, scene.cube.data, precision="16-mixed", **FAST)


def test_16_mixed_with_the_cpu_named_is_refused_by_the_options_themselves():
    """What ``hsi infer --accelerator cpu --precision 16-mixed`` checks before importing torch."""
    with pytest.raises(OptionError, match="precision: '16-mixed': 32-true or bf16-mixed with accelerator='cpu'"):
        InferOptions(accelerator="cpu", precision="16-mixed")
    assert InferOptions(accelerator="cuda", precision="16-mixed").precision == "16-mixed"
