"""``best.ckpt`` across an interrupt: a resumed run keeps the best epoch of the run it continues.

Lightning restores a :class:`~lightning.pytorch.callbacks.ModelCheckpoint`'s best score only
when the checkpoint folder is the same; a resumed run writes into a new folder (its own
staging folder), so the best epoch before the interrupt would be forgotten and the resumed
run would report the best of the epochs it trained itself. :class:`BestCheckpoint` carries it
over: the interrupted run keeps its ``best.ckpt`` beside ``last.ckpt``
(:data:`hsi.training.outputs.RESUMABLE`), and the resumed run copies it into its folder with
its score, so it ends with the checkpoint an uninterrupted run would have ended with.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from lightning.pytorch.callbacks import ModelCheckpoint

from hsi._atomic import atomic_path

__all__ = ["BestCheckpoint"]


class BestCheckpoint(ModelCheckpoint):
    """``best.ckpt`` by the highest ``val_oa``, carried over from the folder of a resumed checkpoint.

    Parameters
    ----------
    dirpath : Path
        Where this run writes ``best.ckpt``.
    earlier : Path or None
        The folder of the checkpoint this run resumes (None: a new run).
    """

    def __init__(self, dirpath: Path, earlier: Path | None = None) -> None:
        super().__init__(dirpath=dirpath, filename="best", monitor="val_oa", mode="max", save_top_k=1,
                         enable_version_counter=False)
        self.earlier = earlier

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the best score, with the earlier run's ``best.ckpt`` copied into this run's folder."""
        carried = self._carried_state(state_dict)
        super().load_state_dict(carried if carried is not None else state_dict)

    def _carried_state(self, state: dict[str, Any]) -> dict[str, Any] | None:
        """``state`` pointing at a copy of the earlier ``best.ckpt`` in this folder (None: nothing to carry)."""
        score, best = state.get("best_model_score"), state.get("best_model_path")
        if self.earlier is None or score is None or not best or state.get("dirpath") == self.dirpath:
            return None
        source = Path(self.earlier) / Path(best).name
        if not source.is_file() or not _saved_with_score(source, self.state_key, score):
            return None  # not the checkpoint the state speaks of: the resumed run starts its best afresh
        target = Path(self.dirpath) / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp:  # DDP ranks may copy at once: each replaces whole
            shutil.copyfile(source, tmp)
        path = str(target)
        return {**state, "dirpath": self.dirpath, "best_model_path": path, "best_k_models": {path: score},
                "kth_best_model_path": path, "kth_value": score, "last_model_path": ""}


def _saved_with_score(path: Path, state_key: str, score: Any) -> bool:
    """Whether the checkpoint at ``path`` was saved as the best one with ``score`` (its own callback state says so)."""
    from hsi.data.checkpoint import read_checkpoint
    from hsi.errors import CheckpointError

    try:
        saved = read_checkpoint(path, "resume").get("callbacks", {}).get(state_key, {})
    except CheckpointError:  # unreadable: not carried over; the resumed run's own epochs decide
        return False
    found = saved.get("best_model_score")
    return found is not None and float(found) == float(score)
