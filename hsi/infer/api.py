"""``infer_scene``: a checkpoint and a cube in, a classification map (and its files) out.

The one-scene worker behind :func:`hsi.infer.infer` (the entry for one scene or many, what
``hsi infer`` calls), and behind each scene of :func:`hsi.infer.many.infer_scenes`; called
directly it is :func:`hsi.infer.infer` with one scene, the same maps bit for bit.

Order of work: options checked, checkpoint read, cube opened (not loaded), its bands checked
against the checkpoint, ground truth read, output folder checked — all before any compute;
then one tile pass (one process, or several through Lightning), then the outputs.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hsi._roles import restore
from hsi.errors import (AssumedBandsWarning, CheckpointError, DatasetNotFoundError, DegenerateMapError, NoDataError,
                        OptionError, ShapeMismatchError, WavelengthError)
from hsi.infer.arrays import ResultArrays
from hsi.infer.checkpoint import InferenceModel, check_cube, load_checkpoint
from hsi.infer.engine import TileJob, run_tiles
from hsi.infer.metrics import check_not_degenerate, score_map
from hsi.infer.options import InferOptions
from hsi.infer.predict import TilePredictor, autocast_dtype
from hsi.infer.shift import SceneSample
from hsi.infer.sources import ArraySource, SceneSource, open_scene_source
from hsi.infer.truth import LabelMap, MatchedTruth, parse_class_mapping
from hsi.transaction import Transaction

__all__ = ["InferResult", "infer_scene"]


@dataclass
class InferResult:
    """What :func:`infer_scene` produced (on rank 0; other ranks get ``rank`` and nothing else).

    Attributes
    ----------
    labels : (H, W) uint8/uint16 array or None
        Class ids ``1..K`` (0 where masked); a read-only memory map when ``out`` was given.
    confidence : (H, W) float32 array or None
        Largest class probability.
    probabilities : (H, W, K) float16 array or None
        Per-class probabilities (``probabilities=True``).
    metrics : dict or None
        :func:`hsi.infer.metrics.map_metrics` when ground truth exists.
    class_names : list[str]
    palette : (K + 1, 3) uint8 array
    files : dict[str, Path]
        Files written into ``out`` by name.
    timings : dict[str, float]
        Seconds: ``tiles`` (the tile pass) and ``total``.
    rank : int
        Global rank of this process (0 unless run with several devices).
    nodata_pixels : int
        Pixels left unclassified because they are no-data (label 0, confidence 0).
    bands_note : str or None
        Set when a wavelength-aware network read the cube on its own bands instead of resampling it (what it did).
    """

    labels: np.ndarray | None
    confidence: np.ndarray | None
    probabilities: np.ndarray | None
    metrics: dict[str, Any] | None
    class_names: list[str]
    palette: np.ndarray
    files: dict[str, Path] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    rank: int = 0
    nodata_pixels: int = 0
    bands_note: str | None = None


def _device(accelerator: str) -> torch.device:
    if accelerator == "cpu":
        return torch.device("cpu")
    if accelerator in ("gpu", "cuda"):
        return torch.device("cuda")
    if accelerator == "mps":
        return torch.device("mps")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _open_source(model: InferenceModel, cube: Any, scene: str | None, root: str | None, cube_key: str | None,
                 layout: str | None, ignore_georef: bool = False, units: str | None = None,
                 scale: float | None = None) -> tuple[SceneSource, LabelMap | None]:
    """The scene's source and, for a registry scene, its label map (``ignore_georef``: no georeference read;
    ``units``/``scale``: what a cube file's values are, as :func:`hsi.io.open_cube` takes them)."""
    if (cube is None) == (scene is None):
        raise OptionError("cube", cube, "give exactly one of cube= (a file or array) and scene= (a registry name)")
    if cube is not None:
        source = open_scene_source(cube, cube_key, layout, georef="ignore" if ignore_georef else "check",
                                   units=units, scale=scale)
        if ignore_georef:
            source.georef = None
        return source, None
    for name, value in (("units", units), ("scale", scale)):
        if value is not None:
            raise OptionError(name, value, f"none with a registry scene ({scene!r} declares its own units); "
                              "they describe a cube file's values")
    from hsi.scenes import load_scene

    args = {"scene": scene, "root": root, "scene_options": {}}
    if scene in (model.scene_name, model.data_arguments.get("scene")):  # the checkpoint's own: its root and options
        saved = {k: model.data_arguments.get(k) for k in ("root", "scene_options") if k in model.data_arguments}
        given = {"root": root} if root is not None else {}
        args = restore({**args, **saved, "scene_options": model.scene_options}, given, (), f"checkpoint {model.source}")
    loaded = load_scene(scene, root=args["root"], **(args["scene_options"] or {}))
    georef = None if ignore_georef else loaded.cube.meta.get("georef")
    if georef is None and not ignore_georef and scene in (model.scene_name, model.data_arguments.get("scene")):
        georef = model.georef  # recorded at training (a scene regenerated, like synthetic, reads none)
    source = ArraySource(loaded.cube.data, loaded.cube.wavelengths, f"scene {scene!r}", georef)
    source.fwhm, source.units = loaded.cube.fwhm, loaded.cube.meta.get("units")
    names = {k: str(n) for k, n in enumerate(loaded.class_names, start=1)}
    return source, LabelMap(np.asarray(loaded.labels, dtype=np.int64), names, f"scene {scene!r}")


