"""Readers for hyperspectral cubes and label maps, one contract for every format.

``read_cube`` returns a :class:`Cube` (float32 H x W x C, ascending nm wavelengths, meta with
``units`` -- reflectance / radiance / unknown, the scale applied and where that came from, see
:mod:`hsi.io.units` -- and ``fwhm``, the band widths in nm or None);
``read_labels`` an (H, W) int64 map; ``open_cube`` a :class:`LazyCube` for windowed reads.
Formats: MATLAB .mat v5 and v7.3, HDF5, ENVI (.hdr + binary), ERDAS LAN/GIS, GeoTIFF
(.tif/.tiff through rasterio: a multi-band file is a cube, a single-band one a label map;
:func:`hsi.io.labels.read_label_georef` gives a label file's georeference), and ``.npy``
(an array, or the scene ``hsi convert --to npy`` writes, named by its folder). Each format is
a reader registered in :mod:`hsi.io.readers`; the entry points look it up there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hsi._lazy import lazy_names

if TYPE_CHECKING:
    from hsi.io.cube import Cube, read_cube
    from hsi.io.inventory import list_arrays
    from hsi.io.labels import read_labels
    from hsi.io.lazy import LazyCube, open_cube
    from hsi.io.writers.hdf5 import append_h5, write_h5

__all__ = ["Cube", "LazyCube", "append_h5", "list_arrays", "open_cube", "read_cube", "read_labels", "write_h5"]

#: public name -> the module defining it, imported on first use (PEP 562): importing a light module of this
#: package (``hsi.io.layout`` for the command line's choices) then costs no numpy or h5py
_HOMES = {"Cube": "hsi.io.cube", "read_cube": "hsi.io.cube", "list_arrays": "hsi.io.inventory",
          "read_labels": "hsi.io.labels", "LazyCube": "hsi.io.lazy", "open_cube": "hsi.io.lazy",
          "append_h5": "hsi.io.writers.hdf5", "write_h5": "hsi.io.writers.hdf5"}


__getattr__, __dir__ = lazy_names(globals(), _HOMES)
