"""The options of whole-scene inference, defined once (:class:`InferOptions`).

The command line builds its ``hsi infer`` flags from this dataclass: the flag name from the
field name, the type and choices from the annotation (``Literal[...]``), the default from
the field default and the help text from the numpydoc ``Attributes`` entry. The choices of
``format`` are the registered output formats (:mod:`hsi.sinks`), read when the command parses.
"""

from __future__ import annotations

import typing
from dataclasses import asdict, dataclass, fields
from typing import Annotated, Any, Literal

from hsi._checks import boolean, integer
from hsi._combinations import infer_combinations
from hsi._roles import check_declared
from hsi.errors import OptionError
from hsi.sinks import DEFAULT_FORMATS, list_sinks, probability_sinks

__all__ = ["BLEND_MODES", "InferOptions"]

#: weight windows accepted by ``blend``
BlendMode = Literal["gaussian", "hann", "mean"]
BLEND_MODES: tuple[str, ...] = typing.get_args(BlendMode)


@dataclass(frozen=True)
class InferOptions:
    """How a scene is cut into tiles, blended, computed and written.

    Attributes
    ----------
    tile : int
        Side in pixels of the square output tiles (>= 1). Dense models (fcn) see each
        tile plus a margin of their receptive radius; patch-centre models classify every
        pixel of a tile in batches of windows. Tiles larger than the scene are clipped.
    overlap : int
        Output pixels shared by neighbouring tiles of a dense model (0 <= overlap < tile);
        their probabilities are blended with the ``blend`` window. Every tile is already
        read with a margin of the model's receptive radius, so tile borders are exact
        without overlap (the default; it costs no recomputation); overlap matters for
        models whose receptive field is larger than that margin. Patch-centre models
        ignore it (each pixel is computed once).
    blend : {"gaussian", "hann", "mean"}
        Weight window of the blend: "mean" (uniform), "gaussian" (sigma = tile / 8) or
        "hann" (raised cosine); neither of the last two reaches zero.
    tta : bool
        Test-time augmentation: average the probabilities over the identity, the two flips
        and the half turn of every tile (4 forward passes).
    batch_size : int
        Most windows per forward pass for patch-centre models run window by window (on the
        CPU each network's measured best batch is used when it is smaller:
        :mod:`hsi.infer.predict`). Models that run every window of a block at once (cnn3d
        from patch 5, hybridsn; not under test-time augmentation with an even patch) go
        in strips of tile rows sized by memory instead, and dense models a tile per pass
        (the tile itself is the batch).
    accelerator : {"auto", "cpu", "gpu", "cuda", "mps"}
        Where the forward passes run ("auto": a CUDA GPU when there is one, else the CPU).
    devices : int
        Number of devices (processes with ``strategy="ddp"``); rows of tiles are sharded
        across them and each writes its own rows of the output.
    strategy : {"auto", "ddp"}
        "auto": one process; "ddp": one process per device through Lightning.
    precision : {"32-true", "bf16-mixed", "16-mixed"}
        Precision of the forward passes (Lightning's names): float32, or autocast to bfloat16
        (also on the CPU) or float16 (GPU only) on the device; the probabilities are float32
        either way. A mixed precision may change the class of a few pixels whose two best
        classes are nearly tied.
    probabilities : bool
        Also write the per-class probabilities: ``(H, W, K)`` float16 ``probabilities.npy``
        and/or float32 ``probabilities.tif`` (one band per class), as ``format`` says.
    format : tuple of str
        Which outputs to write, from the registered formats (hsi.sinks.list_sinks()):
        "npy" (labels.npy, confidence.npy), "envi" (classification.img + .hdr with class
        names, colours and map info), "gtiff" (labels.tif, a Cloud-Optimized GeoTIFF with
        colour table and class names; confidence.tif), each GeoTIFF with the cube's CRS and
        transform, "png" (previews: map.png with a legend, false_color.png, confidence.png).
        inference.json is always written, metrics.json with ground truth.
    preprocess : {"auto", "scene", "checkpoint"}
        Which fitted scaling the cube gets. "checkpoint": the one fitted on the training
        pixels, as it is. "scene": the same steps refitted on this cube's own valid pixels
        (unsupervised: no label is read), the rule of a collection's per-scene scaling.
        "auto": "scene" when the cube's units or typical raw value differ from the
        training scenes' (the check that warns about them), else "checkpoint"; on the
        checkpoint's own scene that is always "checkpoint". A checkpoint that scaled every
        scene on its own refits whatever this says. What ran is in inference.json.
    mask_unlabeled : bool
        Set pixels that are unlabeled in the ground truth to 0 in the map and draw them as
        background (needs ground truth).
    progress : bool
        Show a progress bar over tiles on stderr (piped: one line per 10 % of the tiles).
    overwrite : bool
        Replace outputs that an earlier ``hsi infer`` wrote in the same folder (files the
        package did not write are never replaced).
    """

    # each field's range check is the rule annotated beside its type (hsi._checks), its choices the Literal; what
    # spans fields is hsi._combinations.infer_combinations (hsi infer applies both before importing torch)
    tile: Annotated[int, integer(1)] = 256
    overlap: Annotated[int, integer(0)] = 0
    blend: BlendMode = "gaussian"
    tta: Annotated[bool, boolean] = False
    batch_size: Annotated[int, integer(1)] = 512
    accelerator: Literal["auto", "cpu", "gpu", "cuda", "mps"] = "auto"
    devices: Annotated[int, integer(1)] = 1
    strategy: Literal["auto", "ddp"] = "auto"
    precision: Literal["32-true", "bf16-mixed", "16-mixed"] = "32-true"
    probabilities: Annotated[bool, boolean] = False
    format: tuple[str, ...] = DEFAULT_FORMATS
    preprocess: Literal["auto", "scene", "checkpoint"] = "auto"
    mask_unlabeled: Annotated[bool, boolean] = False
    progress: Annotated[bool, boolean] = True
    overwrite: Annotated[bool, boolean] = False

    def __post_init__(self) -> None:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        check_declared(InferOptions, values)
        object.__setattr__(self, "format", infer_combinations(values, tuple(list_sinks()), tuple(probability_sinks())))

    @classmethod
    def from_kwargs(cls, options: InferOptions | None = None, **kwargs: Any) -> InferOptions:
        """``options`` (or the defaults) with the fields named in ``kwargs`` replaced.

        Raises
        ------
        OptionError
            For a keyword that is not a field, naming the fields that exist.
        """
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(kwargs) - set(names))
        if unknown:
            raise OptionError(unknown[0], kwargs[unknown[0]], f"not an inference option; options are {', '.join(names)}")
        base = asdict(options) if options is not None else {}
        return cls(**{**base, **kwargs})