#: the training DataModule's arguments that name its scene (what inference restores without cube= or scene=)
SOURCE_ARGUMENTS = ("scene", "root", "scene_options", "cube_path", "cube_key", "layout", "labels_path", "labels_key",
                    "ignore_georef", "units", "scale")


def _checkpoint_scene(model: InferenceModel, given: dict[str, Any]) -> dict[str, Any]:
    """The scene a checkpoint was trained on, as ``infer_scene`` arguments (the given ones win).

    Parameters
    ----------
    model : InferenceModel
        Its ``data_arguments`` name the training scene: a registry ``scene`` (with ``root``
        and ``scene_options``) or a ``cube_path`` (with ``cube_key``, ``layout``,
        ``labels_path``, ``labels_key``).
    given : dict
        The source arguments the caller gave (None: not given), in the DataModule's names.

    Returns
    -------
    dict
        ``cube``, ``scene``, ``root``, ``cube_key``, ``layout``, ``labels``, ``labels_key``, ``ignore_georef``,
        ``units``, ``scale``.

    Raises
    ------
    DatasetNotFoundError
        The training cube or label file is not there: one line naming the checkpoint, the
        files looked for and the fix.
    CheckpointError
        The checkpoint names no scene at all.
    """
    saved = {k: model.data_arguments.get(k) for k in SOURCE_ARGUMENTS}
    args = restore(saved, {k: v for k, v in given.items() if v is not None}, (), f"infer: checkpoint {model.source}")
    found = {"cube": None, "scene": None, "root": args["root"], "cube_key": args["cube_key"], "layout": args["layout"],
             "labels": args["labels_path"], "labels_key": args["labels_key"],
             "ignore_georef": bool(args.get("ignore_georef")), "units": args.get("units"), "scale": args.get("scale")}
    if args["cube_path"]:
        missing = [str(Path(p).absolute()) for p in (args["cube_path"], args["labels_path"]) if p and not Path(p).exists()]
        if missing:
            raise DatasetNotFoundError(
                f"checkpoint {model.source} was trained on the cube file {args['cube_path']}, but "
                f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not there (looked for as saved, "
                f"from {Path.cwd()}); give the scene with --cube FILE (and --labels FILE), or --scene NAME"
            )
        return {**found, "cube": args["cube_path"]}
    if not args["scene"]:
        raise CheckpointError(f"checkpoint {model.source} names no training scene (no scene or cube_path in its "
                              "data arguments); give the scene with --scene NAME or --cube FILE")
    return {**found, "scene": args["scene"]}


def _open_own_scene(model: InferenceModel, found: dict[str, Any]) -> tuple[SceneSource, np.ndarray | None]:
    """:func:`_open_source` of the checkpoint's registry scene; its missing files end in one line with the fix.

    Raises
    ------
    DatasetNotFoundError
        Naming the checkpoint, the scene, the folder looked in and the fix (``--root``,
        ``--scene``, ``--cube``).
    """
    from hsi.scenes.files import resolve_root

    try:
        return _open_source(model, None, found["scene"], found["root"], found["cube_key"], found["layout"],
                            found["ignore_georef"])
    except DatasetNotFoundError as err:
        folder = resolve_root(found["root"])
        raise DatasetNotFoundError(
            f"checkpoint {model.source} was trained on scene {found['scene']!r}, whose files are not in {folder} "
            f"(nor in {folder / str(found['scene'])}); give the folder that holds them with --root FOLDER, or the "
            f"scene with --scene NAME or --cube FILE ({' '.join(str(err).split())})"
        ) from err


def _read_label_map(labels: Any, labels_key: str | None, source: SceneSource, ignore_georef: bool) -> LabelMap:
    """A label file or array as read (its own ids, and the class names the file stores).

    Raises
    ------
    ShapeMismatchError, GeoRefError
        The labels are not the cube's size, or lie on another map grid (unless ``ignore_georef``).
    """
    from hsi.data.scene_source import check_labels_grid
    from hsi.infer.truth import stored_names
    from hsi.io import read_labels

    shape = tuple(source.shape[:2])
    if isinstance(labels, LabelMap):  # read already, with its names (a collection's scenes, hsi.infer.many)
        raw, name, names = labels.raw, labels.name, labels.names
    elif isinstance(labels, np.ndarray):
        raw, name, names = np.asarray(labels, np.int64), "labels array", None
    else:
        raw, name, names = read_labels(labels, key=labels_key), f"labels {labels}", stored_names(labels, labels_key)
    if raw.shape != shape:
        raise ShapeMismatchError(f"{name}: shape {raw.shape}, the cube {source.name} is {shape} (H x W)")
    if isinstance(labels, (str, Path)):
        check_labels_grid(source.georef, labels, labels_key, source.name, "ignore" if ignore_georef else "check")
    return LabelMap(raw, names, name)


def _another_scene(model: InferenceModel, cube: Any, scene: str | None) -> bool:
    """Whether the source is known to be another scene than the checkpoint's (whose split then means nothing): a
    registry scene of another name, or a cube file other than the training one. A collection's checkpoint carries
    the split of the scene being mapped, or none (:func:`hsi.infer.many.infer_scenes` sets it)."""
    if model.data_arguments.get("scenes") is not None:
        return model.split_state is None
    if scene is not None:
        return scene not in (model.scene_name, model.data_arguments.get("scene"))
    trained_on = model.data_arguments.get("cube_path")
    if isinstance(cube, (str, Path)):
        return not trained_on or Path(cube).expanduser().resolve() != Path(trained_on).expanduser().resolve()
    return False  # an array or a cube read already: its origin is unknown


def infer_scene(checkpoint: str | Path | InferenceModel, cube: Any = None, *, scene: str | None = None,
                root: str | None = None, cube_key: str | None = None, layout: str | None = None,
                labels: Any = None, labels_key: str | None = None, out: str | Path | None = None,
                options: InferOptions | None = None, ignore_georef: bool | None = None,
                classes: Sequence[str] | Mapping[str, str] | None = None, units: str | None = None,
                scale: float | None = None, **kwargs: Any) -> InferResult:
    """Classify every pixel of a scene with a trained checkpoint.

    :func:`hsi.infer.infer` with one scene (it calls this); the entry for several is the same
    :func:`hsi.infer.infer`.

    Parameters
    ----------
    checkpoint : str, Path or InferenceModel
        A checkpoint written by ``hsi`` training, or a model already loaded
        (:func:`hsi.infer.load_checkpoint`).
    cube : str, Path, np.ndarray or hsi.io.Cube, optional
        The scene: a cube file (read window by window; ``.npy`` is memory-mapped) or array.
    scene : str, optional
        Instead of ``cube``: a registry scene (``"synthetic"`` is regenerated with the
        checkpoint's options); its labels are the ground truth. With neither, the
        checkpoint's own scene: its registry scene (root and options) or its training cube
        and label files, restored with :func:`hsi._roles.restore` (the arguments given win).
    root : str, optional
        Folder of the registry scene's files.
    cube_key, layout : str, optional
        Variable name in a MATLAB/HDF5 file, axis order when it cannot be decided.
    labels : str, Path, (H, W) array or hsi.infer.truth.LabelMap, optional
        Ground truth; enables metrics and ``mask_unlabeled``. Its classes are matched to the
        checkpoint's by name (:mod:`hsi.infer.truth`): the names the file (or the
        ``LabelMap``) gives, else ``class_<id>``; classes the checkpoint never saw are
        reported apart, not scored.
    labels_key : str, optional
        Variable name of ``labels`` in its file.
    classes : list of "THEIRS=OURS" or mapping, optional
        Renames the label map's classes (a registry scene's or ``labels``') before they are
        matched: ``["class_1=Tree", "Rock=Soil"]``, the rules of a collection entry's ``classes:``.
    units, scale : optional
        What a cube file's values are ("reflectance", "radiance", "unknown") and the factor
        they are divided by on reading, instead of what the file declares (as ``hsi train``
        takes them). Without ``cube`` and ``scene``, those training was given.
    out : str or Path, optional
        Folder of the outputs (:mod:`hsi.infer.write`); None keeps the maps in memory and
        writes nothing.
    options : InferOptions, optional
        Tiling, blending and device options; ``**kwargs`` override single fields
        (``tile=128, blend="hann"``).
    ignore_georef : bool, optional
        Read the cube and labels without georeference (a broken one is then not refused,
        and the maps carry no map coordinates). None: False, or the checkpoint's own
        setting for its own scene.

    Returns
    -------
    InferResult

    Raises
    ------
    OptionError
        A bad option, or options that need something missing (``mask_unlabeled`` without
        ground truth, several devices without ``out``).
    BandMismatchError, WavelengthError
        The cube's bands are not the checkpoint's (checked before any compute).
    RunOutputError, OverwriteError
        ``out`` holds outputs and ``overwrite`` is False, or files hsi did not write.
    DiskFullError
        The maps do not fit on ``out``'s filesystem (checked before the tile pass), or
        the disk filled up while writing; nothing of the run is left behind.
    NonFiniteInputError
        A window holds NaN or infinite values after preprocessing.
    NoDataError
        Every pixel of the scene is no-data.
    DatasetNotFoundError
        Without ``cube`` and ``scene``: the checkpoint's scene files are not found (the
        message names the checkpoint, the scene, where it looked and the fix).

    Notes
    -----
    A pixel is no-data when any of its bands is NaN or infinite, or equals the file's declared
    no-data value (:func:`hsi.preprocess._base.nodata_mask`). It is never classified: label 0,
    confidence 0, probabilities 0, drawn in the map's no-data colour and counted in
    ``nodata_pixels``; its training-median fill still serves as context of its neighbours.
    """
    started = time.perf_counter()
    opts = InferOptions.from_kwargs(options, **kwargs)
    if opts.devices > 1 and out is None:
        raise OptionError("out", None, f"a folder shared by the {opts.devices} processes (devices={opts.devices})")
    autocast_dtype(opts.precision, _device(opts.accelerator))  # 16-mixed where "auto" is the CPU: refused now
    mapping = parse_class_mapping(classes, "classes")
    model = checkpoint if isinstance(checkpoint, InferenceModel) else load_checkpoint(checkpoint)
    opened = _open_scene(model, cube, scene, {"root": root, "cube_key": cube_key, "layout": layout, "labels": labels,
                                              "labels_key": labels_key, "ignore_georef": ignore_georef,
                                              "units": units, "scale": scale})
    source = opened.source
    try:
        truth = None if opened.labels is None else opened.labels.match(model.class_names, model.label_values,
                                                                       mapping, "classes")
        if mapping and truth is None:
            raise OptionError("classes", classes, "ground truth to rename: labels= (or a registry scene=)")
        if opts.mask_unlabeled and truth is None:
            raise OptionError("mask_unlabeled", True, "needs ground truth: labels= (or a registry scene=)")
        source, model, checked = _onto_checkpoint(model, source, opts.preprocess, opened.another)
        if truth is not None:
            checked["classes"] = truth.record
        with _staged(out, opts.overwrite) as staging:  # on any error out is left as it was
            return _map(model, source, truth, opts, staging, checked, started, own_split=not opened.another)
    finally:
        source.close()


@dataclass
class _Opened:
    """The scene to map: its source, its label map as read (None: no ground truth), and whether it is known to be
    another scene than the checkpoint's."""

    source: SceneSource
    labels: LabelMap | None
    another: bool


def _open_scene(model: InferenceModel, cube: Any, scene: str | None, given: dict[str, Any]) -> _Opened:
    """The source and label map of ``cube``, ``scene``, or (neither) the checkpoint's own scene restored from its
    data arguments (``given``: ``root``, ``cube_key``, ``layout``, ``labels``, ``labels_key``, ``ignore_georef``,
    ``units``, ``scale``; those given win)."""
    if cube is None and scene is None and model.data_arguments.get("scenes") is not None:
        raise OptionError("cube", None, f"a cube file or a registry scene: checkpoint {model.source} was trained on a "
                          "collection of scenes (hsi.infer.infer(checkpoint, scenes=FILE, out=...), hsi infer "
                          "--scenes FILE, maps them all)")
    another = cube is not None or scene is not None
    if not another:  # the checkpoint's own scene, restored from its data arguments
        found = _checkpoint_scene(model, {**{k: v for k, v in given.items() if k != "labels"},
                                          "labels_path": given["labels"]})
        cube, scene, ignore_georef = found["cube"], found["scene"], found["ignore_georef"]
        labels, labels_key = found["labels"], found["labels_key"]
        source, label_map = (_open_own_scene(model, found) if scene is not None
                             else _open_source(model, cube, None, None, found["cube_key"], found["layout"],
                                               ignore_georef, found["units"], found["scale"]))
    else:
        labels, labels_key, ignore_georef = given["labels"], given["labels_key"], bool(given["ignore_georef"])
        source, label_map = _open_source(model, cube, scene, given["root"], given["cube_key"], given["layout"],
                                         ignore_georef, given["units"], given["scale"])
        another = _another_scene(model, cube, scene)
    try:
        if labels is not None:
            label_map = _read_label_map(labels, labels_key, source, ignore_georef)
    except BaseException:
        source.close()
        raise
    return _Opened(source, label_map, another)


def _staged(out: str | Path | None, overwrite: bool) -> AbstractContextManager[Transaction | None]:
    """The output folder as a transaction (:func:`hsi.infer.write.staged_folder`); None without ``out``."""
    if out is None:
        return contextlib.nullcontext()
    from hsi.infer.write import staged_folder

    return staged_folder(out, overwrite)


def _map(model: InferenceModel, source: SceneSource, truth: MatchedTruth | None, opts: InferOptions,
         staging: Transaction | None, checked: dict[str, Any], started: float, own_split: bool) -> InferResult:
    """The tile pass, into the staging folder (None: in memory), then metrics and outputs; the result."""
    from hsi.io.bands import pick_rgb_bands
    from hsi.sinks import wants_false_colour

    height, width, n_bands = source.shape
    folder = None if staging is None else staging.path
    keep_rgb = folder is not None and wants_false_colour(opts.format)  # a preview shows them
    rgb_bands = pick_rgb_bands(source.wavelengths, n_bands) if keep_rgb else None
    job = TileJob.build(model, source, opts.tile, opts.overlap, opts.blend, rgb_bands)
    if staging is not None:
        from hsi.infer.write import space_needed

        # checked free beside out (before the tile pass); named if the disk fills up all the same
        staging.require_space(space_needed((height, width), model.num_classes, opts.probabilities, opts.format),
                              f"the hsi infer outputs of a {height} x {width} map")
    tiles_started = time.perf_counter()
    rank, results = _tile_pass(job, opts, folder)
    tiles_s = time.perf_counter() - tiles_started
    if rank != 0:
        return InferResult(None, None, None, None, model.class_names, model.palette, rank=rank)
    nodata = _count_nodata(results, source.name)
    return _finish(model, source, results, truth, opts, staging, rgb_bands, {"tiles": tiles_s, "started": started},
                   describe={"cube": source.name, "n_tiles": job.grid.n_tiles, "nodata_pixels": nodata, **checked},
                   own_split=own_split)


def _onto_checkpoint(model: InferenceModel, source: SceneSource, preprocess: str = "auto", another: bool = True
                     ) -> tuple[SceneSource, InferenceModel, dict[str, Any]]:
    """The cube on the checkpoint's bands (resampled by response when they differ; a wavelength-aware network
    instead reads the cube's own bands, :mod:`hsi.infer.own_bands`), the model with its preprocessing fitted on the
    cube where :func:`_refit_reason` says so, and the records of both and of the scene-shift check (for
    ``inference.json``)."""
    from hsi.data.sources.bands import onto_grid
    from hsi.infer.own_bands import onto_own_bands, reads_own_bands
    from hsi.infer.shift import check_new_scene, fit_on_scene, sample_spectra

    check_has_wavelengths(model, source)
    if reads_own_bands(model, source):  # a wavelength-aware network: the cube's own bands, not resampled
        spectra = sample_spectra(source)
        model, bands = onto_own_bands(model, source, spectra)
        return source, model, {"scene_shift": check_new_scene(model, source, spectra, per_band=False),
                               "bands": bands, "preprocessing": {"fitted_on": "this cube's own pixels (its bands are "
                                                                 "not the checkpoint's)",
                                                                 "pixels": bands["preprocessing_fitted_on_pixels"]}}
    check_covers_checkpoint(model, source)
    source = onto_grid(source, model.wavelengths, model.num_bands_in, model.grid_fwhm)
    check_cube(model, source.shape[2], source.wavelengths, source.name)
    spectra = SceneSample(source)  # read once, if at all: the per-scene fit and the shift check use the same windows
    reason = _refit_reason(model, source, spectra, preprocess, another)
    model, fitted = fit_on_scene(model, source, spectra, reason)
    shift = check_new_scene(model, source, spectra, advice=_shift_advice(preprocess, fitted is not None))
    return source, model, {"scene_shift": shift, "bands": getattr(source, "record", None),
                           "preprocessing": fitted or {"fitted_on": "the checkpoint's training pixels",
                                                       "preprocess": preprocess}}


def check_has_wavelengths(model: InferenceModel, source: SceneSource) -> None:
    """A cube without band wavelengths for a checkpoint that has them: refused for a network that reads each band's
    wavelength (it would read them as whatever it assumed), read as on the checkpoint's bands with a warning for a
    fixed-band one whose band count it has (the band count alone cannot tell another sensor's bands).

    Raises
    ------
    WavelengthError
        The network reads band wavelengths; the message says how to give them.
    """
    if source.wavelengths is not None or model.wavelengths is None:
        return
    first, last = float(np.min(model.wavelengths)), float(np.max(model.wavelengths))
    grid = f"{len(model.wavelengths)} bands at {first:.0f}-{last:.0f} nm"
    give = ("give the cube's band centres (nm) in its file (an ENVI header's 'wavelength = {...}', a 'wavelengths' "
            "variable of an HDF5 or .mat file) or as hsi.io.Cube(data, wavelengths)")
    net = model.net
    if getattr(net, "takes_wavelengths", False) and getattr(net, "wavelengths", None) is not None:
        raise WavelengthError(f"cube {source.name} has no band wavelengths, but checkpoint {model.source} "
                              f"({type(net).__name__}, trained on {grid}) reads each band with its wavelength: {give}")
    if source.shape[2] == len(model.wavelengths):
        warnings.warn(f"cube {source.name} has no band wavelengths: its {source.shape[2]} bands are assumed to be "
                      f"checkpoint {model.source}'s ({grid}); if they are another sensor's, {give}",
                      AssumedBandsWarning, stacklevel=3)


def check_covers_checkpoint(model: InferenceModel, source: SceneSource) -> None:
    """Refuse, in one line that names the fix, a cube whose bands do not span the checkpoint's (a fixed-band
    network reads every band it was trained on; resampling does not extrapolate).

    Raises
    ------
    WavelengthError
        Naming the cube's range, the checkpoint's, and the two ways out: a checkpoint trained on the range the cube
        covers (``--wavelength-range``), or a cube that covers the checkpoint's.
    """
    from hsi.data.sources.bands import covers

    if source.wavelengths is None or model.wavelengths is None:
        return
    have, need = np.asarray(source.wavelengths, dtype=np.float64), np.asarray(model.wavelengths, dtype=np.float64)
    if covers(have, need):
        return
    lo, hi = max(have.min(), need.min()), min(have.max(), need.max())
    retrain = (f"train a checkpoint on the range both cover (hsi train ... --wavelength-range {lo:.0f} {hi:.0f}), "
               if lo < hi else "")
    raise WavelengthError(f"cube {source.name}: its bands cover {have.min():.1f}-{have.max():.1f} nm, but checkpoint "
                          f"{model.source} reads bands at {need.min():.1f}-{need.max():.1f} nm and a cube must cover "
                          f"them all (no extrapolation): {retrain}or give a cube that covers its range")


def _refit_reason(model: InferenceModel, source: SceneSource, spectra: SceneSample, preprocess: str,
                  another: bool) -> str | None:
    """Why the cube's preprocessing is refitted on its own pixels (``preprocess``, :class:`InferOptions`), or None.

    "auto" refits a cube known to be another scene whose units or typical raw value differ from the training
    scenes' (the raw check of :func:`hsi.infer.shift.check_new_scene`): the checkpoint's scaling would put its
    values far outside anything the network saw (``benchmarks/bench_cross_sensor.py``, variant ``infer``).
    """
    from hsi.errors import SceneShiftWarning
    from hsi.infer.shift import raw_differs

    if preprocess == "scene":
        return "as --preprocess scene asks"
    if preprocess == "checkpoint" or not another:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SceneShiftWarning)  # said once, by the check that follows the fit
        differs = raw_differs(model, source, spectra)
    return "its units or value range differ from training's" if differs else None


