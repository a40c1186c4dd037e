"""Dense tiles blended == one untiled pass; patch-centre maps == the DataModule's predict loader."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from hsi.infer import infer_scene, load_checkpoint


def untiled_dense_probs(model, cube: np.ndarray) -> np.ndarray:
    """(H, W, K) softmax of one forward_dense over the whole transformed, reflect-padded scene."""
    r = model.halo
    x = np.pad(model.pipeline.transform(cube), ((r, r), (r, r), (0, 0)), mode=model.padding)
    with torch.no_grad():
        logits = model.net.eval().forward_dense(torch.from_numpy(x).permute(2, 0, 1)[None])
    return torch.softmax(logits, 1)[0, :, r:-r, r:-r].permute(1, 2, 0).numpy()


@pytest.fixture(scope="module")
def fcn_model(fcn_ckpt):
    return load_checkpoint(fcn_ckpt)


@pytest.mark.parametrize(("tile", "overlap", "blend"), [
    (8, 3, "gaussian"),   # 8 divides neither 36 nor 30
    (16, 4, "hann"),
    (11, 5, "mean"),
    (12, 0, "gaussian"),  # no overlap, tiles that divide the height only
    (64, 8, "hann"),      # one tile larger than the scene
])
def test_tiled_blended_equals_untiled(fcn_model, scene, tile, overlap, blend):
    assert fcn_model.dense and fcn_model.halo >= 1
    cube = scene.cube.data
    ref = untiled_dense_probs(fcn_model, cube)
    got = infer_scene(fcn_model, cube, tile=tile, overlap=overlap, blend=blend, probabilities=True,
                      accelerator="cpu", progress=False)
    assert got.labels.shape == cube.shape[:2]
    np.testing.assert_allclose(got.confidence, ref.max(-1), atol=1e-5)
    np.testing.assert_allclose(got.probabilities.astype(np.float32), ref, atol=2e-3)  # float16 storage
    # labels agree wherever the top two classes are not a float tie
    top2 = np.sort(ref, axis=-1)[..., -2:]
    clear = (top2[..., 1] - top2[..., 0]) > 1e-4
    assert clear.mean() > 0.95
    np.testing.assert_array_equal(got.labels[clear], ref.argmax(-1)[clear] + 1)


def test_tta_averages_the_flipped_passes(fcn_model, scene):
    cube = scene.cube.data
    flips = [lambda a: a, lambda a: a[:, ::-1], lambda a: a[::-1], lambda a: a[::-1, ::-1]]
    ref = np.mean([f(untiled_dense_probs(fcn_model, np.ascontiguousarray(f(cube)))) for f in flips], axis=0)
    got = infer_scene(fcn_model, cube, tile=16, overlap=6, tta=True, accelerator="cpu", progress=False)
    np.testing.assert_allclose(got.confidence, ref.max(-1), atol=1e-5)


@pytest.mark.parametrize(("ckpt_fixture", "data", "halo"), [
    ("cnn_ckpt", {"pca": 6}, 2),                # 5 x 5 windows cut by the gather
    ("spectral_ckpt", {"patch_size": 1}, 0),    # 1 x 1 windows: the pixel itself
])
def test_patch_centre_labels_equal_the_datamodule_predict_loader(request, ckpt_fixture, data, halo, dm_factory):
    import lightning.pytorch as pl

    from hsi.training import HSIClassifier

    ckpt = request.getfixturevalue(ckpt_fixture)
    task = HSIClassifier.load_from_checkpoint(ckpt, map_location="cpu")
    dm = dm_factory(predict_on="labeled", **data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                             enable_model_summary=False)
        out = trainer.predict(task, datamodule=dm, ckpt_path=ckpt)  # the checkpoint's split and pipeline
    probs = torch.cat([o["probs"] if isinstance(o, dict) else o for o in out]).numpy()
    coords = dm.predict_dataset.coords
    assert len(coords) == len(probs)

    model = load_checkpoint(ckpt)
    assert not model.dense and model.halo == halo
    got = infer_scene(model, scene="synthetic", tile=7, overlap=0, batch_size=50, accelerator="cpu", progress=False)
    train = dm.split.train[coords[:, 0], coords[:, 1]]
    assert train.sum() > 50
    np.testing.assert_array_equal(got.labels[coords[train, 0], coords[train, 1]], probs[train].argmax(1) + 1)
    np.testing.assert_allclose(got.confidence[coords[:, 0], coords[:, 1]], probs.max(1), atol=1e-5)
    assert got.metrics["test"]["pixels"] == int(dm.split.test.sum())


def test_prediction_writer_paints_the_infer_scene_map(cnn_ckpt, dm_factory, tmp_path):
    import lightning.pytorch as pl

    from hsi.infer.prediction_writer import ClassMapWriter
    from hsi.training import HSIClassifier

    task = HSIClassifier.load_from_checkpoint(cnn_ckpt, map_location="cpu")
    dm = dm_factory(pca=6, predict_on="all", batch_size=128)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                             enable_model_summary=False, callbacks=[ClassMapWriter(str(tmp_path))])
        trainer.predict(task, datamodule=dm, ckpt_path=cnn_ckpt, return_predictions=False)
    got = infer_scene(load_checkpoint(cnn_ckpt), scene="synthetic", tile=9, overlap=0, accelerator="cpu",
                      progress=False)
    painted = np.load(tmp_path / "labels.npy")
    np.testing.assert_allclose(np.load(tmp_path / "confidence.npy"), got.confidence, atol=1e-5)
    assert (painted >= 1).all() and (painted == got.labels).mean() > 0.999  # float ties aside


def test_the_callers_cube_is_left_as_it_was(fcn_model, scene):
    # blocks are preprocessed in place: they must be copies, never views of the caller's array
    cube = scene.cube.data.copy()
    infer_scene(fcn_model, cube, tile=16, overlap=0, accelerator="cpu", progress=False)
    np.testing.assert_array_equal(cube, scene.cube.data)
