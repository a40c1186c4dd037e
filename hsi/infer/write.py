"""The output folder of a whole-scene inference: maps, images, ENVI classification, metrics, manifest.

Files (all written atomically; the ``.npy`` maps are renamed into place from their
memory-mapped ``.partial`` files last, with the manifest):

- ``labels.npy`` ``(H, W)`` class ids ``1..K`` (0 only where ``mask_unlabeled`` masked the
  ground truth's unlabeled pixels), ``confidence.npy`` ``(H, W)`` float32,
  ``probabilities.npy`` ``(H, W, K)`` float16 (optional);
- ``map.png`` (legend of class names, the scene's palette, ground-truth background dimmed
  or masked), ``false_color.png``, ``confidence.png``;
- ``classification.img`` + ``.hdr`` (ENVI Classification with names and colours, the
  source header's map info carried over);
- ``metrics.json`` when ground truth exists; ``inference.json``, the manifest of what was
  written. Only files listed in an earlier manifest are ever replaced (``overwrite=True``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from hsi._atomic import write_bytes_atomic
from hsi.errors import OverwriteError, RunOutputError

__all__ = ["MANIFEST", "OUTPUT_FILES", "prepare_folder", "write_folder"]

MANIFEST = "inference.json"
#: every file an inference run may write into its folder
OUTPUT_FILES = ("labels.npy", "confidence.npy", "probabilities.npy", "map.png", "false_color.png", "confidence.png",
                "classification.img", "classification.hdr", "metrics.json", MANIFEST)


def _listed(folder: Path) -> set[str]:
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return set()
    try:
        return set(json.loads(manifest.read_text()).get("files", []))
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        return set()


def prepare_folder(out: str | Path, overwrite: bool) -> Path:
    """Create ``out`` or check that writing there replaces nothing it should not (before any compute).

    Raises
    ------
    RunOutputError
        ``out`` is a file, or an output file exists and ``overwrite`` is False.
    OverwriteError
        An output file exists, ``overwrite`` is True, but no earlier manifest of this
        folder lists it (hsi did not write it).
    """
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise RunOutputError(f"out={str(folder)!r}: exists and is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    present = [name for name in OUTPUT_FILES if (folder / name).exists()]
    if present and not overwrite:
        raise RunOutputError(
            f"{folder / present[0]}: already exists ({len(present)} output file(s) in {folder}); pass overwrite=True "
            "(--overwrite) to replace the outputs of an earlier hsi infer run, or choose another folder"
        )
    ours = _listed(folder)
    foreign = [name for name in present if name not in ours]
    if foreign:
        raise OverwriteError(
            f"{folder / foreign[0]}: exists but was not written by hsi infer (not listed in {folder / MANIFEST}); "
            "move it away or choose another folder"
        )
    return folder


def _json_bytes(obj: Any) -> bytes:
    def default(o: Any) -> Any:
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
        return str(o)

    return (json.dumps(obj, indent=1, default=default, allow_nan=True) + "\n").encode("utf-8")


def write_folder(folder: Path, results: Any, *, class_names: list[str], palette: np.ndarray,
                 background: np.ndarray | None, metrics: dict[str, Any] | None, source_header: Path | None,
                 manifest: dict[str, Any], rgb_title: str) -> dict[str, Path]:
    """Write every output of a finished run into ``folder``; returns ``{name: path}``.

    Parameters
    ----------
    folder : Path
        Checked by :func:`prepare_folder`.
    results : hsi.infer.arrays.ResultArrays
        Finished maps (still under temporary names; committed here).
    class_names, palette : list[str], (K + 1, 3) uint8
    background : (H, W) bool or None
        Ground-truth background to draw dimmed (None when masked or without ground truth).
    metrics : dict or None
        Written as ``metrics.json``.
    source_header : Path or None
        ENVI header of the cube, whose map info is carried over.
    manifest : dict
        Run description stored in ``inference.json`` (the file list is added).
    rgb_title : str
        Title of the false-colour image (names the bands).
    """
    from hsi.io.envi_write import write_classification
    from hsi.viz import plot_class_map, plot_confidence, plot_false_color

    files: dict[str, Path] = {}
    labels = np.asarray(results.labels)
    files["map.png"] = folder / "map.png"
    plot_class_map(labels, class_names, palette, files["map.png"], background=background,
                   title=f"{manifest.get('cube', 'scene')}: predicted classes")
    if results.rgb is not None:
        files["false_color.png"] = folder / "false_color.png"
        plot_false_color(results.rgb, files["false_color.png"], title=rgb_title)
    files["confidence.png"] = folder / "confidence.png"
    plot_confidence(results.confidence, files["confidence.png"])
    header = write_classification(folder / "classification", labels, ["Unclassified", *class_names], palette,
                                  source_header=source_header, description=f"hsi infer {manifest.get('checkpoint', '')}")
    files["classification.hdr"], files["classification.img"] = header, header.with_suffix(".img")
    if metrics is not None:
        files["metrics.json"] = folder / "metrics.json"
        write_bytes_atomic(files["metrics.json"], _json_bytes(metrics))
    for name, path in results.commit().items():
        files[f"{name}.npy"] = path
    files[MANIFEST] = folder / MANIFEST
    # outputs of an earlier run that this one did not replace (e.g. probabilities.npy) stay ours
    earlier = {name for name in _listed(folder) if (folder / name).exists()}
    write_bytes_atomic(files[MANIFEST], _json_bytes({**manifest, "files": sorted(set(files) | earlier)}))
    return files
