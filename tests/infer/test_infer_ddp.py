"""Two CPU ranks (gloo, Lightning ``Trainer.predict``) write the same map as one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.helpers import CHILD_TIMEOUT

SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    warnings.filterwarnings("ignore")
    import torch
    torch.set_num_threads(1)
    from hsi.infer import infer_scene

    if __name__ == "__main__":
        ckpt, cube, out = sys.argv[1:4]
        result = infer_scene(ckpt, cube, out=out, tile=8, overlap=3, blend="hann", probabilities=True,
                             accelerator="cpu", devices=2, strategy="ddp", progress=False)
        with open(f"{out}.rank{result.rank}.json", "w") as f:
            json.dump({"rank": result.rank, "files": sorted(result.files)}, f)
    """
)


@pytest.mark.slow
def test_two_ranks_give_the_one_process_map(fcn_ckpt, scene, tmp_path):
    from hsi.infer import infer_scene

    cube = tmp_path / "cube.npy"
    np.save(cube, scene.cube.data)
    script = tmp_path / "infer_ddp.py"
    script.write_text(SCRIPT)
    out = tmp_path / "ddp"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    cmd = [sys.executable, str(script), str(fcn_ckpt), str(cube), str(out)]
    for _ in range(2):  # a port taken by a concurrent run is the one transient failure; retry it once
        proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT)
        if proc.returncode == 0 or "address already in use" not in (proc.stdout + proc.stderr).lower():
            break
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"ddp.rank{r}.json").read_text()) for r in (0, 1)]
    assert ranks[0]["files"] and not ranks[1]["files"]  # rank 0 alone writes the folder

    one = infer_scene(fcn_ckpt, scene.cube.data, tile=8, overlap=3, blend="hann", probabilities=True,
                      accelerator="cpu", progress=False)
    np.testing.assert_array_equal(np.load(out / "labels.npy"), one.labels)
    np.testing.assert_allclose(np.load(out / "confidence.npy"), one.confidence, atol=1e-6)
    np.testing.assert_array_equal(np.load(out / "probabilities.npy"), one.probabilities)
