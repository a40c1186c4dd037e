"""The facts about the machine and software a benchmark ran on, for its JSON output.

Every benchmark's ``--json`` output carries ``machine_facts()`` under ``"machine"``, so a
number in ``benchmarks/results/`` says where it was measured; ``benchmarks/tables.py``
prints them under each table of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (Linux), else ``platform.processor()``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float | None:
    """Total memory in GiB from ``/proc/meminfo`` (Linux), else None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _git_commit() -> str | None:
    """The repository's commit, with ``+changes`` when the working tree differs from it."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+changes" if dirty else "")


def machine_facts(device: str = "cpu") -> dict:
    """Where and with what a benchmark ran.

    Parameters
    ----------
    device : str
        The torch device the benchmark timed (``cpu`` or ``cuda``); for ``cuda`` the GPU's
        name is added.

    Returns
    -------
    dict
        ``date`` (UTC, ISO 8601), ``command`` (the script and its arguments), ``cpu``,
        ``cores`` (usable by this process), ``load_average`` (the 1-minute load average
        when the facts are taken, at the end of the run: above ``cores`` other work was
        competing for the CPUs), ``memory_gib``, ``gpu`` (or None), ``python``, ``torch``,
        ``numpy``, ``hsi`` (the package version) and ``commit``.
    """
    import numpy
    import torch

    try:
        from importlib.metadata import version

        hsi_version = version("hsi-lightning")
    except Exception:  # noqa: BLE001 - a version is a nicety; an uninstalled checkout has none
        hsi_version = None
    gpu = torch.cuda.get_device_name(0) if device.startswith("cuda") and torch.cuda.is_available() else None
    script = Path(sys.argv[0])
    try:
        script = script.resolve().relative_to(REPO)
    except ValueError:
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join(["python", script.as_posix(), *sys.argv[1:]]),
        "cpu": _cpu_model(),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "memory_gib": _memory_gib(),
        "gpu": gpu,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "hsi": hsi_version,
        "commit": _git_commit(),
    }
