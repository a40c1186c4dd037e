"""The README's map picture: small, a real PNG, and where ``scripts/readme_map.py`` (which regenerates it) writes."""

from __future__ import annotations

import struct
from pathlib import Path

from tests.helpers import load_script

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "_static" / "map-synthetic.png"


def _script():
    return load_script(ROOT / "scripts" / "readme_map.py", "readme_map")


def test_the_readme_picture_is_a_small_png_the_script_writes():
    data = PICTURE.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    assert 400 <= width <= 1200 and 300 <= height <= 800
    assert len(data) < 60_000  # a picture in a README, not a data file
    assert _script().DEFAULT_OUT == PICTURE
