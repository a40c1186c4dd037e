"""Scene entries and collections: what ``HSIDataModule(scenes=...)`` and ``hsi train --scenes`` read.

A collection is a list of :class:`SceneEntry` (each a registry scene, a cube file with its
label map, or a group of a pack file written by :func:`hsi.collection.pack.pack_collection`)
and how it is split. It comes from a list, a mapping or a YAML file::

    scenes:
      - {name: north, cube: north.h5, labels: north_gt.mat, classes: {class_1: tree}}
      - {name: south, scene: samson, root: data/samson}
    split: block          # block: block split inside every scene; scene: whole scenes held out
    test_scenes: [south]  # with split: scene (val_scenes likewise, else a val fraction of blocks)

Relative file paths in a YAML file are read from the file's folder. Every mistake is found
by :func:`read_collection` before any cube is opened, and raised as
:class:`~hsi.errors.CollectionError` (unknown keys with the closest one, duplicate names,
test scenes not in the list) or :class:`~hsi.errors.DatasetNotFoundError` (a missing file),
naming the entry and the key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from hsi._checks import did_you_mean
from hsi.data.sources.records import COLLECTION_KEYS, ENTRY_KEYS, PACK_FORMAT, Collection, SceneEntry
from hsi.errors import CollectionError, DatasetNotFoundError

__all__ = ["COLLECTION_KEYS", "ENTRY_KEYS", "PACK_FORMAT", "Collection", "SceneEntry", "read_collection", "with_split"]

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")

def _where(source: str | None) -> str:
    return f"scenes ({source})" if source else "scenes"


def _unknown(keys: Sequence[str], allowed: Sequence[str], where: str) -> None:
    for key in keys:
        if key not in allowed:
            raise CollectionError(f"{where}: unknown key {key!r}{did_you_mean(str(key), allowed)} "
                                  f"(keys: {', '.join(allowed)})")


def _path(value: Any, base: Path | None, where: str, key: str, must_exist: bool) -> str:
    if not isinstance(value, (str, Path)) or not str(value):
        raise CollectionError(f"{where}: {key}: expected a file path, found {value!r}")
    path = Path(value).expanduser()
    if base is not None and not path.is_absolute():
        path = base / path
    if must_exist and not path.is_file():
        raise DatasetNotFoundError(f"{where}: {key}: {str(path)!r}: no such file")
    return str(path)


def _entry(item: Any, index: int, base: Path | None, source: str | None, need_labels: bool) -> SceneEntry:
    """One entry of the list, checked (keys, kind, files)."""
    where = f"{_where(source)}[{index}]"
    if isinstance(item, SceneEntry):
        item = item.to_dict()
    if not isinstance(item, Mapping):
        raise CollectionError(f"{where}: expected a mapping such as {{name: north, cube: north.h5, labels: "
                              f"north_gt.mat}}, found {type(item).__name__}")
    if item.get("name") is not None:  # messages name the entry as the user does
        where = f"{where} {item['name']!r}"
    _unknown(list(item), ENTRY_KEYS, where)
    if item.get("pack"):
        return SceneEntry(name=str(item["name"]), pack=_path(item["pack"], base, where, "pack", True),
                          classes=dict(item.get("classes") or {}))
    if (item.get("scene") is None) == (item.get("cube") is None):
        raise CollectionError(f"{where}: give exactly one of scene (a registry name) and cube (a file); found "
                              f"{'both' if item.get('scene') is not None else 'neither'}")
    cube = labels = None
    if item.get("cube") is not None:
        cube = _path(item["cube"], base, where, "cube", True)
        if item.get("labels") is None and need_labels:
            raise CollectionError(f"{where}: cube {item['cube']!r} needs its label map: labels: FILE")
        labels = None if item.get("labels") is None else _path(item["labels"], base, where, "labels", True)
    name = item.get("name") or (Path(cube).stem if cube else item["scene"])
    classes, options = item.get("classes") or {}, item.get("scene_options") or {}
    for key, value in (("classes", classes), ("scene_options", options)):
        if not isinstance(value, Mapping):
            raise CollectionError(f"{where}: {key}: expected a mapping, found {value!r}")
    root = item.get("root")
    if root is not None and base is not None and not Path(root).expanduser().is_absolute():
        root = str(base / Path(root).expanduser())
    if item.get("scene") is not None:
        _check_registry(str(item["scene"]), dict(options), where)
    return SceneEntry(name=str(name), scene=item.get("scene"), root=root, scene_options=dict(options), cube=cube,
                      labels=labels, cube_key=item.get("cube_key"), labels_key=item.get("labels_key"),
                      layout=item.get("layout"), classes={str(k): str(v) for k, v in classes.items()},
                      **_declarations(item, where))


def _numbers(value: Any, where: str, key: str, ascending: bool) -> tuple[float, ...] | None:
    """A list of finite numbers (> 0, or strictly ascending), or None."""
    if value is None:
        return None
    items = [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    try:
        numbers = tuple(float(v) for v in items if not isinstance(v, bool))
    except (TypeError, ValueError):
        numbers = ()
    good = len(numbers) == len(items) and numbers and all(math.isfinite(v) and v > 0 for v in numbers)
    if good and ascending:
        good = all(b > a for a, b in zip(numbers, numbers[1:]))
    if not good:
        what = "a list of band centres in nm, strictly ascending" if ascending else \
            "a band width in nm (> 0), or a list of one per band"
        raise CollectionError(f"{where}: {key}: expected {what}; found {value!r}")
    from hsi.io.bands import OPTICAL_NM

    if ascending and max(numbers) < OPTICAL_NM[0]:  # 0.4-2.5: micrometres where nanometres are asked for
        raise CollectionError(f"{where}: {key}: expected band centres in nm; found {numbers[0]:g}-{numbers[-1]:g}, "
                              f"below any imaging band ({OPTICAL_NM[0]:g} nm): micrometres? (multiply by 1000)")
    return numbers


def _declarations(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The entry's declarations of what its cube holds: units, scale, wavelengths, fwhm (checked)."""
    from hsi.errors import OptionError
    from hsi.io.units import check_units_option

    try:
        units = check_units_option(item.get("units"))
    except OptionError as err:
        raise CollectionError(f"{where}: {err}") from None
    scale = item.get("scale")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))
                              or not math.isfinite(scale) or scale <= 0):
        raise CollectionError(f"{where}: scale: expected a number > 0 that the values are divided by (e.g. 10000); "
                              f"found {scale!r}")
    return {"units": units, "scale": None if scale is None else float(scale),
            "wavelengths": _numbers(item.get("wavelengths"), where, "wavelengths", True),
            "fwhm": _numbers(item.get("fwhm"), where, "fwhm", False)}


