"""GeoRef: ENVI map info and HDF5 attributes in, ENVI fields out, and the checks on broken ones."""

from __future__ import annotations

import warnings

import h5py
import numpy as np
import pytest
from rasterio.crs import CRS

from hsi.errors import DataQualityWarning, GeoRefError
from hsi.io import read_cube
from hsi.io.georef import GeoRef, check_same_grid, from_envi, from_h5_attrs

UTM10N = CRS.from_epsg(32610).to_wkt()
UL = (612730.91, 4074488.708)


def _map_info(*fields: str) -> dict:
    return {"map info": list(fields)}


def test_utm_map_info_gives_epsg_and_corner_transform():
    geo = from_envi(_map_info("UTM", "1.000", "1.000", *map(str, UL), "1.0", "1.0", "10", "North", "WGS-84",
                              "units=Meters"), "x.hdr")
    assert CRS.from_wkt(geo.crs).to_epsg() == 32610
    assert geo.transform == (1.0, 0.0, UL[0], 0.0, -1.0, UL[1])
    assert "UTM zone 10N" in geo.describe() and "EPSG:32610" in geo.describe()


def test_reference_pixel_other_than_the_first_corner():
    # pixel (2.5, 3.5) in ENVI's 1-based corner coordinates is the centre of pixel (row 2, col 1)
    geo = from_envi(_map_info("UTM", "2.5", "3.5", "1000.0", "2000.0", "30", "30", "33", "South", "WGS-84"), "x.hdr")
    assert CRS.from_wkt(geo.crs).to_epsg() == 32733
    assert geo.transform == (30.0, 0.0, 1000.0 - 1.5 * 30, 0.0, -30.0, 2000.0 + 2.5 * 30)
    x, y = geo.pixel_centres(np.array(2), np.array(1))
    assert (x, y) == (1000.0, 2000.0)


def test_geographic_map_info():
    geo = from_envi(_map_info("Geographic Lat/Lon", "1", "1", "-122.5", "37.8", "0.001", "0.001", "WGS-84"), "x.hdr")
    assert CRS.from_wkt(geo.crs).to_epsg() == 4326


def test_envi_fields_read_back_equal():
    geo = GeoRef(UTM10N, (2.0, 0.0, UL[0], 0.0, -2.0, UL[1]))
    fields = geo.envi_fields()
    assert fields["map info"].startswith("{UTM, 1.000, 1.000,") and "10, North, WGS-84" in fields["map info"]
    back = from_envi({"map info": fields["map info"].strip("{}").split(","),
                      "coordinate system string": fields["coordinate system string"]}, "x.hdr")
    assert back.same_grid(geo) and back.transform == geo.transform


def test_arbitrary_map_info_is_no_georeference():
    assert from_envi(_map_info("Arbitrary", "1", "1", "0", "0", "1", "1"), "x.hdr") is None
    assert from_envi({}, "x.hdr") is None


def test_rotated_map_info_is_refused_naming_the_file():
    with pytest.raises(GeoRefError, match=r"x\.hdr.*rotation=30.*north-up"):
        from_envi(_map_info("UTM", "1", "1", "0", "0", "1", "1", "10", "North", "WGS-84", "rotation=30.0"), "x.hdr")


def test_unknown_projection_without_wkt_is_refused():
    with pytest.raises(GeoRefError, match=r"State Plane.*coordinate system string"):
        from_envi(_map_info("State Plane (NAD 83)", "1", "1", "0", "0", "1", "1", "401"), "x.hdr")


def test_unknown_projection_with_wkt_uses_the_wkt():
    wkt = CRS.from_epsg(2227).to_wkt()
    geo = from_envi({**_map_info("State Plane (NAD 83)", "1", "1", "0", "0", "1", "1"),
                     "coordinate system string": wkt}, "x.hdr")
    assert CRS.from_wkt(geo.crs).to_epsg() == 2227


def test_disagreeing_coordinate_system_string_warns_and_map_info_wins():
    other = CRS.from_epsg(32611).to_wkt()
    with pytest.warns(DataQualityWarning, match="another CRS than 'map info'"):
        geo = from_envi({**_map_info("UTM", "1", "1", "0", "0", "1", "1", "10", "North", "WGS-84"),
                         "coordinate system string": other}, "x.hdr")
    assert CRS.from_wkt(geo.crs).to_epsg() == 32610


def test_unreadable_coordinate_system_string_is_refused():
    with pytest.raises(GeoRefError, match="coordinate system string"):
        from_envi({**_map_info("UTM", "1", "1", "0", "0", "1", "1", "10", "North", "WGS-84"),
                   "coordinate system string": "PROJCS[broken"}, "x.hdr")


