"""What inference takes from a training checkpoint (or a classical run's ``model.npz``): the
network, the fitted preprocessing, the padding, the classes and palette, the split, and the
band contract of the input cube.

Nothing else is read: the training data are not needed. :func:`check_cube` compares a cube's
band count and wavelengths with the checkpoint's before any compute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hsi.errors import BandMismatchError, CheckpointError, WavelengthError

__all__ = ["InferenceModel", "check_cube", "load_checkpoint"]

#: largest band-centre difference (nm) still taken as the same band
WAVELENGTH_TOLERANCE_NM = 1.0


@dataclass
class InferenceModel:
    """A trained network with everything needed to apply it to a new cube.

    Attributes
    ----------
    net : torch.nn.Module
        The classifier in eval mode: an ``hsi.models`` network, or a classical model
        wrapped by :class:`hsi.infer.classical.ClassicalNet`.
    pipeline : hsi.preprocess.Pipeline
        Preprocessing fitted on the training pixels (applied per window).
    patch_size : int
        Window side ``P`` the network was trained on.
    padding : str
        Border padding of the training cube.
    class_names : list[str]
        Names of classes ``1..K``.
    palette : (K + 1, 3) uint8 array
        Colours; row 0 is the background.
    label_values : list[int]
        Original ids of classes ``1..K`` in the training label file.
    wavelengths : (C,) float64 array or None
        Band centres (nm) of the training cube before preprocessing.
    num_bands_in : int
        Bands of the training cube before preprocessing.
    split_state : dict or None
        The training split (``hsi.preprocess.Split.to_state``), for test-pixel metrics.
    scene_name : str
        Name of the training scene.
    scene_options : dict
        The training DataModule's ``scene_options`` (regenerates the synthetic scene).
    data_arguments : dict
        All the training DataModule's arguments (``datamodule_hyper_parameters``), from which
        a registry scene's ``root`` and options are restored.
    source : str
        Where it was loaded from (for messages).
    georef : hsi.io.georef.GeoRef or None
        Where the training scene lies on the map (what its maps get when the scene's own
        source carries none).
    grid_fwhm : (C,) float64 array or None
        Band widths (nm) of the training bands: a cube on other bands is resampled onto
        them by spectral response when known.
    band_stats : dict or None
        The training pixels' band statistics after preprocessing
        (:class:`hsi.preprocess.shift.BandStats`), for the scene-shift check; None in
        checkpoints written before it.
    scene_band_stats : dict or None
        The same statistics over all the training scenes' valid pixels: a cube read on other bands
        (:mod:`hsi.infer.own_bands`) is matched to them band by band (by wavelength); None in
        checkpoints written before it.
    training_values : dict or None
        ``{"names", "units", "value_level", "classes"}`` of the training scenes (their units,
        typical raw value and trained classes), for the raw-value check and the scores.
    fit_per_scene : bool
        The checkpoint scaled every scene on its own valid pixels (a collection's
        ``preprocess: scene`` with ``split: scene``): a new scene's preprocessing is fitted
        the same way, on its own pixels, before it is classified.
    """

    net: torch.nn.Module
    pipeline: Any
    patch_size: int
    padding: str
    class_names: list[str]
    palette: np.ndarray
    label_values: list[int]
    wavelengths: np.ndarray | None
    num_bands_in: int
    split_state: dict[str, Any] | None = None
    scene_name: str = "scene"
    scene_options: dict[str, Any] | None = None
    data_arguments: dict[str, Any] = field(default_factory=dict)
    source: str = "model"
    georef: Any = None
    grid_fwhm: np.ndarray | None = None
    band_stats: dict[str, Any] | None = None
    scene_band_stats: dict[str, Any] | None = None
    training_values: dict[str, Any] | None = None
    fit_per_scene: bool = False

    @property
    def num_classes(self) -> int:
        """Number of classes ``K``."""
        return len(self.class_names)

    @property
    def dense(self) -> bool:
        """True for networks with ``forward_dense`` (whole tiles at once) trained on patches that hold their receptive field.

        A dense network trained on patches smaller than its receptive field (fcn at
        ``P = 5`` with radius 3) only ever saw the patch's zero padding beyond ``P // 2``;
        a dense pass would show it real neighbours there and predict other classes than
        training reported. Such checkpoints take the patch-centre path, which gives every
        pixel the training window itself.
        """
        if not (bool(getattr(self.net, "dense", False)) and hasattr(self.net, "forward_dense")):
            return False
        radius = int(getattr(self.net, "receptive_radius", self.patch_size // 2))
        return self.patch_size >= 2 * radius + 1

    @property
    def halo(self) -> int:
        """Margin each tile's input needs: the receptive radius (dense) or ``P // 2`` (patches)."""
        if self.dense:
            return int(getattr(self.net, "receptive_radius", self.patch_size // 2))
        return self.patch_size // 2

    def test_mask(self, shape: tuple[int, int]) -> np.ndarray | None:
        """The checkpoint's test pixels as an ``(H, W)`` mask, or None when the shape differs."""
        if not self.split_state:
            return None
        from hsi.preprocess import Split

        split = Split.from_state(self.split_state)
        return split.test if tuple(split.shape) == tuple(shape) else None


def load_checkpoint(path: str | Path) -> InferenceModel:
    """Read what a training run wrote: a deep checkpoint, or the ``model.npz`` of an svm/rf run.

    A deep checkpoint (``best.ckpt`` / ``last.ckpt``) gives the ``HSIClassifier``'s network;
    a classical ``model.npz`` gives the fitted model behind the same interface
    (:class:`hsi.infer.classical.ClassicalNet`, ``1 x 1`` windows). Both carry the
    ``HSIDataModule`` state (fitted pipeline, split, classes, palette, wavelengths).

    Raises
    ------
    CheckpointError
        No such file, neither a checkpoint nor a classical model file, or one without the
        ``HSIDataModule`` state (not written by ``hsi`` training).
    """
    from hsi.infer.classical import is_classical_file, read_classical_run

    path = Path(path)
    if path.is_file() and is_classical_file(path):
        net, state, dm_hp = read_classical_run(path)
    else:
        net, state, dm_hp = _read_deep(path)
    return _inference_model(net, state, dm_hp, path)


def _read_deep(path: Path) -> tuple[torch.nn.Module, dict[str, Any], dict[str, Any]]:
    """The network (eval mode), the ``HSIDataModule`` state and the DataModule arguments of a checkpoint."""
    from hsi.data.checkpoint import read_checkpoint
    from hsi.training import HSIClassifier

    raw = read_checkpoint(path, "checkpoint")
    state = raw.get("HSIDataModule")
    if not isinstance(state, dict) or "pipeline" not in state:
        keys = sorted(raw)
        raise CheckpointError(
            f"checkpoint {path}: no 'HSIDataModule' state with a fitted pipeline (found keys {keys}); "
            "use a checkpoint written by hsi training (best.ckpt / last.ckpt)"
        )
    _check_weights(raw, path)
    task = HSIClassifier.load_from_checkpoint(path, map_location="cpu")
    state = {**state, "class_names": list(state.get("class_names") or task.class_names)}
    return task.net.eval(), state, dict(raw.get("datamodule_hyper_parameters") or {})


def _inference_model(net: torch.nn.Module, state: dict[str, Any], dm_hp: dict[str, Any], path: Path) -> InferenceModel:
    """The :class:`InferenceModel` of a network and the ``HSIDataModule`` state it was trained with."""
    from hsi.preprocess import Pipeline

    names = list(state["class_names"])
    k = len(names)
    palette = state.get("palette")
    if palette is None:  # a state without one: the colours its scene would have
        from hsi.scenes.palette import scene_palette

        palette = scene_palette(names)
    wl = state.get("wavelengths")
    pipeline = Pipeline.from_state(state["pipeline"])
    return InferenceModel(
        net=net,
        pipeline=pipeline,
        patch_size=int(state["patch_size"]),
        padding=str(state.get("padding", "reflect")),
        class_names=names,
        palette=np.asarray(palette, dtype=np.uint8),
        label_values=[int(v) for v in state.get("label_values", range(1, k + 1))],
        wavelengths=None if wl is None else np.asarray(wl, dtype=np.float64),
        num_bands_in=int(state.get("num_bands_in", pipeline.n_bands_in_)),
        split_state=state.get("split"),
        scene_name=str(state.get("scene_name", path.stem)),
        scene_options=dict(dm_hp.get("scene_options") or {}),
        data_arguments=dict(dm_hp),
        source=str(path),
        georef=_georef(state.get("georef"), path),
        grid_fwhm=None if state.get("grid_fwhm") is None else np.asarray(state["grid_fwhm"], dtype=np.float64),
        band_stats=state.get("band_stats"),
        scene_band_stats=state.get("scene_band_stats"),
        training_values=state.get("training_values"),
        fit_per_scene=_fits_per_scene(state),
    )


def _fits_per_scene(state: dict[str, Any]) -> bool:
    """True when a collection's state scaled each scene on its own valid pixels (``preprocess: scene``, held-out
    scenes)."""
    collection = (state.get("collection") or {}).get("collection") or {}
    return collection.get("preprocess") == "scene" and collection.get("split") == "scene"


def _georef(value: Any, path: Path) -> Any:
    """The checkpoint's georeference, or None (a malformed one is refused naming the checkpoint)."""
    from hsi.errors import GeoRefError
    from hsi.io.georef import GeoRef

    try:
        return GeoRef.from_dict(value)
    except (GeoRefError, KeyError, TypeError) as err:
        raise CheckpointError(f"checkpoint {path}: its scene georeference is malformed ({err})") from err


def _check_weights(raw: dict[str, Any], path: Path) -> None:
    """Weights of another model than the checkpoint's settings say: one line naming both (and the file)."""
    from hsi.training.weights import check_weights_fit, expected_weights

    hparams = raw.get("hyper_parameters") or {}
    if all(hparams.get(k) is not None for k in ("model", "num_bands", "num_classes", "patch_size")):
        check_weights_fit(expected_weights(hparams), raw, hparams, f"checkpoint {path}")


def check_cube(model: InferenceModel, n_bands: int, wavelengths: Any, cube_name: str) -> None:
    """Refuse a cube whose bands differ from the checkpoint's (before any compute).

    Raises
    ------
    BandMismatchError
        Band counts differ; the message names both counts and both sources.
    WavelengthError
        Both carry wavelengths and some band centre differs by more than
        :data:`WAVELENGTH_TOLERANCE_NM`; the message names the first such band and both values.
    """
    if int(n_bands) != model.num_bands_in:
        raise BandMismatchError(
            f"cube {cube_name} has {n_bands} bands but checkpoint {model.source} was trained on "
            f"{model.num_bands_in} bands (before preprocessing)"
        )
    if wavelengths is None or model.wavelengths is None:
        return
    wl = np.asarray(wavelengths, dtype=np.float64)
    diff = np.abs(wl - model.wavelengths)
    if diff.max() > WAVELENGTH_TOLERANCE_NM:
        i = int(np.argmax(diff > WAVELENGTH_TOLERANCE_NM))
        raise WavelengthError(
            f"cube {cube_name} band {i} is at {wl[i]:.2f} nm but checkpoint {model.source} has it at "
            f"{model.wavelengths[i]:.2f} nm (tolerance {WAVELENGTH_TOLERANCE_NM} nm; "
            f"{int((diff > WAVELENGTH_TOLERANCE_NM).sum())} of {wl.size} bands differ)"
        )
