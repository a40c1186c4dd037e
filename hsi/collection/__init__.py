"""Scene collections: train, evaluate and map many scenes, from one or several sensors.

- :mod:`hsi.collection.entries`: :class:`SceneEntry`, :class:`Collection`, :func:`read_collection` (YAML, lists, packs);
- :mod:`hsi.collection.bands`: the common wavelength grid and linear resampling onto it;
- :mod:`hsi.collection.classes`: the union of classes by name, per-scene mappings;
- :mod:`hsi.collection.split`: block splits over the whole collection, held-out scenes, the leakage report;
- :mod:`hsi.collection.build`: the collection's state (fitted once) and one cache entry per scene;
- :mod:`hsi.collection.dataset`: :class:`CollectionDataset`, samples indexed (scene, row, col);
- :mod:`hsi.collection.datamodule`: what ``HSIDataModule(scenes=...)`` is;
- :mod:`hsi.collection.metrics`: per-scene scores for ``metrics.json``;
- :mod:`hsi.collection.pack`: one HDF5 file for a whole collection.
"""

from hsi.collection.bands import common_grid, resample
from hsi.collection.entries import Collection, SceneEntry, read_collection

__all__ = ["Collection", "SceneEntry", "common_grid", "read_collection", "resample"]