def _shift_advice(preprocess: str, refitted: bool) -> str:
    """The end of the raw-value warning: what inference did about it, and the other choice."""
    if refitted:
        return ("hsi infer scaled it on its own valid pixels (--preprocess checkpoint keeps the checkpoint's "
                "scaling); declare --units and --scale if the file does not")
    return ("the checkpoint's scaling is applied as it is (--preprocess scene scales the cube on its own pixels); "
            "declare --units and --scale if the file does not")


def _count_nodata(results: ResultArrays, name: str) -> int:
    """The no-data pixels of the finished maps; a scene without any other pixel is refused (maps removed).

    Raises
    ------
    NoDataError
        Every pixel is no-data: there is no map to write.
    """
    count = results.count_nodata()
    if count == results.shape[0] * results.shape[1]:
        results.discard()
        raise NoDataError(
            f"cube {name}: all {count} pixels are no-data (some band NaN or infinite, or equal to the file's "
            "no-data value): nothing can be classified; check the file, its key and its no-data value"
        )
    return count


def _tile_pass(job: TileJob, opts: InferOptions, folder: Path | None) -> tuple[int, ResultArrays]:
    """Run the tiles in this process, or through Lightning on several devices / a strategy."""
    if opts.devices == 1 and opts.strategy == "auto":
        m = job.model
        device = _device(opts.accelerator)
        m.net.to(device)
        results = ResultArrays((job.grid.height, job.grid.width), m.num_classes, opts.probabilities, folder,
                               rgb=job.rgb_bands is not None)
        try:
            predictor = TilePredictor(m.net, dense=m.dense, halo=m.halo, patch_size=m.patch_size, device=device,
                                      batch_size=opts.batch_size, tta=opts.tta, precision=opts.precision)
            tiles, owned = job.shard(0, 1)
            run_tiles(job, predictor, results, tiles, owned, progress=opts.progress)
        except BaseException:
            results.discard()
            raise
        return 0, results
    from hsi.infer.distributed import run_distributed

    return run_distributed(job, folder, accelerator=opts.accelerator, devices=opts.devices, strategy=opts.strategy,
                           probabilities=opts.probabilities, batch_size=opts.batch_size, tta=opts.tta,
                           progress=opts.progress, precision=opts.precision)


