"""The fused host pipeline of inference equals the general one: read and scale in one pass,
edge-strip padding, labels and confidence from logits, windows copied into the batch buffer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from hsi.infer.blocks import BandSample, load_scaled_block, preprocess_block
from hsi.infer.predict import TilePredictor, enumerate_runs, maps_from_scores
from hsi.infer.sources import ArraySource, read_padded_block
from hsi.infer.windows import block_plan, fill_strips
from hsi.preprocess import make_pipeline
from hsi.preprocess._base import nodata_mask

H, W, C = 23, 19, 6


def _cube(dtype=np.float32, nan: bool = True) -> np.ndarray:
    rng = np.random.default_rng(3)
    cube = (100 + 50 * rng.random((H, W, C))).astype(dtype)
    if nan:
        cube[2, 3, 1] = np.nan  # an edge pixel: reflected into the margin
        cube[10, 10, :] = np.inf
    return cube


def _sample(rows: tuple[int, int], cols: tuple[int, int]) -> BandSample:
    """Bands 0, 2 and 4 of every 2nd row from the 2nd and every 3rd column: rows kept across chunk edges."""
    return BandSample([0, 2, 4], np.arange(1, rows[1] - rows[0], 2), np.arange(0, cols[1] - cols[0], 3))


def _sampled(tile: np.ndarray) -> np.ndarray:
    """What :func:`_sample` keeps of a tile's raw pixels, by plain slicing."""
    return tile[1::2, ::3][..., [0, 2, 4]].copy()


TILES = [((0, 8), (0, 8)), ((8, 16), (5, 13)), ((15, 23), (11, 19)), ((0, 23), (0, 19)), ((4, 9), (14, 19))]


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "edge", "constant"])
@pytest.mark.parametrize("scaling", ["minmax", "standardize"])
@pytest.mark.parametrize(("rows", "cols"), TILES)
def test_fused_read_and_scale_equals_read_then_scale(mode, scaling, rows, cols, monkeypatch):
    monkeypatch.setattr("hsi.infer.blocks._CHUNK_BYTES", 2 * W * C * 4)  # a few rows per chunk, as on a real scene
    cube = _cube()
    pipe = make_pipeline(scaling=scaling, fill_nonfinite="median").fit(_cube(nan=False))
    halo = 3
    src = ArraySource(cube)
    raw, outside = read_padded_block(src, rows, cols, halo, mode)
    tile = (slice(halo, halo + rows[1] - rows[0]), slice(halo, halo + cols[1] - cols[0]))
    want_nodata = nodata_mask(raw[tile])
    want_rgb = _sampled(raw[tile])
    want = preprocess_block(pipe, raw, outside, "test")
    out = np.full_like(want, -7.0)
    block, nodata, rgb = load_scaled_block(src, rows, cols, halo, mode, pipe, out, _sample(rows, cols))
    assert block is out
    np.testing.assert_array_equal(block, want)  # bit for bit
    np.testing.assert_array_equal(rgb, want_rgb)
    if want_nodata is None:
        assert nodata is None
    else:
        np.testing.assert_array_equal(nodata, want_nodata)


def _scene_source(kind: str, cube: np.ndarray, folder):
    """The cube as an array, a ``.npy`` file (read with ``preadv``) or an HDF5 dataset (``read_direct``)."""
    import h5py

    from hsi.infer.sources import open_scene_source

    if kind == "array":
        return ArraySource(cube)
    if kind == "npy":
        np.save(folder / "cube.npy", cube)
        return open_scene_source(folder / "cube.npy")
    with h5py.File(folder / "cube.h5", "w") as f:
        f.create_dataset("cube", data=cube, chunks=(4, 4, C))
    return open_scene_source(folder / "cube.h5", "cube", "HWC")


