"""``hsi infer`` map outputs in map coordinates: GeoTIFFs and the ENVI file keep the cube's CRS and transform."""

from __future__ import annotations

import json

import numpy as np
import pytest

rasterio = pytest.importorskip("rasterio")

from rasterio.crs import CRS  # noqa: E402

from hsi.errors import OptionError  # noqa: E402
from hsi.infer import InferOptions, infer_scene, load_checkpoint  # noqa: E402
from hsi.io.georef import GeoRef, from_envi  # noqa: E402
from hsi.sinks import DEFAULT_FORMATS, list_sinks  # noqa: E402

GEOREF = GeoRef(CRS.from_epsg(32633).to_wkt(), (3.5, 0.0, 401000.0, 0.0, -3.5, 5300500.0))
#: every map file a format writes (with --probabilities)
TIFS = {"labels.tif", "labels.tif.aux.xml", "confidence.tif", "probabilities.tif"}
NPYS = {"labels.npy", "confidence.npy", "probabilities.npy"}
ENVI = {"classification.img", "classification.hdr"}
PNGS = {"map.png", "false_color.png", "confidence.png"}


def _envi_georef(header):
    import spectral.io.envi as spy_envi

    return from_envi(spy_envi.read_envi_header(str(header)), str(header))


@pytest.fixture(scope="module")
def geo_cube(scene, tmp_path_factory):
    """The checkpoints' synthetic scene as an HDF5 file with a UTM georeference (``write_h5(georef=)``)."""
    from hsi.io.writers.hdf5 import write_h5

    path = tmp_path_factory.mktemp("geo") / "scene.h5"
    return write_h5(path, scene.cube.data, wavelengths=scene.cube.wavelengths, georef=GEOREF)


@pytest.fixture(scope="module")
def geo_run(cnn_ckpt, geo_cube, tmp_path_factory):
    out = tmp_path_factory.mktemp("georun") / "out"
    result = infer_scene(cnn_ckpt, geo_cube, out=out, tile=16, probabilities=True, accelerator="cpu", progress=False)
    return out, result


def test_every_map_lies_on_the_cube_grid(geo_run):
    out, result = geo_run
    crs = CRS.from_wkt(GEOREF.crs)
    for name in ("labels.tif", "confidence.tif", "probabilities.tif"):
        with rasterio.open(out / name) as src:
            assert src.crs == crs and tuple(src.transform)[:6] == GEOREF.transform, name
            assert (src.height, src.width) == result.labels.shape
    assert _envi_georef(out / "classification.hdr").same_grid(GEOREF, tolerance=1e-12)
    manifest = json.loads((out / "inference.json").read_text())
    assert GeoRef.from_dict(manifest["georef"]) == GEOREF and manifest["options"]["format"] == list(DEFAULT_FORMATS)
    assert TIFS | NPYS | ENVI <= set(manifest["files"])  # every map is vouched for (size, SHA-256)


def test_geotiff_maps_equal_the_npy_maps_with_names_and_colours(geo_run, cnn_ckpt):
    from hsi.io.writers.envi import read_class_info
    from hsi.io.writers.geotiff import read_label_classes

    out, result = geo_run
    model = load_checkpoint(cnn_ckpt)
    with rasterio.open(out / "labels.tif") as src:
        np.testing.assert_array_equal(src.read(1), np.load(out / "labels.npy"))
        assert src.nodata == 0 and src.tags(ns="IMAGE_STRUCTURE")["LAYOUT"] == "COG" and src.overviews(1)
    with rasterio.open(out / "confidence.tif") as src:
        np.testing.assert_array_equal(src.read(1), np.load(out / "confidence.npy"))
    with rasterio.open(out / "probabilities.tif") as src:
        assert src.descriptions == tuple(model.class_names)
        np.testing.assert_array_equal(np.moveaxis(src.read(), 0, -1), np.load(out / "probabilities.npy").astype(np.float32))
    for names, colours in (read_label_classes(out / "labels.tif"), read_class_info(out / "classification.hdr")):
        assert names == ["Unclassified", *model.class_names]
        np.testing.assert_array_equal(colours, model.palette)