def _finish(model: InferenceModel, source: SceneSource, results: ResultArrays, truth: MatchedTruth | None,
            opts: InferOptions, staging: Transaction | None, rgb_bands: list[int] | None, times: dict[str, float],
            describe: dict[str, Any], own_split: bool) -> InferResult:
    """Metrics, masking, the output files (committed from ``staging``; None: none written); the result."""
    metrics = None if truth is None else score_map(model, truth, results.labels, own_split)
    if not own_split:
        try:
            check_not_degenerate(results.labels, truth, model.num_classes, source.name)
        except DegenerateMapError:
            results.discard()
            raise
    if truth is not None and opts.mask_unlabeled:
        results.labels[truth.labels == 0] = 0
    files: dict[str, Path] = {}
    if staging is not None:
        from hsi.infer.write import write_folder

        georef = getattr(source, "georef", None)
        manifest = {"checkpoint": model.source, **describe, "shape": list(source.shape), "class_names": model.class_names,
                    "options": asdict(opts), "rgb_bands": rgb_bands, "tiles_seconds": times["tiles"],
                    "georef": None if georef is None else georef.to_dict()}
        background = None if (truth is None or opts.mask_unlabeled) else truth.labels == 0
        wl = source.wavelengths
        names = [f"{wl[b]:.0f} nm" if wl is not None else f"band {b}" for b in (rgb_bands or [])]
        held = dict(results.arrays)
        files = write_folder(staging, results, class_names=model.class_names, palette=model.palette,
                             background=background, nodata=results.nodata_mask() if describe["nodata_pixels"] else None,
                             metrics=metrics, source_header=getattr(source, "header", None), georef=georef,
                             formats=opts.format, manifest=manifest, rgb_title="false colour: R/G/B = " + ", ".join(names))
        # without the npy format the maps' files leave the folder, but the memory maps held here still read
        arrays = {name: np.load(files[f"{name}.npy"], mmap_mode="r") if f"{name}.npy" in files
                  else held.get(name) for name in ("labels", "confidence", "probabilities")}
    else:
        arrays = {name: results.arrays.get(name) for name in ("labels", "confidence", "probabilities")}
    total = time.perf_counter() - times["started"]
    return InferResult(arrays.get("labels"), arrays.get("confidence"), arrays.get("probabilities"), metrics,
                       model.class_names, model.palette, files, {"tiles": times["tiles"], "total": total},
                       nodata_pixels=int(describe["nodata_pixels"]),
                       bands_note=(describe.get("bands") or {}).get("note"))
