"""Self-supervised pretraining: the pixels it reads, its windows, what it learns, and that it never reads a label."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io as sio
import torch

from hsi.data import HSIDataModule
from hsi.data.unlabelled import held_out_area, pretext_centres
from hsi.models import build_model, channels_last_weights
from hsi.preprocess import block_split
from hsi.scenes import make_synthetic_scene
from hsi.training.selfsup import (
    gather_windows,
    mask_windows,
    pretrain_encoder,
    start_encoder,
)


def _split(seed: int = 0):
    labels = make_synthetic_scene(height=48, width=48, bands=6, n_classes=3, seed=seed).labels
    return block_split(labels, block_size=8, buffer=2, seed=seed), labels.shape


def test_the_test_area_is_the_whole_blocks_that_hold_test_pixels():
    split, shape = _split()
    area = held_out_area(split, shape)
    assert area[split.test].all()
    rows, cols = np.nonzero(area)
    for r, c in zip(rows[::37], cols[::37]):  # every pixel of the area lies in an 8x8 block holding a test pixel
        block = (slice(r // 8 * 8, r // 8 * 8 + 8), slice(c // 8 * 8, c // 8 * 8 + 8))
        assert split.test[block].any()
    assert not area[split.train].any()


def test_without_exclusion_every_pixel_is_read_and_with_it_no_window_reaches_a_test_block():
    split, shape = _split()
    every = pretext_centres([split], [shape], radius=3)
    assert len(every) == shape[0] * shape[1]
    kept = pretext_centres([split], [shape], radius=3, exclude_test=True)
    area = held_out_area(split, shape)
    assert 0 < len(kept) < len(every)
    for _, r, c in kept:
        assert not area[max(r - 3, 0): r + 4, max(c - 3, 0): c + 4].any()
    assert any(area[max(r - 3, 0): r + 4, max(c - 3, 0): c + 4].any() and not area[r, c] for _, r, c in every)


def test_a_held_out_test_scene_is_left_out_whole():
    split, shape = _split()
    held = type(split)(np.zeros(shape, bool), np.zeros(shape, bool), split.train | split.test | split.val,
                       np.zeros(shape, bool), split.counts, {"method": "scenes"})
    centres = pretext_centres([split, held], [shape, shape], radius=1, exclude_test=True)
    assert set(centres[:, 0].tolist()) == {0}


def test_windows_are_the_cubes_pixels_around_each_centre_in_the_batch_order():
    rng = np.random.default_rng(0)
    cubes = [torch.as_tensor(rng.random((14, 12, 5), dtype=np.float32)) for _ in range(2)]
    centres = torch.tensor([[1, 0, 0], [0, 7, 5], [1, 9, 7], [0, 3, 2]])
    windows = gather_windows(cubes, centres, pad=2, size=5)
    for window, (s, r, c) in zip(windows, centres.tolist()):
        np.testing.assert_array_equal(window.numpy(), cubes[s][r: r + 5, c: c + 5].permute(2, 0, 1).numpy())
    assert torch.equal(gather_windows(cubes, centres, pad=2, size=3)[:, :, 1, 1], windows[:, :, 2, 2])


def test_masking_always_hides_the_centre_and_about_the_ratio_of_the_rest():
    windows = torch.ones(400, 3, 7, 7)
    masked = mask_windows(windows, 0.5, torch.Generator().manual_seed(0))
    assert (masked[:, :, 3, 3] == 0).all()
    hidden = (masked[:, 0] == 0).float().mean().item()
    assert 0.45 < hidden < 0.56
    assert ((masked == 0) | (masked == 1)).all() and (masked[:, 0] == masked[:, 2]).all()  # whole spectra


def _scene_tensors(seed: int = 0):
    scene = make_synthetic_scene(height=40, width=40, bands=10, n_classes=3, seed=seed)
    cube = np.pad(scene.cube.data.astype(np.float32), ((3, 3), (3, 3), (0, 0)), mode="reflect")
    cube = (cube - cube.mean((0, 1))) / cube.std((0, 1))
    rows, cols = np.meshgrid(np.arange(40), np.arange(40), indexing="ij")
    centres = np.stack([np.zeros(1600, int), rows.ravel(), cols.ravel()], 1)
    return [cube], centres


def _net(seed: int = 0):
    torch.manual_seed(seed)
    return channels_last_weights(build_model("ssnet", 10, 3, 7, width=8))


def test_pretraining_learns_the_encoder_alone_the_same_for_the_same_seed():
    cubes, centres = _scene_tensors()
    nets = [_net(), _net()]
    head_before = nets[0].head[-1].weight.clone()
    reports = [pretrain_encoder(net, cubes, centres, 3, 7, steps=30, seed=5) for net in nets]
    assert reports[0].applied and reports[0].pixels == 1600 and reports[0].steps == 30
    assert reports[0].loss_end < 0.95 * reports[0].loss_start
    for a, b in zip(nets[0].state_dict().values(), nets[1].state_dict().values()):
        assert torch.equal(a, b)
    assert torch.equal(nets[0].head[-1].weight, head_before)
    other = _net()
    pretrain_encoder(other, cubes, centres, 3, 7, steps=30, seed=6)
    assert not torch.equal(other.context[0].conv.weight, nets[0].context[0].conv.weight)


def test_a_network_without_an_encoder_is_left_as_built():
    cubes, centres = _scene_tensors()
    net = build_model("cnn2d", 10, 3, 7)
    before = [p.clone() for p in net.parameters()]
    report = pretrain_encoder(net, cubes, centres, 3, 7, steps=5)
    assert not report.applied and "no encoder" in report.reason
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters()))


@pytest.fixture
def fixed_split_files(tmp_path):
    scene = make_synthetic_scene(height=40, width=40, bands=8, n_classes=4, seed=1)
    cols = np.arange(40)[None, :]
    sio.savemat(tmp_path / "cube.mat", {"img": scene.cube.data})
    sio.savemat(tmp_path / "train.mat", {"gt": np.where(cols < 18, scene.labels, 0).astype(np.uint8)})
    test_map = np.where(cols >= 24, scene.labels, 0).astype(np.uint8)
    sio.savemat(tmp_path / "test.mat", {"gt": test_map})
    other = np.where(test_map > 0, test_map % 4 + 1, 0).astype(np.uint8)  # every test pixel of another class
    sio.savemat(tmp_path / "test_other.mat", {"gt": other})
    return tmp_path


def _pretrained(folder, test_file: str, exclude_test: bool = False) -> dict[str, torch.Tensor]:
    dm = HSIDataModule(scene=None, cube_path=str(folder / "cube.mat"), labels_path=str(folder / "train.mat"),
                       labels_key="gt", test_labels_path=str(folder / test_file), test_labels_key="gt",
                       split="fixed", patch_size=7, cache_dir=None, augment=False)
    dm.prepare_data()
    dm.setup("fit")
    torch.manual_seed(0)
    net = channels_last_weights(build_model("ssnet", dm.num_bands, dm.num_classes, 7, width=8))
    report = start_encoder(net, dm, None, steps=15, exclude_test=exclude_test, seed=0)
    assert report.applied and report.pixels == (1600 if not exclude_test else report.pixels)
    return {k: v.clone() for k, v in net.state_dict().items()}


def test_the_test_labels_never_reach_pretraining(fixed_split_files):
    """The same scene with every test pixel relabelled gives the same encoder, bit for bit."""
    first = _pretrained(fixed_split_files, "test.mat")
    relabelled = _pretrained(fixed_split_files, "test_other.mat")
    assert first.keys() == relabelled.keys()
    assert all(torch.equal(first[k], relabelled[k]) for k in first)
