"""Run the five checks on one DataModule."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hsi.doctor.batches import check_batches
from hsi.doctor.inference import check_inference
from hsi.doctor.normalization import check_normalization
from hsi.doctor.overfit import ModelFactory, check_overfit, default_model_factory
from hsi.doctor.result import CheckResult
from hsi.doctor.spectra import check_spectra

__all__ = ["CHECKS", "run_checks"]

#: check name -> whether it takes the model factory
CHECKS = {"batches": False, "spectra": False, "overfit": True, "normalization": False, "inference": True}

_FUNCTIONS: dict[str, Callable[..., CheckResult]] = {
    "batches": check_batches, "spectra": check_spectra, "overfit": check_overfit,
    "normalization": check_normalization, "inference": check_inference,
}


def run_checks(datamodule: Any, out: str | Path | None = None, model_factory: ModelFactory | None = None,
               checks: Iterable[str] | None = None,
               on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    """Prepare and set up ``datamodule``, then run the checks in order.

    Parameters
    ----------
    datamodule : HSIDataModule
        The pipeline to check (not yet set up, or set up).
    out : str or Path, optional
        Folder of the checks' PNG files.
    model_factory : ModelFactory, optional
        Network of the overfit and inference checks (default ``cnn2d``).
    checks : iterable of str, optional
        Names from :data:`CHECKS` (default: all five).
    on_result : callable, optional
        Called with each result as soon as its check ends (to print progressively).

    Returns
    -------
    list of CheckResult
    """
    from hsi.errors import OptionError

    names = list(CHECKS) if checks is None else list(checks)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise OptionError("checks", unknown[0], "any of " + ", ".join(CHECKS))
    if getattr(datamodule, "hparams", {}).get("gather_on_device"):
        raise OptionError("gather_on_device", True, "False for hsi doctor: the checks read host batches (the device "
                          "path cuts the same windows; check it with gather_on_device=False)")
    if len(datamodule.collection.entries) > 1:
        raise OptionError("scenes", datamodule.hparams["scenes"], "one scene for run_checks (its checks read one cube "
                          "and one split): check each scene of the collection on its own, as hsi doctor --scenes does")
    datamodule.prepare_data()
    datamodule.setup("fit")
    datamodule.setup("test")
    factory = model_factory or default_model_factory()
    results = []
    for name in names:
        args = (datamodule, factory, out) if CHECKS[name] else (datamodule, out)
        result = _FUNCTIONS[name](*args)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results
