"""The dataclasses of a collection: :class:`SceneEntry` and :class:`Collection` (read by :mod:`hsi.data.sources.entries`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["COLLECTION_KEYS", "ENTRY_KEYS", "PACK_FORMAT", "Collection", "SceneEntry"]

#: keys of one scene entry
ENTRY_KEYS = ("name", "scene", "root", "scene_options", "cube", "labels", "cube_key", "labels_key", "layout", "classes",
              "pack", "units", "scale", "wavelengths", "fwhm")
#: keys of a collection (its YAML file's top level)
COLLECTION_KEYS = ("scenes", "split", "test_scenes", "val_scenes", "preprocess")
#: ``format`` attribute of a pack file
PACK_FORMAT = "hsi.collection.pack"


@dataclass(frozen=True)
class SceneEntry:
    """One scene of a collection.

    Parameters
    ----------
    name : str
        Unique name in the collection (the folder of its maps, its key in ``metrics.json``).
    scene : str, optional
        A registry scene (``hsi scenes`` lists them), with ``root`` and ``scene_options``.
    root : str, optional
        Folder of the registry scene's files.
    scene_options : dict
        Options of the registry scene's loader.
    cube, labels : str, optional
        Instead of ``scene``: a cube file and its label map (0 = unlabeled).
    cube_key, labels_key, layout : str, optional
        Variable names inside the files and the cube's axis order (None: discovered).
    classes : dict
        ``{class name in this scene: class name in the collection}``; a file's classes are
        named ``class_<id>``. Unmapped names are kept.
    pack : str, optional
        A pack file holding this scene as the group ``name``.
    units : str, optional
        What the values are ("reflectance", "radiance", "unknown"), overriding what the file declares.
    scale : float, optional
        Divide the values by this on reading (e.g. 10000 for reflectance stored as integers x 10000).
    wavelengths : tuple of float, optional
        The band centres in nm, for a cube whose file has none (or overriding them).
    fwhm : tuple of float, optional
        The band widths (FWHM) in nm: one per band, or one for every band.
    """

    name: str
    scene: str | None = None
    root: str | None = None
    scene_options: dict[str, Any] = field(default_factory=dict)
    cube: str | None = None
    labels: str | None = None
    cube_key: str | None = None
    labels_key: str | None = None
    layout: str | None = None
    classes: dict[str, str] = field(default_factory=dict)
    pack: str | None = None
    units: str | None = None
    scale: float | None = None
    wavelengths: tuple[float, ...] | None = None
    fwhm: tuple[float, ...] | None = None

    @property
    def kind(self) -> str:
        """"pack", "files" or "registry" (the synthetic scene is a registry scene)."""
        return "pack" if self.pack else ("files" if self.cube else "registry")

    def datamodule_arguments(self) -> dict[str, Any]:
        """The single-scene ``HSIDataModule`` arguments naming this scene (what ``hsi doctor --scenes`` checks).

        A scene held in a pack file has none: its cube lives inside the pack (None is returned).
        """
        if self.kind == "pack":
            return {}
        if self.kind == "files":
            return {"cube_path": self.cube, "labels_path": self.labels, "cube_key": self.cube_key,
                    "labels_key": self.labels_key, "layout": self.layout}
        return {"scene": self.scene, "root": self.root, "scene_options": dict(self.scene_options)}

    def to_dict(self) -> dict[str, Any]:
        """The entry as a YAML/JSON mapping (defaults left out)."""
        out: dict[str, Any] = {"name": self.name}
        for key in ENTRY_KEYS[1:]:
            value = getattr(self, key)
            if value not in (None, {}):
                out[key] = dict(value) if isinstance(value, dict) else list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class Collection:
    """Scenes and how they are split.

    Parameters
    ----------
    entries : tuple of SceneEntry
        In order; the scene with the broadest bands gives the common wavelength grid (ties: the first training
        scene).
    split : {"block", "scene"}
        block: a block split inside every scene; scene: whole scenes held out.
    test_scenes, val_scenes : tuple of str
        With ``split="scene"``: the held-out scenes (no val scenes: a val fraction of the
        blocks of the training scenes).
    source : str, optional
        The file it was read from (for messages).
    preprocess : {"collection", "scene"}
        (a collection file's ``auto`` or nothing: scene with ``split="scene"``, else collection)
        collection: one pipeline fitted on the training pixels of all training scenes;
        scene: each scene's own, fitted on its own training pixels with ``split="block"``, and on all its valid
        pixels (unsupervised: labels never read, held-out scenes included) with ``split="scene"``.
    """

    entries: tuple[SceneEntry, ...]
    split: str = "block"
    test_scenes: tuple[str, ...] = ()
    val_scenes: tuple[str, ...] = ()
    source: str | None = None
    preprocess: str = "collection"

    @property
    def names(self) -> list[str]:
        """Scene names in order."""
        return [e.name for e in self.entries]

    @property
    def train_names(self) -> list[str]:
        """Scenes that give training pixels (every scene with ``split="block"``)."""
        held = set(self.test_scenes) | set(self.val_scenes)
        return [n for n in self.names if n not in held]

    def to_dict(self) -> dict[str, Any]:
        """The collection as the mapping its YAML file holds (JSON-able)."""
        return {"scenes": [e.to_dict() for e in self.entries], "split": self.split,
                "test_scenes": list(self.test_scenes), "val_scenes": list(self.val_scenes),
                "preprocess": self.preprocess}
