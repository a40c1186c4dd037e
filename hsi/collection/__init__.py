"""Scene collections: train, evaluate and map many scenes, from one or several sensors.

The public face of :mod:`hsi.data.sources` (where ``HSIDataModule`` finds its scenes: a
single scene is a collection of one), plus :mod:`hsi.collection.pack`, one HDF5 file for a
whole collection (``hsi convert --collection``):

- :func:`read_collection`, :class:`Collection`, :class:`SceneEntry`: the entries and how they are split;
- :func:`common_grid`, :func:`resample`: the common wavelength grid and resampling onto it;
- :func:`pack_collection`: write a pack file.
"""

from hsi.collection.pack import pack_collection
from hsi.data.sources import Collection, SceneEntry, common_grid, read_collection, resample


__all__ = ["Collection", "SceneEntry", "common_grid", "pack_collection", "read_collection", "resample"]
