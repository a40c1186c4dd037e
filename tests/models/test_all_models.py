"""Contract tests run on every registry entry: shapes, gradients, learning, determinism."""

from __future__ import annotations

import inspect

import pytest
import torch
import torch.nn.functional as F

from hsi.errors import HSIError, ShapeMismatchError
from hsi.models import PatchClassifier, build_model, get_model_class, list_models

MODELS = list_models()
# (num_bands, patch_size) combos of the contract: PCA-like and raw-cube-like.
SHAPES = [(30, 11), (200, 9), (13, 9)]
NUM_CLASSES = 5


def test_registry_lists_every_architecture_module_once_by_name():
    """Each module of hsi/models that defines a network registers it (one file per architecture); the names are
    listed sorted, each once (the docs' model table follows them: tests/test_docs_lists.py)."""
    import pkgutil

    import hsi.models as package

    modules = {m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")}
    owners = {get_model_class(name).__module__.rpartition(".")[2] for name in MODELS}
    assert owners == modules - {"base", "registry"}
    assert MODELS == sorted(set(MODELS)) and len(MODELS) >= 10


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize(("num_bands", "patch_size"), SHAPES)
def test_forward_backward_shapes_and_finite_gradients(name, num_bands, patch_size):
    torch.manual_seed(0)
    model = build_model(name, num_bands, NUM_CLASSES, patch_size).train()
    x = torch.randn(3, num_bands, patch_size, patch_size)
    y = torch.tensor([0, 4, 2])

    logits = model(x)
    assert logits.shape == (3, NUM_CLASSES)
    assert logits.dtype == torch.float32
    F.cross_entropy(logits, y).backward()

    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    assert params
    for pname, p in params:
        assert p.grad is not None, f"{name}: parameter {pname} got no gradient"
        assert torch.isfinite(p.grad).all(), f"{name}: non-finite gradient in {pname}"
    assert any(p.grad.abs().sum() > 0 for _, p in params)


@pytest.mark.parametrize("name", MODELS)
def test_loss_decreases_on_a_separable_toy_problem(name, make_toy):
    num_bands, patch_size = 16, 9
    x, y = make_toy(num_bands, patch_size, batch=16)
    torch.manual_seed(0)
    model = build_model(name, num_bands, 2, patch_size)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def eval_loss() -> float:
        model.eval()
        with torch.no_grad():
            return F.cross_entropy(model(x), y).item()

    before = eval_loss()
    model.train()
    for _ in range(20):
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    after = eval_loss()
    assert after < 0.7 * before, f"{name}: eval loss {before:.3f} -> {after:.3f} after 20 steps"
    model.eval()
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    assert accuracy == 1.0


@pytest.mark.parametrize("name", MODELS)
def test_same_seed_gives_identical_parameters_and_outputs(name):
    x = torch.randn(2, 30, 11, 11)
    runs = []
    for _ in range(2):
        torch.manual_seed(123)
        model = build_model(name, 30, NUM_CLASSES, 11).eval()
        with torch.no_grad():
            runs.append((model.state_dict(), model(x)))
    (state_a, out_a), (state_b, out_b) = runs
    assert state_a.keys() == state_b.keys()
    for key in state_a:
        assert torch.equal(state_a[key], state_b[key]), key
    assert torch.equal(out_a, out_b)

    torch.manual_seed(124)
    other = build_model(name, 30, NUM_CLASSES, 11).state_dict()
    floats = [k for k in state_a if state_a[k].is_floating_point()]
    assert any(not torch.equal(state_a[k], other[k]) for k in floats)


@pytest.mark.parametrize("name", MODELS)
def test_batch_of_one_in_eval_and_two_in_train(name):
    torch.manual_seed(0)
    model = build_model(name, 30, NUM_CLASSES, 11)
    model.eval()
    with torch.no_grad():
        assert model(torch.randn(1, 30, 11, 11)).shape == (1, NUM_CLASSES)
    model.train()
    assert model(torch.randn(2, 30, 11, 11)).shape == (2, NUM_CLASSES)


@pytest.mark.parametrize("name", MODELS)
def test_eval_mode_is_deterministic_and_batch_independent(name):
    torch.manual_seed(0)
    model = build_model(name, 30, NUM_CLASSES, 11).eval()
    x = torch.randn(4, 30, 11, 11)
    with torch.no_grad():
        together = model(x)
        alone = torch.cat([model(x[i : i + 1]) for i in range(4)])
    torch.testing.assert_close(together, alone, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", MODELS)
def test_wrong_band_count_or_rank_is_a_clear_error(name):
    torch.manual_seed(0)
    model = build_model(name, 30, NUM_CLASSES, 11)
    with pytest.raises(ShapeMismatchError, match=r"29 bands.*num_bands=30"):
        model(torch.randn(2, 29, 11, 11))
    with pytest.raises(ValueError, match=r"\(B, C, P, P\)"):
        model(torch.randn(30, 11, 11))


@pytest.mark.parametrize("name", MODELS)
def test_constructor_hides_nothing(name):
    """Sizes first, then only keyword hyperparameters with type hints and defaults."""
    cls = get_model_class(name)
    assert issubclass(cls, PatchClassifier)
    assert cls.__doc__ and "(20" in cls.__doc__  # a citation with its year
    params = list(inspect.signature(cls.__init__).parameters.values())
    assert [p.name for p in params[:4]] == ["self", "num_bands", "num_classes", "patch_size"]
    for p in params[4:]:
        assert p.kind is inspect.Parameter.KEYWORD_ONLY, p.name
        assert p.annotation is not inspect.Parameter.empty, p.name
        assert p.default is not inspect.Parameter.empty, p.name
    model = build_model(name, 30, NUM_CLASSES, 11)
    assert (model.num_bands, model.num_classes, model.patch_size) == (30, NUM_CLASSES, 11)
    assert model.dense is (name in ("fcn", "ssnet", "anyband"))


@pytest.mark.parametrize("name", MODELS)
def test_sizes_below_one_are_rejected_naming_the_argument(name):
    for kwargs, argument in [
        (dict(num_bands=0, num_classes=3, patch_size=11), "num_bands"),
        (dict(num_bands=30, num_classes=0, patch_size=11), "num_classes"),
        (dict(num_bands=30, num_classes=3, patch_size=0), "patch_size"),
    ]:
        with pytest.raises(ValueError, match=rf"{argument} must be >= \d+") as info:
            build_model(name, **kwargs)
        assert isinstance(info.value, HSIError)
    with pytest.raises(ValueError, match="num_bands must be an integer"):
        build_model(name, 30.0, 3, 11)


@pytest.mark.parametrize("name", MODELS)
def test_channels_last_weights_keep_a_channels_last_batch_and_the_logits(name):
    from hsi.models import channels_last_weights

    torch.manual_seed(0)
    plain = build_model(name, 30, NUM_CLASSES, 11).eval()
    converted = channels_last_weights(build_model(name, 30, NUM_CLASSES, 11).eval())
    converted.load_state_dict(plain.state_dict())  # a checkpoint loads into channels-last weights as is
    x = torch.randn(4, 30, 11, 11).contiguous(memory_format=torch.channels_last)
    first_outputs = []
    convs = [m for m in converted.modules() if isinstance(m, torch.nn.Conv2d)]
    for conv in convs:
        assert conv.weight.is_contiguous(memory_format=torch.channels_last)
        conv.register_forward_hook(lambda m, i, o: first_outputs.append((i[0], o)))
    with torch.no_grad():
        torch.testing.assert_close(converted(x), plain(x), rtol=1e-4, atol=1e-5)
    for inp, out in first_outputs:  # a 4-D channels-last input is never turned back into a contiguous one
        if inp.is_contiguous(memory_format=torch.channels_last) and inp.shape[2] * inp.shape[3] > 1:
            assert out.is_contiguous(memory_format=torch.channels_last), type(converted).__name__
