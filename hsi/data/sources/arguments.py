"""The DataModule's source arguments as a collection: one entry for ``scene=`` / ``cube_path=``, the entries of
``scenes=`` (:func:`sources_of`, with the checks of the arguments a collection cannot take)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hsi.data.scene_source import SourceSpec
from hsi.data.sources.entries import read_collection
from hsi.data.sources.records import Collection, SceneEntry
from hsi.errors import OptionError

__all__ = ["COLLECTION_DEFAULTS", "CollectionSource", "check_collection_arguments", "resolve_defaults", "sources_of"]

#: what the DataModule's "auto" / None defaults are for one scene and for several (benchmarks/bench_cross_sensor.py,
#: docs/benchmarks.md): per-band statistics of whole scenes (per-scene scaling) are far steadier as mean and standard
#: deviation than as extremes, and brightness and per-band noise augmentation let a model trained on one sensor
#: hold up on another (the default model's worst pair went from 0.88 to 0.96 of its in-scene accuracy)
SINGLE_DEFAULTS = {"scaling": "minmax", "spectral_scale": 0.0, "spectral_noise": 0.0}
COLLECTION_DEFAULTS = {"scaling": "standardize", "spectral_scale": 0.1, "spectral_noise": 0.05}
#: the value that asks for the default of each such argument
_UNSET = {"scaling": "auto", "spectral_scale": None, "spectral_noise": None}

#: single-scene source arguments a collection does not take (its entries say where each scene is)
SCENE_ONLY = ("cube_path", "labels_path", "cube_key", "labels_key", "layout", "test_labels_path", "test_labels_key")


class CollectionSource:
    """What ``datamodule.source`` says of a collection of several scenes: its ``name`` (run folders) and ``kind``, and
    how each scene is read (as :class:`~hsi.data.scene_source.SourceSpec` reads a lone scene)."""

    kind = "collection"

    def __init__(self, collection: Collection, download: bool = False, ignore_georef: bool = False) -> None:
        self.collection, self.download, self.ignore_georef = collection, download, ignore_georef
        names = collection.names
        self.name = "+".join(names) if len(names) <= 3 else f"{names[0]}+{len(names) - 1}-more"
        self.scene_options: dict[str, Any] = {}

    def read(self, index: int) -> Any:
        """Scene ``index`` as read (:func:`hsi.data.sources.load.load_entry`)."""
        from hsi.data.sources.load import load_entry

        return load_entry(self.collection.entries[index], self.download, self.ignore_georef)

    def known_identity(self, index: int) -> list[dict[str, Any]] | None:
        """The identity of the files scene ``index`` reads when known without reading it (files entries), else None."""
        from hsi.data.sources.build import entry_identities

        entry = self.collection.entries[index]
        return entry_identities(entry) if entry.kind == "files" else None


def check_collection_arguments(hparams: Mapping[str, Any]) -> None:
    """Refuse the DataModule arguments that a collection given by ``scenes=`` cannot take (:class:`OptionError`)."""
    for name in SCENE_ONLY:
        if hparams.get(name) is not None:
            raise OptionError(name, hparams[name], "not with scenes= (each scene entry names its own files and keys)")
    if hparams["split"] != "block":
        raise OptionError("split", hparams["split"], "block with scenes= (hold whole scenes out with split: scene "
                          "and test_scenes in the collection)")
    if hparams.get("folds") is not None:
        raise OptionError("folds", hparams["folds"], "none with scenes= (cross-validation folds of a collection are "
                          "not supported)")
    if hparams.get("gather_on_device"):
        raise OptionError("gather_on_device", True, "False with scenes= (each scene is its own cube)")


def resolve_defaults(hparams: Mapping[str, Any], n_scenes: int) -> dict[str, Any]:
    """The arguments whose default depends on the number of scenes, resolved: ``scaling="auto"``,
    ``spectral_scale=None`` and ``spectral_noise=None`` take :data:`SINGLE_DEFAULTS` for one scene and
    :data:`COLLECTION_DEFAULTS` for several (0 with ``augment=False``: what runs is what is recorded); given values
    are kept."""
    defaults = SINGLE_DEFAULTS if n_scenes == 1 else COLLECTION_DEFAULTS
    if not hparams.get("augment", True):
        defaults = {**defaults, "spectral_scale": 0.0, "spectral_noise": 0.0}
    return {name: defaults[name] if hparams.get(name) == unset else hparams.get(name)
            for name, unset in _UNSET.items()}


def _lone_entry(spec: SourceSpec) -> SceneEntry:
    """The collection entry of a single scene (its name is the scene's or the cube file's stem)."""
    if spec.kind == "files":
        return SceneEntry(name=spec.name, cube=spec.cube_path, labels=spec.labels_path, cube_key=spec.cube_key,
                          labels_key=spec.labels_key, layout=spec.layout)
    return SceneEntry(name=spec.name, scene=spec.scene, root=spec.root, scene_options=dict(spec.scene_options))


def sources_of(hparams: Mapping[str, Any], spec: SourceSpec) -> tuple[Collection, SourceSpec | CollectionSource]:
    """``(collection, source)`` of the DataModule's arguments ``hparams`` (no cube opened): a one-entry collection and
    ``spec`` (its single-scene source arguments) for a single scene; the collection of ``scenes=`` and a
    :class:`CollectionSource` otherwise. ``source.name`` names the run (the scene, or the scenes joined)."""
    if hparams.get("scenes") is None:
        return Collection((_lone_entry(spec),)), spec
    check_collection_arguments(hparams)
    collection = read_collection(hparams["scenes"])
    return collection, CollectionSource(collection, bool(hparams.get("download")), bool(hparams.get("ignore_georef")))
