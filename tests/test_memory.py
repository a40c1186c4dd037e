"""This process's memory (:mod:`hsi._memory`): the resident set read two ways agrees, and the trimmer trims."""

from __future__ import annotations

import sys

import pytest

from hsi import _memory

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self")


@linux
def test_the_resident_set_of_statm_and_status_agree_and_the_peak_is_not_below_it():
    statm = _memory.rss_bytes()
    status = _memory.status_kb("VmRSS") * 1024
    assert statm > 0 and abs(statm - status) < 64 << 20  # read a moment apart
    assert _memory.peak_rss_mb() * 2**20 >= 0.5 * statm
    assert _memory.status_kb("NoSuchKey") is None


def test_the_trimmer_trims_every_nth_call_or_when_the_resident_set_grew(monkeypatch):
    trims, rss = [], [100]
    monkeypatch.setattr(_memory, "release_freed_memory", lambda: trims.append(len(trims)))
    monkeypatch.setattr(_memory, "rss_bytes", lambda: rss[0])
    trim = _memory.Trimmer(every=3, grow=50)
    trim(), trim()
    assert trims == []
    trim()  # the third call
    assert len(trims) == 1
    rss[0] = 151  # grew by more than 50 since the last trim
    trim()
    assert len(trims) == 2 and trim.base == 151
