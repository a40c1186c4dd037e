"""The preprocessing a run asks for, as one typed value, turned into a pipeline in one place.

:class:`PreprocessSpec` is built once from the options (:meth:`PreprocessSpec.from_options`,
``HSIDataModule``'s arguments of the same names) and every path fits it the same way
(:meth:`PreprocessSpec.fit`): one scene, a collection, the doctor's refit. Inference reads the
fitted pipeline from the checkpoint, so what was fitted is what runs. :func:`make_pipeline`
is the same spec for code that builds a pipeline by hand.

A new data option that changes the preprocessing is three things: a field here (with
``metadata={"option": True, "example": <a value other than the default>}``) and its step in
:meth:`PreprocessSpec.steps`, a transformer in its own module, and the ``HSIDataModule``
argument of the same name (``recipe()`` role). ``tests/data/test_preprocess_spec.py`` then
checks that it reaches every path, and fails for a recipe argument that is neither a field
nor a known non-preprocessing argument, so an option cannot be dropped silently.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hsi.errors import OptionError
from hsi.preprocess._base import BandTransformer
from hsi.preprocess.bands import RemoveBands
from hsi.preprocess.fill import NonFiniteFill
from hsi.preprocess.pca import PCA
from hsi.preprocess.pipeline import Pipeline
from hsi.preprocess.scaling import PerBandMinMax, PerBandStandardize
from hsi.preprocess.spectral import normalize_steps

__all__ = ["PreprocessSpec", "make_pipeline"]


def _option(default: Any, example: Any) -> Any:
    """A field that is also an ``HSIDataModule`` argument; ``example`` is a non-default value the tests use."""
    return field(default=default, metadata={"option": True, "example": example})


@dataclass(frozen=True)
class PreprocessSpec:
    """The chain non-finite fill, band removal, per-pixel normalisation, scaling, PCA; every step optional.

    Parameters
    ----------
    fill_nonfinite : 'median', 'mean' or None
        A :class:`~hsi.preprocess.NonFiniteFill` first: NaN / infinite values become the
        band's training median (or mean). The data path always fills with the median.
    remove_bands : sequence of int, optional
        Band indices removed (:class:`~hsi.preprocess.RemoveBands`).
    wavelength_ranges, bbl : optional
        More band removal: windows in nm (fit with ``wavelengths=``) and an ENVI bad-band list.
    normalize : one of :data:`~hsi.preprocess.spectral.NORMALIZE_METHODS`, or None
        Per-pixel steps against sensor gain and offset (:mod:`hsi.preprocess.spectral`).
    scaling : 'minmax', 'standardize' or None
        Per-band scaling (:class:`~hsi.preprocess.PerBandMinMax`, ``feature_range``, or
        :class:`~hsi.preprocess.PerBandStandardize`).
    pca : int, float in (0, 1), or None
        ``n_components`` of a :class:`~hsi.preprocess.PCA` step (``whiten``, ``random_state``).
    """

    fill_nonfinite: str | None = None
    remove_bands: tuple[int, ...] | None = _option(None, (0,))
    wavelength_ranges: tuple[tuple[float, float], ...] | None = None
    bbl: tuple[int, ...] | None = None
    normalize: str | None = _option(None, "l2")
    scaling: str | None = _option("minmax", None)
    feature_range: tuple[float, float] = (0.0, 1.0)
    pca: int | float | None = _option(None, 2)
    whiten: bool = False
    random_state: int = 0

    def __post_init__(self) -> None:
        # lists become tuples: the spec is hashable and compares equal however the options were spelled
        for name in ("remove_bands", "bbl", "feature_range"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(value))
        if self.wavelength_ranges is not None:
            object.__setattr__(self, "wavelength_ranges", tuple(tuple(r) for r in self.wavelength_ranges))

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """The fields that are ``HSIDataModule`` arguments (what a run records as its preprocessing)."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("option"))

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> PreprocessSpec:
        """The data path's spec from resolved DataModule arguments (``scaling="auto"`` already resolved).

        Every option field is read (a missing one is a ``KeyError``, not a silent default), and
        non-finite values are always filled with the training median.
        """
        return cls(fill_nonfinite="median", **{name: options[name] for name in cls.option_names()})

    def to_options(self) -> dict[str, Any]:
        """The option fields as JSON types (lists for tuples): what ``metadata.json`` records."""
        values = {name: getattr(self, name) for name in self.option_names()}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}

    def steps(self) -> list[BandTransformer]:
        """The unfitted steps, in order (raises :class:`~hsi.errors.OptionError` for an unknown value)."""
        normalizing = normalize_steps(self.normalize)
        steps: list[BandTransformer] = []
        if self.fill_nonfinite is not None:
            if self.fill_nonfinite not in ("median", "mean"):
                raise OptionError("fill_nonfinite", self.fill_nonfinite, "'median', 'mean' or None")
            steps.append(NonFiniteFill(strategy=self.fill_nonfinite))
        if self.remove_bands is not None or self.wavelength_ranges is not None or self.bbl is not None:
            steps.append(RemoveBands(indices=_as_list(self.remove_bands), wavelength_ranges=_as_list(
                self.wavelength_ranges), bbl=_as_list(self.bbl)))
        steps.extend(normalizing)
        if self.scaling == "minmax":
            steps.append(PerBandMinMax(feature_range=self.feature_range))
        elif self.scaling == "standardize":
            steps.append(PerBandStandardize())
        elif self.scaling is not None:
            raise OptionError("scaling", self.scaling, "make_pipeline: scaling must be 'minmax', 'standardize' or None")
        if self.pca is not None:
            steps.append(PCA(n_components=self.pca, whiten=self.whiten, random_state=self.random_state))
        return steps

    def pipeline(self) -> Pipeline:
        """The unfitted :class:`~hsi.preprocess.Pipeline` of :meth:`steps`."""
        return Pipeline(self.steps())

    def check_bands(self, num_bands: int, of: str) -> None:
        """Refuse a PCA of more components than the bands left after removal, naming whose bands (``of``)."""
        kept = num_bands - len(set(self.remove_bands or ()))
        if isinstance(self.pca, int) and not isinstance(self.pca, bool) and self.pca > kept:
            raise OptionError("pca", self.pca, f"at most {kept}, the number of bands of {of}")

    def bands_out(self, num_bands: int) -> int:
        """The bands the pipeline gives for ``num_bands`` input bands, known before fitting (a PCA given as a
        variance fraction counts as keeping every band: its number of components is known only once fitted)."""
        bands = num_bands - len(set(self.remove_bands or ()))
        if str(self.normalize or "none").startswith("derivative"):
            bands -= 1  # band-to-band differences: one fewer
        if isinstance(self.pca, int) and not isinstance(self.pca, bool):
            bands = min(bands, self.pca)
        return bands

    def fit(self, x: np.ndarray, mask: np.ndarray | None, *, wavelengths: Any, of: str) -> Pipeline:
        """:meth:`pipeline` fitted on the pixels of ``x`` (``(..., C)``) where ``mask`` holds (all: None).

        ``of`` names the data in a band-count error (e.g. ``"scene 'samson'"``).
        """
        self.check_bands(int(np.shape(x)[-1]), of)
        return self.pipeline().fit(x, sample_mask=mask, wavelengths=wavelengths)


