"""The file kinds the readers know: extensions, and the one line that lists them in error messages."""

from __future__ import annotations

MAT_EXT = frozenset({".mat"})
HDF5_EXT = frozenset({".h5", ".hdf5", ".he5", ".hdf"})
ENVI_EXT = frozenset({".hdr"})
ERDAS_EXT = frozenset({".lan", ".gis"})
GEOTIFF_EXT = frozenset({".tif", ".tiff"})
BINARY_EXT = frozenset({".img", ".dat", ".raw", ".bsq", ".bil", ".bip", ".bin"})
SUPPORTED = (
    ".mat (MATLAB v5 or v7.3), .h5/.hdf5/.he5 (HDF5), ENVI (.hdr header + binary such as "
    ".img/.dat/.raw/.bsq/.bil/.bip), ERDAS .lan/.gis, GeoTIFF .tif/.tiff"
)
