"""Calibrate the difficulty of the synthetic scene against a per-pixel RBF-SVM.

For each seed: generate ``make_synthetic_scene(seed=...)``, split it in spatial blocks
(``hsi.preprocess.block_split`` when available, else a simple block assignment below),
standardize bands on the training pixels, fit ``sklearn.svm.SVC(kernel="rbf")`` on a
stratified subsample of training pixels and report the overall accuracy (OA) on the test
blocks for three feature sets:

- ``pixel``: the pixel's own spectrum (no spatial context);
- ``mean{N}``: the spectrum averaged over an N x N neighbourhood;
- ``pixel+mean{N}``: both, concatenated.

The target is a pixel OA of about 60-75 % and clearly better spatial OAs. Usage::

    python benchmarks/calibrate_synthetic.py --seeds 0 1 2
    python benchmarks/calibrate_synthetic.py --set noise=0.01 --set texture=0.05
    python benchmarks/calibrate_synthetic.py --seeds 0 1 2 3 4 --json    # one JSON line, machine facts included
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence

import numpy as np
from scipy import ndimage


def simple_block_split(
    labels: np.ndarray, block_size: int = 16, fractions=(0.6, 0.2, 0.2), buffer: int = 5, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train/val/test masks from blocks assigned at random; train pixels within ``buffer`` px of
    a val/test block are dropped."""
    rng = np.random.default_rng(seed)
    h, w = labels.shape
    bh, bw = -(-h // block_size), -(-w // block_size)
    n = bh * bw
    order = rng.permutation(n)
    cuts = np.cumsum(np.round(np.asarray(fractions) * n).astype(int))[:2]
    part = np.zeros(n, dtype=np.int8)
    part[order[cuts[0] : cuts[1]]] = 1
    part[order[cuts[1] :]] = 2
    grid = part.reshape(bh, bw).repeat(block_size, 0).repeat(block_size, 1)[:h, :w]
    lab = labels > 0
    held = grid > 0
    near = ndimage.binary_dilation(held, iterations=buffer) if buffer > 0 else held
    return lab & (grid == 0) & ~near, lab & (grid == 1), lab & (grid == 2)


def _split(labels: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    try:
        from hsi.preprocess import block_split
    except ImportError:
        train, _, test = simple_block_split(labels, seed=seed)
        return train, test, "simple_block_split (script)"
    split = block_split(labels, block_size=16, fractions=(0.6, 0.2, 0.2), buffer=5, seed=seed)
    return split.train, split.test, "hsi.preprocess.block_split"


def _subsample(y: np.ndarray, max_n: int, rng: np.random.Generator) -> np.ndarray:
    idx = np.arange(y.size)
    if y.size <= max_n:
        return idx
    return np.sort(rng.choice(idx, size=max_n, replace=False))


def evaluate(scene, seed: int, max_train: int, windows: Sequence[int], C: float) -> dict[str, float]:
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    cube = scene.cube.data
    labels = scene.labels
    train, test, how = _split(labels, seed)
    feats = {"pixel": cube}
    for n in windows:
        mean = ndimage.uniform_filter(cube, size=(n, n, 1), mode="reflect")
        feats[f"mean{n}"] = mean
        feats[f"pixel+mean{n}"] = np.concatenate([cube, mean], axis=-1)
    rng = np.random.default_rng(seed)
    y_tr, y_te = labels[train], labels[test]
    sub = _subsample(y_tr, max_train, rng)
    out = {"n_train": float(train.sum()), "n_test": float(test.sum())}
    for name, f in feats.items():
        x_tr, x_te = f[train][sub], f[test]
        scaler = StandardScaler().fit(x_tr)
        clf = SVC(kernel="rbf", C=C, gamma="scale").fit(scaler.transform(x_tr), y_tr[sub])
        out[name] = float((clf.predict(scaler.transform(x_te)) == y_te).mean())
    out["split"] = how  # type: ignore[assignment]
    return out


def _parse_sets(items: Sequence[str]) -> dict[str, float]:
    params = {}
    for item in items:
        key, _, value = item.partition("=")
        params[key.strip()] = float(value)
    return params


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--size", type=int, default=145, help="height = width of the scene")
    parser.add_argument("--max-train", type=int, default=2500, help="SVM training subsample")
    parser.add_argument("--windows", type=int, nargs="+", default=[5, 7])
    parser.add_argument("--C", type=float, default=100.0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a make_synthetic_scene keyword (float)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON line (seeds, means, machine) instead of the text")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from hsi.scenes import make_synthetic_scene

    params = _parse_sets(args.set)
    rows = []
    for seed in args.seeds:
        t0 = time.perf_counter()
        scene = make_synthetic_scene(height=args.size, width=args.size, seed=seed, **params)
        t_gen = time.perf_counter() - t0
        res = evaluate(scene, seed, args.max_train, args.windows, args.C)
        rows.append({"seed": seed, **res})
        accs = "  ".join(f"{k}={v:.3f}" for k, v in res.items() if isinstance(v, float) and not k.startswith("n_"))
        if not args.json:
            print(f"seed={seed} gen={t_gen:.2f}s train={int(res['n_train'])} test={int(res['n_test'])} "
                  f"split={res['split']}  {accs}", flush=True)
    keys = [k for k, v in rows[0].items() if isinstance(v, float) and not k.startswith("n_")]
    means = {k: float(np.mean([r[k] for r in rows])) for k in keys}
    if args.json:
        from _machine import machine_facts

        print(json.dumps({"machine": machine_facts(), "size": args.size, "max_train": args.max_train, "C": args.C,
                          "scene_options": params, "rows": rows, "mean": means}))
    else:
        print("mean over seeds: " + "  ".join(f"{k}={v:.3f}" for k, v in means.items()))


if __name__ == "__main__":
    main()
