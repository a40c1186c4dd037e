"""``hsi doctor``: five checks of a data pipeline, each PASS, FAIL or UNDECIDED with its evidence and a figure.

1. :func:`check_batches` - one batch per split: shape ``(B, C, P, P)``, dtype, labels, range; the file's units;
2. :func:`check_spectra` - band order of the file (smoothness, red edge) and of the pipeline (re-read reference);
3. :func:`check_overfit` - labels aligned with the map and registered with the cube; a fixed 64-patch batch
   learned far faster than the same labels permuted;
4. :func:`check_normalization` - preprocessing fitted on the training pixels; test range under it;
5. :func:`check_inference` - tiled, blended prediction equal to untiled on a crop.

:func:`run_checks` runs them all on a DataModule.
"""

from __future__ import annotations

from hsi.doctor.batches import check_batches
from hsi.doctor.inference import check_inference
from hsi.doctor.normalization import check_normalization
from hsi.doctor.overfit import ModelFactory, check_overfit, default_model_factory
from hsi.doctor.result import CheckResult
from hsi.doctor.run import CHECKS, run_checks
from hsi.doctor.spectra import check_spectra

__all__ = [
    "CHECKS",
    "CheckResult",
    "ModelFactory",
    "check_batches",
    "check_inference",
    "check_normalization",
    "check_overfit",
    "check_spectra",
    "default_model_factory",
    "run_checks",
]
