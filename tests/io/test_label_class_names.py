"""Class names of a label map: a names file beside it, a GeoTIFF's category names, attribute table (QGIS) or
``hsi infer`` tag; ids left unnamed are ``class_<id>``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import rasterio

from hsi.data.scene_source import label_names
from hsi.errors import CubeFormatError
from hsi.io.readers import class_names_of, files_of

LABELS = np.array([[0, 1, 2], [3, 5, 0]], dtype=np.uint8)


def _tif(path, tag: list[str] | None = None):
    """A plain single-band label GeoTIFF, optionally with ``hsi infer``'s ``class_names`` band tag."""
    grid = {"crs": "EPSG:32633", "transform": rasterio.Affine(30, 0, 500000, 0, -30, 4000000)}
    with rasterio.Env(), rasterio.open(path, "w", driver="GTiff", width=3, height=2, count=1, dtype="uint8",
                                       **grid) as dst:
        dst.write(LABELS, 1)
        if tag is not None:
            dst.update_tags(1, class_names=json.dumps(tag))
    return path


def _pam(path, body: str) -> None:
    (path.parent / f"{path.name}.aux.xml").write_text(
        f'<PAMDataset><PAMRasterBand band="1">{body}</PAMRasterBand></PAMDataset>')


#: a thematic table as QGIS's "Create Raster Attribute Table" writes it: value (min-max), count, class name (usage 2)
QGIS_RAT = """<GDALRasterAttributeTable tableType="thematic">
  <FieldDefn index="0"><Name>Value</Name><Type>0</Type><Usage>5</Usage></FieldDefn>
  <FieldDefn index="1"><Name>Count</Name><Type>0</Type><Usage>1</Usage></FieldDefn>
  <FieldDefn index="2"><Name>Class</Name><Type>2</Type><Usage>2</Usage></FieldDefn>
  <Row index="0"><F>1</F><F>1</F><F>water</F></Row>
  <Row index="1"><F>5</F><F>1</F><F>urban area</F></Row>
  <Row index="2"><F>2</F><F>1</F><F>crops</F></Row>
</GDALRasterAttributeTable>"""


def test_category_names_name_the_values_they_index(tmp_path):
    path = _tif(tmp_path / "gt.tif")
    _pam(path, "<CategoryNames><Category>none</Category><Category>water</Category><Category>crops</Category>"
               "<Category></Category></CategoryNames>")
    assert label_names(path, None, [1, 2, 3, 5]) == ["water", "crops", "class_3", "class_5"]


def test_a_qgis_attribute_table_names_classes_by_its_value_column(tmp_path):
    path = _tif(tmp_path / "gt.tif")
    _pam(path, QGIS_RAT)
    import rasterio.shutil

    rasterio.shutil.copy(path, tmp_path / "seen.vrt", driver="VRT")  # GDAL itself reads the table from the sidecar
    assert ET.parse(tmp_path / "seen.vrt").getroot().find("VRTRasterBand/GDALRasterAttributeTable") is not None
    assert label_names(path, None, [1, 2, 3, 5]) == ["water", "crops", "class_3", "urban area"]


def test_a_linear_attribute_table_without_a_value_column_counts_from_row0min(tmp_path):
    path = _tif(tmp_path / "gt.tif")
    _pam(path, '<GDALRasterAttributeTable Row0Min="1" BinSize="1"><FieldDefn index="0"><Name>label</Name>'
               '<Type>2</Type><Usage>0</Usage></FieldDefn><Row index="0"><F>water</F></Row>'
               '<Row index="1"><F>crops</F></Row></GDALRasterAttributeTable>')
    assert label_names(path, None, [1, 2]) == ["water", "crops"]  # the first string column is the name


def test_categories_come_before_the_attribute_table_and_the_tag(tmp_path):
    path = _tif(tmp_path / "gt.tif", tag=["bg", "from tag", "tag 2"])
    _pam(path, "<CategoryNames><Category>bg</Category><Category>edited in QGIS</Category></CategoryNames>" + QGIS_RAT)
    assert label_names(path, None, [1, 2]) == ["edited in QGIS", "class_2"]


def test_the_hsi_infer_tag_names_a_map_copied_without_its_sidecar(tmp_path):
    path = _tif(tmp_path / "gt.tif", tag=["Unclassified", "water", "crops", "roads", "", "urban"])
    assert not (tmp_path / "gt.tif.aux.xml").exists()
    assert label_names(path, None, [1, 2, 3, 5]) == ["water", "crops", "roads", "urban"]


def test_a_names_file_wins_over_the_stored_names_and_joins_the_files_the_map_stands_for(tmp_path):
    path = _tif(tmp_path / "gt.tif", tag=["bg", "a", "b", "c", "d", "e"])
    (tmp_path / "gt.tif.names").write_text("# id name\n0 unlabeled\n1 open water\n\n5\turban area\n2 crops\n")
    assert label_names(path, None, [1, 2, 3, 5]) == ["open water", "crops", "class_3", "urban area"]
    assert files_of(path) == [path, tmp_path / "gt.tif.names"]  # so an edit makes a cached scene stale


def test_a_names_file_beside_any_format_is_read(tmp_path):
    np.save(tmp_path / "gt.npy", LABELS.astype(np.int64))
    (tmp_path / "gt.npy.names").write_text("1 water\n2 crops\n3 roads\n5 urban\n")
    assert class_names_of(tmp_path / "gt.npy") == ["water", "crops", "roads", "", "urban"]


@pytest.mark.parametrize(("text", "expected"), [
    ("1 water\nwater 2\n", "line 2: 'water 2' is not an 'id name' line"),
    ("1 water\n1 crops\n", "line 2: id 1 is given twice"),
    ("1 water\n2 water\n", "line 2: name 'water' is given twice"),
    ("1\n", "line 1: '1' is not an 'id name' line"),
    ("# nothing\n0 background\n", "names no class"),
])
def test_a_bad_names_file_is_one_error_naming_the_file_and_line(tmp_path, text, expected):
    path = _tif(tmp_path / "gt.tif")
    (tmp_path / "gt.tif.names").write_text(text)
    with pytest.raises(CubeFormatError, match="gt.tif.names") as info:
        label_names(path, None, [1])
    assert expected in str(info.value)
