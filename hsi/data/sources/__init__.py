"""The scenes a DataModule draws from: one scene, or a collection of scenes from one or several sensors.

A single scene is a collection of one. ``HSIDataModule`` always holds a
:class:`~hsi.data.sources.records.Collection` and one cache entry per scene, opened one way
(:func:`hsi.data.sources.open.open_sources`): the scenes share one band grid, one set of
classes and one fitted preprocessing; a lone scene is split on its own exactly as it always
was (:func:`hsi.data.sources.split.scene_split`).

- :mod:`hsi.data.sources.records`: :class:`SceneEntry`, :class:`Collection`;
- :mod:`hsi.data.sources.entries`: :func:`read_collection` (YAML, lists, packs), checked before any cube is read;
- :mod:`hsi.data.sources.arguments`: the DataModule's arguments as a collection (and the checks of ``scenes=``);
- :mod:`hsi.data.sources.bands`: the common wavelength grid and resampling onto it;
- :mod:`hsi.data.sources.classes`: the union of classes by name, per-scene mappings;
- :mod:`hsi.data.sources.split`: block splits over the whole collection, held-out scenes, the leakage report;
- :mod:`hsi.data.sources.load`: loading one entry and bringing it onto the collection's bands and classes;
- :mod:`hsi.data.sources.build`: the collection's state (fitted once) and one cache entry per scene;
- :mod:`hsi.data.sources.open`: what a DataModule opens, for one scene or many;
- :mod:`hsi.data.sources.dataset`: :class:`CollectionDataset`, samples indexed (scene, row, col);
- :mod:`hsi.data.sources.packfile`: reading a pack file (one HDF5 file holding a whole collection).
"""

from hsi.data.sources.bands import common_grid, resample
from hsi.data.sources.entries import read_collection
from hsi.data.sources.records import Collection, SceneEntry

__all__ = ["Collection", "SceneEntry", "common_grid", "read_collection", "resample"]
