"""One data guide: ``hsi/scenes/GUIDE.md`` inside the package, printed by ``hsi scenes --guide`` and copied,
byte for byte, to the checkout's ``data/README.md`` by ``python -m hsi.scenes.guide``."""

from __future__ import annotations

import argparse
from pathlib import Path

from hsi.cli import scenes as scenes_command
from hsi.scenes import guide

ROOT = Path(__file__).resolve().parents[2]


def test_data_readme_is_the_guide():
    assert (ROOT / "data" / "README.md").read_text(encoding="utf-8") == guide.guide_text()


def test_guide_covers_places_registry_formats_and_verification():
    text = guide.guide_text()
    for needle in ("HSI_DATA_DIR", "~/.cache/hsi", "## Formats", "hsi scenes NAME", "SHA-256", "IntegrityError",
                   "download=True"):
        assert needle in text, needle


def test_scenes_guide_prints_the_data_readme_byte_for_byte(capsys):
    args = argparse.Namespace(guide=True, name=None, root=None)
    assert scenes_command.run(args) == 0
    assert capsys.readouterr().out == (ROOT / "data" / "README.md").read_text(encoding="utf-8")


def test_main_writes_the_copy_and_check_accepts_it(tmp_path):
    out = tmp_path / "data" / "README.md"
    assert guide.main(["--check", "--out", str(out)]) == 1  # missing
    assert guide.main(["--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == guide.guide_text()
    assert guide.main(["--check", "--out", str(out)]) == 0


def test_check_refuses_a_stale_copy(tmp_path, capsys):
    out = tmp_path / "README.md"
    out.write_text(guide.guide_text().replace("SHA-256", "MD5"), encoding="utf-8")
    assert guide.main(["--check", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {out}:") and "python -m hsi.scenes.guide" in err
