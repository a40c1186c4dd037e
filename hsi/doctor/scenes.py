"""The doctor's check of a collection as a whole: scenes that do not fit together.

:func:`check_scene_shift` FAILs when any scene holds other units or value ranges than the
training scenes (typical raw values :data:`hsi.data.sources.shift.RAW_RATIO_THRESHOLD`
times apart or more, or other known unit kinds), or lies far from them after
preprocessing (:func:`hsi.preprocess.shift.check_shift`): both the training and the
doctor say so, and a run on such scenes never passes unnoticed.
"""

from __future__ import annotations

import warnings
from typing import Any

from hsi.data.sources.shift import value_text
from hsi.doctor.result import CheckResult
from hsi.errors import SceneShiftWarning

__all__ = ["check_scene_shift"]


def _evidence(name: str, record: dict[str, Any]) -> str:
    raw, pre = record["raw"], record["preprocessed"]
    ratio = "n/a" if raw["ratio"] is None else f"{raw['ratio']:.3g}x"
    return (f"{name}: units {raw['units']}, typical raw value {value_text(raw['value_level'])} against "
            f"{value_text(raw['against_value_level'])} ({ratio}{', other units' if raw['units_differ'] else ''}); after "
            f"preprocessing shift factor {pre['factor']:.3g} against {', '.join(pre['against'])} "
            f"(threshold {pre['threshold']:g})")


def check_scene_shift(datamodule: Any) -> CheckResult:
    """PASS when every scene of a collection fits the training scenes (units, raw values, preprocessed values)."""
    with warnings.catch_warnings():  # the evidence below says it all, once
        warnings.simplefilter("ignore", SceneShiftWarning)
        records = datamodule.scene_shift() or {}
    bad = [n for n, r in records.items() if r["raw"]["flagged"] or r["preprocessed"]["shifted"]]
    evidence = [_evidence(n, r) for n, r in records.items()]
    if bad:
        evidence.append(f"scenes {', '.join(bad)} do not fit the training scenes: declare units: and scale: in their "
                        "entries, or normalise (normalize=, preprocess: scene)")
    return CheckResult("scenes", not bad, evidence, None, {"scene_shift": records})
