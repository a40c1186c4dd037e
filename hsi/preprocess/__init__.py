"""Leakage-free preprocessing: transformers fitted on training pixels, and spatial splits.

Transformers follow scikit-learn conventions on the last (band) axis:
``fit(cube, sample_mask=mask)`` learns only from pixels where ``mask`` is True (``y`` is
accepted and ignored), ``transform`` takes any ``(..., C)`` array and returns float32.
Every transformer (and :class:`Pipeline`) is a scikit-learn estimator: ``sklearn.base.clone``,
``get_params`` / ``set_params`` (nested on :class:`Pipeline`: ``pca__n_components``),
``n_features_in_`` and ``sklearn.utils.validation.check_is_fitted`` work, ``check_estimator``
passes but for the checks listed in the docs (splits.md, "scikit-learn's contract"), and the
steps fit inside a ``sklearn.pipeline.Pipeline`` (the mask as ``<step>__sample_mask=``).
Splits return a :class:`Split` of boolean ``(H, W)`` masks;
:func:`leakage_report` audits any pair of masks for a given patch size.
"""

from __future__ import annotations

from hsi.preprocess._base import BandTransformer, NonFiniteWarning, StateFormatError
from hsi.preprocess.bands import WATER_ABSORPTION_NM, WATER_ABSORPTION_NM_WIDE, RemoveBands
from hsi.preprocess.fill import NonFiniteFill
from hsi.preprocess.leakage import leakage_report
from hsi.preprocess.pca import PCA
from hsi.preprocess.pipeline import FORMAT_VERSION, Pipeline
from hsi.preprocess.spec import PreprocessSpec, make_pipeline
from hsi.preprocess.scaling import PerBandMinMax, PerBandStandardize
from hsi.preprocess.spectral import NORMALIZE_METHODS, FirstDerivative, PixelNormalize
from hsi.preprocess.split import (
    Split,
    SplitCounts,
    StratificationWarning,
    block_split,
    fixed_split,
    random_split,
)

__all__ = [
    "FORMAT_VERSION",
    "NORMALIZE_METHODS",
    "PCA",
    "WATER_ABSORPTION_NM",
    "WATER_ABSORPTION_NM_WIDE",
    "BandTransformer",
    "FirstDerivative",
    "NonFiniteFill",
    "NonFiniteWarning",
    "PerBandMinMax",
    "PerBandStandardize",
    "PixelNormalize",
    "Pipeline",
    "PreprocessSpec",
    "RemoveBands",
    "Split",
    "SplitCounts",
    "StateFormatError",
    "StratificationWarning",
    "block_split",
    "fixed_split",
    "leakage_report",
    "make_pipeline",
    "random_split",
]
