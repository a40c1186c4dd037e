"""Bad ``load_scene`` arguments name the option, what was found and what is allowed (issue 10)."""

from __future__ import annotations

import pytest

from hsi.errors import OptionError
from hsi.scenes import load_scene


@pytest.mark.parametrize("purity", ["high", 1.5, -0.1, True])
def test_bad_purity_names_the_option(tmp_path, purity):
    with pytest.raises(OptionError) as err:
        load_scene("samson", root=tmp_path, purity=purity)
    assert err.value.option == "purity" and err.value.value == purity and "[0, 1]" in str(err.value)


def test_root_that_is_a_file_says_to_pass_its_folder(tmp_path):
    placed = tmp_path / "samson_1.img"
    placed.write_bytes(b"\0" * 16)
    with pytest.raises(OptionError) as err:
        load_scene("samson", root=placed)
    msg = str(err.value)
    assert msg.startswith("root: ") and "is a file" in msg and repr(str(tmp_path)) in msg
    assert placed.read_bytes() == b"\0" * 16  # untouched
