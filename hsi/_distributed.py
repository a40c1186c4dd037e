"""Ending a ``torch.distributed`` process group before the interpreter shuts down; telling rank 0 from the others.

Why this exists: a gloo process group runs worker threads (``pt_gloo_runloop``). After a
collective completes, the worker drops its reference to the work's tensors, and when a
tensor also has a Python object that drop takes the GIL. If the main thread has already
returned from the script, the interpreter is finalizing, and a non-Python thread that
asks for the GIL then is terminated by ``pthread_exit``; the forced unwind crosses a
``noexcept`` C++ frame and the process dies with SIGABRT ("terminate called without an
active exception"), after a fit that succeeded. Whether the worker gets there before or
after finalization starts is a race, hence the abort about once in eight runs.

:func:`release_at_exit` registers (once per process) an ``atexit`` hook, which runs
before finalization, while threads may still take the GIL: it destroys the default
process group and collects garbage, so the C++ process group (and its threads) is freed
then, its workers having finished with every Python object. The hook is registered from
the DataModule's and the task's ``teardown``, so users' own DDP scripts get it too.
"""

from __future__ import annotations

import atexit
import gc
import logging
import os

__all__ = ["RANK_VARIABLES", "is_rank_zero", "release_at_exit", "release_process_group"]

#: environment variables in which launchers give a process its rank: torchrun and Lightning's
#: own launcher (``RANK``, ``LOCAL_RANK``, ``NODE_RANK``), SLURM, Open MPI and MPICH / Intel MPI
RANK_VARIABLES = ("RANK", "LOCAL_RANK", "NODE_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")

logger = logging.getLogger("hsi")

_registered = False


def release_process_group() -> bool:
    """Destroy the default process group, if any, and free it now; True when one was destroyed.

    ``gc.collect()`` matters: Lightning's DDP wrapper and its reducer hold the group in
    reference cycles, so without it the C++ object (and its worker threads) would survive
    until the interpreter's own final collection, which is where the abort happens.
    """
    try:
        import torch.distributed as dist
    except ImportError:  # pragma: no cover - torch built without distributed
        return False
    destroyed = False
    if dist.is_available() and dist.is_initialized():
        try:
            dist.destroy_process_group()
            destroyed = True
        except (RuntimeError, ValueError) as err:  # already shut down by someone else
            logger.debug("destroy_process_group at exit failed: %s", err)
    gc.collect()
    return destroyed


def release_at_exit() -> None:
    """Register :func:`release_process_group` to run at interpreter exit (idempotent)."""
    global _registered
    if not _registered:
        atexit.register(release_process_group)
        _registered = True


def is_rank_zero() -> bool:
    """Whether this process is the first of its run: False when a launcher named it another rank.

    Read from the environment (:data:`RANK_VARIABLES`), so it is known before any process
    group exists: the DDP ranks that Lightning starts run the command again with
    ``LOCAL_RANK`` set, and from their first line on they need not repeat what rank 0 says.
    A single process (no variable, or SLURM's one task) is rank zero.
    """
    for name in RANK_VARIABLES:
        if name == "SLURM_PROCID" and os.environ.get("SLURM_NTASKS", "1").strip() in ("", "1"):
            continue  # one SLURM task: the job's only process, whatever it is numbered
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) != 0:
            return False
    return True