def _as_list(value: Sequence[Any] | None) -> list[Any] | None:
    return None if value is None else [list(v) if isinstance(v, tuple) else v for v in value]


def make_pipeline(scaling: str | None = "minmax", pca: int | float | None = None,
                  remove_bands: Sequence[int] | None = None,
                  wavelength_ranges: Sequence[Sequence[float]] | None = None,
                  bbl: Sequence[int] | None = None, *,
                  feature_range: Sequence[float] = (0.0, 1.0), whiten: bool = False,
                  random_state: int = 0, fill_nonfinite: str | None = None,
                  normalize: str | None = None) -> Pipeline:
    """Build the usual chain (:class:`PreprocessSpec`): non-finite fill, band removal, normalisation, scaling, PCA.

    Every step is optional; with the defaults the chain is one :class:`~hsi.preprocess.PerBandMinMax`.

    Parameters
    ----------
    fill_nonfinite : 'median', 'mean' or None
        Put a :class:`~hsi.preprocess.NonFiniteFill` first: NaN / infinite values become the band's
        training median (or mean) before anything else sees them. The DataModule always uses ``'median'``.
    scaling : 'minmax', 'standardize' or None
    pca : int, float in (0, 1), or None
        ``n_components`` of a :class:`~hsi.preprocess.PCA` step.
    remove_bands, wavelength_ranges, bbl
        Passed to :class:`~hsi.preprocess.RemoveBands` (a step is added if any is given); for the
        water-absorption windows use ``wavelength_ranges=WATER_ABSORPTION_NM`` and fit with ``wavelengths=``.
    normalize : one of :data:`~hsi.preprocess.spectral.NORMALIZE_METHODS`, or None
        Per-pixel steps against sensor gain and offset (:mod:`hsi.preprocess.spectral`):
        'brightness' (:class:`~hsi.preprocess.PixelNormalize` 'mean'), 'l2' (``PixelNormalize`` 'l2'),
        'derivative' (:class:`~hsi.preprocess.FirstDerivative`; fit with ``wavelengths=`` for a derivative
        per nm), 'derivative+l2' (both: the derivative, then its l2 norm); None or 'none' adds no step.
    """
    return PreprocessSpec(fill_nonfinite=fill_nonfinite, remove_bands=remove_bands, wavelength_ranges=wavelength_ranges,
                          bbl=bbl, normalize=normalize, scaling=scaling, feature_range=feature_range, pca=pca,
                          whiten=whiten, random_state=random_state).pipeline()
