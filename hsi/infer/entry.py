"""``infer``: the one entry of whole-scene inference, for one scene or many.

One scene (a cube file, array or :class:`hsi.io.Cube`, a registry ``scene=``, or neither: the
checkpoint's own) is mapped into ``out`` itself, by :func:`hsi.infer.api.infer_scene`.
Several (``scenes=`` a collection, or ``cube=`` a list of cube files) are mapped into
``out/<name>/`` with a summary table, dealt over the ranks of a job and reused when complete,
by :func:`hsi.infer.many.infer_scenes`, which maps each scene with the same one-scene worker.
``hsi infer`` calls only :func:`infer`; the two older names keep working and give the same
maps bit for bit, being this entry with one scene and with several.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hsi.errors import OptionError
from hsi.infer.api import InferResult, infer_scene
from hsi.infer.checkpoint import InferenceModel
from hsi.infer.many import infer_scenes
from hsi.infer.options import InferOptions

__all__ = ["MANY_SCENES", "ONE_SCENE", "infer", "several_scenes"]

#: arguments that describe one scene, refused with several: a collection file gives each scene its own
ONE_SCENE = ("scene", "root", "cube_key", "layout", "labels", "labels_key", "classes", "units", "scale")
#: arguments of several scenes only: this process's share of them, and where the re-mapped lines go
MANY_SCENES = ("rank", "world_size", "log")


def several_scenes(cube: Any, scenes: Any) -> bool:
    """Whether ``cube`` and ``scenes`` name several scenes: a collection (``scenes``), or a list of cube files."""
    return scenes is not None or isinstance(cube, (list, tuple))


def _refuse(given: dict[str, Any], names: Sequence[str], allowed: str) -> dict[str, Any]:
    """``given`` without ``names`` left at None; one of them set ends in :class:`OptionError` (``allowed``)."""
    for name in names:
        if given.get(name) is not None:
            raise OptionError(name, given[name], allowed)
    return {k: v for k, v in given.items() if k not in names}


def infer(checkpoint: str | Path | InferenceModel, cube: Any = None, *, scenes: Any = None,
          out: str | Path | None = None, options: InferOptions | None = None,
          **kwargs: Any) -> InferResult | dict[str, Any]:
    """Classify every pixel of one scene, or of several, with a trained checkpoint.

    Parameters
    ----------
    checkpoint : str, Path or InferenceModel
        What ``hsi train`` wrote (``best.ckpt``, or a classical run's ``model.npz``); one scene
        also takes a model already loaded (:func:`hsi.infer.load_checkpoint`).
    cube : str, Path, np.ndarray, hsi.io.Cube, or list of str/Path, optional
        One scene: a cube file (read window by window) or array. A list (or tuple) of cube
        files: several scenes, each named by its file stem (a list of one is one folder
        ``out/<stem>/``, as with several).
    scenes : str, Path or collection, optional
        Several scenes: anything :func:`hsi.collection.read_collection` reads (a YAML file, a
        pack ``.h5``, entries); each entry gives its own cube, key, layout, labels, classes,
        units and scale, and entries with labels are scored.
    out : str or Path, optional
        One scene: the folder of its outputs (:mod:`hsi.infer.write`); None keeps the maps
        in memory. Several: required, the folder of the per-scene folders ``out/<name>/``
        and of ``summary.json`` / ``summary.md``.
    options : InferOptions, optional
        Tiling, blending, device and output options; ``**kwargs`` override single fields.
    **kwargs
        One scene: the arguments of :func:`hsi.infer.api.infer_scene` (``scene``, ``root``,
        ``cube_key``, ``layout``, ``labels``, ``labels_key``, ``classes``, ``units``,
        ``scale``, ``ignore_georef``). Several: ``rank``, ``world_size`` and ``log`` of
        :func:`hsi.infer.many.infer_scenes`. Any other keyword is an :class:`InferOptions` field.

    Returns
    -------
    InferResult or dict
        One scene: its :class:`~hsi.infer.api.InferResult`. Several: what
        :func:`hsi.infer.many.infer_scenes` returns (``mapped``, ``skipped``, ``redone``,
        ``rank``, ``world_size``, ``summary``).

    Raises
    ------
    OptionError
        ``cube`` and ``scenes`` both given, or an empty list of cubes; a one-scene argument
        with several scenes (or ``ignore_georef``: several scenes are read with their
        georeference checked); a several-scene argument with one; several scenes without
        ``out`` or with a model already loaded (each scene's reuse record names the
        checkpoint file). Otherwise what :func:`hsi.infer.api.infer_scene` or
        :func:`hsi.infer.many.infer_scenes` raises.
    """
    if cube is not None and scenes is not None:
        raise OptionError("cube", cube, "none with scenes= (the collection names each scene's cube): give one of them")
    if not several_scenes(cube, scenes):
        one = _refuse(kwargs, MANY_SCENES, "applies to several scenes (scenes=, or a list of cube files)")
        return infer_scene(checkpoint, cube, out=out, options=options, **one)
    many = _refuse(kwargs, ONE_SCENE, "applies to one scene; several scenes each take their own from a collection "
                   "file (scenes=FILE.yaml, hsi infer --scenes FILE.yaml)")
    many = _refuse(many, ("ignore_georef",), "applies to one scene; several scenes are read with their "
                   "georeference checked")
    if scenes is None and not cube:
        raise OptionError("cube", cube, "a cube file, or a list of at least one cube file")
    if out is None:
        raise OptionError("out", None, "a folder: several scenes are mapped into out/<name>/ beside a summary table")
    if isinstance(checkpoint, InferenceModel):
        raise OptionError("checkpoint", checkpoint.source, "a checkpoint file with several scenes (each scene's "
                          "inference.json records its identity, to reuse complete scenes)")
    return infer_scenes(checkpoint, scenes if scenes is not None else list(cube), out, options=options, **many)
