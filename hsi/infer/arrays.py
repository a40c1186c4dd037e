"""The per-pixel result arrays: in memory, or ``.npy`` memory maps written as rows are finished.

``labels`` ``(H, W)`` (uint8, or uint16 past 255 classes; classes ``1..K``, 0 at no-data pixels),
``confidence`` ``(H, W)`` float32 (the largest probability; 0 at no-data pixels) and optionally ``probabilities`` ``(H, W, K)``
float16. In a folder (the run's staging folder) they are created under temporary names
(``.<name>.npy.partial``), their disk blocks reserved up front, and
only renamed into place by :meth:`ResultArrays.commit` once every row is written, so an
interrupted run leaves no file that looks finished. Several processes may write disjoint
rows of the same maps: one creates them (``create=True``), the others open them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hsi._atomic import move_into_place, preallocate

__all__ = ["ResultArrays", "label_dtype", "map_specs"]

#: scratch arrays removed, not renamed, by :meth:`ResultArrays.commit`
SCRATCH = ("rgb",)


def label_dtype(num_classes: int) -> np.dtype:
    """The smallest unsigned type holding ids ``0..num_classes``."""
    return np.dtype(np.uint8) if num_classes < 256 else np.dtype(np.uint16)


def _partial(folder: Path, name: str) -> Path:
    return folder / f".{name}.npy.partial"


def map_specs(shape: tuple[int, int], num_classes: int, probabilities: bool,
              rgb: bool = False) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``{name: (shape, dtype)}`` of the arrays of a run.

    ``rgb`` is scratch, never committed: the false-colour bands at the pixels the preview
    draws (every :func:`hsi.viz.preview_step`-th row and column), not at every pixel.
    """
    from hsi.viz import preview_step

    specs = {"labels": (tuple(shape), label_dtype(num_classes)), "confidence": (tuple(shape), np.dtype(np.float32))}
    if probabilities:
        specs["probabilities"] = ((*shape, num_classes), np.dtype(np.float16))
    if rgb:
        step = preview_step(shape)
        specs["rgb"] = ((-(-shape[0] // step), -(-shape[1] // step), 3), np.dtype(np.float32))
    return specs


def _allocate(path: Path, shape: tuple[int, ...], dtype: np.dtype) -> np.memmap:
    """A zeroed ``.npy`` memory map whose blocks are reserved up front (a full disk fails here, not as SIGBUS)."""
    array = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)
    try:
        preallocate(path)
    except BaseException:
        del array
        path.unlink(missing_ok=True)
        raise
    return array


class ResultArrays:
    """The maps of one inference run.

    Parameters
    ----------
    shape : (H, W)
    num_classes : int
    probabilities : bool
        Keep the ``(H, W, K)`` float16 probabilities too.
    rgb : bool
        Keep a float32 scratch array of the false-colour bands at the preview's pixels
        (:func:`map_specs`; filled by the tile pass, so the cube is read once; never committed).
    folder : Path, optional
        Memory-map the arrays there (temporary names until :meth:`commit`); None keeps
        them in memory.
    create : bool
        Create the files (one process); False opens files another process created.
    """

    def __init__(self, shape: tuple[int, int], num_classes: int, probabilities: bool,
                 folder: Path | None = None, create: bool = True, rgb: bool = False) -> None:
        self.shape = (int(shape[0]), int(shape[1]))
        self.num_classes = int(num_classes)
        self.folder = None if folder is None else Path(folder)
        specs = map_specs(self.shape, self.num_classes, probabilities, rgb)
        self.arrays: dict[str, np.ndarray] = {}
        for name, (shp, dtype) in specs.items():
            if self.folder is None:
                self.arrays[name] = np.zeros(shp, dtype=dtype)
            elif create:
                self.arrays[name] = _allocate(_partial(self.folder, name), shp, dtype)
            else:
                self.arrays[name] = np.load(_partial(self.folder, name), mmap_mode="r+")

    @property
    def labels(self) -> np.ndarray:
        """``(H, W)`` class ids ``1..K``."""
        return self.arrays["labels"]

    @property
    def confidence(self) -> np.ndarray:
        """``(H, W)`` float32 largest probability."""
        return self.arrays["confidence"]

    @property
    def rgb(self) -> np.ndarray | None:
        """``(ceil(H / n), ceil(W / n), 3)`` float32 false-colour bands of every ``n``-th pixel
        (``n`` = :func:`hsi.viz.preview_step`), or None when not kept."""
        return self.arrays.get("rgb")

    @property
    def probabilities(self) -> np.ndarray | None:
        """``(H, W, K)`` float16, or None when not kept."""
        return self.arrays.get("probabilities")

    def write_rows(self, start: int, probs: np.ndarray) -> None:
        """Store finished rows ``start..start + len(probs)`` from their ``(n, W, K)`` probabilities."""
        self.write_block(start, 0, probs)

    def write_block(self, y: int, x: int, probs: np.ndarray) -> None:
        """Store the ``(h, w)`` pixels whose top-left one is ``(y, x)`` from their ``(h, w, K)`` probabilities."""
        rows, cols = slice(y, y + probs.shape[0]), slice(x, x + probs.shape[1])
        top = probs.argmax(axis=-1)
        confidence = np.take_along_axis(probs, top[..., None], axis=-1)[..., 0]
        # a no-data pixel comes with all-zero probabilities: label 0 ("unclassified"), confidence 0
        self.arrays["labels"][rows, cols] = np.where(confidence > 0, top + 1, 0)
        self.arrays["confidence"][rows, cols] = confidence
        if "probabilities" in self.arrays:
            self.arrays["probabilities"][rows, cols] = probs

    def write_maps(self, y: int, x: int, labels: np.ndarray, confidence: np.ndarray) -> None:
        """Store labels and confidence ``(h, w)`` (0 at no-data pixels) whose top-left pixel is ``(y, x)``.

        What :meth:`write_block` stores from probabilities, given already reduced (no
        probabilities map is kept on this path).
        """
        rows, cols = slice(y, y + labels.shape[0]), slice(x, x + labels.shape[1])
        self.arrays["labels"][rows, cols] = labels
        self.arrays["confidence"][rows, cols] = confidence

    def nodata_mask(self, rows: slice = slice(None)) -> np.ndarray:
        """``(h, W)`` bool: the no-data pixels of ``rows`` (confidence 0; a classified pixel has at least ``1 / K``).

        The confidence map's pages of those rows are let go of once read.
        """
        from hsi._pages import release_mapped

        confidence = self.arrays["confidence"]
        mask = np.asarray(confidence[rows]) == 0
        release_mapped(confidence, rows.indices(self.shape[0])[:2])
        return mask

    def count_nodata(self, rows_per_chunk: int = 256) -> int:
        """Number of no-data pixels, counted over bands of rows (a memory map is never loaded whole)."""
        return sum(int(self.nodata_mask(slice(start, start + rows_per_chunk)).sum())
                   for start in range(0, self.shape[0], rows_per_chunk))

    def release_pages(self) -> None:
        """Let go of the written pages of memory-mapped maps, so the resident set does not grow with the scene.

        The pages of a shared file mapping stay in the page cache (and reach the file);
        a later access maps them in again. Maps in memory are left as they are.
        """
        from hsi._pages import release_mapped

        for arr in self.arrays.values():
            release_mapped(arr)

    def flush(self) -> None:
        """Write memory-mapped pages to disk."""
        for arr in self.arrays.values():
            if isinstance(arr, np.memmap):
                arr.flush()

    def commit(self) -> dict[str, Path]:
        """Flush, close and rename the temporary files to ``<name>.npy``; returns the final paths.

        In memory (no folder) this does nothing and returns ``{}``.
        """
        if self.folder is None:
            return {}
        self.flush()
        names = list(self.arrays)
        self.arrays = {}
        final: dict[str, Path] = {}
        for name in names:
            if name in SCRATCH:
                _partial(self.folder, name).unlink(missing_ok=True)
                continue
            final[name] = self.folder / f"{name}.npy"
            move_into_place(_partial(self.folder, name), final[name])
        return final

    def discard(self) -> None:
        """Remove the temporary files (after a failure)."""
        names = list(self.arrays)
        self.arrays = {}
        if self.folder is not None:
            for name in names:
                _partial(self.folder, name).unlink(missing_ok=True)
