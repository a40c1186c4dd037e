"""A chain of band transformers fitted on training pixels, with save/load and state.

On disk a fitted pipeline is two files side by side: ``<name>.json`` (format version,
step classes, parameters, scalar learned values, SHA-256 of the arrays file) and
``<name>.npz`` (the learned arrays). :meth:`Pipeline.to_state` gives the same content
as one dict of plain JSON types (for Lightning checkpoints loaded with
``weights_only=True``). Both round-trips restore the float64 arrays exactly, so the
loaded pipeline transforms bit-identically.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hsi._atomic import write_bytes_atomic, write_json_atomic
from hsi.errors import MissingFileError, OptionError, OverwriteError
from hsi.preprocess._base import BandTransformer, StateFormatError, refuse_mask_as_y, training_pixels
from hsi.preprocess._registry import transformer_from_state
from hsi.preprocess._state import decode_value, encode_value

__all__ = ["FORMAT_VERSION", "Pipeline"]

#: Version of the saved/state layout written by this code; loading another is an error.
FORMAT_VERSION = 1
_FORMAT = "hsi.preprocess.Pipeline"


def _paths(path: str | Path) -> tuple[Path, Path]:
    path = Path(path)
    base = path.with_suffix("") if path.suffix in (".json", ".npz") else path
    return base.parent / (base.name + ".json"), base.parent / (base.name + ".npz")


def _check_header(state: Any, where: str) -> None:
    if not isinstance(state, dict):
        raise StateFormatError(f"{where}: expected a JSON object, found {type(state).__name__}")
    if state.get("format") != _FORMAT:
        raise StateFormatError(
            f"{where}: not a saved hsi pipeline (format {state.get('format')!r}, "
            f"expected {_FORMAT!r})"
        )
    version = state.get("format_version")
    if version != FORMAT_VERSION:
        raise StateFormatError(
            f"{where}: unsupported format_version {version!r}; this version of hsi reads "
            f"format_version {FORMAT_VERSION}. Refit the pipeline or use the hsi release "
            "that wrote it"
        )
    if not isinstance(state.get("steps"), list):
        raise StateFormatError(f"{where}: 'steps' must be a list")


def _step_names(steps: Sequence[Any]) -> list[str]:
    """Each step's name: its class name in lower case, numbered ``-1``, ``-2``... when repeated (as scikit-learn's
    ``make_pipeline``)."""
    names = [type(step).__name__.lower() for step in steps]
    seen: dict[str, int] = {}
    out = []
    for name in names:
        if names.count(name) > 1:
            seen[name] = seen.get(name, 0) + 1
            name = f"{name}-{seen[name]}"
        out.append(name)
    return out


class Pipeline(BandTransformer):
    """Apply transformers in order; fit each on the training pixels as transformed so far.

    ``fit`` gathers the training pixels once (``X[sample_mask]``, NaN pixels dropped with a
    warning), then fits each step on them and passes them through it; wavelengths follow
    band removal (the kept bands) and the derivative (the midpoints), and are dropped after
    another step that changes the band count (PCA).

    Like its steps it is a scikit-learn estimator (``clone`` gives an unfitted copy of
    every step). Its steps' parameters are nested parameters, named as scikit-learn's
    ``make_pipeline`` names steps (the class name in lower case, ``-1``, ``-2``... when a
    class is repeated): ``set_params(pca__n_components=10)``, ``get_params(deep=True)``,
    :attr:`named_steps`, and a grid search over ``pca__n_components`` work. The same steps in
    a ``sklearn.pipeline.Pipeline``, fitted with ``fit(cube, <step>__sample_mask=mask)``
    for each step, give the same output, with three differences: this class leaves
    training pixels with a non-finite band out of every step (scikit-learn's out of the
    steps before a :class:`NonFiniteFill` only); it carries the wavelengths from step to
    step (scikit-learn passes ``<step>__wavelengths=`` to that one step); and it passes
    the training pixels through the steps in float64, so on a float32 cube a step fitted
    after a scaling may learn values a few float32 ulps apart.

    Parameters
    ----------
    steps : list of transformers
        E.g. ``[RemoveBands(...), PerBandStandardize(), PCA(30)]``; may be empty.

    Attributes
    ----------
    n_bands_in_ : int
        Bands expected by :meth:`transform`.
    n_bands_out_ : int
        Bands produced.
    """

    _fitted_attrs = ("n_bands_in_", "n_bands_out_")

    def __init__(self, steps: Sequence[BandTransformer]) -> None:
        self.steps = steps

    def _check_steps(self) -> list[BandTransformer]:
        steps = list(self.steps)
        for i, step in enumerate(steps):
            if not isinstance(step, BandTransformer) or isinstance(step, Pipeline):
                raise TypeError(
                    f"Pipeline: steps[{i}] must be an hsi.preprocess transformer, "
                    f"found {type(step).__name__}"
                )
        return steps

    # -- nested parameters --------------------------------------------------------
    @property
    def named_steps(self) -> dict[str, BandTransformer]:
        """The steps by name (the prefixes of nested parameters: ``pca`` of ``pca__n_components``)."""
        return dict(zip(_step_names(self.steps), self.steps))

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """``steps``; with ``deep`` also each step by name and its parameters as ``<step>__<parameter>``."""
        params = super().get_params(deep=False)
        if deep:
            for name, step in self.named_steps.items():
                params[name] = step
                if hasattr(step, "get_params"):
                    params.update({f"{name}__{k}": v for k, v in step.get_params(deep=True).items()})
        return params

    def set_params(self, **params: Any) -> Pipeline:
        """Set ``steps``, replace a step by name (``pca=PCA(5)``) or set a step's parameter (``pca__n_components=5``).

        Raises
        ------
        OptionError
            A name that is neither ``steps`` nor a step's (the message lists the valid names).
        """
        if "steps" in params:
            self.steps = params.pop("steps")
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            names = list(self.named_steps)
            if name not in names:
                steps_part = (f", the steps {names} and their parameters as '<step>__<parameter>' "
                              f"(e.g. '{names[-1]}__...')" if names else " only (the pipeline has no step)")
                raise OptionError(key, value, f"Invalid parameter {key!r} for this Pipeline: its parameters are "
                                  f"'steps'{steps_part}")
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                steps = list(self.steps)
                steps[names.index(name)] = value
                self.steps = steps
        for name, values in nested.items():
            self.named_steps[name].set_params(**values)
        return self

    def fit(self, X: Any, y: Any = None, *, sample_mask: Any | None = None, wavelengths: Any = None) -> Pipeline:
        """Fit every step on the pixels where ``sample_mask`` is True (all when None); returns self.

        ``y`` is ignored (scikit-learn's signature); ``wavelengths`` (C,) reach the steps that use them.
        """
        self._reset()
        steps = self._check_steps()
        x = training_pixels(X, sample_mask, "Pipeline.fit")
        refuse_mask_as_y(X, y, "Pipeline.fit")
        n_in = x.shape[1]
        wl = wavelengths
        for step in steps:
            step.fit(x, wavelengths=wl)
            if hasattr(step, "wavelengths_out_"):  # RemoveBands, FirstDerivative
                wl = step.wavelengths_out_
            elif step.n_bands_out_ != step.n_bands_in_:
                wl = None
            x = step.transform(x)
        self.n_bands_in_ = int(n_in)
        self.n_bands_out_ = int(x.shape[1])
        return self

    def wavelengths_out(self, wavelengths: Any) -> np.ndarray | None:
        """Band centres (nm) of :meth:`transform`'s output for an input on ``wavelengths``; None when lost (PCA).

        Band removal keeps the kept bands' centres, the derivative gives midpoints, and another
        step that changes the band count loses them. ``wavelengths`` None gives None.
        """
        wl = None if wavelengths is None else np.asarray(wavelengths, dtype=np.float64)
        for step in self._check_steps():
            if wl is None:
                return None
            if hasattr(step, "wavelengths_out_"):
                wl = step.wavelengths_out_
            elif step.n_bands_out_ != step.n_bands_in_:
                wl = None
        return None if wl is None else np.asarray(wl, dtype=np.float64)

    @property
    def in_place(self) -> bool:  # type: ignore[override]
        """True when every step can write into a given array (:meth:`transform` with ``out``)."""
        return all(step.in_place for step in self._check_steps())

    def transform(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Transform any ``(..., C)`` array through every step; returns float32.

        ``out`` (float32, the result's shape; ``x`` itself is allowed when the band count
        is kept) receives the result: step by step when every step works in place
        (:attr:`in_place`, no intermediate arrays), else copied in at the end.
        """
        x = self._check_input(x)
        steps = self._check_steps()
        if out is not None and steps and self.in_place:
            for step in steps:
                x = step.transform(x, out=out)
            return out
        for step in steps:
            x = step.transform(x)
        if out is None:
            return np.asarray(x, dtype=np.float32)
        np.copyto(out, x)
        return out

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, i: int) -> BandTransformer:
        return self.steps[i]

    # -- state ------------------------------------------------------------------
    def _state(self, sink: Any = None) -> dict[str, Any]:
        steps = self._check_steps()
        out = []
        for i, step in enumerate(steps):
            step_sink = None if sink is None else (lambda a, i=i: sink(i, a))
            out.append(step._encode(step_sink))
        return {
            "format": _FORMAT,
            "format_version": FORMAT_VERSION,
            "steps": out,
            "fitted": encode_value(self.fitted_state()) if self.is_fitted else None,
        }

    def to_state(self) -> dict[str, Any]:
        """The whole pipeline as plain JSON types (dict/list/str/int/float/bool/None)."""
        return self._state()

    @classmethod
    def from_state(cls, state: dict[str, Any], _source: Any = None) -> Pipeline:
        """Rebuild a pipeline from :meth:`to_state` output; checks the format version."""
        _check_header(state, "Pipeline.from_state")
        steps = [transformer_from_state(s, _source) for s in state["steps"]]
        pipe = cls(steps)
        fitted = state.get("fitted")
        if fitted is not None:
            pipe._set_fitted_state(decode_value(fitted, _source))
            unfitted = [type(s).__name__ for s in steps if not s.is_fitted]
            if unfitted:
                raise StateFormatError(
                    f"Pipeline.from_state: pipeline is marked fitted but steps {unfitted} are not"
                )
        return pipe

    def save(self, path: str | Path) -> Path:
        """Write ``<path>.json`` and ``<path>.npz`` atomically (a ``.json``/``.npz`` suffix is replaced).

        Only files this method wrote before are replaced: an existing ``.json`` must be a
        saved hsi pipeline and an existing ``.npz`` must carry the pipeline marker, else
        :class:`hsi.errors.OverwriteError` is raised and nothing is written. The JSON
        records the SHA-256 of the arrays file and of its own content.

        Returns the path of the JSON file.
        """
        json_path, npz_path = _paths(path)
        _check_replaceable(json_path, npz_path)
        arrays: dict[str, np.ndarray] = {}

        def sink(i: int, arr: np.ndarray) -> dict:
            key = f"step{i}_{len(arrays)}"
            arrays[key] = arr
            return {"__npz__": key}

        state = self._state(sink)
        buf = io.BytesIO()
        np.savez(buf, **{_NPZ_MARKER: np.array(_FORMAT)}, **arrays)
        blob = buf.getvalue()
        state["arrays_file"] = npz_path.name
        state["arrays_sha256"] = hashlib.sha256(blob).hexdigest()
        state["state_sha256"] = _state_digest(state)
        json_path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(npz_path, blob)
        write_json_atomic(json_path, state, indent=1, newline=False)
        return json_path

    @classmethod
    def load(cls, path: str | Path) -> Pipeline:
        """Read a pipeline written by :meth:`save` (give the ``.json``, ``.npz`` or base path).

        Both checksums are verified before anything is used: an edited JSON (a learned
        value such as ``n_components_`` changed by hand) or a swapped, truncated or
        corrupt ``.npz`` raises :class:`StateFormatError`.
        """
        json_path, _ = _paths(path)
        if not json_path.is_file():
            raise MissingFileError(f"Pipeline.load: no saved pipeline at {json_path}")
        state = _read_json(json_path)
        _check_header(state, f"Pipeline.load({json_path})")
        recorded = state.get("state_sha256")
        if recorded is None:
            raise StateFormatError(
                f"Pipeline.load: {json_path} has no state_sha256 (written by an older hsi, or edited); "
                "load it with the version that wrote it and save it again, or refit"
            )
        if _state_digest(state) != recorded:
            raise StateFormatError(
                f"Pipeline.load: {json_path} does not match its recorded state_sha256; the file was edited or "
                "is corrupt (learned values cannot be changed by hand); refit and save again"
            )
        npz_path = json_path.parent / str(state.get("arrays_file", ""))
        if not npz_path.is_file():
            raise MissingFileError(
                f"Pipeline.load: arrays file {npz_path} named in {json_path} is missing"
            )
        blob = npz_path.read_bytes()
        if hashlib.sha256(blob).hexdigest() != state.get("arrays_sha256"):
            raise StateFormatError(
                f"Pipeline.load: {npz_path} does not match the SHA-256 recorded in {json_path}; "
                "the arrays file is corrupt or belongs to another pipeline"
            )
        try:
            npz = np.load(io.BytesIO(blob), allow_pickle=False)
        except (ValueError, OSError) as err:
            raise StateFormatError(f"Pipeline.load: cannot read {npz_path}: {err}") from err

        def source(key: str) -> np.ndarray:
            if key not in npz.files:
                raise StateFormatError(f"Pipeline.load: array {key!r} missing from {npz_path}")
            return npz[key]

        with npz:
            return cls.from_state(state, _source=source)


