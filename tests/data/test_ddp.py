"""A real 2-process DDP fit on CPU (gloo) through Lightning, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import CHILD_TIMEOUT


SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    warnings.filterwarnings("ignore")
    import torch
    torch.set_num_threads(1)
    import lightning.pytorch as pl
    import torch.nn.functional as F
    from hsi.data import HSIDataModule

    out, cache, balanced, opts = sys.argv[1], sys.argv[2], sys.argv[3] == "1", json.loads(sys.argv[4])

    class Recording(pl.Callback):
        def __init__(self):
            self.seen = []

        def on_train_epoch_start(self, trainer, module):
            ds = trainer.datamodule.train_dataset
            if not hasattr(ds, "_orig_getitems"):
                ds._orig_getitems = ds.__getitems__
                def rec(indices, _ds=ds):
                    self.seen.extend(int(i) for i in indices)
                    return _ds._orig_getitems(indices)
                ds.__getitems__ = rec
            self.seen = []

        def on_train_epoch_end(self, trainer, module):
            path = f"{out}/rank{trainer.global_rank}_epoch{trainer.current_epoch}.json"
            with open(path, "w") as f:
                json.dump({"indices": self.seen, "world": trainer.world_size,
                           "sampler": type(trainer.train_dataloader.sampler).__name__}, f)

    class Tiny(pl.LightningModule):
        def __init__(self, n_in, k):
            super().__init__()
            self.lin = torch.nn.Linear(n_in, k)

        def training_step(self, batch, i):
            x, y = batch
            return F.cross_entropy(self.lin(x.flatten(1)), y)

        def validation_step(self, batch, i):
            x, y = batch
            self.log("val_loss", F.cross_entropy(self.lin(x.flatten(1)), y), sync_dist=True)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    if __name__ == "__main__":
        dm = HSIDataModule(scene="synthetic", scene_options=opts, block_size=8, patch_size=5, batch_size=32,
                           cache_dir=cache, balanced_sampling=balanced, seed=0)
        model = Tiny(dm.num_bands * 25, dm.num_classes)
        trainer = pl.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=2, logger=False,
                             enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                             num_sanity_val_steps=0, limit_val_batches=2, callbacks=[Recording()])
        trainer.fit(model, datamodule=dm)
        if trainer.global_rank == 0:
            with open(f"{out}/done.json", "w") as f:
                json.dump({"finished": trainer.state.finished, "train": int(len(dm.train_dataset)),
                           "labels": dm.train_dataset.labels.tolist()}, f)
    """
)


def _run(tmp_path: Path, balanced: bool) -> tuple[dict, dict]:
    out = tmp_path / ("bal" if balanced else "plain")
    out.mkdir()
    script = tmp_path / "ddp_fit.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    opts = json.dumps({"height": 48, "width": 48, "bands": 20, "n_classes": 5, "seed": 3, "parcel_size": 12.0})
    cmd = [sys.executable, str(script), str(out), str(tmp_path / "cache"), "1" if balanced else "0", opts]
    for attempt in range(2):  # a port taken by a concurrent run is the one transient failure; retry it once
        proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT)
        transient = "address already in use" in (proc.stdout + proc.stderr).lower()
        if proc.returncode == 0 or not transient:
            break
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # rank 1 shares the pipes but not the exit status: an abort at its exit shows only here
    assert "terminate called" not in proc.stderr and "Fatal Python error" not in proc.stderr, proc.stderr[-3000:]
    done = json.loads((out / "done.json").read_text())
    runs = {(r, e): json.loads((out / f"rank{r}_epoch{e}.json").read_text()) for r in (0, 1) for e in (0, 1)}
    return done, runs


@pytest.mark.slow
def test_ddp_two_processes_get_disjoint_shards_covering_the_split(tmp_path):
    done, runs = _run(tmp_path, balanced=False)
    assert done["finished"]
    n = done["train"]
    orders = []
    for epoch in (0, 1):
        r0, r1 = runs[(0, epoch)]["indices"], runs[(1, epoch)]["indices"]
        assert runs[(0, epoch)]["world"] == 2 and runs[(0, epoch)]["sampler"] == "DistributedSampler"
        pad = (-n) % 2  # DistributedSampler repeats at most world - 1 indices to even the shards
        assert len(r0) == len(r1) == (n + pad) // 2
        assert len(set(r0) & set(r1)) <= pad and len(r0) == len(set(r0))
        assert set(r0) | set(r1) == set(range(n))
        orders.append(r0)
    assert orders[0] != orders[1]  # reshuffled per epoch


@pytest.mark.slow
def test_ddp_keeps_our_balanced_sampler(tmp_path):
    from hsi.data import ClassBalancedSampler

    done, runs = _run(tmp_path, balanced=True)
    assert done["finished"]
    labels = np.asarray(done["labels"])
    for epoch in (0, 1):
        shards = []
        for rank in (0, 1):
            assert runs[(rank, epoch)]["sampler"] == "ClassBalancedSampler"  # not replaced by Lightning
            s = ClassBalancedSampler(labels, num_replicas=2, rank=rank, seed=0)
            s.set_epoch(epoch)
            assert runs[(rank, epoch)]["indices"] == list(s)
            shards.append(runs[(rank, epoch)]["indices"])
        counts = np.bincount(labels[shards[0] + shards[1]], minlength=5)
        assert counts.max() - counts.min() <= 2


RELEASE_SCRIPT = textwrap.dedent(
    """
    import os, sys
    import torch, torch.distributed as dist
    from hsi._distributed import release_process_group

    def gloo_threads():
        names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
        return [n for n in names if "gloo" in n]

    dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
    x = torch.ones(3)  # a tensor with a Python object, as in a real fit
    dist.all_reduce(x)
    before = gloo_threads()
    destroyed = release_process_group()
    print(len(before), destroyed, dist.is_initialized(), len(gloo_threads()))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads thread names from /proc")
def test_release_frees_the_group_and_its_gloo_threads_before_exit(tmp_path):
    """The cause of the abort at exit: gloo threads alive while the interpreter finalizes.

    After ``release_process_group`` (what the DataModule's ``teardown`` registers for exit)
    no gloo thread is left, so none can ask for the GIL during finalization.
    """
    script = tmp_path / "release.py"
    script.write_text(RELEASE_SCRIPT)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "store")], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    n_before, destroyed, still_initialized, n_after = proc.stdout.split()[-4:]
    assert int(n_before) > 0  # the group did run gloo threads
    assert destroyed == "True" and still_initialized == "False"
    assert int(n_after) == 0


def test_datamodule_teardown_registers_the_exit_release(make_dm, monkeypatch):
    """``teardown`` registers :func:`release_process_group` once; the interpreter's own ``atexit`` is left alone.

    Only ``hsi._distributed``'s view of ``atexit`` is replaced: hooks that modules imported
    on the way register (torch's, matplotlib's ...) still reach the real one, and the real
    release hook is registered again by the next teardown after the test.
    """
    from types import SimpleNamespace

    import hsi._distributed as d

    dm = make_dm()
    registered = []
    monkeypatch.setattr(d, "_registered", False)
    monkeypatch.setattr(d, "atexit", SimpleNamespace(register=registered.append))
    dm.teardown("fit")
    dm.teardown("test")  # idempotent
    assert registered == [d.release_process_group]