@pytest.mark.parametrize("kind", ["array", "npy", "h5"])
@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("scaling", ["minmax", "standardize"])
def test_every_read_and_either_library_give_the_block_bit_for_bit(kind, threads, scaling, tmp_path, monkeypatch):
    """Views, reads into the block (rows re-read after a NaN chunk) and torch's threads all equal read-then-scale."""
    for name in ("_CHUNK_BYTES", "_THREADED_CHUNK_BYTES"):
        monkeypatch.setattr(f"hsi.infer.blocks.{name}", 3 * W * C * 4)
    cube = _cube()
    pipe = make_pipeline(scaling=scaling, fill_nonfinite="median").fit(_cube(nan=False))
    src = _scene_source(kind, cube, tmp_path)
    out = np.full((14, 14, C), -7.0, np.float32)
    assert bool(getattr(src, "can_read_into", lambda _: False)(out)) == (kind != "array")
    for rows, cols in [((0, 8), (0, 8)), ((8, 16), (5, 13)), ((15, 23), (11, 19))]:
        raw, outside = read_padded_block(ArraySource(cube), rows, cols, 3, "reflect")
        want_rgb, want_nodata = _sampled(raw[3:-3, 3:-3]), nodata_mask(raw[3:-3, 3:-3])
        want = preprocess_block(pipe, raw, outside, "test")  # in place: ``raw`` is preprocessed
        block, nodata, rgb = load_scaled_block(src, rows, cols, 3, "reflect", pipe, out, _sample(rows, cols), threads)
        np.testing.assert_array_equal(block, want)
        np.testing.assert_array_equal(rgb, want_rgb)
        if want_nodata is None:
            assert nodata is None
        else:
            np.testing.assert_array_equal(nodata, want_nodata)
    src.close()


@pytest.mark.parametrize("kind", ["array", "npy", "h5", "int16"])
@pytest.mark.parametrize("mode", ["reflect", "constant"])
@pytest.mark.parametrize("scaling", ["minmax", "minmax-clip", "standardize"])
def test_preprocessing_on_the_device_gives_the_host_block_bit_for_bit(kind, mode, scaling, tmp_path):
    """The accelerator's path, run on the CPU: the host reads, torch scales in place and fills the margin."""
    from hsi.infer.blocks import load_block_on_device

    cube = _cube(nan=False)
    if kind == "int16":
        cube, kind = (cube * 10).astype(np.int16), "array"
    fit = cube.astype(np.float32)[:, :10]  # the rest of the scene lies outside the fitted range: clipping matters
    if scaling == "minmax-clip":  # a shift, and clipping
        pipe = make_pipeline(scaling="minmax", fill_nonfinite="median", feature_range=(-1.0, 1.0))
        pipe.steps[-1].clip = True
    else:
        pipe = make_pipeline(scaling=scaling, fill_nonfinite="median")
    pipe.fit(fit)
    src = _scene_source(kind, cube, tmp_path)
    host_out, device_out = np.empty((14, 14, C), np.float32), np.full((14, 14, C), -7.0, np.float32)
    for rows, cols in [((0, 8), (0, 8)), ((8, 16), (5, 13)), ((15, 23), (11, 19))]:
        want, _, want_rgb = load_scaled_block(src, rows, cols, 3, mode, pipe, host_out, _sample(rows, cols))
        block, nodata, rgb = load_block_on_device(src, rows, cols, 3, mode, pipe, device_out, torch.device("cpu"),
                                                  _sample(rows, cols))
        assert rgb.shape == (len(range(1, rows[1] - rows[0], 2)), len(range(0, cols[1] - cols[0], 3)), 3)
        assert isinstance(block, torch.Tensor) and nodata is None
        np.testing.assert_array_equal(block.numpy(), want)
        np.testing.assert_array_equal(rgb, want_rgb)
    src.close()


def test_a_block_not_finite_on_the_device_goes_back_to_the_host(tmp_path):
    from hsi.infer.blocks import load_block_on_device

    pipe = make_pipeline(scaling="minmax", fill_nonfinite="median").fit(_cube(nan=False))
    src = _scene_source("npy", _cube(), tmp_path)
    out = np.empty((14, 14, C), np.float32)
    assert load_block_on_device(src, (0, 8), (0, 8), 3, "reflect", pipe, out, torch.device("cpu")) is None  # NaN
    assert load_block_on_device(src, (15, 23), (0, 8), 3, "reflect", pipe, out, torch.device("cpu")) is not None
    pca = make_pipeline(scaling="minmax", pca=3).fit(_cube(nan=False))
    assert load_block_on_device(src, (15, 23), (0, 8), 3, "reflect", pca, out, torch.device("cpu")) is None
    src.close()


