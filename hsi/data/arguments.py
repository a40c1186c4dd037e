"""The roles and checks of ``HSIDataModule``'s arguments, and the checks that span several of them.

Each argument's :class:`hsi._roles.Role` (``SOURCE``, ``recipe(...)``, ``loader(...)``) sits in
the DataModule's signature; the checks below are the ones those roles name (rules of
:mod:`hsi._checks`), plus :func:`hsi._combinations.check_combinations` for what only several
arguments together decide (a cube needs labels, a fixed split a test map, the fractions
depend on the split). Both import no torch, so ``hsi train`` runs them at parse time. Each bad value raises
:class:`hsi.errors.OptionError` naming the argument, the value and what is allowed, so a
script, LightningCLI and ``hsi train`` all report it the same way and before any file is
opened. What needs the data (a PCA larger than the band count, a patch larger than the
scene) is checked when the scene is loaded.
"""

from __future__ import annotations

from typing import Any

from hsi._checks import band_indices, integer, number, odd_integer, pca_components, wavelength_range
from hsi._combinations import check_combinations
from hsi._roles import Role

__all__ = ["check_combinations", "check_pca", "integral_pca", "check_remove_bands", "check_wavelength_range", "loader",
           "recipe", "source"]


def recipe(check: Any = None, *, resume: str = "fixed") -> Role:
    """The role of an argument that changes the cached arrays (it is part of the cache key)."""
    return Role("recipe", resume, check)  # type: ignore[arg-type]


def loader(check: Any = None, *, resume: str = "free") -> Role:
    """The role of an argument that only changes how batches are served (a resumed run may change it)."""
    return Role("loader", resume, check)  # type: ignore[arg-type]


def source(flag: str | None = None) -> Role:
    """The role of an argument that names the scene (part of the cache's source identity, kept on resume).

    ``flag`` is its command-line name where the Python one reads badly (``cube_path`` is ``--cube``).
    """
    return Role("source", "fixed", None, flag)


#: the checks the signature's roles name
PATCH_SIZE = odd_integer(1, "the patch is centred on its pixel")
AT_LEAST_ONE = integer(1)
AT_LEAST_ZERO = integer(0)
BUFFER = integer(0, optional=True, none_means=" (patch_size // 2)")
SPLIT_SEED = integer(0, optional=True, none_means=" (the seed)")
FOLDS = integer(2, optional=True, none_means=" (no cross-validation folds)")
FOLD = integer(1, optional=True, none_means=" (no cross-validation folds)")
TRAIN_PER_CLASS = integer(1, optional=True, none_means=" (no label budget: every training pixel)")
TRAIN_FRACTION = number(0.0, 1.0, low_open=True, high_open=False, optional=True,
                        none_means=" (no label budget: every training pixel)")
SPECTRAL_SCALE = number(0.0, 1.0, optional=True, none_means=" (0 for one scene, more for several)")
SPECTRAL_NOISE = number(0.0, optional=True, none_means=" (0 for one scene, more for several)")
#: a list of band indices >= 0, or None
check_remove_bands = band_indices
#: two wavelengths MIN < MAX in nm, or None
check_wavelength_range = wavelength_range
#: the PCA rule of :func:`hsi._checks.check_components`, or None (no PCA)
check_pca = pca_components


def integral_pca(pca: Any) -> Any:
    """``4.0`` -> ``4``: a whole float >= 1 is a number of components (LightningCLI hands ``--data.pca 4`` over as 4.0)."""
    if isinstance(pca, float) and pca >= 1 and pca.is_integer():
        return int(pca)
    return pca