def test_window_shift_and_grid_comparison():
    geo = GeoRef(UTM10N, (30.0, 0.0, 1000.0, 0.0, -30.0, 5000.0))
    win = geo.shifted(2, 3)
    assert win.transform == (30.0, 0.0, 1090.0, 0.0, -30.0, 4940.0)
    assert not win.same_grid(geo) and geo.same_grid(GeoRef(UTM10N, geo.transform))
    assert not geo.same_grid(GeoRef(CRS.from_epsg(32611).to_wkt(), geo.transform))
    assert GeoRef.from_dict(geo.to_dict()) == geo and GeoRef.from_dict(None) is None
    with pytest.raises(GeoRefError, match=r"labels gt\.tif .* another grid than cube cube\.tif"):
        check_same_grid(geo, win, "cube.tif", "gt.tif")
    check_same_grid(geo, None, "cube.tif", "gt.tif")  # an ungeoreferenced label map is taken as on the cube's grid


def test_h5_attributes(tmp_path):
    geo = GeoRef(UTM10N, (30.0, 0.0, 1000.0, 0.0, -30.0, 5000.0), "point")
    assert from_h5_attrs(geo.h5_attrs(), "f.h5") == geo
    assert from_h5_attrs({}, "f.h5") is None
    with pytest.raises(GeoRefError, match="f.h5.*no CRS"):
        from_h5_attrs({"transform": [30.0, 0, 1000.0, 0, -30.0, 5000.0]}, "f.h5")
    with pytest.raises(GeoRefError, match="6 numbers"):
        from_h5_attrs({"transform": [30.0, 0, 1000.0]}, "f.h5")
    with pytest.raises(GeoRefError, match="rotated"):
        from_h5_attrs({"crs": UTM10N, "transform": [30.0, 2.0, 1000.0, 2.0, -30.0, 5000.0]}, "f.h5")


def test_hdf5_cube_carries_its_georeference_and_ignore_reads_none(tmp_path):
    path = tmp_path / "cube.h5"
    with h5py.File(path, "w") as handle:
        ds = handle.create_dataset("cube", data=np.random.default_rng(0).random((6, 5, 4)).astype(np.float32))
        ds.attrs["layout"] = "HWC"
        ds.attrs["transform"] = [30.0, 0.0, 1000.0, 0.0, -30.0, 5000.0]  # and no CRS: refused
    with pytest.raises(GeoRefError, match=r"cube\.h5.*no CRS"):
        read_cube(path)
    assert read_cube(path, georef="ignore").meta["georef"] is None
    with h5py.File(path, "a") as handle:
        handle["cube"].attrs["crs"] = UTM10N
    assert read_cube(path).meta["georef"] == GeoRef(CRS.from_wkt(UTM10N).to_wkt(), (30.0, 0.0, 1000.0, 0.0, -30.0, 5000.0))


def test_envi_cube_carries_map_info(tmp_path, io_files):
    cube = io_files.make_cube()
    header, _ = io_files.write_envi(tmp_path, cube, metadata={
        "map info": ["UTM", "1.000", "1.000", "500000.0", "4000000.0", "30.0", "30.0", "10", "North", "WGS-84"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a consistent header reads without a warning
        geo = read_cube(header).meta["georef"]
    assert geo.transform == (30.0, 0.0, 500000.0, 0.0, -30.0, 4000000.0)
    assert read_cube(header, georef="ignore").meta["georef"] is None


def test_samson_keeps_its_utm_coordinates(shared_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its coordinate system string disagrees with its map info
        geo = read_cube(shared_data / "envi" / "samson" / "samson_1.img.hdr").meta["georef"]
    assert CRS.from_wkt(geo.crs).to_epsg() == 32610
    assert geo.transform == (1.0, 0.0, 612730.910, 0.0, -1.0, 4074488.708)


def test_list_arrays_shows_a_geotiff_label_map(tmp_path):
    import rasterio
    from rasterio.transform import from_origin

    from hsi.io import list_arrays

    path = tmp_path / "gt.tif"
    with rasterio.open(path, "w", driver="GTiff", height=4, width=5, count=1, dtype="uint8", crs="EPSG:32633",
                       transform=from_origin(0, 10, 1, 1)) as dst:
        dst.write(np.ones((1, 4, 5), np.uint8))
    [info] = list_arrays(path)
    assert info.shape == (4, 5) and info.dtype == "uint8"