def test_an_hdf5_file_not_stored_as_it_comes_out_is_read_window_by_window(tmp_path):
    """Integer data (cast and scaled on the way out) are not read into the block; the result is the same."""
    import h5py

    from hsi.infer.sources import open_scene_source

    cube = (_cube(nan=False) * 10).astype(np.int16)
    with h5py.File(tmp_path / "cube.h5", "w") as f:
        f.create_dataset("cube", data=cube)
    src = open_scene_source(tmp_path / "cube.h5", "cube", "HWC")
    pipe = make_pipeline(scaling="minmax").fit(cube.astype(np.float32))
    out = np.empty((14, 14, C), np.float32)
    assert not src.can_read_into(out)
    want = preprocess_block(pipe, *read_padded_block(ArraySource(cube), (0, 8), (0, 8), 3, "reflect"), "test")
    np.testing.assert_array_equal(load_scaled_block(src, (0, 8), (0, 8), 3, "reflect", pipe, out)[0], want)
    src.close()


def test_fused_read_converts_integer_cubes_like_read_window():
    cube = (_cube(nan=False) * 10).astype(np.uint16)
    pipe = make_pipeline(scaling="minmax").fit(cube.astype(np.float32))
    src = ArraySource(cube)
    raw, outside = read_padded_block(src, (0, 8), (0, 8), 2, "reflect")
    want = preprocess_block(pipe, raw, outside, "test")
    block, nodata, _ = load_scaled_block(src, (0, 8), (0, 8), 2, "reflect", pipe, np.empty_like(want))
    np.testing.assert_array_equal(block, want)
    assert nodata is None


def test_fused_read_hands_back_what_it_cannot_do():
    cube = _cube()
    src = ArraySource(cube)
    out = np.empty((14, 14, C), np.float32)
    no_fill = make_pipeline(scaling="minmax").fit(_cube(nan=False))
    assert load_scaled_block(src, (0, 8), (0, 8), 3, "reflect", no_fill, out) is None  # NaN after scaling
    pca = make_pipeline(scaling="minmax", pca=3, fill_nonfinite="median").fit(_cube(nan=False))
    assert load_scaled_block(src, (0, 8), (0, 8), 3, "reflect", pca, out) is None  # bands change
    filled = make_pipeline(scaling="minmax", fill_nonfinite="median").fit(_cube(nan=False))
    assert load_scaled_block(src, (0, 8), (0, 8), 3, "wrap", filled, out) is None  # margin from the far side


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "edge"])
def test_edge_strip_padding_equals_numpy_pad_of_the_whole_scene(mode):
    cube = _cube(nan=False)
    halo = 4
    padded = np.pad(cube, ((halo, halo), (halo, halo), (0, 0)), mode=mode)
    for rows, cols in TILES:
        plan = block_plan(rows, cols, halo, H, W, mode)
        block = np.full((rows[1] - rows[0] + 2 * halo, cols[1] - cols[0] + 2 * halo, C), np.nan, np.float32)
        block[plan.top : plan.bottom, plan.left : plan.right] = cube[slice(*plan.scene_rows), slice(*plan.scene_cols)]
        fill_strips(block, plan)
        np.testing.assert_array_equal(block, padded[rows[0] : rows[1] + 2 * halo, cols[0] : cols[1] + 2 * halo])


def test_confidence_from_logits_equals_the_largest_softmax_probability():
    logits = torch.randn(50, 3, 4, 7, generator=torch.Generator().manual_seed(0)) * 4
    logits[0, 0, 0, :] = 0.0  # a tie: the first class wins, as numpy's argmax
    logits = logits.permute(0, 3, 1, 2).contiguous().permute(0, 2, 3, 1)  # a strided view, as a network gives
    probs = torch.softmax(logits, dim=-1)
    labels, confidence = maps_from_scores(logits, True, np.dtype(np.uint8))
    assert labels.dtype == np.uint8 and confidence.dtype == np.float32 and labels.shape == (50, 3, 4)
    np.testing.assert_array_equal(labels, probs.numpy().argmax(axis=-1) + 1)
    np.testing.assert_allclose(confidence, probs.numpy().max(axis=-1), rtol=2e-6)
    zero = probs.clone()
    zero[1] = 0.0  # a no-data row of probabilities: label 0
    labels, confidence = maps_from_scores(zero, False, np.dtype(np.uint16))
    assert labels.dtype == np.uint16 and (labels[1] == 0).all() and (confidence[1] == 0).all()
    np.testing.assert_array_equal(labels[2:], probs.numpy()[2:].argmax(axis=-1) + 1)


