"""Registry: listing, unknown names, user-registered scenes."""

from __future__ import annotations

import numpy as np
import pytest

from hsi.errors import UnknownSceneError
from hsi.scenes import (
    Scene,
    SceneSpec,
    get_scene_spec,
    list_scenes,
    load_scene,
    make_palette,
    register_scene,
    unregister_scene,
)

CONTRACT_NAMES = {
    "synthetic", "indian_pines", "salinas", "salinas_a", "pavia_university", "pavia_centre",
    "ksc", "botswana", "samson", "jasper_ridge", "urban",
}


def test_list_scenes_has_every_contract_name_sorted():
    names = list_scenes()
    assert CONTRACT_NAMES <= set(names)
    assert names == sorted(names)


def test_unknown_scene_lists_the_known_ones():
    with pytest.raises(UnknownSceneError) as info:
        load_scene("indian_pine")
    msg = str(info.value)
    assert "'indian_pine'" in msg
    for name in CONTRACT_NAMES:
        assert name in msg
    assert isinstance(info.value, ValueError)


def test_names_are_case_and_dash_insensitive():
    assert get_scene_spec("Indian-Pines").name == "indian_pines"
    assert get_scene_spec(" SALINAS_A ").name == "salinas_a"


def test_families_and_files_are_described():
    assert get_scene_spec("indian_pines").family == "benchmark"
    assert get_scene_spec("samson").family == "unmixing"
    assert get_scene_spec("synthetic").family == "synthetic"
    ip_files = [f.filename for f in get_scene_spec("indian_pines").files]
    assert ip_files == ["Indian_pines_corrected.mat", "Indian_pines_gt.mat"]
    for name in ("indian_pines", "salinas", "salinas_a", "pavia_university", "pavia_centre", "ksc", "botswana"):
        for f in get_scene_spec(name).files:
            assert f.url.startswith("http://www.ehu.eus/ccwintco/uploads/") and f.url.endswith(f.filename)


def _tiny_loader(root, download=False, value=1):
    from hsi.io import Cube

    labels = np.array([[0, 1], [value, 1]])
    cube = Cube(data=np.zeros((2, 2, 3), np.float32), wavelengths=None, meta={"root": str(root)})
    return Scene("tiny", cube, labels, ["a", "b"], make_palette(2), {"label_values": [1, 2]})


def test_register_custom_scene_then_load_and_remove(tmp_path):
    spec = register_scene(SceneSpec("My-Tiny", _tiny_loader, description="two by two"))
    try:
        assert spec.name == "my_tiny" and "my_tiny" in list_scenes()
        scene = load_scene("my_tiny", root=tmp_path, value=2)
        assert scene.labels[1, 0] == 2 and scene.cube.meta["root"] == str(tmp_path)
        with pytest.raises(ValueError, match="already registered"):
            register_scene(SceneSpec("my_tiny", _tiny_loader))
        register_scene(SceneSpec("my_tiny", _tiny_loader, description="replaced"), overwrite=True)
        assert get_scene_spec("my_tiny").description == "replaced"
    finally:
        unregister_scene("my_tiny")
    assert "my_tiny" not in list_scenes()


def test_builtin_loaders_reject_unknown_options(tmp_path):
    with pytest.raises(TypeError, match="purity"):
        load_scene("samson", root=tmp_path, colour="red")
