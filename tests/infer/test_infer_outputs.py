"""The output folder end to end (1-epoch checkpoint), and what is refused before any compute."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hsi.errors import BandMismatchError, OptionError, OverwriteError, RunOutputError, WavelengthError
from hsi.infer import InferOptions, infer_scene, load_checkpoint
from hsi.infer.metrics import confusion_matrix


@pytest.fixture(scope="module")
def run(cnn_ckpt, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    result = infer_scene(cnn_ckpt, scene="synthetic", out=out, tile=16, overlap=0, probabilities=True,
                         accelerator="cpu", progress=False)
    return out, result


def test_every_output_is_written_and_reads_back(run, scene, cnn_ckpt):
    import matplotlib.image as mpimg

    from hsi.io import read_labels
    from hsi.io.writers.envi import read_class_info

    out, result = run
    model = load_checkpoint(cnn_ckpt)
    labels = np.load(out / "labels.npy")
    assert labels.shape == scene.labels.shape and labels.min() >= 1 and labels.max() <= 4
    np.testing.assert_array_equal(labels, result.labels)
    probs = np.load(out / "probabilities.npy")
    assert probs.dtype == np.float16 and probs.shape == (*labels.shape, 4)
    chosen = np.take_along_axis(probs, labels[..., None].astype(np.int64) - 1, axis=-1)[..., 0]
    np.testing.assert_array_equal(chosen, probs.max(-1))  # the label is a top class (float16 may tie)
    np.testing.assert_allclose(probs.max(-1), np.load(out / "confidence.npy"), atol=1e-3)
    for name in ("map.png", "false_color.png", "confidence.png"):
        img = mpimg.imread(out / name)
        assert img.ndim == 3 and img.shape[0] > 100 and img.shape[2] in (3, 4), name
    # ENVI classification: the same map, named classes and the scene's palette
    np.testing.assert_array_equal(read_labels(out / "classification.hdr"), labels)
    names, lookup = read_class_info(out / "classification.hdr")
    assert names == ["Unclassified", *model.class_names]
    np.testing.assert_array_equal(lookup, model.palette)
    # metrics agree with a confusion matrix recomputed from the written map
    metrics = json.loads((out / "metrics.json").read_text())
    cm = confusion_matrix(scene.labels, labels, 4)
    assert metrics["labeled"]["confusion"] == cm.tolist()
    assert np.isclose(metrics["labeled"]["oa"], np.trace(cm) / cm.sum())
    assert metrics["test"]["pixels"] == int(model.test_mask(labels.shape).sum()) > 0
    listed = json.loads((out / "inference.json").read_text())["files"]
    assert set(listed) | {"inference.json"} == {p.name for p in out.iterdir()}  # every file, with size and SHA-256
    from hsi.transaction import verify_manifest

    assert verify_manifest(out, "inference.json") == {} and listed["labels.npy"]["size"] == (out / "labels.npy").stat().st_size
    assert not list(out.glob(".*partial"))  # no temporary file left


def test_existing_outputs_are_refused_unless_overwrite_and_never_foreign_files(run, cnn_ckpt, tmp_path):
    out, _ = run
    with pytest.raises(RunOutputError, match="overwrite"):
        infer_scene(cnn_ckpt, scene="synthetic", out=out, progress=False)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "map.png").write_bytes(b"mine")
    with pytest.raises(OverwriteError, match="not written by hsi infer"):
        infer_scene(cnn_ckpt, scene="synthetic", out=foreign, overwrite=True, progress=False)
    assert (foreign / "map.png").read_bytes() == b"mine"


def test_overwrite_replaces_our_outputs_and_masks_unlabeled(cnn_ckpt, scene, tmp_path):
    out = tmp_path / "o"
    kw = dict(scene="synthetic", out=out, tile=40, overlap=0, accelerator="cpu", progress=False)
    infer_scene(cnn_ckpt, **kw)
    again = infer_scene(cnn_ckpt, **kw, overwrite=True, mask_unlabeled=True)
    labels = np.load(out / "labels.npy")
    assert (labels[scene.labels == 0] == 0).all() and (labels[scene.labels > 0] > 0).all()
    np.testing.assert_array_equal(labels, again.labels)


def test_band_mismatch_is_refused_before_compute_naming_both(cnn_ckpt, scene, tmp_path, monkeypatch):
    import hsi.infer.api as api

    def no_compute(*a, **k):
        raise AssertionError("computed before checking the bands")

    monkeypatch.setattr(api, "run_tiles", no_compute)
    with pytest.raises(BandMismatchError, match=r"no wavelengths, and its 9 bands are not the checkpoint's 10"):
        infer_scene(cnn_ckpt, scene.cube.data[..., :9], out=tmp_path / "x")
    assert not (tmp_path / "x").exists()
    from hsi.io import Cube

    # bands that do not reach the checkpoint's first band cannot be resampled onto it (no extrapolation): the line
    # names the range both cover, to train a checkpoint on
    shifted = Cube(scene.cube.data, scene.cube.wavelengths + 5.0, {"source": "shifted"})
    lo, hi = scene.cube.wavelengths[0] + 5.0, scene.cube.wavelengths[-1]
    with pytest.raises(WavelengthError, match=rf"cube shifted: its bands cover .* but checkpoint .* reads bands at .* "
                                              rf"--wavelength-range {lo:.0f} {hi:.0f}\), or give a cube that covers"):
        infer_scene(cnn_ckpt, shifted)


@pytest.mark.parametrize(("kwargs", "option"), [
    ({"tile": 0}, "tile"), ({"tile": 8, "overlap": 8}, "overlap"), ({"blend": "median"}, "blend"),
    ({"devices": 2}, "devices"), ({"batch_size": 0}, "batch_size"), ({"accelerator": "tpu9"}, "accelerator"),
    ({"tiles": 3}, "tiles"),
])
def test_bad_options_name_the_option(kwargs, option):
    with pytest.raises(OptionError) as err:
        InferOptions.from_kwargs(**kwargs)
    assert err.value.option == option and str(err.value).startswith(f"{option}: ")


def test_options_that_need_something_missing(cnn_ckpt, scene):
    with pytest.raises(OptionError, match="mask_unlabeled"):
        infer_scene(cnn_ckpt, scene.cube.data, mask_unlabeled=True, progress=False)
    with pytest.raises(OptionError, match="out"):
        infer_scene(cnn_ckpt, scene.cube.data, devices=2, strategy="ddp")


def test_non_finite_pixels_are_refused_when_the_pipeline_leaves_them(cnn_ckpt, scene):
    import dataclasses

    from hsi.errors import NonFiniteInputError
    from hsi.preprocess import PCA, PerBandMinMax, Pipeline

    cube = scene.cube.data.copy()
    # a pipeline without a fill step, as a hand-made model could have
    model = load_checkpoint(cnn_ckpt)
    bare = Pipeline([PerBandMinMax(), PCA(6)]).fit(cube, sample_mask=scene.labels > 0)
    model = dataclasses.replace(model, pipeline=bare)
    cube[20, 7, 3] = np.inf
    with pytest.raises(NonFiniteInputError, match=r"1 pixel\(s\) with NaN or infinite values"):
        infer_scene(model, cube, tile=12, overlap=0, accelerator="cpu", progress=False)


def test_format_png_alone_writes_only_the_previews_and_gtiff_alone_none(cnn_ckpt, tmp_path, monkeypatch):
    """The PNG previews are a format of their own: chosen alone they are the only maps; left out, none is drawn
    and the tile pass keeps no false-colour bands for them."""
    import hsi.viz

    previews = {"map.png", "false_color.png", "confidence.png"}
    result = infer_scene(cnn_ckpt, scene="synthetic", out=tmp_path / "p", format=("png",), accelerator="cpu",
                         progress=False)
    assert set(result.files) == previews | {"metrics.json", "inference.json"}
    assert result.labels is not None  # the map is still returned, though no npy file keeps it
    drawn = []
    for name in ("plot_class_map", "plot_false_color", "plot_confidence"):
        monkeypatch.setattr(hsi.viz, name, lambda *a, _name=name, **kw: drawn.append(_name))
    result = infer_scene(cnn_ckpt, scene="synthetic", out=tmp_path / "g", format=("gtiff",), accelerator="cpu",
                         progress=False)
    assert not set(result.files) & previews and drawn == []
    assert json.loads((tmp_path / "g" / "inference.json").read_text())["rgb_bands"] is None


def test_the_default_formats_need_the_disk_space_they_needed_before():
    """``space_needed`` sums the chosen sinks; for the default (every format) the total is the one of before the
    sinks: the maps and their false-colour scratch, the ENVI copy, 4 MiB for images and JSON, and the GeoTIFFs."""
    from math import ceil

    from hsi.infer.write import space_needed
    from hsi.viz import preview_step

    h, w, k = 3000, 2000, 5
    px, step = h * w, preview_step((h, w))
    rgb = ceil(h / step) * ceil(w / step) * 3 * 4
    for probabilities in (False, True):
        maps = px * (1 + 4) + (px * k * 2 if probabilities else 0)
        tifs = [1, 4] + ([4 * k] if probabilities else [])
        before = maps + rgb + px + (4 << 20) + px * (sum(tifs) + max(tifs))
        assert space_needed((h, w), k, probabilities) == before
    # gtiff alone: no preview scratch, no images, no ENVI copy
    assert space_needed((h, w), k, False, ("gtiff",)) == px * 5 + (1 << 20) + px * (1 + 4 + 4)


def test_the_space_needed_is_checked_free_beside_out_before_the_tile_pass(cnn_ckpt, scene, tmp_path, monkeypatch):
    from hsi import transaction
    from hsi.infer import api
    from hsi.infer.write import space_needed

    asked, events = [], []
    monkeypatch.setattr(transaction, "require_free_space",
                        lambda folder, needed, what: asked.append((folder, needed, what)) or events.append("check"))
    tile_pass = api._tile_pass
    monkeypatch.setattr(api, "_tile_pass", lambda *a, **k: events.append("tiles") or tile_pass(*a, **k))
    out = tmp_path / "out"
    infer_scene(cnn_ckpt, scene="synthetic", out=out, format=("gtiff",), accelerator="cpu", progress=False)
    h, w = scene.labels.shape
    assert asked == [(out, space_needed((h, w), 4, False, ("gtiff",)), f"the hsi infer outputs of a {h} x {w} map")]
    assert events == ["check", "tiles"]
