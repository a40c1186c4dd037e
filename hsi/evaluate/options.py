"""``EvaluateOptions``: the options of ``hsi evaluate`` that belong to neither the data, the model nor a run.

The data, model and run options are those of ``hsi train`` (each defined once, by the class
that uses it); ``--folds`` is the DataModule's ``folds``, whose default here is
:data:`DEFAULT_FOLDS`. Each field below is defined once and becomes a flag.
"""

from __future__ import annotations

from dataclasses import dataclass

from hsi._checks import is_int
from hsi.errors import OptionError

__all__ = ["ALL_MODELS", "DEFAULT_FOLDS", "DEFAULT_MODELS", "DEFAULT_ROW", "EvaluateOptions", "check_split"]

#: folds of an evaluation when ``--folds`` is not given
DEFAULT_FOLDS = 5
#: the name that means the package's default run (no ``--model``, the registry's recommendations)
DEFAULT_ROW = "default"
#: the name that means every model: the registry's networks, then svm and rf
ALL_MODELS = "all"
#: the models compared when ``--models`` is not given
DEFAULT_MODELS = (DEFAULT_ROW, "svm", "rf")


def check_split(data: dict) -> None:
    """Refuse a data ``split`` other than ``block``: an evaluation's folds are made of the block split's blocks."""
    if data.get("split", "block") != "block":
        raise OptionError("split", data["split"], "block (hsi evaluate cross-validates over the blocks of the "
                          "block split; --random adds a random-split column)")


@dataclass
class EvaluateOptions:
    """What to compare and where to write it.

    Parameters
    ----------
    models : tuple[str, ...] | None
        Models to compare: registry names (`hsi train --help` lists them), svm, rf, default for the
        package's default run (no --model), and all for every registry network, svm and rf. None: default, svm
        and rf.
    seeds : tuple[int, ...]
        Seeds; each gives its own fold partition, initialisation and data order, and every fold is run for
        every seed.
    out : str | None
        Output folder; run the same command again to resume an interrupted evaluation there (finished folds
        are reused). None: a new folder evaluations/<scene>-<time>.
    random : bool
        Add a column of per-pixel random splits (one run per seed), for comparison with the literature only:
        test pixels leak into training patches.
    overwrite : bool
        Run again the folds whose finished runs in --out were made with other settings (default: refuse).
    """

    models: tuple[str, ...] | None = None
    seeds: tuple[int, ...] = (0,)
    out: str | None = None
    random: bool = False
    overwrite: bool = False

    def __post_init__(self) -> None:
        seeds = tuple(self.seeds)
        if not seeds or not all(is_int(s) and 0 <= s < 2**32 for s in seeds) or len(set(seeds)) != len(seeds):
            raise OptionError("seeds", list(seeds), "one or more distinct integers from 0 to 2**32 - 1")
        if self.models is not None and (not self.models or len(set(self.models)) != len(self.models)):
            raise OptionError("models", list(self.models), "one or more distinct model names")
        self.seeds = seeds

    @property
    def model_names(self) -> tuple[str, ...]:
        """The models compared (``default`` included as written)."""
        return tuple(self.models) if self.models else DEFAULT_MODELS
