"""The scene registry: names -> :class:`SceneSpec`, and :func:`load_scene`.

Built-in scenes live one family per module (``benchmark``, ``unmixing``, ``synthetic``);
each exposes a ``SPECS`` tuple that is registered the first time the registry is used, so
importing ``hsi.scenes`` does no work. A family module (and what it imports at its top) leaves
numpy and scipy to its functions: ``hsi train`` checks ``--scene`` and ``--scene-options``
against the registry and the loaders' keywords without them (``tests/cli/test_import_diet.py``).
Users add their own with :func:`register_scene`::

    from hsi.scenes import SceneSpec, register_scene

    def load_mine(root, download=False, **options):
        ...  # build and return a hsi.scenes.Scene
    register_scene(SceneSpec("mine", load_mine, description="my field campaign"))
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hsi.errors import OptionError, UnknownSceneError
from hsi.scenes.files import RemoteFile, resolve_root

if TYPE_CHECKING:  # for annotations only: listing the scenes and their options costs no numpy
    from hsi.scenes.scene import Scene

_BUILTIN_MODULES = ("hsi.scenes.synthetic", "hsi.scenes.benchmark", "hsi.scenes.unmixing")
_REGISTRY: dict[str, SceneSpec] = {}
_builtins_loaded = False


@dataclass(frozen=True)
class SceneSpec:
    """How to load one named scene.

    Attributes
    ----------
    name : registry key (lower case, ``_`` separated).
    loader : ``loader(root: Path, download: bool, **options) -> Scene``. ``root`` is already
        resolved (argument, ``$HSI_DATA_DIR`` or ``~/.cache/hsi``); the loader looks in
        ``root / name`` and ``root``.
    description : one line shown by listings.
    files : the files the scene needs (for documentation and error messages).
    family : "benchmark", "unmixing", "synthetic" or "custom".
    units : what the scene's values are, per form of its cube file ("mat", "envi",
        "generated"): a ``meta["units"]`` dict with source "registry"
        (:func:`hsi.io.units.declared_units`), which the loader puts in ``scene.cube.meta["units"]``
        (:func:`hsi.scenes.scene.with_declared_units`). Empty: the units found on reading stand.
    """

    name: str
    loader: Callable[..., Scene]
    description: str = ""
    files: tuple[RemoteFile, ...] = ()
    family: str = "custom"
    units: dict[str, dict[str, Any]] = field(default_factory=dict, hash=False)


def normalize_name(name: str) -> str:
    """``"Indian-Pines"`` -> ``"indian_pines"``."""
    return str(name).strip().lower().replace("-", "_").replace(" ", "_")


def _ensure_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    import importlib

    for module_name in _BUILTIN_MODULES:
        module = importlib.import_module(module_name)
        for spec in module.SPECS:
            _REGISTRY.setdefault(spec.name, spec)
    _builtins_loaded = True


def register_scene(spec: SceneSpec, *, overwrite: bool = False) -> SceneSpec:
    """Add ``spec`` to the registry (under ``normalize_name(spec.name)``) and return it.

    Raises ``ValueError`` if the name is taken, unless ``overwrite=True``.
    """
    _ensure_builtins()
    key = normalize_name(spec.name)
    if key in _REGISTRY and not overwrite:
        raise ValueError(f"scene {key!r} is already registered; pass overwrite=True to replace it")
    if key != spec.name:
        spec = dataclasses.replace(spec, name=key)
    _REGISTRY[key] = spec
    return spec


def unregister_scene(name: str) -> None:
    """Remove a scene from the registry (no error if absent)."""
    _ensure_builtins()
    _REGISTRY.pop(normalize_name(name), None)


def list_scenes() -> list[str]:
    """Sorted names of every registered scene."""
    _ensure_builtins()
    return sorted(_REGISTRY)


def get_scene_spec(name: str) -> SceneSpec:
    """The :class:`SceneSpec` for ``name``; :class:`UnknownSceneError` lists the known names."""
    _ensure_builtins()
    key = normalize_name(name)
    try:
        return _REGISTRY[key]
    except KeyError:
        raise UnknownSceneError(
            f"unknown scene {name!r}; known scenes: {', '.join(sorted(_REGISTRY))} "
            f"(add your own with hsi.scenes.register_scene)"
        ) from None


def load_scene(name: str, root: str | os.PathLike | None = None, download: bool = False, **options: Any) -> Scene:
    """Load a registered scene.

    Parameters
    ----------
    name : a name from :func:`list_scenes` (case and ``-``/``_`` insensitive).
    root : folder holding the data (``<root>/<name>/<files>`` or files directly in
        ``<root>``); default ``$HSI_DATA_DIR``, else ``~/.cache/hsi``. See ``hsi scenes --guide``.
    download : fetch missing files from their public URLs (verified by SHA-256 where
        known). Nothing is written below ``root`` otherwise.
    **options : scene-specific, e.g. ``purity=0.8`` for unmixing scenes, ``checksum=False``
        to skip the check of placed files against the registry's size and SHA-256 (done by
        default, hashed once per file identity: :func:`hsi.scenes.files.verify_file`),
        generator arguments (``height=``, ``seed=``...) for ``"synthetic"``.

    Raises
    ------
    UnknownSceneError, DatasetNotFoundError, IntegrityError, ShapeMismatchError
    """
    spec = get_scene_spec(name)
    resolved = resolve_root(root)
    if resolved.exists() and not resolved.is_dir():
        raise OptionError(
            "root", str(root if root is not None else resolved),
            f"a folder holding the scene's files (or <root>/{spec.name}/); this is a file — pass the folder "
            f"that contains it, e.g. root={str(resolved.parent)!r}",
        )
    return spec.loader(resolved, download, **options)


def describe_scenes() -> str:
    """A one-line-per-scene table of names and descriptions."""
    _ensure_builtins()
    width = max(len(n) for n in _REGISTRY)
    return "\n".join(f"{n:<{width}}  {_REGISTRY[n].description}" for n in sorted(_REGISTRY))
