"""``HSIDataModule(download=True)`` asks the scene loader to download."""

from __future__ import annotations

from hsi.data import HSIDataModule
from hsi.scenes import SceneSpec, register_scene, unregister_scene
from hsi.scenes.synthetic import make_synthetic_scene


def test_download_reaches_the_scene_loader():
    calls = []

    def loader(root, download=False, **options):
        calls.append(download)
        return make_synthetic_scene(height=24, width=24, bands=8, n_classes=3, seed=1)

    register_scene(SceneSpec("downloadable", loader, description="test scene"), overwrite=True)
    try:
        dm = HSIDataModule(scene="downloadable", download=True, patch_size=5, block_size=6)
        dm.prepare_data()
        dm.setup("fit")
        assert calls == [True] and dm.num_classes == 3
        HSIDataModule(scene="downloadable", patch_size=5, block_size=6).setup("fit")
        assert calls == [True, False]
    finally:
        unregister_scene("downloadable")