def test_maps_on_torch_threads_equal_numpys():
    logits = torch.randn(300, 9, generator=torch.Generator().manual_seed(4)) * 5
    logits[0] = 1.0  # a tie: the first class wins in both
    for from_logits in (True, False):
        scores = logits if from_logits else torch.softmax(logits, dim=-1)
        labels, confidence = maps_from_scores(scores, from_logits, np.dtype(np.uint8), threads=True)
        want_labels, want_conf = maps_from_scores(scores, from_logits, np.dtype(np.uint8))
        np.testing.assert_array_equal(np.asarray(labels), want_labels)
        np.testing.assert_allclose(np.asarray(confidence), want_conf, rtol=2e-6)
        assert labels[0] == 1


def test_confidence_on_a_device_is_computed_by_torch_alike(monkeypatch):
    """The device branch of :func:`maps_from_scores` (run here on a CPU tensor that claims another device)."""
    logits = torch.randn(40, 5, generator=torch.Generator().manual_seed(2)) * 3

    class OnDevice(torch.Tensor):
        @property
        def device(self):
            return torch.device("meta")

    labels, confidence = maps_from_scores(logits.as_subclass(OnDevice), True, np.dtype(np.uint8))
    want_labels, want_conf = maps_from_scores(logits, True, np.dtype(np.uint8))
    np.testing.assert_array_equal(labels.as_subclass(torch.Tensor).numpy(), want_labels)
    np.testing.assert_allclose(confidence.as_subclass(torch.Tensor).numpy(), want_conf, rtol=2e-6)


def test_runs_cover_the_indices_row_by_row():
    flat = np.array([0, 1, 2, 4, 5, 6, 7, 8, 13])
    runs = list(enumerate_runs(flat, 5))
    assert runs == [(0, (0, 0, 3)), (3, (0, 4, 1)), (4, (1, 0, 4)), (8, (2, 3, 1))]


