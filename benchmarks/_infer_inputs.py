"""What ``bench_infer.py``'s rows run on: synthetic cubes written once, and untrained models as ``hsi train`` shapes them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

K = 16  # classes of every benchmark model
TILE = 256  # tile side of the pipeline, the raw read and MONAI's windows


def build_cube(folder: Path, height: int, width: int, bands: int, seed: int = 0) -> dict[str, Path]:
    """Write the cube strip by strip as chunked HDF5 and ``.npy`` (never whole in memory); returns the paths."""
    import h5py

    stem = f"cube_{height}x{width}x{bands}"
    paths = {"h5": folder / f"{stem}.h5", "npy": folder / f"{stem}.npy"}
    if all(p.exists() for p in paths.values()):
        return paths
    rng = np.random.default_rng(seed)
    tmp_npy, tmp_h5 = folder / f".{stem}.npy.tmp", folder / f".{stem}.h5.tmp"
    npy = np.lib.format.open_memmap(tmp_npy, mode="w+", dtype=np.float32, shape=(height, width, bands))
    base = rng.random(bands, dtype=np.float32)
    with h5py.File(tmp_h5, "w") as f:
        ds = f.create_dataset("cube", shape=(height, width, bands), dtype="f4", chunks=(min(64, height), min(64, width), bands))
        for start in range(0, height, 64):
            stop = min(start + 64, height)
            strip = base + 0.1 * rng.random((stop - start, width, bands), dtype=np.float32)
            ds[start:stop] = strip
            npy[start:stop] = strip
    npy.flush()
    del npy
    tmp_npy.rename(paths["npy"])
    tmp_h5.rename(paths["h5"])
    return paths


class FreeNet:
    """Factory of the model that costs nothing (a class inside a function cannot be pickled; none needs to be)."""

    @staticmethod
    def build(bands: int):
        import torch

        class Free(torch.nn.Module):
            dense = True
            receptive_radius = 0
            num_classes = K

            def __init__(self) -> None:
                super().__init__()
                self.anchor = torch.nn.Parameter(torch.zeros(1))  # a device to move to

            def forward_dense(self, x):
                return x[:, :K]

            def forward(self, x):
                return x[:, :K, x.shape[2] // 2, x.shape[3] // 2]

        return Free()


def make_model(name: str, cube_path: Path, bands: int):
    """An :class:`hsi.infer.InferenceModel` with untrained weights and a min-max pipeline fitted on 8 x 1024 pixels.

    The same number of pixels at every scene size: the fit's freed memory stays part of the
    process, and it would otherwise grow with the scene's width before any row is timed.
    Models that ``hsi train`` gives a PCA on many bands (``cnn3d``, ``hybridsn``: 30
    components) get it here too, after the scaling.
    """
    import torch

    from hsi.data.patches import DEFAULT_PATCH_SIZE
    from hsi.infer import InferenceModel
    from hsi.infer.sources import open_scene_source
    from hsi.models import build_model, recommended_patch_size, recommended_pca
    from hsi.preprocess import make_pipeline
    from hsi.scenes.palette import make_palette

    torch.manual_seed(0)
    src = open_scene_source(cube_path, "cube" if cube_path.suffix == ".h5" else None,
                            "HWC" if cube_path.suffix == ".h5" else None)
    sample = src.read_window(slice(0, 8), slice(0, 1024))
    src.close()
    pca = None if name == "free" else recommended_pca(name, bands)  # as ``hsi train`` decides it
    pipe = make_pipeline(scaling="minmax", pca=pca).fit(sample)
    if name == "free":
        net, patch = FreeNet.build(bands), 1
    else:
        patch = recommended_patch_size(name, DEFAULT_PATCH_SIZE)  # as in a checkpoint from ``hsi train --model name``
        net = build_model(name, num_bands=pca or bands, num_classes=K, patch_size=patch)
    return InferenceModel(net=net.eval(), pipeline=pipe, patch_size=patch, padding="reflect",
                          class_names=[f"class_{i}" for i in range(1, K + 1)], palette=make_palette(K),
                          label_values=list(range(1, K + 1)), wavelengths=None, num_bands_in=bands,
                          source=f"untrained {name}")
