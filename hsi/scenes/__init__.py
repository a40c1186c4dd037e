"""Named scenes: a cube, its label map, class names and colours.

``load_scene(name, root=None, download=False, **options)`` returns a :class:`Scene`;
``list_scenes()`` lists the registered names (benchmarks, unmixing scenes, ``synthetic``);
``register_scene(SceneSpec(...))`` adds your own. Where files are looked for and how they
are downloaded is described in ``hsi/scenes/GUIDE.md`` (``hsi scenes --guide``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hsi._lazy import lazy_names

if TYPE_CHECKING:
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


#: public name -> the module defining it, imported on first use (PEP 562): checking a scene name or its options
#: (``hsi train --scene``, ``--scene-options``) then costs no numpy or scipy
_HOMES = {"RemoteFile": "hsi.scenes.files", "resolve_root": "hsi.scenes.files",
          "abundance_labels": "hsi.scenes.labels", "remap_labels": "hsi.scenes.labels",
          "make_palette": "hsi.scenes.palette", "scene_palette": "hsi.scenes.palette",
          "SceneSpec": "hsi.scenes.registry", "describe_scenes": "hsi.scenes.registry",
          "get_scene_spec": "hsi.scenes.registry", "list_scenes": "hsi.scenes.registry",
          "load_scene": "hsi.scenes.registry", "register_scene": "hsi.scenes.registry",
          "unregister_scene": "hsi.scenes.registry", "Scene": "hsi.scenes.scene",
          "make_synthetic_scene": "hsi.scenes.synthetic"}


__getattr__, __dir__ = lazy_names(globals(), _HOMES)