class _Centre(torch.nn.Module):
    """A patch classifier whose logits depend on every pixel of the window (position-weighted)."""

    num_classes = 4

    def __init__(self, c: int, p: int) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(c * p * p, 4)
        torch.nn.init.normal_(self.lin.weight, generator=torch.Generator().manual_seed(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x.reshape(len(x), -1))


@pytest.mark.parametrize("with_nodata", [False, True])
def test_batch_gather_equals_per_window_extraction(with_nodata):
    from hsi.data.patches import gather_windows

    p, halo = 5, 2
    rng = np.random.default_rng(0)
    block = rng.random((9 + 2 * halo, 7 + 2 * halo, 3)).astype(np.float32)
    nodata = (rng.random((9, 7)) < 0.3) if with_nodata else None
    pred = TilePredictor(_Centre(3, p), dense=False, halo=halo, patch_size=p, device=torch.device("cpu"),
                         batch_size=10)
    seen = []
    for idx, x in pred._window_batches(block, nodata):
        coords = np.stack(np.unravel_index(idx, (9, 7)), axis=1)
        want = gather_windows(block, coords, p)
        np.testing.assert_array_equal(x.numpy(), want)
        seen.append(idx)
    keep = np.ones((9, 7), bool) if nodata is None else ~nodata
    np.testing.assert_array_equal(np.concatenate(seen), np.flatnonzero(keep))
    probs = pred(block, nodata)  # the maps are the probabilities' argmax and maximum
    labels, confidence = pred.maps(block, nodata)
    want_labels = np.where(probs.max(-1) > 0, probs.argmax(-1) + 1, 0)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_allclose(confidence, probs.max(-1), rtol=2e-6)


@pytest.mark.parametrize("name", ["fcn", "ssnet"])
@pytest.mark.parametrize("tta", [False, True])
def test_dense_forward_in_strips_of_rows_gives_the_whole_blocks_outputs(name, tta, monkeypatch):
    """Strips of 5 tile rows (the last one shorter) plus the margin: the tile's scores and maps.

    Equal up to the convolution library's rounding: it may block a narrow strip's sums
    otherwise than the whole block's (seen at 15 columns, not at 262).
    """
    import hsi.infer.predict as predict
    from hsi.models import build_model

    torch.manual_seed(0)
    net = build_model(name, num_bands=6, num_classes=4, patch_size=7).eval()
    halo = net.receptive_radius
    block = np.random.default_rng(3).normal(size=(17 + 2 * halo, 9 + 2 * halo, 6)).astype(np.float32)
    pred = TilePredictor(net, dense=True, halo=halo, patch_size=7, device=torch.device("cpu"), tta=tta)
    with torch.no_grad():
        whole = pred.net.forward_dense(torch.from_numpy(block)[None].permute(0, 3, 1, 2))
    calls = []
    real = pred.net.forward_dense
    monkeypatch.setattr(pred.net, "forward_dense", lambda x: calls.append(x.shape[2]) or real(x))
    monkeypatch.setattr(predict, "DENSE_STRIP_ROWS", 5)
    probs = pred(block)
    labels, confidence = pred.maps(block)
    assert calls[:4] == [5 + 2 * halo] * 3 + [2 + 2 * halo]  # the strips, each with its margin
    monkeypatch.setattr(predict, "DENSE_STRIP_ROWS", 10_000)
    calls.clear()
    np.testing.assert_allclose(probs, pred(block), rtol=1e-6, atol=1e-7)
    assert calls[0] == block.shape[0]  # the whole block at once
    want_labels, want_conf = pred.maps(block)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_allclose(confidence, want_conf, rtol=1e-6)
    if not tta:
        want = torch.softmax(whole, dim=1)[0, :, halo:-halo, halo:-halo].permute(1, 2, 0).numpy()
        np.testing.assert_allclose(probs, want, rtol=1e-6, atol=1e-7)


def _untrained(name: str, cube: np.ndarray, patch_size: int = 5):
    from hsi.infer import InferenceModel
    from hsi.models import build_model
    from hsi.scenes.palette import make_palette

    torch.manual_seed(0)
    net = build_model(name, num_bands=cube.shape[2], num_classes=4, patch_size=patch_size).eval()
    pipe = make_pipeline(scaling="minmax", fill_nonfinite="median").fit(_cube(nan=False))
    return InferenceModel(net=net, pipeline=pipe, patch_size=patch_size, padding="reflect", class_names=list("abcd"),
                          palette=make_palette(4), label_values=[1, 2, 3, 4], wavelengths=None,
                          num_bands_in=cube.shape[2], source="untrained")


@pytest.mark.parametrize("name", ["fcn", "cnn2d"])
def test_read_ahead_ring_and_maps_path_give_the_maps_of_the_probabilities(name, monkeypatch):
    from hsi.infer import infer_scene

    cube = _cube()
    model = _untrained(name, cube)
    with_probs = infer_scene(model, cube, tile=8, probabilities=True, progress=False)
    results = []
    for depth in (0, 2):  # inline, and two reader threads over a ring of three buffers
        monkeypatch.setattr("hsi.infer.engine.prefetch_depth", lambda _bytes, d=depth: d)
        results.append(infer_scene(model, cube, tile=8, progress=False))
    np.testing.assert_array_equal(results[0].labels, results[1].labels)
    # inline, the confidence is reduced by torch (threads), beside reader threads by numpy: the sum's order differs
    np.testing.assert_allclose(results[0].confidence, results[1].confidence, rtol=1e-6)
    probs = with_probs.probabilities.astype(np.float32)
    assert results[0].labels[10, 10] == 0 and results[0].confidence[10, 10] == 0  # no-data pixel
    np.testing.assert_array_equal(results[0].labels, with_probs.labels)
    np.testing.assert_allclose(results[0].confidence, with_probs.confidence, rtol=2e-6)
    assert probs.shape == (H, W, 4)


def test_a_run_with_blocks_preprocessed_on_the_device_gives_the_same_maps(monkeypatch):
    """run_tiles with ``scales_on_device`` (as on a GPU), here on the CPU: the same maps, no-data pixels included."""
    from hsi.infer import infer_scene
    from hsi.infer.predict import TilePredictor

    cube = _cube()
    model = _untrained("fcn", cube, patch_size=7)  # holds fcn's receptive field: the dense path
    assert model.dense
    want = infer_scene(model, cube, tile=8, progress=False)
    called = []
    real = TilePredictor._dense_scores

    def spy(self, block, logits_ok):
        called.append(isinstance(block, torch.Tensor))
        return real(self, block, logits_ok)

    monkeypatch.setattr(TilePredictor, "scales_on_device", property(lambda self: self.dense))
    monkeypatch.setattr(TilePredictor, "_dense_scores", spy)
    got = infer_scene(model, cube, tile=8, progress=False)
    assert any(called) and not all(called)  # tiles with a NaN or inf pixel took the host path
    np.testing.assert_array_equal(got.labels, want.labels)
    np.testing.assert_array_equal(got.confidence, want.confidence)


def test_npy_pages_released_by_rows_read_back_the_same(tmp_path, monkeypatch):
    """A file ``preadv`` cannot read as is (stored C x H x W) is viewed through its memory map, released by rows."""
    from hsi.infer.sources import NpySource

    monkeypatch.setattr("hsi.infer.blocks._CHUNK_BYTES", 2 * W * C * 4)
    cube = _cube(nan=False)
    np.save(tmp_path / "cube.npy", np.ascontiguousarray(cube.transpose(2, 0, 1)))
    pipe = make_pipeline(scaling="standardize").fit(cube)
    src = NpySource(tmp_path / "cube.npy", layout="CHW")
    out = np.empty((14, 14, C), np.float32)
    assert not src.can_read_into(out)
    for rows, cols in [((0, 8), (0, 8)), ((15, 23), (11, 19)), ((0, 8), (0, 8))]:
        want = preprocess_block(pipe, *read_padded_block(ArraySource(cube), rows, cols, 3, "reflect"), "test")
        block, _, _ = load_scaled_block(src, rows, cols, 3, "reflect", pipe, out)
        np.testing.assert_array_equal(block, want)
    src.close()


@pytest.mark.parametrize("path", ["fused", "reader threads", "general", "device", "overlap"])
def test_the_tile_pass_keeps_the_false_colour_bands_of_the_preview_pixels_only(path, tmp_path, monkeypatch):
    """``results.rgb`` holds the raw bands of every 3rd row and column, as the preview draws them, on every path."""
    from hsi.infer import infer_scene
    from hsi.infer.predict import TilePredictor
    from hsi.io.bands import pick_rgb_bands

    monkeypatch.setattr("hsi.viz.preview_step", lambda shape: 3)
    drawn = {}

    def capture(bands, path=None, *, title=None, georef=None, shape=None):
        drawn["bands"], drawn["shape"] = np.array(bands), shape
        Path(path).write_bytes(b"")  # the png format must write every file it declares

    monkeypatch.setattr("hsi.viz.plot_false_color", capture)
    cube = _cube()
    model = _untrained("fcn", cube, patch_size=7)
    if path == "reader threads":
        monkeypatch.setattr("hsi.infer.engine.prefetch_depth", lambda _bytes: 2)
    if path == "general":
        monkeypatch.setattr("hsi.infer.engine.TileJob.block_buffer", lambda self, device="cpu": None)
    if path == "device":
        monkeypatch.setattr(TilePredictor, "scales_on_device", property(lambda self: self.dense))
    infer_scene(model, cube, out=tmp_path / "out", tile=8, overlap=4 if path == "overlap" else 0, progress=False)
    assert drawn["shape"] == (H, W)
    np.testing.assert_array_equal(drawn["bands"], cube[::3, ::3][..., pick_rgb_bands(None, C)])
