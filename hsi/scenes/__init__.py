"""Named scenes: a cube, its label map, class names and colours.

``load_scene(name, root=None, download=False, **options)`` returns a :class:`Scene`;
``list_scenes()`` lists the registered names (benchmarks, unmixing scenes, ``synthetic``);
``register_scene(SceneSpec(...))`` adds your own. Where files are looked for and how they
are downloaded is described in ``hsi/scenes/GUIDE.md`` (``hsi scenes --guide``).
"""

from __future__ import annotations

from hsi.scenes.files import RemoteFile, resolve_root
from hsi.scenes.labels import abundance_labels, remap_labels
from hsi.scenes.palette import make_palette, scene_palette
from hsi.scenes.registry import (
    SceneSpec,
    describe_scenes,
    get_scene_spec,
    list_scenes,
    load_scene,
    register_scene,
    unregister_scene,
)
from hsi.scenes.scene import Scene
from hsi.scenes.synthetic import make_synthetic_scene

__all__ = [
    "RemoteFile",
    "Scene",
    "SceneSpec",
    "abundance_labels",
    "describe_scenes",
    "get_scene_spec",
    "list_scenes",
    "load_scene",
    "make_palette",
    "make_synthetic_scene",
    "register_scene",
    "remap_labels",
    "resolve_root",
    "scene_palette",
    "unregister_scene",
]