def test_confidence_and_probabilities_have_band_names_and_overviews_like_labels(geo_run):
    from hsi.sinks.gtiff import CONFIDENCE_BAND

    out, _ = geo_run
    layouts = {}
    for name in ("labels.tif", "confidence.tif", "probabilities.tif"):
        with rasterio.open(out / name) as src:
            assert all(src.descriptions), (name, src.descriptions)
            assert all(src.overviews(band) for band in src.indexes), name
            layouts[name] = src.tags(ns="IMAGE_STRUCTURE").get("LAYOUT")
            if name == "confidence.tif":
                assert src.descriptions == (CONFIDENCE_BAND,)
                full, half = src.read(1), src.read(1, out_shape=(1, src.height // 2, src.width // 2))
                assert np.nanmin(half) >= np.nanmin(full) and np.nanmax(half) <= np.nanmax(full)  # averaged
    assert set(layouts.values()) == {"COG"}, layouts


def test_map_title_names_the_cube_file_not_its_folder(cnn_ckpt, geo_cube, tmp_path, monkeypatch):
    import hsi.viz
    from hsi.viz import figure_name

    titles = []
    draw = hsi.viz.plot_class_map
    monkeypatch.setattr(hsi.viz, "plot_class_map", lambda *a, **kw: titles.append(kw["title"]) or draw(*a, **kw))
    infer_scene(cnn_ckpt, geo_cube, out=tmp_path / "o", tile=40, format=("npy", "png"), accelerator="cpu",
                progress=False)
    assert titles == ["scene: predicted classes"], titles  # geo_cube is <tmp>/geo.../scene.h5
    assert figure_name("/data/run 3/samson_1.img.hdr") == "samson_1" and figure_name("indian_pines") == "indian_pines"
    assert figure_name("C.tif") == "C" and figure_name(".hidden") == ".hidden"


def test_format_envi_writes_no_tif_and_no_npy(cnn_ckpt, geo_cube, tmp_path, hsi_main):
    code, stdout, stderr = hsi_main(["infer", "--checkpoint", str(cnn_ckpt), "--cube", str(geo_cube), "--out", "o",
                                     "--format", "envi", "--tile", "40", "--accelerator", "cpu", "--no-progress"],
                                    tmp_path)
    assert code == 0, stderr
    written = {p.name for p in (tmp_path / "o").iterdir()}
    assert ENVI <= written and not written & (TIFS | NPYS | PNGS), written  # the PNGs are a format of their own
    assert "inference.json" in written
    assert _envi_georef(tmp_path / "o" / "classification.hdr").same_grid(GEOREF)
    assert not list(tmp_path.glob(".o.staging-*"))  # the memory-mapped maps went with the staging folder


def test_format_gtiff_only_and_bad_formats(cnn_ckpt, geo_cube, tmp_path, hsi_main):
    result = infer_scene(cnn_ckpt, geo_cube, out=tmp_path / "g", tile=40, format=("gtiff",), accelerator="cpu",
                         progress=False)
    written = set(result.files)
    assert {"labels.tif", "labels.tif.aux.xml", "confidence.tif"} <= written and not written & (NPYS | ENVI | PNGS)
    assert written == {"labels.tif", "labels.tif.aux.xml", "confidence.tif", "inference.json"}  # no ground truth
    formats = ", ".join(list_sinks())  # the registry's, in the order written
    with pytest.raises(OptionError, match=f"format.*{formats}"):
        InferOptions(format=("tif",))
    with pytest.raises(OptionError, match="npy or gtiff among them with probabilities"):
        InferOptions(format=("envi",), probabilities=True)
    code, _, stderr = hsi_main(["infer", "--checkpoint", str(cnn_ckpt), "--cube", str(geo_cube), "--out", "x",
                                "--format", "tif"], tmp_path)
    assert code == 2 and "--format" in stderr and formats in stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.shared
@pytest.mark.filterwarnings("ignore::hsi.errors.DataQualityWarning")  # Samson's two CRS fields disagree (known)
def test_samson_map_info_gives_the_geotiff_and_envi_coordinates(shared_data, tmp_path):
    """Samson's UTM ``map info`` (ENVI) through the writers: rasterio and ENVI read back the same grid."""
    from hsi.io import open_cube
    from hsi.io.writers.envi import write_classification
    from hsi.io.writers.geotiff import write_float_tif, write_label_cog

    with open_cube(shared_data / "envi" / "samson" / "samson_1.img.hdr") as lazy:
        georef, (h, w) = lazy.meta["georef"], lazy.shape[:2]
    assert georef is not None and georef.crs_name and "UTM" in georef.crs_name
    labels = np.arange(h * w).reshape(h, w) % 4
    palette = np.array([[0, 0, 0], [255, 0, 0], [0, 255, 0], [0, 0, 255]])
    write_label_cog(tmp_path / "labels.tif", labels, ["U", "rock", "tree", "water"], palette, georef)
    write_float_tif(tmp_path / "confidence.tif", np.ones((h, w), np.float32), georef)
    for name in ("labels.tif", "confidence.tif"):
        with rasterio.open(tmp_path / name) as src:
            assert src.crs == CRS.from_wkt(georef.crs) and tuple(src.transform)[:6] == georef.transform
    header = write_classification(tmp_path / "c", labels.astype(np.uint8), ["U", "rock", "tree", "water"], palette,
                                  georef=georef)
    assert _envi_georef(header).same_grid(georef, tolerance=1e-12)
