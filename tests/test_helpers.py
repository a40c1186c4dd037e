"""The shared test helpers do what the tests built on them rely on (``tests/helpers.py``, ``tests/conftest.py``)."""

from __future__ import annotations

import errno
import os

import pytest
import torch

from tests.helpers import make_parcels, one_torch_thread, tmpfs


def test_small_disk_fills_up_at_its_size(small_disk):
    disk = small_disk("1m")
    with pytest.raises(OSError) as err:
        (disk / "big").write_bytes(b"\0" * (2 << 20))
    assert err.value.errno == errno.ENOSPC


def test_tmpfs_is_unmounted_after_its_block(tmp_path):
    with tmpfs(tmp_path / "disk", "1m") as disk:
        if disk is None:
            pytest.skip("cannot mount a tmpfs here (needs root)")
        assert os.path.ismount(disk)
    assert not os.path.ismount(tmp_path / "disk")


def test_one_torch_thread_restores_the_thread_count():
    before = torch.get_num_threads()
    with one_torch_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_parcels_are_seeded_with_unlabeled_lanes():
    labels = make_parcels(height=20, width=17, n_classes=3, seed=4, parcel=8)
    assert labels.shape == (20, 17) and (labels == make_parcels(height=20, width=17, n_classes=3, seed=4)).all()
    assert (labels[::8] == 0).all() and (labels[:, ::8] == 0).all() and set(labels[labels > 0]) == {1, 2, 3}
