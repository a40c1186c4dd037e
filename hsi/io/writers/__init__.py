"""Writers, apart from the readers: HDF5 (:mod:`hsi.io.writers.hdf5`), ENVI classification
(:mod:`hsi.io.writers.envi`) and GeoTIFF (:mod:`hsi.io.writers.geotiff`).

Each module writes one file format and reads back only what its own tests and the
inference outputs need to check (the class table of an ENVI header, a label GeoTIFF's class
names). Every file is written atomically (:mod:`hsi._atomic`).
"""