#: name of the array that marks an ``.npz`` as written by :meth:`Pipeline.save`
_NPZ_MARKER = "hsi_pipeline_format"


def _state_digest(state: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``state`` without its own ``state_sha256`` entry."""
    body = {k: v for k, v in state.items() if k != "state_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _read_json(json_path: Path) -> Any:
    try:
        return json.loads(json_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise StateFormatError(
            f"Pipeline.load: {json_path} is not valid JSON ({err}); the file is corrupt"
        ) from err


def _ours_json(path: Path) -> bool:
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(state, dict) and state.get("format") == _FORMAT


def _ours_npz(path: Path) -> bool:
    try:
        with np.load(path, allow_pickle=False) as npz:
            return _NPZ_MARKER in npz.files and str(npz[_NPZ_MARKER]) == _FORMAT
    except (OSError, ValueError, EOFError):
        return False


def _check_replaceable(json_path: Path, npz_path: Path) -> None:
    """Raise :class:`OverwriteError` if either target exists and was not written by :meth:`Pipeline.save`."""
    for target, ours in ((json_path, _ours_json), (npz_path, _ours_npz)):
        if target.exists() and (not target.is_file() or not ours(target)):
            raise OverwriteError(
                f"Pipeline.save: {target} already exists and was not written by Pipeline.save; "
                f"it is left untouched. Choose another name (a pipeline saved as {json_path.stem!r} "
                f"needs both {json_path.name} and {npz_path.name})"
            )
