"""File readers as plug-ins: one registered :class:`Reader` per format (:mod:`hsi.io.readers.registry`).

Importing this package registers the built-in readers, in the order they are asked:
MATLAB, HDF5, ENVI, ERDAS, GeoTIFF and ``.npy`` (arrays, and the scenes ``hsi convert --to npy``
writes). A new format is one module here with a class decorated by :func:`register_reader`,
plus its line below (or a ``register_reader`` call from anywhere, before the first read, or an
``hsi.readers`` entry point of the package that ships it: :mod:`hsi.plugins`).
"""

from __future__ import annotations

from hsi.io.readers.registry import (
    Reader,
    class_names_of,
    files_of,
    find_reader,
    get_reader,
    identities_of,
    identity_file,
    known_suffixes,
    list_readers,
    open_source,
    register_reader,
    supported,
    unregister_reader,
)
from hsi.io.readers import matlab, hdf5, envi, erdas, geotiff, npy_scene  # noqa: E402,F401  (registers them)

__all__ = ["Reader", "class_names_of", "files_of", "find_reader", "get_reader", "identities_of", "identity_file",
           "known_suffixes", "list_readers", "open_source", "register_reader", "supported", "unregister_reader"]
