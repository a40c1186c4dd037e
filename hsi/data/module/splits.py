"""The opened scenes by name, their train/val/test splits (label budgets included) and what ``metrics.json``
records of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hsi.errors import OptionError

if TYPE_CHECKING:
    from hsi.data.sources.records import Collection
    from hsi.preprocess import Split

__all__ = ["lone_scene", "scene_index", "scene_split", "split_summary"]


def scene_index(names: list[str], name: str) -> int:
    """The position of scene ``name`` among ``names``; :class:`~hsi.errors.OptionError` for another name."""
    if name not in names:
        raise OptionError("scene", name, f"one of the DataModule's scenes ({', '.join(names)})")
    return names.index(name)


def lone_scene(names: list[str], what: str, instead: str) -> str:
    """The name of the only scene; :class:`AttributeError` for several (use ``instead``)."""
    if len(names) != 1:
        raise AttributeError(f"{len(names)} scenes have one {what} each: use {instead}")
    return names[0]


def scene_split(state: dict[str, Any], name: str) -> Split:
    """The train/val/test :class:`~hsi.preprocess.Split` of scene ``name`` in the opened sources' ``state``."""
    from hsi.preprocess import Split

    return Split.from_state(state["splits"][scene_index([str(s["name"]) for s in state["scenes"]], name)])


def split_summary(splits: dict[str, Split], collection: Collection, patch_size: int) -> dict[str, Any]:
    """:meth:`~hsi.data.datamodule.HSIDataModule.split_summary` of ``splits`` (``{scene: split}``); a collection's
    label budget is one draw over all its scenes."""
    from hsi.data.sources.split import collection_leakage

    counts = {name: {f"{k}_pixels": int(getattr(s, k).sum()) for k in ("train", "val", "test")}
              for name, s in splits.items()}
    if len(splits) == 1:
        (split,) = splits.values()
        return {**dict(split.params), **next(iter(counts.values()))}
    col = collection
    summary: dict[str, Any] = {"method": col.split, "test_scenes": list(col.test_scenes),
                               "val_scenes": list(col.val_scenes), "scenes": counts}
    for k in ("train", "val", "test"):
        summary[f"{k}_pixels"] = sum(c[f"{k}_pixels"] for c in counts.values())
    budget = next(iter(splits.values())).params.get("budget")
    if budget is not None:
        summary["budget"] = budget
    held = list(col.test_scenes) + list(col.val_scenes)
    summary["leakage"] = collection_leakage(list(splits.values()), list(splits), patch_size, held)
    return summary