def _check_registry(scene: str, options: dict[str, Any], where: str) -> None:
    """A registered scene and options its loader takes (the DataModule's own check, with the entry named)."""
    from hsi._combinations import _check_scene
    from hsi.errors import OptionError

    try:
        _check_scene(scene, options)
    except OptionError as err:
        raise CollectionError(f"{where}: {err}") from None


def _names(value: Any, key: str, known: list[str], where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        raise CollectionError(f"{where}: {key}: expected a list of scene names, found {value!r}")
    for name in items:
        if name not in known:
            raise CollectionError(f"{where}: {key}: {name!r} is not a scene of the collection"
                                  f"{did_you_mean(str(name), known)} (scenes: {', '.join(known)})")
    return tuple(str(n) for n in items)


def _check(col: Collection, where: str) -> Collection:
    """Names unique and usable as folder names; the split's scene lists consistent."""
    seen: set[str] = set()
    for e in col.entries:
        if not _NAME.match(e.name):
            raise CollectionError(f"{where}: name {e.name!r}: use letters, digits, '_', '-' and '.' only "
                                  "(it names the scene's output folder)")
        if e.name in seen:
            raise CollectionError(f"{where}: two scenes are named {e.name!r}; give each a unique name: NAME")
        seen.add(e.name)
    if col.split not in ("block", "scene"):
        raise CollectionError(f"{where}: split: {col.split!r}: expected block or scene")
    if col.preprocess not in ("collection", "scene"):
        raise CollectionError(f"{where}: preprocess: {col.preprocess!r}: expected collection (one pipeline fitted on "
                              "all training scenes) or scene (each scene its own)")
    if col.split == "block" and (col.test_scenes or col.val_scenes):
        raise CollectionError(f"{where}: test_scenes / val_scenes hold out whole scenes: they need split: scene "
                              "(split: block splits inside every scene)")
    if col.split == "scene":
        if not col.test_scenes:
            raise CollectionError(f"{where}: split: scene needs test_scenes: [NAME, ...] (the held-out scenes)")
        both = set(col.test_scenes) & set(col.val_scenes)
        if both:
            raise CollectionError(f"{where}: {sorted(both)} are in both test_scenes and val_scenes")
        if not col.train_names:
            raise CollectionError(f"{where}: every scene is held out (test_scenes, val_scenes); leave at least one "
                                  "for training")
    return col


def default_preprocess(value: Any, split: str) -> str:
    """``preprocess`` as given, or by default: ``scene`` with ``split: scene`` (every scene scaled on its own valid
    pixels, which brings scenes from other sensors together: see the cross-sensor benchmark, docs/benchmarks.md), ``collection``
    with ``split: block``."""
    if value not in (None, "auto"):
        return str(value)
    return "scene" if split == "scene" else "collection"


def _from_mapping(data: Mapping[str, Any], base: Path | None, source: str | None, need_labels: bool) -> Collection:
    where = _where(source)
    _unknown(list(data), COLLECTION_KEYS, where)
    items = data.get("scenes")
    if isinstance(items, (str, Path)):  # a pack file named from a YAML file
        return read_collection(_path(items, base, where, "scenes", True), need_labels=need_labels)
    if not isinstance(items, (list, tuple)) or not items:
        raise CollectionError(f"{where}: scenes: expected a non-empty list of scene entries, found {items!r}")
    entries = tuple(_entry(item, i, base, source, need_labels) for i, item in enumerate(items))
    known = [e.name for e in entries]
    split = str(data.get("split") or "block")
    col = Collection(entries, split, _names(data.get("test_scenes"), "test_scenes", known, where),
                     _names(data.get("val_scenes"), "val_scenes", known, where), source,
                     default_preprocess(data.get("preprocess"), split))
    return _check(col, where)


def _read_file(path: Path, need_labels: bool) -> Collection:
    """A YAML file, or a pack file (its scenes and the split it was packed with)."""
    from hsi._yaml import read_yaml

    if not path.is_file():
        raise DatasetNotFoundError(f"scenes: {str(path)!r}: no such file (a collection YAML file or a pack .h5)")
    if path.suffix.lower() in (".h5", ".hdf5", ".he5"):
        from hsi.data.sources.packfile import read_pack_collection

        return _check(read_pack_collection(path), f"scenes ({path})")
    data = read_yaml(path, "scenes", CollectionError)  # a key given twice is refused, naming its lines
    if isinstance(data, list):
        data = {"scenes": data}
    if not isinstance(data, Mapping):
        raise CollectionError(f"scenes: {str(path)!r}: expected a mapping with a 'scenes' list, found "
                              f"{type(data).__name__}")
    return _from_mapping(data, path.parent, str(path), need_labels)


def read_collection(value: Any, *, need_labels: bool = True) -> Collection:
    """The collection of ``value``, checked before any cube is read.

    Parameters
    ----------
    value : Collection, str, Path, list or dict
        A collection; a YAML file or a pack file (``.h5``); a list of entries (mappings or
        :class:`SceneEntry`); or a mapping with ``scenes`` and the split keys.
    need_labels : bool
        Refuse a cube entry without ``labels`` (training); inference does not need them.

    Raises
    ------
    CollectionError
        Unknown keys (with the closest one), duplicate or unusable names, a split whose
        scene lists do not fit the collection.
    DatasetNotFoundError
        A file named by an entry (or the collection file) is not there.
    """
    if isinstance(value, Collection):
        return value
    if isinstance(value, (str, Path)):
        return _read_file(Path(value).expanduser(), need_labels)
    if isinstance(value, Mapping):
        return _from_mapping(value, None, None, need_labels)
    if isinstance(value, (list, tuple)):
        return _from_mapping({"scenes": list(value)}, None, None, need_labels)
    raise CollectionError(f"scenes: expected a list of scene entries, a mapping with 'scenes', or a YAML / pack file; "
                          f"found {type(value).__name__}")


def with_split(col: Collection, split: str | None = None, test_scenes: Sequence[str] = (),
               val_scenes: Sequence[str] = ()) -> Collection:
    """``col`` with another split (checked as a file's would be)."""
    new = replace(col, split=split or col.split, test_scenes=tuple(test_scenes), val_scenes=tuple(val_scenes))
    return _check(new, _where(col.source))
